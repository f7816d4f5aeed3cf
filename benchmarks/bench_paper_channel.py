"""What the paper-level channel (issue 13.5) costs: `best` latency with and without it, and the one-off rebuild of
the channel when a library from before it is opened. On a library whose papers have dense vectors (`evtui embed`),
also `best` with the BM25 channel alone: what fusing the vectors in costs.

    python benchmarks/bench_paper_channel.py [--home DIR] [--rounds 3] [--rebuild]

The two variants run interleaved, query by query, on the same library (default: the bundled demo library), so
machine load falls on both alike; the first query of each warms caches and is not timed. `--rebuild` deletes the
channel's directory and times opening the library (which rebuilds it) — on a copy only: it re-indexes the library.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import time
from pathlib import Path

from bench_methods import QUERIES


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--home", default=None, help="library home (default $EVTUI_HOME / the demo library)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--rebuild", action="store_true", help="also time the channel's rebuild on open")
    args = ap.parse_args()
    if args.home:
        os.environ["EVTUI_HOME"] = str(Path(args.home))
    from evtui.config import load_config
    from evtui.demo import ensure_demo
    from evtui.library import Library
    from evtui.papers import paper_index_path
    from evtui.search import Searcher

    cfg = load_config()
    lib = Library(cfg)
    try:
        ensure_demo(lib)
        stats = lib.store.stats()
        print(f"library: {stats.get('papers')} papers, {stats.get('sentences')} sentences")
        from evtui.paper_vectors import complete_matrix

        variants = {"best (paper channel)": Searcher(lib), "best (no paper channel)": Searcher(lib)}
        if complete_matrix(lib) is not None:  # the library has dense paper vectors (`evtui embed`)
            variants["best (BM25 channel only)"] = Searcher(lib)
        for name, s in variants.items():
            s.search(QUERIES[0], k=args.k)  # warm-up: model load, first index reader
            if "no paper" in name and s._best is not None:
                s._best.paper_weight, s._best.paper_pull = 0.0, 0
            if "BM25 channel" in name and s._best is not None:
                s._best.paper_dense_weight = 0.0
        times: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(args.rounds):
            for q in QUERIES[1:]:
                for name, s in variants.items():
                    t0 = time.perf_counter()
                    s.search(q, k=args.k)
                    times[name].append((time.perf_counter() - t0) * 1000)
        for name, ts in times.items():
            ts.sort()
            print(f"{name:26s} p50 {statistics.median(ts):6.1f} ms  p95 {ts[int(0.95 * (len(ts) - 1))]:6.1f} ms"
                  f"  max {ts[-1]:6.1f} ms  (n={len(ts)})")
    finally:
        lib.close()
    if args.rebuild:
        shutil.rmtree(paper_index_path(cfg.index_path))
        t0 = time.perf_counter()
        Library(cfg).close()
        print(f"open with the channel missing (rebuilt from the library): {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
