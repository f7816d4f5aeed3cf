"""How fast a cancel stops embedding (the Library screen's `c`), idle and under load, and what answering fast costs
in throughput.

    python benchmarks/bench_embed_cancel.py [--n 1024] [--cancels 6] [--busy 2]

Cancel: `Embedder.embed` runs in a thread on N real sentences (the demo's SciFact abstracts) with a `stop()` as the
app passes one; after a random 1-3 s the flag is set, and the time until `embed` raises EmbedStopped is the cancel
latency (the app adds only its own message handling). Throughput: the same N sentences embedded with and without a
`stop()` (a run that cannot be cancelled keeps whole batches), alternating, sentences per second each.
`--busy K` starts K pure-Python busy loops (a loaded 2-core machine) for the whole run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def cancel_once(emb: object, texts: list[str], after: float) -> float:
    from evtui.embed import EmbedStopped

    flag = threading.Event()
    ended: list[float] = []

    def run() -> None:
        try:
            emb.embed(texts, batch_size=64, stop=flag.is_set)  # type: ignore[attr-defined]
        except EmbedStopped:
            pass
        ended.append(time.perf_counter())

    th = threading.Thread(target=run)
    th.start()
    time.sleep(after)
    t0 = time.perf_counter()
    flag.set()
    th.join()
    return ended[0] - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--cancels", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=2, help="throughput rounds (with / without stop, alternating)")
    ap.add_argument("--busy", type=int, default=0, help="pure-Python busy loops running meanwhile")
    args = ap.parse_args()
    from bench_embed import sentences

    from evtui.embed import Embedder

    busy = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(args.busy)]
    try:
        texts = sentences(args.n)
        rng = random.Random(1)
        with tempfile.TemporaryDirectory() as tmp:
            emb = Embedder(Path(tmp))
            emb.embed(texts[:64])  # load + warm
            lat = [cancel_once(emb, texts, rng.uniform(1.0, 3.0)) for _ in range(args.cancels)]
            paced, whole = [], []
            for _ in range(args.rounds):
                t = time.perf_counter()
                emb.embed(texts, batch_size=64, stop=lambda: False)
                paced.append(len(texts) / (time.perf_counter() - t))
                t = time.perf_counter()
                emb.embed(texts, batch_size=64)
                whole.append(len(texts) / (time.perf_counter() - t))
    finally:
        for p in busy:
            p.kill()
    print(json.dumps({"busy_loops": args.busy, "load": round(os.getloadavg()[0], 1), "sentences": len(texts),
                      "cancel_s": [round(x, 2) for x in lat], "cancel_p50_s": round(statistics.median(lat), 2),
                      "cancel_max_s": round(max(lat), 2),
                      "per_s_cancellable": [round(x, 1) for x in paced], "per_s_whole_batches": [round(x, 1) for x in whole],
                      "throughput_ratio": round(statistics.median(paced) / statistics.median(whole), 3)}))


if __name__ == "__main__":
    main()
