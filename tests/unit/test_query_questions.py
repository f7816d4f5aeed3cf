"""How researchers phrase what they ask: open questions, PICO frames and comparisons assert nothing to verify;
comparisons, PICO labels, a definition in parentheses, quantities and a pasted abstract's headings are read as
what they are, not as concepts."""

from __future__ import annotations

import pytest

from evtui.query import MAX_QUERY_CHARS, parse_query, verifier_claim
from evtui.query.parse import NO_CLAIM, no_claim
from evtui.verify.cues import asks, explain


def _labels(text: str) -> list[str]:
    return [a.label for a in parse_query(text).aspects]


@pytest.mark.parametrize("query", [
    "What is the effect of metformin on HbA1c?",
    "How does exercise affect depression?",
    "Which drugs reduce LDL?",
    "effect of exercise on depression in older adults",
    "adults with type 2 diabetes; metformin; placebo; HbA1c",
    "P: adults with type 2 diabetes I: metformin C: placebo O: HbA1c",
    "Metformin vs. sulfonylurea in type 2 diabetes",
])
def test_a_query_that_asserts_nothing_has_no_claim_to_verify(query: str) -> None:
    parsed = parse_query(query)
    assert no_claim(parsed)
    assert any(n.startswith(NO_CLAIM) for n in parsed.notes)  # said once, where every face reads the query


@pytest.mark.parametrize("query", [
    "Metformin lowers HbA1c",
    "Does metformin lower HbA1c?",  # a yes/no question asks about a claim
    "Metformin compared with placebo reduces HbA1c",
    "Aspirin does not increase bleeding",
    "No association between coffee and cancer",
    "Statins may reduce mortality",
    "The effect of Lipopolysaccharides on kidney barrier function is dependent on inflammation levels.",
    "(metformin, lower, HbA1c)",
    "ACE inhibitors cause cough",
])
def test_a_claim_is_still_a_claim(query: str) -> None:
    parsed = parse_query(query)
    assert not no_claim(parsed)
    assert not any(n.startswith(NO_CLAIM) for n in parsed.notes)


def test_comparison_words_separate_the_arms() -> None:
    assert _labels("Metformin versus placebo for HbA1c") == ["Metformin", "placebo", "HbA1c"]
    assert _labels("Metformin vs. sulfonylurea in type 2 diabetes") == ["Metformin", "sulfonylurea", "type 2 diabetes"]
    assert _labels("Metformin vs sulfonylurea") == ["Metformin", "sulfonylurea"]  # not "vs" as a concept
    assert _labels("Metformin compared with placebo reduces HbA1c")[:2] == ["Metformin", "placebo"]


def test_superior_and_non_inferior_are_relations() -> None:
    roles = {a.label: a.role for a in parse_query("Apixaban is non-inferior to warfarin for stroke").aspects}
    assert roles["non-inferior"] == "relation" and roles["Apixaban"] == "concept"
    sup = next(a for a in parse_query("Drug A is superior to placebo for pain").aspects if a.label == "superior")
    assert sup.role == "relation" and "non-inferior" in sup.terms
    assert [a.role for a in parse_query("Is aspirin better than placebo?").aspects] == ["concept", "relation",
                                                                                         "concept"]


def test_pico_labels_are_not_part_of_a_concept() -> None:
    labels = _labels("P: adults with type 2 diabetes I: metformin C: placebo O: HbA1c")
    assert labels == ["adults", "type 2 diabetes", "metformin", "placebo", "HbA1c"]
    assert _labels("Population: older adults; Intervention: exercise; Outcome: depression") == [
        "older adults", "exercise", "depression"]


def test_an_abbreviation_defined_in_the_query_is_one_concept() -> None:
    aspects = parse_query("Non-steroidal anti-inflammatory drugs (NSAIDs) increase gastrointestinal bleeding").aspects
    assert [a.label for a in aspects] == ["Non-steroidal anti-inflammatory drugs", "increase",
                                          "gastrointestinal bleeding"]
    assert "NSAIDs" in aspects[0].terms
    # an abbreviation the built-in table does not know
    first = parse_query("Fibroblast activation protein (FAP) predicts poor survival").aspects[0]
    assert first.label == "Fibroblast activation protein" and "FAP" in first.terms
    # a parenthesis that is no definition stays as it was
    assert "adults" in _labels("Aspirin (in adults) reduces colorectal cancer")


def test_quantities_are_not_concepts() -> None:
    q = parse_query("A 10 mg dose of atorvastatin reduces LDL by 20%")
    assert [a.label for a in q.aspects] == ["dose", "atorvastatin", "reduces", "LDL"]
    assert any("10 mg" in n and "20%" in n for n in q.notes)
    # numbers that name a kind stay
    assert _labels("type 2 diabetes") == ["type 2 diabetes"]
    assert "HPV 16" in _labels("HPV 16 causes cervical cancer")
    assert "5-fluorouracil" in _labels("5-fluorouracil 500 mg/m2 improves survival")
    assert not any(n.startswith("quantities") for n in parse_query("1,4-benzoquinone is toxic at 2 doses").notes)


def test_a_pasted_abstract_loses_its_headings_and_says_once_that_it_was_cut() -> None:
    sentence = ("BACKGROUND Metformin lowers glucose in adults with diabetes. METHODS We randomised patients to "
                "metformin or placebo. FINDINGS HbA1c fell by a clinically relevant margin in every subgroup. ")
    q = parse_query(sentence + " ".join(f"Kinase{c}x binds receptor{c}y in tissue{c}z." for c in "ABCDEFGHIJKLMNOPQRST" * 3))
    assert not any(w in a.label for a in q.aspects for w in ("BACKGROUND", "METHODS", "FINDINGS"))
    assert len(q.text) == MAX_QUERY_CHARS
    cut = [n for n in q.notes if "truncated" in n or "first 16" in n or "long query" in n]
    assert len(cut) == 1 and "characters" in cut[0] and "searching with the first" in cut[0]


def test_is_there_reads_as_a_statement() -> None:
    q = parse_query("Is there an association between coffee and pancreatic cancer?")
    assert verifier_claim(q) == "there is an association between coffee and pancreatic cancer"


def test_a_question_in_a_paper_is_no_finding() -> None:
    assert asks("Does aspirin increase gastrointestinal bleeding or hemorrhagic strokes?")
    assert not asks("Aspirin use increases the risk for serious bleeding events.")


def test_primary_prevention_is_no_direction_cue() -> None:
    why = explain("Aspirin does not increase the risk of bleeding",
                  "The use of aspirin for primary prevention increases the risk for major bleeding events.",
                  "refutes", 0.76)
    assert "“increases”" in why and "prevention" not in why


def test_a_question_that_opens_with_its_setting() -> None:
    q = parse_query("In adults with type 2 diabetes, does metformin reduce HbA1c compared with placebo?")
    assert verifier_claim(q) == "In adults with type 2 diabetes, metformin reduce HbA1c compared with placebo"
    assert not no_claim(q)
    assert no_claim(parse_query("Among smokers, what is the risk of lung cancer?")) == "an open question (“What …”)"


def test_how_a_question_asks_is_no_aspect() -> None:
    q = parse_query("What is the effect of metformin on HbA1c?")
    assert [(a.id, a.label) for a in q.aspects] == [("a1", "metformin"), ("a2", "HbA1c")]
    assert "dropped filler words: effect" in q.notes
    # a claim keeps it: "the effect of X on Y is dependent on Z" asserts something about the effect
    claim = "The effect of lipopolysaccharides on kidney barrier function is dependent on inflammation levels."
    assert "effect" in _labels(claim)
    assert _labels("What is the effect?") == ["effect"]  # nothing else to search for
