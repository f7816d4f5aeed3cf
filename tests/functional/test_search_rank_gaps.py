"""The Search table's ranks are the method's (the detail pane, exports and `evtui search --json` give the same
numbers), so the rows the concept check hides (evtui/honest.py: sentences that mention none of the query's
concepts) leave gaps in its # column. The line above the table names the hidden ranks and why, on one line at 80
columns too, rather than leave a researcher to wonder where ranks 1 and 2 went."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static
from tui_pilot import TRIPLET, run, search, started

from evtui.config import load_config
from evtui.library import Library
from evtui.tui.screens.search import SearchScreen

COFFEE = """# Coffee drinking in a cohort of older adults

## Abstract

Coffee drinking was recorded at baseline in a cohort of older adults followed for twelve years.
Coffee intake was associated with sepsis admissions in the first year of follow-up.
Participants reported their coffee, tea and water intake in a detailed questionnaire at every annual visit.
Coffee consumption did not differ between the men and the women who completed the questionnaire each year.
"""
# Two short sentences that share only the relation word with the query: bm25 ranks them first, the concept check
# hides them.
CAUSES = """# What causes what

## Abstract

It causes it, and that causes this.
Sepsis was diagnosed by the attending physician.
"""


@pytest.fixture
def gap_library(tmp_path: Path) -> None:
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "coffee.md").write_text(COFFEE, encoding="utf-8")
    (papers / "causes.md").write_text(CAUSES, encoding="utf-8")
    with Library(load_config()) as lib:
        lib.ingest([papers])


@pytest.mark.parametrize("size", [(80, 24), (140, 40)])
def test_the_line_above_the_table_names_the_hidden_ranks_and_why(gap_library: None, size: tuple[int, int]) -> None:
    async def flow() -> None:
        async with started(size) as (app, pilot):
            await search(app, pilot, "coffee causes sepsis", method="bm25")
            screen = app.screen
            assert isinstance(screen, SearchScreen) and app.result is not None
            shown = [e.rank for e in screen.rows]
            assert sorted({e.rank for e in app.result.evidence} - set(shown)) == [1, 2]  # what the fixture makes
            assert shown[0] == 3  # the method's ranks are kept
            bar = str(screen.query_one("#verdicts", Static).render()).rstrip()
            assert "ranks 1, 2 hidden" in bar and "concept" in bar, bar
            assert len(bar) <= size[0] - 4, bar  # whole on its one row

    run(flow)


def test_rows_hidden_after_the_last_one_shown_are_no_gap(papers_dir: Path) -> None:
    """The triplet's last three rows mention none of its concepts: the # column runs 1, 2, 3 without a gap, and the
    status line's "3 of 6" and the notes line say what was hidden; the verdict bar has nothing to explain."""
    with Library(load_config()) as lib:
        lib.ingest([papers_dir])

    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            await search(app, pilot, TRIPLET, method="bm25-coverage")
            screen = app.screen
            assert isinstance(screen, SearchScreen) and app.result is not None
            assert [e.rank for e in screen.rows] == [1, 2, 3] and len(app.result.evidence) == 6
            assert "hidden" not in str(screen.query_one("#verdicts", Static).render())
            assert "3 sentence(s) mentioning none of the concepts hidden" in screen.notes_text

    run(flow)
