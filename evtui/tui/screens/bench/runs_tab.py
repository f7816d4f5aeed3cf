"""The Runs tab: stored runs, two marked side by side with a chart of methods × tasks, and runs written to CSV."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.text import Text
from textual import on
from textual.actions import SkipAction
from textual.coordinate import Coordinate
from textual.widgets import (
    Button,
    Checkbox,
    DataTable,
    Input,
    Static,
)

from evtui.bench.report import (
    chart,
    compare,
    primary_metric,
)
from evtui.errors import EvtuiError
from evtui.render import plain
from evtui.tui.data import light_theme, short
from evtui.tui.screens.bench.common import BenchTab, metric_cell

if TYPE_CHECKING:
    pass



class RunsTab(BenchTab):

    # -- stored runs -------------------------------------------------------------------------------
    def action_reload_runs(self) -> None:
        from evtui.bench import list_runs

        view = self.evtui.view
        if view is None:
            return
        try:
            with self.evtui.db_gate:  # the UI thread's reads take the gate (a shared library's switch)
                # a read-only library that never ran a benchmark has no runs table, and list_runs would create it
                never = view.read_only and not view.store.con.execute(
                    "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'runs'").fetchone()[0]
                self.runs = [] if never else list_runs(view)  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001 - an old or damaged runs table must not close the screen
            self.notify(f"cannot list stored runs: {exc}", title="Bench", severity="error")
            self.runs = []
        table = self.query_one("#runs-table", DataTable)
        row = table.cursor_row
        table.clear()
        self.marked = [rid for rid in self.marked if any(r["id"] == rid for r in self.runs)]
        for r in self.runs:
            _name, value = primary_metric(r)
            if r.get("status", "done") != "done":  # no figure yet: say why (running, or interrupted: resume it)
                metric = Text(r["status"], style="yellow")
            else:
                metric = metric_cell(value, r, 6, 4 if value is not None and abs(value) < 1 else 2)
            table.add_row("✓" if r["id"] in self.marked else "", plain(r["task"]), plain(r["method"]), metric,
                          str(r["n_items"]), Text(short(r["dataset"].split(":", 1)[-1], 20)),
                          f"{r['seconds']:7.1f}", plain(r["id"]), key=r["id"])
        if self.runs:
            table.move_cursor(row=max(0, min(row, len(self.runs) - 1)), animate=False)
        self.update_side()

    def cursor_run(self) -> dict[str, Any] | None:
        table = self.query_one("#runs-table", DataTable)
        return self.runs[table.cursor_row] if self.runs and 0 <= table.cursor_row < len(self.runs) else None

    @on(DataTable.RowHighlighted, "#runs-table")
    def run_highlighted(self) -> None:
        if not self.marked:  # the side pane describes the run under the cursor
            self.update_compare()

    def update_side(self) -> None:
        self.update_compare()
        # "    method ▕bar▏ 100.0": the bar gets what the label, the value and the padding leave
        width = max(10, self.query_one("#runs-side").size.width - 30) if self.is_mounted else 30
        self.query_one("#chart", Static).update(chart(self.runs, width=min(40, width), light=light_theme(self.app)))

    def update_compare(self) -> None:
        """The marked runs side by side; with none marked, the run under the cursor in full (at 80 columns the
        table cuts its dataset and leaves its id off: seven runs of one method read as one run seven times)."""
        marked = [r for r in self.runs if r["id"] in self.marked]
        for r in marked:
            if r["id"] not in self.per_item:
                self.per_item[r["id"]] = self.stored_per_item(r["id"])
        run = None if marked else self.cursor_run()
        if run is not None:
            when = str(run.get("created_at") or "").replace("T", " ")
            params = {k: v for k, v in (run.get("parameters") or {}).items() if k != "data"}
            about = Text.assemble(("run ", "bold"), (str(run["id"]), "bold"), (f" · made {when}" if when else ""),
                                  ("\n" + " · ".join(f"{k} {v}" for k, v in params.items()) if params else ""),
                                  ("\nspace marks runs to compare them side by side", "dim"))
            self.query_one("#compare", Static).update(Group(about, compare([run], self.per_item)))
            return
        hint = Text("d lists the items where these two differ most", style="dim") if len(marked) == 2 else Text()
        self.query_one("#compare", Static).update(Group(compare(marked, self.per_item), hint))

    def stored_per_item(self, run_id: str) -> dict[str, float]:
        view = self.evtui.view
        if view is None:
            return {}
        from evtui.bench.runs import run_per_item

        try:
            with self.evtui.db_gate:  # the UI thread's reads take the gate (a shared library's switch)
                return run_per_item(view, run_id)  # type: ignore[arg-type]
        except Exception:  # noqa: BLE001 - an older runs table without per-item scores
            return {}

    def action_mark(self) -> None:
        table = self.query_one("#runs-table", DataTable)
        if not self.runs or not (0 <= table.cursor_row < len(self.runs)):
            return
        rid = self.runs[table.cursor_row]["id"]
        if rid in self.marked:
            self.marked.remove(rid)
        else:
            self.marked.append(rid)
        table.update_cell_at(Coordinate(table.cursor_row, 0), "✓" if rid in self.marked else "")
        self.update_side()
        self.refresh_bindings()  # d needs exactly two marked runs

    # -- CSV export --------------------------------------------------------------------------------
    def csv_runs(self) -> list[dict[str, Any]]:
        """What `w` writes: the marked runs, or every stored run when none is marked."""
        marked = [r for r in self.runs if r["id"] in self.marked]
        return marked or list(self.runs)

    def action_export_csv(self) -> None:
        if not self.runs:
            self.notify("no stored runs to export yet", title="Bench", severity="warning")
            return
        n = len(self.csv_runs())
        self.query_one("#csv-write", Button).label = f"Write {n} {'marked ' if self.marked else ''}run(s)"
        row = self.query_one("#csv-row")
        row.display = True
        path = self.query_one("#csv-path", Input)
        path.focus()
        path.cursor_position = len(path.value)  # at the end, nothing selected: typing adds, never replaces
        self.refresh_bindings()

    def action_close_csv(self) -> None:
        row = self.query_one("#csv-row")
        if not row.display:
            raise SkipAction  # escape is the app's "back to search" everywhere else
        row.display = False
        self.query_one("#runs-table", DataTable).focus()
        self.refresh_bindings()

    @on(Input.Submitted, "#csv-path")
    @on(Button.Pressed, "#csv-write")
    def write_csv(self) -> None:
        from evtui.bench import csvout

        raw = self.query_one("#csv-path", Input).value.strip()
        if not raw:
            self.notify("type the CSV file to write", title="Bench", severity="warning")
            return
        out = Path(raw).expanduser()
        runs = self.csv_runs()
        with_items = self.query_one("#csv-items", Checkbox).value
        try:
            csvout.check_paths(out, self.evtui.config.home, items=with_items, force=True)  # never in the data home
            n = csvout.write_runs_csv(out, runs)
            note = f"wrote {n} run(s) to {out}"
            if with_items:
                per_item = {r["id"]: (self.run_for(r["id"]) or {}).get("per_item") or {} for r in runs}
                path = csvout.items_path(out)
                rows = csvout.write_items_csv(path, runs, per_item, csvout.hypotheses(runs))
                note += f" and {rows} item score(s) to {path}"
        except EvtuiError as exc:
            self.notify(str(exc), title="Bench", severity="error")
            return
        self.evtui.ui_state.set("bench_csv_path", raw)
        self.evtui.ui_state.set("bench_csv_items", with_items)
        self.notify(note, title="Bench")
        self.action_close_csv()
