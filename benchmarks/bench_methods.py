"""Search latency per ranking method on a real library (default: the bundled demo library).

    python benchmarks/bench_methods.py [--home DIR] [--methods best bm25-coverage bm25] [--k 20]

Queries are the SciFact claims / BC5CDR-style triplets below; the first query of each method warms caches (model
load, embedder) and is not timed. Prints p50 / p95 / max in milliseconds per method.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

QUERIES = [
    "(aspirin, reduce, colorectal cancer)", "(lithium, cause, nephrogenic diabetes insipidus)",
    "(cisplatin, induce, nephrotoxicity)", "(haloperidol, cause, tardive dyskinesia)",
    "(doxorubicin, cause, cardiomyopathy)", "(statins, lower, LDL cholesterol)",
    "ACE inhibitors cause cough", "Vitamin D supplementation reduces fracture risk in older adults",
    "Obesity is associated with an increased risk of type 2 diabetes", "BRCA1 mutations increase breast cancer risk",
    "Smoking increases the risk of lung cancer", "Metformin lowers blood glucose",
    "IL-6 promotes tumor growth", "TNF-α inhibition improves rheumatoid arthritis",
    "Exercise improves insulin sensitivity", "Antibiotics disrupt the gut microbiome",
    "Hypoxia induces angiogenesis through VEGF", "Amyloid beta accumulation causes neuronal death",
    "Sleep deprivation impairs memory consolidation", "p53 loss promotes genomic instability",
    "(heparin, cause, thrombocytopenia)", "(amiodarone, induce, pulmonary fibrosis)",
    "(valproate, cause, hepatotoxicity)", "(tamoxifen, increase, endometrial cancer)",
    "Microglia mediate synaptic pruning", "Telomere shortening limits cellular lifespan",
    "(nicotine, activate, nicotinic receptors)", "Aspirin prevents cardiovascular events",
    "Gut bacteria produce short-chain fatty acids", "Inflammation drives atherosclerosis",
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--home", default=None, help="library home (default $EVTUI_HOME / the demo library)")
    ap.add_argument("--methods", nargs="+", default=["best", "bm25-coverage", "bm25"])
    ap.add_argument("--k", type=int, default=20)
    args = ap.parse_args()
    if args.home:
        os.environ["EVTUI_HOME"] = str(Path(args.home))
    from evtui.config import load_config
    from evtui.demo import ensure_demo
    from evtui.library import Library
    from evtui.search import Searcher

    lib = Library(load_config())
    try:
        ensure_demo(lib)
        stats = lib.store.stats()
        print(f"library: {stats.get('papers')} papers, {stats.get('sentences')} sentences")
        for method in args.methods:
            s = Searcher(lib)
            s.search(QUERIES[0], k=args.k, method=method)  # warm-up: model load, first index reader
            times = []
            for q in QUERIES[1:]:
                t0 = time.perf_counter()
                s.search(q, k=args.k, method=method)
                times.append(1000 * (time.perf_counter() - t0))
            times.sort()
            p95 = times[int(0.95 * (len(times) - 1))]
            print(f"{method:>14}: p50 {statistics.median(times):6.1f} ms  p95 {p95:6.1f} ms  max {times[-1]:6.1f} ms"
                  f"  ({len(times)} queries, k={args.k})")
    finally:
        lib.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
