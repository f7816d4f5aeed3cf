"""`evtui bench`: EvidenceBench, SciFact and Check-COVID runs through the same ranking pipeline (stored, resumable),
the verifier's SciFact and stance scores, and the stored runs (table or CSV)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from evtui import methods
from evtui.cli.core import emit_json, judge_opts, open_library, progress_bar, say, say_dim, stage_progress
from evtui.errors import EvtuiError
from evtui.render import plain, safe

if TYPE_CHECKING:
    from pathlib import Path

    from evtui.bench.driver import Engine, ProgressFn
    from evtui.bench.runs import ItemResult
    from evtui.library import Library

    # run(library, progress, done, on_item) -> (result, parameters): one harness call, as _recorded_run makes it
    HarnessCall = Callable[[Library, ProgressFn | None, dict[str, ItemResult], Callable[[ItemResult], None] | None],
                           tuple[dict[str, Any], dict[str, Any]]]


def cmd_bench_evidencebench(args: argparse.Namespace) -> int:
    from pathlib import Path

    from evtui.bench import TASKS, run_evidencebench, save_run
    from evtui.bench.driver import RunBook
    from evtui.bench.evidencebench import dataset_name, load_items, run_params
    methods.get(args.method)  # an unknown name fails here, listing the harness's methods
    RunBook.check(resume=args.resume, save=not args.no_save)
    if args.limit is not None and args.limit < 1:
        raise EvtuiError(f"--limit must be at least 1, not {args.limit}")
    data = Path(args.data) if args.data else _bundled_bench("evidencebench", "--data", args.json)
    load_items(data)  # a wrong file fails here, before any run is recorded
    tasks = list(TASKS) if args.task == "all" else [args.task]
    engine = _engine(args)
    results = []
    with open_library(args, demo=False) as lib:
        # Finished items are stored in batches at most STORE_EVERY seconds apart (readers work between them): a
        # killed sweep keeps all but its last seconds' work, a Ctrl-C all of it, and `--resume` finishes it.
        book = RunBook(lib, dataset_name(data), tasks, args.method,
                       run_params(str(data), args.seed, judge_opts(args), args.limit), save=not args.no_save,
                       resume=args.resume, say=say_dim, share=True)
        for task in tasks:
            run_id, done = book.run_id(task), book.done(task)
            if done and not args.json:
                say(f"[dim]resuming run {run_id} ({task}): {len(done)} item(s) already done[/]")
            with progress_bar(f"{task} · {args.method}", not args.json) as cb:
                with book.settled_on_failure():  # Ctrl-C: the items it finished are stored, for --resume
                    res = run_evidencebench(
                        data, task, args.method, seed=args.seed, home=lib.config.home,
                        on_progress=(lambda d, t, cb=cb: cb(_Files(d, t))) if cb else None,
                        judge_opts=judge_opts(args), done=done, on_item=book.recorder(task), limit=args.limit,
                        engine=engine)
            res["run_id"] = save_run(lib, res, book.params, run_id=run_id) if run_id else None
            results.append(res)
    from evtui.bench.estimate import IN_SAMPLE_NOTE, IN_SAMPLE_STYLE, in_sample

    for r in results:  # as `bench runs --json` says of a stored run: the ranker was trained on this file
        r["in_sample"] = in_sample({**r, "data": str(data)})
    if args.json:
        emit_json(results if args.task == "all" else results[0])
        return 0
    table = Table(title="EvidenceBench Aspect Recall")
    for col in ("task", "method", "items", "skipped", "aspect recall", "seconds"):
        table.add_column(col, justify="left" if col in ("task", "method") else "right")
    marked = False
    for r in results:
        recall = Text(f"{r['aspect_recall']:.1f}")
        if r["in_sample"]:  # the ranker was trained on this file: say so beside the figure
            recall.append(" in-sample", style=IN_SAMPLE_STYLE)
            marked = True
        table.add_row(r["task"], plain(r["method"]), str(r["n_items"]), str(r["n_skipped"]), recall,
                      f"{r['seconds']:.1f}")
    Console(emoji=False).print(table)
    if marked:
        say(Text(IN_SAMPLE_NOTE, style=IN_SAMPLE_STYLE))
    return 0


def _bundled_bench(what: str, flag: str, quiet: bool) -> Path:
    """A bundled benchmark file (evtui.demo.bundled_bench) for a data flag left out, said on stderr."""
    from evtui.demo import bundled_bench

    path = bundled_bench(what)
    if path is None:
        raise EvtuiError(f"no bundled {what.split('-')[0]} data is installed here: give {flag} FILE")
    if not quiet:
        say(f"[dim]{flag} left out: the bundled {safe(path.name)} ({safe(str(path.parent))})[/]")
    return path


def _bundled_scifact(args: argparse.Namespace) -> None:
    """`bench scifact` without --claims / --corpus: the bundled train claims over the demo's SciFact abstracts."""
    if args.bench_verb != "scifact":
        if not args.corpus or not args.claims:
            raise EvtuiError("--corpus and --claims are required for checkcovid (nothing of it is bundled)")
        return
    if not args.claims:
        args.claims = str(_bundled_bench("scifact-claims", "--claims", args.json))
    if not args.corpus:
        args.corpus = str(_bundled_bench("scifact-corpus", "--corpus", args.json))


def _engine(args: argparse.Namespace) -> Engine | None:
    """The bench driver's engine from --engine/--ray-address/--parquet-dir (None: rank here). Not part of a run's
    parameters: both engines give the same run, so either may resume the other's."""
    if args.engine == "local":
        if args.ray_address or args.parquet_dir:
            raise EvtuiError("--ray-address and --parquet-dir go with --engine ray")
        return None
    from pathlib import Path

    from evtui.scale.engine import bench_engine

    return bench_engine(args.engine, args.ray_address, Path(args.parquet_dir) if args.parquet_dir else None)


class _Files:
    """Adapts (done, total) progress to the ingest progress bar's fields."""

    def __init__(self, done: int, total: int) -> None:
        self.files_done, self.files_total, self.papers_seen, self.current = done, total, done, "items"


def cmd_bench_beir(args: argparse.Namespace) -> int:
    """`bench scifact` and `bench checkcovid`: run through the Searcher, store the run, print JSON or a table."""
    if getattr(args, "task", "retrieval") == "verify":
        return _bench_scifact_verify(args)
    if args.method is None:
        raise EvtuiError("--method is required for the retrieval task (e.g. --method best)")
    from pathlib import Path

    from evtui.bench.beir import check_method, save
    from evtui.bench.checkcovid import run_checkcovid
    from evtui.bench.driver import RunBook
    from evtui.bench.scifact import run_scifact

    RunBook.check(resume=args.resume, save=not args.no_save)
    check_method(args.method)
    scifact = args.bench_verb == "scifact"
    _bundled_scifact(args)
    task = "doc-retrieval" if scifact else "sentence+doc-retrieval"
    dataset = f"{'scifact' if scifact else 'check-covid'}:{Path(args.claims).name}"
    # What makes a run resumable as the same run (the stored parameters add timings at the end).
    key = {"corpus": str(args.corpus), "claims": str(args.claims), "seed": args.seed, "limit": args.limit,
           **({"qrels": args.qrels} if scifact else {})}
    engine = _engine(args)

    def run(lib: Library, cb: ProgressFn | None, done: dict[str, ItemResult],
            on_item: Callable[[ItemResult], None] | None) -> tuple[dict[str, Any], dict[str, Any]]:
        common: dict[str, Any] = {"seed": args.seed, "limit": args.limit, "on_progress": cb, "home": lib.config.home,
                                  "done": done, "on_item": on_item, "engine": engine}
        if scifact:
            return run_scifact(Path(args.corpus), Path(args.claims), args.method, qrels_rule=args.qrels, **common)
        return run_checkcovid(Path(args.corpus), Path(args.claims), args.method, **common)

    res = _recorded_run(args, dataset, task, args.method, key, run,
                        lambda lib, res, params, run_id: save(lib, res, params, task, run_id=run_id))
    from evtui.bench.estimate import IN_SAMPLE_NOTE, IN_SAMPLE_STYLE, in_sample

    res["in_sample"] = in_sample({"method": res["method"], "dataset": res["dataset"], "data": str(args.claims)})
    if args.json:
        emit_json(res)
        return 0
    # One row per measure: readable at any terminal width. nDCG is 0-1, recalls are percent.
    out = Console(emoji=False)
    out.print(f"[bold]{safe(res['dataset'])}[/] · {safe(res['method'])} · {res['n_queries']} claims · "
              f"{res['seconds']:.1f}s")
    table = Table()
    table.add_column("measure")
    table.add_column("value", justify="right")
    for m in (k for k in res if "@" in k):
        table.add_row(m, f"{res[m]:.4f}" if m.startswith("ndcg") else f"{res[m]:.1f} %")
    out.print(table)
    if res["in_sample"]:
        say(Text(IN_SAMPLE_NOTE, style=IN_SAMPLE_STYLE))
    return 0


def _bench_scifact_verify(args: argparse.Namespace) -> int:
    """`bench scifact --task verify`: the claim verifier over the corpus, scored with the official SciFact metrics."""
    from pathlib import Path

    from evtui.bench import scifact_verify as sv
    from evtui.bench.driver import RunBook

    RunBook.check(resume=args.resume, save=not args.no_save)
    _bundled_scifact(args)
    if args.method is not None:
        raise EvtuiError("--method goes with the retrieval task; --task verify finds papers with the verifier's own "
                         "pipeline")
    if args.engine != "local" or args.ray_address or args.parquet_dir:
        raise EvtuiError("--task verify runs on the local engine only")
    dataset, method = f"scifact:{Path(args.claims).name}", "verifier"
    key = {"corpus": str(args.corpus), "claims": str(args.claims), "limit": args.limit, "papers": args.papers,
           "model": sv.verifier_version()}

    def run(lib: Library, cb: ProgressFn | None, done: dict[str, ItemResult],
            on_item: Callable[[ItemResult], None] | None) -> tuple[dict[str, Any], dict[str, Any]]:
        return sv.run_scifact_verify(Path(args.corpus), Path(args.claims), papers=args.papers, limit=args.limit,
                                     method=method, on_progress=cb, home=lib.config.home, done=done, on_item=on_item)

    res = _recorded_run(args, dataset, "verify", method, key, run, lambda lib, res, params, run_id: sv.save(
        lib, res, {**params, "model": key["model"]}, run_id=run_id))
    note = sv.trained_on(Path(args.claims))  # the verifier was trained on these claims: its figures are in-sample
    res["in_sample"] = bool(note)  # a key added, as `bench runs --json` and the other bench verbs have it
    if args.json:
        emit_json(res)
        return 0
    _verify_table(res, f"[bold]{safe(res['dataset'])}[/] · verify · {res['claims']} claims · top {res['papers']} "
                       f"papers · {res['seconds']:.1f}s")
    if note:
        say(f"[yellow]note: {safe(note)}[/]")
    return 0


def _recorded_run(args: argparse.Namespace, dataset: str, task: str, method: str, key: dict[str, Any],
                  run: HarnessCall, save: Callable[[Library, dict[str, Any], dict[str, Any], str], object]
                  ) -> dict[str, Any]:
    """One task's run, resumable and stored as it goes (unless --no-save): `run(lib, progress, done, on_item)`
    gives (result, parameters), `save(lib, result, parameters, run_id)` completes the stored run."""
    from evtui.bench.driver import RunBook

    with open_library(args, demo=False) as lib:
        book = RunBook(lib, dataset, [task], method, key, save=not args.no_save, resume=args.resume, say=say_dim,
                       share=True)
        run_id, done = book.run_id(task), book.done(task)
        if done and not args.json:
            say(f"[dim]resuming run {run_id}: {len(done)} claim(s) already done[/]")
        with stage_progress(not args.json) as cb:
            with book.settled_on_failure():  # Ctrl-C: the items it finished are stored, for --resume
                res, params = run(lib, cb, done, book.recorder(task))
        if run_id:
            save(lib, res, params, run_id)
            if not args.json:
                say(f"[dim]stored as run {run_id}[/]")
    return res


def cmd_bench_scifact_eval(args: argparse.Namespace) -> int:
    """`bench scifact-eval`: any system's SciFact prediction file, scored with the official metrics."""
    from pathlib import Path

    from evtui.bench.scifact_verify import evaluate_files

    res = evaluate_files(Path(args.gold), Path(args.pred))
    if args.json:
        emit_json(res)
        return 0
    _verify_table(res, f"[bold]{safe(Path(args.pred).name)}[/] against {safe(Path(args.gold).name)} · "
                       f"{res['claims']} claims")
    return 0


def cmd_bench_stance(args: argparse.Namespace) -> int:
    """`bench stance`: the verifier's stance on labelled pairs, decided as the judge decides a sentence."""
    from pathlib import Path

    from evtui.bench.stance import STANCES, run_stance

    last = [time.monotonic()]

    def progress(done: int, total: int) -> None:  # a line every few seconds: a log shows signs of life
        now = time.monotonic()
        if now - last[0] >= 5:
            last[0] = now
            say_dim(f"{done}/{total} pairs")

    res = run_stance(Path(args.pairs), on_progress=progress,
                     on_problem=lambda msg: say(f"[yellow]skipped[/] {safe(msg)}"))
    if args.json:
        emit_json(res)
        return 0
    out = Console(emoji=False)
    out.print(f"[bold]{safe(Path(args.pairs).name)}[/] · {res['pairs']} pairs · verifier {safe(res['model'])}")
    table = Table()
    for col in ("label", "precision", "recall", "F1", "predicted", "gold"):
        table.add_column(col, justify="left" if col == "label" else "right")
    for name in STANCES:
        m = res["labels"][name]
        table.add_row(name, f"{m['precision']:.3f}", f"{m['recall']:.3f}", f"{m['f1']:.3f}", str(m["predicted"]),
                      str(m["gold"]))
    out.print(table)
    out.print(f"macro-F1 (supports, refutes) [bold]{res['macro_f1']:.3f}[/] · accuracy {res['accuracy']:.3f} · "
              f"a side taken on {100 * res['side_taken']:.0f}% of pairs")
    conf = res["confusion"]
    out.print("[dim]gold → predicted: " + " · ".join(
        f"{g} → " + ", ".join(f"{p} {conf[g][p]}" for p in STANCES) for g in STANCES) + "[/]")
    return 0


def _verify_table(res: dict[str, Any], title: str) -> None:
    from evtui.bench.scifact_verify import GROUPS

    names = ("abstract · label only", "abstract · label + rationale", "sentence · selection",
             "sentence · selection + label")
    out = Console(emoji=False)
    out.print(title)
    table = Table()
    for col in ("measure", "precision", "recall", "F1"):
        table.add_column(col, justify="left" if col == "measure" else "right")
    for group, name in zip(GROUPS, names, strict=True):
        table.add_row(name, *(f"{res[group][k]:.4f}" for k in ("precision", "recall", "f1")))
    out.print(table)
    c = res["counts"]
    out.print(f"[dim]gold: {c['gold_abstracts']} abstracts, {c['gold_sentences']} sentences · predicted: "
              f"{c['predicted_abstracts']} abstracts, {c['predicted_sentences']} sentences[/]")


def cmd_bench_runs(args: argparse.Namespace) -> int:
    from evtui.bench import list_runs

    if getattr(args, "items", False) and not getattr(args, "csv", None):
        raise EvtuiError("--items goes with --csv PATH (the per-item CSV is written beside it)")
    with open_library(args, demo=False, reading=True) as lib:
        runs = list_runs(lib)
        if getattr(args, "csv", None):
            return _bench_runs_csv(lib, runs, args.csv, items=args.items, as_json=args.json,
                                   force=getattr(args, "force", False))
    if args.json:
        emit_json(runs)
        return 0
    from evtui.bench.report import runs_table

    out = Console(emoji=False)
    table, notes = runs_table(runs, out.width)  # fits 80 columns; --json and --csv keep every field
    out.print(table)
    for note in notes:
        out.print(f"[dim]{safe(note)}[/]")
    return 0


def _bench_runs_csv(lib: Any, runs: list[dict[str, Any]], path: str, *, items: bool, as_json: bool,
                    force: bool = False) -> int:
    from pathlib import Path

    from evtui.bench import csvout
    from evtui.bench.runs import run_per_item

    if path == "-":  # as `export --out -`: to standard output (it wrote a file named "-" in the current folder)
        if items or as_json:
            raise EvtuiError("--csv - writes the runs CSV to standard output; --items and --json need a file path")
        sys.stdout.write(csvout.runs_csv(runs))
        say(f"wrote {len(runs)} run(s) to standard output")
        return 0
    out = Path(path).expanduser()
    csvout.check_paths(out, lib.config.home, items=items, force=force)
    n = csvout.write_runs_csv(out, runs)
    doc: dict[str, Any] = {"csv": str(out), "runs": n}
    if items:
        per_item = {r["id"]: run_per_item(lib, r["id"]) for r in runs}
        items_out = csvout.items_path(out)
        doc["items_csv"] = str(items_out)
        doc["items"] = csvout.write_items_csv(items_out, runs, per_item, csvout.hypotheses(runs))
    if as_json:
        emit_json(doc)
    else:
        say(f"wrote {n} run(s) to {out}" + (f" and {doc['items']} item score(s) to {doc['items_csv']}"
                                             if items else ""), highlight=False)
    return 0
