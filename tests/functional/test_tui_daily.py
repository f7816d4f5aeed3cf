"""Pilot tests for the app as a daily tool (issue 15): small terminals, focus after Esc, verdicts at a glance,
honest empty results, the Export screen's keys, the query history."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input, Static
from tui_pilot import TRIPLET, local_judge_missing, run, search, started, until

from evtui.config import load_config
from evtui.tui.app import EvtuiApp
from evtui.tui.screens.bench import BenchScreen
from evtui.tui.screens.export import ExportScreen
from evtui.tui.screens.library import LibraryScreen
from evtui.tui.screens.modals import AspectEditScreen
from evtui.tui.screens.search import SearchScreen
from evtui.tui.widgets import PagedTable, TextPane


def _screen(app: EvtuiApp) -> SearchScreen:
    screen = app.screen
    assert isinstance(screen, SearchScreen)
    return screen


def test_80x24_hides_the_side_pane_and_keeps_the_sentence_wide(papers_ingested: Path) -> None:
    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            await search(app, pilot, TRIPLET)
            screen = _screen(app)
            table = screen.query_one(PagedTable)
            detail = screen.query_one(TextPane)
            assert screen.has_class("narrow") and not detail.display and table.display
            assert not screen.query_one("#controls").display  # the filter row folds away
            assert table.columns["sentence"].width >= 40  # type: ignore[index]
            table.focus()
            await pilot.press("d")  # the detail pane opens over the results
            await pilot.pause(0.2)
            assert detail.display and not table.display
            assert "covered" in detail.text.plain
            await pilot.press("escape")  # and Esc closes it, back on the results
            await pilot.pause()
            assert table.display and not detail.display and table.has_focus
            await pilot.press("f")
            await pilot.pause()
            assert screen.query_one("#controls").display and screen.query_one("#section").has_focus
            table.focus()
            await pilot.press("f")  # and closes again
            await pilot.pause()
            assert not screen.query_one("#controls").display

    run(flow)


def test_wide_terminal_shows_the_side_pane(papers_ingested: Path) -> None:
    async def flow() -> None:
        async with started((120, 40)) as (app, pilot):
            await search(app, pilot, TRIPLET)
            screen = _screen(app)
            assert not screen.has_class("narrow")
            assert screen.query_one(TextPane).display and screen.query_one("#controls").display
            screen.query_one(PagedTable).focus()
            await pilot.press("d")  # d hides it on a wide terminal too
            await pilot.pause()
            assert not screen.query_one(TextPane).display and screen.query_one(PagedTable).display

    run(flow)


@pytest.mark.parametrize(("key", "kind"), [("e", ExportScreen), ("l", LibraryScreen), ("b", BenchScreen)])
def test_focus_returns_to_the_results_after_esc(papers_ingested: Path, key: str, kind: type) -> None:
    async def flow() -> None:
        async with started() as (app, pilot):
            await search(app, pilot, TRIPLET)
            screen = _screen(app)
            table = screen.query_one(PagedTable)
            table.focus()
            await pilot.press("j")
            row = table.cursor_row
            await pilot.press(key)
            await until(pilot, lambda: isinstance(app.screen, kind), kind.__name__)
            await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, SearchScreen), "the search screen")
            await pilot.pause(0.1)
            assert table.has_focus and table.cursor_row == row
            await pilot.press("j")  # j moves the cursor again (it did nothing when focus sat on the chips)
            assert table.cursor_row == row + 1 or table.row_count == row + 1

    run(flow)


def test_esc_leaves_the_query_bar_so_screen_keys_work_before_any_search(papers_ingested: Path) -> None:
    """At first launch the query bar has focus and letters type; Esc moves to the results, where b opens Bench."""
    async def flow() -> None:
        async with started() as (app, pilot):
            screen = _screen(app)
            assert app.focused is screen.query_one("#query", Input)
            await pilot.press("escape")
            assert app.focused is screen.query_one(PagedTable)
            await pilot.press("b")
            await until(pilot, lambda: isinstance(app.screen, BenchScreen), "the Bench screen")
            assert screen.query_one("#query", Input).value == ""  # nothing was typed into the query

    run(flow)


def test_focus_returns_after_the_aspect_dialog(papers_ingested: Path) -> None:
    async def flow() -> None:
        async with started() as (app, pilot):
            await search(app, pilot, TRIPLET)
            screen = _screen(app)
            await pilot.press("a")  # the chips
            chips = screen.query_one("#chips")
            assert chips.has_focus
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, AspectEditScreen), "the aspect dialog")
            await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, SearchScreen), "the search screen")
            await pilot.pause(0.1)
            assert chips.has_focus  # where it was

    run(flow)


@pytest.mark.skipif(local_judge_missing() is not None, reason=str(local_judge_missing()))
def test_verdicts_arrive_without_asking_and_filter_by_stance(papers_ingested: Path) -> None:
    async def flow() -> None:
        async with started() as (app, pilot):
            await search(app, pilot, "aspirin reduces colorectal cancer")
            screen = _screen(app)
            table = screen.query_one(PagedTable)
            await until(pilot, lambda: len(screen.judgments) == table.row_count and not screen.judge_pending,
                        "the automatic verdicts", timeout=60)
            bar = str(screen.query_one("#verdicts", Static).render())
            n = table.row_count
            counts = {s: sum(1 for j in screen.judgments.values() if j.stance == s)
                      for s in ("supports", "refutes", "neutral")}
            assert (f"▲ {counts['supports']} support · ▼ {counts['refutes']} refute · "
                    f"● {counts['neutral']} neutral") in bar
            papers = len({e.sentence.paper_id for e in screen.kept})
            assert bar.endswith(f" · {papers} paper" if papers == 1 else f" · {papers} papers") or \
                f" · {papers} paper{'s' if papers != 1 else ''} · " in bar
            assert all(j.judge == "local" for j in screen.judgments.values())
            table.focus()
            await pilot.press("v")  # supports only
            assert screen.stance == "supports" and table.row_count == counts["supports"]
            await pilot.press("v", "v", "v")  # refutes, neutral, all
            assert screen.stance is None and table.row_count == n
            await pilot.press("g")
            assert screen.grouped and "by paper" in str(screen.query_one("#verdicts", Static).render())
            papers = [e.sentence.paper_id for e in screen.rows]
            assert papers == sorted(papers, key=papers.index)  # each paper's rows together
            first = str(table.get_cell_at((0, 3)))
            assert first.startswith("▌ ")  # the paper's head line opens its group

    run(flow)


@pytest.mark.skipif(local_judge_missing() is not None, reason=str(local_judge_missing()))
def test_an_empty_stance_filter_says_so_at_80_columns(papers_ingested: Path) -> None:
    """At 80×24 the detail pane is closed, so the notes line says why the table is empty, and the verdict bar
    keeps its numbers and the filter within the width."""
    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            await search(app, pilot, "aspirin reduces colorectal cancer")
            screen = _screen(app)
            table = screen.query_one(PagedTable)
            await until(pilot, lambda: len(screen.judgments) == table.row_count and not screen.judge_pending,
                        "the automatic verdicts", timeout=60)
            counts = {s: sum(1 for j in screen.judgments.values() if j.stance == s)
                      for s in ("supports", "refutes", "neutral")}
            empty = next((s for s in ("refutes", "supports", "neutral") if counts[s] == 0), None)
            if empty is None:
                pytest.skip("every stance has a verdict here")
            table.focus()
            for _ in range(("supports", "refutes", "neutral").index(empty) + 1):
                await pilot.press("v")
            await pilot.pause()
            assert screen.stance == empty and table.row_count == 0
            notes = screen.query_one("#notes", Static)
            assert notes.display and f"no judged result is {empty}" in str(notes.render())
            bar = str(screen.query_one("#verdicts", Static).render())
            assert f"{empty} only (0; v: next)" in bar and len(bar) <= 76
            await pilot.press(*["v"] * (3 - ("supports", "refutes", "neutral").index(empty)))  # back to all rows
            await pilot.pause()
            assert screen.stance is None and "no judged result" not in str(notes.render())

    run(flow)


def test_no_concept_matched_says_so(papers_ingested: Path) -> None:
    async def flow() -> None:
        async with started() as (app, pilot):
            await search(app, pilot, "xylophonic zebrafication causes quarkitis")
            screen = _screen(app)
            assert app.result is not None and app.result.evidence  # BM25 finds rows on "cause" alone ...
            assert screen.query_one(DataTable).row_count == 0  # ... none shown
            notes = screen.query_one("#notes", Static)  # on their own line: never cut at the screen's edge
            assert notes.display
            n = len(app.result.evidence)
            said = (f"none of the {n} results mentions" if n > 1 else "the result does not mention") + \
                " “xylophonic zebrafication” or “quarkitis”"
            assert said in str(notes.render())
            assert said in screen.query_one(TextPane).text.plain

    run(flow)


def test_export_w_does_not_type_into_the_path_and_plain_is_remembered(papers_ingested: Path) -> None:
    async def flow() -> None:
        async with started() as (app, pilot):
            await search(app, pilot, TRIPLET)
            _screen(app).query_one(PagedTable).focus()
            await pilot.press("space", "e")
            await until(pilot, lambda: isinstance(app.screen, ExportScreen), "the export screen")
            screen: Any = app.screen
            path = screen.query_one("#export-path", Input)
            before = path.value
            await pilot.press("w")
            assert path.has_focus and path.value == before  # w focused it, typed nothing
            await pilot.press("x")
            assert path.value == before + "x"  # the next key adds, never replaces the path
            screen.query_one("#basket").focus()
            await pilot.press("n")
            await pilot.pause(0.2)
            assert screen.plain
            assert app.ui_state.get("export_plain") is True

    run(flow)
    assert EvtuiApp(load_config()).ui_state.get("export_plain") is True  # remembered for the next run


def test_query_history_up_and_down(papers_ingested: Path) -> None:
    async def flow() -> None:
        async with started() as (app, pilot):
            await search(app, pilot, "aspirin colorectal cancer")
            await search(app, pilot, TRIPLET)
            query = _screen(app).query_one("#query", Input)
            query.focus()
            query.value = "half typed"
            await pilot.press("up")
            assert query.value == TRIPLET
            await pilot.press("up")
            assert query.value == "aspirin colorectal cancer"
            await pilot.press("down", "down")
            assert query.value == "half typed"

    run(flow)
    assert EvtuiApp(load_config()).ui_state.history()[-1] == TRIPLET  # persisted
