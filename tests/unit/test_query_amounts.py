"""A dropped amount takes the words that only qualified it, and a plain verb or degree adverb ends a concept:
"7-day-old adult Caenorhabditis elegans exhibit approximately 5% of …" read "Caenorhabditis elegans exhibit
approximately" as one concept no sentence contains."""

from __future__ import annotations

import pytest

from evtui.query import parse_query, relation_family


def _concepts(text: str) -> list[str]:
    return [a.label for a in parse_query(text).aspects if a.role == "concept"]


def test_the_c_elegans_claim_reads_as_its_concepts() -> None:
    parsed = parse_query("7-day-old adult Caenorhabditis elegans exhibit approximately 5% of the learning capacity "
                         "seen in 1-day old adults.")
    labels = [a.label for a in parsed.aspects]
    assert labels == ["adult Caenorhabditis elegans", "learning capacity", "adults"]
    note = next(n for n in parsed.notes if n.startswith("quantities are not searched for"))
    assert "approximately 5%" in note and "7-day-old" in note  # the user sees what went, qualifier included


@pytest.mark.parametrize(("text", "gone"), [
    ("Aspirin lowers LDL by up to 50 mg/dL in adults.", "up"),
    ("Roughly 40% of breast cancers overexpress HER2.", "Roughly"),
    ("Patients show nearly 30% lower risk of stroke.", "nearly"),
    ("Melatonin improves sleep onset in almost 60% of children.", "almost"),
    ("TNF increases IL-6 secretion 2-fold in macrophages.", "2-fold"),
    ("Approximately half of patients with sepsis recover.", "half"),
    ("About 30 patients had fever.", "30"),
    ("76-85% of people with severe mental disorder receive no treatment.", "76-85"),
    ("Approximately 250,000 people are infected with HTLV-1.", "000"),
    ("Five of the singers were hospitalized with COVID-19.", "five"),
    ("The coronavirus remained viable for up to three hours in aerosols.", "three"),
])
def test_a_qualifier_or_an_amount_is_no_concept(text: str, gone: str) -> None:
    assert not any(gone.lower() in c.lower().split() for c in _concepts(text)), _concepts(text)


@pytest.mark.parametrize(("text", "verb"), [
    ("IL-6 signaling plays a major role in atherosclerotic cardiovascular disease.", "plays"),
    ("Cell autonomous sex determination in somatic cells occurs in Galliformes.", "occurs"),
    ("Mice lacking Sirt1 exhibit obesity.", "exhibit"),
    ("Glycan adaptation is rarely observed in the B-cell repertoire.", "rarely"),
    ("Exhaustion of B cells contributes to poor antibody response.", "contributes"),
    ("Bone marrow cells don’t contribute to adult macrophage compartments.", "don’t"),
])
def test_a_plain_verb_or_degree_adverb_ends_a_concept(text: str, verb: str) -> None:
    concepts = _concepts(text)
    assert concepts and not any(verb in c.split() for c in concepts), concepts


def test_kinds_and_names_keep_their_numbers() -> None:
    # a classifier's number names a kind; a bare number without a qualifier may be part of a name
    assert _concepts("Metformin lowers HbA1c in type 2 diabetes") == ["Metformin", "HbA1c", "type 2 diabetes"]
    assert "IL-6" in _concepts("IL-6 levels rise in COVID-19 patients")[0]
    assert "development" in " ".join(_concepts("Brain development requires thyroid hormone"))


@pytest.mark.parametrize(("text", "relation", "family"), [
    ("SBP fell after salt restriction", "fell", "decrease"),
    ("KLF4 represses p53 transcription", "represses", "inhibit"),
])
def test_a_past_tense_or_repress_is_the_relation_not_part_of_a_concept(text: str, relation: str, family: str) -> None:
    parsed = parse_query(text)
    assert [a.label for a in parsed.aspects if a.role == "relation"] == [relation]
    assert relation_family(relation) == family
    assert not any(relation in a.label.split() for a in parsed.aspects if a.role == "concept")
