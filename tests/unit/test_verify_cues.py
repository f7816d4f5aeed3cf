"""When a rationale warns that a finding may be another study's (the introduction, a citation outside the results)."""

from __future__ import annotations

import pytest

from evtui.verify.cues import second_hand


@pytest.mark.parametrize(("text", "kind", "warns"), [
    ("However, curcumin intake failed to reduce the amyloid levels in AD patients.", "introduction", "introduction"),
    ("Curcumin could reverse working memory deficits [38, 40].", "discussion", "[38, 40]"),
    ("Curcumin could reverse working memory deficits [37–41].", "discussion", "[37–41]"),
    ("As Smith et al. showed, aspirin lowers the risk.", "discussion", "et al."),
    ("Aspirin lowered the risk (Smith, 2010).", "abstract", "(Smith, 2010)"),
    ("Aspirin lowered the risk (HR 0.61 [0.45-0.83]).", "discussion", ""),  # an interval, not a citation
    ("APP mice given CSP spent longer in the platform region [12].", "results", ""),  # the paper's own results
    ("Aspirin lowered the incidence of colorectal cancer.", "abstract", ""),
    # a structured abstract's background (the demo's CAPP2 paper), not its own finding
    ("BACKGROUND Observational studies report reduced colorectal cancer in regular aspirin consumers.", "abstract",
     "the abstract's background"),
    ("Background: aspirin is widely used.", "abstract", "the abstract's background"),
    ("CONTEXT Statins may lower the risk of sepsis.", "abstract", "the abstract's context"),
    ("Background noise was low in all recordings.", "methods", ""),  # a word, not a label
    ("RESULTS Aspirin lowered the incidence of colorectal cancer.", "abstract", ""),
])
def test_second_hand_findings_are_named(text: str, kind: str, warns: str) -> None:
    got = second_hand(text, kind)
    assert (warns in got) if warns else got == ""
