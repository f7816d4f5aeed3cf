"""Counts in words are amounts, dropped from a claim's concepts as digits are ("15 months" never was a concept)."""

from __future__ import annotations

import pytest

from evtui.query.parse import parse_query


@pytest.mark.parametrize(("claim", "amount"), [
    # a Check-COVID claim: "approximately fifteen months" was a concept no finding contains
    ("Immunity to COVID-19 lasts approximately fifteen months on average after recovery.", "fifteen"),
    ("Symptoms start fourteen days after infection in most patients.", "fourteen"),
    ("Antibodies persist for sixty days after vaccination.", "sixty"),
    ("Twenty-five percent of smokers develop chronic obstructive pulmonary disease.", "twenty"),
])
def test_a_count_in_words_is_no_concept(claim: str, amount: str) -> None:
    labels = [a.label.lower() for a in parse_query(claim).aspects]
    assert labels, claim
    assert not any(amount in label for label in labels), labels


def test_a_kind_keeps_its_number_word() -> None:
    # "type two" names a kind, not an amount (as "type 2" does)
    labels = [a.label.lower() for a in parse_query("Metformin lowers glucose in type two diabetes.").aspects]
    assert any("two" in label for label in labels), labels
