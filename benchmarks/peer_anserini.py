"""Pyserini's engine (Anserini 0.22.1 on Lucene, Java 17) beside evtui, on the sentences evtui stored.

    python benchmarks/peer_anserini.py --jar anserini-0.22.1-fatjar.jar --sentences SENTENCES.jsonl \
        --work /tmp/anserini [--queries 200] [--no-build]

The jar is the one the `pyserini==0.22.1` wheel ships (`pip download pyserini==0.22.1 --no-deps`, then unzip
`pyserini/resources/jars/anserini-0.22.1-fatjar.jar`); running it with `java -cp` measures exactly what Pyserini's
`python -m pyserini.index.lucene` runs, without pyjnius. SENTENCES.jsonl is what `bench_peers.py` exports
(`[sentence_id, paper_id, text]` lines in paper order).

Build, as evtui and the raw tantivy peer do: a sentence index with positions and stored text, and a paper index of
each paper's sentences joined; both in one process each (JVM start-up included, as `evtui ingest`'s start-up is),
`-threads 2`. Converting the lines to Anserini's JsonCollection happens before the clock starts.

Query: the same queries as bench_peers' query stage (bench_scale.queries), k=20, one search thread,
stored text not fetched (Anserini writes a TREC run). The per-query time is (a run of the N queries read twice - a run
of them read once) / N, so the JVM's start-up and warm-up are left out; evtui's p50 for the same queries comes from `bench_peers.py
--home`. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_peers import measured  # noqa: E402


def collections(sentences: Path, work: Path) -> tuple[Path, Path]:
    """Anserini JsonCollection folders for the sentences and the papers (each paper's sentences joined)."""
    s_dir, p_dir = work / "in-sentences", work / "in-papers"
    for d in (s_dir, p_dir):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    paper, parts = None, []
    with sentences.open(encoding="utf-8") as src, (s_dir / "docs.jsonl").open("w", encoding="utf-8") as s_out, \
            (p_dir / "docs.jsonl").open("w", encoding="utf-8") as p_out:
        for line in src:
            sid, pid, text = json.loads(line)
            s_out.write(json.dumps({"id": sid, "contents": text}) + "\n")
            if pid != paper and paper is not None:
                p_out.write(json.dumps({"id": paper, "contents": " ".join(parts)}) + "\n")
                parts = []
            paper = pid
            parts.append(text)
        if paper is not None:
            p_out.write(json.dumps({"id": paper, "contents": " ".join(parts)}) + "\n")
    return s_dir, p_dir


def index_cmd(jar: Path, src: Path, out: Path, *, positions: bool, raw: bool) -> list[str]:
    cmd = ["java", "-cp", str(jar), "io.anserini.index.IndexCollection", "-collection", "JsonCollection",
           "-input", str(src), "-index", str(out), "-generator", "DefaultLuceneDocumentGenerator", "-threads", "2"]
    return cmd + (["-storePositions"] if positions else []) + (["-storeRaw"] if raw else [])


def build(jar: Path, sentences: Path, work: Path) -> dict[str, Any]:
    s_dir, p_dir = collections(sentences, work)
    out: dict[str, Any] = {}
    for name, src, positions, raw in (("sentences", s_dir, True, True), ("papers", p_dir, False, False)):
        idx = work / f"index-{name}"
        shutil.rmtree(idx, ignore_errors=True)
        m = measured(index_cmd(jar, src, idx, positions=positions, raw=raw))
        m.pop("out")
        out[name] = m
    out["wall_s"] = round(out["sentences"]["wall_s"] + out["papers"]["wall_s"], 2)
    out["cpu_s"] = round(out["sentences"]["cpu_s"] + out["papers"]["cpu_s"], 2)
    out["peak_rss_mb"] = max(out["sentences"]["peak_rss_mb"], out["papers"]["peak_rss_mb"])
    return out


def query_ms(jar: Path, index: Path, qs: list[str], work: Path) -> float:
    """Milliseconds a query once the JVM is warm: (the queries read twice - read once) / their number, so start-up
    and the JIT's warm-up fall out of the difference."""
    def run(times: int) -> float:
        topics = work / f"topics-x{times}.tsv"
        lines = (f"{n}\t{' '.join(q.split())}\n" for n, q in enumerate(qs * times))
        topics.write_text("".join(lines), encoding="utf-8")
        m = measured(["java", "-cp", str(jar), "io.anserini.search.SearchCollection", "-index", str(index),
                      "-topics", str(topics), "-topicreader", "TsvString", "-output", str(work / f"run-x{times}.txt"),
                      "-bm25", "-hits", "20", "-threads", "1"])
        return float(m["wall_s"])
    once, twice = run(1), run(2)
    return round(1000 * (twice - once) / max(len(qs), 1), 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jar", type=Path, required=True)
    ap.add_argument("--sentences", type=Path, required=True)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--no-build", action="store_true", help="query the indexes a previous run built")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    row: dict[str, Any] = {"peer": "anserini-0.22.1 (pyserini 0.22.1)"}
    if not args.no_build:
        row["build"] = build(args.jar, args.sentences, args.work)
    from bench_scale import queries

    qs = queries(args.queries, [])
    row["queries"] = len(qs)
    row["query_ms_warm_mean"] = query_ms(args.jar, args.work / "index-sentences", qs, args.work)
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
