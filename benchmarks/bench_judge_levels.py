"""The local judge's levels against EvidenceBench's labels: ROC-AUC of the 0-100 score for "this sentence is
evidence" (it covers one of the item's aspects) and the gold rate at each level, over the sentences `evtui judge
HYPOTHESIS --paper ID` judges (best's top K within the item's paper).

    python benchmarks/bench_judge_levels.py --data ../shared/datasets/evidencebench/evidencebench_dev_set.json \
        --home /tmp/judge-bench [--k 20] [--limit N] [--without-core]

    python benchmarks/bench_judge_levels.py --scifact ../shared/datasets/scifact/claims_train.jsonl \
        --corpus ../shared/datasets/scifact/corpus.jsonl --home /tmp/judge-bench [--k 10] [--limit N]

--scifact: library-wide, as a user searching the whole corpus sees it: each claim's top K sentences of `best` over
the SciFact corpus, judged in claim mode; reports how many of the judge's >= 80 scores come from the claim's
evidence papers (and the ROC-AUC of the score for "from an evidence paper" / "a gold rationale"). Only claims with
evidence count.

--without-core: the judge without the core-concept rules (levels 4-5 need the query's subject and outcome, a
sentence without its subject is at most 2, a finding in the negative on both at least 3), to compare.

The bench library is built in --home as `evtui bench evidencebench` builds it (the first run pays the ingest).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from evtui.bench import driver, scifact
from evtui.bench.evidencebench import load_items
from evtui.bench.scifact_ids import to_scifact_index
from evtui.judge import local
from evtui.judge.local import LocalJudge
from evtui.search import Searcher


def auc(scores: list[float], gold: list[int]) -> float:
    """Mann-Whitney ROC-AUC, ties counted half."""
    s, g = np.asarray(scores, dtype=float), np.asarray(gold, dtype=bool)
    pos, neg = s[g], s[~g]
    if not len(pos) or not len(neg):
        return float("nan")
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(wins / (len(pos) * len(neg)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, help="the EvidenceBench JSON (the within-paper mode)")
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--without-core", action="store_true")
    ap.add_argument("--scifact", type=Path, default=None, help="SciFact claims: the library-wide mode")
    ap.add_argument("--corpus", type=Path, default=None, help="with --scifact: the SciFact corpus.jsonl")
    args = ap.parse_args()
    if args.without_core:
        local.NO_SUBJECT_MAX_LEVEL = local.NO_OUTCOME_MAX_LEVEL = 5
        local.NEGATED_MIN_LEVEL = 0
    if args.scifact is not None:
        if args.corpus is None:
            ap.error("--scifact needs --corpus")
        library_wide(args)
        return
    if args.data is None:
        ap.error("--data (EvidenceBench) or --scifact is needed")
    items = load_items(args.data)
    lib = driver.bench_library("evidencebench", args.data, args.home, empty_ok=True)
    searcher = Searcher(lib)
    judge = LocalJudge(lib, searcher.ranker)
    scores: list[float] = []
    gold: list[int] = []
    for n, (item_id, item) in enumerate(items.items()):
        if args.limit is not None and n >= args.limit:
            break
        paper = str(item.get("paper_id") or item_id)
        labels = {int(i): a for i, a in item["sentence_index2aspects"].items()}
        res = searcher.search(item["hypothesis"], k=args.k, paper=paper, mode="hypothesis", method="best")
        for e, j in zip(res.evidence, judge.judge(res.query, res.evidence), strict=True):
            if j.status != "ok":
                continue
            scores.append(j.score)
            gold.append(int(bool(labels.get(e.sentence.position))))
    levels = {}
    for lv in range(6):
        sel = [g for s, g in zip(scores, gold, strict=True) if s == 20 * lv]
        levels[20 * lv] = {"n": len(sel), "gold_rate": round(sum(sel) / len(sel), 3) if sel else None}
    high = [g for s, g in zip(scores, gold, strict=True) if s >= 80]
    print(json.dumps({"judged": len(scores), "gold": sum(gold), "roc_auc": round(auc(scores, gold), 4),
                      "levels": levels, "gold_rate_at_80_plus": round(sum(high) / len(high), 3) if high else None},
                     indent=1))
    lib.close()


def library_wide(args: argparse.Namespace) -> None:
    """The judge's high scores over the whole SciFact corpus: are they on the claim's evidence papers?"""
    claims = [c for c in scifact.load_claims(args.scifact) if c.get("evidence")]
    lib = driver.bench_library("scifact", args.corpus, args.home)
    searcher = Searcher(lib)
    judge = LocalJudge(lib, searcher.ranker)
    scores: list[float] = []
    in_paper: list[int] = []
    rationale: list[int] = []
    for c in claims[: args.limit]:
        evidence = {scifact.paper_id(d): {int(i) for r in rs for i in r["sentences"]}
                    for d, rs in c["evidence"].items()}
        res = searcher.search(c["claim"], k=args.k, mode="claim", method="best")
        for e, j in zip(res.evidence, judge.judge(res.query, res.evidence), strict=True):
            if j.status != "ok":
                continue
            scores.append(j.score)
            gold_paper = e.sentence.paper_id in evidence
            in_paper.append(int(gold_paper))
            rationale.append(int(gold_paper and to_scifact_index(e.sentence.paper_id, e.sentence.position)
                                 in evidence[e.sentence.paper_id]))
    high = [g for s, g in zip(scores, in_paper, strict=True) if s >= 80]
    levels = {20 * lv: sum(1 for s in scores if s == 20 * lv) for lv in range(6)}
    print(json.dumps({"claims": len(claims[: args.limit]), "judged": len(scores), "scores_80_plus": len(high),
                      "from_evidence_papers_80_plus": sum(high),
                      "share_80_plus_from_evidence_papers": round(sum(high) / len(high), 3) if high else None,
                      "roc_auc_evidence_paper": round(auc(scores, in_paper), 4),
                      "roc_auc_rationale": round(auc(scores, rationale), 4), "levels_n": levels}, indent=1))
    lib.close()


if __name__ == "__main__":
    main()
