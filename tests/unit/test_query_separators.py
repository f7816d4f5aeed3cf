"""Queries a researcher types that were read wrongly: separators inside a claim, bracketed bar triplets, empty
triplet slots, stopword-only queries, stopwords that are abbreviations (NO, ALL), drug classes (statins) and
classifier numbers (type 2 diabetes); and the claim the verifier reads for a triplet."""

from __future__ import annotations

import pytest

from evtui.errors import QueryError
from evtui.query import find_spans, parse_query, verifier_claim
from evtui.query.parse import ONLY_COMMON_WORDS, CommonWordsOnly


def labels(q: str) -> list[str]:
    return [a.label for a in parse_query(q).aspects]


def lit(text: str, q: str) -> list[tuple[str, str]]:
    return [(s.aspect, text[s.start:s.end]) for s in find_spans(text, parse_query(q).aspects)]


@pytest.mark.parametrize("q", ["aspirin | | cancer", "+aspirin -cancer", "aspirin - cancer", "aspirin & cancer",
                               "aspirin = cancer", "aspirin {cancer}"])
def test_separators_end_a_concept(q: str) -> None:
    # before: one phrase concept "aspirin cancer", which no sentence holds
    assert labels(q) == ["aspirin", "cancer"]


def test_a_sign_glued_to_a_word_stays_in_the_concept() -> None:
    assert labels("CD4+ T cells increase IL-2") == ["CD4 T cells", "increase", "IL-2"]


@pytest.mark.parametrize("q", ["(aspirin | reduce | colorectal cancer)", "[aspirin | reduce | colorectal cancer]"])
def test_a_bracketed_bar_triplet_is_a_triplet(q: str) -> None:
    pq = parse_query(q)
    assert pq.mode == "triplet"
    assert [a.label for a in pq.aspects] == ["aspirin", "reduce", "colorectal cancer"]


@pytest.mark.parametrize("q", ["(aspirin, , cancer)", "aspirin | | cancer", "( , reduce, cancer)"])
def test_a_triplet_with_an_empty_slot_says_it_was_searched_as_a_claim(q: str) -> None:
    pq = parse_query(q)
    assert pq.mode == "claim"
    assert any("a triplet needs all three parts" in n for n in pq.notes)
    assert not any("triplet" in n for n in parse_query("aspirin reduces cancer").notes[1:])


@pytest.mark.parametrize("q", ["the of and", "What is it?", "NOT OR AND", "Evidence shows"])
def test_only_common_words_is_refused_with_a_reason(q: str) -> None:
    # before: searched as the phrase itself, every row a full match, and `verify` had a paper "refute" it
    with pytest.raises(CommonWordsOnly) as info:
        parse_query(q)
    assert isinstance(info.value, QueryError)
    assert info.value.parsed.aspects == [] and info.value.parsed.notes[-1] == ONLY_COMMON_WORDS
    assert "only common words" in str(info.value)


def test_stopwords_in_capitals_are_abbreviations() -> None:
    assert labels("NO inhibits platelet aggregation") == ["NO", "inhibits", "platelet aggregation"]
    assert labels("ALL relapse in children") == ["ALL relapse", "children"]
    assert labels("Does AS cause uveitis?") == ["AS", "cause", "uveitis"]
    # a shouted query, and boolean operators, are not
    assert labels("ASPIRIN AND CANCER") == ["ASPIRIN", "CANCER"]
    assert labels("aspirin AND cancer OR NOT polyps") == ["aspirin", "cancer", "polyps"]


def test_a_stopword_abbreviation_lights_only_in_capitals() -> None:
    text = "There was no difference in platelet aggregation; NO release rose. No change."
    assert lit(text, "(NO, inhibit, platelet aggregation)") == [("tail", "platelet aggregation"), ("head", "NO")]


def test_a_drug_class_lights_its_members_by_their_inn_stem() -> None:
    pq = parse_query("statins lower LDL cholesterol")
    assert {"atorvastatin", "simvastatin", "rosuvastatin"} <= set(pq.aspects[0].terms)  # searched, not only lit
    text = ("Atorvastatin and simvastatin-treated mice, unlike somatostatin, nystatin, cystatin C or nonstatin "
            "therapy, lowered LDL cholesterol.")
    assert lit(text, "statins lower LDL cholesterol") == [
        ("a1", "Atorvastatin"), ("a1", "simvastatin"), ("a2", "lowered"), ("a3", "LDL cholesterol")]
    # a member the list lacks, inside a phrase of the class word
    assert lit("Bervastatin therapy reduced deaths.", "statin therapy reduces mortality")[0] == (
        "a1", "Bervastatin therapy")
    # one drug names itself, not its class mates
    assert lit("Simvastatin and atorvastatin were compared.", "atorvastatin lowers LDL") == [("a1", "atorvastatin")]


@pytest.mark.parametrize(("q", "first"), [("type 2 diabetes obesity", "type 2 diabetes"),
                                          ("grade 2 glioma survival", "grade 2 glioma")])
def test_a_classifier_number_binds_to_the_next_word(q: str, first: str) -> None:
    assert labels(q)[0] == first


def test_a_triplet_is_one_claim_for_the_verifier_however_written() -> None:
    forms = ["(aspirin, reduce, colorectal cancer)", "aspirin | reduce | colorectal cancer",
             "[aspirin | reduce | colorectal cancer]"]
    assert {verifier_claim(parse_query(q)) for q in forms} == {"aspirin reduce colorectal cancer"}
    claim = "Aspirin reduces colorectal cancer."
    assert verifier_claim(parse_query(claim)) == claim


@pytest.mark.parametrize(("q", "variant"), [("TGF-beta", "TGF-β"), ("NF-kappaB activation", "NF-κB"),
                                            ("IL-1beta", "IL-1β"), ("beta-blockers reduce mortality", "β-blockers"),
                                            ("TNF-alpha", "TNFα"), ("µg dose", "μg dose"), ("μM", "µM")])
def test_a_spelled_greek_letter_also_searches_the_letter(q: str, variant: str) -> None:
    # before: only α -> alpha; a "TGF-beta" query missed the library's 58 "TGF-β" sentences
    assert variant in parse_query(q).aspects[0].terms
    assert lit(f"We measured {variant} here.", q)[0][1] == variant


@pytest.mark.parametrize("q", ["betamethasone", "alphabet soup", "Alphabet"])
def test_a_greek_name_inside_a_word_is_left_alone(q: str) -> None:
    assert parse_query(q).aspects[0].terms == [q]


def test_a_stopword_abbreviation_counts_as_a_mention_only_in_capitals() -> None:
    from evtui.honest import _found, _units, content_words, generic_words

    (all_relapse,) = content_words(parse_query("ALL relapse in children").aspects[0])
    # before: "ALL" was dropped as a stopword, so "relapse" alone was a whole mention of "ALL relapse"
    assert _found(_units("Relapse occurred in all children."), [all_relapse], generic_words()) == 1
    assert _found(_units("ALL relapse occurred in 5 children."), [all_relapse], generic_words()) == 2
