"""A researcher's own odd PDFs (tests/fixtures/pdf/layout/): a short two-column paper, a paper without a title
block, a thesis with chapters. Each test names what the PDF reader got wrong before."""

from __future__ import annotations

from pathlib import Path

import pytest

from evtui.ingest.pdf import parse_pdf
from evtui.models import ParsedPaper

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "pdf" / "layout"


@pytest.fixture(scope="module")
def short() -> ParsedPaper:
    return parse_pdf(FIX / "short-twocol.pdf")


def test_account_name_in_metadata_is_not_the_author_list(short: ParsedPaper) -> None:
    # the info dictionary says Author "jsmith": the byline on the page is the author list
    assert short.authors == ["John Smith", "Maria Garcia", "Wei Zhang"]


def test_title_from_page_when_metadata_title_is_a_word_file_name(short: ParsedPaper) -> None:
    assert short.title == "Efficient fibroblast differentiation under hypoxic conditions in murine models"
    assert short.year == 2019


def test_centred_date_line_stays_out_of_the_right_column(short: ParsedPaper) -> None:
    # the title block's "2019", centred over the gutter, was read as the right column's first line and landed
    # inside the left column's last sentence ("for 2019 seventy-two hours")
    texts = [s.text for s in short.sentences]
    assert any("hypoxia workstation for seventy-two hours before" in t for t in texts), texts


def test_running_head_of_a_two_page_paper_is_dropped(short: ParsedPaper) -> None:
    # only page 2 carries the running head (page 1 is the title page): it cannot be seen to recur
    texts = [s.text for s in short.sentences]
    assert not [t for t in texts if "J Exp Biol" in t or "Smith et al" in t], texts
    assert any("The identification of tissue-specific differences suggests" in t for t in texts)


def test_first_numbered_heading_is_not_taken_for_the_title() -> None:
    paper = parse_pdf(FIX / "no-title.pdf")
    assert paper.title == "no-title"  # no title on the page: the file name, not "1 Introduction"
    assert not [s for s in paper.sentences if s.section_kind == "title"]
    intro = [s for s in paper.sentences if s.text.startswith("This document has a landscape page")]
    assert intro and intro[0].section_kind == "introduction" and intro[0].section_title == "1 Introduction"
    # the rotated (landscape) page is read, under its own heading
    assert any(s.section_kind == "results" and "reduction in mortality" in s.text for s in paper.sentences)


def test_thesis_chapters_are_sections() -> None:
    paper = parse_pdf(FIX / "thesis.pdf")
    heads = [(s.text, s.section_kind) for s in paper.sentences if s.is_heading]
    assert heads == [("Chapter 1 Introduction", "introduction"), ("Chapter 2 Materials and methods", "methods"),
                     ("Chapter 3 Results", "results")]
    first = next(s for s in paper.sentences if s.text.startswith("The introduction chapter opens"))
    assert first.section_kind == "introduction"
    assert not any("Chapter 1" in s.text and not s.is_heading for s in paper.sentences)
