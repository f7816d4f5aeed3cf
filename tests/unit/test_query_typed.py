"""Queries as researchers type them: an unclosed triplet, a pasted escape sequence, a name holding a relation word,
locant commas, a statistic beside a claim, a paper identifier."""

from __future__ import annotations

import re

import pytest

from evtui.errors import QueryError
from evtui.query.parse import parse_query, verifier_claim


def _labels(q: str) -> list[tuple[str, str]]:
    return [(a.role, a.label) for a in parse_query(q).aspects]


def test_unclosed_triplet_is_read_as_the_triplet_and_says_so() -> None:
    p = parse_query("(aspirin, reduce, colorectal cancer")
    assert p.mode == "triplet"
    assert [a.label for a in p.aspects] == ["aspirin", "reduce", "colorectal cancer"]
    assert any("lacks its closing ')'" in n and "(aspirin, reduce, colorectal cancer)" in n for n in p.notes)
    assert verifier_claim(p) == "aspirin reduce colorectal cancer"


def test_unclosed_two_part_triplet_says_what_is_missing() -> None:
    p = parse_query("(aspirin, colorectal cancer")
    assert p.mode == "claim"
    assert any("lacks its closing ')'" in n and "three parts" in n for n in p.notes)


def test_empty_triplet_frame_asks_for_three_parts() -> None:
    with pytest.raises(QueryError, match="triplet needs all three parts"):
        parse_query("(,,)")


def test_extra_closing_bracket_stays_out_of_the_tail() -> None:
    assert parse_query("(aspirin, reduce, colorectal cancer))").aspects[-1].label == "colorectal cancer"


def test_terminal_escape_sequences_are_stripped() -> None:
    p = parse_query("\x1b[31maspirin\x1b[0m reduces \x1b]8;;http://x\x07cancer\x1b]8;;\x07\x9b1m")
    assert [a.label for a in p.aspects] == ["aspirin", "reduces", "cancer"]
    assert p.text == "aspirin reduces cancer"


def test_capitalised_word_inside_a_name_is_no_relation() -> None:
    labels = _labels("Surveillance, Epidemiology, and End Results data show aspirin reduces cancer")
    assert ("concept", "End Results data") in labels
    assert [lab for role, lab in labels if role == "relation"] == ["reduces"]
    assert ("relation", "Prevention") not in _labels("The Cancer Prevention Study found statins lower mortality")
    # a headline capitalises its verb: still a relation
    assert ("relation", "Reduces") in _labels("Aspirin Reduces Colorectal Cancer")


def test_locant_commas_keep_a_chemical_whole() -> None:
    for q in ("(1,25-dihydroxyvitamin D3, reduce, fracture risk)", "(1,25-dihydroxyvitamin D3 | reduce | fracture risk)"):
        p = parse_query(q)
        assert p.mode == "triplet"
        assert [a.label for a in p.aspects] == ["1,25-dihydroxyvitamin D3", "reduce", "fracture risk"]
    assert ("concept", "1,4-benzoquinone") in _labels("1,4-benzoquinone is toxic at high doses")


@pytest.mark.parametrize(("query", "figure"), [
    ("Statins reduce mortality (HR 0.8)", "HR 0.8"),
    ("Metformin lowers HbA1c (n = 120)", "n = 120"),
    ("Aspirin reduces cancer (p < 0.05)", "p < 0.05"),
    ("Aspirin reduces cancer (OR 0.75, 95% CI 0.6-0.9)", "95% CI 0.6-0.9"),
    ("White mortality from COVID-19 is 3.57 times Black mortality", "3.57 times"),
])
def test_a_statistic_beside_a_claim_is_no_concept(query: str, figure: str) -> None:
    p = parse_query(query)
    assert p.mode == "claim"
    assert not [a.label for a in p.aspects if re.match(r"\d|(?:HR|n|p|OR|CI)\b", a.label)]
    assert any(n.startswith("quantities are not searched for") and figure in n for n in p.notes)


def test_names_with_numbers_are_not_statistics() -> None:
    assert ("concept", "p 53 mutations") in _labels("p 53 mutations cause cancer")  # "p" only with its sign
    p = parse_query("aspirin or 5 mg warfarin lowers stroke risk")  # "or 5" is no odds ratio
    assert any(n.endswith(": 5 mg") for n in p.notes)


@pytest.mark.parametrize("query", ["10.1056/NEJMoa1215490", "https://doi.org/10.1056/NEJMoa1215490",
                                   "doi:10.1016/j.cell.2020.02.052", "PMID: 12345678", "PMC2768302",
                                   "https://pubmed.ncbi.nlm.nih.gov/12345678/"])
def test_a_paper_identifier_is_no_query(query: str) -> None:
    with pytest.raises(QueryError, match="names a paper, not a finding"):
        parse_query(query)


def test_greek_letters_and_quotes_stay_in_concepts() -> None:
    assert _labels("“TNF-α” increases ‘IFN-γ production’") == [
        ("concept", "TNF-α"), ("relation", "increases"), ("concept", "IFN-γ production")]


def test_semicolon_triplet() -> None:
    p = parse_query("(aspirin; reduce; colorectal cancer)")
    assert p.mode == "triplet"
    assert [a.label for a in p.aspects] == ["aspirin", "reduce", "colorectal cancer"]


def test_bracketed_chemical_name_is_one_concept() -> None:
    assert ("concept", "25(OH)D") in _labels("Vitamin D (25(OH)D) deficiency increases mortality")
    assert ("concept", "1,25(OH)2D3") in _labels("1,25(OH)2D3 reduces fracture risk")


def test_who_in_capitals_is_the_organisation_not_a_question() -> None:
    assert not any(n.startswith("no claim to verify") for n in parse_query("WHO Growth Standards predict stunting").notes)
    assert any(n.startswith("no claim to verify") for n in parse_query("Who benefits from aspirin?").notes)


@pytest.mark.parametrize("cite", ["(Smith et al., 2019)", "[12]", "(Smith and Jones 2019; Lee, 2020)", "[3, 5-7]"])
def test_a_citation_beside_a_claim_is_no_concept(cite: str) -> None:
    p = parse_query(f"aspirin reduces cancer risk {cite}")
    assert [a.label for a in p.aspects] == ["aspirin", "reduces", "cancer risk"]
    assert f"citations are not searched for: {cite}" in p.notes


def test_a_short_quoted_term_is_one_concept() -> None:
    assert ("concept", "hygiene hypothesis") in _labels("The 'hygiene hypothesis' explains allergy")
    assert ("concept", "artificial spermatids") in _labels('Mouse models can be generated using "artificial spermatids."')
    # a quote holding a relation word is read as any text is
    assert ("relation", "caused") in _labels("children's asthma is 'caused' by mold")
