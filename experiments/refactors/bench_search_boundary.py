"""Per-search latency of bm25 and best on a library, for whichever evtui is first on sys.path: an A/B of the search
boundary (issue 17.3: the query tree compiled by evtui/index.py, Filters/SearchRequest) against the code before it.

    git archive <before> evtui | tar -x -C /tmp/before            # the package as it was
    EVTUI_HOME=<home> PYTHONPATH=/tmp/before python experiments/refactors/bench_search_boundary.py before
    EVTUI_HOME=<home> python experiments/refactors/bench_search_boundary.py after

Each method: one warm-up search, then 3 rounds over 8 queries (k=20); prints the median and the 90th percentile.
Then the cost of making the engine's query alone (parsed query -> Tantivy query, 200 rounds over the 8 queries):
before, `build_query` made Tantivy objects directly; after, it builds the tree and `SentenceIndex.compile` turns it
into Tantivy objects.
"""

from __future__ import annotations

import statistics
import sys
import time

from evtui.config import load_config
from evtui.library import Library
from evtui.search import Searcher

QUERIES = ["aspirin reduces the risk of colorectal cancer", "(BRCA1, associated with, breast cancer)",
           "statins lower LDL cholesterol", "vitamin D deficiency is associated with depression",
           "smoking increases lung cancer risk", "IL-6 drives inflammation in rheumatoid arthritis",
           "metformin improves insulin sensitivity", "exercise reduces blood pressure"]


def main() -> None:
    label = sys.argv[1] if len(sys.argv) > 1 else "run"
    with Library(load_config()) as lib:
        s = Searcher(lib)
        for method in ("bm25", "best"):
            s.search(QUERIES[0], k=20, method=method)
            times = []
            for _ in range(3):
                for q in QUERIES:
                    t = time.perf_counter()
                    s.search(q, k=20, method=method)
                    times.append(1000 * (time.perf_counter() - t))
            p90 = sorted(times)[int(0.9 * len(times))]
            print(f"{label} {method}: median {statistics.median(times):.1f} ms, p90 {p90:.1f} ms", flush=True)
        from evtui.search import build_query

        index = lib.index
        compile_ = getattr(index, "compile", lambda q: q)  # before the change build_query made Tantivy objects
        parsed = [s.parse(q) for q in QUERIES]
        t = time.perf_counter()
        for _ in range(200):
            for p in parsed:
                compile_(build_query(index, p)[0])
        per = 1e6 * (time.perf_counter() - t) / (200 * len(parsed))
        print(f"{label} query build: {per:.0f} µs per query", flush=True)


if __name__ == "__main__":
    main()
