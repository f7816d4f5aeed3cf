"""Keywords, trial registration and funding lines are the paper's metadata, not its sentences; a caption's label
("Table 1.") is never a sentence of its own (issue 34)."""

from __future__ import annotations

import pytest

from evtui.ingest.sections import METADATA_KIND, metadata_line
from evtui.ingest.splitter import split_sentences
from evtui.models import SECTION_KINDS


@pytest.mark.parametrize("text", [
    "Keywords: randomised trial; older adults",
    "KEY WORDS depression, exercise",
    "Key words: metformin; colorectal adenoma",
    "Trial registration: ISRCTN12345678.",
    "TRIAL REGISTRATION ClinicalTrials.gov NCT01234567.",
    "FUNDING National Institutes of Health.",
])
def test_metadata_lines(text: str) -> None:
    assert metadata_line(text)


@pytest.mark.parametrize("text", [
    "Keywords were chosen by two reviewers.",
    "Conclusions: Metformin did not reduce the recurrence of colorectal adenomas.",
    "Registration rates differed between the two clinics.",
])
def test_sentences_of_text_are_not_metadata(text: str) -> None:
    assert metadata_line(text) == ""


def test_metadata_is_its_own_kind_outside_the_ranker_features() -> None:
    assert METADATA_KIND not in SECTION_KINDS  # the learned section features stay as trained


def test_a_caption_label_is_no_sentence_of_its_own() -> None:
    assert split_sentences("Table 1. Baseline characteristics of the participants by group.") == [
        "Table 1. Baseline characteristics of the participants by group."]
    assert split_sentences("Figure 2. Flow of participants. Most completed it.") == [
        "Figure 2. Flow of participants.", "Most completed it."]
    # a sentence that ends on a citation of a table still ends there
    assert split_sentences("Outcomes are given in Table 1. Adherence was high.") == [
        "Outcomes are given in Table 1.", "Adherence was high."]
