"""Query stems and concept variants: the engine's Snowball stemmer gives the pure-Python one's stems, and the
abbreviation table built once per library mapping follows a changed mapping."""

from __future__ import annotations

import pytest

from evtui.query.terms import concept_variants, stem


@pytest.mark.parametrize("word", ["running", "studies", "reduced", "Reduces", "generalization", "α-synuclein",
                                  "crohn's", "IL-6", "mortality", "statins", "über", "x" * 300, "a"])
def test_stem_matches_the_snowball_reference(word: str) -> None:
    snowball = pytest.importorskip("snowballstemmer").stemmer("english")
    assert stem(word) == snowball.stemWord(word.lower())


def test_concept_variants_follow_a_library_abbreviation_added_later() -> None:
    table = {"HCQ": "hydroxychloroquine"}
    assert "HCQ therapy" in concept_variants("hydroxychloroquine therapy", table)
    assert "LVEF" not in concept_variants("left ventricular ejection fraction", table)
    table["LVEF"] = "left ventricular ejection fraction"  # the same mapping, grown in place
    assert "LVEF" in concept_variants("left ventricular ejection fraction", table)
    other = {"CRP": "c-reactive protein"}  # another library's mapping
    assert "CRP levels" in concept_variants("c-reactive protein levels", other)
    assert "HCQ therapy" not in concept_variants("hydroxychloroquine therapy", other)
