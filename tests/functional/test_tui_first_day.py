"""A first day with the app: an empty library explains itself, every key id that `?` lists can be
rebound, and the claim-verdicts list shows where its cursor is."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

from textual.widgets import Input, OptionList, Static
from tui_pilot import focus_results, library_screen, messages, run, search, started, until

from evtui.config import load_config
from evtui.tui.app import EvtuiApp
from evtui.tui.screens.search import SearchScreen
from evtui.tui.screens.verdicts import VerdictsScreen

NARROW = (80, 24)


def test_every_binding_id_help_lists_can_be_rebound(papers_ingested: Path) -> None:
    """`?` shows each key's id for `[keymap]`; the claim-verdicts screen's and the loading screen's ids were refused
    as "unknown binding id(s)" although help listed them."""
    Path(os.environ["EVTUI_CONFIG"]).write_text('[keymap]\n"verdicts.open" = "enter,o"\n"loading.quit" = "q,Q"\n',
                                                encoding="utf-8")

    async def flow() -> None:
        async with started(NARROW, app=EvtuiApp(load_config())) as (app, pilot):
            await pilot.pause()
            assert not [m for m in messages(app) if "unknown binding id" in m], messages(app)

    assert {"verdicts.open", "verdicts.back", "loading.quit"} <= EvtuiApp.binding_ids()
    run(flow)


def test_an_empty_library_says_how_to_add_papers() -> None:
    """A new data home without the demo (demo = false): the Search screen said "0 papers · 0 sentences" and no
    more, and a search showed an empty table at 80 columns (its "no matching sentences" went to the folded side
    pane): the notes line says how to add papers, before and after a search."""

    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            screen = app.screen
            assert isinstance(screen, SearchScreen)
            notes = screen.query_one("#notes", Static)
            await until(pilot, lambda: notes.display and "library is empty" in str(notes.render()),
                        "the empty-library note before any search")
            await search(app, pilot, "aspirin reduces colorectal cancer", method="bm25")
            await until(pilot, lambda: notes.display and "library is empty" in str(notes.render()),
                        "the empty-library note after a search")
            assert "a adds files or folders" in str(notes.render())

    run(flow)


def test_no_match_is_said_on_a_narrow_terminal(papers_ingested: Path) -> None:
    """At 80 columns the side pane is folded away: a search with no hit must say so where it is seen."""

    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            screen = app.screen
            await search(app, pilot, "xyzzy frobnicates quuxes", method="bm25")
            assert app.result is not None and not app.result.evidence
            notes = screen.query_one("#notes", Static)
            await until(pilot, lambda: notes.display and "no matching sentences" in str(notes.render()),
                        "the no-match note on the notes line")

    run(flow)


async def verdicts_of(app: Any, pilot: Any, claim: str) -> VerdictsScreen:
    """Search `claim`, press c, and wait for the claim verdicts to fill."""
    await search(app, pilot, claim, method="bm25")
    await focus_results(app, pilot)
    await pilot.press("c")
    await until(pilot, lambda: isinstance(app.screen, VerdictsScreen), "the verdicts screen")
    screen = app.screen
    assert isinstance(screen, VerdictsScreen)
    await until(pilot, lambda: screen.verdict is not None, "the verdicts", timeout=60)
    await pilot.pause()
    return screen


def test_claim_verdicts_show_a_cursor_on_the_first_paper(papers_ingested: Path) -> None:
    """The list of papers filled with no paper highlighted: enter opened one the user could not see chosen."""

    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            screen = await verdicts_of(app, pilot, "Aspirin reduces the incidence of colorectal cancer")
            assert screen.verdict is not None and screen.verdict.papers
            ol = screen.query_one(OptionList)
            assert ol.highlighted == 0 and app.focused is ol

    run(flow)


def test_claim_verdicts_on_an_empty_library_say_why() -> None:
    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            screen = await verdicts_of(app, pilot, "aspirin reduces colorectal cancer")
            ol = screen.query_one(OptionList)
            prompt = str(ol.get_option_at_index(0).prompt)
            assert "library is empty" in prompt, prompt

    run(flow)


class ProbeLock:
    """The app's real re-entrant lock, noting which functions of other threads had to wait for it."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.owner: int | None = None
        self.waiters: list[str] = []

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        if self.owner is not None and self.owner != threading.get_ident():
            self.waiters.append(sys._getframe(2).f_code.co_name)
        return self.lock.acquire(blocking, timeout)

    def release(self) -> None:
        self.lock.release()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def test_claim_verdicts_take_turns_on_the_shared_connection(papers_ingested: Path) -> None:
    """The verify worker read the library's shared DuckDB connection without the workers' lock: beside the
    automatic judge, and through a switch to read-write that reopens that connection."""

    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            await search(app, pilot, "Aspirin reduces the incidence of colorectal cancer", method="bm25")
            screen = app.screen
            assert isinstance(screen, SearchScreen)
            await until(pilot, lambda: not screen.judge_pending, "the automatic verdicts")
            await focus_results(app, pilot)
            probe = ProbeLock()
            app.db_lock = probe  # type: ignore[misc]
            with probe.lock:  # held, as a search or a judge chunk holds it
                probe.owner = threading.get_ident()
                await pilot.press("c")
                await until(pilot, lambda: isinstance(app.screen, VerdictsScreen), "the verdicts screen")
                verdicts = app.screen
                assert isinstance(verdicts, VerdictsScreen)
                await until(pilot, lambda: verdicts.verdict is not None or "verify" in probe.waiters,
                            "the verify worker at the lock", timeout=60)
                assert verdicts.verdict is None, "the claim was verified while another worker held the library"
                probe.owner = None
            await until(pilot, lambda: verdicts.verdict is not None, "the verdicts", timeout=60)

    run(flow)


def test_slash_from_another_screen_lands_in_the_query_bar(papers_ingested: Path) -> None:
    """`/` on the Library (or Export, Bench) screen switched to Search and focused the query bar, and then the
    Search screen's resume put the focus back on the results: the query typed next ran as keys (its `e` opened
    Export, its `l` the Library)."""

    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            await search(app, pilot, "aspirin colorectal cancer", method="bm25")
            await library_screen(app, pilot)
            await pilot.press("slash")
            await until(pilot, lambda: isinstance(app.screen, SearchScreen), "back on Search")
            for _ in range(5):
                await pilot.pause()
            query = app.screen.query_one("#query")
            assert app.focused is query, app.focused
            await pilot.press("e", "l")
            assert isinstance(app.screen, SearchScreen)

    run(flow)


def test_results_do_not_take_the_focus_from_a_query_being_typed(papers_ingested: Path) -> None:
    """A slow search (evidential, another worker holding the library) came back while the user typed the next
    query: focus jumped to the results and the rest of the typing ran as keys (space selected, e opened Export)."""

    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            screen = app.screen
            query = screen.query_one("#query", Input)
            query.value = "aspirin colorectal cancer"
            with app.db_lock:  # held, as a judge chunk or a switch holds it: the search waits
                await pilot.press("enter")
                await pilot.pause()
                await pilot.press("end", "space", "r", "i", "s", "k")
            await until(pilot, lambda: app.result is not None, "results")
            await pilot.pause()
            assert app.focused is query, app.focused
            assert query.value == "aspirin colorectal cancer risk"
            await pilot.press("e")
            assert isinstance(app.screen, SearchScreen) and query.value.endswith("riske")

    run(flow)


def test_results_take_the_focus_after_a_search(papers_ingested: Path) -> None:
    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            await search(app, pilot, "aspirin colorectal cancer", method="bm25")
            await until(pilot, lambda: app.focused is app.screen.query_one("#results"), "focus on the results")

    run(flow)


def test_the_empty_library_note_goes_once_papers_are_added(papers_dir: Path) -> None:
    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            search_screen = app.screen
            assert isinstance(search_screen, SearchScreen)
            await search(app, pilot, "aspirin reduces colorectal cancer", method="bm25")
            notes = search_screen.query_one("#notes", Static)
            await until(pilot, lambda: "library is empty" in str(notes.render()), "the empty-library note")
            library = await library_screen(app, pilot)
            path = library.query_one("#add-path", Input)
            path.value = str(papers_dir)
            path.focus()
            await pilot.pause()
            await pilot.press("enter")
            await until(pilot, lambda: not search_screen.library_empty, "the papers added", timeout=60)
            assert "library is empty" not in search_screen.notes_text

    run(flow)
