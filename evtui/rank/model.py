"""The shipped reranker: LightGBM boosters over FEATURES, plus the judge's calibration and selection settings.

Files live in evtui/resources/ranker/: model.json and one LightGBM text file per head, written by
scripts/train_ranker.py from the public data only. Each head was trained as a seed ensemble and is stored as one
booster holding the members' trees, scored as the members' mean (evtui.rank.modelfile). `model.json` records the
feature list, so a model trained on other features refuses to load rather than scoring garbage, and each file's
sha256, so a damaged or swapped file is refused too.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evtui.checksum import checked_file
from evtui.errors import EvtuiError
from evtui.rank.features import FEATURES, JUDGE_FEATURES
from evtui.rank.modelfile import seed_mean

MODEL_DIR = Path(__file__).resolve().parent.parent / "resources" / "ranker"
HEADS = ("evidence", "results", "judge")


@dataclass
class RankerModel:
    version: str
    boosters: dict[str, Any]  # head -> its booster: a merged seed ensemble, scored by `_raw`
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
        boosters = {}
        for h, entry in meta.get("files", {}).items():
            path = folder / entry["file"]
            checked_file(path, entry["sha256"], "ranking model file")
            boosters[h] = lgb.Booster(model_file=str(path))
        if "evidence" not in boosters:
            raise EvtuiError(f"the ranking model in {folder} has no evidence head; retrain it with "
                             "scripts/train_ranker.py")
        return cls(version=str(meta.get("version", "?")), boosters=boosters, selection=meta.get("selection", {}),
                   calibration=meta.get("calibration", {}), levels=meta.get("levels", []), meta=meta)

    def _raw(self, head: str, x: np.ndarray) -> np.ndarray:
        """The head's raw score: the mean of its seed members' scores, bit for bit as the 5 files gave it."""
        return seed_mean(self.boosters[head], x, int(self.meta.get("files", {}).get(head, {}).get("seeds", 1)))

    def score(self, x: np.ndarray, head: str = "evidence") -> np.ndarray:
        if len(x) == 0:
            return np.zeros(0)
        # Raw scores (the ranking heads' objective is the identity, so this is what predict() gave before).
        return self._raw(head if head in self.boosters else "evidence", x)

    def probability(self, x: np.ndarray) -> np.ndarray:
        """P(sentence is evidence for the query), isotonic-calibrated on cross-validated predictions."""
        if len(x) == 0:
            return np.zeros(0)
        cols = [FEATURES.index(f) for f in JUDGE_FEATURES]
        raw = self._raw("judge", x[:, cols])
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
