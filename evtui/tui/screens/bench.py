"""The Bench screen: EvidenceBench sweeps in a background worker, stored runs side by side, item drill-down.

A sweep runs `evtui.bench.run_evidencebench` — the same harness as `evtui bench evidencebench` — once per
(task, method), through the driver's `RunBook` as the CLI does: each item is stored as it finishes, a run left
unfinished (cancelled between items — the progress callback raises — or killed) is finished by the next sweep
with the same arguments. Drilling into an item re-ranks it label-blind through the harness's own ranker and only
then reads its labels (evtui.bench.report) to show what was picked, what it covered and which aspects were missed.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from rich.console import Group
from rich.text import Text
from textual import events, on, work
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.coordinate import Coordinate
from textual.widgets import (
    Button,
    Checkbox,
    DataTable,
    Header,
    Input,
    Label,
    ProgressBar,
    Select,
    SelectionList,
    Static,
    TabbedContent,
    TabPane,
)

from evtui import methods as registry
from evtui.bench.driver import RunBook
from evtui.bench.estimate import (
    IN_SAMPLE_NOTE,
    IN_SAMPLE_STYLE,
    SweepClock,
    SweepCost,
    bench_db,
    duration,
    estimate_cost,
    in_sample,
    missing_embeddings,
    paper_sentences,
    quick_methods,
    read_missing_embeddings,
)
from evtui.bench.report import (
    chart,
    compare,
    estimate_sweep,
    item_diff,
    item_report,
    primary_metric,
    score_plot,
    short_item_id,
)
from evtui.bench.runs import ItemResult
from evtui.bench.sweep import ItemBatches, SweepCancelled, SweepChild
from evtui.errors import EvtuiError
from evtui.render import plain, safe_text
from evtui.tui.base import EvtuiScreen, failure_text
from evtui.tui.data import bar, default_dataset, short
from evtui.tui.messages import (
    ItemDetail,
    SweepEstimate,
    SweepFinished,
    SweepProgress,
    SweepRunDone,
    WorkFailed,
)
from evtui.tui.screens.modals import ConfirmScreen
from evtui.tui.suggest import PathSuggester
from evtui.tui.widgets.checklist import CheckList
from evtui.tui.widgets.keybar import KeyBar
from evtui.tui.widgets.tickbox import TickBox

if TYPE_CHECKING:
    from evtui.library import Library


def judge_methods() -> tuple[str, ...]:
    """The harness's judge strategies (llm-rerank, llm-sbs, evidential)."""
    return registry.judge_methods()


def bench_methods() -> list[str]:
    """Every method the EvidenceBench harness runs: the search methods, then the judge strategies."""
    return list(registry.bench_methods())


def calls_llm(method: str, judge: str) -> bool:
    """Does this method make LLM calls (which cost money) with this judge?"""
    m = registry.lookup(method)
    return m is not None and m.calls_llm(judge)


PROGRESS_EVERY = 0.1  # seconds between progress redraws during a sweep
NARROW = 110  # columns below which the Runs and Items tabs stack their panes
DEFAULT_CSV = "~/evtui-runs.csv"  # where `w` in the Runs tab writes first (then: the last path written)
# The runs table's columns (title, width): what tells runs apart first, so a narrow screen cuts the rest.
RUN_COLUMNS = (("✓", 1), ("task", 18), ("method", 13), ("metric", 15), ("items", 5), ("dataset", 20),
               ("seconds", 7), ("run", 12))


def metric_cell(value: float | None, run: dict[str, Any], width: int, decimals: int) -> Text:
    """A run's figure, marked "in-sample" (evtui.bench.estimate.in_sample) when its model was trained on the
    run's dataset: that figure is not what to expect on new papers."""
    if value is None:
        return Text("—")
    out = Text(f"{value:{width}.{decimals}f}")
    if in_sample(run):
        out.stylize(IN_SAMPLE_STYLE)
        out.append(" in-sample", style=IN_SAMPLE_STYLE)
    return out


def run_id(run: dict[str, Any]) -> str:
    """A sweep result carries `run_id`, a stored run `id`."""
    return str(run.get("run_id") or run.get("id") or "")



class BenchScreen(EvtuiScreen):
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
                yield DataTable(id="sweep-results", cursor_type="row", zebra_stripes=True)
                yield Static("", id="sweep-legend")
            with TabPane("Runs", id="runs"):
                with Horizontal(id="runs-main"):
                    yield DataTable(id="runs-table", cursor_type="row", zebra_stripes=True)
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
                    yield DataTable(id="items-table", cursor_type="row", zebra_stripes=True)
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
            self.query_one("#dataset", Input).value = str(ds)
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

    # -- configuration -----------------------------------------------------------------------------
    @on(Input.Changed, "#dataset")
    def update_dataset_note(self) -> None:
        raw = self.query_one("#dataset", Input).value.strip()
        note = self.query_one("#dataset-note", Static)
        if not raw:
            note.update(Text("no dataset: type the path of an EvidenceBench JSON file", style="dim"))
            return
        p = Path(raw).expanduser()
        note.update(Text("found" if p.is_file() else "no such file", style="green" if p.is_file() else "yellow"))

    # -- what the selected sweep will cost ---------------------------------------------------------
    def selection(self) -> tuple[Path, list[str], list[str], str] | None:
        """(dataset file, tasks, methods, judge) as chosen now; None when something is missing."""
        raw = self.query_one("#dataset", Input).value.strip()
        tasks = list(self.query_one("#tasks", SelectionList).selected)
        methods = list(self.query_one("#methods", SelectionList).selected)
        if not raw or not tasks or not methods:
            return None
        return Path(raw).expanduser(), tasks, methods, str(self.query_one("#bench-judge-kind", Select).value)

    @on(SelectionList.SelectedChanged, "#tasks, #methods")
    @on(Select.Changed, "#bench-judge-kind")
    @on(Input.Changed, "#dataset")
    def schedule_cost(self) -> None:
        """A new selection: estimate it once the typing or ticking pauses."""
        if self._cost_timer is not None:
            self._cost_timer.stop()
        self._cost_timer = self.set_timer(0.2, self.refresh_cost)

    def refresh_cost(self) -> None:
        line = self.query_one("#sweep-cost", Static)
        sel = self.selection()
        if sel is None:
            self.cost = None
            line.update(Text("choose a dataset, at least one task and one method", style="dim"))
            return
        if self.running:  # the sweep's process holds the benchmark library; estimate when it is done
            return
        self._cost_key = key = (time.monotonic(), *sel[:1], tuple(sel[1]), tuple(sel[2]), sel[3])
        line.update(Text("estimating the sweep's cost…", style="dim"))
        self.cost_worker(key, *sel)

    @work(thread=True, exclusive=True, group="bench-cost")
    def cost_worker(self, key: tuple[Any, ...], data: Path, tasks: list[str], methods: list[str],
                    judge: str) -> None:
        try:
            cost: SweepCost | str = self.sweep_cost(data, tasks, methods, judge)
        except EvtuiError as exc:
            cost = str(exc)
        except Exception as exc:  # noqa: BLE001 - an estimate that fails must not stop a sweep from running
            cost = f"no estimate: {failure_text(exc)}"
        self.post_message(SweepEstimate(key, cost))

    def sweep_cost(self, data: Path, tasks: list[str], methods: list[str], judge: str) -> SweepCost:
        """The estimate (evtui.bench.estimate), with the benchmark library's papers still to embed read now
        (a worker: it opens the library read-only for the look, or reads the drill-down's open one)."""
        items = self.items_for(data)
        papers = list(paper_sentences(items))
        with self._drill_lock:  # the drill-down's library holds the file: read through it, never beside it
            if self._drill_lib is not None and self._drill_lib[0] == str(data):
                missing: dict[str, int] | None = missing_embeddings(self._drill_lib[1].store.con, papers)
            else:
                missing = read_missing_embeddings(bench_db(data, self.evtui.config.home), papers)
        return estimate_cost(data, items, tasks, methods, judge, self.runs, missing)

    def on_sweep_estimate(self, msg: SweepEstimate) -> None:
        if msg.key != self._cost_key:
            return  # made for an older selection
        line = self.query_one("#sweep-cost", Static)
        if isinstance(msg.cost, str):
            self.cost = None
            line.update(Text(msg.cost, style="yellow"))
            return
        self.cost = msg.cost
        line.update(self.cost_text(msg.cost))

    @staticmethod
    def cost_text(cost: SweepCost) -> Text:
        warn = cost.slow or cost.llm_methods or cost.papers_to_embed is None
        return Text.assemble(("this sweep: ", "dim"), (cost.line(), "yellow" if warn else "green"))

    def cursor_list(self) -> DataTable[Any] | None:
        return self.focused if isinstance(self.focused, DataTable) else None

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab

    # -- the sweep ---------------------------------------------------------------------------------
    @on(Button.Pressed, "#run")
    def action_run(self) -> None:
        if self.running:
            self.notify("a sweep is already running (c cancels it)", title="Bench", severity="warning")
            return
        if self.evtui.library is None:
            return
        raw = self.query_one("#dataset", Input).value.strip()
        if not raw:
            self.notify("choose the dataset file first", title="Bench", severity="warning")
            self.query_one("#dataset", Input).focus()
            return
        data = Path(raw).expanduser()
        tasks = list(self.query_one("#tasks", SelectionList).selected)
        methods = list(self.query_one("#methods", SelectionList).selected)
        if not tasks or not methods:
            self.notify("choose at least one task and one method", title="Bench", severity="warning")
            return
        try:
            from evtui.bench.evidencebench import load_items

            items = load_items(data)
        except EvtuiError as exc:
            self.notify(str(exc), title="Bench", severity="error", timeout=10)
            return
        self._items_cache[str(data)] = items
        combos = [(t, m) for t in tasks for m in methods]
        self.llm_judge_for(methods)
        opts = self.judge_opts()
        judge = str(opts.get("judge", "llm"))
        llm = [m for m in methods if calls_llm(m, judge)]
        if llm:
            self.notify("estimating the cost of the LLM calls…", title="Bench", timeout=3)
            self.estimate_worker(data, tasks, llm, combos, len(items), opts)
        elif any(registry.uses_embeddings(m) for m in methods):  # the library says what is left to embed
            self.run_cost_worker(data, tasks, methods, combos, len(items), opts)
        else:  # nothing to embed, nothing to pay: decided here, at once
            built = bench_db(data, self.evtui.config.home).exists()
            missing = dict.fromkeys(paper_sentences(items), 0) if built else {}
            self.run_or_confirm(estimate_cost(data, items, tasks, methods, judge, self.runs, missing), data,
                                combos, len(items), opts)

    @on(SelectionList.SelectedChanged, "#methods")
    def methods_changed(self) -> None:
        self.llm_judge_for(list(self.query_one("#methods", SelectionList).selected))

    def llm_judge_for(self, methods: list[str]) -> None:
        """A method that always prompts an LLM (llm-sbs) cannot run with the local judge: ticking it sets the
        judge to llm, and says so."""
        always = [m for m in methods if (x := registry.lookup(m)) is not None and x.llm == "always"]
        judge = self.query_one("#bench-judge-kind", Select)
        if always and judge.value != "llm":
            judge.value = "llm"
            self.notify(f"{', '.join(always)} always prompts an LLM: the judge is now llm", title="Bench")

    @work(thread=True, exclusive=True, group="bench-estimate")
    def run_cost_worker(self, data: Path, tasks: list[str], methods: list[str], combos: list[tuple[str, str]],
                        n_items: int, opts: dict[str, Any]) -> None:
        with self.failures("Bench"):
            cost = self.sweep_cost(data, tasks, methods, str(opts.get("judge", "llm")))
            self.app.call_from_thread(self.run_or_confirm, cost, data, combos, n_items, opts)

    def run_or_confirm(self, cost: SweepCost, data: Path, combos: list[tuple[str, str]], n_items: int,
                       opts: dict[str, Any]) -> None:
        """Start a quick sweep at once; ask first before a slow one (long, or it embeds papers)."""
        if not cost.slow:
            self.sweep_plan = [r.total for r in cost.runs]
            self.start_sweep(data, combos, n_items, opts)
            return

        def go(yes: bool | None) -> None:
            if yes:
                self.sweep_plan = [r.total for r in cost.runs]
                self.start_sweep(data, combos, n_items, opts)

        self.app.push_screen(ConfirmScreen("Run a slow sweep?", self.cost_body(cost), yes="Run"), go)

    @staticmethod
    def cost_body(cost: SweepCost) -> Text:
        body = Text()
        body.append(cost.line() + "\n", style="bold")
        for line in cost.details():
            body.append(line + "\n", style="dim")
        return body

    def judge_opts(self) -> dict[str, Any]:
        """What the judge strategies get (as `evtui bench evidencebench --judge --model --api-base`)."""
        opts: dict[str, Any] = {"judge": str(self.query_one("#bench-judge-kind", Select).value)}
        model = self.query_one("#bench-model", Input).value.strip()
        if model:
            opts["model"] = model
        api_base = self.evtui.judge_setting("api_base")
        if api_base:
            opts["api_base"] = api_base
        return opts

    @work(thread=True, exclusive=True, group="bench-estimate")
    def estimate_worker(self, data: Path, tasks: list[str], methods: list[str],
                        combos: list[tuple[str, str]], n_items: int, opts: dict[str, Any]) -> None:
        with self.failures("Bench"):
            est = self.estimate_sweep(data, tasks, methods, opts)
            every = list(dict.fromkeys(m for _t, m in combos))
            cost = self.sweep_cost(data, tasks, every, str(opts.get("judge", "llm")))
            self.app.call_from_thread(self.confirm_llm, est, data, combos, n_items, opts, cost)

    def estimate_sweep(self, data: Path, tasks: list[str], methods: list[str], opts: dict[str, Any]) -> dict[str, Any]:
        """The LLM calls, tokens and USD the chosen judge strategies would take on this dataset (cached verdicts
        and completions count nothing; a (hypothesis, sentence) pair shared by tasks or methods counts once)."""
        items = self.items_for(data)
        with self._drill_lock:
            return estimate_sweep(self.drill_library(data), items, tasks, methods, opts)

    def confirm_llm(self, est: dict[str, Any], data: Path, combos: list[tuple[str, str]], n_items: int,
                    opts: dict[str, Any], cost: SweepCost | None = None) -> None:
        body = self.cost_body(cost) if cost is not None else Text()
        body.append(f"{', '.join(est['methods'])} with {est['model']}\n")
        body.append(f"~{est['calls']:,} call(s) ({est['cached']:,} cached) · ~{est['tokens_in']:,} tokens in · "
                    f"~{est['tokens_out']:,} out\n")
        body.append(f"estimated cost ~${est['cost']:.4f}\n", style="bold")
        for note in est["notes"]:
            body.append(f"{note}\n", style="dim")

        def go(yes: bool | None) -> None:
            if yes:
                self.sweep_plan = [r.total for r in cost.runs] if cost is not None else None
                self.start_sweep(data, combos, n_items, opts)

        self.app.push_screen(ConfirmScreen("Run an LLM sweep?", body, yes="Run"), go)

    def start_sweep(self, data: Path, combos: list[tuple[str, str]], n_items: int,
                    opts: dict[str, Any] | None = None) -> None:
        if not self._drill_lock.acquire(blocking=False):
            self.notify("an item is being re-ranked: start the sweep when it is shown", title="Bench",
                        severity="warning")
            return
        try:
            self.close_drill_library()
        finally:
            self._drill_lock.release()
        self.cancel_event.clear()
        self.running = True
        self.sweep_started = time.monotonic()
        self.query_one("#cancel", Button).disabled = False
        self.query_one("#run", Button).disabled = True
        self.query_one("#sweep-progress").display = True
        bar_ = self.query_one("#sweep-bar", ProgressBar)
        bar_.update(total=max(1, n_items * len(combos)), progress=0)
        self.query_one("#sweep-text", Static).update(plain(f"loading {data.name}…"))
        self.sweep_worker(data, combos, opts or {})

    @work(thread=True, exclusive=True, group="sweep")
    def sweep_worker(self, data: Path, combos: list[tuple[str, str]], opts: dict[str, Any]) -> None:
        """Relay a sweep that runs in a child process (evtui.bench.sweep): this thread only stores each finished
        item and posts progress, so the UI thread never waits for the GIL behind the ranking."""
        from evtui.bench import save_run
        from evtui.bench.evidencebench import dataset_name, run_params

        app = self.evtui
        library = app.library
        assert library is not None
        completed = 0
        last = 0.0
        try:
            child = SweepChild()
        except OSError as exc:
            self.post_message(WorkFailed("Bench", f"cannot start the sweep process: {failure_text(exc)}"))
            self.post_message(SweepFinished(0, False))
            return
        self._child = child
        if self.cancel_event.is_set():  # cancelled while the child was starting
            child.cancel()
        try:
            for n, (task, method) in enumerate(combos):
                label = f"{task} · {method}"

                def progress(done: int, total: int, n: int = n, label: str = label) -> None:
                    nonlocal last
                    now = time.monotonic()
                    if now - last >= PROGRESS_EVERY or done == total:  # a redraw per item would be wasted work
                        last = now
                        self.post_message(SweepProgress(n, len(combos), done, total, label))

                book: RunBook | None = None
                try:
                    if self.cancel_event.is_set():
                        raise SweepCancelled
                    judged = method in judge_methods()
                    # Stored as the CLI stores it, item by item: a sweep killed or cancelled midway is picked up
                    # again by the next one with the same arguments (as `evtui bench … --resume`).
                    with library.rw(), app.db_lock:  # read-only between the app's writes (Library.rw)
                        book = RunBook(library, dataset_name(data), [task], method,
                                       run_params(data, 0, opts if judged else None), resume=True)
                        done = book.done(task)
                    if done:
                        self.app.call_from_thread(self.notify, f"{label}: resuming run {book.run_id(task)}, "
                                                  f"{len(done)} item(s) already done", title="Bench")
                    record = book.recorder(task)

                    def store(items: list[ItemResult], record: Callable[[ItemResult], None] | None = record) -> None:
                        if record is not None:
                            with library.rw(), app.db_lock:
                                for item in items:
                                    record(item)

                    batches = ItemBatches(store)
                    try:
                        res = child.run(data, task, method, home=app.config.home, seed=0,
                                        judge_opts=opts if judged else None, done=done, on_progress=progress,
                                        on_item=batches.add)
                    finally:
                        batches.flush()  # a cancelled or failed run keeps every item it finished
                    with library.rw(), app.db_lock:
                        res["run_id"] = save_run(library, res, book.params, run_id=book.run_id(task))
                except SweepCancelled:
                    self._forget_empty(book)
                    self.post_message(SweepFinished(completed, True))
                    return
                except Exception as exc:  # noqa: BLE001 - one failing method must not end the app or the sweep
                    self._forget_empty(book)
                    self.post_message(WorkFailed("Bench", f"{label}: {failure_text(exc)}"))
                    continue
                res["data"] = str(data)
                res["seed"] = 0
                res["judge_opts"] = opts if method in judge_methods() else {}
                completed += 1
                self.post_message(SweepRunDone(res))
            self.post_message(SweepFinished(completed, False))
        finally:
            self._child = None
            child.close()

    def _forget_empty(self, book: RunBook | None) -> None:
        """A run stopped before its first item leaves nothing to resume (a sweep thread: errors are reported)."""
        if book is None or self.evtui.library is None:
            return
        try:
            with self.evtui.library.rw(), self.evtui.db_lock:
                book.discard_empty()
        except Exception as exc:  # noqa: BLE001 - the sweep's own outcome is what the user needs to see
            self.post_message(WorkFailed("Bench", f"cannot tidy the stopped run: {failure_text(exc)}"))

    def on_sweep_progress(self, msg: SweepProgress) -> None:
        if not self.running:
            return
        bar_ = self.query_one("#sweep-bar", ProgressBar)
        bar_.update(total=max(1, msg.total * msg.runs), progress=msg.run * msg.total + msg.done)
        self.sweep_clock().progress(msg.run, msg.runs, msg.done, msg.total, time.monotonic())
        self._progress = msg
        self.show_time_left()

    def sweep_clock(self) -> SweepClock:
        if self.clock is None or self.clock.start != self.sweep_started:  # a new sweep
            self.clock, self._progress = SweepClock(self.sweep_plan, self.sweep_started), None
        return self.clock

    def show_time_left(self) -> None:
        """The progress line with the time left (evtui.bench.estimate.SweepClock): on each progress, and each
        second between them, so a slow item shows the time passing rather than a frozen promise."""
        if not self.running:
            return
        left = self.sweep_clock().left(time.monotonic())
        when = f"~{duration(left)} left" if left is not None else ""
        if self.clock is not None and self.clock.run == 0 and self.clock.done == 0 and left is not None:
            when += " (estimate)"
        msg = self._progress
        if msg is None:
            if when:
                self.query_one("#sweep-text", Static).update(f"starting · {when}", layout=False)
            return
        # what changes first, the run's label last: a narrow screen cuts the end
        self.query_one("#sweep-text", Static).update(
            f"item {msg.done}/{msg.total}" + (f" · {when}" if when else "")
            + f" · run {msg.run + 1}/{msg.runs} · {msg.label}", layout=False)

    def on_sweep_run_done(self, msg: SweepRunDone) -> None:
        r = msg.result
        self.results[r["run_id"]] = r
        self.per_item[r["run_id"]] = r["per_item"]
        table = self.query_one("#sweep-results", DataTable)
        value = float(r["aspect_recall"])
        table.add_row(r["task"], r["method"], str(r["n_items"]), str(r["n_skipped"]), metric_cell(value, r, 5, 1),
                      bar(value, 100.0, 20, "green"), f"{r['seconds']:7.1f}", r["run_id"], key=r["run_id"])
        if in_sample(r):
            legend = self.query_one("#sweep-legend", Static)
            legend.update(Text(IN_SAMPLE_NOTE, style=IN_SAMPLE_STYLE))
            legend.display = True
        self.action_reload_runs()

    def on_sweep_finished(self, msg: SweepFinished) -> None:
        self.running = False
        self.query_one("#cancel", Button).disabled = True
        self.query_one("#run", Button).disabled = False
        text = self.query_one("#sweep-text", Static)
        if msg.cancelled:
            text.update(Text(f"cancelled · {msg.completed} run(s) finished and stored", style="yellow"))
            self.notify(f"sweep cancelled; {msg.completed} finished run(s) kept", title="Bench", severity="warning")
        else:
            bar_ = self.query_one("#sweep-bar", ProgressBar)
            bar_.update(progress=bar_.total or 0)
            text.update(Text(f"done · {msg.completed} run(s) stored", style="green"))
            self.notify(f"sweep done: {msg.completed} run(s) stored", title="Bench")
        self.sweep_plan = self.clock = self._progress = None
        self.schedule_cost()  # the stored runs now time this selection

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        if not self.running:
            self.notify("no sweep is running", title="Bench", severity="warning")
            return
        self.cancel_event.set()
        if (child := self._child) is not None:
            child.cancel()
        self.query_one("#sweep-text", Static).update("cancelling after the current item…")

    # -- stored runs -------------------------------------------------------------------------------
    def action_reload_runs(self) -> None:
        from evtui.bench import list_runs

        view = self.evtui.view
        if view is None:
            return
        try:
            with self.evtui.db_gate:  # the UI thread's reads take the gate (a shared library's switch)
                self.runs = list_runs(view)  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001 - an old or damaged runs table must not close the screen
            self.notify(f"cannot list stored runs: {exc}", title="Bench", severity="error")
            self.runs = []
        table = self.query_one("#runs-table", DataTable)
        row = table.cursor_row
        table.clear()
        self.marked = [rid for rid in self.marked if any(r["id"] == rid for r in self.runs)]
        for r in self.runs:
            _name, value = primary_metric(r)
            metric = metric_cell(value, r, 6, 4 if value is not None and abs(value) < 1 else 2)
            table.add_row("✓" if r["id"] in self.marked else "", plain(r["task"]), plain(r["method"]), metric,
                          str(r["n_items"]), Text(short(r["dataset"].split(":", 1)[-1], 20)),
                          f"{r['seconds']:7.1f}", plain(r["id"]), key=r["id"])
        if self.runs:
            table.move_cursor(row=max(0, min(row, len(self.runs) - 1)), animate=False)
        self.update_side()

    def update_side(self) -> None:
        marked = [r for r in self.runs if r["id"] in self.marked]
        for r in marked:
            if r["id"] not in self.per_item:
                self.per_item[r["id"]] = self.stored_per_item(r["id"])
        hint = Text("d lists the items where these two differ most", style="dim") if len(marked) == 2 else Text()
        self.query_one("#compare", Static).update(Group(compare(marked, self.per_item), hint))
        # "    method ▕bar▏ 100.0": the bar gets what the label, the value and the padding leave
        width = max(10, self.query_one("#runs-side").size.width - 30) if self.is_mounted else 30
        self.query_one("#chart", Static).update(chart(self.runs, width=min(40, width)))

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

    # Each of these keys belongs to one tab: elsewhere it is off the key bar and passes through.
    TAB_ACTIONS: ClassVar[dict[str, str]] = {"mark": "runs", "diff": "runs", "export_csv": "runs",
                                             "swap_diff": "items"}

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "close_csv":  # only while the CSV row is open: else escape is the app's "back"
            return self.is_mounted and bool(self.query_one("#csv-row").display)
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
                (f"{run['task']} · {run['method']}", "bold"),
                (f" · {len(per_item)} scored item(s) · run {run_id(run)}", "dim")))
            hint = "enter on an item re-ranks it and explains its score"
        else:
            a, b = self.diff
            rows = item_diff(a.get("per_item") or {}, b.get("per_item") or {})
            title.update(Text.assemble(
                ("A ", "bold"), (f"{a['method']} · {a['task']}", "bold cyan"), (" vs B ", "bold"),
                (f"{b['method']} · {b['task']}", "bold magenta"),
                (f" · {len(rows)} both scored, most different first", "dim")))
            hint = "enter on an item re-ranks it with run A and explains its score (x makes the other run A)"
        self.query_one("#item-detail", Static).update(Text(hint, style="dim"))
        self._shown_item = None
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
        plot.update(score_plot(series, width=width))

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
        self.drill_worker(Path(data), run["task"], run["method"], int(run.get("seed") or 0), item_id, stored,
                          run.get("judge_opts") or {})

    @work(thread=True, exclusive=True, group="drill")
    def drill_worker(self, data: Path, task: str, method: str, seed: int, item_id: str,
                     stored: float | None, judge_opts: dict[str, Any]) -> None:
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
                text = item_report(lib, item_id, item, task, method, seed, stored, self._rankers[key])
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

    def on_unmount(self) -> None:
        self.cancel_event.set()
        if (child := self._child) is not None:
            child.cancel()
        self.close_drill_library()
