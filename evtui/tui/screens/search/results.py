"""The Search screen's results table: rows rendered from the search (folded at small heights), the rank cell and
its selection marks, stance filter and grouping by paper, the verdict bar, and re-wrapping when the width changes."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Static

from evtui.models import Evidence
from evtui.render import coverage_marker, highlight
from evtui.request import NO_FILTERS
from evtui.tui.data import judge_cell, light_theme, short
from evtui.tui.screens.search.common import MAX_K, NARROW, SHORT_ROW_LINES, STANCE_CYCLE, SearchBase
from evtui.tui.widgets import PagedTable, TextPane


class SearchResults(SearchBase):
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
        # 80 columns with a filter on: the words go, the numbers stay; then the hidden ranks' note shortens
        hidden = self.hidden_ranks()
        for compact, gaps in ((False, 0), (True, 0), (True, 1), (True, 2), (True, 3)):
            out = self._verdict_bar(counts, hidden, compact=compact, gaps=gaps)
            if len(out.plain) <= self.size.width - 4:
                break
        if self.has_class("narrow") and not self.filters_open:
            try:
                active = self.filters() != NO_FILTERS
            except Exception:  # noqa: BLE001 - a half-typed year: shown when the row opens
                active = False
            if active:
                out.append(" · filters on (f)", style="bold yellow")
        self.query_one("#verdicts", Static).update(out, layout=False)

    def hidden_ranks(self) -> list[int]:
        """The method's ranks of the rows the concept check hid (evtui.honest: they mention none of the query's
        concepts) above its last row kept. The table keeps the method's ranks, which the detail pane, exports and
        the CLI give too, so these are gaps in its # column, said on the verdict bar (those after the last row
        leave none: the status line's "N of M" and the notes line count them)."""
        if self.result is None or not self.kept or len(self.kept) == len(self.result.evidence):
            return []
        kept = {e.sentence.id for e in self.kept}
        last = max(e.rank for e in self.kept)
        return sorted(e.rank for e in self.result.evidence if e.sentence.id not in kept and e.rank < last)

    def _verdict_bar(self, counts: dict[str, int], hidden: list[int], compact: bool, gaps: int = 0) -> Text:
        """`hidden`: the ranks the concept check hid (hidden_ranks); `gaps`: how short their note is, from 0
        (whole) to 3 (their count only)."""
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
        if hidden:
            plural = len(hidden) > 1
            more = f" +{len(hidden) - 3}" if len(hidden) > 3 else ""
            ranks = f"rank{'s' * plural} {', '.join(map(str, hidden[:3]))}"
            note = (f" · {ranks}{more} hidden: {'they mention' if plural else 'it mentions'} none of the query's "
                    "concepts" if gaps == 0 else
                    f" · {ranks}{more} hidden: no concept of the query" if gaps == 1 else
                    f" · {ranks}{more} hidden (no concept)" if gaps == 2 else
                    f" · {len(hidden)} rank{'s' * plural} hidden (no concept)")
            out.append(note, style="dim")
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

    def cursor_list(self) -> PagedTable[Evidence]:
        return self.query_one(PagedTable)

    def current_evidence(self) -> Evidence | None:
        table: PagedTable[Evidence] = self.query_one(PagedTable)
        if self.result is None or not self.result.evidence:
            return None
        return table.item_at_cursor()

    def refresh_selection_marks(self) -> None:
        """After the basket changed elsewhere (reader, export screen): redraw the ✓ marks."""
        if self.result is None:
            return
        table: PagedTable[Evidence] = self.query_one(PagedTable)
        selected, elsewhere = self.selection_marks()
        for i, e in enumerate(self.rows[: table.row_count]):
            sid = e.sentence.id
            table.update_cell_at(Coordinate(i, 0), self.rank_cell(e, sid in selected, sid in elsewhere))
