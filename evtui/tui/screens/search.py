"""The Search screen: query bar, editable aspect chips, filters, ranked results with highlights, detail pane."""

from __future__ import annotations

from contextlib import nullcontext
from functools import partial
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.coordinate import Coordinate
from textual.message import Message
from textual.suggester import SuggestFromList
from textual.timer import Timer
from textual.widgets import DataTable, Header, Input, Label, Select, Static
from textual.worker import get_current_worker

from evtui.errors import EvtuiError, QueryError
from evtui.export import display_names
from evtui.methods import needs_embeddings
from evtui.models import SECTION_KINDS, Aspect, Evidence, ParsedQuery
from evtui.render import coverage_marker, highlight
from evtui.request import NO_FILTERS, Filters, SearchRequest
from evtui.tui.base import EvtuiScreen, failure_reason, failure_text
from evtui.tui.data import (
    EMPTY_LIBRARY,
    browser_available,
    judge_cell,
    judge_lines,
    light_theme,
    quoted,
    short,
)
from evtui.tui.messages import JudgeDone, JudgeEstimate, JudgeScored, SearchDone, WorkFailed
from evtui.tui.screens.modals import AspectEditScreen, ConfirmScreen
from evtui.tui.widgets import AspectBar, PagedTable, TextPane
from evtui.tui.widgets.keybar import KeyBar
from evtui.tui.widgets.oneline import OneLineInput

if TYPE_CHECKING:
    from evtui.search import SearchResult

FIRST_K = 50  # a search asks for this many (or config.k, if larger) ...
MAX_K = 1000  # ... and fetches more, doubling, when the cursor reaches the last row
DETAIL_DELAY = 0.06  # seconds the cursor rests before the detail pane follows it
NARROW = 110  # below this width the detail pane hides until `d` (the sentence column keeps 40+ columns)
STANCE_CYCLE: tuple[str | None, ...] = (None, "supports", "refutes", "neutral")
NOTES_LINES = 3  # rows of the notes line at most (app.tcss #notes); longer ones end "… (all in the side pane: d)"
# Below this height (24 rows) the header folds (no aspect chips, one notes row) and each result takes two rows at
# most, the rest of its sentence cut with "…" (the detail pane, d, has it whole): 80×24 showed three results.
SHORT = 30
SHORT_ROW_LINES = 2
AUTO_CHUNK = 8  # the automatic local judge posts its verdicts this many at a time (a new search cancels it)


class AutoVerdicts(Message):
    """Verdicts of the automatic local judge (or cached ones) for the query they were made for."""

    def __init__(self, query: str, judgments: list[Any], done: bool = False, *, generation: int = 0,
                 ids: frozenset[str] = frozenset()) -> None:
        super().__init__()
        self.query = query
        self.judgments = judgments
        self.done = done
        self.generation = generation  # the search it belongs to (SearchScreen.generation)
        self.ids = ids  # with done: the rows this worker was asked to judge (no longer pending, verdict or not)


def _methods() -> tuple[tuple[str, ...], str]:
    """The Searcher's methods as the registry has them now (never a copy)."""
    from evtui import methods

    return methods.search_methods(), methods.DEFAULT_METHOD


def derive_terms(label: str, role: str, abbreviations: dict[str, str] | None = None) -> list[str]:
    from evtui.query import concept_variants, relation_terms

    return relation_terms(label) if role == "relation" else concept_variants(label, abbreviations)


FEW_HITS = 3  # fewer matching sentences than this: the app offers a look in Europe PMC (ctrl+g)


class SearchScreen(EvtuiScreen):
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

    def status(self, text: str | Text) -> None:
        self.query_one("#status", Static).update(text, layout=False)  # one line, always

    def show_notes(self, notes: str) -> None:
        """The search's notes on their own line below the status (two at most, wrapped), so that at 80 columns
        "mentioned only in part: …" is read in full rather than cut after its first words; hidden when there are
        none."""
        self.search_notes = notes
        self.refresh_notes()

    def refresh_notes(self) -> None:
        """The notes line: the search's notes, and why the table is empty when a stance filter hides every row (at
        80 columns the detail pane that also says so is closed)."""
        parts = [self.search_notes] if self.search_notes else []
        if self.judge_failure and self.result is not None:
            parts.insert(0, self.judge_failure)  # first: the line shows two rows at most
        if self.stance is not None and self.result is not None and self.kept and not self.rows:
            parts.append(f"no judged result is {self.stance} (v shows the next stance)")
        box = self.query_one("#notes", Static)
        self.notes_text = "; ".join(parts)
        box.update(self.fit_notes(self.notes_text, box.size.width or max(20, self.app.size.width - 4)))
        box.display = bool(parts)

    def fit_notes(self, notes: str, width: int) -> Text:
        """The notes as the notes line shows them: whole when they wrap to NOTES_LINES rows, else cut between two
        words with a pointer to the side pane, which has them all (its height used to cut them mid-phrase, so that
        "mentioned only in part: “Vitamin" ended the line)."""
        self.notes_cut = False
        text = Text(notes, style="yellow")
        lines = text.wrap(self.app.console, width)
        # one row on a short terminal while results need the room; all of them when they say why there are none
        most = 1 if self.has_class("short") and self.result is not None and self.rows else NOTES_LINES
        if len(lines) <= most:
            return text
        self.notes_cut = True
        more = " … (all in the side pane: d)"
        words = " ".join(line.plain.strip() for line in lines[:most]).split(" ")
        while words and len(Text(" ".join(words) + more).wrap(self.app.console, width)) > most:
            words.pop()
        # back to the end of the last clause a few words back, rather than leave "… risk”; 9 …"
        end = next((i for i in range(len(words) - 1, max(-1, len(words) - 8), -1) if words[i].endswith((";", ","))),
                   len(words) - 1)
        return Text(" ".join(words[:end + 1]).rstrip(";,:") + more, style="yellow")

    # -- the library -------------------------------------------------------------------------------
    def library_ready(self, note: str) -> None:
        self.query_one("#main").display = True
        self.status(note)
        self.refresh_papers()
        self.query_one("#query", Input).focus()

    def refresh_papers(self) -> None:
        view = self.evtui.view
        if view is None:
            return
        ids = [p.id for p in view.store.papers()]
        self.query_one("#paper", Input).suggester = SuggestFromList(ids, case_sensitive=True)
        self.library_empty = not ids
        if self.result is None and self.search_notes in ("", EMPTY_LIBRARY):
            # a first launch without the demo: say how to fill the library rather than show a blank screen
            self.show_notes(EMPTY_LIBRARY if self.library_empty else "")
        elif not self.library_empty and EMPTY_LIBRARY in self.search_notes:  # papers added since that search
            self.show_notes("; ".join(x for x in self.search_notes.split("; ") if x != EMPTY_LIBRARY))

    # -- the query and its aspects -----------------------------------------------------------------
    @on(Input.Changed, "#query")
    def query_changed(self, event: Input.Changed) -> None:
        if self._parse_timer is not None:
            self._parse_timer.stop()
        self._parse_timer = self.set_timer(0.25, self.parse_live)

    def parse_live(self) -> None:
        """Show the detected mode and the aspects while the user types (parsing is cheap and local)."""
        app = self.evtui
        text = self.query_one("#query", Input).value
        bar = self.query_one(AspectBar)
        if app.searcher is None or text == self._chips_text:
            return
        self._chips_text = text
        try:
            parsed = app.searcher.parse(text)
        except EvtuiError:
            bar.clear()
            self.show_mode("")
            return
        self.show_mode(parsed.mode)
        bar.set_aspects(parsed.aspects, parsed.mode)

    def show_mode(self, mode: str) -> None:
        label = self.query_one("#mode", Label)
        if str(label.content) != mode:
            label.update(Text(mode, style="bold"), layout=False)  # a fixed-width slot

    def action_focus_aspects(self) -> None:
        self.parse_live()
        bar = self.query_one(AspectBar)
        if not bar.aspects:
            self.notify("type a query first: its aspects appear as chips", title="Aspects", severity="warning")
            return
        bar.focus()

    @on(AspectBar.EditRequested)
    def edit_aspect(self, event: AspectBar.EditRequested) -> None:
        bar = event.bar
        abbreviations = self.evtui.abbreviations()
        current = bar.aspects[event.index] if event.index >= 0 else Aspect(bar.new_id(), "", [], "concept")

        def done(aspect: Aspect | None) -> None:
            if aspect is not None:
                bar.replace(event.index, aspect)

        self.app.push_screen(AspectEditScreen(current, lambda label, role: derive_terms(label, role, abbreviations)),
                             done)

    @on(AspectBar.Changed)
    def aspects_changed(self) -> None:
        # the keys that search from where the user is: enter in the chips edits the aspect under the cursor
        self.status("aspects edited · s searches with them" if self.query_one(AspectBar).has_focus
                    else "aspects edited · enter in the query bar searches with them")

    @on(AspectBar.SearchRequested)
    def search_aspects(self) -> None:
        self.run_search()

    def current_query(self) -> str | ParsedQuery:
        """The edited aspects when the user changed them for this text, else the text itself."""
        text = self.query_one("#query", Input).value
        bar = self.query_one(AspectBar)
        if bar.edited and bar.aspects and text == self._chips_text:
            return ParsedQuery(text=text.strip(), mode=bar.mode, aspects=list(bar.aspects),
                               notes=["aspects edited by hand"])
        return text

    # -- searching ---------------------------------------------------------------------------------
    @on(Input.Submitted, "#query")
    def submit(self) -> None:
        self._history_at = None
        self.evtui.ui_state.remember_query(self.query_one("#query", Input).value)
        self.run_search()

    @on(Input.Submitted, "#paper, #year-from, #year-to")
    def filter_submitted(self) -> None:
        self.run_search()

    @on(Select.Changed, "#section, #method")
    def filters_changed(self) -> None:
        if self.result is not None:
            self.run_search()

    def selected_method(self) -> str:
        return str(self.query_one("#method", Select).value)

    def filters(self) -> Filters:
        section = self.query_one("#section", Select).value
        paper = self.query_one("#paper", Input).value.strip() or None
        years: list[int | None] = []
        for wid in ("#year-from", "#year-to"):
            raw = self.query_one(wid, Input).value.strip()
            if raw and not raw.lstrip("-").isdigit():
                raise QueryError(f"a year is a whole number, not {raw!r}")
            years.append(int(raw) if raw else None)
        if years[0] is not None and years[1] is not None and years[0] > years[1]:
            raise QueryError(f"the year range {years[0]}–{years[1]} is empty")
        return Filters(paper, None if section is Select.NULL else str(section), years[0], years[1])

    def run_search(self, *, more: bool = False) -> None:
        app = self.evtui
        if app.searcher is None:
            self.notify("the library is still opening", severity="warning")
            return
        query: str | ParsedQuery
        keep_row = 0
        if more and self.result is not None:
            query = self.result.query
            self.search_k = min(MAX_K, self.search_k * 2)
            keep_row = self.query_one(PagedTable).cursor_row
        else:
            query = self.current_query()
            self.search_k = max(app.config.k, FIRST_K)
            if isinstance(query, str) and not query.strip():
                self.notify("type a hypothesis, a claim or a (head, relation, tail) triplet", title="Query",
                            severity="warning")
                return
        try:
            request = SearchRequest(query, k=self.search_k, method=self.selected_method(), filters=self.filters())
            paper = request.filters.paper
            if paper and app.view is not None and app.view.store.paper(paper) is None:
                raise QueryError(f"unknown paper {paper!r} (l lists the papers and their ids)")
        except QueryError as exc:
            self.notify(str(exc), title="Filters", severity="error")
            if not more:  # the results on screen are not this request's
                self.clear_results(str(exc))
            return
        self._searching = True
        self._more = more
        self._submitted = self.query_one("#query", Input).value
        self.status("loading more…" if more else "searching…")
        self.search_worker(request, keep_row)

    @work(thread=True, exclusive=True, group="search")
    def search_worker(self, request: SearchRequest, keep_row: int) -> None:
        app = self.evtui
        assert app.searcher is not None
        t0 = app.clock()
        # dense and hybrid embed candidates as they go: a write, so DuckDB is read-write for them
        writes = app.library is not None and needs_embeddings(str(request.method or ""))
        what = "loading more results" if keep_row else f"the {request.method} search"
        with self.failures("Query", lambda exc: f"{what} failed: {failure_reason(exc)}"):
            try:
                with app.library.rw() if writes and app.library is not None else nullcontext(), app.db_lock:
                    result = app.searcher.run(request)
            except Exception:
                if get_current_worker().is_cancelled:
                    return  # a newer search replaced this one: its failure is no news
                raise
            if not get_current_worker().is_cancelled:
                self.post_message(SearchDone(result, app.clock() - t0, keep_row))

    def on_work_failed(self, msg: WorkFailed) -> None:
        """(Textual then runs EvtuiScreen.on_work_failed too, which notifies, unless this prevents it.)"""
        if msg.what == "Judge" and self.result is not None and msg.reason == self.judge_failure:
            msg.prevent_default()  # the same failure for more rows of this query: the notes line says it already

    def work_failed(self, msg: WorkFailed) -> None:
        if msg.what == "Query":
            self._searching = False
            if self._more and self.result is not None:
                self.status(Text(msg.reason, style="red"))  # the rows shown are still the query's
            else:
                self.clear_results(msg.reason)
        elif msg.what == "Judge" and self.result is not None:
            self.judge_failure = msg.reason  # said once in the notes line: the toast goes, the empty cells stay
            self.refresh_notes()

    def clear_results(self, reason: str) -> None:
        """A search failed or was refused: nothing of the previous query stays on screen to be read as this one's
        results (rows, verdicts, notes); the status line says what failed and why, on one line."""
        self.workers.cancel_group(self, "auto-judge")
        self.generation += 1
        self.result = None
        self.evtui.result = None
        self.kept, self.rows, self.partly, self.honest_notes = [], [], {}, []
        self.group_heads = set()
        self.judgments.clear()
        self.judge_pending.clear()
        self.judge_failure = None
        self.stance = None
        self.detail_row = None
        if self._detail_timer is not None:
            self._detail_timer.stop()
        self.query_one(PagedTable).reset()
        self.query_one(TextPane).show(Text(reason, style="red"))
        self.status(Text(reason, style="red"))
        self.show_notes("")  # the last search's notes are not this query's
        what, sep, why = reason.partition(": ")
        if sep and len(reason) > self.size.width - 4:
            # too long for the status line (80 columns, the side pane closed): what failed there, why below it,
            # wrapped on the notes line rather than cut at the edge
            self.status(Text(f"{what}:", style="red"))
            notes = self.query_one("#notes", Static)
            notes.update(Text(why, style="red"))
            notes.display = True
        self.update_verdicts()

    def action_look_further(self) -> None:
        """The query, as a Europe PMC search (evtui/tui/screens/fetch.py): papers the library lacks."""
        lib = self.evtui.library
        if lib is None or lib.read_only:
            self.notify("the library is read-only here: nothing can be added", title="Europe PMC", severity="warning")
            return
        from evtui.tui.screens.fetch import FetchScreen

        self.app.push_screen(FetchScreen(self.query_one("#query", Input).value.strip()))

    def on_search_done(self, msg: SearchDone) -> None:
        self._searching = False
        same = self.result is not None and self.result.query.text == msg.result.query.text and msg.keep_row
        self.result = msg.result
        self.evtui.result = msg.result
        if not same:
            self.judgments.clear()
            self.judge_pending.clear()
            self.judge_failure = None
            self.stance = None
            self.workers.cancel_group(self, "auto-judge")
            self.generation += 1
        parsed = msg.result.query
        bar = self.query_one(AspectBar)
        if self.query_one("#query", Input).value == self._submitted:  # else the chips are the text typed since
            self._chips_text = self._submitted
            bar.set_aspects(parsed.aspects, parsed.mode,
                            edited=bar.edited and "aspects edited by hand" in parsed.notes)
            self.show_mode(parsed.mode)
        from evtui.honest import honest

        checked = honest(msg.result.evidence, parsed.aspects, msg.result.method)
        self.kept = checked.evidence
        self.partly = checked.partly
        self.honest_notes = checked.notes
        self.render_results(keep_row=msg.keep_row)
        n = len(msg.result.evidence)
        # no hit at all: why, on the notes line (at 80 columns the side pane that also says it is folded away)
        nothing = [] if n else [EMPTY_LIBRARY if self.library_empty else "no matching sentences"]
        notes = "; ".join(x for x in [*nothing, *msg.result.notes, *checked.notes]
                          if not x.startswith("mode detected") and "edited" not in x)
        more = " · ↓ more at the end" if n >= self.search_k and self.search_k < MAX_K else ""
        shown = f"{len(self.kept)} of {n}" if len(self.kept) != n else f"{n}"
        self.status(f"{shown} sentences · {msg.result.method} · {msg.seconds * 1000:.0f} ms{more}")
        self.show_notes(notes)
        if n < FEW_HITS and not self.library_empty:  # the library may simply lack the papers: say where to look
            self.notify(f"{n} matching sentence{'s' * (n != 1)} in your library: ctrl+g looks further in Europe PMC",
                        title="Few hits", timeout=6)
        table = self.query_one(PagedTable)
        query = self.query_one("#query", Input)
        # the user typing the next query meanwhile keeps the query bar: moved to the results, the rest of their
        # typing ran as keys (space selected, e opened Export)
        take_focus = not msg.keep_row and not (self.focused is query and query.value != self._submitted)
        if self.rows:
            if take_focus:
                table.focus()
            self.schedule_detail(table.cursor_row)  # after the rows are on screen
        else:
            self.query_one(TextPane).show(checked.notes[0] if checked.notes and n else
                                          (nothing or ["no matching sentences"])[0])
            if take_focus:
                table.focus()
        self.auto_judge()

    def render_results(self, *, keep_row: int = 0) -> None:
        if self.result is None:
            return
        table: PagedTable[Evidence] = self.query_one(PagedTable)
        aspects = self.result.query.aspects
        self.rows = self.display_rows()
        selected, elsewhere = self.selection_marks()
        width = table.size.width or (self.app.size.width if self.app.size.width < NARROW
                                     else max(60, self.app.size.width * 2 // 3))
        self._rendered_width = table.size.width
        folded = self._rendered_short = self.has_class("short")
        # The rank only: rows are in the method's selection order, which is not score order; the score is in
        # the detail pane with what it means.
        fixed = {"#": 4, "judge": 5, "asp": max(3, len(aspects))}
        sentence_w = max(40, width - sum(fixed.values()) - 2 * (len(fixed) + 1) - 2)
        table.clear(columns=True)
        for name, w in fixed.items():
            table.add_column(name, key=name, width=w)
        table.add_column("sentence · paper · section", key="sentence", width=sentence_w)
        console = self.app.console
        light = light_theme(self.app)

        def row(e: Evidence) -> tuple[list[Any], str, int | None]:
            sid = e.sentence.id
            text = Text()
            if sid in self.group_heads:
                text.append_text(self.paper_head(e.sentence.paper_id, e.title, sentence_w))
                text.append("\n")
            text.append_text(highlight(e.sentence.text, e.highlights, aspects, mono=self.app.no_color,
                                       light=light))
            where = f"{short(e.title or e.sentence.paper_id, max(10, sentence_w - 24))} · " \
                    f"{short(e.sentence.section_title or e.sentence.section_kind, 20)}"
            if (sid not in self.group_heads or not self.grouped) and not folded:
                text.append("\n" + where, style="dim cyan")
            # the height from wrapping the sentence here: the table need not render every cell to measure it
            lines = text.wrap(console, sentence_w)
            height = len(lines)
            if folded and height > SHORT_ROW_LINES:  # two rows, the rest of the sentence in the detail pane
                last = lines[SHORT_ROW_LINES - 1]
                last.rstrip()
                if last.cell_len >= sentence_w:
                    last.right_crop(1)
                last.append("…")
                text = Text("\n").join(lines[:SHORT_ROW_LINES])
                height = SHORT_ROW_LINES
            return ([
                self.rank_cell(e, sid in selected, sid in elsewhere),
                judge_cell(self.judgments.get(sid), sid in self.judge_pending, light=light),
                coverage_marker(e.highlights, aspects, self.partly.get(sid, ()), light=light), text,
            ], sid, height)

        table.load(self.rows, row, upto=keep_row)
        self.update_verdicts()
        self.refresh_notes()
        if keep_row:
            table.move_cursor(row=min(keep_row, max(0, len(self.rows) - 1)), animate=False)

    # -- verdicts at a glance ----------------------------------------------------------------------
    def display_rows(self) -> list[Evidence]:
        """`kept`, with only the chosen stance, grouped by paper (papers in the order of their best row)."""
        rows = list(self.kept)
        if self.stance is not None:
            rows = [e for e in rows if getattr(self.judgments.get(e.sentence.id), "stance", None) == self.stance
                    and getattr(self.judgments.get(e.sentence.id), "status", "ok") == "ok"]
        self.group_heads = set()
        if self.grouped:
            order: dict[str, list[Evidence]] = {}
            for e in rows:
                order.setdefault(e.sentence.paper_id, []).append(e)
            rows = [e for group in order.values() for e in group]
            self.group_heads = {group[0].sentence.id for group in order.values()}
        return rows

    def paper_verdict(self, paper_id: str) -> tuple[dict[str, int], int | None]:
        """Stance counts and the best judge score among this paper's judged rows."""
        counts = {"supports": 0, "refutes": 0, "neutral": 0}
        best: int | None = None
        for e in self.kept:
            j = self.judgments.get(e.sentence.id)
            if e.sentence.paper_id != paper_id or j is None or getattr(j, "status", "ok") != "ok":
                continue
            counts[j.stance] = counts.get(j.stance, 0) + 1
            best = max(best or 0, int(j.score))
        return counts, best

    def paper_head(self, paper_id: str, title: str, width: int) -> Text:
        counts, best = self.paper_verdict(paper_id)
        n = sum(1 for e in self.kept if e.sentence.paper_id == paper_id)
        verdict = f"  {n} hit(s) · ▲{counts['supports']} ▼{counts['refutes']} ●{counts['neutral']}" + \
            (f" · best {best}" if best is not None else "")
        out = Text("▌ ", style="bold cyan")
        # the title gives up what the verdict needs: at 80 columns a fixed cut left "best" and its score on two lines
        out.append(short(title or paper_id, max(10, width - 2 - len(verdict))), style="bold cyan")
        out.append(verdict, style="dim")
        return out

    def update_verdicts(self) -> None:
        """The verdict bar: stance counts over the shown results' verdicts, papers, filter and grouping."""
        counts = {"supports": 0, "refutes": 0, "neutral": 0}
        for e in self.kept:
            j = self.judgments.get(e.sentence.id)
            if j is not None and getattr(j, "status", "ok") == "ok":
                counts[j.stance] = counts.get(j.stance, 0) + 1
        out = self._verdict_bar(counts, compact=False)
        if len(out.plain) > self.size.width - 4:  # 80 columns with a filter on: the words go, the numbers stay
            out = self._verdict_bar(counts, compact=True)
        if self.has_class("narrow") and not self.filters_open:
            try:
                active = self.filters() != NO_FILTERS
            except Exception:  # noqa: BLE001 - a half-typed year: shown when the row opens
                active = False
            if active:
                out.append(" · filters on (f)", style="bold yellow")
        self.query_one("#verdicts", Static).update(out, layout=False)

    def _verdict_bar(self, counts: dict[str, int], compact: bool) -> Text:
        out = Text()
        if self.result is None or not self.kept:
            return out
        words = ("", "", "") if compact else (" support", " refute", " neutral")
        out.append(f"▲ {counts['supports']}{words[0]}", style="green")
        out.append(" · ")
        out.append(f"▼ {counts['refutes']}{words[1]}", style="red")
        out.append(" · ")
        out.append(f"● {counts['neutral']}{words[2]}", style="grey62")
        papers = len({e.sentence.paper_id for e in self.kept})
        out.append(f" · {papers} paper{'s' if papers != 1 else ''}")
        pending = sum(1 for e in self.kept if e.sentence.id in self.judge_pending)
        if pending:
            out.append(f" · judging {pending}…", style="dim")
        if self.stance is not None:
            out.append(f" · {'' if compact else 'showing '}{self.stance} only ({len(self.rows)}; v: next)",
                       style="bold yellow")
        if self.grouped:
            out.append(" · by paper (g)", style="bold")
        return out

    def action_stance_filter(self) -> None:
        if self.result is None:
            return
        self.stance = STANCE_CYCLE[(STANCE_CYCLE.index(self.stance) + 1) % len(STANCE_CYCLE)]
        self.render_results()
        if self.stance is not None and not self.rows:
            self.query_one(TextPane).show(f"no judged result is {self.stance} (v shows the next stance)")
        self.schedule_detail(self.query_one(PagedTable).cursor_row)

    def action_group_papers(self) -> None:
        if self.result is None:
            return
        self.grouped = not self.grouped
        self.render_results()
        self.schedule_detail(self.query_one(PagedTable).cursor_row)

    # -- layout ------------------------------------------------------------------------------------
    def apply_layout(self) -> None:
        """Narrow terminals (80×24 up): the detail pane hides until `d`, and then takes the whole width."""
        narrow = self.app.size.width < NARROW
        self.set_class(narrow, "narrow")
        self.set_class(self.app.size.height < SHORT, "short")
        show = self.detail_wanted if self.detail_wanted is not None else not narrow
        detail = self.query_one(TextPane)
        table = self.query_one(PagedTable)
        controls = self.query_one("#controls")
        controls.display = not narrow or self.filters_open
        if not controls.display and self.focused is not None and self.focused.parent is controls:
            table.focus()
        detail.display = show
        table.display = not (narrow and show)
        if narrow and show and table.has_focus:
            detail.focus()
        elif not table.display and not detail.display:
            table.display = True

    def action_toggle_detail(self) -> None:
        narrow = self.app.size.width < NARROW
        shown = self.detail_wanted if self.detail_wanted is not None else not narrow
        self.detail_wanted = not shown
        self.apply_layout()
        table = self.query_one(PagedTable)
        if self.detail_wanted:
            self.show_detail(table.cursor_row)
        elif table.display and self.focused is self.query_one(TextPane):
            table.focus()

    def action_close_detail(self) -> None:
        self.detail_wanted = False
        self.apply_layout()
        self.query_one(PagedTable).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "close_detail":  # Esc closes the detail pane only where it covers the results
            return self.has_class("narrow") and self.query_one(TextPane).display
        if action == "history":  # ↑/↓ walk the query history only in the query bar
            return self.focused is self.query_one("#query", Input)
        return True

    def action_history(self, step: int) -> None:
        """↑ the previous query (persisted between runs), ↓ back towards what was being typed."""
        history = self.evtui.ui_state.history()
        query = self.query_one("#query", Input)
        if not history:
            return
        if self._history_at is None:
            if step > 0:
                return
            self._typed = query.value
            at = len(history) - 1
        else:
            at = self._history_at + step
        if at >= len(history):
            self._history_at = None
            query.value = self._typed
        else:
            self._history_at = max(0, at)
            query.value = history[self._history_at]
        query.cursor_position = len(query.value)

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

    @staticmethod
    def rank_cell(e: Evidence, selected: bool, elsewhere: bool = False) -> Text:
        """The rank, after ✓ when the sentence is selected for this question, or a dim ◦ when it is selected for
        another question only (space selects it for this one too)."""
        if selected:
            return Text(f"✓{e.rank:>3}", style="bold green")
        if elsewhere:
            return Text.assemble(("◦", "dim green"), f"{e.rank:>3}")
        return Text(f" {e.rank:>3}")

    def selection_marks(self) -> tuple[set[str], set[str]]:
        """The sentence ids selected for the shown question, and those selected for another question only."""
        basket = self.evtui.basket
        if basket is None or self.result is None:
            return set(), set()
        query = self.result.query.text
        here: set[str] = set()
        other: set[str] = set()
        for sid, q in basket.keys():
            (here if q == query else other).add(sid)
        return here, other - here

    def on_resize(self) -> None:
        self.apply_layout()
        if self.result is not None and self.result.evidence:
            self.call_after_refresh(self._rerender_if_resized)

    @on(PagedTable.WidthChanged, "#results")
    def results_width_changed(self) -> None:
        """The rows are wrapped to the table's width: re-wrap them whenever it changes, whatever changed it (the
        terminal's size, or `d` opening or closing the side pane, which leaves the screen's size as it was)."""
        if self.result is not None and self.result.evidence:
            self.call_after_refresh(self._rerender_if_resized)

    def _rerender_if_resized(self) -> None:
        table = self.query_one(PagedTable)
        if table.size.width and (table.size.width != self._rendered_width or
                                 self.has_class("short") != self._rendered_short):
            self.render_results(keep_row=table.cursor_row)

    @on(PagedTable.RowsAdded, "#results")
    def results_rows_added(self) -> None:
        """Rows rendered as the cursor or the scroll neared the end get their verdicts too (and the bar says
        "judging N…" until they arrive), not only those rendered with the search."""
        if self.result is not None:
            self.auto_judge()

    @on(DataTable.RowHighlighted, "#results")
    def row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        # The detail pane follows once the cursor rests: holding j moves the cursor at key-repeat speed.
        self.schedule_detail(event.cursor_row)
        if self.result is not None and event.cursor_row >= self.query_one(PagedTable).row_count - 1:
            self.auto_judge()  # the rows just rendered get their verdicts too
        if (self.result is not None and event.cursor_row == len(self.rows) - 1
                and len(self.result.evidence) >= self.search_k and self.search_k < MAX_K and not self._searching):
            self.run_search(more=True)

    def schedule_detail(self, row: int) -> None:
        if self._detail_timer is not None:
            self._detail_timer.stop()
        self._detail_timer = self.set_timer(DETAIL_DELAY, partial(self.show_detail, row))

    def show_detail(self, row: int) -> None:
        app = self.evtui
        if self.result is None or not (0 <= row < len(self.rows)) or app.view is None or app.searcher is None:
            return
        e = self.rows[row]
        aspects = self.result.query.aspects
        # The library may be mid-switch to read-write (a Bench sweep storing items, a selection): try again in a
        # moment rather than hold up the keys while it reopens. The gate is re-entrant: the view's read takes it too.
        if not app.db_gate.acquire(blocking=False):
            self.schedule_detail(row)
            return
        try:
            ctx = app.searcher.context(e.sentence.id, window=2, paper_id=e.sentence.paper_id, store=app.view.store)
        finally:
            app.db_gate.release()
        self.detail_row = row
        context, paper = ctx.sentences, ctx.paper
        out = Text()
        if paper is not None:
            out.append(paper.title + "\n", style="bold")
            authors = display_names(paper.authors, 3)  # "Family, Given" shown as "Given Family"
            meta = " · ".join(x for x in (authors, paper.journal or "", str(paper.year or "")) if x)
            if meta:
                out.append(meta + "\n", style="italic")
            ids = " · ".join(x for x in (f"doi:{paper.doi}" if paper.doi else "",
                                         f"PMID {paper.pmid}" if paper.pmid else "", paper.pmcid or "") if x)
            out.append((ids or paper.id) + "\n", style="dim")
        out.append(f"\n{e.sentence.section_title or e.sentence.section_kind}\n", style="bold cyan")
        from evtui.query import compile_matcher

        matcher = compile_matcher(aspects)
        for s in context or [e.sentence]:
            if s.id == e.sentence.id:
                out.append_text(highlight(s.text, matcher.spans(s.text), aspects, mono=self.app.no_color,
                                                light=light_theme(self.app)))
            else:
                out.append(s.text, style="dim")
            out.append("\n")
        covered = {h.aspect for h in e.highlights}
        out.append("\naspects ", style="bold")
        out.append_text(coverage_marker(e.highlights, aspects, self.partly.get(e.sentence.id, ()),
                                        light=light_theme(self.app)))
        out.append(f"  {len(covered)}/{len(aspects)} covered\n", style="dim")
        out.append(f"rank #{e.rank} of {len(self.result.evidence)} · {self.result.method} score {e.score:.2f}\n",
                   style="dim")
        out.append("(the method's relevance estimate, higher is more relevant; rows are in its selection order, "
                   "which also rewards covering aspects the rows above missed)\n", style="dim italic")
        j = self.judgments.get(e.sentence.id)
        if j is not None:
            out.append("\n")
            out.append_text(judge_lines(j, light=light_theme(self.app)))
        elif e.sentence.id in self.judge_pending:
            out.append("\njudge: waiting for the verdict…\n", style="dim")
        if self.notes_cut:  # the notes line could not hold them all
            out.append("\nsearch notes\n", style="bold")
            out.append(self.notes_text + "\n", style="yellow")
        self.query_one(TextPane).show(out)

    # -- actions -----------------------------------------------------------------------------------
    def focus_query(self) -> None:
        query = self.query_one("#query", Input)
        # also where the screen's resume puts focus back (restore_focus runs after this when `/` came from another
        # screen): else it went back to the results, and the query typed next ran as keys (e: Export, l: Library)
        self._resume_focus = query
        query.focus()

    def cursor_list(self) -> PagedTable[Evidence]:
        return self.query_one(PagedTable)

    def action_results_only(self) -> None:
        sel = self.query_one("#section", Select)
        sel.value = Select.NULL if sel.value == "results" else "results"

    def action_next_method(self) -> None:
        """Cycle the ranking method (the list evtui.search has now); searches again when there are results."""
        methods, _default = _methods()
        sel = self.query_one("#method", Select)
        current = str(sel.value)
        sel.value = methods[(methods.index(current) + 1) % len(methods)] if current in methods else methods[0]
        # m changes what the ranks mean: say which method ranks now, and what it does (a 2 s "ranking method:
        # evidential" went unseen, and the results changed order for no visible reason)
        from evtui import methods as registry

        m = registry.lookup(str(sel.value))
        what = (m.help or m.description) if m is not None else ""
        again = "; searching again" if self.result is not None else ""
        self.notify(f"ranking method now {sel.value} (was {current}): {what}{again}. m: the next method",
                    title="Method", timeout=6)

    def action_focus_filters(self) -> None:
        if self.has_class("narrow"):  # the filter row folds away on a narrow terminal: f opens and closes it
            self.filters_open = not self.filters_open
            self.apply_layout()
            self.update_verdicts()
            if not self.filters_open:
                return
        self.query_one("#section", Select).focus()

    def current_evidence(self) -> Evidence | None:
        table: PagedTable[Evidence] = self.query_one(PagedTable)
        if self.result is None or not self.result.evidence:
            return None
        return table.item_at_cursor()

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

    def refresh_selection_marks(self) -> None:
        """After the basket changed elsewhere (reader, export screen): redraw the ✓ marks."""
        if self.result is None:
            return
        table: PagedTable[Evidence] = self.query_one(PagedTable)
        selected, elsewhere = self.selection_marks()
        for i, e in enumerate(self.rows[: table.row_count]):
            sid = e.sentence.id
            table.update_cell_at(Coordinate(i, 0), self.rank_cell(e, sid in selected, sid in elsewhere))

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

    # -- judging -----------------------------------------------------------------------------------
    def visible_evidence(self) -> list[Evidence]:
        """The results the table has rendered (what the user has in front of them)."""
        if self.result is None:
            return []
        return self.rows[: self.query_one(PagedTable).row_count]

    def action_judge(self) -> None:
        app = self.evtui
        evidence = self.visible_evidence()
        if self.result is None or not evidence or app.library is None:
            self.notify("search first: the judge scores the results in view", title="Judge", severity="warning")
            return
        service = app.judge_service()
        if service is None:
            self.notify("no judge is installed in this evtui (evtui.judge.service is missing)", title="Judge",
                        severity="error")
            return
        judge = str(self.query_one("#judge", Select).value)
        if judge == "llm":
            self.estimate_worker(self.result.query, evidence)
        else:
            self.start_judging(judge, evidence)

    @work(thread=True, exclusive=True, group="judge-estimate")
    def estimate_worker(self, parsed: ParsedQuery, evidence: list[Evidence]) -> None:
        app = self.evtui
        service = app.judge_service()
        assert service is not None and app.library is not None
        view = app.new_view()  # its own connection: no wait on a running search
        with self.failures("Judge", lambda exc: f"the LLM judge's estimate failed: {failure_reason(exc)}"):
            try:
                est = service.estimate(parsed, evidence, "llm", app.judge_model(), library=view,
                                       api_base=app.judge_setting("api_base"))
            finally:
                view.close()
            self.post_message(JudgeEstimate(est, len(evidence)))

    def on_judge_estimate(self, msg: JudgeEstimate) -> None:
        est = msg.estimate
        body = Text()
        body.append(f"{msg.n} sentence(s) · {est.model or 'no model'}\n")
        body.append(f"{est.calls} call(s), {est.cached} cached · ~{est.tokens_in:,} tokens in, "
                    f"~{est.tokens_out:,} out\n")
        body.append(f"estimated cost ~${est.cost:.4f}\n", style="bold")
        limit = self.evtui.judge_setting("max_cost")
        if limit is not None:
            body.append(f"limit ${float(limit):.4f}\n")
        for note in est.notes:
            body.append(f"{note}\n", style="dim")
        evidence = self.visible_evidence()

        def go(yes: bool | None) -> None:
            if yes:
                self.start_judging("llm", evidence)

        self.app.push_screen(ConfirmScreen("Judge with an LLM?", body, yes="Judge"), go)

    def start_judging(self, judge: str, evidence: list[Evidence]) -> None:
        if self.result is None:
            return
        # rows with no verdict of this judge (the automatic local verdicts do not stop an LLM run)
        todo = [e for e in evidence if getattr(self.judgments.get(e.sentence.id), "judge", None) != judge]
        if not todo:
            if judge == "local":  # say how to get more than the local verdicts
                model = self.evtui.judge_model()
                how = (f"choose \"judge: llm\" in the filter row (f) and press s again: {model} judges them"
                       if model else "set judge_model (a litellm model, e.g. EVTUI_JUDGE_MODEL=gpt-4o-mini) and "
                       "choose \"judge: llm\" in the filter row (f), then press s")
                self.notify(f"every result in view already has a local verdict; to ask an LLM, {how}", title="Judge",
                            timeout=10)
            else:
                self.notify("every result in view already has a verdict", title="Judge")
            return
        self.judge_pending.update(e.sentence.id for e in todo)
        if self.judge_failure:
            self.judge_failure = None  # a new try: its own failure, if any, takes the notes line
            self.refresh_notes()
        self.redraw_judge_cells()
        self.status(f"judging {len(todo)} sentence(s) with the {judge} judge…")
        self.judge_worker(judge, self.result.query, todo)

    @work(thread=True, exclusive=True, group="judge")
    def judge_worker(self, judge: str, parsed: ParsedQuery, evidence: list[Evidence]) -> None:
        app = self.evtui
        worker = get_current_worker()
        service = app.judge_service()
        assert service is not None and app.library is not None
        t0 = app.clock()

        def arrived(j: Any) -> None:
            self.post_message(JudgeScored(j))

        library = app.library
        rows: list[list[Any]] = []

        def store_rows() -> None:
            """The verdicts into the cache: DuckDB is read-only between the app's writes (Library.rw)."""
            if rows:
                from evtui.judge.cache import JudgmentCache

                with library.rw(), app.db_lock:
                    JudgmentCache(library.store.con, writable=False).insert_rows(rows)
                rows.clear()

        def sink(_table: str, new: list[list[Any]]) -> None:
            rows.extend(new)
            if judge == "llm":
                store_rows()  # each paid verdict as it arrives

        out: list[Any] = []  # none when the judge fails
        with self.failures("Judge", lambda exc: f"the {judge} judge failed (no verdicts): {failure_reason(exc)}"):
            if judge == "llm":
                # The LLM's network waits run on their own connection, so searching goes on meanwhile.
                view = app.new_view()
                try:
                    judged = service.judge_evidence(view, parsed, evidence, judge="llm", model=app.judge_model(),
                                                    api_base=app.judge_setting("api_base"),
                                                    max_cost=app.judge_setting("max_cost"), on_result=arrived,
                                                    sink=sink, cancelled=lambda: worker.is_cancelled)
                finally:
                    view.close()
            else:
                with app.db_lock:
                    judged = service.judge_evidence(library, parsed, evidence, judge=judge, on_result=arrived,
                                                    sink=sink)
                store_rows()
            out = list(judged)
        # A cancelled LLM sweep (a new `s`, quitting) stopped its calls; the verdicts back by then are stored and
        # shown. The worker that replaced it reports: this one's "cancelled" rows would clear its pending marks.
        if not (judge == "llm" and worker.is_cancelled):
            self.post_message(JudgeDone(out, app.clock() - t0))

    def auto_judge(self) -> None:
        """Verdicts for the results without asking: cached ones at once, the rest from the local judge (offline,
        free) in a worker, the rendered rows first, then those below them, so that the verdict bar counts every
        result (and says "judging N…" until then) rather than the rows rendered so far. `s` stays for the LLM
        judge."""
        app = self.evtui
        if self.result is None or app.library is None or app.judge_service() is None:
            return
        visible = self.visible_evidence()
        shown = {e.sentence.id for e in visible}
        todo = [e for e in [*visible, *(e for e in self.kept if e.sentence.id not in shown)]
                if e.sentence.id not in self.judgments and e.sentence.id not in self.judge_pending]
        if not todo:
            return
        self.judge_pending.update(e.sentence.id for e in todo)
        self.redraw_judge_cells()
        self.auto_judge_worker(self.result.query, todo, self.generation)

    @work(thread=True, group="auto-judge")
    def auto_judge_worker(self, parsed: ParsedQuery, evidence: list[Evidence], generation: int) -> None:
        app = self.evtui
        service = app.judge_service()
        library = app.library
        assert service is not None and library is not None
        worker = get_current_worker()
        rows: list[list[Any]] = []
        asked = frozenset(e.sentence.id for e in evidence)
        try:  # no verdicts is a note, never a crash
            with self.failures("Judge", lambda exc: f"the automatic judge failed (no verdicts): "
                                                    f"{failure_reason(exc)}"):
                if app.judge_model() and str(self.query_one("#judge", Select).value) == "llm":
                    # the LLM's cached verdicts too (never a call): shown instead of the local judge's
                    from evtui.judge.cache import JudgmentCache

                    llm = service.make_judge(library, "llm", app.judge_model(), app.judge_setting("api_base"))
                    with app.db_lock:
                        hits = JudgmentCache(library.store.con, writable=False).lookup(
                            llm.name, llm.model, llm.prompt_version, parsed, evidence)
                    if hits:
                        self.post_message(AutoVerdicts(parsed.text, list(hits.values()), generation=generation))
                        evidence = [e for e in evidence if e.sentence.id not in hits]
                try:
                    judge = app.local_judge()  # made (its models loaded) outside db_lock: searches need not wait
                    for i in range(0, len(evidence), AUTO_CHUNK):
                        if worker.is_cancelled:
                            return
                        chunk = evidence[i:i + AUTO_CHUNK]
                        with app.db_lock:
                            out = service.judge_evidence(library, parsed, chunk, judge=judge,
                                                         sink=lambda _t, new: rows.extend(new))
                        self.post_message(AutoVerdicts(parsed.text, list(out), generation=generation))
                except Exception:
                    if worker.is_cancelled:
                        return  # a newer search replaced this one: its judge's failure is no news
                    raise
                if rows and not worker.is_cancelled and not library.read_only:  # a read-only library: shown, not kept
                    from evtui.judge.cache import JudgmentCache

                    try:
                        with library.rw(), app.db_lock:  # cached for the next time (and for the CLI beside the app)
                            JudgmentCache(library.store.con, writable=False).insert_rows(rows)
                    except Exception as exc:  # noqa: BLE001 - a full disk: the verdicts are shown, only not kept
                        if not worker.is_cancelled:
                            app.call_from_thread(self.notify, f"verdicts shown but not cached: {failure_text(exc)}",
                                                 title="Judge", severity="warning")
        finally:
            self.post_message(AutoVerdicts(parsed.text, [], done=True, generation=generation, ids=asked))

    def on_auto_verdicts(self, msg: AutoVerdicts) -> None:
        if self.result is None or self.result.query.text != msg.query or msg.generation != self.generation:
            return  # an earlier query's verdicts
        for j in msg.judgments:
            self.record_judgment(j)
        if msg.done:
            # this worker's rows are no longer waiting, verdict or not (another worker's still are)
            self.judge_pending -= msg.ids - set(self.judgments)
            self.redraw_judge_cells()
        else:
            self.update_verdicts()
        if self.grouped:
            self.refresh_group_heads()

    def refresh_group_heads(self) -> None:
        """Per-paper verdicts in the group heads change as verdicts arrive: redraw those cells."""
        table: PagedTable[Evidence] = self.query_one(PagedTable)
        for i, e in enumerate(self.rows[: table.row_count]):
            if e.sentence.id in self.group_heads:
                cells, _key, _h = table._render_row(e) if table._render_row else ([], "", None)
                if cells:
                    table.update_cell_at(Coordinate(i, 3), cells[3])

    def on_judge_scored(self, msg: JudgeScored) -> None:
        self.record_verdict(msg.judgment)

    def record_verdict(self, j: Any) -> None:
        """A verdict of `s`, unless it is none (failed, or skipped under the cost limit) and the row already has
        one (the local judge's): a server that cannot be reached must not wipe the verdicts shown."""
        sid = getattr(j, "sentence_id", None)
        if getattr(j, "status", "ok") != "ok" and getattr(self.judgments.get(sid), "status", None) == "ok":
            self.judge_pending.discard(sid)  # its cell still shows the verdict it had
            self.update_verdicts()
            return
        self.record_judgment(j)

    def on_judge_done(self, msg: JudgeDone) -> None:
        for j in msg.judgments:
            self.record_verdict(j)
        left = len(self.judge_pending)
        self.judge_pending.clear()
        ok = [j for j in msg.judgments if getattr(j, "status", "ok") == "ok"]
        failed = len(msg.judgments) - len(ok)  # failed, or skipped under the cost limit
        cost = sum(float(getattr(j, "cost", 0.0) or 0.0) for j in msg.judgments)
        service = self.evtui.judge_service()
        judge = str(getattr(msg.judgments[0], "judge", "")) if msg.judgments else ""
        why = getattr(service, "failure_line", None)
        failure = why(judge, msg.judgments) if why is not None and failed else None
        if not msg.judgments:
            self.status(Text("the judge gave no verdicts (see the notification)", style="red"))
        else:
            line = (f"judged {len(ok)} sentence(s) in {msg.seconds:.1f}s" + (f" · {failed} without a verdict" if failed else "")
                    + (f" · ${cost:.4f}" if cost else "") + (f" · {left} not reached" if left else "")
                    + (" (why: the line below)" if failure else ""))
            self.status(Text(line, style="red") if failure and not ok else line)
        if failure:
            self.judge_failure = failure  # the notes line keeps saying it after the status line moves on
            self.refresh_notes()
            self.notify(failure, title="Judge", severity="error" if not ok else "warning", timeout=10)
        self.redraw_judge_cells()
        table = self.query_one(PagedTable)
        self.show_detail(table.cursor_row)

    def record_judgment(self, j: Any) -> None:
        sid = getattr(j, "sentence_id", None)
        if sid is None:
            return
        self.judgments[sid] = j
        self.judge_pending.discard(sid)
        table = self.query_one(PagedTable)
        try:
            row = table.get_row_index(sid)
        except Exception:  # noqa: BLE001 - a row not rendered yet gets its cell when it is
            return
        table.update_cell_at(Coordinate(row, 1), judge_cell(j, light=light_theme(self.app)))
        if row == table.cursor_row:
            self.show_detail(row)

    def redraw_judge_cells(self) -> None:
        if self.result is None:
            return
        table = self.query_one(PagedTable)
        light = light_theme(self.app)
        for i, e in enumerate(self.rows[: table.row_count]):
            sid = e.sentence.id
            table.update_cell_at(Coordinate(i, 1), judge_cell(self.judgments.get(sid), sid in self.judge_pending,
                                                                   light=light))
        self.update_verdicts()
