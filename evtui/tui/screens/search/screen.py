"""The Search screen: query bar, editable aspect chips, filters, ranked results with highlights, detail pane.

Its parts are mixins over SearchBase (common.py): header, searching, results, detail and judging; this module holds
the keys, the widgets, and the actions that are the screen's own (select, copy, open a paper or its page)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.coordinate import Coordinate
from textual.timer import Timer
from textual.widgets import Header, Input, Label, Select, Static

from evtui.models import SECTION_KINDS, Evidence
from evtui.tui.base import failure_text
from evtui.tui.data import browser_available, quoted
from evtui.tui.screens.search.common import FIRST_K, _methods
from evtui.tui.screens.search.detail import SearchDetail
from evtui.tui.screens.search.header import SearchHeader
from evtui.tui.screens.search.judging import SearchJudging
from evtui.tui.screens.search.results import SearchResults
from evtui.tui.screens.search.searching import SearchRequests
from evtui.tui.widgets import AspectBar, PagedTable, TextPane
from evtui.tui.widgets.keybar import KeyBar
from evtui.tui.widgets.oneline import OneLineInput

if TYPE_CHECKING:
    from evtui.search import SearchResult


class SearchScreen(SearchHeader, SearchRequests, SearchResults, SearchDetail, SearchJudging):
    FAILURE_TIMEOUT = 8
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False, id="search.down"),
        Binding("k", "cursor_up", "Up", show=False, id="search.up"),
        # In the order the key bar drops them from its end when a narrow terminal has no room for all.
        Binding("space", "toggle_select", "Select", id="search.select",
                tooltip="Select the sentence as evidence for this question (✓), or deselect it; a dim ◦ marks one "
                        "selected for another question only, which space leaves selected there"),
        Binding("o", "open_paper", "Open paper", id="search.open"),
        Binding("d", "toggle_detail", "Detail", id="search.detail"),
        Binding("s", "judge", "Judge", id="search.judge"),
        Binding("v", "stance_filter", "Stance", id="search.stance"),
        Binding("g", "group_papers", "By paper", id="search.group"),
        Binding("c", "claim_verdicts", "Claim verdicts", id="search.verdicts"),
        Binding("f", "focus_filters", "Filters", id="search.filters"),
        Binding("a", "focus_aspects", "Aspects", id="search.aspects"),
        Binding("r", "results_only", "Results only", id="search.results_only"),
        Binding("m", "next_method", "Next method", show=False, id="search.method"),
        Binding("escape", "close_detail", "Close detail", show=False, id="search.close_detail"),
        Binding("y", "copy", "Copy", id="search.copy"),
        Binding("u", "open_link", "Open DOI/PubMed", id="search.link"),
        Binding("ctrl+g", "look_further", "Look further in Europe PMC", show=False, id="search.europepmc"),
        Binding("up", "history(-1)", "Earlier query", show=False, id="search.history_back"),
        Binding("down", "history(1)", "Later query", show=False, id="search.history_forward"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.result: SearchResult | None = None
        self.search_k = FIRST_K
        self.judgments: dict[str, Any] = {}
        self.judge_pending: set[str] = set()
        self.detail_row: int | None = None  # the row the detail pane shows (it follows the cursor once it rests)
        self._chips_text = ""  # the query text the chips were parsed from
        self._parse_timer: Timer | None = None
        self._searching = False
        self._rendered_width = 0
        self._rendered_short = False  # whether the rows were folded for a short terminal (SHORT)
        self._detail_timer: Timer | None = None
        self.detail_wanted: bool | None = None  # None: the detail pane shows when the terminal is wide enough
        self.filters_open = False  # on a narrow terminal the filter row shows only after `f`
        self.stance: str | None = None  # show only rows whose verdict has this stance
        self.grouped = False  # rows grouped by paper
        self.kept: list[Evidence] = []  # the result's rows that mention the query's concepts (evtui.honest)
        self.partly: dict[str, frozenset[str]] = {}  # ... and the concepts each names only in part
        self.rows: list[Evidence] = []  # what the table shows: `kept`, filtered by stance, maybe grouped
        self.group_heads: set[str] = set()  # sentence ids that open a paper's group
        self.honest_notes: list[str] = []
        self.search_notes = ""  # the last search's notes, as the notes line shows them
        self.notes_text = ""  # everything the notes line says, and whether it had to cut it (the side pane has it)
        self.notes_cut = False
        self.judge_failure: str | None = None  # why the automatic judge gave these rows no verdicts
        self.generation = 0  # counts fresh searches: a worker of an earlier one reports nothing to this one
        self._more = False  # the running search fetches more rows of the shown query
        self._resume_focus: Any = None
        self._history_at: int | None = None  # where ↑/↓ are in the query history (None: the text being typed)
        self.library_empty = False  # the library holds no paper (refresh_papers)
        self._submitted = ""  # the query bar's text when the running search was asked for
        self._typed = ""

    def compose(self) -> ComposeResult:
        methods, default = _methods()
        yield Header()
        with Horizontal(id="query-row"):
            yield OneLineInput(placeholder="hypothesis, claim, or (head, relation, tail) — enter searches", id="query")
            yield Label("", id="mode")
        yield AspectBar(id="chips")
        with Horizontal(id="controls"):
            yield Select([(k, k) for k in SECTION_KINDS], prompt="any section", id="section")
            yield Select([(m, m) for m in methods], value=default if default in methods else methods[0],
                         id="method", allow_blank=False)
            yield Input(placeholder="paper id", id="paper")
            yield Input(placeholder="from year", id="year-from", type="integer", max_length=4)
            yield Input(placeholder="to year", id="year-to", type="integer", max_length=4)
            judge = getattr(self.evtui.config, "judge", "local")
            yield Select([("judge: local", "local"), ("judge: llm", "llm")],
                         value=judge if judge in ("local", "llm") else "local", id="judge", allow_blank=False)
        yield Static("opening the library…", id="status")
        yield Static("", id="notes")  # what the search changed or could not find, wrapped: never cut at the edge
        yield Static("", id="verdicts")
        with Horizontal(id="main"):
            yield PagedTable(id="results", cursor_type="row", zebra_stripes=True)
            yield TextPane(id="detail")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#main").display = False
        self.apply_layout()
        if self.evtui.library is not None:
            self.library_ready(self.evtui.status_note)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "close_detail":  # Esc closes the detail pane only where it covers the results
            return self.has_class("narrow") and self.query_one(TextPane).display
        if action == "history":  # ↑/↓ walk the query history only in the query bar
            return self.focused is self.query_one("#query", Input)
        return True

    def action_copy(self) -> None:
        """The sentence with its citation to the clipboard (OSC 52: works over ssh where the terminal allows)."""
        e = self.current_evidence()
        view = self.evtui.view
        if e is None or view is None:
            self.notify("search first, then copy a result", title="Copy", severity="warning")
            return
        self.app.copy_to_clipboard(quoted(e.sentence.text, view.store.paper(e.sentence.paper_id),
                                          e.sentence.paper_id))
        self.notify("sentence and citation copied (OSC 52: the terminal must allow it)", title="Copy", timeout=3)

    def action_open_link(self) -> None:
        """The paper's DOI, PubMed or PMC page in the browser."""
        e = self.current_evidence()
        view = self.evtui.view
        paper = view.store.paper(e.sentence.paper_id) if e is not None and view is not None else None
        if paper is None:
            self.notify("search first, then open a result's paper page", title="Link", severity="warning")
            return
        pmid = paper.pmid or (paper.id.partition(":")[2] if paper.id.upper().startswith("PMID:") else None)
        url = (f"https://doi.org/{paper.doi}" if paper.doi else
               f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/" if pmid else
               f"https://www.ncbi.nlm.nih.gov/pmc/articles/{paper.pmcid}/" if paper.pmcid else None)
        if url is None:
            self.notify(f"{paper.id} has no DOI, PMID or PMC id", title="Link", severity="warning")
            return
        if not browser_available():  # a server over SSH: open_url did nothing while "Opening …" was said
            self.app.copy_to_clipboard(url)
            self.notify(f"no web browser here: {url} (copied to the clipboard through the terminal, OSC 52)",
                        title="Link", timeout=15)
            return
        self.app.open_url(url)
        self.notify(url, title="Opening", timeout=4)

    def action_toggle_select(self) -> None:
        app = self.evtui
        table = self.query_one(PagedTable)
        e = self.current_evidence()
        if e is None or self.result is None or app.basket is None:
            return
        # On the UI thread, so every screen sees the basket at once; the switch to read-write waits at most for
        # one running search or one chunk of the automatic judge (its model loads outside the lock).
        try:
            now = app.basket.toggle(e, self.result.query, self.result.method)
        except Exception as exc:  # noqa: BLE001 - the database can refuse (disk full, read-only, a reader)
            # failure_text: a full disk or a read-only home in the CLI's words, not DuckDB's TransactionContext Error
            self.notify(f"cannot change the selection: {failure_text(exc)}", title="Select", severity="error")
            return
        n = len(app.selected_ids())
        elsewhere = not now and e.sentence.id in self.selection_marks()[1]
        table.update_cell_at(Coordinate(table.cursor_row, 0), self.rank_cell(e, now, elsewhere))
        unsaved = app.selection_note()
        # one count on screen, the latest: a toast per pick stacked over the results
        app.notify_replacing("sentence(s) selected · e to export",
                             f"{n} sentence(s) selected · e to export" + (f" ({unsaved})" if unsaved else ""),
                             timeout=4 if unsaved else 2)

    def action_claim_verdicts(self) -> None:
        """The query verified paper by paper: which papers support it, which refute it, which only mention it."""
        query = self.result.query.text if self.result is not None else self.current_query()
        text = query if isinstance(query, str) else query.text
        if not text.strip():
            self.notify("type a claim first, then c for the papers' verdicts", title="Verify", severity="warning")
            return
        from evtui.tui.screens.verdicts import VerdictsScreen

        self.app.push_screen(VerdictsScreen(text))

    def action_open_paper(self) -> None:
        e = self.current_evidence()
        if e is None or self.result is None:
            self.notify("search first, then open a result's paper", title="Reader", severity="warning")
            return
        from evtui.tui.screens.reader import ReaderScreen

        hits = [x for x in self.result.evidence if x.sentence.paper_id == e.sentence.paper_id]
        verdicts = {x.sentence.id: j for x in hits if (j := self.judgments.get(x.sentence.id)) is not None
                    and getattr(j, "status", "ok") == "ok"}
        self.app.push_screen(ReaderScreen(e.sentence.paper_id, self.result.query, self.result.method, hits,
                                          focus=e.sentence.id, verdicts=verdicts))

    def palette_changed(self) -> None:
        self.query_one(AspectBar).refresh(layout=True)
        if self.result is not None:
            self.render_results(keep_row=self.query_one(PagedTable).cursor_row)
            self.schedule_detail(self.query_one(PagedTable).cursor_row)

    def on_screen_suspend(self) -> None:
        self._resume_focus = self.focused  # Export, Library, Bench or a dialog opens over this screen

    def on_screen_resume(self) -> None:
        self.refresh_selection_marks()
        self.call_after_refresh(self.restore_focus)

    def restore_focus(self) -> None:
        """Back from another screen or a dialog: focus where it was (the results, visibly, by default)."""
        table = self.query_one(PagedTable)
        target = self._resume_focus
        if target is None or not target.is_attached or not target.display or not target.focusable:
            target = table if table.display and table.row_count else self.query_one("#query", Input)
        target.focus()
        if target is table and table.row_count:
            table.move_cursor(row=table.cursor_row, animate=False, scroll=True)
