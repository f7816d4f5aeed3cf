"""The reader opened from a result showed ranks and ✓ but no verdict: each judged hit now shows ▲ / ▼ / ● beside
its rank, as the results did, so the user decides what to keep where they read."""

from __future__ import annotations

from pathlib import Path

from tui_pilot import TRIPLET, focus_results, run, search, started, until

from evtui.tui.screens.reader import ReaderScreen


def test_the_reader_marks_judged_hits_with_their_verdict(papers_ingested: Path) -> None:
    glyphs = {"supports": "▲", "refutes": "▼", "neutral": "●"}

    async def flow() -> None:
        async with started() as (app, pilot):
            await search(app, pilot, TRIPLET)
            screen = app.screen
            top = app.result.evidence[0].sentence.id  # type: ignore[union-attr]
            await until(pilot, lambda: screen.judgments.get(top) is not None, "the local verdicts")  # type: ignore
            await focus_results(app, pilot)
            await pilot.press("o")
            await until(pilot, lambda: isinstance(app.screen, ReaderScreen) and bool(app.screen.sentences), "reader")
            reader = app.screen
            assert isinstance(reader, ReaderScreen) and top in reader.verdicts
            mark = str(reader.prompt(reader.sentences[top]).columns[0]._cells[0])
            assert mark.endswith(glyphs[reader.verdicts[top].stance]), mark

    run(flow)
