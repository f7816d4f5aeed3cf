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
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.coordinate import Coordinate
from textual.widgets import (
    Button,
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
from textual.worker import get_current_worker

from evtui import methods as registry
from evtui.bench.driver import RunBook
from evtui.bench.report import chart, compare, estimate_sweep, item_report, primary_metric
from evtui.bench.runs import ItemResult
from evtui.errors import EvtuiError
from evtui.render import cell, plain
from evtui.tui.base import EvtuiScreen, failure_text
from evtui.tui.data import bar, default_dataset, short
from evtui.tui.messages import ItemDetail, SweepFinished, SweepProgress, SweepRunDone, WorkFailed
from evtui.tui.screens.modals import ConfirmScreen
from evtui.tui.suggest import PathSuggester
from evtui.tui.widgets.keybar import KeyBar

if TYPE_CHECKING:
    from evtui.library import Library


class SweepCancelled(Exception):
    """Raised from the harness's progress callback to stop a sweep between two items."""


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



class BenchScreen(EvtuiScreen):
    BINDINGS = [
        Binding("r", "run", "Run sweep", id="bench.run"),
        Binding("c", "cancel", "Cancel sweep", id="bench.cancel"),
        Binding("space", "mark", "Mark to compare", id="bench.mark"),
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
                            yield Select([("judge: llm", "llm"), ("judge: local", "local")], value="llm",
                                         id="bench-judge-kind", allow_blank=False)
                            yield Input(placeholder="LLM model (litellm string)", id="bench-model")
                        with Horizontal(id="bench-buttons"):
                            yield Button("Run (r)", id="run", variant="primary")
                            yield Button("Cancel (c)", id="cancel", variant="error", disabled=True)
                    with Vertical(id="bench-tasks"):
                        yield Label("tasks")
                        yield SelectionList[str](*[(t, t, i == 0) for i, t in enumerate(self.task_names())],
                                                 id="tasks")
                    with Vertical(id="bench-methods"):
                        yield Label("methods")
                        yield SelectionList[str](*[(m, m, False) for m in bench_methods()], id="methods")
                with Horizontal(id="sweep-progress"):
                    yield ProgressBar(id="sweep-bar", show_eta=True)
                    yield Static("", id="sweep-text")
                yield DataTable(id="sweep-results", cursor_type="row", zebra_stripes=True)
            with TabPane("Runs", id="runs"):
                with Horizontal(id="runs-main"):
                    yield DataTable(id="runs-table", cursor_type="row", zebra_stripes=True)
                    with VerticalScroll(id="runs-side"):
                        yield Static(id="compare")
                        yield Static(id="chart")
            with TabPane("Items", id="items"):
                yield Label("enter on a run (Sweep or Runs) lists its items here", id="items-title")
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
        import evtui.search as search

        default = search.DEFAULT_METHOD if search.DEFAULT_METHOD in bench_methods() else bench_methods()[0]
        methods.select(default)
        self.query_one("#sweep-progress").display = False
        sweep = self.query_one("#sweep-results", DataTable)
        for col, w in (("task", 18), ("method", 14), ("items", 5), ("skipped", 7), ("aspect recall", 13),
                       ("", 22), ("seconds", 7), ("run", 12)):
            sweep.add_column(col, width=w)
        runs = self.query_one("#runs-table", DataTable)
        for col, w in (("✓", 1), ("dataset", 22), ("task", 18), ("method", 14), ("metric", 8), ("items", 5),
                       ("seconds", 7), ("run", 12)):
            runs.add_column(col, width=w)
        items = self.query_one("#items-table", DataTable)
        items.add_column("item", width=30)
        items.add_column("score", width=6)
        self.action_reload_runs()
        self.update_dataset_note()

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
        opts = self.judge_opts()
        llm = [m for m in methods if calls_llm(m, opts.get("judge", "llm"))]
        if llm:
            self.notify("estimating the cost of the LLM calls…", title="Bench", timeout=3)
            self.estimate_worker(data, tasks, llm, combos, len(items), opts)
        else:
            self.start_sweep(data, combos, len(items), opts)

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
            self.app.call_from_thread(self.confirm_llm, est, data, combos, n_items, opts)

    def estimate_sweep(self, data: Path, tasks: list[str], methods: list[str], opts: dict[str, Any]) -> dict[str, Any]:
        """The LLM calls, tokens and USD the chosen judge strategies would take on this dataset (cached verdicts
        and completions count nothing; a (hypothesis, sentence) pair shared by tasks or methods counts once)."""
        items = self.items_for(data)
        with self._drill_lock:
            return estimate_sweep(self.drill_library(data), items, tasks, methods, opts)

    def confirm_llm(self, est: dict[str, Any], data: Path, combos: list[tuple[str, str]], n_items: int,
                    opts: dict[str, Any]) -> None:
        body = Text()
        body.append(f"{', '.join(est['methods'])} with {est['model']}\n")
        body.append(f"~{est['calls']:,} call(s) ({est['cached']:,} cached) · ~{est['tokens_in']:,} tokens in · "
                    f"~{est['tokens_out']:,} out\n")
        body.append(f"estimated cost ~${est['cost']:.4f}\n", style="bold")
        for note in est["notes"]:
            body.append(f"{note}\n", style="dim")

        def go(yes: bool | None) -> None:
            if yes:
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
        from evtui.bench import run_evidencebench, save_run
        from evtui.bench.evidencebench import dataset_name, run_params

        app = self.evtui
        library = app.library
        assert library is not None
        worker = get_current_worker()
        completed = 0
        last = 0.0
        for n, (task, method) in enumerate(combos):
            label = f"{task} · {method}"

            def progress(done: int, total: int, n: int = n, label: str = label) -> None:
                nonlocal last
                if self.cancel_event.is_set() or worker.is_cancelled:
                    raise SweepCancelled
                now = time.monotonic()
                if now - last >= PROGRESS_EVERY or done == total:  # a redraw per item would be wasted work
                    last = now
                    self.post_message(SweepProgress(n, len(combos), done, total, label))

            book: RunBook | None = None
            try:
                if self.cancel_event.is_set():
                    raise SweepCancelled
                judged = method in judge_methods()
                extra: dict[str, Any] = {"judge_opts": opts} if judged else {}
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

                def on_item(item: ItemResult, record: Callable[[ItemResult], None] | None = record) -> None:
                    if record is not None:
                        with library.rw(), app.db_lock:
                            record(item)

                res = run_evidencebench(data, task, method, seed=0, on_progress=progress, home=app.config.home,
                                        done=done, on_item=on_item, **extra)
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
        self.query_one("#sweep-text", Static).update(
            f"run {msg.run + 1}/{msg.runs} · {msg.label} · item {msg.done}/{msg.total}", layout=False)

    def on_sweep_run_done(self, msg: SweepRunDone) -> None:
        r = msg.result
        self.results[r["run_id"]] = r
        self.per_item[r["run_id"]] = r["per_item"]
        table = self.query_one("#sweep-results", DataTable)
        value = float(r["aspect_recall"])
        table.add_row(r["task"], r["method"], str(r["n_items"]), str(r["n_skipped"]), f"{value:13.1f}",
                      bar(value, 100.0, 20, "green"), f"{r['seconds']:7.1f}", r["run_id"], key=r["run_id"])
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

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        if not self.running:
            self.notify("no sweep is running", title="Bench", severity="warning")
            return
        self.cancel_event.set()
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
        table.clear()
        for r in self.runs:
            _name, value = primary_metric(r)
            table.add_row("✓" if r["id"] in self.marked else "", Text(short(r["dataset"].split(":", 1)[-1], 22)),
                          plain(r["task"]), plain(r["method"]), "—" if value is None else f"{value:8.2f}",
                          str(r["n_items"]), f"{r['seconds']:7.1f}", plain(r["id"]), key=r["id"])
        self.update_side()

    def update_side(self) -> None:
        marked = [r for r in self.runs if r["id"] in self.marked]
        for r in marked:
            if r["id"] not in self.per_item:
                self.per_item[r["id"]] = self.stored_per_item(r["id"])
        self.query_one("#compare", Static).update(compare(marked, self.per_item))
        width = max(10, self.query_one("#runs-side").size.width - 32) if self.is_mounted else 30
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
        if self.query_one(TabbedContent).active != "runs":
            return
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

    # -- items -------------------------------------------------------------------------------------
    @on(DataTable.RowSelected, "#sweep-results, #runs-table")
    def open_run(self, event: DataTable.RowSelected) -> None:
        rid = str(event.row_key.value)
        run = self.results.get(rid)
        if run is None:
            stored = next((r for r in self.runs if r["id"] == rid), None)
            if stored is None:
                return
            if not stored["dataset"].startswith("evidencebench:"):
                self.notify("item drill-down is for EvidenceBench runs", title="Bench", severity="warning")
                return
            params = stored.get("parameters") or {}
            judge_opts = {k: params[k] for k in ("judge", "model") if params.get(k)}
            if judge_opts and self.evtui.judge_setting("api_base"):
                judge_opts["api_base"] = self.evtui.judge_setting("api_base")
            run = {**stored, "per_item": self.stored_per_item(rid), "data": params.get("data"),
                   "seed": params.get("seed", 0), "aspect_recall": primary_metric(stored)[1],
                   "judge_opts": judge_opts}
        self.items_run = run
        table = self.query_one("#items-table", DataTable)
        table.clear()
        per_item = run.get("per_item") or {}
        data = run.get("data")
        items: dict[str, Any] = {}
        if data:
            try:
                items = self.items_for(Path(data))
            except EvtuiError as exc:
                self.notify(str(exc), title="Bench", severity="warning")
        ids = list(items) or list(per_item)
        for item_id in ids:
            score = per_item.get(item_id)
            table.add_row(plain(item_id, oneline=True), "skip" if score is None else f"{score:6.1f}", key=item_id)
        self.query_one("#items-title", Label).update(Text.assemble(
            (f"{run['task']} · {run['method']}", "bold"),
            (f" · {len(per_item)} scored item(s) · run {run.get('run_id') or run.get('id')}", "dim")))
        self.query_one("#item-detail", Static).update(
            Text("enter on an item re-ranks it and explains its score", style="dim"))
        self.action_tab("items")
        table.focus()

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
        if not data:
            self.notify("this run does not record its dataset file", title="Bench", severity="warning")
            return
        if self.running:
            self.notify("the benchmark library is busy with the sweep: drill down when it is done",
                        title="Bench", severity="warning")
            return
        self.query_one("#item-detail", Static).update(Text(f"ranking {item_id}…", style="dim"))
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
        self.query_one("#item-detail", Static).update(cell(msg.text))  # benchmark text: no markup, no escapes
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
        self.close_drill_library()
