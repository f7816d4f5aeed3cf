"""Claim verification over a library in SciFact's official prediction format (for `evtui verify --claims`).

One line per claim: {"id": claim id, "evidence": {"<doc_id>": {"label": "SUPPORT"|"CONTRADICT", "sentences":
[abstract sentence indices, 0-based, title excluded]}}}; papers judged NEI are left out, rationales in the order
they are ranked (the official scorer reads the first three). Only SciFact papers (`scifact:<doc_id>`) can be named
in this format; others found in the library are skipped.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from evtui.bench.scifact_ids import PREFIX, doc_id_of, to_scifact_index
from evtui.judge.claims import ClaimVerdict, verify_claim
from evtui.verify.model import default_verifier

if TYPE_CHECKING:
    from evtui.library import Library

# Chosen by claim-grouped 5-fold CV on the verifier's held-out SciFact fold (benchmarks/bench_verifier.py pipeline;
# BENCHMARKS.md "The verifier"): every fold picked the single best-matching paper; the paper-level thresholds are the
# folds' most frequent choice, re-chosen with each model: for evtui-verifier-4 (one pair per call, recalibrated)
# 3 of 5 folds picked supports 0.5 / refutes 0.5 (the others 0.5 / 0.6 and 0.6 / 0.5).
DEFAULT_PAPERS = 1
PAPER_THRESHOLDS = (0.5, 0.5)  # (supports, refutes)


def to_prediction(claim_id: Any, verdict: ClaimVerdict) -> dict[str, Any]:
    evidence: dict[str, dict[str, Any]] = {}
    for p in verdict.papers:
        if p.label == "NEI" or not p.paper_id.startswith(PREFIX):
            continue
        idx = [i for r in p.rationales if (i := to_scifact_index(p.paper_id, r.position)) is not None]
        if idx:
            evidence[doc_id_of(p.paper_id)] = {"label": p.label, "sentences": idx}
    return {"id": claim_id, "evidence": evidence}


def predict(library: Library, claims: list[Mapping[str, Any]], papers: int = DEFAULT_PAPERS) -> Iterator[dict[str, Any]]:
    """One official prediction per claim, in order; the claims' evidence (if any) is never read."""
    from evtui.search import Searcher

    searcher = Searcher(library)
    verifier = default_verifier()
    for c in claims:
        verdict = verify_claim(library, str(c["claim"]), papers=papers, searcher=searcher, verifier=verifier,
                               thresholds=PAPER_THRESHOLDS)
        yield to_prediction(c["id"], verdict)
