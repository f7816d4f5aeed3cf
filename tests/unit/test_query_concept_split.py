"""A long verbless run of content words is split where its bonds are weakest, not into fixed pairs that cut a
name ("National Cancer | Institute …") or a term ("general endoplasmic | reticulum stress marker")."""

from __future__ import annotations

import pytest

from evtui.query.parse import parse_query


def _labels(text: str) -> list[str]:
    return [a.label for a in parse_query(text).aspects]


@pytest.mark.parametrize(("text", "whole"), [
    # SciFact claims (train) whose runs the pairs cut
    ("Tuberculosis-induced granulomas express different immune system protein signatures than the surrounding "
     "tissue.", "immune system"),
    # EvidenceBench (dev) hypothesis
    ("Short-term exposure to high concentrations of toluene causes persistent central nervous system dysfunction.",
     "central nervous system"),
    # Check-COVID (train)
    ("Members of different bat species share living spaces in very large groups.", "bat species"),
    ("Hematopoietic Stem Cell purification reaches purity rates above 90%.", "Hematopoietic Stem Cell"),
    ("Cancers that initially benefit from epidermal growth factor receptor targeted therapies later become "
     "refractory through several mechanisms.", "epidermal growth factor receptor"),
    ("CD44v6 is not associated with constitutive and reprogrammed cancer stem cells driving cancer metastasis.",
     "reprogrammed cancer stem cells"),
    # Check-COVID (a classifier with its number and its noun) and a capitalised name
    ("Clover launched a Phase 1 trial last June.", "Phase 1 trial"),
    ("Survival was recorded in National Cancer Institute Surveillance Epidemiology End data for 1990 onwards.",
     "National Cancer Institute Surveillance Epidemiology End"),
])
def test_a_long_run_keeps_names_and_terms_whole(text: str, whole: str) -> None:
    labels = _labels(text)
    assert any(whole in label for label in labels), labels


def test_no_aspect_is_half_a_name() -> None:
    labels = _labels("Survival was recorded in National Cancer Institute Surveillance Epidemiology End data.")
    assert "National Cancer" not in labels and not any(lab.startswith("Institute") for lab in labels), labels


def test_a_long_run_of_plain_nouns_is_still_split() -> None:
    # no name and no term inside: still several concepts, not one phrase no sentence contains
    labels = _labels("water pipe valve pressure sensor readings drift")
    assert len(labels) >= 2 and all(len(lab.split()) <= 4 for lab in labels), labels


def test_short_runs_are_unchanged() -> None:
    assert _labels("Aspirin reduces colorectal cancer risk.") == ["Aspirin", "reduces", "colorectal cancer risk"]
