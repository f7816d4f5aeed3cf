"""The Items tab: a run's items with their hypotheses and a score plot, the per-item diff of two marked runs, and
an item's drill-down (re-ranked label-blind through the harness's own ranker, then scored)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.containers import VerticalScroll
from textual.widgets import (
    DataTable,
    Label,
    Static,
)

from evtui.bench.estimate import IN_SAMPLE_STYLE, in_sample
from evtui.bench.report import (
    item_diff,
    item_report,
    primary_metric,
    score_plot,
    short_item_id,
)
from evtui.errors import EvtuiError
from evtui.render import plain, safe_text
from evtui.tui.base import failure_text
from evtui.tui.data import light_theme, short
from evtui.tui.messages import (
    ItemDetail,
)
from evtui.tui.screens.bench.common import BenchTab, judge_methods, run_id

if TYPE_CHECKING:
    from evtui.library import Library



def sample_mark(run: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """" (in-sample)" after a run's name in a header when its figures are in-sample (evtui.bench.estimate)."""
    return ((" (in-sample)", IN_SAMPLE_STYLE),) if in_sample(run) else ()


class ItemsTab(BenchTab):

    # -- items -------------------------------------------------------------------------------------
    def run_for(self, rid: str) -> dict[str, Any] | None:
        """A run as the Items tab shows it: this session's sweep result, or the stored run with its per-item
        scores, dataset file, seed and judge options (None: no such run)."""
        run = self.results.get(rid)
        if run is not None:
            return run
        stored = next((r for r in self.runs if r["id"] == rid), None)
        if stored is None:
            return None
        params = stored.get("parameters") or {}
        judge_opts = {k: params[k] for k in ("judge", "model") if params.get(k)}
        if judge_opts and self.evtui.judge_setting("api_base"):
            judge_opts["api_base"] = self.evtui.judge_setting("api_base")
        if rid not in self.per_item:
            self.per_item[rid] = self.stored_per_item(rid)
        return {**stored, "per_item": self.per_item[rid], "data": params.get("data"),
                "seed": params.get("seed", 0), "aspect_recall": primary_metric(stored)[1], "judge_opts": judge_opts}

    @on(DataTable.RowSelected, "#sweep-results, #runs-table")
    def open_run(self, event: DataTable.RowSelected) -> None:
        run = self.run_for(str(event.row_key.value))
        if run is None:
            return
        if not str(run.get("dataset", "")).startswith("evidencebench:"):
            self.notify("item drill-down is for EvidenceBench runs", title="Bench", severity="warning")
            return
        self.items_run = run
        self.diff = None
        self.show_items()

    def action_diff(self) -> None:
        """The two marked runs item by item, where they differ most first; enter drills into run A's item."""
        if len(self.marked) != 2:
            self.notify("mark two runs with space first", title="Bench", severity="warning")
            return
        a, b = (self.run_for(rid) for rid in self.marked)
        if a is None or b is None:
            return
        self.items_run = a
        self.diff = (a, b)
        self.show_items()

    def action_swap_diff(self) -> None:
        if self.diff is None:
            return
        self.items_run = self.diff[1]
        self.diff = (self.diff[1], self.diff[0])
        self.show_items()

    def show_items(self) -> None:
        self.fill_items()
        run = self.items_run
        assert run is not None
        title = self.query_one("#items-title", Label)
        if self.diff is None:
            per_item = run.get("per_item") or {}
            title.update(Text.assemble(
                (f"{run['task']} · {run['method']}", "bold"), *sample_mark(run),
                (f" · {len(per_item)} scored item(s) · run {run_id(run)}", "dim")))
            hint = "enter on an item re-ranks it and explains its score"
        else:
            a, b = self.diff
            rows = item_diff(a.get("per_item") or {}, b.get("per_item") or {})
            title.update(Text.assemble(
                ("A ", "bold"), (f"{a['method']} · {a['task']}", "bold cyan"), *sample_mark(a), (" vs B ", "bold"),
                (f"{b['method']} · {b['task']}", "bold magenta"), *sample_mark(b),
                (f" · {len(rows)} both scored, most different first", "dim")))
            hint = "enter on an item re-ranks it with run A and explains its score (x makes the other run A)"
        self.query_one("#item-detail", Static).update(Text(hint, style="dim"))
        self._shown_item = None
        self._drilled = None
        self.action_tab("items")
        self.query_one("#items-table", DataTable).focus()
        self.refresh_bindings()

    def items_of(self, run: dict[str, Any]) -> dict[str, Any]:
        """The run's EvidenceBench items (hypotheses, labels), {} when its file is gone (said once)."""
        data = run.get("data")
        if not data:
            return {}
        try:
            return self.items_for(Path(data))
        except EvtuiError as exc:
            if str(data) not in self._missing_data:
                self._missing_data.add(str(data))
                self.notify(str(exc), title="Bench", severity="warning")
            return {}

    def hyp_width(self, fixed: int, columns: int) -> int:
        """The hypothesis column's width: what the table leaves after the `fixed` widths of the other columns and
        the padding of all `columns`."""
        # From the screen's width and the layout (app.tcss), not the table's size: after a resize that is stale.
        width = self.size.width or self.app.size.width
        if not self.has_class("-narrow"):
            width = width * 3 // 5  # #items-table 3fr beside #item-pane 2fr
        return max(12, width - fixed - 2 * columns - 3)  # the vertical scrollbar, a column of slack

    def fill_items(self) -> None:
        """The items table (and the score plot) for `items_run`, or for the two runs of `diff`."""
        table = self.query_one("#items-table", DataTable)
        row = table.cursor_row
        table.clear(columns=True)
        run = self.items_run
        if run is None:
            table.add_column("item", width=11)
            table.add_column("score", width=6)
            table.add_column("hypothesis", width=self.hyp_width(17, 3))
            self.fill_plot()
            return
        items = self.items_of(run)
        if self.diff is None:
            per_item = run.get("per_item") or {}
            table.add_column("item", width=11)
            table.add_column("score", width=6)
            width = self.hyp_width(17, 3)
            table.add_column("hypothesis", width=width)
            for item_id in list(items) or list(per_item):
                score = per_item.get(item_id)
                table.add_row(plain(short_item_id(item_id), oneline=True),
                              "skip" if score is None else f"{score:6.1f}",
                              plain(short(items.get(item_id, {}).get("hypothesis", ""), width), oneline=True),
                              key=item_id)
        else:
            a, b = self.diff
            items = items or self.items_of(b)
            for col, w in (("item", 11), ("Δ A−B", 6), ("A", 5), ("B", 5)):
                table.add_column(col, width=w)
            width = self.hyp_width(11 + 6 + 5 + 5, 5)
            table.add_column("hypothesis", width=width)
            for d in item_diff(a.get("per_item") or {}, b.get("per_item") or {}):
                style = "green" if d.delta > 0 else "red" if d.delta < 0 else "dim"
                table.add_row(plain(short_item_id(d.item_id), oneline=True), Text(f"{d.delta:+6.1f}", style=style),
                              f"{d.a:5.1f}", f"{d.b:5.1f}",
                              plain(short(items.get(d.item_id, {}).get("hypothesis", ""), width), oneline=True),
                              key=d.item_id)
        if table.row_count:
            table.move_cursor(row=max(0, min(row, table.row_count - 1)), animate=False)
        self.fill_plot()

    def refill_items(self) -> None:
        """After a resize: the hypothesis column takes the new width."""
        if self.items_run is not None:
            self.fill_items()
        else:
            self.fill_plot()

    def fill_plot(self) -> None:
        plot = self.query_one("#items-plot", Static)
        run = self.items_run
        if run is None:
            plot.display = False
            return
        width = max(40, (plot.size.width or self.size.width) - 1)
        if self.diff is None:
            ids = list(self.items_of(run)) or list(run.get("per_item") or {})
            per_item = run.get("per_item") or {}
            series = [(str(run["method"]), {i: per_item.get(i) for i in ids})]
        else:
            series = [(f"A {d['method']}", d.get("per_item") or {}) for d in self.diff[:1]] + \
                     [(f"B {d['method']}", d.get("per_item") or {}) for d in self.diff[1:]]
        plot.display = True
        plot.update(score_plot(series, width=width, light=light_theme(self.app)))

    @on(DataTable.RowHighlighted, "#items-table")
    def preview_item(self, event: DataTable.RowHighlighted) -> None:
        """The item under the cursor: its full id and hypothesis and its score(s), before any re-ranking."""
        run = self.items_run
        if run is None or event.row_key.value is None:
            return
        item_id = str(event.row_key.value)
        if item_id == self._shown_item:
            return  # a refill (a resize) put the cursor back: the pane keeps what it shows
        self._shown_item = item_id
        self._drilled = None  # the pane previews this item: no drill-down to redraw on a theme change
        hyp = self.items_of(run).get(item_id, {}).get("hypothesis", "")
        out = Text()
        out.append(item_id, style="bold")
        runs = [("", run)] if self.diff is None else [("A ", self.diff[0]), ("B ", self.diff[1])]
        for label, r in runs:
            score = (r.get("per_item") or {}).get(item_id)
            out.append(f"\n{label}{r['method']} · {r['task']}: ", style="dim")
            out.append("skipped" if score is None else f"{score:.1f}", style="bold")
        out.append("\n\nhypothesis ", style="bold")
        out.append(f"{hyp or '(not in the dataset file)'}\n\n")
        out.append("enter re-ranks it and explains its score" + (" in run A" if self.diff else ""), style="dim")
        self.query_one("#item-detail", Static).update(safe_text(out))  # benchmark text: no control characters

    def cursor_item(self) -> str | None:
        table = self.query_one("#items-table", DataTable)
        if not table.row_count:
            return None
        try:
            return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        except Exception:  # noqa: BLE001 - a cursor off the rows (a table being refilled): no item
            return None

    def items_for(self, data: Path) -> dict[str, dict[str, Any]]:
        from evtui.bench.evidencebench import load_items

        key = str(data)
        if key not in self._items_cache:
            self._items_cache[key] = load_items(data)
        return self._items_cache[key]

    @on(DataTable.RowSelected, "#items-table")
    def open_item(self, event: DataTable.RowSelected) -> None:
        run = self.items_run
        if run is None:
            return
        item_id = str(event.row_key.value)
        data = run.get("data")
        if not str(run.get("dataset", "")).startswith("evidencebench:"):
            self.notify("item drill-down is for EvidenceBench runs", title="Bench", severity="warning")
            return
        if not data:
            self.notify("this run does not record its dataset file", title="Bench", severity="warning")
            return
        if self.running:
            self.notify("the benchmark library is busy with the sweep: drill down when it is done",
                        title="Bench", severity="warning")
            return
        self.query_one("#item-detail", Static).update(Text(f"ranking {item_id}…", style="dim"))
        self._shown_item = item_id
        stored = (run.get("per_item") or {}).get(item_id)
        self._drilled = (Path(data), run["task"], run["method"], int(run.get("seed") or 0), item_id, stored,
                         run.get("judge_opts") or {})
        self.drill_worker(*self._drilled, light=light_theme(self.app))

    def redraw_drill(self) -> None:
        """The drill-down shown, explained again (a theme change: its aspect dots take the new palette); the
        ranker is kept, so this re-ranks one item."""
        if self._drilled is not None and self._shown_item == self._drilled[4] and not self.running:
            self.drill_worker(*self._drilled, light=light_theme(self.app))

    @work(thread=True, exclusive=True, group="drill")
    def drill_worker(self, data: Path, task: str, method: str, seed: int, item_id: str,
                     stored: float | None, judge_opts: dict[str, Any], *, light: bool = False) -> None:
        try:
            items = self.items_for(data)
            item = items.get(item_id)
            if item is None:
                raise EvtuiError(f"{item_id} is not in {data.name}")
            with self._drill_lock:
                lib = self.drill_library(data)
                key = (str(data), method, seed, json.dumps(judge_opts, sort_keys=True))
                if key not in self._rankers:
                    from evtui.bench.evidencebench import make_ranker

                    extra: dict[str, Any] = {"judge_opts": judge_opts} if method in judge_methods() else {}
                    # judge strategies re-rank from the verdicts the sweep cached: no new LLM calls
                    self._rankers[key] = make_ranker(lib, method, seed, **extra)
                text = item_report(lib, item_id, item, task, method, seed, stored, self._rankers[key], light=light)
        except Exception as exc:  # noqa: BLE001 - shown in the item pane
            text = Text(failure_text(exc), style="red")
        self.post_message(ItemDetail(item_id, text))

    def on_item_detail(self, msg: ItemDetail) -> None:
        if self.cursor_item() != msg.key:
            return  # the cursor moved on while it was ranked: the pane shows the item under the cursor
        self.query_one("#item-detail", Static).update(safe_text(msg.text))  # benchmark text: no control chars
        self.query_one("#item-pane", VerticalScroll).scroll_home(animate=False)

    def drill_library(self, data: Path) -> Library:
        """The benchmark's own library (as the harness builds it), kept open between drill-downs."""
        from evtui.bench.evidencebench import bench_library

        key = str(data)
        if self._drill_lib is not None and self._drill_lib[0] != key:
            self.close_drill_library()
        if self._drill_lib is None:
            self._drill_lib = (key, bench_library(data, self.evtui.config.home))
        return self._drill_lib[1]

    def close_drill_library(self) -> None:
        with self._drill_lock:
            if self._drill_lib is not None:
                self._drill_lib[1].close()
                self._drill_lib = None
                self._rankers.clear()
