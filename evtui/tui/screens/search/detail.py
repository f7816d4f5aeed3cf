"""The Search screen's layout and detail pane: the pane beside the table (or over it on a narrow terminal, after
`d`), following the cursor once it rests, with the sentence in context, its rank and score, and its verdict."""

from __future__ import annotations

from functools import partial

from rich.text import Text

from evtui.export import display_names
from evtui.render import coverage_marker, highlight
from evtui.tui.data import judge_lines, light_theme
from evtui.tui.screens.search.common import DETAIL_DELAY, NARROW, SHORT, SearchBase
from evtui.tui.widgets import PagedTable, TextPane


class SearchDetail(SearchBase):
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
