"""The ranker's model files: a seed ensemble merged into one booster scores exactly as the ensemble did."""

from __future__ import annotations

import json
import shutil

import lightgbm as lgb
import numpy as np
import pytest

from evtui.errors import EvtuiError
from evtui.rank.model import MODEL_DIR, RankerModel
from evtui.rank.modelfile import merge_ensemble, seed_mean, strip_for_prediction, write_head

PARAMS = dict(num_leaves=7, learning_rate=0.1, min_data_in_leaf=5, feature_fraction=0.6, bagging_fraction=0.7,
              bagging_freq=1, verbose=-1, num_threads=1, deterministic=True)


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(400, 6))
    x[rng.random(x.shape) < 0.1] = np.nan  # missing values take their own branch
    y = np.clip(np.round(x[:, 0] + 0.5 * np.nan_to_num(x[:, 1]) + rng.normal(scale=0.5, size=400)), 0, 3)
    return x, y


def _ensemble(objective: str, seeds: int = 3) -> list[lgb.Booster]:
    x, y = _data()
    if objective == "lambdarank":
        ds = lgb.Dataset(x, y, group=[20] * 20)
    else:
        ds = lgb.Dataset(x, (y > 1).astype(float))
    return [lgb.train(dict(PARAMS, objective=objective, seed=7 + i), ds, num_boost_round=25) for i in range(seeds)]


@pytest.mark.parametrize("objective", ["lambdarank", "binary"])
def test_merged_booster_scores_exactly_as_the_ensemble(objective: str) -> None:
    members = _ensemble(objective)
    text = merge_ensemble([b.model_to_string() for b in members])
    x, _ = _data(seed=1)  # rows it was not trained on
    each = np.array([b.predict(x, raw_score=True) for b in members])
    assert not np.allclose(each[0], each[1])  # the seeds really differ, so a wrong block or weight would show
    for form in (text, strip_for_prediction(text)):
        merged = lgb.Booster(model_str=form)
        assert merged.num_trees() == sum(b.num_trees() for b in members)
        # bit for bit: printed and exported scores must not move in their last digit
        assert np.array_equal(seed_mean(merged, x, len(members)), np.mean(list(each), axis=0))
    assert len(strip_for_prediction(text)) < 0.6 * len(text)


def test_write_head_replaces_the_per_seed_files(tmp_path) -> None:
    members = [b.model_to_string() for b in _ensemble("lambdarank", seeds=2)]
    for i, text in enumerate(members):  # the old layout: head.txt, head.1.txt, ...
        (tmp_path / ("evidence.txt" if i == 0 else f"evidence.{i}.txt")).write_text(text)
    entry = write_head(tmp_path, "evidence", members)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evidence.txt"]
    assert entry["seeds"] == 2 and entry["trees"] == 50 and entry["bytes"] == (tmp_path / "evidence.txt").stat().st_size


def test_only_a_seed_ensemble_merges() -> None:
    rank = _ensemble("lambdarank", seeds=1)[0].model_to_string()
    binary = _ensemble("binary", seeds=1)[0].model_to_string()
    with pytest.raises(EvtuiError, match="seed ensemble"):
        merge_ensemble([rank, binary])
    with pytest.raises(EvtuiError, match="not a LightGBM"):
        merge_ensemble(["hello"])


def test_a_damaged_model_file_is_refused(tmp_path) -> None:
    folder = tmp_path / "ranker"
    shutil.copytree(MODEL_DIR, folder)
    path = folder / "judge.txt"
    path.write_bytes(path.read_bytes().replace(b"leaf_value=", b"leaf_value=1", 1))
    with pytest.raises(EvtuiError, match="sha256"):
        RankerModel.load(folder)
    path.unlink()
    with pytest.raises(EvtuiError, match="missing"):
        RankerModel.load(folder)
    meta = json.loads((folder / "model.json").read_text())
    meta["files"] = {}
    (folder / "model.json").write_text(json.dumps(meta))
    with pytest.raises(EvtuiError, match="no evidence head"):
        RankerModel.load(folder)
