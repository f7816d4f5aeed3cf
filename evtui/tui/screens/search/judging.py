"""The Search screen's verdicts: the automatic local judge (cached verdicts first), `s` with the local or LLM
judge (a cost estimate first for the LLM), and the judge cells and notes as verdicts arrive."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import work
from textual.coordinate import Coordinate
from textual.widgets import Select
from textual.worker import get_current_worker

from evtui.models import Evidence, ParsedQuery
from evtui.tui.base import failure_reason, failure_text
from evtui.tui.data import judge_cell, light_theme
from evtui.tui.messages import JudgeDone, JudgeEstimate, JudgeScored
from evtui.tui.screens.modals import ConfirmScreen
from evtui.tui.screens.search.common import AUTO_CHUNK, AutoVerdicts, SearchBase
from evtui.tui.widgets import PagedTable


class SearchJudging(SearchBase):
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
