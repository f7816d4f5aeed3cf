"""The local judge's rationale names the right cue and each citation once, readably."""

from __future__ import annotations

import pytest

from evtui.verify.cues import explain, null_claim, second_hand


@pytest.mark.parametrize(("claim", "sentence", "cue"), [
    # "inhibitor(s)" is a drug class, not a decrease: the rationale read 'reports “inhibitor”, the query asserts
    # “inhibitors” → supports' on the demo's ACE-inhibitor papers
    ("ACE inhibitors cause angioedema", "ACE inhibitor-associated angioedema of the small intestine was reported.",
     "reports “associated”, the query asserts “cause” → supports"),
    ("ACE inhibitors cause angioedema", "ACE inhibitor therapy increased the incidence of angioedema.",
     "reports “increased”, the query asserts “cause” → supports"),
    ("Proton pump inhibitors increase fracture risk", "The promoter region was sequenced; fractures were higher.",
     "reports “higher”, the query asserts “increase” → supports"),
    ("Plasminogen activator inhibitor-1 reduces fibrinolysis", "PAI-1 lowered fibrinolytic activity.",
     "reports “lowered”, the query asserts “reduces” → supports"),
])
def test_agent_nouns_are_not_read_as_directions(claim: str, sentence: str, cue: str) -> None:
    assert cue in explain(claim, sentence, "supports", 0.6)


def test_the_verbs_still_count() -> None:
    assert "reports “inhibited”, the query asserts “reduces” → supports" in explain(
        "Curcumin reduces amyloid plaques", "Curcumin inhibited plaque formation.", "supports", 0.7)
    assert null_claim("ACE inhibitors do not cause cough") and not null_claim("ACE inhibitors cause cough")


@pytest.mark.parametrize(("text", "kind", "shown"), [
    # an author-year citation is already in parentheses: it read "check the cited study ((Krause and Ruxton 2002))"
    ("Group size varies with food supply (Krause and Ruxton 2002).", "introduction",
     "check the cited study (Krause and Ruxton 2002)"),
    ("Aspirin lowered the risk (Smith, 2010).", "abstract", "cites other work (Smith, 2010):"),
    # "et al." alone names no study to check: with its author it does
    ("As Marzluff et al. showed, crows roost in cities.", "discussion", "cites other work (Marzluff et al.):"),
    ("Crows share information (St Clair et al. 2015; Kulahci et al. 2016).", "discussion",
     "cites other work (Clair et al. 2015):"),
    ("Curcumin could reverse working memory deficits [38, 40].", "discussion", "cites other work ([38, 40]):"),
])
def test_citations_are_shown_once_and_named(text: str, kind: str, shown: str) -> None:
    got = second_hand(text, kind)
    assert shown in got and "((" not in got and "))" not in got
