"""Does a cross-encoder score pay off? Cross-validated figures of `best` and the local judge with and without it.

    # out-of-fold CE scores from experiments/cross_encoder/train_ce.py (oof.npy, one per row of .ce/pairs.npz):
    python experiments/cross_encoder/eval_ce.py --oof $OUT/oof.npy --pairs .ce
    # or any {query_id: scores aligned with the group's candidates} pickle (NaN where not scored):
    python experiments/cross_encoder/eval_ce.py --scores ce_scores.pkl

Uses the groups and the folds of scripts/train_ranker.py (--home/groups.pkl, `fold_assignment`) and prints, in its
format, EvidenceBench top-K by model and + selection (nested) for:
- stage 1: the shipped recipe (LightGBM over FEATURES);
- stage 2 (for each N of --ns): a second LightGBM over stage 1's top N with [stage-1 score, its rank and gap to
  the best, CE score, its rank and gap to the best, FEATURES]. Honest: the stage-2 training rows of outer fold f
  (groups of fold j != f) are scored by a stage-1 model trained on the folds other than f and j (without the
  library-wide groups, to save time), the test rows by the outer stage-1 model, so no figure comes from a model
  that saw the item's paper;
and the local judge's ROC-AUC per source with and without the CE score as a feature.
Library-wide SciFact groups have no CE score here (NaN): they stay in training as they are.
"""

from __future__ import annotations

import argparse
import itertools
import pickle
import sys
import time
from pathlib import Path
from typing import Any

import lightgbm as lgb
import numpy as np
from sklearn.metrics import roc_auc_score

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import train_ranker as tr  # noqa: E402

from evtui.bench.evidencebench import TASKS  # noqa: E402

HEADS = {"evidence": "label", "results": "results_label"}
S2_PARAMS: dict[str, Any] = dict(tr.RANK_PARAMS, num_leaves=7, min_data_in_leaf=20)
S2_ROUNDS = 200


def load_scores(args: argparse.Namespace, groups: list[Any]) -> dict[str, np.ndarray]:
    if args.scores:
        return pickle.loads(Path(args.scores).read_bytes())
    import json

    z = np.load(Path(args.pairs) / "pairs.npz")
    ids = json.loads((Path(args.pairs) / "groups.json").read_text())
    oof = np.load(args.oof)
    out: dict[str, np.ndarray] = {}
    for gi in np.unique(z["group"]):
        rows = np.flatnonzero(z["group"] == gi)
        arr = np.full(len(groups[gi].label), np.nan)
        arr[z["pos"][rows]] = oof[rows]
        assert ids[gi] == groups[gi].query_id, "pairs.npz was exported from other groups"
        out[ids[gi]] = arr
    return out


def stage2_x(g: Any, ce: np.ndarray, s1: np.ndarray, top: np.ndarray) -> np.ndarray:
    c, s = ce[top], s1[top]
    return np.column_stack([s, s - s.max(), np.argsort(np.argsort(-s)), c, c - np.nanmax(c),
                            np.argsort(np.argsort(-np.nan_to_num(c, nan=-1e9))), g.x[top]])


def merged(s1: np.ndarray, top: np.ndarray, s2: np.ndarray) -> np.ndarray:
    """Stage-2 scores for the top N, the rest below them in stage-1 order."""
    out = s1.copy()
    rest = np.setdiff1d(np.arange(len(s1)), top)
    out[top] = s2
    if len(rest):
        out[rest] = s2.min() - 1e-3 + (s1[rest] - s1[top].min())
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--home", default="/tmp/evtui-train")
    ap.add_argument("--scores")
    ap.add_argument("--oof")
    ap.add_argument("--pairs", default=".ce")
    ap.add_argument("--ns", default="20,30,40")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--cache", default="/tmp/evtui-train/stage1_oof.pkl", help="stage-1 scores, reused if present")
    ap.add_argument("--stage1-only", action="store_true", help="compute the stage-1 cache and stop")
    ap.add_argument("--no-library", action="store_true",
                    help="leave the library-wide SciFact groups out of every fit (fast, paired comparison)")
    ap.add_argument("--seed", type=int, default=7, help="stage-2 LightGBM seed (to see the noise of the figures)")
    ap.add_argument("--threads", type=int, default=1, help="LightGBM threads (1 is fastest on a loaded machine)")
    args = ap.parse_args()
    for params in (tr.RANK_PARAMS, tr.BINARY_PARAMS, S2_PARAMS):
        params["num_threads"] = args.threads
    S2_PARAMS["seed"] = args.seed
    t0 = time.perf_counter()
    groups = pickle.loads((Path(args.home) / "groups.pkl").read_bytes())
    folds = tr.fold_assignment(groups, args.folds)
    ce = {} if args.stage1_only else load_scores(args, groups)
    if args.no_library:
        keep = [i for i, g in enumerate(groups) if g.source != "scifact-library"]
        groups, folds = [groups[i] for i in keep], folds[keep]
    nf = args.folds
    scored = {g.query_id for g in groups if g.query_id in ce and g.source != "scifact-library"}

    def fit_head(idx: np.ndarray, attr: str) -> lgb.Booster:
        return tr.fit_rank([groups[i] for i in idx if getattr(groups[i], attr) is not None], attr)

    cache = Path(args.cache)
    if cache.exists():
        s1, oof_judge = pickle.loads(cache.read_bytes())
    else:
        s1 = {h: {} for h in HEADS}
        oof_judge = {}
        for f in range(nf):
            trn, te = np.flatnonzero(folds != f), np.flatnonzero(folds == f)
            for h, attr in HEADS.items():
                m = fit_head(trn, attr)
                for i in te:
                    s1[h][groups[i].query_id] = m.predict(groups[i].x)
            jm = tr.fit_binary([groups[i] for i in trn])
            for i in te:
                oof_judge[groups[i].query_id] = jm.predict(groups[i].x[:, tr.JUDGE_COLS], raw_score=True)
            print(f"  stage 1, fold {f + 1}/{nf} ({time.perf_counter() - t0:.0f} s)", flush=True)
        cache.write_bytes(pickle.dumps((s1, oof_judge)))
    # Stage-1 scores for stage-2 training rows: models that saw neither the test fold nor the row's own fold.
    # To keep this affordable on 2 CPU cores they are fitted without the (large) library-wide SciFact groups.
    pair_cache = cache.with_name(cache.stem + "_pairs.pkl")
    if pair_cache.exists():
        s1pair = pickle.loads(pair_cache.read_bytes())
    else:
        s1pair = {h: {} for h in HEADS}
        small = np.array([g.source != "scifact-library" for g in groups])
        for f, j in itertools.combinations(range(nf), 2):
            trn = np.flatnonzero((folds != f) & (folds != j) & small)
            for h, attr in HEADS.items():
                m = fit_head(trn, attr)
                for i in np.flatnonzero(((folds == f) | (folds == j)) & small):
                    s1pair[h][(groups[i].query_id, j if folds[i] == f else f)] = m.predict(groups[i].x)
            print(f"  stage 1 without folds {f + 1} and {j + 1} ({time.perf_counter() - t0:.0f} s)", flush=True)
        pair_cache.write_bytes(pickle.dumps(s1pair))
    if args.stage1_only:
        return 0

    eb = [g for g in groups if g.item is not None]
    fold_of = {g.query_id: int(folds[i]) for i, g in enumerate(groups)}

    def report(name: str, oof: dict[str, dict[str, np.ndarray]]) -> None:
        plain = {t: tr._mean(v) for t, v in tr.item_scores(eb, oof, (0.0, 0.0, 0.0)).items()}
        nested, chosen = tr.nested_selection(eb, oof, fold_of, nf)
        print(f"{name}\n  top-K by model:       " + "  ".join(f"{t} {plain[t]:.1f}" for t in TASKS))
        print("  + selection (nested): " + "  ".join(f"{t} {nested[t]:.1f}" for t in TASKS) + f"  {chosen}",
              flush=True)

    report("stage 1 (shipped recipe)", s1)
    for n in [int(v) for v in args.ns.split(",")]:
        oof2 = {h: dict(s1[h]) for h in HEADS}
        for h, attr in HEADS.items():
            for f in range(nf):
                xs, ys, sizes = [], [], []
                for i in np.flatnonzero(folds != f):
                    g = groups[i]
                    y = getattr(g, attr)
                    if y is None or g.query_id not in scored:
                        continue
                    sv = s1pair[h][(g.query_id, f)]
                    top = np.argsort(-sv, kind="stable")[:n]
                    xs.append(stage2_x(g, ce[g.query_id], sv, top))
                    ys.append(y[top])
                    sizes.append(len(top))
                m = lgb.train(S2_PARAMS, lgb.Dataset(np.vstack(xs), np.concatenate(ys), group=sizes),
                              num_boost_round=S2_ROUNDS)
                for i in np.flatnonzero(folds == f):
                    g = groups[i]
                    if g.query_id in scored and g.query_id in s1[h]:
                        sv = s1[h][g.query_id]
                        top = np.argsort(-sv, kind="stable")[:n]
                        oof2[h][g.query_id] = merged(sv, top, m.predict(stage2_x(g, ce[g.query_id], sv, top)))
        report(f"stage 2 over the top {n} (+ CE score)", oof2)

    def judge_x(g: Any) -> np.ndarray:
        c = ce.get(g.query_id) if g.query_id in scored else None
        return np.column_stack([g.x[:, tr.JUDGE_COLS], np.full(len(g.label), np.nan) if c is None else c])

    oofj: dict[str, np.ndarray] = {}
    for f in range(nf):
        trn = np.flatnonzero(folds != f)
        ds = lgb.Dataset(np.vstack([judge_x(groups[i]) for i in trn]),
                         np.concatenate([(groups[i].label > 0).astype(float) for i in trn]))
        m = lgb.train(tr.BINARY_PARAMS, ds, num_boost_round=tr.ROUNDS)
        for i in np.flatnonzero(folds == f):
            oofj[groups[i].query_id] = m.predict(judge_x(groups[i]), raw_score=True)
    for name, o in (("local judge (shipped recipe)", oof_judge), ("local judge + CE score", oofj)):
        aucs = {}
        for src in ("evidencebench", "scifact", "checkcovid"):
            sel = [g for g in groups if g.source == src]
            aucs[src] = round(float(roc_auc_score(np.concatenate([g.label > 0 for g in sel]),
                                                  np.concatenate([o[g.query_id] for g in sel]))), 3)
        print(f"{name}, cross-validated ROC-AUC: {aucs}")
    for src in ("evidencebench", "scifact", "checkcovid"):
        sel = [g for g in groups if g.source == src and g.query_id in scored]
        if sel:
            y = np.concatenate([g.label > 0 for g in sel])
            c = np.concatenate([ce[g.query_id] for g in sel])
            ok = ~np.isnan(c)
            print(f"CE score alone, pair ROC-AUC, {src}: {roc_auc_score(y[ok], c[ok]):.3f} ({ok.mean():.0%} scored)")
    print(f"done ({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
