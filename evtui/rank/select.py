"""Coverage-aware selection: pick K sentences that *together* cover the query, not K restatements of one fact.

Greedy maximisation of   sum(relevance) + aspect_weight * |query aspects covered|  - redundancy * max-similarity
to what is already picked (MMR-style); the coverage term is submodular, so greedy is the standard choice.
Similarity is the embedding cosine where both sentences have one, else the stem Jaccard, so an abstract sentence
restated in the results section is not picked twice.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evtui.query import PART_RE, stem


def _stems(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in PART_RE.findall(text) if len(w) > 2)


def normalise(scores: np.ndarray) -> np.ndarray:
    """Min-max to [0, 1] within the pool (model scores have no fixed scale)."""
    if len(scores) == 0:
        return scores
    lo, hi = float(np.min(scores)), float(np.max(scores))
    return (scores - lo) / (hi - lo) if hi > lo else np.ones_like(scores)


def select(
    relevance: np.ndarray,
    k: int,
    *,
    covered: Sequence[set[str]] | None = None,
    aspect_weights: dict[str, float] | None = None,
    vectors: np.ndarray | None = None,
    texts: Sequence[str] | None = None,
    aspect_weight: float = 0.0,
    redundancy: float = 0.0,
    pool: int = 60,
    greedy: int = 30,
) -> list[int]:
    """Indices of the chosen candidates, in pick order. `relevance` should be in [0, 1] (see `normalise`).

    Only the top `pool` candidates by relevance are considered: selection re-orders the head, it does not
    promote a sentence the model thinks is irrelevant. Past the first `greedy` picks (a screenful; a doc-level
    benchmark may ask for a thousand) the rest follow in relevance order.
    """
    n = len(relevance)
    k = min(k, n)
    if k <= 0:
        return []
    order = np.argsort(-relevance, kind="stable")
    if aspect_weight <= 0 and redundancy <= 0:
        return [int(i) for i in order[:k]]
    cand = [int(i) for i in order[:max(pool, min(k, greedy))]]
    weights = aspect_weights or {}
    seen: set[str] = set()
    picked: list[int] = []
    stems = [_stems(texts[i]) for i in cand] if texts is not None else None
    sim_max = np.zeros(len(cand))
    vec_ok = np.zeros(len(cand), dtype=bool)
    if vectors is not None and len(vectors) == n:
        vec_ok = np.array([bool(np.isfinite(vectors[i]).all()) and float(np.abs(vectors[i]).sum()) > 0 for i in cand])
    alive = np.ones(len(cand), dtype=bool)
    for _ in range(min(k, greedy, len(cand))):
        gains = np.full(len(cand), -np.inf)
        for j, i in enumerate(cand):
            if not alive[j]:
                continue
            g = float(relevance[i]) - redundancy * sim_max[j]
            if covered is not None and aspect_weight > 0:
                new = covered[i] - seen
                g += aspect_weight * sum(weights.get(a, 1.0) for a in new)
            gains[j] = g
        j_best = int(np.argmax(gains))
        if not np.isfinite(gains[j_best]):
            break
        best = cand[j_best]
        picked.append(best)
        alive[j_best] = False
        if covered is not None:
            seen |= covered[best]
        # update each remaining candidate's similarity to the picked set
        for j, i in enumerate(cand):
            if not alive[j]:
                continue
            if vec_ok[j] and vec_ok[j_best]:
                s = float(np.dot(vectors[i], vectors[best]))  # type: ignore[index]
            elif stems is not None:
                a, b = stems[j], stems[j_best]
                s = len(a & b) / len(a | b) if a and b else 0.0
            else:
                s = 0.0
            if s > sim_max[j]:
                sim_max[j] = s
    if len(picked) < k:
        chosen = set(picked)
        picked += [int(i) for i in order if int(i) not in chosen][:k - len(picked)]
    return picked
