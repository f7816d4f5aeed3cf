"""Benchmark figures before and after a refactor: the same small runs of `evtui bench scifact|checkcovid|
evidencebench`, their JSON saved, then compared with every figure but the timings.

    python benchmarks/bench_parity.py run --shared ../shared/datasets --home /tmp/parity-home --out /tmp/before
    (change the code)
    python benchmarks/bench_parity.py run --shared ../shared/datasets --home /tmp/parity-home --out /tmp/after
    python benchmarks/bench_parity.py compare /tmp/before /tmp/after

`--home` holds the bench libraries (built once, reused by both runs); runs are not stored (`--no-save`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

LIMIT = "20"


def commands(shared: Path) -> dict[str, list[str]]:
    sf = ["--corpus", str(shared / "scifact" / "corpus.jsonl"), "--claims", str(shared / "scifact" / "claims_train.jsonl")]
    cc = ["--corpus", str(shared / "check-covid" / "corpus.json"),
          "--claims", str(shared / "check-covid" / "dev" / "covidCheck_dev_composed+extracted.json")]
    eb = ["--data", str(shared / "evidencebench" / "evidencebench_dev_set.json")]
    return {
        "scifact_bm25": ["scifact", *sf, "--method", "bm25"],
        "scifact_random": ["scifact", *sf, "--method", "random"],
        "scifact_cov": ["scifact", *sf, "--method", "bm25-coverage", "--qrels", "cited"],
        "cc_bm25": ["checkcovid", *cc, "--method", "bm25"],
        "cc_random": ["checkcovid", *cc, "--method", "random"],
        "eb_cov": ["evidencebench", *eb, "--task", "all", "--method", "bm25-coverage"],
        "eb_best": ["evidencebench", *eb, "--task", "er-optimal", "--method", "best"],
        "eb_random": ["evidencebench", *eb, "--task", "er-10", "--method", "random"],
    }


def without_timings(x: Any) -> Any:
    if isinstance(x, list):
        return [without_timings(v) for v in x]
    if isinstance(x, dict):
        return {k: without_timings(v) for k, v in x.items() if k not in ("seconds", "timings")}
    return x


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="verb", required=True)
    run = sub.add_parser("run")
    run.add_argument("--shared", type=Path, required=True)
    run.add_argument("--home", type=Path, required=True)
    run.add_argument("--out", type=Path, required=True)
    cmp_ = sub.add_parser("compare")
    cmp_.add_argument("before", type=Path)
    cmp_.add_argument("after", type=Path)
    args = ap.parse_args()
    if args.verb == "run":
        args.out.mkdir(parents=True, exist_ok=True)
        for name, cmd in commands(args.shared).items():
            full = ["evtui", "bench", *cmd, "--limit", LIMIT, "--no-save", "--json", "--home", str(args.home)]
            out = subprocess.run(full, capture_output=True, text=True, check=False)
            (args.out / f"{name}.json").write_text(out.stdout, encoding="utf-8")
            print(f"{name}: rc {out.returncode}", file=sys.stderr)
        return 0
    differ = 0
    for before in sorted(args.before.glob("*.json")):
        after = args.after / before.name
        a = without_timings(json.loads(before.read_text(encoding="utf-8")))
        b = without_timings(json.loads(after.read_text(encoding="utf-8"))) if after.exists() else None
        same = a == b
        differ += not same
        print(f"{before.stem}: {'same' if same else 'DIFFERENT'}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
