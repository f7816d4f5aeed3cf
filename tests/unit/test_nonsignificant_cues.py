"""Which sentences report a non-significant result (a significant finding beside a non-significant one is not one,
and "p > 0.05" is non-significant whatever its value), which claims assert no effect, and what a rationale says a
sentence is when it may be no finding of the paper's own."""

from __future__ import annotations

import pytest

from evtui.verify.cues import non_significant, null_claim, second_hand


@pytest.mark.parametrize(("text", "nonsig"), [
    ("There was no significant difference in cancer incidence.", True),
    ("The difference was not statistically significant (p = 0.12).", True),
    ("Intention-to-treat analysis showed a hazard ratio of 0·63 (95% CI 0·35-1·13, p=0·12).", True),
    ("No significant differences were found (P > 0.05).", True),
    ("Incidence did not differ (p > 0.05).", True),
    ("The effect was insignificant.", True),
    # a significant finding with a non-significant one beside it: the finding is not capped at "substantial"
    ("Aspirin significantly reduced cancer incidence, with no significant increase in adverse events.", False),
    ("Aspirin reduced cancer incidence (HR 0.6, p=0.01), with no significant difference in bleeding.", False),
    ("Mortality was significantly lower but hospitalisations were not significantly different.", False),
    ("Aspirin reduced cancer incidence (HR 0.41, p=0.02).", False),
    ("Aspirin reduced cancer incidence.", False),
])
def test_non_significant(text: str, nonsig: bool) -> None:
    assert non_significant(text) is nonsig


def test_null_claims() -> None:
    assert null_claim("Aspirin does not reduce colorectal cancer.")
    assert null_claim("Statin use is not associated with dementia.")
    assert not null_claim("Aspirin reduces colorectal cancer.")


@pytest.mark.parametrize(("text", "kind", "says", "never"), [
    # an abstract's aim is no finding, and cites nothing: before, "check the cited study" (introduction kind) or
    # nothing at all (abstract kind)
    ("OBJECTIVE To determine whether statin use is associated with sepsis.", "introduction",
     "the abstract's objective: what the study set out to test", "cited study"),
    ("PURPOSE To compare two doses of aspirin.", "abstract", "the abstract's purpose", "cited study"),
    ("Aspirin is widely used to prevent vascular events.", "introduction", "may recount earlier work",
     "cited study"),
    ("Curcumin failed to reduce amyloid in the clinical trial [18].", "introduction",
     "check the cited study ([18])", "aim"),
])
def test_second_hand_names_what_the_sentence_is(text: str, kind: str, says: str, never: str) -> None:
    got = second_hand(text, kind)
    assert says in got and never not in got
