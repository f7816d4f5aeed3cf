"""Relation verbs the word lists missed, a triplet's multi-word relation, and a triplet with no relation word."""

from __future__ import annotations

import pytest

from evtui.query import find_spans, parse_query, relation_family


def _roles(text: str) -> list[tuple[str, str]]:
    return [(a.role, a.label) for a in parse_query(text).aspects]


@pytest.mark.parametrize(("text", "expected", "family"), [
    ("Troponin predicts mortality after surgery",
     [("concept", "Troponin"), ("relation", "predicts"), ("concept", "mortality"), ("concept", "surgery")],
     "associate"),
    ("Smoking worsens asthma control",
     [("concept", "Smoking"), ("relation", "worsens"), ("concept", "asthma control")], "worsen"),
    ("Smoking exacerbates asthma", [("concept", "Smoking"), ("relation", "exacerbates"), ("concept", "asthma")],
     "worsen"),
    ("Hypoxia impairs wound healing",
     [("concept", "Hypoxia"), ("relation", "impairs"), ("concept", "wound healing")], "inhibit"),
    ("Exercise mitigates depression",
     [("concept", "Exercise"), ("relation", "mitigates"), ("concept", "depression")], "inhibit"),
    ("Vitamin C potentiates chemotherapy",
     [("concept", "Vitamin C"), ("relation", "potentiates"), ("concept", "chemotherapy")], "activate"),
    ("Rapamycin delays aging in fruit flies",
     [("concept", "Rapamycin"), ("relation", "delays"), ("concept", "aging"), ("concept", "fruit flies")],
     "inhibit"),
    ("Remdesivir shortens time to recovery",
     [("concept", "Remdesivir"), ("relation", "shortens"), ("concept", "time"), ("concept", "recovery")],
     "decrease"),
    ("Exercise boosts BDNF levels", [("concept", "Exercise"), ("relation", "boosts"), ("concept", "BDNF levels")],
     "increase"),
    ("Chronic stress drives inflammation",
     [("concept", "Chronic stress"), ("relation", "drives"), ("concept", "inflammation")], "cause"),
    ("Treatment with FN restores muscle regeneration",
     [("concept", "Treatment"), ("concept", "FN"), ("relation", "restores"), ("concept", "muscle regeneration")],
     "treat"),
])
def test_a_relation_verb_is_the_relation_not_part_of_a_concept(
        text: str, expected: list[tuple[str, str]], family: str) -> None:
    # each verb joined the concept before it ("Troponin predicts mortality"), or, with no verb known, split the claim
    # into words ("Smoking · worsens · asthma · control")
    assert _roles(text) == expected
    relation = next(label for role, label in expected if role == "relation")
    assert relation_family(relation) == family
    assert not any("verb" in n for n in parse_query(text).notes)


@pytest.mark.parametrize(("text", "concept"), [
    ("Headaches are correlated with cognitive impairment", "cognitive impairment"),
    ("High levels of CRP lead to a higher risk of COPD exacerbations", "COPD exacerbations"),
    ("Delayed diagnosis raises mortality", "Delayed diagnosis"),
    ("Cellular clocks are not predictive of mitosis timing", "predictive"),
    ("Statins have potential benefits in sepsis", "potential benefits"),
    ("The deregulated and prolonged activation of monocytes is harmful", "prolonged"),
    ("Sex drive declines with age", "Sex drive"),
])
def test_a_noun_or_adjective_sharing_the_verbs_stem_stays_a_concept(text: str, concept: str) -> None:
    assert ("concept", concept) in _roles(text)


def test_a_multi_word_triplet_relation_is_read_by_its_verb() -> None:
    parsed = parse_query("(aspirin, is associated with, colorectal cancer)")
    relation = next(a for a in parsed.aspects if a.role == "relation")
    assert relation.label == "is associated with"
    assert {"associate", "association", "correlate"} <= set(relation.terms)
    # the sentence says "was associated with": the phrase "is associated with" alone never lit it
    spans = find_spans("Aspirin use was associated with a lower colorectal cancer risk.", parsed.aspects)
    assert "relation" in {s.aspect for s in spans}
    assert relation_family("does not reduce") == "inhibit"
    assert relation_family("non-inferior") == "superior"
    assert relation_family("has no effect on") is None  # "effect" is no verb: not "treat" by the stem of "effective"


def test_a_triplet_whose_relation_holds_no_relation_word_says_so() -> None:
    parsed = parse_query("(IL-6, TNF-alpha, fever)")
    assert [(a.id, a.label) for a in parsed.aspects] == [("head", "IL-6"), ("relation", "TNF-alpha"),
                                                         ("tail", "fever")]
    assert any("'TNF-alpha' holds no relation word" in n for n in parsed.notes)
    # the advice holds: without brackets the three are concepts
    assert [(a.role, a.label) for a in parse_query("IL-6, TNF-alpha, fever").aspects] == [
        ("concept", "IL-6"), ("concept", "TNF-alpha"), ("concept", "fever")]
    for fine in ("(aspirin, reduce, colorectal cancer)", "(aspirin, is associated with, cancer)",
                 "(smoking, worsens, asthma)", "(aspirin, leads to, bleeding)"):
        assert not any("no relation word" in n for n in parse_query(fine).notes), fine
