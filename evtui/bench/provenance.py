"""Where a stored run's figure stands: whether its method's learned model was trained on the run's dataset
(in-sample), which every face that shows a figure says. Below the driver and the run store, which both use it."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator, Mapping
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


# Each model's training queries (claims, hypotheses) as `item_key`s, one per line (scripts/training_items.py writes
# them from ../shared/datasets): a run on a file of another name that holds some of them (the first 20 claims of
# claims_train.jsonl saved as c20.jsonl) is in-sample too, which the file name alone cannot tell.
TRAINING_ITEMS = "training_items.txt"


def item_key(text: str) -> str:
    """A query's key: its words, lower-cased and single-spaced, hashed (the manifest holds no dataset text)."""
    return hashlib.sha1(" ".join(text.lower().split()).encode("utf-8")).hexdigest()[:16]


@lru_cache(maxsize=4)
def trained_items(model_dir: Path) -> frozenset[str]:
    """The keys of the queries a model folder's model was trained on; empty when the folder has no list."""
    try:
        return frozenset((model_dir / TRAINING_ITEMS).read_text(encoding="utf-8").split())
    except OSError:
        return frozenset()


def query_texts(doc: Any) -> Iterator[str]:
    """The queries of a benchmark file's parsed content: each item's "claim" (SciFact, Check-COVID) or
    "hypothesis" (EvidenceBench), in a list of items or a mapping of id -> item."""
    items = doc.values() if isinstance(doc, dict) and not ({"claim", "hypothesis"} & doc.keys()) else \
        doc if isinstance(doc, list) else [doc]
    for item in items:
        if isinstance(item, dict):
            text = item.get("claim") or item.get("hypothesis")
            if isinstance(text, str):
                yield text


def read_items(path: Path) -> frozenset[str]:
    """The keys of the queries in a benchmark file (JSON or JSON Lines); OSError / ValueError when unreadable."""
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        try:
            docs: list[Any] = [json.loads(text)]
        except json.JSONDecodeError:  # JSON Lines
            docs = [json.loads(line) for line in text.splitlines() if line.strip()]
    except RecursionError:  # nested past Python's limit: unreadable, as a damaged file is
        raise ValueError(f"{path}: nested too deeply") from None
    return frozenset(item_key(t) for doc in docs for t in query_texts(doc))


@lru_cache(maxsize=64)
def _file_items(path: str, _mtime: float, _size: int) -> frozenset[str]:
    return read_items(Path(path))


def run_items(path: str) -> frozenset[str]:
    """The keys of the queries in a run's data file; empty when it is gone or unreadable (a run from another machine
    is then judged by its file's name alone)."""
    try:
        st = os.stat(path)
        return _file_items(os.path.abspath(path), st.st_mtime, st.st_size)
    except (OSError, ValueError):
        return frozenset()


def in_sample(run: Mapping[str, Any], trained_on: frozenset[str] | None = None) -> bool:
    """Was this run's method's model trained on the run's dataset (by file name, or some of the file's queries)? Its
    figure then says how well the model fits data it has seen, not what to expect on new papers. A verify run's
    model is the verifier (its own training files); a trained ranking method's is the ranker."""
    method = str(run.get("method", ""))
    if method == VERIFIER_METHOD:
        files = verifier_training_files() if trained_on is None else trained_on
        model_dir = VERIFIER_DIR
    else:
        m = registry.lookup(method)
        if m is None or not m.trained:
            return False
        files = training_files() if trained_on is None else trained_on
        model_dir = MODEL_DIR
    names = {str(run.get("dataset", "")).split(":", 1)[-1]}
    params = run.get("parameters") or {}
    # EvidenceBench and Check-COVID record their file as `data`, a SciFact run its claims file as `claims`
    paths = [str(d) for d in (params.get("data") or run.get("data"), params.get("claims")) if d]
    names.update(Path(d).name for d in paths)
    if names & files:
        return True
    # `trained_on` stands for the model's training files (a test's): their queries are not known then
    seen = trained_items(model_dir) if trained_on is None else frozenset()
    return any(run_items(d) & seen for d in paths)


IN_SAMPLE_NOTE = ("in-sample: the method's learned model was trained on this dataset, so the figure shows how well "
                  "it fits data it has seen, not what to expect on new papers")
IN_SAMPLE_STYLE = "italic yellow"  # how the faces mark an in-sample figure (Rich style)
