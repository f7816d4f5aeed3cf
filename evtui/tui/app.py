"""The evtui terminal app: a thin Textual face over the same Library and Searcher the CLI uses."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.coordinate import Coordinate
from textual.message import Message
from textual.widgets import DataTable, Footer, Header, Input, LoadingIndicator, Select, Static

from evtui.config import Config, load_config
from evtui.errors import EvtuiError
from evtui.export import Basket, write_export
from evtui.library import IngestProgress, Library
from evtui.models import SECTION_KINDS
from evtui.render import aspect_chips, coverage_marker, highlight
from evtui.search import DEFAULT_METHOD, METHODS, Searcher, SearchResult


class LibraryReady(Message):
    def __init__(self, library: Library, note: str) -> None:
        super().__init__()
        self.library = library
        self.note = note


class LibraryFailed(Message):
    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


class IngestStep(Message):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class SearchDone(Message):
    def __init__(self, result: SearchResult, seconds: float) -> None:
        super().__init__()
        self.result = result
        self.seconds = seconds


class SearchFailed(Message):
    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


@dataclass
class Filters:
    section: str | None = None
    method: str = DEFAULT_METHOD


def _score_bar(score: float, best: float, width: int = 8) -> Text:
    frac = 0.0 if best <= 0 else max(0.0, min(1.0, score / best))
    full = int(round(frac * width))
    return Text("█" * full + "░" * (width - full), style="green") + Text(f" {score:5.1f}", style="dim")


class EvtuiApp(App[None]):
    TITLE = "evtui"
    SUB_TITLE = "evidence search"
    CSS = """
    #query { margin: 0 1; }
    #controls { height: 3; margin: 0 1; }
    #controls Select { width: 30; }
    #chips { height: auto; margin: 0 1; }
    #status { height: 1; margin: 0 1; color: $text-muted; }
    #main { height: 1fr; }
    #results { width: 3fr; }
    #detail { width: 2fr; border-left: solid $primary; padding: 0 1; }
    #loading-box { height: 1fr; align: center middle; }
    #loading-text { width: auto; margin: 1; }
    """
    BINDINGS = [
        Binding("slash", "focus_query", "Query", show=True),
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("space", "toggle_select", "Select", show=True),
        Binding("r", "results_only", "Results only", show=True),
        Binding("e", "export", "Export", show=True),
        Binding("question_mark", "help", "Help", show=True),
        Binding("q", "quit", "Quit", show=True),
    ]

    def __init__(self, config: Config | None = None) -> None:
        super().__init__()
        self.config = config or load_config()
        self.library: Library | None = None
        self.searcher: Searcher | None = None
        self.result: SearchResult | None = None
        self.basket: Basket | None = None  # the persisted selection (evtui.export)
        self.filters = Filters()
        self._db_lock = threading.Lock()  # one DuckDB connection: searches and context reads take turns

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder="hypothesis, claim, or (head, relation, tail) — enter to search", id="query")
        with Horizontal(id="controls"):
            yield Select([(k, k) for k in SECTION_KINDS], prompt="any section", id="section", allow_blank=True)
            yield Select([(m, m) for m in METHODS], value=DEFAULT_METHOD, id="method", allow_blank=False)
        yield Static(id="chips")
        yield Static("opening the library…", id="status")
        with Vertical(id="loading-box"):
            yield LoadingIndicator()
            yield Static("", id="loading-text")
        with Horizontal(id="main"):
            yield DataTable(id="results", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="detail"):
                yield Static("", id="detail-text")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#results", DataTable)
        table.add_columns("#", "score", "asp", "sentence", "paper · section")
        self.query_one("#main").display = False
        self.open_library()

    # -- library -----------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="library")
    def open_library(self) -> None:
        from evtui.demo import ensure_demo

        try:
            lib = Library(self.config)

            def progress(p: IngestProgress) -> None:
                self.post_message(IngestStep(
                    f"loading the demo library: file {p.files_done}/{p.files_total}, {p.papers_seen:,} papers"))

            report = ensure_demo(lib, progress)
        except EvtuiError as exc:
            self.post_message(LibraryFailed(str(exc)))
            return
        stats = lib.store.stats()
        note = f"{stats['papers']:,} papers · {stats['sentences']:,} sentences"
        if report is not None:
            note += f" (demo library loaded in {report.seconds:.1f}s)"
        self.post_message(LibraryReady(lib, note))

    def on_ingest_step(self, msg: IngestStep) -> None:
        self.query_one("#loading-text", Static).update(msg.text)

    def on_library_ready(self, msg: LibraryReady) -> None:
        self.library = msg.library
        self.searcher = Searcher(msg.library)
        with self._db_lock:
            self.basket = Basket(msg.library)
        self.query_one("#loading-box").display = False
        self.query_one("#main").display = True
        self.query_one("#status", Static).update(msg.note)
        self.query_one("#query", Input).focus()

    def on_library_failed(self, msg: LibraryFailed) -> None:
        self.query_one("#loading-box").display = False
        self.query_one("#status", Static).update(Text(f"cannot open the library: {msg.reason}", style="red"))
        self.notify(msg.reason, title="Library", severity="error", timeout=10)

    def on_unmount(self) -> None:
        if self.library is not None:
            self.library.close()

    # -- search ------------------------------------------------------------------------------------
    @on(Input.Submitted, "#query")
    def submit(self, event: Input.Submitted) -> None:
        self.run_search(event.value)

    @on(Select.Changed)
    def filters_changed(self, event: Select.Changed) -> None:
        if event.select.id == "section":
            self.filters.section = None if event.value is Select.BLANK else str(event.value)
        elif event.select.id == "method" and event.value is not Select.BLANK:
            self.filters.method = str(event.value)
        if self.result is not None:
            self.run_search(self.query_one("#query", Input).value)

    def run_search(self, text: str) -> None:
        if self.searcher is None:
            self.notify("the library is still opening", severity="warning")
            return
        if not text.strip():
            self.notify("type a hypothesis, a claim or a (head, relation, tail) triplet", severity="warning")
            return
        self.query_one("#status", Static).update("searching…")
        self.search_worker(text, self.filters.section, self.filters.method)

    @work(thread=True, exclusive=True, group="search")
    def search_worker(self, text: str, section: str | None, method: str) -> None:
        import time

        assert self.searcher is not None
        t0 = time.perf_counter()
        try:
            with self._db_lock:
                result = self.searcher.search(text, k=max(self.config.k, 50), section=section, method=method)
        except EvtuiError as exc:
            self.post_message(SearchFailed(str(exc)))
            return
        self.post_message(SearchDone(result, time.perf_counter() - t0))

    def on_search_failed(self, msg: SearchFailed) -> None:
        self.query_one("#status", Static).update(Text(msg.reason, style="red"))
        self.notify(msg.reason, title="Query", severity="error")

    def on_search_done(self, msg: SearchDone) -> None:
        self.result = msg.result
        aspects = msg.result.query.aspects
        self.query_one("#chips", Static).update(
            Text.assemble((f"{msg.result.query.mode} ", "bold"), aspect_chips(aspects)))
        table = self.query_one("#results", DataTable)
        table.clear()
        best = max((e.score for e in msg.result.evidence), default=1.0)
        selected = set(self.selected_ids())
        for e in msg.result.evidence:
            mark = "✓ " if e.sentence.id in selected else ""
            table.add_row(
                Text(f"{mark}{e.rank}"), _score_bar(e.score, best), coverage_marker(e.highlights, aspects),
                highlight(e.sentence.text, e.highlights, aspects),
                Text(f"{e.sentence.paper_id} · {e.sentence.section_title or e.sentence.section_kind}", style="cyan"),
                key=e.sentence.id, height=None,
            )
        n = len(msg.result.evidence)
        notes = "; ".join(n for n in msg.result.notes if not n.startswith("mode detected"))
        self.query_one("#status", Static).update(
            f"{n} sentences · {msg.result.method} · {msg.seconds * 1000:.0f} ms" + (f" · {notes}" if notes else ""))
        if n:
            table.focus()
            self.show_detail(0)
        else:
            self.query_one("#detail-text", Static).update("no matching sentences")

    @on(DataTable.RowHighlighted, "#results")
    def row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show_detail(event.cursor_row)

    def show_detail(self, row: int) -> None:
        if self.result is None or not (0 <= row < len(self.result.evidence)) or self.library is None:
            return
        e = self.result.evidence[row]
        aspects = self.result.query.aspects
        with self._db_lock:
            context = self.library.store.context(e.sentence.id, window=2)
            paper = self.library.store.paper(e.sentence.paper_id)
        out = Text()
        if paper is not None:
            out.append(paper.title + "\n", style="bold")
            authors = ", ".join(paper.authors[:3]) + (" et al." if len(paper.authors) > 3 else "")
            meta = " · ".join(x for x in (authors, paper.journal or "", str(paper.year or "")) if x)
            if meta:
                out.append(meta + "\n", style="italic")
            ids = " · ".join(x for x in (f"doi:{paper.doi}" if paper.doi else "", f"PMID {paper.pmid}" if paper.pmid else "",
                                         paper.pmcid or "") if x)
            out.append((ids or paper.id) + "\n", style="dim")
        out.append(f"\n{e.sentence.section_title or e.sentence.section_kind}\n", style="bold cyan")
        from evtui.query import compile_matcher

        matcher = compile_matcher(aspects)
        for s in context:
            if s.id == e.sentence.id:
                out.append_text(highlight(s.text, matcher.spans(s.text), aspects))
            else:
                out.append(s.text, style="dim")
            out.append("\n")
        covered = {h.aspect for h in e.highlights}
        out.append("\naspects: ", style="bold")
        out.append_text(coverage_marker(e.highlights, aspects))
        out.append(f"  {len(covered)}/{len(aspects)} covered · BM25 {e.score:.2f}\n", style="dim")
        self.query_one("#detail-text", Static).update(out)

    # -- actions -----------------------------------------------------------------------------------
    def action_focus_query(self) -> None:
        self.query_one("#query", Input).focus()

    def action_cursor_down(self) -> None:
        self.query_one("#results", DataTable).action_cursor_down()

    def action_cursor_up(self) -> None:
        self.query_one("#results", DataTable).action_cursor_up()

    def action_results_only(self) -> None:
        sel = self.query_one("#section", Select)
        sel.value = Select.BLANK if sel.value == "results" else "results"

    def selected_ids(self) -> list[str]:
        if self.basket is None:
            return []
        with self._db_lock:
            return self.basket.ids()

    def action_toggle_select(self) -> None:
        table = self.query_one("#results", DataTable)
        if self.result is None or not self.result.evidence or self.focused is not table or self.basket is None:
            return
        e = self.result.evidence[table.cursor_row]
        with self._db_lock:
            now = self.basket.toggle(e, self.result.query, self.result.method)
            n = len(self.basket.ids())
        table.update_cell_at(Coordinate(table.cursor_row, 0), Text(("✓ " if now else "") + str(e.rank)))
        self.notify(f"{n} sentence(s) selected", timeout=2)

    def action_export(self) -> None:
        if self.library is None:
            return
        from pathlib import Path

        out = Path(self.config.export_path).expanduser()
        try:
            with self._db_lock:
                n = write_export(self.library, out, "md")
        except EvtuiError as exc:
            self.notify(str(exc), title="Export", severity="warning")
            return
        self.notify(f"wrote {n} sentence(s) to {out}", title="Export")

    def action_help(self) -> None:
        lines = [f"{b.key:>14}  {b.description}" for b in self.BINDINGS if isinstance(b, Binding)]
        self.notify("\n".join(["enter  search", *lines]), title="Keys", timeout=8)


def run(config: Config | None = None) -> None:
    EvtuiApp(config).run()
