"""Ingest rate and BM25 search latency (with highlights) at 100k and 1M sentences.

The corpus is real sentences from the bundled demo library (SciFact abstracts), recombined into synthetic
10-sentence "papers" in SciFact corpus-JSONL form, so the loader, splitter-free path, DuckDB writes and Tantivy
indexing are all exercised. Queries are SciFact training claims when ../shared is present, else paper titles.

    python benchmarks/bench_core.py --sizes 100000 1000000 [--queries 200] [--out benchmarks/out]

Prints one JSON object per size; BENCHMARKS.md records the figures.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
METHOD = "bm25-coverage"
sys.path.insert(0, str(ROOT))


def real_sentences() -> tuple[list[str], list[str]]:
    sents: list[str] = []
    titles: list[str] = []
    with gzip.open(ROOT / "data" / "demo" / "scifact_corpus.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            titles.append(d["title"])
            sents.extend(s.strip() for s in d["abstract"] if s.strip())
    return sents, titles


def queries(titles: list[str], n: int, rng: random.Random) -> list[str]:
    claims = ROOT.parent / "shared" / "datasets" / "scifact" / "claims_train.jsonl"
    if claims.exists():
        qs = [json.loads(line)["claim"] for line in claims.open(encoding="utf-8")]
    else:
        qs = list(titles)
    rng.shuffle(qs)
    return qs[:n]


def build_corpus(path: Path, n_sentences: int, sents: list[str], titles: list[str], rng: random.Random) -> None:
    per_doc = 10
    with path.open("w", encoding="utf-8") as fh:
        for doc in range(n_sentences // per_doc):
            fh.write(json.dumps({
                "doc_id": doc,
                "title": titles[doc % len(titles)],
                "abstract": [sents[rng.randrange(len(sents))] for _ in range(per_doc - 1)],
            }) + "\n")


def run(size: int, n_queries: int, workdir: Path) -> dict[str, object]:
    from evtui.config import Config
    from evtui.library import Library
    from evtui.search import Searcher

    rng = random.Random(size)
    sents, titles = real_sentences()
    corpus = workdir / f"corpus-{size}.jsonl"
    build_corpus(corpus, size, sents, titles, rng)
    cfg = Config(home=workdir / f"home-{size}", demo=False)
    lib = Library(cfg)
    t0 = time.perf_counter()
    report = lib.ingest([corpus])
    ingest_s = time.perf_counter() - t0
    stats = lib.stats()
    searcher = Searcher(lib)
    qs = queries(titles, n_queries, rng)
    # The core BM25 path (aspect BM25 + coverage re-rank), named: `evtui search` defaults to `best` since the
    # ranking issue, which bench_scale.py / bench_methods.py measure on their own.
    for q in qs[:10]:  # warm the index readers and caches
        searcher.search(q, k=20, method=METHOD)
    lat: list[float] = []
    for q in qs:
        t = time.perf_counter()
        searcher.search(q, k=20, method=METHOD)
        lat.append((time.perf_counter() - t) * 1000)
    lat.sort()
    lib.close()
    return {
        "sentences": stats["sentences"],
        "papers": stats["papers"],
        "ingest_seconds": round(ingest_s, 2),
        "ingest_sentences_per_s": round(report.sentences / ingest_s),
        "db_mb": round(stats["db_bytes"] / 1e6, 1),
        "index_mb": round(stats["index_bytes"] / 1e6, 1),
        "queries": len(lat),
        "search_ms_p50": round(statistics.median(lat), 2),
        "search_ms_p95": round(lat[int(0.95 * (len(lat) - 1))], 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    print(json.dumps({"machine": f"{platform.machine()} {os.cpu_count()} cores", "python": platform.python_version(),
                      "date": time.strftime("%Y-%m-%d")}))
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        for size in args.sizes:
            print(json.dumps({"size": size, **run(size, args.queries, Path(tmp))}), flush=True)


if __name__ == "__main__":
    main()
