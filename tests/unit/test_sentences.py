"""The sentence splitter on scientific prose."""

from __future__ import annotations

import pytest

from evtui.ingest import split_sentences


@pytest.mark.parametrize("text", [
    "As shown by Smith et al. in 2019, the effect was large.",
    "Results are shown in Fig. 2 and Tab. 3 for all groups.",
    "Several drugs, e.g. aspirin, i.e. an NSAID, were used.",
    "The difference was significant (p < 0.05) at 1.5 mg/kg.",
    "Infection with E. coli and S. aureus was common.",
    "J. Smith and A. B. Jones reviewed the data.",
    "Risk fell vs. placebo by approx. 20% (Smith et al., 2020).",
    "TNF-α levels rose by 3.2-fold in the cohort.",
    "Il a été démontré que l'effet est réel.",
])
def test_no_split_inside(text: str) -> None:
    assert split_sentences(text) == [text]


def test_splits_real_boundaries() -> None:
    text = ("Aspirin reduced risk (HR 0.74). The effect persisted [1, 2]. Was it causal? "
            "\"Yes,\" said the authors. 12 patients withdrew.\n\nA new paragraph starts here.")
    assert split_sentences(text) == [
        "Aspirin reduced risk (HR 0.74).", "The effect persisted [1, 2].", "Was it causal?",
        "\"Yes,\" said the authors.", "12 patients withdrew.", "A new paragraph starts here.",
    ]


def test_keeps_all_content() -> None:
    text = "First one. Second one!  Third one?\nStill third.  Fourth."
    assert " ".join(split_sentences(text)).split() == text.split()
    assert split_sentences("   ") == []
