"""The shipped reranker: LightGBM boosters over FEATURES, plus the judge's calibration and selection settings.

Files live in evtui/resources/ranker/ (model.json + per head, `ensemble` booster text files averaged), written by
scripts/train_ranker.py from the public data only. `model.json` records the feature list, so a model trained
on other features refuses to load rather than scoring garbage.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evtui.errors import EvtuiError
from evtui.rank.features import FEATURES, JUDGE_FEATURES

MODEL_DIR = Path(__file__).resolve().parent.parent / "resources" / "ranker"
HEADS = ("evidence", "results", "judge")


def booster_path(folder: Path, head: str, member: int) -> Path:
    """Member `member` of a head's seed ensemble: head.txt, head.1.txt, ... (scripts/train_ranker.py writes them)."""
    return folder / (f"{head}.txt" if member == 0 else f"{head}.{member}.txt")


@dataclass
class RankerModel:
    version: str
    boosters: dict[str, list[Any]]  # head -> boosters whose predictions are averaged
    selection: dict[str, dict[str, float]] = field(default_factory=dict)
    calibration: dict[str, list[float]] = field(default_factory=dict)
    levels: list[float] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, folder: Path = MODEL_DIR) -> RankerModel:
        import lightgbm as lgb

        meta_path = folder / "model.json"
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise EvtuiError(f"the ranking model is missing or unreadable ({meta_path}): {exc}") from exc
        if tuple(meta.get("features", ())) != FEATURES or tuple(meta.get("judge_features", ())) != JUDGE_FEATURES:
            raise EvtuiError(f"the ranking model in {folder} was trained on other features; retrain it with "
                             "scripts/train_ranker.py")
        # A head is the mean of `ensemble` boosters trained with different seeds.
        n = int(meta.get("ensemble", 1))
        boosters = {}
        for h in meta.get("heads", HEADS):
            files = [booster_path(folder, h, i) for i in range(n)]
            if all(f.exists() for f in files):
                boosters[h] = [lgb.Booster(model_file=str(f)) for f in files]
        return cls(version=str(meta.get("version", "?")), boosters=boosters, selection=meta.get("selection", {}),
                   calibration=meta.get("calibration", {}), levels=meta.get("levels", []), meta=meta)

    def score(self, x: np.ndarray, head: str = "evidence") -> np.ndarray:
        if len(x) == 0:
            return np.zeros(0)
        members = self.boosters.get(head) or self.boosters["evidence"]
        return np.asarray(np.mean([b.predict(x, num_threads=1) for b in members], axis=0), dtype=np.float64)

    def probability(self, x: np.ndarray) -> np.ndarray:
        """P(sentence is evidence for the query), isotonic-calibrated on cross-validated predictions."""
        if len(x) == 0:
            return np.zeros(0)
        cols = [FEATURES.index(f) for f in JUDGE_FEATURES]
        raw = np.asarray(np.mean([b.predict(x[:, cols], raw_score=True, num_threads=1)
                                  for b in self.boosters["judge"]], axis=0), dtype=np.float64)
        cal = self.calibration
        if not cal.get("x"):
            return np.asarray(1 / (1 + np.exp(-raw)), dtype=np.float64)
        return np.asarray(np.interp(raw, cal["x"], cal["y"]), dtype=np.float64)


_lock = threading.Lock()
_cached: RankerModel | None = None


def default_model() -> RankerModel:
    global _cached
    with _lock:
        if _cached is None:
            _cached = RankerModel.load()
        return _cached
