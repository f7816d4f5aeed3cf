"""evtui side by side with its peers, on exactly the sentences evtui stored: build and query, interleaved, as ratios.

    python benchmarks/bench_peers.py --sentences 300000 --workdir /tmp/evtui-peers [--rounds 2] [--queries 200]
    python benchmarks/bench_peers.py --home ~/.local/share/evtui --queries 200      # query side of a library only

Build: each round ingests the corpus (bench_scale.py's generator: real sentences in synthetic structured abstracts)
with a real `evtui ingest` subprocess, exports the sentences it stored from DuckDB, and builds them with raw
tantivy-py in another subprocess (a sentence index with positions and stored text, and a paper index of title +
abstract, as evtui keeps), and with bm25s when it is importable (optional; `--peer-python` runs the peers in
another venv). The two builds of a round run one after the other, so load on a shared machine falls on both.
Each is measured as wall seconds, CPU seconds (user + sys, all threads) and peak RSS.

Query: `bm25` through evtui's Searcher (k=20, highlights and all) against a raw tantivy query on the very same
index directory (the claim's words as one should-query over both text fields, the 20 stored documents read),
alternating per query; the median of the per-query ratios is what the issue's target reads (≤ 1.5).
Prints one JSON object per stage. With `--anserini-jar`, Pyserini's engine (Anserini on Lucene, Java 17) builds the
same sentences too (benchmarks/peer_anserini.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

# The raw tantivy build, run as its own process (so its memory and CPU are its own). Reads the exported JSONL.
RAW_BUILD = r"""
import json, os, sys, time, tantivy
src, out = sys.argv[1], sys.argv[2]
os.makedirs(out + "/s"); os.makedirs(out + "/p")
t0 = time.perf_counter()
b = tantivy.SchemaBuilder()
b.add_text_field("sentence_id", stored=True, tokenizer_name="raw")
b.add_text_field("paper_id", stored=True, tokenizer_name="raw")
b.add_text_field("text", stored=True, tokenizer_name="en_stem", index_option="position")
ix = tantivy.Index(b.build(), path=out + "/s")
pb = tantivy.SchemaBuilder()
pb.add_text_field("paper_id", stored=True, tokenizer_name="raw")
pb.add_text_field("text", stored=False, tokenizer_name="en_stem", index_option="freq")
px = tantivy.Index(pb.build(), path=out + "/p")
w = ix.writer(heap_size=256_000_000, num_threads=2)
pw = px.writer(heap_size=50_000_000, num_threads=1)
paper, parts, n = None, [], 0
for line in open(src, encoding="utf-8"):
    sid, pid, text = json.loads(line)
    w.add_document(tantivy.Document(sentence_id=sid, paper_id=pid, text=text))
    if pid != paper:
        if paper is not None:
            pw.add_document(tantivy.Document(paper_id=paper, text=" ".join(parts)))
        paper, parts = pid, []
    parts.append(text)
    n += 1
if paper is not None:
    pw.add_document(tantivy.Document(paper_id=paper, text=" ".join(parts)))
w.commit(); pw.commit(); w.wait_merging_threads(); pw.wait_merging_threads()
print(json.dumps({"sentences": n, "seconds": time.perf_counter() - t0}))
"""

BM25S_BUILD = r"""
import json, sys, time, bm25s
src = sys.argv[1]
t0 = time.perf_counter()
texts = [json.loads(line)[2] for line in open(src, encoding="utf-8")]
tokens = bm25s.tokenize(texts, stopwords="en", show_progress=False)
r = bm25s.BM25(); r.index(tokens, show_progress=False)
print(json.dumps({"sentences": len(texts), "seconds": time.perf_counter() - t0}))
"""


def measured(cmd: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Wall, CPU (user + sys of the child and its threads) and peak RSS of one subprocess."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _pid, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    out = proc.stdout.read() if proc.stdout else ""
    err = proc.stderr.read() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{cmd[:3]} failed: {err[-2000:]}")
    return {"wall_s": round(wall, 2), "cpu_s": round(ru.ru_utime + ru.ru_stime, 2),
            "peak_rss_mb": round(ru.ru_maxrss / 1024), "out": out}


def export_sentences(home: Path, dest: Path) -> int:
    """The sentences evtui stored (not headings), in paper order, as JSON lines [id, paper_id, text]."""
    import duckdb

    con = duckdb.connect(str(home / "library.duckdb"), read_only=True)
    n = 0
    with dest.open("w", encoding="utf-8") as fh:
        cur = con.execute("SELECT id, paper_id, text FROM sentences WHERE NOT is_heading ORDER BY paper_id, position")
        while rows := cur.fetchmany(50_000):
            fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
            n += len(rows)
    con.close()
    return n


def has_module(python: str, name: str) -> bool:
    return subprocess.run([python, "-c", f"import {name}"], capture_output=True).returncode == 0


def build_stage(corpus: Path, work: Path, rounds: int, peer_python: str, anserini: Path | None = None) -> None:
    with_bm25s = has_module(peer_python, "bm25s")
    for r in range(rounds):
        home = work / f"home-{r}"
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        env = {**os.environ, "EVTUI_HOME": str(home), "EVTUI_DEMO": "false", "EVTUI_CONFIG": str(home / "none.toml")}
        ev = measured([sys.executable, "-m", "evtui.cli", "ingest", str(corpus), "--json"], env)
        stored = json.loads(ev.pop("out"))["sentences"]
        sents = work / "sentences.jsonl"
        n = export_sentences(home, sents)
        raw_dir = work / "raw"
        shutil.rmtree(raw_dir, ignore_errors=True)
        raw_dir.mkdir()
        raw = measured([peer_python, "-c", RAW_BUILD, str(sents), str(raw_dir)])
        raw.pop("out")
        row: dict[str, Any] = {"stage": "build", "round": r, "sentences_stored": stored, "sentences_exported": n,
                               "load": round(os.getloadavg()[0], 1), "evtui": ev, "tantivy": raw,
                               "ratio_wall": round(ev["wall_s"] / raw["wall_s"], 2),
                               "ratio_cpu": round(ev["cpu_s"] / raw["cpu_s"], 2)}
        if anserini is not None:  # Pyserini's engine: its own collection format, converted before its clock
            import peer_anserini

            a = peer_anserini.build(anserini, sents, work / "anserini")
            row["anserini"] = a
            row["ratio_wall_anserini"] = round(ev["wall_s"] / a["wall_s"], 2)
            row["ratio_cpu_anserini"] = round(ev["cpu_s"] / a["cpu_s"], 2)
        if with_bm25s:
            b = measured([peer_python, "-c", BM25S_BUILD, str(sents)])
            b.pop("out")
            row["bm25s"] = b
            row["ratio_wall_bm25s"] = round(ev["wall_s"] / b["wall_s"], 2)
        print(json.dumps(row), flush=True)
        if r < rounds - 1:
            shutil.rmtree(home, ignore_errors=True)


def query_stage(home: Path, n_queries: int) -> None:
    import re

    import tantivy
    from bench_scale import queries

    from evtui.config import Config
    from evtui.index import _analyzers
    from evtui.library import Library
    from evtui.search import Searcher

    lib = Library(Config(home=home, demo=False), read_only=True)
    searcher = Searcher(lib)
    raw = tantivy.Index.open(str(home / "index"))
    for name, analyzer in _analyzers().items():
        raw.register_tokenizer(name, analyzer)
    raw_searcher = raw.searcher()

    def evtui_q(q: str) -> None:
        searcher.search(q, k=20, method="bm25")

    def raw_q(q: str) -> None:
        words = " ".join(re.findall(r"[\w-]+", q))
        query, _errs = raw.parse_query_lenient(words, ["text", "text_split"])
        res = raw_searcher.search(query, limit=20, count=False)
        for _s, addr in res.hits:
            raw_searcher.doc(addr)

    qs = queries(n_queries, [])
    for q in qs[:5]:
        evtui_q(q)
        raw_q(q)
    ev_ms, raw_ms, ratios = [], [], []
    for q in qs:
        t = time.perf_counter()
        evtui_q(q)
        e = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        raw_q(q)
        r = (time.perf_counter() - t) * 1000
        ev_ms.append(e)
        raw_ms.append(r)
        ratios.append(e / max(r, 1e-6))
    lib.close()
    print(json.dumps({"stage": "query", "queries": len(qs), "load": round(os.getloadavg()[0], 1),
                      "evtui_bm25_p50_ms": round(statistics.median(ev_ms), 2),
                      "tantivy_p50_ms": round(statistics.median(raw_ms), 2),
                      "median_paired_ratio": round(statistics.median(ratios), 2)}), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sentences", type=int, default=300_000, help="generated sentences to build (build stage)")
    ap.add_argument("--corpus", type=Path, default=None, help="an existing corpus folder instead of generating one")
    ap.add_argument("--home", type=Path, default=None, help="query an existing library only (no build stage)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--peer-python", default=sys.executable, help="the Python that runs the peers (bm25s venv)")
    ap.add_argument("--anserini-jar", type=Path, default=None,
                    help="Pyserini 0.22.1's Anserini fat jar (benchmarks/peer_anserini.py says where it comes from)")
    args = ap.parse_args()
    print(json.dumps({"machine": f"{os.cpu_count()} cores", "date": time.strftime("%Y-%m-%d"),
                      "load": round(os.getloadavg()[0], 1)}), flush=True)
    if args.home:
        query_stage(args.home, args.queries)
        return
    work = Path(args.workdir or tempfile.mkdtemp(prefix="evtui-peers-"))
    work.mkdir(parents=True, exist_ok=True)
    corpus = args.corpus
    if corpus is None:
        from bench_scale import sentence_pool, write_shards

        corpus = work / "corpus"
        if not corpus.exists():
            sents, titles = sentence_pool()
            write_shards(corpus, args.sentences, sents, titles, 500_000)
    build_stage(corpus, work, args.rounds, args.peer_python, args.anserini_jar)
    query_stage(work / f"home-{args.rounds - 1}", args.queries)


if __name__ == "__main__":
    main()
