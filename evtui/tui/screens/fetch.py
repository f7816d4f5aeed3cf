"""The Europe PMC dialog (`g` on the Library screen, ctrl+g on Search): IDs are fetched at once, anything else is a
Europe PMC search whose hits are listed first and fetched on ctrl+f / enter. Papers are stored a few at a time, so
each is searchable as it lands; escape cancels a run (what landed stays), and closes the dialog when idle. The work
is evtui/fetch.py's, in a thread worker that reports back with the typed messages below."""

from __future__ import annotations

import threading
import time
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Label, Static
from textual.worker import get_current_worker

from evtui.render import plain
from evtui.tui.messages import LibraryChanged
from evtui.tui.widgets.keybar import KeyBar
from evtui.tui.widgets.runbar import RunBar

SEARCH_LIMIT = 20
CHUNK = 3  # papers fetched side by side (the client's polite concurrency), then stored: searchable as they land


class FetchHits(Message):
    def __init__(self, hits: list[Any], total: int) -> None:
        super().__init__()
        self.hits = hits
        self.total = total


class FetchLanded(Message):
    """Some papers were stored (or skipped): `done` of `total` handled so far."""

    def __init__(self, done: int, total: int, fetched: list[dict[str, Any]], skipped: list[dict[str, str]]) -> None:
        super().__init__()
        self.done, self.total = done, total
        self.fetched, self.skipped = fetched, skipped


class FetchDone(Message):
    def __init__(self, cancelled: bool, seconds: float) -> None:
        super().__init__()
        self.cancelled = cancelled
        self.seconds = seconds


class FetchFailed(Message):
    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


class FetchScreen(ModalScreen[int]):
    """Dismissed with the number of papers that landed."""

    BINDINGS = [
        Binding("escape", "close", "Cancel the fetch, or close", id="fetch.close"),
        Binding("ctrl+f", "fetch_hits", "Fetch the listed hits", id="fetch.go"),
    ]

    def __init__(self, query: str = "") -> None:
        super().__init__()
        self.initial = query
        self.hits: list[Any] = []
        self.running = False
        self.landed = 0
        self.skipped = 0
        self._stop = threading.Event()

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog fetch"):
            yield Label("Fetch papers from Europe PMC", classes="dialog-title")
            yield Input(self.initial, placeholder="DOI, PMID:123 or PMC123 (several: spaces), or a search",
                        id="fetch-query")
            # the status and the bar above the hits: at 24 rows a list below them pushed them out of the dialog
            yield Static("enter: IDs are fetched at once, a search lists its hits first", id="fetch-status")
            yield RunBar(id="fetch-bar", show_eta=False)
            yield DataTable(id="fetch-hits", cursor_type="row", zebra_stripes=True)
        yield KeyBar()

    def on_mount(self) -> None:
        table = self.query_one("#fetch-hits", DataTable)
        table.add_columns("year", "OA", "journal", "title")
        table.display = False
        self.query_one("#fetch-bar").display = False
        self.query_one("#fetch-query", Input).focus()

    def status(self, text: str | Text) -> None:
        self.query_one("#fetch-status", Static).update(text)

    @property
    def library(self) -> Any:
        return getattr(self.app, "library", None)

    # -- asking ------------------------------------------------------------------------------------------------
    @on(Input.Submitted, "#fetch-query")
    def submitted(self, event: Input.Submitted) -> None:
        from evtui.fetch import parse_ids

        text = event.value.strip()
        if self.running or not text:
            return
        if self.library is None or self.library.read_only:
            self.status(Text("the library is read-only here: nothing can be added", style="red"))
            return
        try:
            idents = parse_ids(text.split())
        except Exception:  # noqa: BLE001 - not IDs: a search
            idents = []
        self._begin()
        if idents:
            self.status(f"looking up {len(idents)} ID(s)…")
            self.fetch_worker(idents, [])
        else:
            self.status(f"searching Europe PMC for {text!r}…")
            self.search_worker(text)

    def _begin(self) -> None:
        self.running = True
        self.skipped = 0
        self._stop.clear()
        bar = self.query_one("#fetch-bar", RunBar)
        bar.display = True
        bar.start()

    @work(thread=True, exclusive=True, group="fetch")
    def search_worker(self, text: str) -> None:
        from evtui.fetch import client_for, search

        try:
            hits, total = search(client_for(self.library.config), text, limit=SEARCH_LIMIT)
        except Exception as exc:  # noqa: BLE001 - offline, refused: said in the dialog
            self.post_message(FetchFailed(str(exc)))
            return
        self.post_message(FetchHits(hits, total))

    def on_fetch_hits(self, msg: FetchHits) -> None:
        self.running = False
        self.hits = msg.hits
        self.query_one("#fetch-bar", RunBar).display = False
        table = self.query_one("#fetch-hits", DataTable)
        table.clear()
        for h in msg.hits:
            table.add_row(str(h.year or ""), "OA" if h.open_access else "", plain(h.journal or "")[:24],
                          plain(h.title)[:120])
        table.display = bool(msg.hits)
        if msg.hits:
            table.focus()
            self.status(f"{len(msg.hits)} of {msg.total:,} hit(s) · ctrl+f or enter fetches them · esc closes")
        else:
            self.status("no hits in Europe PMC")

    @on(DataTable.RowSelected, "#fetch-hits")
    def row_selected(self, _event: DataTable.RowSelected) -> None:
        self.action_fetch_hits()

    def action_fetch_hits(self) -> None:
        if self.running or not self.hits:
            return
        self._begin()
        self.status(f"fetching {len(self.hits)} paper(s)… (esc cancels)")
        self.fetch_worker([], list(self.hits))

    # -- fetching ----------------------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="fetch")
    def fetch_worker(self, idents: list[Any], hits: list[Any]) -> None:
        from evtui.fetch import client_for, download, held, lookup, store

        lib = self.library
        worker = get_current_worker()
        t0 = time.perf_counter()

        def stopping() -> bool:
            return self._stop.is_set() or worker.is_cancelled

        try:
            client = client_for(lib.config)
            with self.app.db_lock:  # type: ignore[attr-defined]  # the store's connection is a search's meanwhile
                reader = lib.store.cursor()
            skipped: list[dict[str, str]] = []
            if idents:
                idents, skipped = held(lib, idents, reader)
                hits, more = lookup(client, idents, cancelled=stopping)
                skipped += more
            total = len(hits) + len(skipped)
            done = len(skipped)
            self.post_message(FetchLanded(done, total, [], skipped))
            with self.app.library_writer():  # type: ignore[attr-defined]
                for i in range(0, len(hits), CHUNK):
                    if stopping():
                        break
                    files, out = download(lib, client, hits[i:i + CHUNK], cancelled=stopping, reader=reader)
                    store(lib, files, out, reader=reader)
                    done += len(hits[i:i + CHUNK])
                    self.post_message(FetchLanded(done, total, out.fetched, out.skipped))
        except Exception as exc:  # noqa: BLE001 - offline, refused, a disk full: said in the dialog
            self.post_message(FetchFailed(str(exc)))
            return
        self.post_message(FetchDone(stopping(), time.perf_counter() - t0))

    def on_fetch_landed(self, msg: FetchLanded) -> None:
        self.query_one("#fetch-bar", RunBar).update(total=msg.total or None, progress=msg.done)
        self.landed += len(msg.fetched)
        if msg.fetched:
            self.app.post_message(LibraryChanged())  # searchable now: the search screen's lists refresh
        last = msg.fetched[-1]["title"] if msg.fetched else ""
        self.status(Text(f"{msg.done}/{msg.total} · {self.landed} added" + (f" · {plain(last)[:60]}" if last else "")
                         + " · esc cancels"))
        for s in msg.skipped:  # the first few said one by one, the rest counted (a search's 20 hits: not 20 toasts)
            if self.skipped < 3:
                self.app.notify(f"{s['id']}: {s['reason']}", title="Not fetched", timeout=8)
            self.skipped += 1

    def on_fetch_done(self, msg: FetchDone) -> None:
        self.running = False
        word = "cancelled" if msg.cancelled else "done"
        self.query_one("#fetch-bar", RunBar).finish(msg.seconds, word, complete=not msg.cancelled)
        skipped = f", {self.skipped} not fetched (the notes say why)" if self.skipped else ""
        self.status(f"{self.landed} paper(s) added from Europe PMC{skipped}" +
                    (" (cancelled: those stay)" if msg.cancelled else "") + " · esc closes")

    def on_fetch_failed(self, msg: FetchFailed) -> None:
        self.running = False
        self.query_one("#fetch-bar", RunBar).fail()
        self.status(Text(msg.reason, style="red"))

    def action_close(self) -> None:
        if self.running:
            self._stop.set()
            self.status("cancelling after the papers under way…")
            return
        self.dismiss(self.landed)
