"""Query -> mode and aspects; aspects -> highlight spans (Python string offsets)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evtui.errors import QueryError
from evtui.query import extract_abbreviations, find_spans, parse_query, search_terms
from evtui.query.parse import MAX_ASPECTS


@pytest.mark.parametrize("q,mode", [
    ("(aspirin, reduce, colorectal cancer)", "triplet"),
    ("resveratrol | inhibit | pancreatic cancer", "triplet"),
    ("[metformin, treat, type 2 diabetes]", "triplet"),
    ("ACE inhibitors cause cough", "claim"),
    ("Does vitamin D reduce fracture risk?", "hypothesis"),
    ("We hypothesize that statins protect against dementia", "hypothesis"),
    ("Coffee may lower the risk of liver cancer", "hypothesis"),
])
def test_mode_detection(q: str, mode: str) -> None:
    assert parse_query(q).mode == mode


def test_triplet_aspects_and_relation_family() -> None:
    pq = parse_query("(aspirin, reduce, colorectal cancer)")
    assert [(a.id, a.label) for a in pq.aspects] == [
        ("head", "aspirin"), ("relation", "reduce"), ("tail", "colorectal cancer")]
    rel = pq.aspects[1].terms
    assert {"suppress", "decrease", "block", "attenuate", "inhibit"} <= set(rel)
    induce = parse_query("a | induce | b").aspects[1].terms
    assert {"cause", "trigger", "increase", "promote"} <= set(induce)


def test_claim_concepts_keep_multiword_terms() -> None:
    pq = parse_query("ACE inhibitors cause cough")
    labels = [a.label for a in pq.aspects]
    assert labels == ["ACE inhibitors", "cause", "cough"]
    assert pq.aspects[1].role == "relation"
    assert "angiotensin-converting enzyme inhibitors" in pq.aspects[0].terms
    hyp = parse_query("Critically ill neonates have higher DEHP exposure than neonates receiving routine care, "
                      "mediated by more frequent use of DEHP-containing medical devices.", mode="hypothesis")
    assert hyp.mode == "hypothesis"
    labels = [a.label for a in hyp.aspects]
    assert "Critically ill neonates" in labels and "DEHP-containing medical devices" in labels
    assert not any(w in labels for w in ("have", "than", "by", "of"))


def test_library_abbreviations_expand_both_ways() -> None:
    pq = parse_query("statins lower LDL-C", abbreviations={"LDL-C": "low-density lipoprotein cholesterol"})
    assert any("low-density lipoprotein cholesterol" in t for a in pq.aspects for t in a.terms)
    pq2 = parse_query("tumor necrosis factor in sepsis")
    assert any(t == "TNF" for a in pq2.aspects for t in a.terms)


def test_explicit_mode_and_errors() -> None:
    assert parse_query("a, b, c", mode="triplet").mode == "triplet"
    with pytest.raises(QueryError, match="three parts"):
        parse_query("aspirin and cancer", mode="triplet")
    with pytest.raises(QueryError, match="unknown mode"):
        parse_query("aspirin", mode="poem")
    for bad in ("", "   ", "()", "?!.,", "\x00\x01"):
        with pytest.raises(QueryError):
            parse_query(bad)


def _surfaces(text: str, q: str) -> dict[str, list[str]]:
    pq = parse_query(q)
    out: dict[str, list[str]] = {}
    for s in find_spans(text, pq.aspects):
        out.setdefault(s.aspect, []).append(text[s.start:s.end])
    return out


def test_highlights_by_stem_and_phrase() -> None:
    text = "Daily aspirin reduces the incidence of colorectal cancers; aspirin reduction was dose dependent."
    got = _surfaces(text, "(aspirin, reduce, colorectal cancer)")
    assert got == {"head": ["aspirin", "aspirin"], "relation": ["reduces", "reduction"],
                   "tail": ["colorectal cancers"]}


def test_highlights_non_ascii_offsets() -> None:
    text = "🧪 In Zürich, β-blockers and TNF-α inhibitors lowered IL-6 in COVID-19 patients."
    got = _surfaces(text, "(TNF-α inhibitors, lower, IL-6)")
    assert got["head"] == ["TNF-α inhibitors"] and got["relation"] == ["lowered"] and got["tail"] == ["IL-6"]
    got2 = _surfaces(text, "β-blockers in Zürich")
    assert "β-blockers" in got2["a1"]


def test_hyphen_variants_match() -> None:
    text = "Angiotensin-converting enzyme inhibitors caused cough."
    got = _surfaces(text, "angiotensin converting enzyme inhibitors cause cough")
    assert got["a1"] == ["Angiotensin-converting enzyme inhibitors"]


def test_abbreviation_extraction() -> None:
    found = extract_abbreviations([
        "Patients on angiotensin-converting enzyme (ACE) inhibitors were followed.",
        "Levels of tumor necrosis factor (TNF) rose.",
        "The effect (95% CI) was small (n = 12).",
    ])
    assert found["ACE"] == "angiotensin-converting enzyme"
    assert found["TNF"] == "tumor necrosis factor"
    assert "95% CI" not in found and "n = 12" not in found


def test_search_terms_are_plain_words() -> None:
    pq = parse_query("(IL-6, induce, C-reactive protein)")
    terms = search_terms(pq.aspects[0])
    assert ["il", "6"] in terms and ["il6"] in terms
    assert all(w == w.lower() and w.isalnum() for t in terms for w in t)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_parse_never_raises_anything_but_query_error(q: str) -> None:
    try:
        pq = parse_query(q)
    except QueryError:
        return
    assert pq.aspects and all(a.terms for a in pq.aspects)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200), st.text(min_size=1, max_size=40))
def test_spans_always_inside_text(text: str, q: str) -> None:
    try:
        pq = parse_query(q)
    except QueryError:
        return
    for s in find_spans(text, pq.aspects):
        assert 0 <= s.start < s.end <= len(text)


def test_a_pasted_paragraph_is_searched_with_its_first_concepts() -> None:
    paragraph = ("Low-dose aspirin taken daily for several years reduces the incidence of colorectal cancer and "
                 "adenomas in randomized trials, while observational cohorts of regular users of non-steroidal "
                 "anti-inflammatory drugs report lower colorectal cancer mortality, although the benefit depends on "
                 "dose, appears after five to ten years, and must be weighed against gastrointestinal bleeding, "
                 "haemorrhagic stroke, renal impairment, peptic ulcers and interactions with anticoagulants, "
                 "antiplatelet agents, corticosteroids, selective serotonin reuptake inhibitors and alcohol.")
    q = parse_query(paragraph)
    assert len(q.aspects) == MAX_ASPECTS
    assert any(f"searching with the first {MAX_ASPECTS}" in n for n in q.notes)
    assert q.aspects[0].label.lower().startswith("low-dose aspirin")
    short = parse_query("Low-dose aspirin reduces the incidence of colorectal cancer")
    assert len(short.aspects) < MAX_ASPECTS and not any("searching with the first" in n for n in short.notes)
