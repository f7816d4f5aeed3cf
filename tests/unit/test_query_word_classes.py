"""A verb the relation lists do not know is the claim's relation, not part of a concept, and an adverb is no concept:
the parser reads word classes from lemminflect's lexicon (evtui/resources/word_classes.txt). "identifies coronavirus proteins", "novel coronavirus
fails" and "People naturally" were concepts no sentence contains, and the judge asked its sentences to name them."""

from __future__ import annotations

import pytest

from evtui.honest import core_of, core_sides
from evtui.query.aspects import word_classes
from evtui.query.parse import parse_query


def _labels(text: str) -> list[str]:
    return [a.label for a in parse_query(text, mode="claim").aspects]


def _subject(text: str) -> list[str]:
    parsed = parse_query(text, mode="claim")
    labels = {a.id: a.label for a in parsed.aspects}
    return [labels[i] for i in core_sides(parsed.aspects, text)[0]]


@pytest.mark.parametrize(("claim", "concept", "verb"), [
    # Check-COVID (train) claims
    ("One type of COVID-19 test identifies coronavirus proteins in a few seconds.", "coronavirus proteins",
     "identifies"),
    ("The novel coronavirus fails to be transmitted by respiratory droplets in cats.", "novel coronavirus", "fails"),
    ("Individuals with COVID-19 can transmit the virus by speaking in an enclosed space.", "virus", "transmit"),
])
def test_a_verb_no_list_knows_is_the_claims_relation(claim: str, concept: str, verb: str) -> None:
    aspects = parse_query(claim, mode="claim").aspects
    concepts = [a.label for a in aspects if a.role != "relation"]
    assert concept in concepts and not any(verb in label.split() for label in concepts), concepts
    assert verb in [a.label for a in aspects if a.role == "relation"]


def test_a_light_verb_is_no_relation() -> None:
    # "make", "came", "exists" say nothing a sentence must state: they end a concept, and are not searched for
    labels = _labels("A mutation in the viral spike protein may make the virus more transmissible.")
    assert "make" not in " ".join(labels).split() and "viral spike protein" in labels, labels


@pytest.mark.parametrize(("claim", "subject"), [
    ("The COVID-19 vaccine currently does not provide immunity.", "COVID-19 vaccine"),
    ("People naturally do not touch their faces often.", "People"),
])
def test_an_adverb_a_concept_ends_on_is_dropped(claim: str, subject: str) -> None:
    assert _subject(claim) == [subject]


def test_an_adverb_the_lexicon_lacks_is_known_by_its_ending() -> None:
    labels = _labels("Co-administration of benzo[a]pyrene and cigarette smoke synergistically increases lung tumors.")
    assert "cigarette smoke" in labels, labels
    assert "Activator-inhibitor pairs" in _labels("Activator-inhibitor pairs are provided ventrally by Xrl-sizzled.")


def test_a_lone_adverb_is_no_concept() -> None:
    assert "Genetically" not in _labels("Genetically, SARS-CoV-2 is dissimilar to other coronaviruses.")
    assert "probably" not in _labels("There were probably around 1 million confirmed COVID-19 cases in Wuhan.")


@pytest.mark.parametrize(("claim", "concept"), [
    ("Critically ill patients receive remdesivir.", "Critically ill patients"),  # an adverb before its word
    ("Neutralizing antibodies block viral entry.", "Neutralizing antibodies"),  # a participle
    ("Confirmed cases were higher in March.", "Confirmed cases"),
    ("Elderly patients have a higher risk of falls.", "Elderly patients"),  # an adjective in -ly
    ("Mutations in the gene family predict relapse.", "gene family"),  # a noun in -ly
    ("Aspirin Reduces Colorectal Cancer Risk", "Colorectal Cancer Risk"),  # a headline
])
def test_words_of_a_noun_phrase_stay(claim: str, concept: str) -> None:
    assert concept in _labels(claim)


def test_the_word_classes_are_the_lexicon_s_unambiguous_ones() -> None:
    finite, adverbs, either = word_classes()
    assert {"identifies", "transmit", "came"} <= finite and {"currently", "probably", "never"} <= adverbs
    # a noun reading, a participle or an adjective reading keeps a word out
    assert not {"increases", "touch", "confirmed", "spreading", "known"} & finite
    assert not {"weekly", "early", "elderly", "family"} & adverbs
    assert {"touch", "control", "cases"} <= either and not {"touch", "patients"} & finite


@pytest.mark.parametrize(("claim", "verb", "concept"), [
    ("People touch their eyes, nostrils, and lips frequently.", "touch", "People"),
    ("Cis-acting lncRNAs control the expression of genes nearby.", "control", "Cis-acting lncRNAs"),
    ("Gut microbes shape the immune system of infants.", "shape", "Gut microbes"),
])
def test_a_verb_that_is_also_a_noun_is_read_by_the_word_after_it(claim: str, verb: str, concept: str) -> None:
    aspects = parse_query(claim, mode="claim").aspects
    assert verb in [a.label for a in aspects if a.role == "relation"]
    assert concept in [a.label for a in aspects if a.role != "relation"]


@pytest.mark.parametrize(("claim", "concept"), [
    ("Over 300 COVID-19 cases a day were reported in March.", "COVID-19 cases"),
    ("COVID-19 cases this year exceed those of influenza.", "COVID-19 cases"),
    ("In March the risk of infection rose.", "risk"),
])
def test_a_noun_before_a_time_or_a_rate_stays_a_noun(claim: str, concept: str) -> None:
    assert concept in _labels(claim)


def test_the_judge_finds_the_subject_behind_an_adverb() -> None:
    claim = "The COVID-19 vaccine currently does not provide immunity."
    parsed = parse_query(claim, mode="claim")
    core = core_of("The COVID-19 vaccine induced neutralising antibodies in all participants.", parsed.aspects,
                   claim=claim)
    assert core.subject
