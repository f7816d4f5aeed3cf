"""Honest results: rows that mention none of the query's concepts are hidden and the missing concepts named;
verbless claims split into concepts; a phrase across a bracket highlights the whole bracket."""

from __future__ import annotations

from evtui.honest import honest
from evtui.models import Evidence, Sentence, Span
from evtui.query import compile_matcher, parse_query


def _row(rank: int, text: str, aspects: list[str]) -> Evidence:
    s = Sentence(f"p:{rank}", "p", rank, "", "abstract", False, text)
    return Evidence(rank=rank, sentence=s, title="t", score=1.0, highlights=[Span(a, 0, 1) for a in aspects])


def test_nothing_mentions_the_concepts() -> None:
    q = parse_query("xylophonic zebrafication causes quarkitis")
    rel = next(a.id for a in q.aspects if a.role == "relation")
    rows = [_row(i, "it causes", [rel]) for i in range(1, 6)]
    out = honest(rows, q.aspects, "best")
    assert out.nothing and out.hidden == 5
    assert out.notes == ["none of the 5 results mentions “xylophonic zebrafication” or “quarkitis”"]


def test_rows_without_a_concept_are_hidden_and_missing_ones_named() -> None:
    q = parse_query("ACE inhibitors cause cough")
    ace, cause, cough = (a.id for a in q.aspects)
    rows = [_row(1, "x", [ace, cause]), _row(2, "y", [cause]), _row(3, "z", [])]
    out = honest(rows, q.aspects, "bm25")
    assert [e.rank for e in out.evidence] == [1] and out.hidden == 2
    assert "none of the 3 results mentions “cough”" in out.notes
    # dense/hybrid rank paraphrases on purpose: rows kept, only the note
    kept = honest(rows, q.aspects, "dense")
    assert len(kept.evidence) == 3 and kept.hidden == 0 and kept.missing == ["cough"]
    assert honest(rows, q.aspects, "bm25").missing == ["cough"]
    assert honest([_row(1, "x", [ace, cause])], q.aspects, "bm25").notes == ["the result does not mention “cough”"]
    full = honest([_row(1, "x", [ace, cough])], q.aspects, "best")
    assert full.notes == [] and len(full.evidence) == 1


def test_verbless_claims_split_into_concepts() -> None:
    assert [a.label for a in parse_query("ACE inhibitor cough").aspects] == ["ACE inhibitor", "cough"]
    assert [a.label for a in parse_query("aspirin colorectal cancer").aspects] == ["aspirin", "colorectal cancer"]
    assert [a.label for a in parse_query("vitamin D deficiency depression").aspects] == [
        "vitamin D deficiency", "depression"]
    q = parse_query("ACE inhibitor cough")
    assert any("no verb" in n for n in q.notes)
    assert [a.label for a in parse_query("aspirin reduces colorectal cancer").aspects] == [
        "aspirin", "reduces", "colorectal cancer"]  # a claim with a verb is unchanged


def test_a_phrase_across_a_bracket_takes_the_whole_bracket() -> None:
    text = "Angiotensin-converting enzyme (ACE) inhibitors caused a dry cough."
    q = parse_query("ACE inhibitors cause cough")
    spans = compile_matcher(q.aspects).spans(text)
    assert "(ACE) inhibitors" in [text[s.start:s.end] for s in spans]
    assert all(text[s.start:s.end].count("(") == text[s.start:s.end].count(")") for s in spans)


def _text_row(rank: int, text: str) -> Evidence:
    s = Sentence(f"p:{rank}", "p", rank, "", "results", False, text)
    return Evidence(rank=rank, sentence=s, title="t", score=1.0, highlights=[])


def test_half_of_a_concept_with_a_specific_word_counts() -> None:
    # A paper on an urban population of crows rarely writes "urban crows": its rows were all hidden.
    q = parse_query("urban crows form large groups")
    rows = [_text_row(1, "Of 322 marked crows, 129 individuals were observed at the zoo."),
            _text_row(2, "Groups were larger in winter.")]  # only generic words of "form large groups"
    out = honest(rows, q.aspects, "best")
    assert [e.rank for e in out.evidence] == [1] and out.hidden == 1
    assert "mentioned only in part: “urban crows”" in out.notes
    assert "none of the 2 results mentions “form large groups”" in out.notes
    # the rule before: the whole phrase or nothing
    assert honest(rows, q.aspects, "best", partial=False).nothing


def test_a_generic_word_alone_is_no_mention() -> None:
    q = parse_query("Active caspase-11 protein promotes pyroptosis.")
    rows = [_text_row(1, "Protein levels rose in both groups."),
            _text_row(2, "Active mouse caspase-11 was required for restriction of L. pneumophila infection."),
            _text_row(3, "Interleukin-6 was measured in 6 patients.")]
    assert [e.rank for e in honest(rows, q.aspects, "bm25").evidence] == [2]
    # a hyphenated name is one unit: "IL-6" is not mentioned by a bare 6
    il6 = parse_query("IL-6 causes fever")
    assert honest([_text_row(3, "Interleukin was measured in 6 patients.")], il6.aspects, "bm25").nothing
    assert not honest([_text_row(4, "Serum IL6 rose.")], il6.aspects, "bm25").nothing


def test_the_coverage_dots_show_a_concept_mentioned_in_part() -> None:
    from evtui.honest import in_part
    from evtui.render import coverage_marker

    q = parse_query("aspirin reduces colorectal cancer")
    text = "Aspirin at 75 mg daily lowered colorectal adenoma recurrence by 21%."
    spans = compile_matcher(q.aspects).spans(text)
    crc = next(a.id for a in q.aspects if a.label == "colorectal cancer")
    assert in_part(text, q.aspects, {s.aspect for s in spans}) == [crc]
    assert coverage_marker(spans, q.aspects, in_part(text, q.aspects)).plain == "●●◐"
    assert coverage_marker(spans, q.aspects).plain == "●●○"


def test_a_possessive_names_its_word() -> None:
    """"Aspirin's use reduces …": as the unit "aspirins" no sentence ever named the claim's subject, so the judge
    capped every sentence at "peripheral" and said it "does not name “Aspirin's use”"."""
    from evtui.honest import core_of, named, unit

    assert [unit(t) for t in ("Aspirin's", "COVID-19’s", "Crohn's", "IL-6", "its")] == [
        "aspirin", "covid19", "crohn", "il6", "it"]
    q = parse_query("Aspirin's use reduces colorectal cancer risk", mode="claim")
    subject = q.aspects[0].id
    text = "600 mg aspirin per day for a mean of 25 months substantially reduced the risk of colorectal cancer."
    assert subject in named(text, q.aspects, set())
    assert core_of(text, q.aspects, set()).subject
    assert subject in named("In Crohn's disease, aspirin use was rare.", q.aspects, set())


def _sides(claim: str) -> tuple[list[str], list[str]]:
    from evtui.honest import core_sides

    q = parse_query(claim, mode="claim")
    labels = {a.id: a.label for a in q.aspects}
    subject, outcome = core_sides(q.aspects, claim)
    return [labels[i] for i in subject], [labels[i] for i in outcome]


def test_a_claims_frame_is_not_its_subject() -> None:
    """Who holds a claim, when, or that there is evidence for it names nothing the claim is about: "Researchers",
    "new" and "November" were read as subjects, and every sentence without them held to "peripheral"."""
    assert _sides("Researchers at the University of Hong Kong estimated that hydroxychloroquine reduces mortality "
                  "in COVID-19 patients")[0] == ["hydroxychloroquine"]
    assert _sides("A new study suggests that dexamethasone reduces mortality in ventilated patients")[0] == [
        "dexamethasone"]
    assert _sides("In November, the study found that baricitinib improves survival in severe Covid-19")[0] == [
        "baricitinib"]
    assert _sides("There is little evidence that vitamin C prevents colds")[0] == ["vitamin C"]
    assert _sides("In British men, haplogroup I increases the risk of cardiovascular disease")[0] == ["haplogroup"]
    # a person finds or says, with or without "that"; a study, its data or results hold a claim with "that"
    assert _sides("Scientists have found traces of the coronavirus in semen")[0] == ["traces", "coronavirus"]
    assert _sides("The results clearly demonstrated that colchicine reduces hospitalization")[0] == ["colchicine"]
    assert _sides("It is impossible that aspirin damages neurons")[0] == ["aspirin"]
    assert _sides("Patients treated with aspirin showed fewer strokes")[0][:1] == ["Patients"]
    # an attribution needs its "that" or a verb of saying: the trials here are the claim's own subject
    assert "aspirin" in _sides("Trials of aspirin showed a reduced risk of colorectal cancer")[0] + _sides(
        "Trials of aspirin showed a reduced risk of colorectal cancer")[1]

def test_an_attribution_is_not_searched_for_and_a_setting_is() -> None:
    """Who holds a claim is no concept a sentence must name: no chip, no "none of the results mentions
    “scientists estimated”"; where it holds ("In British men,") is searched for, though it is not the subject."""
    q = parse_query("Some scientists estimated that metformin was useless against colorectal adenomas", mode="claim")
    assert [a.label for a in q.aspects][:1] == ["metformin"]
    assert "the claim's frame is not searched for: “Some scientists estimated that”" in q.notes
    q = parse_query("There is no evidence that singing spreads COVID-19", mode="claim")
    assert "singing" in [a.label for a in q.aspects] and "evidence" not in " ".join(a.label for a in q.aspects)
    q = parse_query("In British men, haplogroup I increases the risk of cardiovascular disease", mode="claim")
    assert "British men" in [a.label for a in q.aspects]
    assert not any("frame" in n for n in q.notes)


def test_that_a_relation_exists_is_neither_subject_nor_outcome() -> None:
    """"There is a positive correlation between X and Y" relates X and Y: "positive" was read as the subject (SciFact
    train claims), "relationship" and "impact" too (Check-COVID); the relation word is still searched for."""
    assert _sides("There is a positive correlation between hip fractures and statin use.") == (
        ["hip fractures"], ["statin use"])
    assert _sides("There is no relationship between COVID-19 growth rates and the increase in ultraviolet light.")[
        0] == ["COVID-19 growth rates"]
    assert _sides("There is no effect of vitamin D supplementation on fracture risk.") == (
        ["vitamin D supplementation"], ["fracture risk"])
    assert "impact" not in _sides("There was no impact on the mental health of medical workers treating COVID-19 "
                                  "patients.")[0]
    # an opening quote or a stray mark before it changes nothing
    assert _sides("/There is a positive correlation between hip fractures and statin use.")[0] == ["hip fractures"]
    assert _sides("“There is no effect of vitamin D supplementation on fracture risk.”")[0] == [
        "vitamin D supplementation"]
    q = parse_query("There is a positive correlation between hip fractures and statin use.", mode="claim")
    assert "correlation" in [a.label for a in q.aspects] and not any("frame" in n for n in q.notes)


def test_a_subject_runs_on_through_of_and_keeps_its_relative_clause() -> None:
    assert _sides("Widespread cases of COVID-19 in the United States can be traced to international transmission")[
        0] == ["Widespread cases", "COVID-19"]
    subject, outcome = _sides("Drugs that block interleukin-6 activity can increase likelihood of death")
    assert "interleukin-6" in subject and "death" in outcome
    # "of" never takes the last concept: a claim keeps an outcome
    assert _sides("Depletion of nitric oxide is responsible for vasospasm")[1]
