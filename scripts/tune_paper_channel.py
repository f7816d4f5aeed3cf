"""Choose the paper-level channel's settings for `best` (evtui/rank/pipeline.py) by cross-validation on public claims.

For every SciFact train claim, the library-wide `best` pool is built once per pull-in depth, and each setting
(prior form x weight) ranks it exactly as `evtui search` would (BestRanker.rank, then the BEIR harness's
sentence-to-document pooling). Settings are chosen on the 304 claims without evidence only: the shipped ranker
was trained on the 505 claims with evidence, so its scores there are in-sample and would under-weight the paper
prior. The figure reported for the choice is nested: 5 folds of those 304 claims, the setting picked on four
folds, scored on the fifth. The other rows (all 809 claims, the 505 with evidence) are printed for reference.

    python scripts/tune_paper_channel.py --corpus ../shared/datasets/scifact/corpus.jsonl \\
        --claims ../shared/datasets/scifact/claims_train.jsonl --home /tmp/pc13/home --out /tmp/pc13/tune.json

`--dense-weights 0,1`: the channel's ranking with the dense paper vectors fused in at each weight (0: BM25 alone;
evtui/paper_vectors.py — run `ensure_paper_vectors` on the bench library first, as `evtui bench` does for `best`).
"""

from __future__ import annotations

import argparse
import json
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from evtui.bench.beir import Query, docs_from_hits, evaluate, make_doc_ranker
from evtui.bench.driver import bench_library
from evtui.bench.scifact import build_qrels, load_claims
from evtui.rank.pipeline import PAPER_DENSE_WEIGHT, BestRanker
from evtui.request import NO_FILTERS
from evtui.search import Searcher

PULLS = (0, 20, 50)
FORMS = ("minmax", "ratio", "rrf")
WEIGHTS = (0.0, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
MEASURES = ("nDCG@10", "R@10", "R@100")
FOLDS = 5


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--claims", type=Path, required=True)
    ap.add_argument("--home", type=Path, required=True, help="data home for the bench library (cached)")
    ap.add_argument("--out", type=Path, help="write every setting's per-claim figures here (JSON)")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--pulls", default=",".join(map(str, PULLS)),
                    help="pull-in depths to try, comma-separated ('' for none: baselines only)")
    ap.add_argument("--methods", nargs="*", default=[],
                    help="harness methods (e.g. bm25) to rank the claims with too, for the table")
    ap.add_argument("--weights", default=",".join(map(str, WEIGHTS)), help="paper prior weights to try")
    ap.add_argument("--forms", default=",".join(FORMS), help="paper prior forms to try")
    ap.add_argument("--dense-weights", default=str(PAPER_DENSE_WEIGHT),
                    help="weights of the dense paper vectors in the channel's ranking (0: BM25 alone)")
    args = ap.parse_args()
    pulls = [int(v) for v in args.pulls.split(",") if v.strip()]
    weights = [float(v) for v in args.weights.split(",")]
    forms = [v.strip() for v in args.forms.split(",")]
    dense_weights = [float(v) for v in args.dense_weights.split(",")]

    claims = load_claims(args.claims)[:args.limit]
    qrels = build_qrels(claims, "evidence")
    cited_only = sorted(str(c["id"]) for c in claims if not c.get("evidence") and str(c["id"]) in qrels)
    with_evidence = sorted(str(c["id"]) for c in claims if c.get("evidence"))
    lib = bench_library("scifact", args.corpus, args.home)
    searcher = Searcher(lib)
    runs: dict[str, dict[str, dict[str, float]]] = {}
    t0 = time.perf_counter()
    try:
        for method in args.methods:
            rank = make_doc_ranker(lib, method, 0, 100)
            runs[method] = {str(c["id"]): rank(Query(str(c["id"]), str(c["claim"]))) for c in claims
                            if str(c["id"]) in qrels}
            print(f"{method}: {time.perf_counter() - t0:.0f} s", flush=True)
        for pull in pulls:
            ranker = BestRanker(lib)
            ranker.paper_pull = pull
            for c in claims:
                qid = str(c["id"])
                if qid not in qrels:
                    continue
                parsed = searcher.parse(str(c["claim"]), "claim")
                pool = ranker.pool_for(parsed, NO_FILTERS)
                raw = ranker.model.score(pool.x, "evidence")
                ranker.model.score = lambda x, head="evidence", raw=raw: raw  # type: ignore[method-assign]
                for dw in dense_weights:
                    ranker.paper_dense_weight = dw
                    pool.papers = ranker._paper_channel(parsed, NO_FILTERS)
                    suffix = "" if len(dense_weights) == 1 else f" dense={dw}"
                    if pull == pulls[0]:
                        runs.setdefault(f"paper-channel{suffix}", {})[qid] = dict(pool.papers)
                    for form in forms:
                        for w in weights:
                            if w == 0 and (form != forms[0] or dw != dense_weights[0]):
                                continue
                            ranker.paper_weight, ranker.paper_form = w, form
                            picked = ranker.rank(parsed, pool, 1000)
                            hits = ((pool.candidates[i].sentence.paper_id, s) for i, s in picked)
                            runs.setdefault(f"pull={pull} {form} w={w}{suffix}", {})[qid] = docs_from_hits(hits, 100)
                del ranker.model.score  # back to the class's method
            print(f"pull {pull}: {time.perf_counter() - t0:.0f} s", flush=True)
    finally:
        lib.close()

    per: dict[str, dict[str, dict[str, float]]] = {name: evaluate(qrels, run, MEASURES)[1] for name, run in runs.items()}

    def mean(name: str, ids: list[str], m: str = "nDCG@10") -> float:
        return float(np.mean([per[name][q][m] for q in ids])) if ids else 0.0

    tunable = [n for n in per if n.startswith("pull=")]
    if not tunable:
        tunable = list(per)
    folds = [[q for q in cited_only if zlib.crc32(q.encode()) % FOLDS == f] for f in range(FOLDS)]
    nested: dict[str, float] = {}
    chosen = []
    for f in range(FOLDS):
        train = [q for g in range(FOLDS) if g != f for q in folds[g]]
        best = max(tunable, key=lambda n: (mean(n, train), -len(n)))
        chosen.append(best)
        for q in folds[f]:
            nested[q] = per[best][q]["nDCG@10"]
    overall = max(tunable, key=lambda n: (mean(n, cited_only), -len(n)))
    subsets = {"all": sorted(qrels), "evidence": with_evidence, "cited-only": cited_only}
    print(f"\nnested 5-fold CV on the {len(cited_only)} cited-only claims: nDCG@10 {np.mean(list(nested.values())):.4f}"
          f" (settings chosen per fold: {chosen})")
    print(f"chosen on all cited-only claims: {overall}\n")
    print(f"{'setting':28s} " + " ".join(f"{s}:{m}".rjust(20) for s in subsets for m in MEASURES))
    ranked_names = sorted(per, key=lambda n: -mean(n, cited_only))
    extra = [n for n in (*(n for n in per if n.startswith("paper-channel")), "pull=0 minmax w=0.0", *args.methods)
             if n in per]
    for name in ranked_names[:25] + extra:
        print(f"{name:28s} " + " ".join(f"{mean(name, ids, m):20.4f}" for ids in subsets.values() for m in MEASURES))
    if args.out:
        summary: dict[str, Any] = {
            "nested_cv_cited_only_ndcg10": float(np.mean(list(nested.values()))), "chosen_per_fold": chosen,
            "chosen": overall,
            "means": {n: {s: {m: mean(n, ids, m) for m in MEASURES} for s, ids in subsets.items()} for n in per},
        }
        args.out.write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
