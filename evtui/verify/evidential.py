"""`evidential`: +VeriRel's ranking offline — relevance ⊕ α·(P(support) + P(refute)) from the trained verifier.

The pool is `best`'s top POOL (after its coverage-aware selection); relevance is the pool rank mapped to [0, 1]
(`best`'s scores are not in rank order after selection, so the rank is the honest relevance signal); the verifier
adds α times how much the sentence bears on the query either way. α was chosen by cross-validation
(benchmarks/evidential_alpha.py; figures in BENCHMARKS.md).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from evtui.models import Evidence, ParsedQuery
from evtui.query import verifier_claim
from evtui.store import Store
from evtui.verify.model import Verifier

POOL = 30
ALPHA = 0.85  # the median of the 10 folds' CV choices (SciFact fold 0 and Check-COVID dev, 5 each)


def combine(n: int, p_side: np.ndarray, alpha: float) -> np.ndarray:
    """Rank relevance (1 for the first of n, falling linearly) plus α·P(side)."""
    rel = 1.0 - np.arange(n) / max(1, n)
    return rel + alpha * p_side


def rerank(verifier: Verifier, parsed: ParsedQuery, evidence: list[Evidence], k: int, store: Store,
           alpha: float = ALPHA) -> list[Evidence]:
    if not evidence:
        return []
    probs = verifier.probabilities(verifier_claim(parsed), [e.sentence.text for e in evidence],
                                   store.previous_texts([e.sentence.id for e in evidence]))
    score = combine(len(evidence), probs[:, 0] + probs[:, 1], alpha)
    order = sorted(range(len(evidence)), key=lambda i: (-score[i], i))[:k]
    return [replace(evidence[i], rank=n, score=float(score[i])) for n, i in enumerate(order, 1)]
