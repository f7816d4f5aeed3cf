"""The paper channel alone: whole-abstract BM25, the dense paper vectors, and the two fused (evtui/paper_vectors.py).

    python benchmarks/bench_paper_vectors.py --corpus ../shared/datasets/scifact/corpus.jsonl \\
        --claims ../shared/datasets/scifact/claims_train.jsonl --home /tmp/pv/home [--checkcovid DIR]

Papers are ranked exactly as `best`'s channel ranks them across the library (BestRanker._paper_channel: the query's
words against the title + abstract index; dense_text(query) against each paper's title + abstract vector; the
fusion rule of fuse_papers), top 100, and scored as the SciFact harness scores documents (qrels: evidence
documents, cited ones for claims without evidence). Neither the channel's BM25 nor MiniLM was trained on these
claims, so every figure is out-of-sample except the choice of the fusion weight: that is reported as nested
5-fold CV over the claims (the weight picked on four folds, scored on the fifth). The bench library's paper vectors
are computed first when missing (~0.13 s per paper on 2 quiet cores).
"""

from __future__ import annotations

import argparse
import json
import time
import zlib
from pathlib import Path

import numpy as np

from evtui.bench.beir import evaluate
from evtui.bench.driver import bench_library
from evtui.bench.scifact import build_qrels, load_claims
from evtui.paper_vectors import complete_matrix, ensure_paper_vectors
from evtui.rank.pipeline import PAPER_POOL, BestRanker, dense_text, fuse_papers
from evtui.search import Searcher

WEIGHTS = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0)
MEASURES = ("nDCG@10", "R@10", "R@100")
FOLDS = 5


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--claims", type=Path, required=True)
    ap.add_argument("--home", type=Path, required=True, help="data home for the bench library (cached)")
    ap.add_argument("--out", type=Path, help="write the figures here (JSON)")
    args = ap.parse_args()

    claims = load_claims(args.claims)
    qrels = build_qrels(claims, "evidence")
    evidence = sorted(str(c["id"]) for c in claims if c.get("evidence"))
    cited = sorted(q for q in qrels if q not in set(evidence))
    lib = bench_library("scifact", args.corpus, args.home)
    try:
        t0 = time.perf_counter()
        n = ensure_paper_vectors(lib)
        print(f"paper vectors: {n} computed in {time.perf_counter() - t0:.0f} s", flush=True)
        matrix = complete_matrix(lib)
        assert matrix is not None
        searcher, ranker = Searcher(lib), BestRanker(lib)
        bm25: dict[str, list[tuple[str, float]]] = {}
        dense: dict[str, list[tuple[str, float]]] = {}
        for c in claims:
            qid = str(c["id"])
            if qid not in qrels:
                continue
            parsed = searcher.parse(str(c["claim"]), "claim")
            bm25[qid] = lib.index.paper_search(BestRanker._words(parsed), PAPER_POOL)
            qv = ranker._query_vector(dense_text(parsed))
            dense[qid] = matrix.search(qv, PAPER_POOL) if qv is not None else []
    finally:
        lib.close()

    runs = {"bm25": {q: dict(r) for q, r in bm25.items()}, "dense": {q: dict(r) for q, r in dense.items()}}
    for w in WEIGHTS:
        runs[f"fused w={w}"] = {q: dict(fuse_papers(bm25[q], dense[q], w)) for q in bm25}
    per = {name: evaluate(qrels, run, MEASURES)[1] for name, run in runs.items()}

    def mean(name: str, ids: list[str], m: str = "nDCG@10") -> float:
        return float(np.mean([per[name][q][m] for q in ids]))

    ids = sorted(qrels)
    folds = [[q for q in ids if zlib.crc32(q.encode()) % FOLDS == f] for f in range(FOLDS)]
    fused = [n for n in per if n.startswith("fused")]
    nested: dict[str, float] = {}
    chosen = []
    for f in range(FOLDS):
        train = [q for g in range(FOLDS) if g != f for q in folds[g]]
        pick = max(fused, key=lambda n: mean(n, train))
        chosen.append(pick)
        nested.update({q: per[pick][q]["nDCG@10"] for q in folds[f]})
    subsets = {"all": ids, "evidence": evidence, "cited-only": cited}
    print(f"\nnested 5-fold CV over all {len(ids)} claims: fused nDCG@10 {np.mean(list(nested.values())):.4f}"
          f" (weights chosen per fold: {chosen})\n")
    print(f"{'ranking':14s} " + " ".join(f"{s}:{m}".rjust(20) for s in subsets for m in MEASURES))
    for name in per:
        print(f"{name:14s} " + " ".join(f"{mean(name, sub, m):20.4f}" for sub in subsets.values() for m in MEASURES))
    if args.out:
        args.out.write_text(json.dumps({
            "nested_cv_ndcg10": float(np.mean(list(nested.values()))), "chosen_per_fold": chosen,
            "means": {n: {s: {m: mean(n, sub, m) for m in MEASURES} for s, sub in subsets.items()} for n in per},
        }, indent=1))


if __name__ == "__main__":
    main()
