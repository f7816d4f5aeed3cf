"""Where a stored run's figure stands: whether its method's learned model was trained on the run's dataset
(in-sample), which every face that shows a figure says. Below the driver and the run store, which both use it."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from evtui import methods as registry
from evtui.rank.model import MODEL_DIR


@lru_cache(maxsize=4)
def training_files(model_json: Path = MODEL_DIR / "model.json") -> frozenset[str]:
    """The file names the shipped ranker was trained on (model.json `training_data.files`); empty when unreadable."""
    try:
        meta = json.loads(model_json.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return frozenset()
    files = (meta.get("training_data") or {}).get("files") or {}
    return frozenset(Path(f).name for group in files.values() for f in group)


VERIFIER_DIR = MODEL_DIR.parent / "verifier"
VERIFIER_METHOD = "verifier"  # `bench scifact --task verify`'s method: the shipped claim verifier, not a ranker
_DATA_FILE = re.compile(r"[\w.+-]+\.jsonl?\b")


@lru_cache(maxsize=4)
def verifier_training_files(model_json: Path = VERIFIER_DIR / "model.json") -> frozenset[str]:
    """The file names the shipped verifier was trained on: its model.json `training_data` describes each source
    in words ("…/scifact claims_train.jsonl + corpus.jsonl (…)"), so the .json/.jsonl names are read out of them."""
    try:
        meta = json.loads(model_json.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return frozenset()
    data = meta.get("training_data") if isinstance(meta, dict) else None
    described = [v for v in data.values() if isinstance(v, str)] if isinstance(data, dict) else []
    return frozenset(Path(f).name for text in described for f in _DATA_FILE.findall(text))


def in_sample(run: Mapping[str, Any], trained_on: frozenset[str] | None = None) -> bool:
    """Was this run's method's model trained on the run's dataset (matched by file name)? Its figure then says
    how well the model fits data it has seen, not what to expect on new papers. A verify run's model is the
    verifier (its own training files); a trained ranking method's is the ranker."""
    method = str(run.get("method", ""))
    if method == VERIFIER_METHOD:
        files = verifier_training_files() if trained_on is None else trained_on
    else:
        m = registry.lookup(method)
        if m is None or not m.trained:
            return False
        files = training_files() if trained_on is None else trained_on
    names = {str(run.get("dataset", "")).split(":", 1)[-1]}
    params = run.get("parameters") or {}
    # EvidenceBench and Check-COVID record their file as `data`, a SciFact run its claims file as `claims`
    for data in (params.get("data") or run.get("data"), params.get("claims")):
        if data:
            names.add(Path(str(data)).name)
    return bool(names & files)


IN_SAMPLE_NOTE = ("in-sample: the method's learned model was trained on this dataset, so the figure shows how well "
                  "it fits data it has seen, not what to expect on new papers")
IN_SAMPLE_STYLE = "italic yellow"  # how the faces mark an in-sample figure (Rich style)
