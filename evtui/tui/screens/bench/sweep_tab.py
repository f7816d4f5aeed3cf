"""The Sweep tab: choose a dataset, tasks, methods and a judge; see what the sweep will cost; run it in a child
process (evtui.bench.sweep) with progress and time left; its runs land in the results table."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rich.cells import cell_len
from rich.text import Text
from textual import on, work
from textual.message import Message
from textual.widgets import (
    Button,
    DataTable,
    Input,
    ProgressBar,
    Select,
    SelectionList,
    Static,
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
    read_missing_embeddings,
)
from evtui.bench.report import (
    estimate_sweep,
)
from evtui.bench.runs import ItemResult
from evtui.bench.sweep import ItemBatches, SweepCancelled, SweepChild
from evtui.errors import EvtuiError, LibraryLockedError
from evtui.render import plain
from evtui.tui.base import failure_text
from evtui.tui.data import bar
from evtui.tui.messages import (
    SweepEstimate,
    SweepFinished,
    SweepProgress,
    SweepRunDone,
    WorkFailed,
)
from evtui.tui.screens.bench.common import PROGRESS_EVERY, BenchTab, calls_llm, judge_methods, metric_cell
from evtui.tui.screens.modals import ConfirmScreen

if TYPE_CHECKING:
    pass


# How long a sweep the user started waits for a cost estimate's read of the benchmark library (a moment, under
# load a few seconds) before it says the library is busy.
START_WAIT = 5.0
# How long one try of a sweep's write waits for another process's reader (a CLI `evtui judge` beside the app holds
# DuckDB read-only); then the progress line names the reader and the sweep tries again, until the reader is gone
# or the sweep is cancelled: a run is never dropped because someone was reading.
WRITE_TRY = 1.0
TIMING = "timing…"  # progress_line's `left` while no item of the run has been timed and its estimate is spent

T = TypeVar("T")


class SweepWaiting(Message):
    """The sweep's writes wait for another process's reader (`reader`: who, e.g. "process 8320"), or no longer
    (None)."""

    def __init__(self, reader: str | None) -> None:
        super().__init__()
        self.reader = reader


def reader_of(exc: BaseException) -> str:
    """'process N' from a LibraryLockedError's message (Store._lock_message), else 'another process'."""
    m = re.search(r"process \d+", str(exc))
    return m.group(0) if m else "another process"


def progress_line(msg: SweepProgress | None, left: str | None, guess: bool, waiting: str | None, width: int) -> str:
    """The running sweep's progress line in `width` cells: items done of the run's total, the time left (`left`,
    a rough `guess` before the first item), which run of how many, and its task · method, shortened a part at a
    time rather than cut at the edge (at 80 columns "… · run 2/12 · results-er-optimal · bm25-coverage" ran off
    it). The numbers go last: first the label's task, then words, then the label."""
    if waiting is not None:
        whens = [f"waiting for {waiting} to finish reading the library…", f"waiting for {waiting} (reading)",
                 f"waiting for {waiting}"]
    elif left == TIMING:  # no item timed yet and past its estimate: no figure to give
        whens = ["time left: timing the first item…", "timing…"]
    elif left is not None:
        whens = [f"~{left} left (estimate)", f"~{left} left (est.)", f"~{left} left"] if guess else [f"~{left} left"]
    else:
        whens = [""]
    if msg is None:
        tries = [f"starting · {when}" if when else "" for when in whens]
    else:
        done, run = f"{msg.done}/{msg.total}", f"run {msg.run + 1}/{msg.runs}"
        method = msg.label.rsplit(" · ", 1)[-1]
        labels = [msg.label, method] if method != msg.label else [msg.label]
        # what changes first, the run's label last
        tries = [f"item {done}" + (f" · {when}" if when else "") + f" · {run} · {label}"
                 for label in labels for when in whens]
        tries += [f"{done}" + (f" · {whens[-1]}" if whens[-1] else "") + f" · {run} · {label}" for label in labels]
        tries += [f"item {done}" + (f" · {when}" if when else "") + f" · {run}" for when in whens]
        tries.append(f"{done}" + (f" · {whens[-1]}" if whens[-1] else "") + f" · {msg.run + 1}/{msg.runs}")
    for line in tries:
        if cell_len(line) <= width:
            return line
    return tries[-1]


def dataset_note(items: dict[str, dict[str, Any]]) -> Text:
    """The dataset field's note for a file that reads: what it holds ("37 items · 37 papers")."""
    n, papers = len(items), len(paper_sentences(items))
    return Text(f"{n:,} item{'s' if n != 1 else ''} · {papers:,} paper{'s' if papers != 1 else ''}", style="green")


def overdue(clock: SweepClock, now: float) -> bool:
    """Whether the time left has nothing real to go on: no item of the current run is timed yet and the run's
    setup (embedding its papers: minutes) has outlasted the run's whole estimate, so the clock's figure has fallen
    to the runs after it (nothing, on the last run: "~1 s left" for minutes)."""
    if clock.first is not None or clock.estimates is None or clock.run >= len(clock.estimates) or \
            len(clock.estimates) < clock.runs:
        return False
    scale = min(5.0, max(0.2, clock.actual / clock.expected)) if clock.expected > 0 else 1.0  # as SweepClock.left
    return now - clock.run_start >= clock.estimates[clock.run] * scale


class SweepTab(BenchTab):
    _waiting: str | None = None  # the reader the sweep's writes wait for (the progress line says so)
    _failed: tuple[str, ...] = ()  # the running sweep's runs that failed ("task · method"), for its last line
    _run_items = 0  # the running sweep's items per run (its bar counts runs × items)

    # -- configuration -----------------------------------------------------------------------------
    @on(Input.Changed, "#dataset")
    def update_dataset_note(self) -> None:
        raw = self.query_one("#dataset", Input).value.strip()
        note = self.query_one("#dataset-note", Static)
        if not raw:
            note.update(Text("no dataset: type the path of an EvidenceBench JSON file", style="dim"))
            return
        p = Path(raw).expanduser()
        if not p.is_file():
            note.update(Text("no such file", style="yellow"))
            return
        items = self._items_cache.get(str(p))
        if items is not None:
            note.update(dataset_note(items))
            return
        note.update(Text("found · reading it…", style="dim"))
        self.dataset_note_worker(raw, p)

    @work(thread=True, exclusive=True, group="bench-dataset-note")
    def dataset_note_worker(self, raw: str, path: Path) -> None:
        """How many items and papers the dataset holds (a file of any size is read off the UI thread), or why it
        is no EvidenceBench file: "found" said nothing of either."""
        try:
            shown: Text = dataset_note(self.items_for(path))
        except EvtuiError as exc:
            shown = Text(f"cannot read it: {str(exc).replace(str(path), path.name)}", style="yellow")  # path: above
        except Exception as exc:  # noqa: BLE001 - a note that fails must not stop the screen
            shown = Text(f"cannot read it: {failure_text(exc)}", style="yellow")
        self.app.call_from_thread(self._show_dataset_note, raw, shown)

    def _show_dataset_note(self, raw: str, shown: Text) -> None:
        if self.is_mounted and self.query_one("#dataset", Input).value.strip() == raw:  # not typed over since
            self.query_one("#dataset-note", Static).update(shown)

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

    # -- the sweep ---------------------------------------------------------------------------------
    @on(Button.Pressed, "#run")
    def action_run(self) -> None:
        if self.running or self._start_pending:
            self.notify("a sweep is already running (c cancels it)", title="Bench", severity="warning")
            return
        lib = self.evtui.library
        if lib is None:
            return
        if lib.read_only:  # said once, here: each run used to fail on its own, one toast per run
            why = getattr(lib, "why", "")
            self.notify(f"cannot run a sweep: the library is open read-only{f' ({why})' if why else ''}, so its "
                        "runs could not be stored; the runs stored before are in Runs (2)", title="Bench",
                        severity="warning", timeout=8)
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
        self._stored_rows = []
        stored = self.stored_runs(data, combos, opts)
        if stored:  # the same runs again would store the same figures twice: shown, not run again
            combos = [c for c in combos if c not in stored]
            self._stored_rows = list(stored.values())
            self.notify(f"{len(stored)} run(s) of this sweep are stored already with the same data, arguments and "
                        f"code: shown, not run again{'' if combos else ' (Runs (2) lists every run)'}",
                        title="Bench", timeout=6)
            if not combos:
                table = self.query_one("#sweep-results", DataTable)
                table.clear()
                for r in self._stored_rows:
                    self.post_message(SweepRunDone(r))
                self._stored_rows = []
                return
            tasks = [t for t in tasks if any(c[0] == t for c in combos)]
            methods = [m for m in methods if any(c[1] == m for c in combos)]
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

    def stored_runs(self, data: Path, combos: list[tuple[str, str]], opts: dict[str, Any]
                    ) -> dict[tuple[str, str], dict[str, Any]]:
        """(task, method) -> the finished run this sweep would repeat (same data contents, arguments and code)."""
        from evtui.bench.driver import stored_params
        from evtui.bench.evidencebench import dataset_name, run_params
        from evtui.bench.runs import stored_run

        view = self.evtui.view
        out: dict[tuple[str, str], dict[str, Any]] = {}
        if view is None:
            return out
        try:
            with self.evtui.db_gate:
                for task, method in combos:
                    judged = method in judge_methods()
                    params = stored_params(run_params(data, 0, opts if judged else None))
                    run = stored_run(view, dataset_name(data), task, method, params)  # type: ignore[arg-type]
                    if run is not None:
                        out[task, method] = {**run, "data": str(data), "seed": 0,
                                             "judge_opts": opts if judged else {}}
        except Exception as exc:  # noqa: BLE001 - a damaged runs table: the sweep runs them all, as before
            self.notify(f"cannot read the stored runs: {exc}", title="Bench", severity="warning")
            return {}
        return out

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
                    opts: dict[str, Any] | None = None, waited: float = 0.0) -> None:
        if not self._drill_lock.acquire(blocking=False):
            # The cost line's worker reads the benchmark library under this lock for a moment: wait for it (never
            # on the UI thread); only an item being re-ranked holds it for long.
            if waited < START_WAIT:
                self._start_pending = True
                self.set_timer(0.1, partial(self.start_sweep, data, combos, n_items, opts, waited + 0.1))
                return
            self._start_pending = False
            self.notify("an item is being re-ranked: start the sweep when it is shown", title="Bench",
                        severity="warning")
            return
        self._start_pending = False
        try:
            self.close_drill_library()
        finally:
            self._drill_lock.release()
        self.cancel_event.clear()
        self._waiting, self._failed = None, ()
        # the table lists this sweep's runs (the Runs tab keeps every one): rows of the last sweep read as this one's
        self.query_one("#sweep-results", DataTable).clear()
        self.query_one("#sweep-legend", Static).display = False  # shown again by a run of this sweep that needs it
        for r in self._stored_rows:  # this sweep's runs stored already (action_run): listed, not run again
            self.post_message(SweepRunDone(r))
        self._stored_rows = []
        self.running = True
        self.refresh_bindings()  # `c` cancels now
        self.sweep_started = time.monotonic()
        self.query_one("#cancel", Button).disabled = False
        self.query_one("#run", Button).disabled = True
        self.query_one("#sweep-progress").display = True
        bar_ = self.query_one("#sweep-bar", ProgressBar)
        bar_.update(total=max(1, n_items * len(combos)), progress=0)
        self._run_items = n_items
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
        cancelled = False
        try:
            for n, (task, method) in enumerate(combos):
                label = f"{task} · {method}"
                if n:  # the line names this run from its start: its setup (embedding papers: minutes) showed the
                    # last run's "run 3/4 · random · item 37/37" as if the sweep had stalled on a finished run
                    self.post_message(SweepProgress(n, len(combos), 0, self._run_items, label))

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
                    def open_book(task: str = task, method: str = method, judged: bool = judged) -> RunBook:
                        return RunBook(library, dataset_name(data), [task], method,
                                       run_params(data, 0, opts if judged else None), resume=True)

                    book = self.write(open_book)  # read-only between the app's writes (Library.rw)
                    done = self.write(partial(book.done, task))
                    if done:
                        self.app.call_from_thread(self.notify, f"{label}: resuming run {book.run_id(task)}, "
                                                  f"{len(done)} item(s) already done", title="Bench")
                    record = book.recorder(task)

                    def store(items: list[ItemResult], record: Callable[[ItemResult], None] | None = record) -> None:
                        def store_all() -> None:
                            for item in items:
                                if record is not None:
                                    record(item)

                        self.write(store_all)

                    batches = ItemBatches(store)
                    try:
                        res = child.run(data, task, method, home=app.config.home, seed=0,
                                        judge_opts=opts if judged else None, done=done, on_progress=progress,
                                        on_item=batches.add)
                    finally:
                        batches.flush()  # a cancelled or failed run keeps every item it finished
                    res["run_id"] = self.write(partial(save_run, library, res, book.params, run_id=book.run_id(task)))
                except SweepCancelled:
                    self._forget_empty(book)
                    cancelled = True
                    break
                except Exception as exc:  # noqa: BLE001 - one failing method must not end the app or the sweep
                    self._forget_empty(book)
                    self._failed = (*self._failed, label)
                    self.post_message(WorkFailed("Bench", f"{label}: {failure_text(exc)}"))
                    continue
                res["data"] = str(data)
                res["seed"] = 0
                res["judge_opts"] = opts if method in judge_methods() else {}
                completed += 1
                self.post_message(SweepRunDone(res))
        finally:
            self._child = None
            child.close()
        # Only once the child has exited: until then it holds the benchmark library, which a drill-down opens next.
        self.post_message(SweepFinished(completed, cancelled))

    def write(self, what: Callable[[], T]) -> T:
        """`what()` with the app's library writable (Library.rw) and its db_lock held, from the sweep's thread.
        Another process reading the library (a CLI command beside the app) keeps it read-only: wait for it, saying
        so on the progress line, for as long as it reads; only a cancel stops the wait (SweepCancelled)."""
        app = self.evtui
        library = app.library
        assert library is not None
        waiting: str | None = None
        try:
            while True:
                try:
                    with library.rw(wait=WRITE_TRY), app.db_lock:
                        return what()
                except LibraryLockedError as exc:
                    if self.cancel_event.is_set():
                        raise SweepCancelled from exc
                    if reader_of(exc) != waiting:
                        waiting = reader_of(exc)
                        self.post_message(SweepWaiting(waiting))
        finally:
            if waiting is not None:
                self.post_message(SweepWaiting(None))

    def _forget_empty(self, book: RunBook | None) -> None:
        """A run stopped before its first item leaves nothing to resume; one with items is left to resume (listed
        as interrupted). From a sweep thread: errors are reported."""
        if book is None or self.evtui.library is None:
            return
        try:
            # a moment only: a cancel must not wait for a reader, and an empty run left behind is resumed as any
            with self.evtui.library.rw(wait=WRITE_TRY), self.evtui.db_lock:
                book.discard_empty()
                book.release()  # the app lives on: what is left of the run is interrupted, not running
        except LibraryLockedError:
            pass
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
        clock, now = self.sweep_clock(), time.monotonic()
        left = clock.left(now)
        guess = clock.run == 0 and clock.done == 0 and left is not None
        when = None if left is None else TIMING if overdue(clock, now) else duration(left)
        text = self.query_one("#sweep-text", Static)
        # before its first layout the text has no width: the screen's, less the bar and its percentage
        width = text.content_size.width or max(20, self.size.width - 26)
        line = progress_line(self._progress, when, guess, self._waiting, width)
        if line:
            text.update(line, layout=False)

    def on_sweep_waiting(self, msg: SweepWaiting) -> None:
        self._waiting = msg.reader
        self.show_time_left()

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
        self.refresh_bindings()
        self.query_one("#cancel", Button).disabled = True
        self.query_one("#run", Button).disabled = False
        text = self.query_one("#sweep-text", Static)
        if msg.cancelled:
            text.update(Text(f"cancelled · {msg.completed} run(s) finished and stored", style="yellow"))
            self.notify(f"sweep cancelled; {msg.completed} finished run(s) kept", title="Bench", severity="warning")
        else:
            bar_ = self.query_one("#sweep-bar", ProgressBar)
            bar_.update(progress=bar_.total or 0)
            if self._failed:  # never a plain "done" when runs are missing
                failed = f"{len(self._failed)} failed: {', '.join(self._failed)}"
                text.update(Text(f"done · {msg.completed} of {msg.completed + len(self._failed)} run(s) stored · "
                                 f"{failed}", style="yellow"))
                self.notify(f"sweep done: {msg.completed} run(s) stored, {failed}", title="Bench",
                            severity="warning")
            else:
                text.update(Text(f"done · {msg.completed} run(s) stored", style="green"))
                self.notify(f"sweep done: {msg.completed} run(s) stored", title="Bench")
        self.sweep_plan = self.clock = self._progress = self._waiting = None
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
