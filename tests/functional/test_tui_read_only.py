"""A read-only library (a colleague's share, a read-only mount, a full disk) in the app: the researcher still picks
sentences and exports them. The selection lives in memory, says it is not saved, and the library file is never
written; quitting with unexported picks asks first."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from textual.widgets import Label
from tui_pilot import TRIPLET, focus_results, notified, reader_at_top_hit, run, search, started, until

import evtui.access as access
from evtui.config import load_config
from evtui.export import Basket
from evtui.library import Library
from evtui.tui.data import NOT_SAVED
from evtui.tui.screens.export import ExportScreen
from evtui.tui.screens.modals import ConfirmScreen


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _stored_selection(home: Path) -> list[str]:
    """The selection in the library file (none: the table was never made)."""
    import duckdb

    with duckdb.connect(str(home / "library.duckdb"), read_only=True) as con:
        if not con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'selections'").fetchone()[0]:
            return []
        return [r[0] for r in con.execute("SELECT sentence_id FROM selections ORDER BY position").fetchall()]


def test_a_read_only_app_selects_in_memory_and_exports(unwritable_home: Path, tmp_path: Path) -> None:
    db = load_config().db_path
    before = _digest(db)
    out = tmp_path / "notes" / "evidence.md"
    out.parent.mkdir()

    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            assert "read-only" in app.status_note
            await search(app, pilot, TRIPLET)
            assert app.result is not None and len(app.result.evidence) >= 2
            first, second = (e.sentence.id for e in app.result.evidence[:2])
            await focus_results(app, pilot)
            await pilot.press("space")
            await notified(pilot, NOT_SAVED)  # said, not "cannot change the selection"
            await pilot.press("j", "space")
            assert app.selected_ids() == [first, second]
            await pilot.press("k", "space")  # unselect works too
            assert app.selected_ids() == [second]
            await pilot.press("k", "space", "e")
            await until(pilot, lambda: isinstance(app.screen, ExportScreen), "the export screen")
            screen = app.screen
            assert isinstance(screen, ExportScreen)
            await until(pilot, lambda: len(screen.items) == 2, "the selection on the Export screen")
            assert NOT_SAVED in str(screen.query_one("#basket-title", Label).render())
            assert [it.sentence_id for it in screen.items] == [second, first]
            await pilot.press("J")  # reorder, in memory
            assert app.selected_ids() == [first, second]
            screen.query_one("#export-path").value = str(out)  # type: ignore[attr-defined]
            await pilot.press("ctrl+s")
            await until(pilot, out.is_file, "the export")
            text = out.read_text(encoding="utf-8")
            assert text.index(first.split(":")[0]) >= 0
            assert text.count("- Section:") == 2
            await pilot.press("q")  # exported: quits without asking
            await until(pilot, lambda: not app.is_running, "the app to quit")

    run(flow)
    assert _digest(db) == before  # nothing reached the library
    assert _stored_selection(unwritable_home) == []


def test_quitting_a_read_only_app_with_unexported_picks_asks(unwritable_home: Path) -> None:
    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            await search(app, pilot, TRIPLET)
            await focus_results(app, pilot)
            await pilot.press("space")
            assert len(app.selected_ids()) == 1
            await pilot.press("q")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
            await pilot.press("n")
            await until(pilot, lambda: not isinstance(app.screen, ConfirmScreen), "the answer")
            assert app.is_running and len(app.selected_ids()) == 1  # kept: export it first
            await pilot.press("q")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question again")
            await pilot.press("y")
            await until(pilot, lambda: not app.is_running, "the app to quit")

    run(flow)


def test_a_read_only_app_starts_from_the_stored_selection_and_leaves_it_alone(papers_ingested: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    with Library(load_config()) as lib:  # the colleague's selection, stored before the share went read-only
        from evtui.search import Searcher

        result = Searcher(lib).search(TRIPLET, k=2, method="bm25")
        Basket(lib).add(result.evidence[0], result.query, "bm25")
        stored = Basket(lib).ids()
    home = load_config().home
    real = os.access
    monkeypatch.setattr(access.os, "access", lambda p, mode, **kw: (  # the fault: the home cannot be written
        False if mode & os.W_OK and Path(p) == home else real(p, mode, **kw)))

    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            assert app.selected_ids() == stored
            assert app.basket is not None
            app.basket.clear()
            assert app.selected_ids() == []

    run(flow)
    assert _stored_selection(home) == stored


def test_a_read_only_library_screen_refuses_at_once(unwritable_home: Path) -> None:
    """Remove asked "Remove this paper?" and only then said the library is read-only; add and embed went as far."""
    from tui_pilot import library_screen

    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            screen = await library_screen(app, pilot)
            await until(pilot, lambda: screen.selected_paper() is not None, "the papers")
            await pilot.press("x")
            await notified(pilot, "cannot remove")
            assert not isinstance(app.screen, ConfirmScreen)
            await pilot.press("m")
            await notified(pilot, "cannot embed the library")
            assert not screen.embedding
            await pilot.press("a")
            await notified(pilot, "cannot add papers")
            assert app.focused is not screen.query_one("#add-path")

    run(flow)


def test_the_readers_status_says_not_saved_on_one_line_at_80_columns(unwritable_home: Path) -> None:
    from textual.widgets import Static

    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            await search(app, pilot, TRIPLET)
            reader = await reader_at_top_hit(app, pilot)
            assert app.result is not None
            top = app.result.evidence[0]
            await pilot.press("space")
            assert app.selected_ids() == [top.sentence.id]
            status = reader.query_one("#reader-status", Static)
            line = str(status.render())
            assert line.endswith("· 1 selected (not saved)"), line
            assert len(line) <= status.content_region.width, line  # one line: the count is not wrapped away

    run(flow)


def test_a_read_only_bench_refuses_a_sweep_once(unwritable_home: Path) -> None:
    """A sweep on a read-only library ran every run to a failure, one toast per run (three for the preselection)."""
    from textual.widgets import Input
    from tui_pilot import messages, open_screen

    from evtui.tui.screens.bench import BenchScreen

    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            screen = await open_screen(app, pilot, "b", BenchScreen)
            screen.query_one("#dataset", Input).value = str(Path(__file__).parents[1] / "fixtures" / "bench" /
                                                            "eb3.json")
            screen.query_one("#sweep-results").focus()
            await pilot.press("r")
            await notified(pilot, "cannot run a sweep")
            await pilot.pause(1.0)
            assert not screen.running
            assert sum("read-only" in m for m in messages(app)) == 1, messages(app)

    run(flow)
