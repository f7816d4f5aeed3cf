"""The local judge within claims' own evidence papers: ROC-AUC of its score for "a gold evidence sentence".

Each claim (claim mode) is searched with `best` within each of its evidence papers (top --k), every hit judged, and
the scores pooled: ROC-AUC, the gold rate at each score, and the share of >= 80 scores that are gold. Two sets:

- `checkcovid`: Check-COVID train claims with a side (a bench library of its corpus under --home; built on first use);
- `scifact`: SciFact's paper-grouped fold 0 (the verifier's calibration claims) in a library that holds the SciFact
  corpus (--home, e.g. the demo library's home).

Both are training data of the judge's LightGBM model: figures are in-sample for it, and serve to compare the rules
on top of it (docs/experiments/judge.md).

    python benchmarks/bench_judge_within_paper.py checkcovid --home /tmp/ccb
    python benchmarks/bench_judge_within_paper.py scifact --home DEMO_HOME
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from bench_judge_levels import auc  # noqa: E402
from bench_verifier import scifact_items  # noqa: E402

from evtui.bench.checkcovid import gold_sentence_ids  # noqa: E402
from evtui.bench.driver import bench_library  # noqa: E402
from evtui.config import Config  # noqa: E402
from evtui.judge.local import LocalJudge  # noqa: E402
from evtui.library import Library  # noqa: E402
from evtui.search import Searcher  # noqa: E402


def checkcovid(shared: Path, home: Path) -> tuple[Library, list[tuple[str, str, set[str]]]]:
    corpus = shared / "check-covid" / "corpus.json"
    rows, seen = [], set()
    for line in (shared / "check-covid" / "train" / "covidCheck_train_composed+extracted.json").open():
        r = json.loads(line)
        if r["label"] in ("SUPPORT", "REFUTE") and (r["claim"], r["cord_id"]) not in seen:
            seen.add((r["claim"], r["cord_id"]))
            rows.append((r["claim"], r["cord_id"], {e["sent_index"] for e in r["evidence_set"]}))
    lib = bench_library("checkcovid", corpus, home)
    ids = gold_sentence_ids(corpus, lib, {c for _q, c, _g in rows})
    items = []
    for claim, cord, gold in rows:
        row = ids.get(cord)
        if row:
            items.append((claim, f"cord:{cord}", {row[i] for i in gold if i < len(row) and row[i]}))
    return lib, items


def scifact(shared: Path, home: Path) -> tuple[Library, list[tuple[str, str, set[str]]]]:
    lib = Library(Config(home=home, demo=False), read_only=True)
    seen, items = set(), []
    for _cid, claim, paper, gold in scifact_items(shared):
        if (claim, paper) not in seen:  # gold keys are stored positions (the title is 0)
            seen.add((claim, paper))
            items.append((claim, paper, {f"{paper}:{pos}" for pos in gold}))
    return lib, items


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("set", choices=("checkcovid", "scifact"))
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "datasets")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--limit", type=int, default=0, help="the first N (claim, paper) pairs only")
    args = ap.parse_args(argv)
    lib, items = (checkcovid if args.set == "checkcovid" else scifact)(args.shared, args.home)
    items = items[:args.limit] if args.limit else items
    s = Searcher(lib)
    judge = LocalJudge(lib, s.ranker)
    scores, gold = [], []
    for claim, paper, gold_ids in items:
        res = s.search(claim, k=args.k, paper=paper, mode="claim", method="best")
        for e, j in zip(res.evidence, judge.judge(res.query, res.evidence), strict=True):
            if j.status == "ok":
                scores.append(j.score)
                gold.append(int(e.sentence.id in gold_ids))
    sc, gd = np.array(scores), np.array(gold)
    print(json.dumps({
        "set": args.set, "pairs": len(items), "judged": len(sc), "gold": int(gd.sum()),
        "roc_auc": round(auc(scores, gold), 4),
        "gold_rate_by_score": {v: [int((sc == v).sum()), round(float(gd[sc == v].mean()), 3) if (sc == v).any()
                                   else None] for v in range(0, 101, 20)},
        "share_80_plus_gold": round(float(gd[sc >= 80].mean()), 3) if (sc >= 80).any() else None,
        "judge": judge.model + " " + judge.prompt_version, "kind": "in-sample for the judge's model"}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
