"""What the verifier reads of a query: a yes/no question or a "whether" clause as the statement it asks about (the
verifier was trained on statements: "Does vitamin D … reduce fracture risk?" read an increased-risk-with-insufficiency
sentence as refuting at P 0.69), a triplet as its three parts, anything else as written."""

from __future__ import annotations

import pytest

from evtui.query import parse_query
from evtui.query.parse import verifier_claim


@pytest.mark.parametrize(("query", "claim"), [
    ("Does vitamin D supplementation reduce fracture risk?", "vitamin D supplementation reduce fracture risk"),
    ("Is aspirin associated with a lower risk of colorectal cancer?",
     "aspirin associated with a lower risk of colorectal cancer"),
    ("Do statins lower LDL ??", "statins lower LDL"),
    ("We tested whether statins reduce LDL cholesterol.", "statins reduce LDL cholesterol"),
    ("to determine whether aspirin prevents stroke", "aspirin prevents stroke"),
    ("Aspirin reduces the risk of colorectal cancer?", "Aspirin reduces the risk of colorectal cancer"),
    # not questions, or not yes/no ones: as written
    ("Aspirin reduces cancer whether or not taken daily", "Aspirin reduces cancer whether or not taken daily"),
    ("Vitamin D may reduce fracture risk", "Vitamin D may reduce fracture risk"),
    ("What is the effect of aspirin on cancer?", "What is the effect of aspirin on cancer"),
    ("(aspirin, reduce, colorectal cancer)", "aspirin reduce colorectal cancer"),
])
def test_the_claim_the_verifier_reads(query: str, claim: str) -> None:
    assert verifier_claim(parse_query(query)) == claim
