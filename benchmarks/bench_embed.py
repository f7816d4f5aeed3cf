"""Embedding throughput: evtui's Embedder vs raw fastembed on the same real sentences (same model files).

    python benchmarks/bench_embed.py [--n 2000]

Sentences: the first N SciFact abstract sentences of the bundled demo library. Batch 64, 2 threads.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def sentences(n: int) -> list[str]:
    out: list[str] = []
    with gzip.open(ROOT / "data" / "demo" / "scifact_corpus.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            out.extend(s.strip() for s in json.loads(line)["abstract"] if s.strip())
            if len(out) >= n:
                return out[:n]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=2000)
    args = ap.parse_args()
    texts = sentences(args.n)
    from evtui.embed import Embedder, model_folder

    with tempfile.TemporaryDirectory() as tmp:
        emb = Embedder(Path(tmp))
        emb.embed(texts[:64])  # load + warm
        from fastembed import TextEmbedding

        raw = TextEmbedding("sentence-transformers/all-MiniLM-L6-v2", specific_model_path=str(model_folder(Path(tmp))),
                            local_files_only=True, threads=2)
        list(raw.embed(texts[:64], batch_size=64))
        t = time.perf_counter()
        list(raw.embed(texts, batch_size=64))
        raw_s = time.perf_counter() - t
        t = time.perf_counter()
        emb.embed(texts, batch_size=64)
        ours_s = time.perf_counter() - t
    words = sum(len(s.split()) for s in texts) / len(texts)
    print(json.dumps({"sentences": len(texts), "mean_words": round(words, 1),
                      "raw_fastembed_per_s": round(len(texts) / raw_s, 1),
                      "evtui_embedder_per_s": round(len(texts) / ours_s, 1),
                      "ratio": round(raw_s / ours_s, 3)}))


if __name__ == "__main__":
    main()
