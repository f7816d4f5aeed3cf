"""Pilot tests: the real app on a real (small) library."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import DataTable, Input

from evtui.config import load_config
from evtui.library import Library
from evtui.tui.app import EvtuiApp


async def _wait_ready(app: EvtuiApp, pilot) -> None:  # type: ignore[no-untyped-def]
    for _ in range(200):
        if app.searcher is not None:
            return
        await pilot.pause(0.05)
    raise AssertionError("library never opened")


async def _wait_results(app: EvtuiApp, pilot) -> None:  # type: ignore[no-untyped-def]
    for _ in range(200):
        await pilot.pause(0.05)
        if app.result is not None:
            return
    raise AssertionError("no results arrived")


def _library(papers_dir: Path) -> None:
    with Library(load_config()) as lib:
        lib.ingest([papers_dir])


def test_triplet_search_shows_three_highlighted_aspects(papers_dir: Path, tmp_path: Path) -> None:
    _library(papers_dir)

    async def flow() -> None:
        cfg = load_config()
        cfg.export_path = str(tmp_path / "out.md")
        app = EvtuiApp(cfg)
        async with app.run_test(size=(140, 40)) as pilot:
            await _wait_ready(app, pilot)
            await pilot.press("slash")
            app.query_one("#query", Input).value = "(aspirin, reduce, colorectal cancer)"
            await pilot.press("enter")
            await _wait_results(app, pilot)
            assert app.result is not None and app.result.query.mode == "triplet"
            table = app.query_one("#results", DataTable)
            assert table.row_count >= 1
            top = app.result.evidence[0]
            assert {h.aspect for h in top.highlights} == {"head", "relation", "tail"}
            cell = table.get_cell_at((0, 3))
            styled = {str(span.style) for span in cell.spans}
            assert len(styled) == 3  # one colour per aspect in the rendered sentence
            await pilot.press("space")
            assert top.sentence.id in app.selected_ids()
            await pilot.press("j", "space")
            assert len(app.selected_ids()) == 2
            await pilot.press("e")
            await pilot.pause(0.1)
            text = Path(app.config.export_path).read_text(encoding="utf-8")
            assert "(aspirin, reduce, colorectal cancer)" in text and text.count("\n> ") == 2
            assert "**aspirin**" in text.lower() or "**Aspirin**" in text

    asyncio.run(flow())


def test_malformed_query_notifies(papers_dir: Path) -> None:
    _library(papers_dir)

    async def flow() -> None:
        app = EvtuiApp(load_config())
        async with app.run_test(size=(120, 30)) as pilot:
            await _wait_ready(app, pilot)
            app.query_one("#query", Input).value = "(((  ?!  )))"
            app.query_one("#query", Input).focus()
            await pilot.press("enter")
            for _ in range(100):
                await pilot.pause(0.05)
                if app._notifications:
                    break
            messages = [n.message for n in app._notifications]
            assert any("empty query" in str(m) for m in messages), messages
            assert app.is_running  # no crash

    asyncio.run(flow())
