"""A question is verified as the statement it asks about, through the shipped verifier: "Does vitamin D
supplementation reduce fracture risk?" read an insufficiency-raises-fracture-risk sentence as refuting (P 0.69)."""

from __future__ import annotations

from evtui.query import parse_query
from evtui.query.parse import verifier_claim
from evtui.verify.model import default_verifier

SENTENCES = ["Vitamin D supplementation reduced the risk of hip fracture by 18% in adults over 65 (RR 0.82, 95% CI "
             "0.69-0.97).",
             "Vitamin D insufficiency was associated with an increased risk of skeletal fractures.",
             "Aspirin use was associated with a lower risk of colorectal cancer (OR 0.66)."]


def test_a_question_takes_the_sides_its_statement_takes() -> None:
    v = default_verifier()
    asked = v.verify(verifier_claim(parse_query("Does vitamin D supplementation reduce fracture risk?")), SENTENCES,
                     [""] * len(SENTENCES))
    stated = v.verify("Vitamin D supplementation reduces fracture risk", SENTENCES, [""] * len(SENTENCES))
    assert [p.stance for p in asked] == [p.stance for p in stated]
    assert asked[1].stance != "refutes"  # as a question it was "refutes" at P 0.69
