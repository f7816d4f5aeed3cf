"""LightGBM model text: a seed ensemble as one file per head, its evaluation, and the file's sha256.

A head of the ranker is the mean of boosters that differ only in their seed. `merge_ensemble` writes their trees,
member after member, into one model text; `seed_mean` evaluates it as the ensemble did: each member's block of
trees summed on its own (LightGBM's predict over an iteration range adds the same leaf values in the same order as
the member alone), then the mean of the blocks. So the scores are bit-identical to the ensemble's, which keeps
every printed, stored and exported score unchanged. (Scaling the leaf values by 1/n instead would give the mean in
one pass, but 1/5 is not exact in binary: scores moved in the 15th digit, which the JSONL export shows; and one
pass over all the trees is ~1.6x slower, as they no longer stay in the CPU's cache.)
`strip_for_prediction` drops the per-tree statistics that prediction never reads (split gains, internal values,
weights and counts): half the bytes, and what git stores per retrain shrinks 2.5x (BENCHMARKS.md, "Ranker model
files"). What is lost: gain importances and SHAP values (`pred_contrib`), which nothing in evtui uses.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evtui.checksum import sha256_file
from evtui.errors import EvtuiError

# Header lines that may differ between members without changing what a tree means.
_MEMBER_SPECIFIC = ("tree_sizes",)
# Per-tree lines LightGBM's parser treats as optional and prediction never reads.
_STATISTICS = ("split_gain", "internal_value", "internal_weight", "internal_count", "leaf_weight", "leaf_count")


def _split(text: str) -> tuple[list[str], list[list[str]], str]:
    """(header lines, each tree's lines after its `Tree=i`, the text from `end of trees` on)."""
    body, sep, tail = text.partition("end of trees")
    if not sep:
        raise EvtuiError("not a LightGBM text model (no 'end of trees')")
    blocks = re.split(r"^Tree=\d+\n", body, flags=re.M)
    header = [line for line in blocks[0].splitlines() if line]
    trees = [[line for line in b.splitlines() if line] for b in blocks[1:]]
    return header, trees, sep + tail


def _join(header: list[str], trees: list[list[str]], tail: str) -> str:
    return "\n".join(header) + "\n\n" + "".join(f"Tree={i}\n" + "\n".join(t) + "\n\n" for i, t in enumerate(trees)) + tail


def merge_ensemble(members: Sequence[str]) -> str:
    """One LightGBM model text holding the members' trees in order (evaluate it with `seed_mean`).

    Members must share their header (features, objective, one tree per iteration) and their number of trees: seeds
    of one training run do. The merged header drops `tree_sizes` (LightGBM then parses the trees in order) and the
    text goes through LightGBM once, which writes the canonical file (sizes, feature importances) back."""
    import lightgbm as lgb

    if not members:
        raise EvtuiError("no boosters to merge")
    parsed = [_split(m) for m in members]
    header, first, tail = parsed[0]
    key = [line for line in header if line.partition("=")[0] not in _MEMBER_SPECIFIC]
    for h, trees, _tail in parsed[1:]:
        if [line for line in h if line.partition("=")[0] not in _MEMBER_SPECIFIC] != key or len(trees) != len(first):
            raise EvtuiError("the boosters differ in features, objective or size; only a seed ensemble can be merged")
    if "num_tree_per_iteration=1" not in key or any(line.startswith("average_output") for line in key):
        raise EvtuiError("only single-output boosted models can be merged")
    text = _join(key, [t for _h, trees, _tail in parsed for t in trees], tail)
    return str(lgb.Booster(model_str=text).model_to_string())


def seed_mean(booster: Any, x: np.ndarray, seeds: int) -> np.ndarray:
    """The raw score of a merged seed ensemble: the mean over its `seeds` equal blocks of trees."""
    step = booster.num_trees() // max(1, seeds)
    return np.asarray(np.mean([booster.predict(x, raw_score=True, num_threads=1, start_iteration=k * step,
                                               num_iteration=step) for k in range(max(1, seeds))], axis=0),
                      dtype=np.float64)


def strip_for_prediction(text: str) -> str:
    """The model text without the per-tree statistics and `tree_sizes` (LightGBM then parses trees in order)."""
    header, trees, tail = _split(text)
    header = [line for line in header if not line.startswith("tree_sizes=")]
    return _join(header, [[line for line in t if line.partition("=")[0] not in _STATISTICS] for t in trees], tail)


def write_head(folder: Path, head: str, members: Sequence[str]) -> dict[str, object]:
    """Write a head's merged ensemble, stripped for prediction, as `head.txt`; remove the per-seed files of the old
    layout, and return the head's model.json entry (file, sha256, bytes, seeds, trees)."""
    text = strip_for_prediction(merge_ensemble(members))
    path = folder / f"{head}.txt"
    for stale in folder.glob(f"{head}.*.txt"):  # head.1.txt ... of an unmerged ensemble
        stale.unlink()
    path.write_text(text, encoding="utf-8")
    return {"file": path.name, "sha256": sha256_file(path), "bytes": path.stat().st_size, "seeds": len(members),
            "trees": text.count("\nTree=")}
