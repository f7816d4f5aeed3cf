"""80×24 showed three results after a search: each took up to seven rows. Below 30 rows each result folds to two
rows (the rest of its sentence cut with "…", whole in the detail pane) and the notes to one, so at least six show."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_pilot import run, search, started

from evtui.config import load_config
from evtui.library import Library
from evtui.tui.widgets import PagedTable

CORE = Path(__file__).parents[1] / "fixtures" / "core"
CDR, JATS = CORE / "cdr3.pubtator.txt", CORE / "PMC2852030.xml"


@pytest.fixture
def pubmed_library(papers_dir: Path) -> None:
    with Library(load_config()) as lib:
        lib.ingest([CDR, JATS, papers_dir])


def _heights(table: PagedTable) -> list[int]:  # type: ignore[type-arg]
    return [row.height for row in table.rows.values()]


def test_80x24_shows_six_results_each_on_two_rows_at_most(pubmed_library: None) -> None:
    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            await search(app, pilot, "patients", method="bm25")
            table = app.screen.query_one(PagedTable)
            heights = _heights(table)
            assert len(heights) >= 6 and max(heights) <= 2, heights
            shown, used = 0, 0
            for h in heights:  # rows whose every line fits in the table's body (its header takes one)
                if used + h > table.size.height - 1:
                    break
                used, shown = used + h, shown + 1
            assert shown >= 6, (shown, heights, table.size.height)
            cut = [str(r[3]) for r in (table.get_row_at(i) for i in range(len(heights))) if str(r[3]).endswith("…")]
            assert cut, "a long sentence ends with … on its second row"
        async with started((120, 40)) as (app, pilot):  # room enough: sentences whole, with their paper
            await search(app, pilot, "patients", method="bm25")
            assert max(_heights(app.screen.query_one(PagedTable))) > 2

    run(flow)
