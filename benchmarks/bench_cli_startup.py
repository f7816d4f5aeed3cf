"""`evtui search --method bm25 --json` as a cold process: wall and CPU time, median of N runs, and which heavy
modules the process imported (docs/experiments/refactors.md, "The CLI package and its start-up").

    EVTUI_HOME=/tmp/cli-home python benchmarks/bench_cli_startup.py --runs 10

The library is the demo (the first command on an empty home loads it). Bytecode is written as an installed
package has it (PYTHONDONTWRITEBYTECODE is dropped), and one warm-up run fills the OS cache before the timed runs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

HEAVY = ("rich", "textual", "fastembed", "onnxruntime", "numpy", "lightgbm", "litellm", "pyarrow", "evtui.judge", "evtui.ingest",
         "evtui.tui", "evtui.verify", "evtui.bench")


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def imported(query: str, method: str, env: dict[str, str]) -> list[str]:
    code = ("import sys, json; from evtui.cli import main; rc = main(sys.argv[1:]); "
            "sys.stderr.write(json.dumps(sorted(sys.modules)))")
    proc = subprocess.run([sys.executable, "-c", code, "search", query, "--method", method, "--json"], env=env,
                          capture_output=True, text=True, check=True)
    names = json.loads(proc.stderr.splitlines()[-1])
    return sorted({h for h in HEAVY for n in names if n == h or n.startswith(h + ".")})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--query", default="aspirin reduces the risk of colorectal cancer")
    ap.add_argument("--method", default="bm25")
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    argv = [sys.executable, "-m", "evtui.cli", "search", args.query, "--method", args.method, "--json"]
    run_once(argv, env)  # warm-up: bytecode written, files in the OS cache
    walls, cpus = zip(*(run_once(argv, env) for _ in range(args.runs)), strict=True)
    print(json.dumps({"command": " ".join(argv[1:]), "runs": args.runs,
                      "wall_median_s": round(statistics.median(walls), 3), "wall_min_s": round(min(walls), 3),
                      "cpu_median_s": round(statistics.median(cpus), 3),
                      "heavy_imported": imported(args.query, args.method, env)}, indent=2))


if __name__ == "__main__":
    main()
