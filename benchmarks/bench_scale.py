"""A 10M-sentence library on one machine: ingest time, disk, peak memory, search latency, partial dense coverage.

    python benchmarks/bench_scale.py --sentences 10000000 --workdir /tmp/evtui-scale [--queries 200] [--embed 20000]

The corpus is real sentences (the bundled demo library, plus ../shared/datasets when present: SciFact, Check-COVID,
BC5CDR, PMC JATS) recombined into synthetic 10-sentence structured abstracts (background / methods / results /
conclusion labels, so section filters and priors have something to work on), written as gzip'd SciFact-corpus
JSONL shards and ingested by a real `evtui ingest` subprocess whose resident memory is sampled every 0.2 s.
Then, in this process: BM25 search p50/p95 with highlights (`bm25`, `bm25-coverage`, `best`, and `bm25` with a
section filter), and dense/hybrid behaviour when embeddings cover only part of the library (`--embed N`
sentences embedded; hybrid embeds its BM25 candidates lazily).
Prints one JSON object per stage; BENCHMARKS.md records the figures. `--keep` keeps the built library.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "datasets"
sys.path.insert(0, str(ROOT))

PER_PAPER = 10
LABELS = ["BACKGROUND", "METHODS", "RESULTS", "RESULTS", "CONCLUSIONS"]


def sentence_pool() -> tuple[list[str], list[str]]:
    """Distinct real sentences and titles from the demo data and, when present, the shared corpora."""
    from evtui.ingest import iter_papers
    from evtui.models import ParsedPaper

    sources = [ROOT / "data" / "demo"]
    for rel in ("scifact/corpus.jsonl", "check-covid", "bc5cdr", "pmc-jats"):
        if (SHARED / rel).exists():
            sources.append(SHARED / rel)
    from evtui.ingest import discover

    files, _errors = discover(sources)
    sents: set[str] = set()
    titles: set[str] = set()
    for f in files:
        try:
            for p in iter_papers(f, "auto"):
                if not isinstance(p, ParsedPaper):
                    continue
                if p.title:
                    titles.add(p.title)
                sents.update(s.text for s in p.sentences if not s.is_heading and 40 <= len(s.text) <= 400)
        except Exception:  # noqa: BLE001 - a non-paper file in the shared folder (README, labels)
            continue
    return sorted(sents), sorted(titles)


def write_shards(out: Path, n_sentences: int, sents: list[str], titles: list[str], per_shard: int) -> int:
    rng = random.Random(n_sentences)
    out.mkdir(parents=True, exist_ok=True)
    body = PER_PAPER - 1  # the title is the paper's first sentence
    papers = n_sentences // PER_PAPER
    per_file = max(1, per_shard // PER_PAPER)
    for start in range(0, papers, per_file):
        with gzip.open(out / f"shard-{start // per_file:04d}.jsonl.gz", "wt", encoding="utf-8", compresslevel=1) as fh:
            for doc in range(start, min(papers, start + per_file)):
                picked = [sents[rng.randrange(len(sents))] for _ in range(body)]
                marks = sorted(rng.sample(range(1, body), len(LABELS) - 1))
                abstract = []
                for i, s in enumerate(picked):
                    label = LABELS[0] if i == 0 else (LABELS[marks.index(i) + 1] if i in marks else None)
                    abstract.append(f"{label}: {s}" if label else s)
                fh.write(json.dumps({"doc_id": doc, "title": titles[rng.randrange(len(titles))],
                                     "abstract": abstract, "structured": True}) + "\n")
    return papers * PER_PAPER


def rss_parts(pid: int) -> dict[str, float]:
    """VmRSS and its parts (MB): anonymous memory (heaps, DuckDB's buffer pool, Tantivy's writer arena) and
    file-backed pages (the index's memory-mapped segments: page cache the kernel reclaims under pressure)."""
    out = {"VmRSS": 0.0, "RssAnon": 0.0, "RssFile": 0.0}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key = line.split(":")[0]
            if key in out:
                out[key] = int(line.split()[1]) / 1024
    except OSError:
        pass
    return out


def rss_mb(pid: int) -> float:
    return rss_parts(pid)["VmRSS"]


def ingest(shards: Path, home: Path) -> dict[str, Any]:
    env = {**os.environ, "EVTUI_HOME": str(home), "EVTUI_DEMO": "false", "EVTUI_CONFIG": str(home / "none.toml")}
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "evtui.cli", "ingest", str(shards), "--json"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = peak_anon = peak_file = 0.0
    samples: list[tuple[float, float, float]] = []
    while proc.poll() is None:
        parts = rss_parts(proc.pid)
        peak = max(peak, parts["VmRSS"])
        peak_anon, peak_file = max(peak_anon, parts["RssAnon"]), max(peak_file, parts["RssFile"])
        samples.append((round(time.perf_counter() - t0, 1), round(parts["RssAnon"]), round(parts["RssFile"])))
        time.sleep(0.2)
    out, errs = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"ingest failed ({proc.returncode}): {errs[-2000:]}")
    seconds = time.perf_counter() - t0
    report = json.loads(out)
    step = max(1, len(samples) // 20)
    return {"seconds": round(seconds, 1), "sentences": report["sentences"],
            "sentences_per_s": round(report["sentences"] / seconds), "papers": report["papers_added"],
            "peak_rss_mb": round(peak), "peak_rss_anon_mb": round(peak_anon), "peak_rss_file_mb": round(peak_file),
            "rss_curve_anon_file_mb": samples[::step], "errors": len(report["errors"])}


def disk(home: Path) -> dict[str, float]:
    def size(p: Path) -> int:
        return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.is_dir() else (
            p.stat().st_size if p.exists() else 0)
    db = size(home / "library.duckdb") + size(home / "library.duckdb.wal")
    return {"duckdb_mb": round(db / 1e6), "index_mb": round(size(home / "index") / 1e6)}


def queries(n: int, titles: list[str]) -> list[str]:
    claims = SHARED / "scifact" / "claims_train.jsonl"
    rng = random.Random(7)
    if claims.exists():
        qs = [json.loads(line)["claim"] for line in claims.open(encoding="utf-8")]
    else:
        qs = list(titles)
    rng.shuffle(qs)
    triplets = ["(aspirin, reduce, colorectal cancer)", "(statins, reduce, LDL cholesterol)",
                "(interleukin 6, increase, COVID-19 severity)", "(lithium, cause, toxicity)",
                "(metformin, reduce, mortality)"]
    return (triplets + qs)[:n]


def latency(fn: Any, qs: list[str]) -> dict[str, float]:
    for q in qs[:5]:
        fn(q)  # warm readers and caches
    ms = []
    for q in qs:
        t = time.perf_counter()
        fn(q)
        ms.append((time.perf_counter() - t) * 1000)
    ms.sort()
    return {"n": len(ms), "p50_ms": round(statistics.median(ms), 1),
            "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 1), "max_ms": round(ms[-1], 1)}


class PeakRss:
    """Samples this process's resident memory in a thread (ru_maxrss would include the corpus build)."""

    def __init__(self) -> None:
        self.peak = 0.0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_mb(os.getpid()))
            time.sleep(0.1)

    def __enter__(self) -> PeakRss:
        self._t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._t.join()


def search_stage(home: Path, qs: list[str], embed_n: int) -> dict[str, Any]:
    from evtui.config import Config
    from evtui.embed import coverage, ensure_embeddings
    from evtui.library import Library
    from evtui.search import Searcher

    out: dict[str, Any] = {}
    with PeakRss() as mem:
        t0 = time.perf_counter()
        lib = Library(Config(home=home, demo=False))
        out["open_s"] = round(time.perf_counter() - t0, 2)
        s = Searcher(lib)
        out["bm25"] = latency(lambda q: s.search(q, k=20, method="bm25"), qs)
        out["bm25_results_only"] = latency(lambda q: s.search(q, k=20, method="bm25", section="results"), qs)
        out["bm25-coverage"] = latency(lambda q: s.search(q, k=20, method="bm25-coverage"), qs)
        out["best"] = latency(lambda q: s.search(q, k=20, method="best"), qs[: max(10, len(qs) // 4)])
        hits = s.search(qs[0], k=20, method="bm25").evidence
        out["highlights_in_first_result"] = len(hits[0].highlights) if hits else 0
        out["rss_after_search_mb"] = round(rss_mb(os.getpid()))
        if embed_n:
            # Part of the library embedded, as after an interrupted `evtui embed`: the first N sentences.
            ids = [r[0] for r in lib.store.con.execute(
                "SELECT id FROM sentences WHERE NOT is_heading LIMIT ?", [embed_n]).fetchall()]
            t0 = time.perf_counter()
            n = ensure_embeddings(lib, ids)
            out["embed"] = {"sentences": n, "seconds": round(time.perf_counter() - t0, 1),
                            "per_s": round(n / max(1e-9, time.perf_counter() - t0), 1)}
            t0 = time.perf_counter()
            done, total = coverage(lib)
            out["coverage"] = {"embedded": done, "searchable": total, "query_ms": round((time.perf_counter() - t0) * 1000)}
            res = s.search(qs[0], k=20, method="hybrid")
            out["hybrid_notes"] = res.notes
            out["dense"] = latency(lambda q: s.search(q, k=20, method="dense"), qs[: max(10, len(qs) // 4)])
            out["hybrid"] = latency(lambda q: s.search(q, k=20, method="hybrid"), qs[: max(10, len(qs) // 4)])
            done2, _ = coverage(lib)
            out["embedded_lazily_by_hybrid"] = done2 - done
        lib.close()
    out["peak_rss_mb"] = round(mem.peak)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sentences", type=int, default=10_000_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--embed", type=int, default=20_000, help="sentences to embed for the partial-coverage stage")
    ap.add_argument("--shard", type=int, default=500_000, help="sentences per corpus shard")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--keep", action="store_true", help="keep the corpus and the library")
    ap.add_argument("--reuse", action="store_true", help="reuse a library already built in --workdir")
    args = ap.parse_args()
    print(json.dumps({"machine": f"{platform.machine()} {os.cpu_count()} cores", "python": platform.python_version(),
                      "date": time.strftime("%Y-%m-%d"), "load": round(os.getloadavg()[0], 1)}), flush=True)
    work = Path(args.workdir or tempfile.mkdtemp(prefix="evtui-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    home = work / "home"
    try:
        t0 = time.perf_counter()
        sents, titles = sentence_pool()
        print(json.dumps({"stage": "pool", "sentences": len(sents), "titles": len(titles),
                          "seconds": round(time.perf_counter() - t0, 1)}), flush=True)
        if not (args.reuse and home.exists()):
            shutil.rmtree(home, ignore_errors=True)
            t0 = time.perf_counter()
            n = write_shards(work / "corpus", args.sentences, sents, titles, args.shard)
            print(json.dumps({"stage": "corpus", "sentences": n, "seconds": round(time.perf_counter() - t0, 1),
                              "gz_mb": round(sum(f.stat().st_size for f in (work / "corpus").iterdir()) / 1e6)}),
                  flush=True)
            print(json.dumps({"stage": "ingest", **ingest(work / "corpus", home), **disk(home)}), flush=True)
            if not args.keep:
                shutil.rmtree(work / "corpus")
        print(json.dumps({"stage": "search", "load": round(os.getloadavg()[0], 1),
                          **search_stage(home, queries(args.queries, titles), args.embed)}), flush=True)
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
