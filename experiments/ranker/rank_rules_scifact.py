"""SciFact train nDCG@10 of `best` with the library-wide rank rules varied (evtui/rank/pipeline.py's constants).

    python experiments/ranker/rank_rules_scifact.py NAME RECALL_FLOOR FULL_COVER_FEW [LIMIT] --home HOME

RECALL_FLOOR 0 turns the BM25 floor off, FULL_COVER_FEW 0 the full-cover rule. HOME is the data home whose SciFact
bench library `evtui bench scifact --corpus ../shared/datasets/scifact/corpus.jsonl` built (or builds, once).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from evtui.bench.scifact import run_scifact
from evtui.rank import pipeline


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("name")
    ap.add_argument("floor", type=int)
    ap.add_argument("few", type=int)
    ap.add_argument("limit", type=int, nargs="?", default=None)
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--shared", type=Path, default=Path("../shared/datasets"))
    args = ap.parse_args()
    pipeline.RECALL_FLOOR, pipeline.FULL_COVER_FEW = args.floor, args.few
    t = time.time()
    sf = args.shared / "scifact"
    res, _ = run_scifact(sf / "corpus.jsonl", sf / "claims_train.jsonl", "best", limit=args.limit, home=args.home)
    print(json.dumps({"variant": args.name, "floor": args.floor, "few": args.few, "limit": args.limit,
                      "ndcg@10": res["ndcg@10"], "recall@10": res["recall@10"], "s": round(time.time() - t)}))


if __name__ == "__main__":
    main()
