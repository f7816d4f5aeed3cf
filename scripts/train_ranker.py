"""Retrain the shipped reranker + local judge from the public data, and report cross-validated figures.

    pip install -e ".[train]"
    python scripts/train_ranker.py --shared ../shared/datasets [--home /tmp/evtui-train] [--out /tmp/evtui-ranker]
    python scripts/train_ranker.py ... --install      # + replace the shipped model in evtui/resources/ranker

Cross-validation is 5-fold grouped by paper (every group of one paper is in the same fold), so no figure printed
here comes from a model that saw the item's paper. Selection settings are chosen on the out-of-fold scores.
The final model is then fitted on every group and written with its metadata (features, CV figures) to --out:
one file per head (its seed boosters merged into one, evtui.rank.modelfile) and model.json. The shipped model is
replaced only with --install, and only a retrain that is adopted is committed (BENCHMARKS.md, "Ranker model files").
"""

from __future__ import annotations

import argparse
import json
import pickle
import shutil
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

import lightgbm as lgb
import numpy as np
from ranker_training import (  # scripts/ranker_training.py: training data, kept out of the app's package
    Group,
    checkcovid_groups,
    evidencebench_groups,
    scifact_groups,
    scifact_library_groups,
)
from sklearn.isotonic import IsotonicRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold

from evtui.bench.evidencebench import TASKS, score_item, task_k
from evtui.rank.features import FEATURES, JUDGE_FEATURES
from evtui.rank.model import HEADS
from evtui.rank.modelfile import write_head
from evtui.rank.select import normalise, select

VERSION = "evtui-ranker-2"
RANK_PARAMS: dict[str, Any] = dict(
    objective="lambdarank", num_leaves=15, learning_rate=0.05, min_data_in_leaf=40, feature_fraction=0.8,
    bagging_fraction=0.8, bagging_freq=1, lambdarank_truncation_level=20, verbose=-1, num_threads=2,
    deterministic=True, seed=7,
)
BINARY_PARAMS: dict[str, Any] = dict(
    objective="binary", num_leaves=15, learning_rate=0.05, min_data_in_leaf=40, feature_fraction=0.8,
    bagging_fraction=0.8, bagging_freq=1, verbose=-1, num_threads=2, deterministic=True, seed=7,
)
ROUNDS = 300
GRID = [(a, r, b) for a in (0.0, 0.1) for r in (0.0, 0.2, 0.35) for b in (0.0, 0.3, 0.6)]


def build(args: argparse.Namespace) -> list[Group]:
    cache = Path(args.home) / "groups.pkl"
    if cache.exists() and not args.rebuild:
        print(f"groups from {cache}")
        groups: list[Group] = pickle.loads(cache.read_bytes())
        for g in groups:  # groups pickled before a field existed
            for name in ("candidate_papers", "gold_papers"):
                if not hasattr(g, name):
                    setattr(g, name, [])
            if not hasattr(g, "query"):
                g.query = ""
        if args.add_library_groups:
            groups = [g for g in groups if g.source != "scifact-library"]
            sf = Path(args.shared) / "scifact"
            groups += list(scifact_library_groups(sf / "corpus.jsonl", sf / "claims_train.jsonl", Path(args.home)))
            cache.write_bytes(pickle.dumps(groups))
        return groups
    shared = Path(args.shared)
    home = Path(args.home)
    groups = []
    eb = shared / "evidencebench"
    for f in ("evidencebench_dev_set.json", "evidencebench_train_public.json"):
        groups += list(evidencebench_groups(eb / f, home))
    sf = shared / "scifact"
    groups += list(scifact_groups(sf / "corpus.jsonl", sf / "claims_train.jsonl", home))
    groups += list(scifact_library_groups(sf / "corpus.jsonl", sf / "claims_train.jsonl", home))
    cc = shared / "check-covid"
    groups += list(checkcovid_groups(cc / "corpus.json", cc / "train" / "covidCheck_train_composed+extracted.json",
                                     home))
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_bytes(pickle.dumps(groups))
    return groups


DENSE_COLS = [i for i, f in enumerate(FEATURES) if f.startswith("dense")]


def _stack(groups: list[Group], attr: str) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Rows of every group with a label, plus a copy of every third group with the dense features missing:
    a user's library is often not embedded, and the model must rank sensibly without them."""
    xs, ys, sizes = [], [], []
    for n, g in enumerate(groups):
        y = getattr(g, attr)
        if y is None or len(y) == 0:
            continue
        xs.append(g.x)
        ys.append(y)
        sizes.append(len(y))
        if n % 3 == 0:
            x = g.x.copy()
            x[:, DENSE_COLS] = np.nan
            xs.append(x)
            ys.append(y)
            sizes.append(len(y))
    return np.vstack(xs), np.concatenate(ys), sizes


SHIPPED = Path(__file__).resolve().parent.parent / "evtui" / "resources" / "ranker"
SEEDS = 5  # boosters per head, averaged: one LightGBM's feature/bagging draws move EvidenceBench CV by up to ~5 points
DATA = {  # what build() reads under --shared (recorded in model.json)
    "evidencebench": ["evidencebench/evidencebench_dev_set.json", "evidencebench/evidencebench_train_public.json"],
    "scifact": ["scifact/corpus.jsonl", "scifact/claims_train.jsonl"],
    "check-covid": ["check-covid/corpus.json", "check-covid/train/covidCheck_train_composed+extracted.json"],
}


class Ensemble:
    """The mean of boosters that differ only in their random seed (feature and bagging fractions)."""

    def __init__(self, boosters: list[lgb.Booster]) -> None:
        self.boosters = boosters

    def predict(self, x: np.ndarray, raw_score: bool = False) -> np.ndarray:
        return np.mean([b.predict(x, raw_score=raw_score) for b in self.boosters], axis=0)

    def save(self, out: Path, head: str) -> dict[str, object]:
        """One file per head: the members merged into one booster that predicts their mean (model.json entry)."""
        return write_head(out, head, [b.model_to_string() for b in self.boosters])


def _seeded(params: dict[str, Any], i: int) -> dict[str, Any]:
    return dict(params, seed=int(params["seed"]) + i)


def fit_rank(groups: list[Group], attr: str, seeds: int = SEEDS) -> Ensemble:
    x, y, sizes = _stack(groups, attr)
    ds = lgb.Dataset(x, y, group=sizes, feature_name=list(FEATURES), free_raw_data=False)
    return Ensemble([lgb.train(_seeded(RANK_PARAMS, i), ds, num_boost_round=ROUNDS) for i in range(seeds)])


JUDGE_COLS = [FEATURES.index(f) for f in JUDGE_FEATURES]


def fit_binary(groups: list[Group], seeds: int = SEEDS) -> Ensemble:
    x, y, _ = _stack(groups, "label")
    ds = lgb.Dataset(x[:, JUDGE_COLS], (y > 0).astype(float), feature_name=list(JUDGE_FEATURES),
                     free_raw_data=False)
    return Ensemble([lgb.train(_seeded(BINARY_PARAMS, i), ds, num_boost_round=ROUNDS)
                     for i in range(seeds)])


def item_scores(groups: list[Group], scores: dict[str, dict[str, np.ndarray]], params: tuple[float, ...],
                ) -> dict[str, dict[str, float]]:
    """{task: {item: aspect recall}} for one selection setting (aspect_weight, redundancy, abstract_bonus)."""
    aw, red, bonus = params
    abstract = FEATURES.index("sec_abstract")
    out: dict[str, dict[str, float]] = {t: {} for t in TASKS}
    for g in groups:
        if g.item is None:
            continue
        for task in TASKS:
            k = task_k(g.item, task)
            if k is None:
                continue
            head = "results" if task.startswith("results") else "evidence"
            rel = normalise(scores[head][g.query_id]) + bonus * g.x[:, abstract]
            picked = select(rel, k, covered=g.aspects, aspect_weights=g.aspect_weights, vectors=g.vectors,
                            texts=g.texts, aspect_weight=aw, redundancy=red)
            s = score_item(g.item, task, [g.positions[i] for i in picked])
            if s is not None:
                out[task][g.query_id] = 100 * s
    return out


def _mean(d: dict[str, float], keys: set[str] | None = None) -> float:
    v = [x for k, x in d.items() if keys is None or k in keys]
    return float(np.mean(v)) if v else float("nan")


def nested_selection(eb: list[Group], oof: dict[str, dict[str, np.ndarray]], fold_of: dict[str, int],
                     folds: int) -> tuple[dict[str, float], dict[str, tuple[float, ...]]]:
    """Selection settings chosen on the other folds' items and scored on this fold's: an honest estimate.
    Returns (task -> mean recall, head -> setting chosen on all items for the shipped model)."""
    table = {p: item_scores(eb, oof, p) for p in GRID}
    heads = {"evidence": ("er-optimal", "er-10"), "results": ("results-er-optimal", "results-er-5")}
    per_item: dict[str, dict[str, float]] = {t: {} for t in TASKS}
    for f in range(folds):
        test = {g.query_id for g in eb if fold_of[g.query_id] == f}
        train = {g.query_id for g in eb} - test
        for tasks in heads.values():
            best = max(GRID, key=lambda p: sum(_mean(table[p][t], train) for t in tasks))
            for t in tasks:
                per_item[t].update({q: v for q, v in table[best][t].items() if q in test})
    chosen = {h: max(GRID, key=lambda p: sum(_mean(table[p][t]) for t in tasks)) for h, tasks in heads.items()}
    return {t: _mean(per_item[t]) for t in TASKS}, chosen


def fold_assignment(groups: list[Group], folds: int = 5) -> np.ndarray:
    """The cross-validation fold of every group (same order as `groups`), grouped by paper.

    A SciFact claim with several evidence documents ties them together (its library-wide group holds all of
    them, its per-document groups one each): fold by connected components of papers, so no claim is split.
    scripts/export_ce_data.py uses this very function, so the cross-encoder's out-of-fold scores come from the
    same folds as the rankers'."""
    parent: dict[str, str] = {}

    def root(p: str) -> str:
        while parent.get(p, p) != p:
            p = parent[p]
        return p

    for g in groups:
        for other in g.gold_papers[1:]:
            a, b = root(g.gold_papers[0]), root(other)
            if a != b:
                parent[b] = a
    claim_first: dict[str, str] = {}
    for g in groups:  # per-document SciFact groups of a multi-document claim
        if g.source == "scifact":
            first = claim_first.setdefault(g.query_id.rsplit(":", 1)[0], g.paper_id)
            a, b = root(first), root(g.paper_id)
            if a != b:
                parent[b] = a
    papers = np.array([root(g.paper_id) for g in groups])
    out = np.full(len(groups), -1, dtype=np.int64)
    for fold, (_tr, te) in enumerate(GroupKFold(n_splits=folds).split(papers, groups=papers)):
        out[te] = fold
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", default="../shared/datasets")
    ap.add_argument("--home", default="/tmp/evtui-train")
    ap.add_argument("--out", default="/tmp/evtui-ranker")
    ap.add_argument("--install", action="store_true", help="copy the model into evtui/resources/ranker")
    ap.add_argument("--rebuild", action="store_true", help="recompute features even if groups.pkl exists")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seeds", type=int, default=SEEDS, help="boosters per head (seeds), averaged")
    ap.add_argument("--add-library-groups", action="store_true",
                    help="(re)build the library-wide SciFact groups of a cached groups.pkl")
    args = ap.parse_args()
    t0 = time.perf_counter()
    groups = build(args)
    print(f"{len(groups)} groups, {sum(len(g.label) for g in groups):,} candidates "
          f"({time.perf_counter() - t0:.0f} s)")

    # -- cross-validation, grouped by paper ------------------------------------------------------
    fold_ids = fold_assignment(groups, args.folds)
    oof: dict[str, dict[str, np.ndarray]] = {"evidence": {}, "results": {}, "judge": {}}
    fold_of: dict[str, int] = {}
    for fold in range(args.folds):
        tr, te = np.flatnonzero(fold_ids != fold), np.flatnonzero(fold_ids == fold)
        train = [groups[i] for i in tr]
        ev = fit_rank(train, "label", args.seeds)
        res = fit_rank([g for g in train if g.results_label is not None], "results_label", args.seeds)
        judge = fit_binary(train, args.seeds)
        for i in te:
            g = groups[i]
            oof["evidence"][g.query_id] = ev.predict(g.x)
            oof["results"][g.query_id] = res.predict(g.x)
            oof["judge"][g.query_id] = judge.predict(g.x[:, JUDGE_COLS], raw_score=True)
            fold_of[g.query_id] = fold
        print(f"  fold {fold + 1}/{args.folds} done ({time.perf_counter() - t0:.0f} s)")

    eb = [g for g in groups if g.item is not None]
    report: dict[str, Any] = {"date": date.today().isoformat(), "folds": args.folds, "groups": len(groups)}
    plain = {t: _mean(v) for t, v in item_scores(eb, oof, (0.0, 0.0, 0.0)).items()}
    nested, chosen = nested_selection(eb, oof, fold_of, args.folds)
    print(f"EvidenceBench, cross-validated ({len(eb)} items of dev + public train):")
    print("  top-K by model:      " + "  ".join(f"{t} {plain[t]:.1f}" for t in TASKS))
    print("  + selection (nested): " + "  ".join(f"{t} {nested[t]:.1f}" for t in TASKS))
    print(f"  shipped selection settings (aspect_weight, redundancy, abstract_bonus): {chosen}")
    report["evidencebench_cv"] = {"top_k": plain, "selected_nested": nested}

    # -- SciFact, library-wide: documents ranked by their best sentence, out-of-fold ---------------
    lib_groups = [g for g in groups if g.source == "scifact-library"]
    if lib_groups:
        import ir_measures

        measures = [ir_measures.parse_measure(m) for m in ("nDCG@10", "R@10")]
        qrels = {g.query_id: dict.fromkeys(g.gold_papers, 1) for g in lib_groups}
        runs: dict[str, dict[str, dict[str, float]]] = {"bm25 (same pool)": {}, "best (model)": {}}
        bm25_col = FEATURES.index("bm25")
        for g in lib_groups:
            for name, sc in (("bm25 (same pool)", g.x[:, bm25_col]), ("best (model)", oof["evidence"][g.query_id])):
                docs: dict[str, float] = {}
                for p, v in zip(g.candidate_papers, sc, strict=True):
                    docs[p] = max(float(v), docs.get(p, float("-inf")))
                runs[name][g.query_id] = docs
        sf_cv = {}
        for name, run in runs.items():
            agg = {str(m): v for m, v in ir_measures.calc_aggregate(measures, qrels, run).items()}
            sf_cv[name] = agg
            print(f"SciFact train claims with evidence ({len(lib_groups)}), library-wide, CV: {name}: {agg}")
        report["scifact_library_cv"] = sf_cv

    # -- the local judge: calibration and AUC on out-of-fold scores -----------------------------
    raw = np.concatenate([oof["judge"][g.query_id] for g in groups])
    gold = np.concatenate([(g.label > 0).astype(float) for g in groups])
    iso = IsotonicRegression(out_of_bounds="clip", y_min=0.0, y_max=1.0).fit(raw, gold)
    prob = iso.predict(raw)
    # Rubric levels from calibrated probability: thresholds chosen once, by meaning (not tuned to a metric).
    levels = [0.02, 0.10, 0.25, 0.50, 0.75]
    lv = np.searchsorted(levels, prob, side="right")
    mono = {int(v): {"n": int((lv == v).sum()), "gold_rate": float(gold[lv == v].mean()) if (lv == v).any() else None}
            for v in range(6)}
    aucs = {}
    for src in ("evidencebench", "scifact", "checkcovid"):
        sel = [g for g in groups if g.source == src]
        if sel:
            r = np.concatenate([oof["judge"][g.query_id] for g in sel])
            y = np.concatenate([(g.label > 0).astype(float) for g in sel])
            aucs[src] = float(roc_auc_score(y, r))
    print("local judge, cross-validated ROC-AUC:", {k: round(v, 3) for k, v in aucs.items()})
    print("rubric levels (n, gold rate):", {k: (v["n"], None if v["gold_rate"] is None else round(v["gold_rate"], 3))
                                            for k, v in mono.items()})
    report["judge_cv"] = {"roc_auc": aucs, "levels": mono}

    # -- final fit on everything ------------------------------------------------------------------
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "evidence": fit_rank(groups, "label", args.seeds).save(out, "evidence"),
        "results": fit_rank([g for g in groups if g.results_label is not None], "results_label",
                            args.seeds).save(out, "results"),
        "judge": fit_binary(groups, args.seeds).save(out, "judge"),
    }
    xs, ys = iso.X_thresholds_, iso.y_thresholds_
    sources: dict[str, int] = {}
    for g in groups:
        sources[g.source] = sources.get(g.source, 0) + 1
    meta = {
        "version": VERSION, "features": list(FEATURES), "judge_features": list(JUDGE_FEATURES), "heads": list(HEADS),
        "files": files,
        "selection": {h: {"aspect_weight": p[0], "redundancy": p[1], "abstract_bonus": p[2]}
                      for h, p in chosen.items()},
        "calibration": {"x": [float(v) for v in xs], "y": [float(v) for v in ys]},
        "levels": levels, "trained_on": ["evidencebench dev + public train", "scifact claims_train",
                                         "check-covid train (SUPPORT/REFUTE)"],
        "training_data": {"files": DATA, "groups": len(groups), "groups_by_source": sources,
                          "candidates": sum(len(g.label) for g in groups),
                          "command": "python " + " ".join(sys.argv)},
        "cv": report,
    }
    (out / "model.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    if args.install and out.resolve() != SHIPPED.resolve():
        for old in SHIPPED.glob("*.txt"):
            old.unlink()
        for name in [str(e["file"]) for e in files.values()] + ["model.json"]:
            shutil.copyfile(out / name, SHIPPED / name)
        print(f"installed into {SHIPPED}")
    print(f"wrote {out} ({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
