"""Search's `m` (the next ranking method) changes what the ranks mean: it says which method ranks now and what
that method does, and searches again."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Select
from tui_pilot import messages, run, search, started, until

from evtui import methods


def test_m_names_the_new_method_and_what_it_does(papers_ingested: Path) -> None:
    async def flow() -> None:
        async with started() as (app, pilot):
            await search(app, pilot, "aspirin", method="bm25-coverage")
            app.screen.query_one("#results").focus()
            app.result = None
            await pilot.press("m")
            new = str(app.screen.query_one("#method", Select).value)
            assert new != "bm25-coverage"
            said = [m for m in messages(app) if m.startswith(f"ranking method now {new} (was bm25-coverage)")]
            assert said, messages(app)
            method = methods.get(new)
            assert (method.help or method.description) in said[0] and "searching again" in said[0]
            await until(pilot, lambda: app.result is not None and app.result.method == new, "the new ranking")

    run(flow)
