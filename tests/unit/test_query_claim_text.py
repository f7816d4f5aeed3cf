"""A claim pasted with its statistics and citation ("… (HR 0.8, 95% CI 0.7-0.9) [12]") is searched and verified as
the claim alone: the verifier read the figures (other rationales, other confidences) and the paper channel searched
for "hr", "ci" and "12", so other papers were judged than for the same claim without them."""

from __future__ import annotations

import pytest

from evtui.query import parse_query
from evtui.query.aspects import without_asides
from evtui.query.parse import claim_text, verifier_claim
from evtui.rank.features import query_stems
from evtui.rank.pipeline import BestRanker, dense_text

PLAIN = "Aspirin reduces colorectal cancer risk"


@pytest.mark.parametrize("pasted", [
    f"{PLAIN} (HR 0.8, 95% CI 0.7-0.9) [12]",
    f"{PLAIN} (Smith et al., 2019)",
    f"{PLAIN} [3, 5-7] (p < 0.05; n = 120)",
])
def test_figures_and_citations_are_not_part_of_the_claim(pasted: str) -> None:
    parsed, plain = parse_query(pasted), parse_query(PLAIN)
    assert claim_text(parsed) == PLAIN
    assert verifier_claim(parsed) == verifier_claim(plain)
    assert dense_text(parsed) == dense_text(plain)
    assert BestRanker._words(parsed) == BestRanker._words(plain)
    assert query_stems(parsed) == query_stems(plain)
    assert parsed.text == pasted  # the query as typed is still what the user sees


@pytest.mark.parametrize("text", [
    "AMP-activated protein kinase (AMPK) activation reduces inflammation-related fibrosis in the lungs.",
    "Vitamin D (1000 IU daily) reduces falls in older adults.",
    "Alirocumab treatment reduces apo(a) fractional clearance rate.",
    "IL-6 (interleukin 6) levels rise in sepsis.",
    "Input from  mental and physical health care professionals is not effective.",  # untouched, spaces and all
])
def test_words_in_brackets_stay(text: str) -> None:
    assert without_asides(text) == text
