"""PDF text around superscripts and line-end dashes.

The fixture tests/fixtures/pdf_units/units.pdf is pdflatex output of units.tex beside it (two columns,
Latin Modern): units with powers, a chi-square statistic, superscript citation marks and an en dash at a line end.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evtui.ingest.pdf import PDF_READER, parse_pdf
from evtui.models import ParsedPaper

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "pdf_units" / "units.pdf"


@pytest.fixture(scope="module")
def units() -> ParsedPaper:
    return parse_pdf(FIXTURE)


def _body(p: ParsedPaper) -> list[str]:
    return [s.text for s in p.sentences if not s.is_heading and s.section_kind != "title"]


def test_powers_of_units_are_kept_not_taken_for_citation_marks(units: ParsedPaper) -> None:
    body = _body(units)
    assert "Graphene is a sheet of sp2 hybridized carbon atoms arranged in a flat hexagonal lattice." in body
    assert "Each enclosure covered an area of 24.32 m2 on average across the whole zoo." in body
    # a negative power keeps its digit, not only its minus sign ("ml−" was all that was left)
    assert "Stock solutions were prepared at 1 mg ml−1 in methanol and kept cold until use." in body


def test_text_after_a_superscript_stays_in_place(units: ParsedPaper) -> None:
    body = _body(units)
    # pdfium breaks the line after "cm³" and before "²" in "χ²": the pieces once came out reordered ("The (χ groups")
    assert "The tubular polymeric gel (ca. 26.5 cm3) was washed with sterile physiological solution twice." in body
    assert ("Presence differed between seasons for resident birds (χ2 = 15.594, N = 38, P = 0.01) in the study."
            in body)
    assert "The groups were larger in open areas than in the forest during the winter months." in body


def test_citation_marks_are_still_removed(units: ParsedPaper) -> None:
    body = _body(units)
    assert "Obesity is a known risk factor for several kinds of cancer and for heart disease." in body
    assert units.info["dropped"]["citation_markers"] == 2


def test_an_en_dash_at_a_line_end_joins_without_a_space(units: ParsedPaper) -> None:
    assert "Research on fission–fusion dynamics has focused mainly on mammals until recent years." in _body(units)


def test_the_reader_version_moved_so_stored_pdfs_are_read_again(units: ParsedPaper) -> None:
    # evtui.library re-reads an unchanged PDF only when the reader version differs from the one stored with it
    assert PDF_READER != "2"
    assert units.info["reader"] == PDF_READER
