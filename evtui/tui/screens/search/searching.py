"""The Search screen's searches: the filter row (section, method, paper, years), the request built from it and the
query, the search worker, and what a finished or failed search puts on screen."""

from __future__ import annotations

from contextlib import nullcontext

from rich.text import Text
from textual import on, work
from textual.widgets import Input, Select, Static
from textual.worker import get_current_worker

from evtui.errors import QueryError
from evtui.methods import needs_embeddings
from evtui.models import ParsedQuery
from evtui.request import Filters, SearchRequest
from evtui.tui.base import failure_reason
from evtui.tui.data import EMPTY_LIBRARY
from evtui.tui.messages import SearchDone, WorkFailed
from evtui.tui.screens.search.common import FEW_HITS, FIRST_K, MAX_K, SearchBase, _methods
from evtui.tui.widgets import AspectBar, PagedTable, TextPane


class SearchRequests(SearchBase):
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
