"""The rough figures behind the Bench screen's sweep estimate (evtui/bench/estimate.py), and how well it guesses.

    python benchmarks/bench_sweep_estimate.py --data ../shared/datasets/evidencebench/evidencebench_dev_set.json

Works in a throwaway home (its own benchmark library): per method, the seconds to rank one item once the papers
are embedded (the first `--limit` items, after a `dense` run that embeds their papers); the embedding rate (MiniLM, sentences per second); then the app's preselected sweep (evtui.bench.estimate.
quick_methods on er-optimal) run as the app runs it, in the sweep's child process, estimated first and timed.
Nothing is stored in any library.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from evtui.bench.estimate import estimate_cost, paper_sentences, quick_methods
from evtui.bench.evidencebench import load_items, run_evidencebench
from evtui.bench.sweep import SweepChild

METHODS = ("bm25", "bm25-coverage", "random", "best", "dense", "hybrid", "evidential", "llm-rerank")


def per_item(data: Path, home: Path, method: str, limit: int) -> float:
    """The median over the items (the first one also loads the method's models): a method's first run on
    embedded papers, so a judge's verdicts are not cached yet (a re-run reads them: llm-rerank 0.27 s/item)."""
    secs: list[float] = []
    judge_opts = {"judge": "local"} if method == "llm-rerank" else None
    run_evidencebench(data, "er-optimal", method, home=home, limit=limit, on_item=lambda it: secs.append(it.seconds),
                      judge_opts=judge_opts)
    return statistics.median(secs)


def embed_rate(data: Path, home: Path, n: int) -> float:
    from evtui.bench.driver import bench_library
    from evtui.embed import get_embedder

    lib = bench_library("evidencebench", data, home)
    try:
        texts = [r[0] for r in lib.store.con.execute(
            "SELECT text FROM sentences WHERE NOT is_heading ORDER BY id LIMIT ?", [n]).fetchall()]
        emb = get_embedder(lib.config.cache_dir)
        emb.embed(texts[:16])  # load the model
        t0 = time.perf_counter()
        emb.embed(texts)
        return len(texts) / (time.perf_counter() - t0)
    finally:
        lib.close()


def quick_sweep(data: Path, home: Path) -> tuple[float, float]:
    """(estimated, measured) seconds of the preselected sweep on a benchmark library not built yet."""
    items = load_items(data)
    methods = quick_methods()
    est = estimate_cost(data, items, ["er-optimal"], methods, "local", [], {}).seconds
    t0 = time.perf_counter()
    child = SweepChild()
    try:
        for m in methods:
            child.run(data, "er-optimal", m, home=home)
    finally:
        child.close()
    return est, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--limit", type=int, default=3, help="items per method (their papers are embedded first)")
    ap.add_argument("--sentences", type=int, default=400, help="sentences embedded to time the rate")
    ap.add_argument("--methods", nargs="*", default=list(METHODS))
    args = ap.parse_args()
    data = args.data.resolve()
    print(f"{data.name}: {len(load_items(data))} items, {sum(paper_sentences(load_items(data)).values()):,} "
          "sentences to embed from scratch")
    with tempfile.TemporaryDirectory(prefix="evtui-est-") as tmp:
        est, took = quick_sweep(data, Path(tmp) / "quick")
        print(f"preselected sweep (er-optimal × {', '.join(quick_methods())}), library built on the way: "
              f"estimated {est:.1f} s, took {took:.1f} s")
        shutil.rmtree(Path(tmp) / "quick")
        home = Path(tmp) / "home"
        print(f"embedding: {embed_rate(data, home, args.sentences):.0f} sentences/s")
        run_evidencebench(data, "er-optimal", "dense", home=home, limit=args.limit)  # embeds the items' papers
        for m in args.methods:
            print(f"{m:>14}: {per_item(data, home, m, args.limit):.3f} s/item (median of {args.limit})", flush=True)


if __name__ == "__main__":
    main()
