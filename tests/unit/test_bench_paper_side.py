"""The paper's-side lever of benchmarks/bench_verifier.py (`paper-side`): who may take the side, and who may not."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_verifier as bv  # noqa: E402 - the harness lives in benchmarks/, which is no package


def row(ps: float | None, pr: float | None, paper: str = "p1", relevant: bool = True, gold: str | None = None) -> dict:
    return {"claim": "c1", "paper": paper, "gold": gold, "ps": ps, "pr": pr, "relevant": relevant}


TH = (0.6, 0.7)


def test_a_neutral_sentence_that_bears_on_the_claim_takes_its_papers_side() -> None:
    rows = [row(0.9, 0.05), row(0.40, 0.30), row(0.10, 0.05), row(0.45, 0.35, relevant=False),
            row(0.50, 0.30, paper="p2")]
    assert bv.lend_paper_side(rows, *TH, None) == ["supports", "neutral", "neutral", "neutral", "neutral"]
    # the second bears on the claim (0.70 >= tau); the third does not; an irrelevant one and another paper's never
    assert bv.lend_paper_side(rows, *TH, 0.5) == ["supports", "supports", "neutral", "neutral", "neutral"]


def test_lean_needs_the_sentence_to_lean_that_way_and_unanimous_needs_agreement() -> None:
    rows = [row(0.9, 0.05), row(0.25, 0.45)]  # the second leans to refutes
    assert bv.lend_paper_side(rows, *TH, 0.5, "lean") == ["supports", "neutral"]
    assert bv.lend_paper_side(rows, *TH, 0.5, "any") == ["supports", "supports"]
    split = [row(0.9, 0.05), row(0.05, 0.8), row(0.45, 0.30)]
    assert bv.lend_paper_side(split, *TH, 0.5, "unanimous") == ["supports", "refutes", "neutral"]
    # "lean": the paper's most probable side (0.9 supports) goes to the sentence leaning that way
    assert bv.lend_paper_side(split, *TH, 0.5, "lean") == ["supports", "refutes", "supports"]


def test_a_rationale_outside_the_judged_top_k_stays_a_miss() -> None:
    rows = [row(0.9, 0.05), row(None, None, gold="supports")]
    assert bv.lend_paper_side(rows, *TH, 0.3) == ["supports", "missing"]
    scores = bv.stance_scores([("supports", d) for d in bv.lend_paper_side(rows, *TH, 0.3)])
    assert scores["supports"]["recall"] == 0.5 and scores["judged_top10"] == 0.5
