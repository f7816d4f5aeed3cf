"""The Bench screen: EvidenceBench sweeps in a background worker, stored runs side by side, item drill-down.

A sweep runs `evtui.bench.run_evidencebench` — the same harness as `evtui bench evidencebench` — once per
(task, method), saves each finished run with `save_run` as the CLI does, and can be cancelled between items
(the progress callback raises). Drilling into an item re-ranks it label-blind through the harness's own ranker
and only then reads its labels to show what was picked, what it covered and which aspects were missed.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.coordinate import Coordinate
from textual.screen import Screen
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

from evtui.errors import EvtuiError
from evtui.render import aspect_color, cell, plain
from evtui.tui.data import bar, default_dataset, short, unique
from evtui.tui.messages import ItemDetail, SweepFinished, SweepProgress, SweepRunDone, WorkFailed
from evtui.tui.screens.modals import ConfirmScreen
from evtui.tui.suggest import PathSuggester
from evtui.tui.widgets.keybar import KeyBar

if TYPE_CHECKING:
    from evtui.library import Library
    from evtui.tui.app import EvtuiApp


class SweepCancelled(Exception):
    """Raised from the harness's progress callback to stop a sweep between two items."""


def judge_methods() -> tuple[str, ...]:
    """The harness's judge strategies (llm-rerank, llm-sbs, evidential), where this evtui has them."""
    try:
        from evtui.judge.strategies import JUDGE_METHODS
    except ImportError:
        return ()
    return tuple(JUDGE_METHODS)


def bench_methods() -> list[str]:
    """Every ranking method evtui.search offers now, the seeded random baseline and the judge strategies."""
    import evtui.search as search

    return unique([*search.METHODS, "random", *judge_methods()])


def calls_llm(method: str, judge: str) -> bool:
    """Does this method make LLM calls (which cost money) with this judge?"""
    return method in judge_methods() and (judge == "llm" or method == "llm-sbs")


def primary_metric(run: dict[str, Any]) -> tuple[str, float | None]:
    metrics = run.get("metrics") or {}
    if "aspect_recall" in run:
        return "aspect_recall", float(run["aspect_recall"])
    if "aspect_recall" in metrics:
        return "aspect_recall", float(metrics["aspect_recall"])
    for k, v in metrics.items():
        if isinstance(v, int | float):
            return k, float(v)
    return "", None


def _short_aspect(aspect: str, item_id: str) -> str:
    return aspect[len(item_id) + 1:] if aspect.startswith(item_id + "_") else aspect


def item_report(library: Library, item_id: str, item: dict[str, Any], task: str, method: str, seed: int,
                stored: float | None, ranker: Any | None = None) -> Text:
    """Rank one item as the harness does (label-blind), then read its labels to explain the score."""
    from evtui.bench import evidencebench as eb

    out = Text()
    out.append(f"{item_id}", style="bold")
    out.append(f" · {task} · {method}\n\n", style="dim")
    out.append("hypothesis ", style="bold")
    out.append(item["hypothesis"] + "\n\n")
    k = eb.task_k(item, task)
    if k is None:
        out.append("skipped: this item has no results labels, so results tasks leave it out\n", style="yellow")
        return out
    paper_id = str(item.get("paper_id") or item_id)
    task_obj = eb.Task(item_id, item["hypothesis"], paper_id, k)
    if any(f.name == "results" for f in dataclasses.fields(eb.Task)):
        task_obj = dataclasses.replace(task_obj, results=task.startswith("results"))  # type: ignore[call-arg]
    rank = ranker or eb.make_ranker(library, method, seed)
    picked = list(rank(task_obj))
    score = eb.score_item(item, task, picked)
    sentence_aspects = {int(i): a for i, a in item["sentence_index2aspects"].items()}
    wanted = item["results_aspect_list_ids"] if task.startswith("results") else item["aspect_list_ids"]
    coverable = {a for v in sentence_aspects.values() for a in v} & set(wanted)
    covered = {a for i in picked for a in sentence_aspects.get(i, ())} & coverable
    missed = sorted(coverable - covered)
    texts = {s.position: s.text for s in library.store.sentences(paper_id)}
    out.append(f"K = {k} · aspect recall ", style="bold")
    out.append("n/a" if score is None else f"{100 * score:.1f}", style="bold green")
    if stored is not None:
        out.append(f" (stored run: {stored:.1f})", style="dim")
    out.append(f" · {len(covered)}/{len(coverable)} aspects covered\n\n")
    out.append(f"picked ({len(picked)})\n", style="bold")
    colour = {a: aspect_color(n) for n, a in enumerate(sorted(coverable))}
    for i in picked:
        tags = [a for a in sentence_aspects.get(i, ()) if a in coverable]
        out.append(f"[{i:>3}] ", style="dim")
        for a in tags:
            out.append("● ", style=colour[a])
        out.append(short(texts.get(i, "(sentence not in the benchmark library)"), 220))
        if tags:
            out.append("  " + ", ".join(_short_aspect(a, item_id) for a in tags), style="dim")
        out.append("\n")
    out.append("\ncovered ", style="bold")
    out.append(", ".join(_short_aspect(a, item_id) for a in sorted(covered)) or "none")
    out.append("\nmissed ", style="bold")
    out.append(", ".join(_short_aspect(a, item_id) for a in missed) or "none", style="red" if missed else "")
    out.append("\n")
    gold = item.get("aspect2sentence_indices") or {}
    for a in missed:
        idx = list(gold.get(a, []))[:2]
        for i in idx:
            out.append(f"  {_short_aspect(a, item_id)} is in [{i:>3}] ", style=colour.get(a, ""))
            out.append(short(texts.get(int(i), ""), 200) + "\n", style="dim")
    return out


PROGRESS_EVERY = 0.1  # seconds between progress redraws during a sweep
SBS_TOKENS_OUT = 300  # a section's reply: the reasoning the prompt asks for, then DECISION: [indices]


def estimate_sweep(library: Library, items: dict[str, dict[str, Any]], tasks: list[str], methods: list[str],
                   opts: dict[str, Any]) -> dict[str, Any]:
    """What the judge strategies of a sweep would cost with an LLM, from the prompts they would send.

    llm-rerank / evidential judge the top pool of the default search in each item's paper (the judge service's
    own estimate, which leaves out cached verdicts); llm-sbs sends one prompt per section (cached completions
    are not checked here, so a re-run is over-estimated)."""
    from evtui.bench import evidencebench as eb
    from evtui.judge import estimate, make_judge
    from evtui.judge import strategies as st
    from evtui.judge.llm import estimate_tokens
    from evtui.search import DEFAULT_METHOD, Searcher

    judge = make_judge(library, "llm", opts.get("model"), opts.get("api_base"))
    client = judge.client  # type: ignore[attr-defined]
    searcher = Searcher(library)
    out: dict[str, Any] = {"model": judge.model, "calls": 0, "cached": 0, "tokens_in": 0, "tokens_out": 0,
                           "cost": 0.0, "methods": methods}
    notes: set[str] = set()
    judged: set[tuple[str, str]] = set()  # (hypothesis, sentence id): one verdict serves every task and method
    for method in methods:
        for task in tasks:
            for item_id, item in items.items():
                k = eb.task_k(item, task)
                if k is None:
                    continue
                paper = str(item.get("paper_id") or item_id)
                if method == "llm-sbs":
                    for part in st.sections(library.store.sentences(paper)):
                        prompt = st.fill(st.SECTION_PROMPT, limit=k, hypothesis=item["hypothesis"],
                                         pool=st.indexed_pool(part))
                        tin = estimate_tokens([{"role": "user", "content": prompt}])
                        out["calls"] += 1
                        out["tokens_in"] += tin
                        out["tokens_out"] += SBS_TOKENS_OUT
                        out["cost"] += client.call_cost(tin, SBS_TOKENS_OUT)
                    notes.add(f"llm-sbs: ~{SBS_TOKENS_OUT} output tokens a section; cached replies not subtracted")
                    continue
                res = searcher.search(item["hypothesis"], k=max(st.RERANK_POOL, k), paper=paper, mode="hypothesis",
                                      method=DEFAULT_METHOD, results=task.startswith("results"))
                fresh = [e for e in res.evidence if (item["hypothesis"], e.sentence.id) not in judged]
                judged.update((item["hypothesis"], e.sentence.id) for e in res.evidence)
                if not fresh:
                    continue
                est = estimate(res.query, fresh, judge, library=library)
                for key in ("calls", "cached", "tokens_in", "tokens_out", "cost"):
                    out[key] += getattr(est, key)
                notes.update(est.notes)
    if client.price() is None:
        notes.add(client.price_note())
    out["notes"] = sorted(notes)
    return out


def chart(runs: list[dict[str, Any]], width: int = 40) -> Text:
    """Methods × tasks as rich bars: the latest stored run of each (dataset, task, method)."""
    latest: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in runs:  # newest first; an interrupted run (status running, no metrics yet) is not a bar
        if r.get("status", "done") == "done":
            latest.setdefault((r["dataset"], r["task"], r["method"]), r)
    if not latest:
        return Text("no stored runs yet: run a sweep (r) and each finished run lands here", style="dim")
    methods = sorted({m for _d, _t, m in latest})
    colours = {m: aspect_color(i) for i, m in enumerate(methods)}
    out = Text()
    for dataset in sorted({d for d, _t, _m in latest}):
        tasks = sorted({t for d, t, _m in latest if d == dataset})
        name, _v = primary_metric(next(r for (d, _t, _m), r in latest.items() if d == dataset))
        scale = 1.0 if name.startswith("ndcg") else 100.0
        out.append(f"{dataset}", style="bold")
        out.append(f" · {name.replace('_', ' ') or 'metric'} (latest run per task and method)\n", style="dim")
        for t in tasks:
            out.append(f"  {t}\n", style="bold cyan")
            for m in methods:
                r = latest.get((dataset, t, m))
                if r is None:
                    continue
                _n, v = primary_metric(r)
                out.append(f"    {m:>14} ")
                out.append_text(bar(v or 0.0, scale, width, colours[m]))
                out.append(f" {v:.1f}\n" if v is not None and scale == 100 else f" {v or 0:.4f}\n")
        out.append("\n")
    return out


def compare(runs: list[dict[str, Any]], per_item: dict[str, dict[str, float]]) -> Table | Text:
    """The marked runs side by side; for two runs on the same items, who wins where."""
    if not runs:
        return Text("mark runs with space to compare them side by side", style="dim")
    table = Table(box=None, expand=False, header_style="bold")
    table.add_column("")
    for r in runs:
        table.add_column(f"{r['method']}\n{r['task']}", justify="right")
    rows = [
        ("dataset", lambda r: r["dataset"].split(":")[-1]),
        ("metric", lambda r: f"{primary_metric(r)[1]:.2f}" if primary_metric(r)[1] is not None else "—"),
        ("items", lambda r: str(r["n_items"])),
        ("skipped", lambda r: str(r["n_skipped"])),
        ("seconds", lambda r: f"{r['seconds']:.1f}"),
        ("code", lambda r: str(r.get("code_version", ""))),
        ("run", lambda r: r["id"]),
    ]
    for name, fn in rows:
        table.add_row(name, *(fn(r) for r in runs))
    if len(runs) == 2:
        a, b = (per_item.get(r["id"], {}) for r in runs)
        common = set(a) & set(b)
        if common:
            wins = sum(1 for i in common if a[i] > b[i])
            losses = sum(1 for i in common if a[i] < b[i])
            table.add_row("head to head", f"better on {wins}", f"better on {losses}")
            table.add_row("", f"{len(common) - wins - losses} tie(s)", "")
    return table


class BenchScreen(Screen[None]):
    BINDINGS = [
        Binding("r", "run", "Run sweep", id="bench.run"),
        Binding("c", "cancel", "Cancel sweep", id="bench.cancel"),
        Binding("space", "mark", "Mark to compare", id="bench.mark"),
        Binding("j", "cursor(1)", "Down", show=False, id="bench.down"),
        Binding("k", "cursor(-1)", "Up", show=False, id="bench.up"),
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

    @property
    def evtui(self) -> EvtuiApp:
        return cast("EvtuiApp", self.app)

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

    def action_cursor(self, delta: int) -> None:
        if isinstance(self.focused, DataTable):
            self.focused.move_cursor(row=self.focused.cursor_row + delta)

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
        try:
            est = self.estimate_sweep(data, tasks, methods, opts)
        except EvtuiError as exc:
            self.post_message(WorkFailed("Bench", str(exc)))
            return
        except Exception as exc:  # noqa: BLE001
            self.post_message(WorkFailed("Bench", f"{type(exc).__name__}: {exc}"))
            return
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

        app = self.evtui
        assert app.library is not None
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

            try:
                if self.cancel_event.is_set():
                    raise SweepCancelled
                judged = method in judge_methods()
                extra: dict[str, Any] = {"judge_opts": opts} if judged else {}
                res = run_evidencebench(data, task, method, seed=0, on_progress=progress, home=app.config.home,
                                        **extra)
                # stored as the CLI stores it (never the api_base: a URL may carry credentials)
                params = {"data": str(data), "seed": 0,
                          **({k: v for k, v in opts.items() if k != "api_base"} if judged else {})}
                with app.library.rw(), app.db_lock:  # read-only between the app's writes (Library.rw)
                    res["run_id"] = save_run(app.library, res, params)
            except SweepCancelled:
                self.post_message(SweepFinished(completed, True))
                return
            except EvtuiError as exc:
                self.post_message(WorkFailed("Bench", f"{label}: {exc}"))
                continue
            except Exception as exc:  # noqa: BLE001 - one failing method must not end the app or the sweep
                self.post_message(WorkFailed("Bench", f"{label}: {type(exc).__name__}: {exc}"))
                continue
            res["data"] = str(data)
            res["seed"] = 0
            res["judge_opts"] = opts if method in judge_methods() else {}
            completed += 1
            self.post_message(SweepRunDone(res))
        self.post_message(SweepFinished(completed, False))

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

    def on_work_failed(self, msg: WorkFailed) -> None:
        self.notify(msg.reason, title=msg.what, severity="error", timeout=10)

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
        try:
            with self.evtui.db_gate:  # the UI thread's reads take the gate (a shared library's switch)
                row = view.store.con.execute("SELECT per_item FROM runs WHERE id = ?", [run_id]).fetchone()
        except Exception:  # noqa: BLE001 - an older runs table without per-item scores
            return {}
        return json.loads(row[0] or "{}") if row else {}

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
        except EvtuiError as exc:
            text = Text(str(exc), style="red")
        except Exception as exc:  # noqa: BLE001
            text = Text(f"{type(exc).__name__}: {exc}", style="red")
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
