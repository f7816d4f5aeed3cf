"""The Library screen: the papers with their counts and sources; find one by title or id (`f`); add files or
folders, or papers from Europe PMC (`g`); remove a paper; embed the library for dense / hybrid search in the background (`m`, cancel with `c`),
searches running meanwhile."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Header, Input, Static
from textual.worker import get_current_worker

from evtui.library import IngestProgress
from evtui.models import Paper
from evtui.sources import read_note, source_label
from evtui.tui.base import EvtuiScreen, WorkCancelled
from evtui.tui.data import flow, short
from evtui.tui.messages import (
    EmbedFinished,
    EmbedProgress,
    IngestFinished,
    IngestStep,
    LibraryChanged,
    WorkFailed,
)
from evtui.tui.screens.modals import ConfirmScreen
from evtui.tui.suggest import PathSuggester
from evtui.tui.widgets import PagedTable
from evtui.tui.widgets.keybar import KeyBar
from evtui.tui.widgets.runbar import RunBar

# The table's columns fit the terminal: the title takes what the others leave, and on a narrow terminal the least
# useful columns go first (in this order) while the title would get fewer than TITLE_MIN columns (or a third).
DROP_ORDER = ("source", "format", "year", "sentences")
TITLE_MIN = 32
ASK_EMBED_SECONDS = 30.0  # `m` asks first when embedding would take longer (the demo: ~13 min)


def fit_columns(width: int, wanted: dict[str, int]) -> dict[str, int]:
    """Column widths for a table `width` columns wide (each column also takes 2 columns of cell padding): the
    `wanted` widths of the other columns, as many as leave the title enough room, and the title the rest."""
    keep = dict(wanted)
    title_min = max(TITLE_MIN, width // 3)

    def title_w() -> int:
        return width - sum(w + 2 for w in keep.values()) - 2

    for name in DROP_ORDER:
        if title_w() >= title_min:
            break
        keep.pop(name, None)
    order = ("id", "year", "title", "sentences", "format", "source")
    widths = {**keep, "title": max(10, title_w())}
    return {name: widths[name] for name in order if name in widths}


def embed_summary(msg: EmbedFinished, papers_done: int, papers_total: int) -> str:
    """What an embedding run did, in both its phases: the papers' title + abstract vectors, then the sentences (a
    run cancelled among the papers has embedded no sentence yet, and says how many papers it kept)."""
    papers = f"{papers_done:,} paper{'s' * (papers_done != 1)}" if papers_total else ""
    if msg.cancelled:
        kept = (f"{papers_done:,} of {papers_total:,} papers" if msg.total == 0 and papers_total else
                f"{msg.embedded:,} of {msg.total:,} sentences" + (f" and {papers}" if papers else ""))
        return f"embedding cancelled: {kept} kept ({msg.seconds:.0f}s); m resumes"
    if msg.total == 0:
        return (f"embedded {papers} in {msg.seconds:.0f}s; every sentence already has an embedding" if papers else
                "every sentence already has an embedding")
    return f"embedded {msg.embedded:,} sentences" + (f" and {papers}" if papers else "") + f" in {msg.seconds:.0f}s"


def paper_matches(p: Paper, words: list[str]) -> bool:
    """Every word of the find box in the paper's id or title (case-insensitive)."""
    hay = f"{p.id} {p.title}".lower()
    return all(w in hay for w in words)


class LibraryScreen(EvtuiScreen):
    BINDINGS = [
        Binding("f", "find", "Find paper", id="library.find"),
        Binding("escape", "clear_find", "Clear the find box", show=False, id="library.clear_find"),
        Binding("a", "focus_path", "Add papers", id="library.add"),
        Binding("x,delete", "remove", "Remove paper", id="library.remove"),
        # enter on a row opens it too (the table's own enter selects the row: papers_row_selected)
        Binding("o,enter", "open_paper", "Open paper", id="library.open"),
        Binding("j", "cursor_down", "Down", show=False, id="library.down"),
        Binding("k", "cursor_up", "Up", show=False, id="library.up"),
        Binding("m", "embed", "Embed library", id="library.embed"),
        Binding("c", "cancel_embed", "Cancel embedding", id="library.cancel_embed"),
        Binding("ctrl+r", "reload", "Reload", id="library.reload"),
        Binding("z", "next_collection", "Collection", id="library.collection"),
        # not in the key bar (full at 140 columns: Bench would fall off its end); the add field's hint names it
        Binding("g", "fetch", "Get papers from Europe PMC", show=False, id="library.fetch"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.ingesting = False
        self.embedding = False
        self._stop_embedding = threading.Event()
        self._embed_papers = (0, 0)  # (done, total) of the papers phase of the running or last embedding
        self.collection: str | None = None  # a Zotero collection to list only, or None for every paper
        self.collections: list[str] = []
        self.papers: list[Paper] = []  # the listed papers (a collection's, or all), before the find box
        self.infos: dict[str, dict[str, object]] = {}
        self.shown: list[Paper] = []  # ... and those the find box lets through, as the table has them
        self._stats: list[Text] = []  # the totals line's parts (action_reload), laid out to the width by fill_table
        self._laid_out = (-1, "")  # the table width and find text the rows were laid out for
        self._wanted: dict[str, int] = {}  # the widths the columns other than the title would like

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="library-stats")
        with Horizontal(id="add-row"):
            yield Input(placeholder="file or folder to add (→ completes) · g: from Europe PMC", id="add-path",
                        suggester=PathSuggester())
            yield Input(placeholder="find: title or id (f)", id="find")
        with Vertical(id="ingest-row"):
            yield RunBar(id="ingest-bar", show_eta=True)
            yield Static(id="ingest-text")
        yield PagedTable(id="papers", cursor_type="row", zebra_stripes=True)
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#ingest-row").display = False
        self.action_reload()
        lib = self.evtui.library
        # an empty library: focus where the user acts, the field that adds files (unless it cannot be written)
        empty = not self.papers and self.collection is None and not (lib is not None and lib.read_only)
        self.query_one("#add-path" if empty else "#papers").focus()

    # -- listing -----------------------------------------------------------------------------------
    def action_reload(self) -> None:
        view = self.evtui.view
        if view is None:
            return
        papers = view.store.papers()
        stats = view.store.stats()
        infos = view.store.paper_infos()  # how PDFs were read, "no full text" entries, Zotero collections
        self.collections = sorted({str(c) for i in infos.values() for c in (i.get("collections") or [])})
        if self.collection is not None and self.collection not in self.collections:
            self.collection = None
        if self.collection is not None:
            papers = [p for p in papers if self.collection in (infos.get(p.id, {}).get("collections") or [])]
        formats = [f"{k} {v:,}" for k, v in stats["formats"].items()]  # type: ignore[attr-defined]
        # one part per figure, laid out by fill_table so that a name never ends a line without its count
        parts = [Text(f"{stats['papers']:,} papers · {stats['sentences']:,} sentences", style="bold")]
        parts += [Text(f + ("," if i < len(formats) - 1 else ""), style="dim") for i, f in enumerate(formats)] or \
            [Text("empty: add files or folders below", style="dim")]
        if self.collections:
            n = len(papers)
            parts.append(Text(f"collection: {self.collection} ({n:,} paper{'s' * (n != 1)}) · z next"
                              if self.collection else f"{len(self.collections)} collection(s) · z to list one",
                              style="cyan"))
        self._stats = parts
        self.papers = papers
        self.infos = infos
        # the other columns as wide as their longest cell over every listed paper (not only the matches: the
        # columns stay put while the find box narrows the rows), within caps
        self._wanted = {
            "id": max(2, min(24, max((len(p.id) for p in papers), default=2))),
            "year": 4,
            "sentences": 9,
            "format": max(6, min(12, max((len(source_label(p, infos.get(p.id))) for p in papers), default=6))),
            "source": max(6, min(24, max((len(self.source_text(p)) for p in papers), default=6))),
        }
        self.fill_table(force=True)

    def source_text(self, p: Paper) -> str:
        return read_note(self.infos.get(p.id)) or os.path.basename(p.source_path)

    def fill_table(self, *, force: bool = False) -> None:
        """The papers the find box lets through, in columns that fit the table's width (again when either
        changes); the cursor stays on its paper while that is still listed."""
        table: PagedTable[Paper] = self.query_one("#papers", PagedTable)
        # the width beside the scrollbar (its gutter is kept: the columns need not change as rows come and go)
        width = table.scrollable_content_region.width if table.size.width else max(40, self.app.size.width - 2)
        find = self.query_one("#find", Input).value
        if not force and self._laid_out == (width, find):
            return
        self._laid_out = (width, find)
        words = find.lower().split()
        self.shown = [p for p in self.papers if paper_matches(p, words)] if words else list(self.papers)
        parts = list(self._stats)
        if words:
            n = len(self.shown)
            parts.append(Text(f"{n:,} of {len(self.papers):,} match “{find.strip()}”" if n else
                              f"no paper matches “{find.strip()}” (esc clears)", style="bold yellow"))
        # three spaces between the groups (totals, formats, collection, find), ", " ends each format but the last
        seps = [" " if i > 1 and p.style == "dim" else "   " for i, p in enumerate(parts[1:], 1)]
        box = self.query_one("#library-stats", Static)
        box.update(flow(parts, box.content_region.width or max(20, self.app.size.width - 4), seps))
        current = table.item_at_cursor()
        at = next((i for i, p in enumerate(self.shown) if current is not None and p.id == current.id), None)
        # a paper no longer listed: after a removal (force) the one that took its row, after a find the first
        keep = min(at if at is not None else table.cursor_row if force else 0, max(0, len(self.shown) - 1))
        infos = self.infos
        widths = fit_columns(width, self._wanted)
        table.clear(columns=True)
        for name, w in widths.items():
            table.add_column(name, key=name, width=w)

        def row(p: Paper) -> tuple[list[object], str, int | None]:
            cells: dict[str, object] = {
                "id": short(p.id, widths["id"]),
                "year": str(p.year or ""),
                "title": short(p.title, widths["title"]),
                "sentences": Text(f"{p.n_sentences:>9,}"),
                "format": short(source_label(p, infos.get(p.id)), widths.get("format", 12)),
                "source": Text(short(self.source_text(p), widths.get("source", 24)), style="dim"),
            }
            return [cells[name] for name in widths], p.id, 1

        table.load(self.shown, row, upto=keep)
        if self.shown:
            table.move_cursor(row=keep, animate=False)

    @on(PagedTable.WidthChanged, "#papers")
    def papers_width_changed(self) -> None:
        self.fill_table()

    # -- finding a paper ---------------------------------------------------------------------------
    def action_find(self) -> None:
        self.query_one("#find", Input).focus()

    @on(Input.Changed, "#find")
    def find_changed(self) -> None:
        self.fill_table()

    @on(Input.Submitted, "#find")
    def find_submitted(self) -> None:
        self.query_one("#papers", PagedTable).focus()  # o opens the match under the cursor

    def action_clear_find(self) -> None:
        if self.query_one("#add-path", Input).has_focus:  # out of the field (its text kept), as from a filter field
            self.query_one("#papers", PagedTable).focus()
            return
        find = self.query_one("#find", Input)
        find.value = ""
        self.fill_table()
        self.query_one("#papers", PagedTable).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_find":  # esc leaves the add field, empties the find box; then it goes back to search
            find = self.query_one("#find", Input)
            return bool(find.value) or find.has_focus or self.query_one("#add-path", Input).has_focus
        if action == "cancel_embed":  # in the key bar only while there is something to cancel: at 80 columns its
            return self.embedding  # place shows `z` and `^r`
        return True

    def action_next_collection(self) -> None:
        """List one Zotero collection's papers at a time: every paper → each collection in turn → every paper."""
        if not self.collections:
            self.notify("no collections in this library (they come with `evtui ingest --zotero`)", title="Library")
            return
        order: list[str | None] = [None, *self.collections]
        self.collection = order[(order.index(self.collection) + 1) % len(order)]
        self.action_reload()

    def cursor_list(self) -> PagedTable[Paper]:
        return self.query_one("#papers", PagedTable)

    def selected_paper(self) -> Paper | None:
        table: PagedTable[Paper] = self.query_one("#papers", PagedTable)
        return table.item_at_cursor()

    @on(PagedTable.RowSelected, "#papers")
    def papers_row_selected(self, event: PagedTable.RowSelected) -> None:
        event.stop()
        self.action_open_paper()  # enter or a click on the chosen row: the paper, as `o`

    def action_open_paper(self) -> None:
        p = self.selected_paper()
        if p is None:
            return
        from evtui.tui.screens.reader import ReaderScreen

        self.app.push_screen(ReaderScreen(p.id))

    def refused_read_only(self, what: str, title: str = "Library") -> bool:
        """On a read-only library, say at once that `what` cannot be done (rather than after a dialog or a path)."""
        lib = self.evtui.library
        if lib is None or not lib.read_only:
            return False
        why = getattr(lib, "why", "")
        self.notify(f"cannot {what}: the library is open read-only{f' ({why})' if why else ''}; searching, reading, "
                    "selecting and exporting still work", title=title, severity="warning")
        return True

    # -- adding ------------------------------------------------------------------------------------
    def action_focus_path(self) -> None:
        if self.refused_read_only("add papers"):
            return
        self.query_one("#add-path", Input).focus()

    def action_fetch(self) -> None:
        """Papers from Europe PMC by DOI / PMID / PMCID or a search (evtui/tui/screens/fetch.py)."""
        if self.refused_read_only("add papers"):
            return
        from evtui.tui.screens.fetch import FetchScreen

        self.app.push_screen(FetchScreen(), lambda landed: self.action_reload() if landed else None)

    @on(Input.Submitted, "#add-path")
    def add(self, event: Input.Submitted) -> None:
        raw = event.value.strip()
        if not raw:
            self.notify("type a file or folder to add", title="Library", severity="warning")
            return
        path = Path(raw).expanduser()
        if not path.exists():
            self.notify(f"{path} does not exist", title="Library", severity="error")
            return
        if self.refused_read_only("add papers"):
            return
        if self.ingesting:
            self.notify("an ingest is already running", title="Library", severity="warning")
            return
        self.ingesting = True
        self.query_one("#ingest-row").display = True
        self.query_one("#ingest-bar", RunBar).start()
        self.query_one("#ingest-text", Static).update(f"reading {path.name}…")
        # the list takes the keys while it reads: a letter meant for it (f, x, l back here) is not typed in the path
        self.query_one("#papers", PagedTable).focus()
        self.ingest_worker(path)

    @work(thread=True, exclusive=True, group="ingest")
    def ingest_worker(self, path: Path) -> None:
        app = self.evtui
        assert app.library is not None
        worker = get_current_worker()

        def progress(p: IngestProgress) -> None:
            if worker.is_cancelled:  # the app is closing: stop at this step (stored papers stay, a re-run adds the rest)
                raise WorkCancelled
            self.post_message(IngestStep(p))

        with self.failures("Ingest"):
            # Not under db_lock: the ingest writes through its own connection and the index writer, so searches
            # keep running on the last committed state while it works.
            try:
                with app.library_writer():
                    # share: read-write only while a batch is stored, so `evtui stats` / `search` in another
                    # terminal read the library between batches instead of waiting out the whole ingest
                    report = app.library.ingest([path], on_progress=progress, share=True)
            except WorkCancelled:
                return
            self.post_message(IngestFinished(report))

    def on_ingest_step(self, msg: IngestStep) -> None:
        bar = self.query_one("#ingest-bar", RunBar)
        bar.update(total=msg.files_total or None, progress=msg.files_done)
        name = short(os.path.basename(msg.current), 40)
        self.query_one("#ingest-text", Static).update(
            Text(f"file {msg.files_done}/{msg.files_total} · {msg.papers_seen:,} papers · {name}"))

    def on_ingest_finished(self, msg: IngestFinished) -> None:
        self.ingesting = False
        r = msg.report
        # all files failed, or some: not a plain "done" (the reasons follow as notifications)
        self.query_one("#ingest-bar", RunBar).finish(r.seconds, note=f"{len(r.errors)} not loaded" if r.errors else "")
        same = f", {r.same_paper} already stored under another id" if r.same_paper else ""
        summary = (f"{r.added} added, {r.replaced} replaced, {r.unchanged} unchanged{same} · {r.sentences:,} sentences "
                   f"from {r.files} file(s) in {r.seconds:.1f}s")
        self.query_one("#ingest-text", Static).update(summary)
        self.notify(summary, title="Ingest", severity="warning" if r.errors else "information")
        for note in r.same_paper_notes[:3]:  # the paper is already there under another id, or may be (its title)
            self.notify(note.split(": ", 1)[-1], title=os.path.basename(note.split(": ", 1)[0]), timeout=10)
        for e in r.errors[:5]:
            self.notify(f"{os.path.basename(e.path)}: {e.reason}", title="Not loaded", severity="error", timeout=10)
        if len(r.errors) > 5:
            self.notify(f"… and {len(r.errors) - 5} more file(s) not loaded", title="Not loaded", severity="error")
        self.query_one("#add-path", Input).value = ""
        self.action_reload()
        self.evtui.post_message(LibraryChanged())

    def work_failed(self, msg: WorkFailed) -> None:
        self.ingesting = False
        if msg.what == "Embed":
            self.embedding = False
            self.refresh_bindings()
        self.query_one("#ingest-bar", RunBar).fail()
        self.query_one("#ingest-text", Static).update(Text(msg.reason, style="red"))

    # -- embedding ---------------------------------------------------------------------------------
    def action_embed(self) -> None:
        if self.refused_read_only("embed the library", "Embed"):
            return
        if self.embedding:
            self.notify("already embedding: `c` cancels", title="Embed", severity="warning")
            return
        from evtui.embed import missing_packages

        if missing_packages():
            self.notify(f"dense search needs {', '.join(missing_packages())}: pip install -e .", title="Embed",
                        severity="error")
            return
        view = self.evtui.view
        if view is None:
            return
        from evtui.bench.estimate import duration
        from evtui.paper_vectors import pending

        with self.evtui.db_gate:  # a count: well under a second on the demo
            papers, sentences, seconds = pending(view.store.con)
        if seconds < ASK_EMBED_SECONDS:  # nothing or little to do: at once
            self.start_embedding()
            return
        body = Text()
        body.append(f"{papers:,} papers and {sentences:,} sentences have no embedding yet: about "
                    f"{duration(seconds)} (rough) of this machine's CPU.\n", style="bold")
        body.append("Searches go on meanwhile; dense and hybrid use the embeddings as they land. c cancels at once "
                    "(what is stored stays), m later resumes.")

        def go(yes: bool | None) -> None:
            if yes:
                self.start_embedding()

        self.app.push_screen(ConfirmScreen("Embed the whole library?", body, yes="Embed"), go)

    def start_embedding(self) -> None:
        if self.embedding:
            return
        self.embedding = True
        self.refresh_bindings()
        self._stop_embedding.clear()
        self._embed_papers = (0, 0)
        self.query_one("#ingest-row").display = True
        self.query_one("#ingest-bar", RunBar).start()
        self.query_one("#ingest-text", Static).update("finding the sentences without an embedding…")
        self.embed_worker()

    def action_cancel_embed(self) -> None:
        if self.embedding:
            self._stop_embedding.set()
            self.query_one("#ingest-text", Static).update("cancelling…")

    @work(thread=True, exclusive=True, group="embed")
    def embed_worker(self) -> None:
        from evtui.embed import EmbedStopped

        app = self.evtui
        assert app.library is not None
        t0 = time.perf_counter()
        seen = [0, 0]
        worker = get_current_worker()

        def stopping() -> bool:
            # `c`, or the app quitting (it cancels its workers, then waits for this thread: a run left going
            # would hold a quit for the minutes the rest of the library takes)
            return self._stop_embedding.is_set() or worker.is_cancelled

        def progress(done: int, total: int) -> None:
            seen[:] = [done, total]
            self.post_message(EmbedProgress(done, total))
            if stopping():
                raise WorkCancelled

        def papers(done: int, total: int) -> None:
            self._embed_papers = (done, total)
            self.post_message(EmbedProgress(done, total, "papers"))
            if stopping():
                raise WorkCancelled

        with self.failures("Embed", lambda exc: f"{type(exc).__name__}: {exc}"):
            try:
                # The library's writer connection, chunk by chunk: searches go on with what is embedded so far.
                with app.library_writer():
                    n = app.library.embed(on_progress=progress, on_papers=papers, stop=stopping)
            except (WorkCancelled, EmbedStopped):  # stopped between two batches: the chunks stored are kept
                self.post_message(EmbedFinished(seen[0], seen[1], True, time.perf_counter() - t0))
                return
            self.post_message(EmbedFinished(n, seen[1], False, time.perf_counter() - t0))

    def on_embed_progress(self, msg: EmbedProgress) -> None:
        self.query_one("#ingest-bar", RunBar).update(total=msg.total or None, progress=msg.done)
        self.query_one("#ingest-text", Static).update(
            f"embedding {msg.done:,}/{msg.total:,} papers (title + abstract, for best's paper channel; c cancels)"
            if msg.what == "papers" else
            f"embedding {msg.done:,}/{msg.total:,} sentences (dense and hybrid use them as they land; c cancels)")

    def on_embed_finished(self, msg: EmbedFinished) -> None:
        self.embedding = False
        self.refresh_bindings()
        text = embed_summary(msg, *self._embed_papers)
        if msg.cancelled:
            self.query_one("#ingest-bar", RunBar).finish(msg.seconds, "cancelled", complete=False)
        else:
            self.query_one("#ingest-bar", RunBar).finish(msg.seconds)
        self.query_one("#ingest-text", Static).update(text)
        self.notify(text, title="Embed")

    # -- removing ----------------------------------------------------------------------------------
    def action_remove(self) -> None:
        p = self.selected_paper()
        if p is None or self.refused_read_only(f"remove {p.id}"):
            return
        if self.ingesting:
            self.notify("wait for the ingest to finish", title="Library", severity="warning")
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.remove_worker(p.id)

        basket = self.evtui.basket
        picked = sum(sid.startswith(p.id + ":") for sid in basket.ids()) if basket is not None else 0
        body = Text.assemble((p.title + "\n", "bold"), (f"{p.id} · {p.n_sentences:,} sentences", "dim"),
                             "\n\nIts sentences leave the library and the index.",
                             (f" {picked:,} of them {'are' if picked != 1 else 'is'} in your selection: "
                              "they stay there as \"no longer in the library\"." if picked else ""))
        self.app.push_screen(ConfirmScreen("Remove this paper?", body, yes="Remove"), confirmed)

    @work(thread=True, exclusive=True, group="ingest")
    def remove_worker(self, paper_id: str) -> None:
        app = self.evtui
        assert app.library is not None
        with self.failures("Remove", lambda exc: f"cannot remove {paper_id}: {exc}"):
            n = app.library.remove([paper_id])  # the library's writer connection: searches need not wait
            self.app.call_from_thread(self.removed, paper_id, n)

    def removed(self, paper_id: str, n: int) -> None:
        self.notify(f"removed {paper_id}" if n else f"{paper_id} was already gone", title="Library")
        self.action_reload()
        self.evtui.post_message(LibraryChanged())
