"""Record the CLI's JSON outputs on the demo library, to show a refactor changed no contract.

    python benchmarks/cli_contracts.py --home /tmp/contracts-home --out /tmp/contracts-before
    ... refactor ...
    python benchmarks/cli_contracts.py --home /tmp/contracts-home --out /tmp/contracts-after
    diff -r /tmp/contracts-before /tmp/contracts-after

Timing fields (seconds, durations) and run ids vary between runs; they are replaced by placeholders so the
diff shows only what a tool reading the JSON would see change. The home is made on first use (the demo
library); bench runs use the test fixture, so no ../shared data is needed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EB3 = ROOT / "tests" / "fixtures" / "bench" / "eb3.json"
HYP = "aspirin reduces the risk of colorectal cancer"
TRIPLET = "(BRCA1, associated with, breast cancer)"

COMMANDS: dict[str, list[str]] = {
    "stats": ["stats", "--json"],
    "papers": ["papers", "--json"],
    "show": ["show", "--json", "PMC2768302"],
    **{f"search-{m}": ["search", "--json", "--k", "10", "--method", m, HYP]
       for m in ("best", "bm25-coverage", "bm25", "dense", "hybrid", "random", "evidential")},
    "search-results": ["search", "--json", "--k", "10", "--results", HYP],
    "search-triplet": ["search", "--json", "--k", "10", TRIPLET],
    "search-filters": ["search", "--json", "--k", "10", "--section", "results", "--year-from", "2005",
                       "--year-to", "2015", HYP],
    "search-paper": ["search", "--json", "--k", "5", "--paper", "PMC2768302", "transcription factor binding"],
    "search-claim-mode": ["search", "--json", "--k", "5", "--mode", "claim", HYP],
    "judge-local": ["judge", "--json", "--k", "5", "--judge", "local", HYP],
    "verify": ["verify", "--json", "--papers", "3", "Aspirin reduces colorectal cancer risk."],
    **{f"bench-{m}": ["bench", "evidencebench", "--json", "--no-save", "--data", str(EB3), "--task", "all",
                      "--method", m] for m in ("best", "bm25", "bm25-coverage", "random", "hybrid")},
    "bench-local-rerank": ["bench", "evidencebench", "--json", "--no-save", "--data", str(EB3), "--task",
                           "er-10", "--method", "llm-rerank", "--judge", "local"],
    "select-clear": ["select", "--json", "--clear"],
    "select": ["select", "--json", "--k", "3", HYP],
}

VOLATILE = re.compile(r"(seconds|elapsed|_ms|_s|duration|started|finished|created|timestamp|^id$|run_id|when)$")


def scrub(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: scrub(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, key) for v in value]
    if VOLATILE.search(key) and isinstance(value, (int, float, str)) and not isinstance(value, bool):
        return f"<{key}>"
    return value


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--only", nargs="*", help="names of commands to run (default all)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "EVTUI_HOME": str(args.home)}
    for name, argv in COMMANDS.items():
        if args.only and name not in args.only:
            continue
        proc = subprocess.run([sys.executable, "-m", "evtui.cli", *argv], capture_output=True, text=True,
                              env=env, cwd=ROOT, check=False)
        try:
            doc: Any = scrub(json.loads(proc.stdout))
        except json.JSONDecodeError:
            doc = {"stdout": proc.stdout[-2000:]}
        result = {"rc": proc.returncode, "json": doc}
        (args.out / f"{name}.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n",
                                               encoding="utf-8")
        print(f"{name}: rc {proc.returncode}", flush=True)
    if "export" not in (args.only or ["export"]):
        return 0
    for fmt in ("md", "jsonl", "bibtex"):
        target = args.out / f"export.{fmt}"
        proc = subprocess.run([sys.executable, "-m", "evtui.cli", "export", "--out", str(target), "--format", fmt],
                              capture_output=True, text=True, env=env, cwd=ROOT, check=False)
        print(f"export {fmt}: rc {proc.returncode}", flush=True)
        if target.exists():  # the Markdown carries the export date; keep the rest byte-for-byte
            text = re.sub(r"\d{4}-\d{2}-\d{2}[T ]?[\d:.+Z]*", "<date>", target.read_text(encoding="utf-8"))
            target.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
