"""The app's Export save refuses a file inside the data home (the library's database under any spelling), as
`evtui export --out` does: an error notice, nothing written, the library as it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable
from tui_pilot import TRIPLET, focus_results, notified, run, search, started, until

from evtui.tui.screens.export import ExportScreen


@pytest.mark.parametrize("name", ["library.duckdb", "sub/../notes.md"])
def test_save_into_the_data_home_is_refused(papers_ingested: Path, tmp_path: Path, _isolated_home: Path,
                                            name: str) -> None:
    target = _isolated_home / name  # the database itself is refused before any "Replace?" question
    before = (_isolated_home / "library.duckdb").stat().st_size

    async def flow() -> None:
        async with started((120, 40)) as (app, pilot):
            await search(app, pilot, TRIPLET)
            await focus_results(app, pilot)
            await pilot.press("space", "e")
            await until(pilot, lambda: isinstance(app.screen, ExportScreen), "the export screen")
            screen = app.screen
            await until(pilot, lambda: screen.query_one("#basket", DataTable).row_count == 1, "the basket")
            await pilot.press("w", "ctrl+u", *str(target))
            await pilot.pause()
            await pilot.press("enter")
            await notified(pilot, "inside the data home")
            assert isinstance(app.screen, ExportScreen)  # no confirmation asked
            # nothing replaced: the database is the one the app has open, as it was
            assert (_isolated_home / "library.duckdb").stat().st_size >= before
            assert not list(_isolated_home.glob("*.md"))

    run(flow)
