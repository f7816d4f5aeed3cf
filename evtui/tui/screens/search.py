"""The Search screen: query bar, editable aspect chips, filters, ranked results with highlights, detail pane."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.coordinate import Coordinate
from textual.screen import Screen
from textual.suggester import SuggestFromList
from textual.timer import Timer
from textual.widgets import DataTable, Header, Input, Label, Select, Static
from textual.worker import get_current_worker

from evtui.errors import EvtuiError, QueryError
from evtui.models import SECTION_KINDS, Aspect, Evidence, ParsedQuery
from evtui.render import coverage_marker, highlight
from evtui.tui.data import LibraryView, judge_cell, judge_lines, score_bar, short
from evtui.tui.messages import JudgeDone, JudgeEstimate, JudgeScored, SearchDone, WorkFailed
from evtui.tui.screens.modals import AspectEditScreen, ConfirmScreen
from evtui.tui.widgets import AspectBar, PagedTable, TextPane
from evtui.tui.widgets.keybar import KeyBar

if TYPE_CHECKING:
    from evtui.search import SearchResult
    from evtui.tui.app import EvtuiApp

FIRST_K = 50  # a search asks for this many (or config.k, if larger) ...
MAX_K = 1000  # ... and fetches more, doubling, when the cursor reaches the last row
DETAIL_DELAY = 0.06  # seconds the cursor rests before the detail pane follows it


def _methods() -> tuple[tuple[str, ...], str]:
    """The ranking methods as evtui.search has them now (never a copy)."""
    import evtui.search as search

    return tuple(search.METHODS), str(search.DEFAULT_METHOD)


def derive_terms(label: str, role: str, abbreviations: dict[str, str] | None = None) -> list[str]:
    from evtui.query import concept_variants, relation_terms

    return relation_terms(label) if role == "relation" else concept_variants(label, abbreviations)


class SearchScreen(Screen[None]):
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False, id="search.down"),
        Binding("k", "cursor_up", "Up", show=False, id="search.up"),
        Binding("space", "toggle_select", "Select", id="search.select"),
        Binding("o", "open_paper", "Open paper", id="search.open"),
        Binding("s", "judge", "Judge", id="search.judge"),
        Binding("a", "focus_aspects", "Aspects", id="search.aspects"),
        Binding("r", "results_only", "Results only", id="search.results_only"),
        Binding("m", "next_method", "Next method", show=False, id="search.method"),
        Binding("f", "focus_filters", "Filters", show=False, id="search.filters"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.result: SearchResult | None = None
        self.search_k = FIRST_K
        self.judgments: dict[str, Any] = {}
        self.judge_pending: set[str] = set()
        self._chips_text = ""  # the query text the chips were parsed from
        self._parse_timer: Timer | None = None
        self._searching = False
        self._rendered_width = 0
        self._detail_timer: Timer | None = None

    @property
    def evtui(self) -> EvtuiApp:
        return cast("EvtuiApp", self.app)

    def compose(self) -> ComposeResult:
        methods, default = _methods()
        yield Header()
        with Horizontal(id="query-row"):
            yield Input(placeholder="hypothesis, claim, or (head, relation, tail) — enter searches", id="query")
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
        with Horizontal(id="main"):
            yield PagedTable(id="results", cursor_type="row", zebra_stripes=True)
            yield TextPane(id="detail")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#main").display = False
        if self.evtui.library is not None:
            self.library_ready(self.evtui.status_note)

    def status(self, text: str | Text) -> None:
        self.query_one("#status", Static).update(text, layout=False)  # one line, always

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
        self.status("aspects edited · enter searches with them")

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
        self.run_search()

    @on(Input.Submitted, "#paper, #year-from, #year-to")
    def filter_submitted(self) -> None:
        self.run_search()

    @on(Select.Changed, "#section, #method")
    def filters_changed(self) -> None:
        if self.result is not None:
            self.run_search()

    def filters(self) -> dict[str, Any]:
        section = self.query_one("#section", Select).value
        method = self.query_one("#method", Select).value
        paper = self.query_one("#paper", Input).value.strip() or None
        years: list[int | None] = []
        for wid in ("#year-from", "#year-to"):
            raw = self.query_one(wid, Input).value.strip()
            if raw and not raw.lstrip("-").isdigit():
                raise QueryError(f"a year is a whole number, not {raw!r}")
            years.append(int(raw) if raw else None)
        if years[0] is not None and years[1] is not None and years[0] > years[1]:
            raise QueryError(f"the year range {years[0]}–{years[1]} is empty")
        return {
            "section": None if section is Select.NULL else str(section),
            "method": str(method),
            "paper": paper,
            "year_from": years[0],
            "year_to": years[1],
        }

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
            filters = self.filters()
        except QueryError as exc:
            self.notify(str(exc), title="Filters", severity="error")
            return
        self._searching = True
        self.status("loading more…" if more else "searching…")
        self.search_worker(query, self.search_k, filters, keep_row)

    @work(thread=True, exclusive=True, group="search")
    def search_worker(self, query: str | ParsedQuery, k: int, filters: dict[str, Any], keep_row: int) -> None:
        app = self.evtui
        assert app.searcher is not None
        t0 = app.clock()
        try:
            with app.db_lock:
                result = app.searcher.search(query, k=k, **filters)
        except EvtuiError as exc:
            self.post_message(WorkFailed("Query", str(exc)))
            return
        except Exception as exc:  # noqa: BLE001 - a failing method must not take the app down
            self.post_message(WorkFailed("Query", f"{type(exc).__name__}: {exc}"))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(SearchDone(result, app.clock() - t0, keep_row))

    def on_work_failed(self, msg: WorkFailed) -> None:
        self._searching = False
        if msg.what == "Query":
            self.status(Text(msg.reason, style="red"))
        self.notify(msg.reason, title=msg.what, severity="error", timeout=8)

    def on_search_done(self, msg: SearchDone) -> None:
        self._searching = False
        same = self.result is not None and self.result.query.text == msg.result.query.text and msg.keep_row
        self.result = msg.result
        self.evtui.result = msg.result
        if not same:
            self.judgments.clear()
            self.judge_pending.clear()
        parsed = msg.result.query
        bar = self.query_one(AspectBar)
        self._chips_text = self.query_one("#query", Input).value
        bar.set_aspects(parsed.aspects, parsed.mode, edited=bar.edited and "aspects edited by hand" in parsed.notes)
        self.show_mode(parsed.mode)
        self.render_results(keep_row=msg.keep_row)
        n = len(msg.result.evidence)
        notes = "; ".join(x for x in msg.result.notes if not x.startswith("mode detected") and "edited" not in x)
        more = " · ↓ more at the end" if n >= self.search_k and self.search_k < MAX_K else ""
        self.status(
            f"{n} sentences · {msg.result.method} · {msg.seconds * 1000:.0f} ms{more}" + (f" · {notes}" if notes else ""))
        table = self.query_one(PagedTable)
        if n:
            if not msg.keep_row:
                table.focus()
            self.schedule_detail(table.cursor_row)  # after the rows are on screen
        else:
            self.query_one(TextPane).show("no matching sentences")

    def render_results(self, *, keep_row: int = 0) -> None:
        if self.result is None:
            return
        table: PagedTable[Evidence] = self.query_one(PagedTable)
        aspects = self.result.query.aspects
        best = max((e.score for e in self.result.evidence), default=1.0)
        selected = set(self.evtui.selected_ids())
        width = table.size.width or max(60, self.app.size.width * 2 // 3)
        self._rendered_width = table.size.width
        fixed = {"#": 4, "score": 11, "judge": 5, "asp": max(3, len(aspects))}
        sentence_w = max(24, width - sum(fixed.values()) - 2 * (len(fixed) + 1) - 2)
        table.clear(columns=True)
        for name, w in fixed.items():
            table.add_column(name, key=name, width=w)
        table.add_column("sentence · paper · section", key="sentence", width=sentence_w)
        console = self.app.console

        def row(e: Evidence) -> tuple[list[Any], str, int | None]:
            sid = e.sentence.id
            text = highlight(e.sentence.text, e.highlights, aspects)
            where = f"{short(e.title or e.sentence.paper_id, max(10, sentence_w - 24))} · " \
                    f"{short(e.sentence.section_title or e.sentence.section_kind, 20)}"
            text.append("\n" + where, style="dim cyan")
            # the height from wrapping the sentence here: the table need not render every cell to measure it
            height = len(text.wrap(console, sentence_w))
            return ([
                self.rank_cell(e, sid in selected), score_bar(e.score, best, width=5),
                judge_cell(self.judgments.get(sid), sid in self.judge_pending),
                coverage_marker(e.highlights, aspects), text,
            ], sid, height)

        table.load(self.result.evidence, row, upto=keep_row)
        if keep_row:
            table.move_cursor(row=keep_row, animate=False)

    @staticmethod
    def rank_cell(e: Evidence, selected: bool) -> Text:
        return Text(("✓" if selected else " ") + f"{e.rank:>3}", style="bold green" if selected else "")

    def on_resize(self) -> None:
        if self.result is not None and self.result.evidence:
            self.call_after_refresh(self._rerender_if_resized)

    def _rerender_if_resized(self) -> None:
        table = self.query_one(PagedTable)
        if table.size.width and table.size.width != self._rendered_width:
            self.render_results(keep_row=table.cursor_row)

    @on(DataTable.RowHighlighted, "#results")
    def row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        # The detail pane follows once the cursor rests: holding j moves the cursor at key-repeat speed.
        self.schedule_detail(event.cursor_row)
        if (self.result is not None and event.cursor_row == len(self.result.evidence) - 1
                and len(self.result.evidence) >= self.search_k and self.search_k < MAX_K and not self._searching):
            self.run_search(more=True)

    def schedule_detail(self, row: int) -> None:
        if self._detail_timer is not None:
            self._detail_timer.stop()
        self._detail_timer = self.set_timer(DETAIL_DELAY, partial(self.show_detail, row))

    def show_detail(self, row: int) -> None:
        app = self.evtui
        if self.result is None or not (0 <= row < len(self.result.evidence)) or app.view is None:
            return
        e = self.result.evidence[row]
        aspects = self.result.query.aspects
        store = app.view.store
        context = store.context(e.sentence.id, window=2)
        paper = store.paper(e.sentence.paper_id)
        out = Text()
        if paper is not None:
            out.append(paper.title + "\n", style="bold")
            authors = ", ".join(paper.authors[:3]) + (" et al." if len(paper.authors) > 3 else "")
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
                out.append_text(highlight(s.text, matcher.spans(s.text), aspects))
            else:
                out.append(s.text, style="dim")
            out.append("\n")
        covered = {h.aspect for h in e.highlights}
        out.append("\naspects ", style="bold")
        out.append_text(coverage_marker(e.highlights, aspects))
        out.append(f"  {len(covered)}/{len(aspects)} covered · {self.result.method} score {e.score:.2f}\n",
                   style="dim")
        j = self.judgments.get(e.sentence.id)
        if j is not None:
            out.append("\n")
            out.append_text(judge_lines(j))
        elif e.sentence.id in self.judge_pending:
            out.append("\njudge: waiting for the verdict…\n", style="dim")
        self.query_one(TextPane).show(out)

    # -- actions -----------------------------------------------------------------------------------
    def focus_query(self) -> None:
        self.query_one("#query", Input).focus()

    def action_cursor_down(self) -> None:
        self.query_one(PagedTable).action_cursor_down()

    def action_cursor_up(self) -> None:
        self.query_one(PagedTable).action_cursor_up()

    def action_results_only(self) -> None:
        sel = self.query_one("#section", Select)
        sel.value = Select.NULL if sel.value == "results" else "results"

    def action_next_method(self) -> None:
        """Cycle the ranking method (the list evtui.search has now); searches again when there are results."""
        methods, _default = _methods()
        sel = self.query_one("#method", Select)
        current = str(sel.value)
        sel.value = methods[(methods.index(current) + 1) % len(methods)] if current in methods else methods[0]
        self.notify(f"ranking method: {sel.value}", title="Method", timeout=2)

    def action_focus_filters(self) -> None:
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
        try:
            now = app.basket.toggle(e, self.result.query, self.result.method)
        except Exception as exc:  # noqa: BLE001 - the database can refuse (disk full, read-only)
            self.notify(f"cannot change the selection: {exc}", title="Select", severity="error")
            return
        n = len(app.selected_ids())
        table.update_cell_at(Coordinate(table.cursor_row, 0), self.rank_cell(e, now))
        self.notify(f"{n} sentence(s) selected · e to export", timeout=2)

    def action_open_paper(self) -> None:
        e = self.current_evidence()
        if e is None or self.result is None:
            self.notify("search first, then open a result's paper", title="Reader", severity="warning")
            return
        from evtui.tui.screens.reader import ReaderScreen

        hits = [x for x in self.result.evidence if x.sentence.paper_id == e.sentence.paper_id]
        self.app.push_screen(ReaderScreen(e.sentence.paper_id, self.result.query, self.result.method, hits,
                                          focus=e.sentence.id))

    def refresh_selection_marks(self) -> None:
        """After the basket changed elsewhere (reader, export screen): redraw the ✓ marks."""
        if self.result is None:
            return
        table: PagedTable[Evidence] = self.query_one(PagedTable)
        selected = set(self.evtui.selected_ids())
        for i, e in enumerate(self.result.evidence[: table.row_count]):
            table.update_cell_at(Coordinate(i, 0), self.rank_cell(e, e.sentence.id in selected))

    def on_screen_resume(self) -> None:
        self.refresh_selection_marks()

    # -- judging -----------------------------------------------------------------------------------
    def visible_evidence(self) -> list[Evidence]:
        """The results the table has rendered (what the user has in front of them)."""
        if self.result is None:
            return []
        return self.result.evidence[: self.query_one(PagedTable).row_count]

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
        view = LibraryView(app.library)  # its own connection: no wait on a running search
        try:
            est = service.estimate(parsed, evidence, "llm", app.judge_model(), library=view,
                                   api_base=app.judge_setting("api_base"))
        except EvtuiError as exc:
            self.post_message(WorkFailed("Judge", str(exc)))
            return
        except Exception as exc:  # noqa: BLE001
            self.post_message(WorkFailed("Judge", f"{type(exc).__name__}: {exc}"))
            return
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
        todo = [e for e in evidence if e.sentence.id not in self.judgments]
        if not todo:
            self.notify("every result in view already has a verdict", title="Judge")
            return
        self.judge_pending.update(e.sentence.id for e in todo)
        self.redraw_judge_cells()
        self.status(f"judging {len(todo)} sentence(s) with the {judge} judge…")
        self.judge_worker(judge, self.result.query, todo)

    @work(thread=True, exclusive=True, group="judge")
    def judge_worker(self, judge: str, parsed: ParsedQuery, evidence: list[Evidence]) -> None:
        app = self.evtui
        service = app.judge_service()
        assert service is not None and app.library is not None
        t0 = app.clock()

        def arrived(j: Any) -> None:
            self.post_message(JudgeScored(j))

        try:
            if judge == "llm":
                # The LLM's network waits run on their own connection, so searching goes on meanwhile.
                view = LibraryView(app.library)
                try:
                    out = service.judge_evidence(view, parsed, evidence, judge="llm", model=app.judge_model(),
                                                 api_base=app.judge_setting("api_base"),
                                                 max_cost=app.judge_setting("max_cost"), on_result=arrived)
                finally:
                    view.close()
            else:
                with app.db_lock:
                    out = service.judge_evidence(app.library, parsed, evidence, judge=judge, on_result=arrived)
        except EvtuiError as exc:
            self.post_message(WorkFailed("Judge", str(exc)))
            out = []
        except Exception as exc:  # noqa: BLE001
            self.post_message(WorkFailed("Judge", f"{type(exc).__name__}: {exc}"))
            out = []
        self.post_message(JudgeDone(list(out), app.clock() - t0))

    def on_judge_scored(self, msg: JudgeScored) -> None:
        self.record_judgment(msg.judgment)

    def on_judge_done(self, msg: JudgeDone) -> None:
        for j in msg.judgments:
            self.record_judgment(j)
        left = len(self.judge_pending)
        self.judge_pending.clear()
        ok = [j for j in msg.judgments if getattr(j, "status", "ok") == "ok"]
        failed = len(msg.judgments) - len(ok)  # failed, or skipped under the cost limit
        cost = sum(float(getattr(j, "cost", 0.0) or 0.0) for j in msg.judgments)
        if msg.judgments:
            self.status(
                f"judged {len(ok)} sentence(s) in {msg.seconds:.1f}s" + (f" · {failed} without a verdict" if failed else "")
                + (f" · ${cost:.4f}" if cost else "") + (f" · {left} not reached" if left else ""))
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
        table.update_cell_at(Coordinate(row, 2), judge_cell(j))
        if row == table.cursor_row:
            self.show_detail(row)

    def redraw_judge_cells(self) -> None:
        if self.result is None:
            return
        table = self.query_one(PagedTable)
        for i, e in enumerate(self.result.evidence[: table.row_count]):
            sid = e.sentence.id
            table.update_cell_at(Coordinate(i, 2), judge_cell(self.judgments.get(sid), sid in self.judge_pending))
