"""The Bench screen: EvidenceBench sweeps in a child process, stored runs side by side, item drill-down.

A sweep runs `evtui.bench.run_evidencebench` — the same harness as `evtui bench evidencebench` — once per
(task, method) in a child process (evtui.bench.sweep), through the driver's `RunBook` as the CLI does: finished
items are stored as they come (in batches a second apart), a run left unfinished (cancelled between items, or
killed) is finished by the next sweep with the same arguments. Drilling into an item re-ranks it label-blind through
the harness's own ranker and only then reads its labels (evtui.bench.report) to show what was picked, what it
covered and which aspects were missed. This module composes the tabs (sweep_tab, runs_tab, items_tab) and holds
what spans them: the keys, the layout, which keys each tab shows.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import (
    Button,
    Checkbox,
    DataTable,
    Header,
    Input,
    Label,
    OptionList,
    ProgressBar,
    Select,
    SelectionList,
    Static,
    TabbedContent,
    TabPane,
)

from evtui.bench.estimate import (
    SweepClock,
    SweepCost,
    quick_methods,
)
from evtui.bench.sweep import SweepChild
from evtui.tui.data import default_dataset
from evtui.tui.messages import (
    SweepProgress,
)
from evtui.tui.screens.bench.common import DEFAULT_CSV, NARROW, RUN_COLUMNS, bench_methods
from evtui.tui.screens.bench.items_tab import ItemsTab
from evtui.tui.screens.bench.runs_tab import RunsTab
from evtui.tui.screens.bench.sweep_tab import SweepTab
from evtui.tui.suggest import PathSuggester
from evtui.tui.widgets.checklist import CheckList
from evtui.tui.widgets.keybar import KeyBar
from evtui.tui.widgets.paged import RowTable
from evtui.tui.widgets.tickbox import TickBox

if TYPE_CHECKING:
    from evtui.library import Library



class BenchScreen(SweepTab, RunsTab, ItemsTab):
    BINDINGS = [
        Binding("r", "run", "Run sweep", id="bench.run"),
        Binding("c", "cancel", "Cancel sweep", id="bench.cancel"),
        Binding("space", "mark", "Mark", id="bench.mark"),
        Binding("d", "diff", "Diff marked", id="bench.diff"),
        Binding("w", "export_csv", "CSV", id="bench.csv"),
        Binding("x", "swap_diff", "Swap A/B", id="bench.swap"),
        Binding("escape", "close_csv", "Close CSV", id="bench.csv_close"),
        Binding("j", "cursor_down", "Down", show=False, id="bench.down"),
        Binding("k", "cursor_up", "Up", show=False, id="bench.up"),
        Binding("1", "tab('sweep')", "Sweep", id="bench.tab_sweep"),
        Binding("2", "tab('runs')", "Runs", id="bench.tab_runs"),
        Binding("3", "tab('items')", "Items", id="bench.tab_items"),
        Binding("ctrl+r", "reload_runs", "Reload runs", show=False, id="bench.reload"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.cancel_event = threading.Event()
        self._child: SweepChild | None = None  # the running sweep's process
        self.running = False
        self._start_pending = False
        self._stored_rows: list[dict[str, Any]] = []  # runs of the sweep being started that are stored already
        self.sweep_started = 0.0
        self.results: dict[str, dict[str, Any]] = {}  # run id → result of this session's sweeps
        self.runs: list[dict[str, Any]] = []
        self.marked: list[str] = []
        self.per_item: dict[str, dict[str, float]] = {}
        self.items_run: dict[str, Any] | None = None  # the run whose items are listed
        self._items_cache: dict[str, dict[str, dict[str, Any]]] = {}
        self._drill_lock = threading.RLock()
        self._drill_lib: tuple[str, Library] | None = None
        self._rankers: dict[tuple[str, str, int, str], Any] = {}
        self.diff: tuple[dict[str, Any], dict[str, Any]] | None = None  # (A, B) when Items lists a diff
        self._shown_item: str | None = None  # the item the detail pane is about
        # the drill-down the detail pane shows (drill_worker's arguments), drawn again when the theme changes
        self._drilled: tuple[Path, str, str, int, str, float | None, dict[str, Any]] | None = None
        self._missing_data: set[str] = set()  # dataset files already reported missing
        # the Sweep tab's cost line: the estimate of the current selection (made in a worker, see refresh_cost)
        self.cost: SweepCost | None = None
        self._cost_key: tuple[Any, ...] | None = None
        self._cost_timer: Any = None
        self.sweep_plan: list[float] | None = None  # the next sweep's estimated seconds per run (its ETA)
        self.clock: SweepClock | None = None  # the running sweep's time left
        self._progress: SweepProgress | None = None  # its last progress, redrawn each second with the time left

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial="sweep", id="bench-tabs"):
            with TabPane("Sweep", id="sweep"):
                with Horizontal(id="bench-config"):
                    with Vertical(id="bench-data"):
                        yield Label("dataset (EvidenceBench JSON)")
                        yield Input(placeholder="path to an EvidenceBench JSON file", id="dataset",
                                    suggester=PathSuggester())
                        yield Static("", id="dataset-note")
                        with Horizontal(id="bench-judge"):
                            # the judge the Search screen uses (the config's `judge`), so the two agree
                            judge = getattr(self.evtui.config, "judge", "local")
                            yield Select([("judge: local", "local"), ("judge: llm", "llm")],
                                         value=judge if judge in ("local", "llm") else "local",
                                         id="bench-judge-kind", allow_blank=False)
                            yield Input(placeholder="LLM model (litellm string)", id="bench-model")
                        with Horizontal(id="bench-buttons"):
                            yield Button("Run (r)", id="run", variant="primary")
                            yield Button("Cancel (c)", id="cancel", variant="error", disabled=True)
                    with Vertical(id="bench-tasks"):
                        yield Label("tasks")
                        yield CheckList[str](*[(t, t, i == 0) for i, t in enumerate(self.task_names())],
                                             id="tasks")
                    with Vertical(id="bench-methods"):
                        yield Label("methods")
                        yield CheckList[str](*[(m, m, False) for m in bench_methods()], id="methods")
                yield Static("", id="sweep-cost")
                with Horizontal(id="sweep-progress"):
                    # no built-in ETA: it follows the bar's recent speed and jumped (12:10 → 5:19 → 5:04);
                    # #sweep-text says the time left at the pace of the items done so far
                    yield ProgressBar(id="sweep-bar", show_eta=False)
                    yield Static("", id="sweep-text")
                yield RowTable(id="sweep-results", cursor_type="row", zebra_stripes=True)
                yield Static("", id="sweep-legend")
            with TabPane("Runs", id="runs"):
                with Horizontal(id="runs-main"):
                    yield RowTable(id="runs-table", cursor_type="row", zebra_stripes=True)
                    with VerticalScroll(id="runs-side"):
                        yield Static(id="compare")
                        yield Static(id="chart")
                # Shown by `w` only: a hidden Input can never hold the focus that j/k/space are meant for.
                with Horizontal(id="csv-row"):
                    yield Input(placeholder="CSV file to write", id="csv-path", suggester=PathSuggester(),
                                select_on_focus=False)
                    yield TickBox("per-item CSV too", id="csv-items")
                    yield Button("Write", id="csv-write", variant="primary")
            with TabPane("Items", id="items"):
                yield Label("enter on a run (Sweep or Runs) lists its items here", id="items-title")
                yield Static(id="items-plot")
                with Horizontal(id="items-main"):
                    yield RowTable(id="items-table", cursor_type="row", zebra_stripes=True)
                    with VerticalScroll(id="item-pane"):
                        yield Static(id="item-detail")
        yield KeyBar()

    @staticmethod
    def task_names() -> list[str]:
        from evtui.bench import TASKS

        return list(TASKS)

    def on_mount(self) -> None:
        ds = default_dataset()
        if ds is not None:
            dataset = self.query_one("#dataset", Input)
            dataset.value = str(ds)
            # the file's name in sight, not only its folders: at 80 columns the field showed "/work/shared/datasets/",
            # and with the view at the text's end (where the cursor goes) the name's first letters: "ncebench_dev_set"
            self.call_after_refresh(lambda: dataset.scroll_to(
                x=min(dataset.max_scroll_x, len(dataset.value) - len(ds.name)), animate=False))
        self.query_one("#bench-model", Input).value = self.evtui.judge_model() or ""
        methods = self.query_one("#methods", SelectionList)
        for m in quick_methods():  # no embedding, no LLM: seconds on the demo's dataset (BENCHMARKS.md)
            methods.select(m)
        self.query_one("#sweep-progress").display = False
        sweep = self.query_one("#sweep-results", DataTable)
        for col, w in (("task", 18), ("method", 14), ("items", 5), ("skipped", 7), ("aspect recall", 15),
                       ("", 22), ("seconds", 7), ("run", 12)):
            sweep.add_column(col, width=w)
        runs = self.query_one("#runs-table", DataTable)
        for col, w in RUN_COLUMNS:  # what tells runs apart first: a narrow screen cuts the right-hand columns
            runs.add_column(col, width=w)
        self.query_one("#csv-row").display = False
        self.query_one("#csv-path", Input).value = str(self.evtui.ui_state.get("bench_csv_path", DEFAULT_CSV))
        self.query_one("#csv-items", Checkbox).value = bool(self.evtui.ui_state.get("bench_csv_items", False))
        self.fill_items()
        self.action_reload_runs()
        self.update_dataset_note()
        self.schedule_cost()
        self.set_interval(1.0, self.show_time_left)

    def cursor_list(self) -> DataTable[Any] | OptionList | None:
        # the task and method checklists are OptionLists: j/k move in them as in the tables
        return self.focused if isinstance(self.focused, (DataTable, OptionList)) else None

    # the list each tab's keys act on: it takes the focus when its tab is shown
    TAB_LISTS: ClassVar[dict[str, str]] = {"sweep": "#sweep-results", "runs": "#runs-table", "items": "#items-table"}

    def action_tab(self, tab: str) -> None:
        # Focus the new tab's list first: the focused widget left behind in a hidden pane would otherwise be
        # focused again and its pane shown (TabbedContent follows the focus), so `1` never left Runs or Items.
        if tab != "runs" or not self.query_one("#csv-row").has_focus_within:
            self.query_one(self.TAB_LISTS[tab], DataTable).focus()
        self.query_one(TabbedContent).active = tab

    # Each of these keys belongs to one tab: elsewhere it is off the key bar and passes through.
    TAB_ACTIONS: ClassVar[dict[str, str]] = {"mark": "runs", "diff": "runs", "export_csv": "runs",
                                             "swap_diff": "items"}

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "close_csv":  # only while the CSV row is open: else escape is the app's "back"
            return self.is_mounted and bool(self.query_one("#csv-row").display)
        if action == "cancel":  # on the bar only while there is a sweep to cancel, as the Library's embedding
            return self.running
        tab = self.TAB_ACTIONS.get(action)
        if tab is None or not self.is_mounted:
            return True
        if self.query_one(TabbedContent).active != tab:
            return False
        if action == "diff" and len(self.marked) != 2:
            return None  # shown, greyed: mark two runs first
        if action == "swap_diff" and self.diff is None:
            return False
        return True

    @on(TabbedContent.TabActivated, "#bench-tabs")
    def tab_shown(self, event: TabbedContent.TabActivated) -> None:
        self.refresh_bindings()
        if event.pane.id == "runs":
            self.call_after_refresh(self.update_side)  # the chart's bars fit the pane as now laid out
        # The tab's own list takes the focus, so j/k/space/enter act on what is shown, never on a hidden widget.
        table = {"runs": "#runs-table", "items": "#items-table"}.get(str(event.pane.id))
        if table is not None and not self.query_one("#csv-row").has_focus_within:
            self.query_one(table, DataTable).focus()

    @on(events.Resize)
    def fit_layout(self) -> None:
        """Below 110 columns the Runs and Items tabs stack their table over their side pane (app.tcss)."""
        narrow = self.size.width < NARROW
        if narrow != self.has_class("-narrow"):
            self.set_class(narrow, "-narrow")
            self.call_after_refresh(self.refill_items)
        else:
            self.call_after_refresh(self.fill_plot)
        self.call_after_refresh(self.update_side)  # the chart's bars fit the side pane's new width

    def palette_changed(self) -> None:
        """A theme picked (EvtuiApp.watch_theme): the chart, the score plot and a drill-down's aspect dots are
        drawn again in the palette that reads on its background."""
        self.update_side()
        self.fill_plot()
        self.redraw_drill()

    def on_unmount(self) -> None:
        self.cancel_event.set()
        if (child := self._child) is not None:
            child.cancel()
        self.close_drill_library()
