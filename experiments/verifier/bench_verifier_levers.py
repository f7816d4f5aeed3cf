"""Levers on the verifier's reading of sides, measured on training runs' held-out pairs (no library needed).

    python experiments/verifier/bench_verifier_levers.py /tmp/vtrain/q /tmp/vtrain/s /tmp/vtrain/r1 [--flips] [--stack]

Each argument is a `scripts/train_verifier.py --out` folder (examples.jsonl.gz, cal_logits.npy, ccdev_logits.npy,
metrics.json, adapter.safetensors). Figures per run, on the SciFact calibration fold (paper-grouped, never trained on)
and on Check-COVID dev (fully held out):

- side accuracy: on gold rationale sentences, is the more probable of P(support) / P(refute) the gold side? This is
  what any threshold rule can at best reach among the sentences it gives a side, so it bounds the stance target;
- 3-way argmax accuracy over all pairs, and model.json's stance macro-F1 (in-sample thresholds, cross-fitted,
  Check-COVID dev);
- `--flips`: the same pairs with the claim flipped by train_verifier's rule (`flip_claim`; the gold side swaps):
  does the model read the flip (flipped-only side accuracy), and does averaging both readings help (test-time
  augmentation: P(support) := mean(P(support | claim), P(refute | flipped claim)), and the other way round)?
- `--torch`: side accuracy of the run's full-precision fine-tune (model.safetensors through torch) instead of the
  served adapter: what the compression costs;
- `--stack`: a logistic regression on the model's side margin plus the flipped reading's margin and evtui's own
  direction/negation cues (evtui/verify/cues.py), fitted by claim-grouped 5-fold CV on the SciFact fold's gold
  rationales and, fitted on the whole fold, applied to Check-COVID dev. Balanced accuracy as well, since SciFact
  has twice as many supporting rationales as refuting ones.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import train_verifier as tv  # noqa: E402

SPLITS = (("scifact_cal", "cal", "cal_logits.npy"), ("checkcovid_dev", "ccdev", "ccdev_logits.npy"))


def side_accuracy(p: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """On gold rationales (y 0 supports / 1 refutes): the larger of P(support), P(refute) against the gold side."""
    g = y != 2
    side = (p[g, 1] > p[g, 0]).astype(int)
    per = [float(np.mean(side[y[g] == c] == c)) for c in (0, 1)]
    return {"side_accuracy": round(float(np.mean(side == y[g])), 3), "supports": round(per[0], 3),
            "refutes": round(per[1], 3), "balanced": round(float(np.mean(per)), 3), "gold": int(g.sum())}


def _cue_features(claim: str, sentence: str) -> list[float]:
    from evtui.verify import cues

    def direction(text: str) -> tuple[int, bool]:
        up, down = cues._UP.search(text), cues._DOWN.search(text)
        d = 1 if up and (not down or up.start() < down.start()) else -1 if down else 0
        return d, bool(cues._NEGATED.search(text))

    cd, cn = direction(claim)
    sd, sn = direction(sentence)
    agree = cd * sd * (1 if cn == sn else -1)  # +1: same direction (negations cancelling), -1: opposite, 0: unknown
    return [float(agree), float(cn), float(sn), float(cues.non_significant(sentence))]


def torch_side_accuracy(run: Path) -> dict:
    """The full-precision fine-tune (before compression into the adapter) on the same held-out pairs."""
    from safetensors.torch import load_file

    model = tv.build_model()
    model.load_state_dict(load_file(str(run / "model.safetensors")))
    model.eval()
    enc = tv.Encoder(tv.base_dir() / "tokenizer.json")
    exs = [json.loads(x) for x in gzip.open(run / "examples.jsonl.gz", "rt")]
    out: dict = {"run": str(run), "form": "full precision (torch)"}
    for name, split, _ in SPLITS:
        ex = [e for e in exs if e["split"] == split]
        y = np.array([tv.LABELS.index(e["label"]) for e in ex])
        p = tv.softmax(tv.predict_torch(model, enc, ex))
        out[name] = {**side_accuracy(p, y), "accuracy_3way": round(float(np.mean(p.argmax(1) == y)), 3)}
    return out


def run_levers(run: Path, flips: bool, stack: bool) -> dict:
    exs = [json.loads(x) for x in gzip.open(run / "examples.jsonl.gz", "rt")]
    metrics = json.loads((run / "metrics.json").read_text())
    t = metrics["temperature"]
    out: dict = {"run": str(run), "temperature": round(t, 3), "thresholds": metrics["thresholds"],
                 "macro_f1": {"scifact_cal_in_sample_thresholds":
                              metrics["scifact_cal_insample_thresholds"]["stance_on_gold"]["macro_f1"],
                              "scifact_cal_cross_fitted": metrics["scifact_cal_crossfit"]["stance_on_gold"]["macro_f1"],
                              "checkcovid_dev": metrics["checkcovid_dev"]["stance_on_gold"]["macro_f1"]}}
    runtime = tv.adapter_runtime(run) if flips or stack else None
    enc = tv.Encoder(tv.base_dir() / "tokenizer.json") if runtime else None
    data = {}
    for name, split, logits_file in SPLITS:
        ex = [e for e in exs if e["split"] == split]
        y = np.array([tv.LABELS.index(e["label"]) for e in ex])
        p = tv.softmax(np.load(run / logits_file), t)
        res = {**side_accuracy(p, y), "accuracy_3way": round(float(np.mean(p.argmax(1) == y)), 3)}
        flip_margin = np.zeros(len(ex))
        flipped_mask = np.zeros(len(ex), dtype=bool)
        if runtime is not None:
            flipped = [tv.flip_claim(e["claim"]) for e in ex]
            idx = [i for i, c in enumerate(flipped) if c]
            pf = tv.softmax(tv.predict_with(runtime, enc, [{**ex[i], "claim": flipped[i]} for i in idx]), t)
            flipped_mask[idx] = True
            flip_margin[idx] = pf[:, 0] - pf[:, 1]  # > 0: the flipped claim is read as supported, so the claim refuted
            if flips:
                swapped = np.where(y[idx] == 2, 2, 1 - y[idx])  # the gold side of the flipped claim
                tta = p.copy()
                tta[idx, 0] = (p[idx, 0] + pf[:, 1]) / 2
                tta[idx, 1] = (p[idx, 1] + pf[:, 0]) / 2
                tta[idx, 2] = (p[idx, 2] + pf[:, 2]) / 2
                gi = [k for k, i in enumerate(idx) if y[i] != 2]
                res["flips"] = {"flippable_gold": len(gi),
                                "flipped_only_side_accuracy": side_accuracy(pf[gi], swapped[gi])["side_accuracy"],
                                "claim_only_on_those": side_accuracy(p[[idx[k] for k in gi]],
                                                                     y[[idx[k] for k in gi]])["side_accuracy"],
                                "averaged_side_accuracy_all_gold": side_accuracy(tta, y)["side_accuracy"]}
        margin = p[:, 0] - p[:, 1]
        cue = np.array([_cue_features(e["claim"], e["sentence"]) for e in ex])
        data[name] = (y, margin, flip_margin, flipped_mask, cue, [e["claim_id"] for e in ex])
        out[name] = res
    if stack:
        out["stack"] = _stack(data)
    return out


def _stack(data: dict) -> dict:
    from sklearn.linear_model import LogisticRegression

    def features(name: str, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        y, margin, flip_margin, mask, cue, cids = data[name]
        g = y != 2
        cols = [margin[:, None]]
        if "flip" in kind:
            cols += [flip_margin[:, None], mask[:, None].astype(float)]
        if "cues" in kind:
            cols.append(cue)
        groups = np.array([tv._fold(c.removesuffix("-flip"), 5) for c in cids])
        return np.hstack(cols)[g], (y[g] == 1).astype(int), groups[g]

    def scores(pred: np.ndarray, y: np.ndarray) -> dict[str, float]:
        return {"side_accuracy": round(float(np.mean(pred == y)), 3),
                "balanced": round(float(np.mean([np.mean(pred[y == c] == c) for c in (0, 1)])), 3)}

    res = {}
    for kind in ("margin", "margin+flip", "margin+cues", "margin+flip+cues"):
        x, y, folds = features("scifact_cal", kind)
        pred = np.zeros(len(y), dtype=int)
        for f in range(5):
            model = LogisticRegression(class_weight="balanced").fit(x[folds != f], y[folds != f])
            pred[folds == f] = model.predict(x[folds == f])
        model = LogisticRegression(class_weight="balanced").fit(x, y)
        xc, yc, _ = features("checkcovid_dev", kind)
        res[kind] = {"scifact_cal_cv": scores(pred, y), "checkcovid_dev": scores(model.predict(xc), yc)}
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", type=Path, nargs="+", help="train_verifier.py --out folders")
    ap.add_argument("--flips", action="store_true", help="read every pair again with the claim flipped")
    ap.add_argument("--stack", action="store_true", help="a logistic regression over the margin, flips and cues")
    ap.add_argument("--torch", action="store_true", help="the full-precision fine-tunes instead (needs torch)")
    args = ap.parse_args()
    for run in args.runs:
        res = torch_side_accuracy(run) if args.torch else run_levers(run, args.flips, args.stack)
        print(json.dumps(res, indent=1), flush=True)


if __name__ == "__main__":
    main()
