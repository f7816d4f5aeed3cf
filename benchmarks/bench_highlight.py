"""Highlighting one long sentence full of matches (issue 16, item 1): Matcher.spans must be linear.

    python benchmarks/bench_highlight.py [--sizes 128,512,1024] [--repeat 3]

The sentence is the audit's reproduction, "aspirin colorectal cancer reduce " repeated to SIZE KB, highlighted
for the query "aspirin reduces colorectal cancer" (three aspects, one match of each per 33 characters). Prints
one JSON line per size: the best of --repeat wall-clock timings, the spans found and the time per MB.
"""

from __future__ import annotations

import argparse
import json
import time

from evtui.query import compile_matcher, parse_query

UNIT = "aspirin colorectal cancer reduce "


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="128,512,1024", help="sentence sizes in KB (comma-separated)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    matcher = compile_matcher(parse_query("aspirin reduces colorectal cancer").aspects)
    for kb in (int(x) for x in args.sizes.split(",")):
        text = UNIT * (kb * 1024 // len(UNIT))
        best = float("inf")
        spans = 0
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            spans = len(matcher.spans(text))
            best = min(best, time.perf_counter() - t0)
        print(json.dumps({"kb": kb, "chars": len(text), "spans": spans, "seconds": round(best, 3),
                          "seconds_per_mb": round(best / (len(text) / 2**20), 3)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
