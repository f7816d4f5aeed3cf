"""The evtui terminal app: one App over the same Library, Searcher, Basket, judge and bench services as the CLI.

Screens (one mode each, so a sweep keeps running while you search): Search, Library, Bench, Export; the paper
reader, help and dialogs are pushed on top. Long work runs in thread workers that report back with typed
messages (evtui.tui.messages); errors become notifications, never a crash.
"""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, cast

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.filter import LineFilter, Monochrome
from textual.screen import Screen
from textual.worker import get_current_worker

from evtui import inbox
from evtui.access import open_for_app, prepare_tables
from evtui.config import Config, load_config
from evtui.export import Basket
from evtui.library import IngestProgress, Library
from evtui.render import printable
from evtui.search import Searcher, SearchResult
from evtui.tui.base import WorkCancelled, failure_text
from evtui.tui.commands import EvtuiCommands
from evtui.tui.data import NOT_SAVED, LibraryView, MemoryBasket, SharedBasket
from evtui.tui.filters import LegibleMonochrome
from evtui.tui.messages import IngestStep, LibraryChanged, LibraryFailed, LibraryReady, SelectionArrived
from evtui.tui.screens.loading import LoadingScreen
from evtui.tui.screens.modals import AspectEditScreen, ConfirmScreen, HelpScreen
from evtui.tui.screens.reader import ReaderScreen
from evtui.tui.screens.search import SearchScreen
from evtui.tui.state import UiState
from evtui.tui.widgets import AspectBar, CheckList, RowTable

WRITER_STOP_WAIT = 60.0  # seconds quitting waits for an ingest or embed to reach its next step
INBOX_POLL = 1.0  # seconds between looks for a CLI's request (a directory listing)


def _screen_class(mode: str) -> type[Screen[Any]]:
    module, name = EvtuiApp.MODE_SCREENS[mode]
    return cast("type[Screen[Any]]", getattr(importlib.import_module(module), name))


class EvtuiApp(App[None]):
    TITLE = "evtui"
    SUB_TITLE = "evidence search"
    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses elsewhere find it too
    # One mode per screen; each screen's module is imported when the mode is first opened (a quicker start).
    MODE_SCREENS: ClassVar[dict[str, tuple[str, str]]] = {
        "search": ("evtui.tui.screens.search", "SearchScreen"),
        "library": ("evtui.tui.screens.library", "LibraryScreen"),
        "bench": ("evtui.tui.screens.bench", "BenchScreen"),
        "export": ("evtui.tui.screens.export", "ExportScreen"),
    }
    MODES: ClassVar[dict[str, str | Callable[[], Screen[Any]]]] = {
        mode: partial(lambda m: _screen_class(m)(), mode) for mode in MODE_SCREENS
    }
    COMMANDS = App.COMMANDS | {EvtuiCommands}
    BINDINGS = [
        Binding("slash", "query", "Query", id="app.query"),
        Binding("l", "mode('library')", "Library", id="app.library"),
        Binding("b", "mode('bench')", "Bench", id="app.bench"),
        Binding("e", "mode('export')", "Export", id="app.export"),
        Binding("escape", "back", "Back to search, or out of a text field", show=False, id="app.back"),
        Binding("question_mark,f1", "help", "Help", id="app.help"),
        Binding("ctrl+p", "command_palette", "Commands", show=False, priority=True, id="app.palette"),
        Binding("q", "quit", "Quit", id="app.quit"),
    ]

    def __init__(self, config: Config | None = None, *, clock: Callable[[], float] = time.perf_counter) -> None:
        super().__init__()
        self._legible = LegibleMonochrome()  # used under NO_COLOR (get_line_filters)
        self.config = config or load_config()
        self.clock = clock  # durations shown in the status line (tests pin it for stable snapshots)
        self.library: Library | None = None
        self.view: LibraryView | None = None  # the UI thread's own connection (see evtui.tui.data)
        self.searcher: Searcher | None = None
        self.basket: Basket | None = None  # the persisted selection (evtui.export)
        self.result: SearchResult | None = None  # the Search screen's latest result
        self.status_note = ""
        # Workers share the Library's one DuckDB connection; they take turns.
        self.db_lock = threading.RLock()
        # UI-thread reads (LibraryView) take this one; a switch of the shared library takes both (switch_guard).
        self.db_gate = threading.RLock()
        self.ui_state = UiState(self.config.home)  # export options, query history
        self._local_judge: Any = None
        self._judge_lock = threading.Lock()
        self._inbox_lock = threading.Lock()  # one inbox pass at a time: a request is written once
        self._writers = 0  # workers inside library_writer()
        self._writers_done = threading.Condition()
        # The theme last picked in the app (command palette → theme): a researcher on a light terminal picked
        # textual-light at every launch. config.toml's theme wins again once it is changed after that pick.
        pick = self.ui_state.get("theme_pick")
        picked = pick.get("theme") if isinstance(pick, dict) and pick.get("over") == self.config.theme else None
        for theme in (picked, self.config.theme):
            if isinstance(theme, str) and theme in self.available_themes:
                self.theme = theme
                break

    def watch_theme(self) -> None:
        """A theme picked (command palette): what is drawn in aspect colours is drawn again in the palette that
        reads on its background (evtui.render: one for dark, one for light); and the pick is remembered."""
        pick = {"theme": self.theme, "over": self.config.theme}
        if self.is_running and self.ui_state.get("theme_pick") != pick:
            self.ui_state.set("theme_pick", pick)
        for stack in self._screen_stacks.values():
            for screen in stack:
                redraw = getattr(screen, "palette_changed", None)
                if redraw is not None and screen.is_mounted:
                    redraw()

    def get_line_filters(self) -> list[LineFilter]:
        """Textual's filters, its NO_COLOR greyscale replaced by one that keeps every text readable."""
        return [self._legible if type(f) is Monochrome else f for f in super().get_line_filters()]

    # -- start-up ----------------------------------------------------------------------------------
    def on_mount(self) -> None:
        self.apply_keymap()
        self.switch_mode("search")
        self.push_screen(LoadingScreen())
        self.open_library()

    def apply_keymap(self) -> None:
        """User overrides from config.toml: `[keymap]` maps a binding id (see `?`) to keys, e.g.
        `"app.quit" = "ctrl+q"` or `"search.open" = "o,enter"`."""
        for warning in getattr(self.config, "warnings", []):  # unknown keys in config.toml: said in the app too
            self.notify(warning, title="Config", severity="warning", timeout=10)
        keymap = {str(k): str(v) for k, v in (self.config.keymap or {}).items()}
        if not keymap:
            return
        known = self.binding_ids()
        unknown = sorted(set(keymap) - known)
        if unknown:
            self.notify(f"unknown binding id(s) in [keymap]: {', '.join(unknown)} (? lists the ids)",
                        title="Keymap", severity="warning", timeout=10)
        self.set_keymap({k: v for k, v in keymap.items() if k in known})

    @classmethod
    def mode_screens(cls) -> dict[str, type[Screen[Any]]]:
        """The screen class of every mode (imports them all)."""
        return {mode: _screen_class(mode) for mode in cls.MODE_SCREENS}

    def mode_screen(self, mode: str) -> Screen[Any] | None:
        """The base screen of `mode`, if that mode has been opened."""
        stack = self._screen_stacks.get(mode) or []
        return stack[0] if stack else None

    def is_mode_screen(self, screen: Screen[Any]) -> bool:
        return any(self.mode_screen(mode) is screen for mode in self.MODE_SCREENS)

    @classmethod
    def binding_ids(cls) -> set[str]:
        # every class whose keys `?` can list (their ids are what [keymap] takes): the claim verdicts' and the
        # loading screen's ids were refused as unknown while help showed them
        from evtui.tui.screens.verdicts import VerdictsScreen

        classes: list[type] = [cls, *cls.mode_screens().values(), ReaderScreen, VerdictsScreen, LoadingScreen,
                               AspectBar, RowTable, CheckList, ConfirmScreen, AspectEditScreen, HelpScreen]
        return {b.id for c in classes for b in getattr(c, "BINDINGS", []) if isinstance(b, Binding) and b.id}

    @work(thread=True, exclusive=True, group="library")
    def open_library(self) -> None:
        from evtui.demo import ensure_demo

        cfg = self.config
        if cfg.db_path.exists() and not cfg.index_path.exists():  # opening rebuilds it: seconds to minutes
            with suppress(RuntimeError):  # the app already closing (q at once): nothing to say it on
                self.call_from_thread(self.loading_says, "the search index is missing: rebuilding it from the "
                                      "database…")
        try:
            # shared: DuckDB read-only between writes, so `evtui search` etc. work in another pane meanwhile; a data
            # home that cannot be written (a colleague's library, a read-only mount, a full disk) opens read-only
            lib, read_only = open_for_app(self.config)
            lib.switch_guard = self.switch_guard
        except Exception as exc:  # noqa: BLE001 - a damaged data home must be reported, not crash
            self.post_message(LibraryFailed(failure_text(exc)))
            return
        worker = get_current_worker()
        try:
            def progress(p: IngestProgress) -> None:
                if worker.is_cancelled:  # q during the first launch's load: stop now, the next launch finishes it
                    raise WorkCancelled
                self.post_message(IngestStep(p))

            report = None
            if not lib.read_only:
                with lib.rw():
                    report = ensure_demo(lib, progress)
                    prepare_tables(lib)  # created now: read-only between writes, the app cannot create them later
            lib.abbreviations()  # warm: the query bar parses as you type
            stats = lib.store.stats()
        except WorkCancelled:
            lib.close()  # the papers stored so far are kept; evtui.demo finishes the load on the next launch
            return
        except Exception as exc:  # noqa: BLE001
            lib.close()
            self.post_message(LibraryFailed(failure_text(exc)))  # the CLI's words for a full disk, damage…
            return
        note = f"{stats['papers']:,} papers · {stats['sentences']:,} sentences"
        if report is not None:
            note += f" (demo library loaded in {report.seconds:.1f}s)"
        if read_only:
            note += f" · {read_only}"
        if lib.recovered:
            note += f" · repaired {len(lib.recovered)} paper(s) an interrupted run left unfinished"
        self.post_message(LibraryReady(lib, note, tuple(lib.opening_notes())))

    def loading_says(self, text: str) -> None:
        if isinstance(self.screen, LoadingScreen):
            self.screen.say(text)

    def on_ingest_step(self, msg: IngestStep) -> None:
        if isinstance(self.screen, LoadingScreen):
            self.screen.step(msg)

    def on_library_ready(self, msg: LibraryReady) -> None:
        self.library = msg.library
        try:
            self.view = LibraryView(msg.library, self.db_gate)
            if msg.library.read_only:  # picking still works, in memory: the export is a file outside the library
                self.basket = MemoryBasket(self.view, msg.library, self.db_gate)  # type: ignore[assignment]
            else:
                basket = Basket(self.view)  # type: ignore[arg-type]  # Basket needs .store only
                self.basket = SharedBasket(basket, msg.library, self.db_gate)  # type: ignore[assignment]
        except Exception as exc:  # noqa: BLE001
            self.on_library_failed(LibraryFailed(f"cannot open a second connection to the library: {exc}"))
            return
        self.searcher = Searcher(msg.library)
        self.status_note = msg.note
        self.set_interval(INBOX_POLL, self.check_inbox)  # `evtui select` in another terminal hands rows to us
        if isinstance(self.screen, LoadingScreen):
            self.pop_screen()
        search = self.search_screen()
        if search is not None:
            search.library_ready(msg.note)
        for severity, notice in msg.notices:  # once, as toasts: the status line keeps its counts
            self.notify(notice, title="Library", severity=severity, timeout=10)

    def notify(self, message: str, *, title: str = "", severity: Any = "information", timeout: float | None = None,
               markup: bool = True) -> None:
        """Every toast as plain text: messages carry paper ids, file names and LLM errors, whose [brackets] are
        no markup and whose control characters must not reach the terminal."""
        super().notify(printable(message), title=printable(title), severity=severity, timeout=timeout, markup=False)

    def notify_replacing(self, marker: str, message: str, *, timeout: float | None = None) -> None:
        """A toast that takes the place of the earlier ones holding `marker` still on screen: each space on a result
        said "n sentence(s) selected", and three quick picks stacked three toasts over half the results at 80
        columns. Only information toasts give way; a warning or an error stays until it times out."""
        # Textual has no public way to withdraw one toast: its private ones, where present (pinned < 8.3), else
        # the toasts stack as before.
        shown, withdraw = getattr(self, "_notifications", None), getattr(self, "_unnotify", None)
        if shown is not None and callable(withdraw):
            for old in list(shown):
                if old.severity == "information" and marker in str(old.message):
                    withdraw(old, refresh=False)  # the new toast's arrival redraws them
        self.notify(message, timeout=timeout)

    def on_library_failed(self, msg: LibraryFailed) -> None:
        if isinstance(self.screen, LoadingScreen):
            self.screen.failed(msg.reason)
        self.notify(msg.reason, title="Library", severity="error", timeout=15)

    # -- requests from the CLI beside the app (evtui/inbox.py) --------------------------------------
    def check_inbox(self) -> None:
        if self.library is not None and self.basket is not None and inbox.pending(self.config.home):
            self.apply_inbox()

    @work(thread=True, exclusive=False, group="inbox")
    def apply_inbox(self) -> None:
        """Write what `evtui select` found and judged (it cannot write while we hold the library): the rows into
        the selection, their verdicts into the cache, in one switch to read-write; then answer it."""
        from evtui.judge.cache import JudgmentCache

        with self._inbox_lock:
            home, library, basket = self.config.home, self.library, self.basket
            if library is None or basket is None:
                return
            for rid, request in inbox.take(home):
                if request is None or request.get("kind") != "select":
                    inbox.answer(home, rid, {"error": "the app did not understand the request (another version?)"})
                    continue
                try:
                    with library.rw(wait=5.0):
                        if request.get("clear"):
                            basket.clear()
                        # an item is (sentence, question): a row selected for another question is added too
                        have, added = set(basket.keys()), []
                        for row in request.get("rows") or []:
                            item = (str(row["sentence_id"]), str(row["query"]))
                            if item not in have:
                                basket.add_row(row)
                                have.add(item)
                                added.append(row["sentence_id"])
                        with self.db_lock:
                            JudgmentCache(library.store.con).insert_rows(request.get("judgments") or [])
                        ids = basket.ids()
                except Exception as exc:  # noqa: BLE001 - the CLI says why; the app carries on
                    inbox.answer(home, rid, {"error": failure_text(exc)})
                    self.post_message(SelectionArrived(0, False, failure_text(exc)))
                    continue
                inbox.answer(home, rid, {"added": added, "selection": ids})
                self.post_message(SelectionArrived(len(added), bool(request.get("clear"))))

    def on_selection_arrived(self, msg: SelectionArrived) -> None:
        if msg.error:
            self.notify(f"evtui select could not add its rows: {msg.error}", title="Selection", severity="error")
            return
        search = self.search_screen()
        if search is not None:
            search.refresh_selection_marks()
        export = self.mode_screen("export")
        if export is not None and export is self.screen:
            export.reload()  # type: ignore[attr-defined]
        cleared = "selection cleared; " if msg.cleared else ""
        self.notify(f"{cleared}{msg.added} sentence(s) added by evtui select · {len(self.selected_ids())} selected",
                    title="Selection", timeout=4)

    def on_library_changed(self, _msg: LibraryChanged) -> None:
        search = self.search_screen()
        if search is not None:
            search.refresh_papers()

    def on_unmount(self) -> None:
        bench = self.mode_screen("bench")
        if bench is not None:
            bench.cancel_event.set()  # type: ignore[attr-defined]
            bench.close_drill_library()  # type: ignore[attr-defined]
        # An ingest or embed must stop before the library closes: each of its steps ends in the switch that takes
        # db_lock, and closing (under db_lock) waits for its write lock — closing first hung the app for good.
        for worker in list(self.workers):
            worker.cancel()  # they check at their next step
        with self._writers_done:
            self._writers_done.wait_for(lambda: self._writers == 0, timeout=WRITER_STOP_WAIT)
        if self.view is not None:
            self.view.close()
        if self.library is not None:
            with self.db_lock:
                self.library.close()
        # Let go of everything that holds a connection: Textual can keep an exited App reachable (its context
        # variable in threads it started), and a DuckDB connection object alive at interpreter exit is reported
        # as a "nanobind: leaked" line.
        self.library = self.view = self.searcher = self.basket = self.result = None
        self._local_judge = None

    # -- shared helpers ----------------------------------------------------------------------------
    @contextmanager
    def library_writer(self) -> Iterator[None]:
        """Held by a worker that writes the library step by step (ingest, embed): quitting cancels it and waits for
        it to stop at its next step before closing the library."""
        with self._writers_done:
            self._writers += 1
        try:
            yield
        finally:
            with self._writers_done:
                self._writers -= 1
                self._writers_done.notify_all()

    @contextmanager
    def switch_guard(self) -> Iterator[None]:
        """Held while the shared library reopens DuckDB: no worker (db_lock) and no UI-thread read (db_gate)
        is on a connection then."""
        with self.db_lock, self.db_gate:
            yield

    def new_view(self) -> LibraryView:
        """A connection of its own for a worker (closed by the caller)."""
        assert self.library is not None
        return LibraryView(self.library, self.db_gate)

    def search_screen(self) -> SearchScreen | None:
        screen = self.mode_screen("search")
        return screen if isinstance(screen, SearchScreen) else None

    def selected_ids(self) -> list[str]:
        return self.basket.ids() if self.basket is not None else []

    def selection_note(self) -> str:
        """"" where the selection is saved as it changes; else the line that says it is not (a read-only library)."""
        return "" if getattr(self.basket, "saved", True) else NOT_SAVED

    def abbreviations(self) -> dict[str, str]:
        if self.library is None:
            return {}
        with self.db_lock:
            return self.library.abbreviations()

    def judge_service(self) -> Any | None:
        try:
            from evtui.judge import service
        except ImportError:
            return None
        return service

    def local_judge(self) -> Any:
        """The local judge, made once (loading its models takes seconds) and kept for the session."""
        with self._judge_lock:
            if self._local_judge is None:
                service = self.judge_service()
                assert service is not None and self.library is not None
                # It shares the searcher's ranker: one model in memory, and the pools a search built.
                self._local_judge = service.make_judge(self.library, "local", searcher=self.searcher)
            return self._local_judge

    def judge_model(self) -> str | None:
        return getattr(self.config, "judge_model", None)

    def judge_setting(self, name: str) -> Any:
        return getattr(self.config, f"judge_{name}", None)

    # -- actions -----------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in {"mode", "query"} and self.library is None:
            return False
        return True

    async def action_mode(self, mode: str) -> None:
        if self.library is None:
            return
        # A dialog or the reader on top of the current mode closes first.
        while len(self.screen_stack) > 1 and not self.is_mode_screen(self.screen):
            await self.pop_screen()
        await self.switch_mode(mode)
        self.screen.refresh(layout=True)  # a pop and a switch in one tick can leave stale lines on a terminal

    async def action_query(self) -> None:
        await self.action_mode("search")
        search = self.search_screen()
        if search is not None:
            search.focus_query()

    async def action_back(self) -> None:
        if self.current_mode != "search" and self.library is not None:
            await self.action_mode("search")
            return
        search = self.search_screen()
        focused = self.focused
        if search is not None and focused is not None and focused.screen is search and \
                focused.id in ("query", "paper", "year-from", "year-to"):
            # out of the query bar or a filter field: the screen's keys (l, b, e, …) work again
            search.query_one("#results").focus()

    async def action_quit(self) -> None:
        """Quit; a running benchmark sweep is cancelled first, after asking, and a selection that only lives in
        memory (a read-only library) and changed since its last export is not dropped without asking."""
        n = len(self.selected_ids()) if getattr(self.basket, "unexported", False) else 0
        if n:
            def lose(yes: bool | None) -> None:
                if yes:
                    self.basket.unexported = False  # type: ignore[union-attr]
                    self.call_later(self.action_quit)

            self.push_screen(ConfirmScreen("Quit without exporting the selection?",
                                           f"{n} selected sentence(s) are not saved: the library is read-only. "
                                           "Export them first (e, then ctrl+s).", yes="Quit"), lose)
            return
        bench: Any = self.mode_screen("bench")
        if bench is None or not bench.running:
            self.exit()
            return

        def answer(yes: bool | None) -> None:
            if yes and bench is not None:
                bench.cancel_event.set()
                self.exit()

        self.push_screen(ConfirmScreen("A benchmark sweep is running", "Quitting cancels it (finished runs are "
                                       "already stored).", yes="Quit"), answer)

    async def run_in_mode(self, mode: str, action: str) -> None:
        """From the command palette: switch to `mode`, then run one of its screen's actions there."""
        await self.action_mode(mode)
        await self.run_action(action, self.screen)

    def help_noop(self, node: object, action: str) -> bool:
        """Whether a generic (id-less) key of Textual's does nothing here, so `?` leaves it out."""
        if action in ("scroll_left", "scroll_right", "page_left", "page_right"):
            return not getattr(node, "max_scroll_x", 0)  # a list that wraps its lines never scrolls sideways
        if action in ("app.focus_next", "app.focus_previous"):
            return len(self.screen.focus_chain) < 2  # one focusable widget: tab goes nowhere
        return False

    def action_help(self) -> None:
        screen = self.screen
        active = list(screen.active_bindings.items())
        # An action evtui binds with an id (the reader's k: cursor_up) also takes the keys a widget binds to it
        # without one (the list's ↑): one row "k ↑" under the id [keymap] accepts, not a second row with no id.
        # (Every binding of the chain, a shadowed one too: the reader's home under the list's own home.)
        # A widget's key that an id'd binding also names (the Library's enter, which the table turns into "open")
        # joins that row the same way.
        owner: dict[str, tuple[Binding, int]] = {}
        owner_of_key: dict[str, tuple[Binding, int]] = {}
        for node, bindings in screen._modal_binding_chain:
            for key, b in bindings:
                if b.id and b.description:
                    # the screen's own keys first, then evtui's keys of the focused widget, the app's, and last
                    # the generic keys of Textual's widgets (page up/down, focus next…)
                    rank = 0 if node is screen else 2 if node is self else 1
                    owner.setdefault(b.action, (b, rank))
                    owner_of_key.setdefault(key, (b, rank))
        hidden = getattr(screen, "HELP_HIDES", frozenset())
        groups: dict[str, tuple[int, Binding, list[str], list[str]]] = {}
        for key, a in active:
            b = a.binding
            if not b.description:
                continue
            own = owner.get(b.action) or (None if b.id else owner_of_key.get(key))
            if own is None and (b.action in hidden or self.help_noop(a.node, b.action)):
                continue  # a generic key that does nothing here (Scroll Left on a list that never scrolls sideways)
            group = f"id\0{own[0].id}" if own is not None else f"{b.action}\0{b.description}"
            if group not in groups:
                rep, rank = own if own is not None else (b, 3)
                groups[group] = (rank, rep, [], [])
            rank, rep, keys, merged = groups[group]
            display = self.get_key_display(b)
            if display not in keys and display not in merged:
                (keys if b.id or own is None else merged).append(display)
        ranked = [(rank, (" ".join(keys + merged), rep.description, rep.id or ""))
                  for rank, rep, keys, merged in groups.values()]
        if isinstance(screen, SearchScreen):
            ranked.append((0, ("enter", "Search (in the query bar)", "")))
        rows = [row for _rank, row in sorted(ranked, key=lambda r: r[0])]  # stable: each group in its order
        title = type(screen).__name__.removesuffix("Screen")
        # One help screen, installed once and refilled: composing a fresh modal each time took most of the ~100 ms
        # that `?` needed while a Bench sweep ran.
        if not self.is_screen_installed("help"):
            self.install_screen(HelpScreen(title, rows), "help")
        else:
            help_screen = self.get_screen("help")
            assert isinstance(help_screen, HelpScreen)
            help_screen.show(title, rows)
        self.push_screen("help")



def run(config: Config | None = None) -> None:
    EvtuiApp(config).run()
