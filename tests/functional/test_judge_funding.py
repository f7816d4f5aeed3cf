"""Funding, conflict-of-interest, acknowledgement and trial-registration sentences are never evidence: the local judge
put "FUNDING: This work was supported by the NIH grant …" at "peripheral" for a claim whose words it shares."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evtui.config import load_config
from evtui.ingest.sections import back_matter
from evtui.judge.local import LocalJudge
from evtui.library import Library
from evtui.search import Searcher

FINDING = "Metformin lowered HbA1c by 0.8% in adults with type 2 diabetes (p < 0.001)."
BACK_MATTER = [
    "FUNDING: This work was supported by the NIH grant for metformin research in type 2 diabetes.",
    "The authors declare no competing interests in metformin or type 2 diabetes research.",
    "The metformin trial in type 2 diabetes is registered at ClinicalTrials.gov, number NCT01234567.",
    "We thank the metformin type 2 diabetes study nurses for their help.",
]


@pytest.fixture
def lib(papers_dir: Path) -> Iterator[Library]:
    (papers_dir / "metformin.md").write_text(
        "# Metformin in type 2 diabetes\n\n## Abstract\n\n" + FINDING + " " + " ".join(BACK_MATTER) + "\n",
        encoding="utf-8")
    with Library(load_config()) as library:
        library.ingest([papers_dir])
        yield library


def test_back_matter_is_judged_no_evidence_and_says_why(lib: Library) -> None:
    s = Searcher(lib)
    parsed = s.parse("Metformin lowers HbA1c in type 2 diabetes")
    res = s.search(parsed, k=20, method="bm25")
    by_text = {e.sentence.text: e for e in res.evidence}
    assert set(BACK_MATTER) <= set(by_text)
    judged = LocalJudge(lib).judge(parsed, [by_text[t] for t in [FINDING, *BACK_MATTER]])
    finding, *back = judged
    assert finding.level >= 2 and "never evidence" not in finding.rationale
    for j, kind in zip(back, ("funding", "conflict-of-interest", "trial registration", "acknowledgement"),
                       strict=True):
        assert (j.level, j.score, j.stance) == (0, 0, "neutral"), j.rationale
        assert kind in j.rationale and "never evidence" in j.rationale


@pytest.mark.parametrize("text", [
    "Somatic mutation burden was determined using data from the CoMMpass study (NCT01454297) on 664 patients.",
    "The hypothesis was strongly supported by our data on 120 patients.",
    "Disclosures of adverse events were more common with drug X.",
    "Funding of hospitals fell after the reform.",
    "Patients whose care was funded by Medicaid had higher mortality.",
    "The trial was registered in 2010 and enrolled 500 patients.",
    "RESULTS A total of 1113 men were registered, of whom 970 were randomly assigned.",
])
def test_a_finding_that_mentions_funding_or_registration_is_not_back_matter(text: str) -> None:
    assert back_matter(text) == ""


def test_a_sentence_in_an_acknowledgements_section_is_back_matter() -> None:
    assert back_matter("Metformin lowers HbA1c.", "Acknowledgements")
    assert not back_matter("Metformin lowers HbA1c.", "Results")


@pytest.mark.parametrize(("text", "kind"), [
    ("(Funded by the Medical Research Council and others.).", "funding"),
    ("This research was supported in part by a grant from the NIH.", "funding"),
    ("None of the authors has actual or potential competing financial interests.", "conflict-of-interest"),
    ("TRIAL REGISTRATION clinicaltrials.gov Identifier: NCT01295827.", "registration"),
    ("Registered 17 August 2007.", "registration"),
    ("This study was registered with the ISRCTN 18/02/2014 following adoption onto the portfolio.", "registration"),
])
def test_back_matter_as_abstracts_print_it(text: str, kind: str) -> None:
    assert kind in back_matter(text)
