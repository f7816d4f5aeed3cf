"""Reference-manager exports as a researcher's own tools write them: LaTeX letters and Greek in .bib fields, @string
abbreviations, an entry with a missing brace, a key used twice, every `file` field form, wrapped RIS lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from evtui.errors import IngestError
from evtui.ingest import iter_papers
from evtui.ingest.refs import _bib_files, _delatex
from evtui.models import ParsedPaper

PDFS = Path(__file__).resolve().parents[1] / "fixtures" / "pdf"


@pytest.mark.parametrize("latex,text", [
    (r"{\O}stergaard", "Østergaard"), (r"Gro{\ss}e", "Große"), (r"\AA{}ngstr\"{o}m", "Ångström"),
    (r"\'{\i}ndice", "índice"), (r"IL-1$\beta$ and TNF-$\alpha$", "IL-1β and TNF-α"),
    (r"costs \$5 -- 10 --- or", "costs $5 – 10 — or"), (r"{\v{S}}koda and Fran{\c{c}}ois", "Škoda and François"),
])
def test_latex_letters_greek_and_dashes(latex: str, text: str) -> None:
    assert _delatex(latex) == text


def _bib(tmp_path: Path, body: str) -> list[ParsedPaper | IngestError]:
    f = tmp_path / "refs.bib"
    f.write_text(body, encoding="utf-8")
    return list(iter_papers(f))


def test_string_abbreviations_are_expanded(tmp_path: Path) -> None:
    (p,) = _bib(tmp_path, '@string{beh = "Behavioral Ecology"}\n'
                          "@article{a, title = {Crows}, journal = beh, month = mar, year = 2019}\n")
    assert isinstance(p, ParsedPaper) and p.journal == "Behavioral Ecology"


def test_an_entry_with_a_missing_brace_is_one_error_and_the_others_load(tmp_path: Path) -> None:
    out = _bib(tmp_path, "@article{broken,\n  title = {Unclosed title,\n  author = {Someone},\n  year = 2020\n}\n\n"
                         "@article{good,\n  title = {A good entry},\n  year = {2021}\n}\n")
    errors = [e for e in out if isinstance(e, IngestError)]
    papers = [p for p in out if isinstance(p, ParsedPaper)]
    assert [p.title for p in papers] == ["A good entry"]
    assert len(errors) == 1 and "entry broken: line 2: the value of title has no closing brace" in errors[0].reason


def test_a_key_used_twice_is_said_not_silently_dropped(tmp_path: Path) -> None:
    out = _bib(tmp_path, "@article{k, title = {First}, year = 2020}\n@article{k, title = {Second}, year = 2021}\n")
    assert [p.title for p in out if isinstance(p, ParsedPaper)] == ["First"]
    assert any(isinstance(e, IngestError) and "entry k: a second entry with this key" in e.reason for e in out)


@pytest.mark.parametrize("field", [
    "Full Text PDF:PMC2768302.pdf:application/pdf",  # JabRef / Zotero's own export
    "PMC2768302.pdf:application/pdf",  # path:mime
    "PMC2768302.pdf",  # Better BibTeX
    "Snapshot:page.html:text/html;Full Text:PMC2768302.pdf:application/pdf",
])
def test_every_file_field_form_names_the_pdf(field: str) -> None:
    assert _bib_files(field, PDFS) == [PDFS / "PMC2768302.pdf"]


def test_a_pdf_name_with_a_colon_is_found(tmp_path: Path) -> None:
    pdf = tmp_path / "Rao 2008 - Promoters: a study.pdf"
    pdf.write_bytes((PDFS / "PMC2768302.pdf").read_bytes())
    assert _bib_files(f"Full Text PDF:{pdf}:application/pdf", tmp_path) == [pdf]


def test_wrapped_ris_lines_are_kept(tmp_path: Path) -> None:
    f = tmp_path / "lib.ris"
    f.write_text("TY  - JOUR\nTI  - A title that EndNote\n  wrapped onto a second line\nAU  - Doe, J.\nPY  - 2021\n"
                 "AB  - Vitamin D reduced fractures.\nIt was a trial.\nER  - \n", encoding="utf-8")
    (p,) = list(iter_papers(f))
    assert isinstance(p, ParsedPaper)
    assert p.title == "A title that EndNote wrapped onto a second line"
    assert [s.text for s in p.sentences[1:]] == ["Vitamin D reduced fractures.", "It was a trial."]


def test_a_csl_json_date_given_as_raw_text_keeps_its_year(tmp_path: Path) -> None:
    f = tmp_path / "lib.json"
    f.write_text('[{"id": "x", "type": "article-journal", "title": "A raw date", "DOI": "10.1/x",'
                 ' "issued": {"raw": "2020-03"}}]', encoding="utf-8")
    (p,) = list(iter_papers(f))
    assert isinstance(p, ParsedPaper) and p.year == 2020
