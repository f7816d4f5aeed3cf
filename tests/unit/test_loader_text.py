"""A researcher's own plain-text papers: header lines and front matter as metadata, the title on a line of its own,
UTF-16 / UTF-32 files (Windows Notepad's "Unicode"), and a huge text that is bounded without holding all of it."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from evtui.errors import IngestError
from evtui.ingest import detect_format, iter_papers, loaders
from evtui.models import ParsedPaper


def _one(path: Path) -> ParsedPaper:
    (p,) = list(iter_papers(path))
    assert isinstance(p, ParsedPaper), p
    return p


def test_title_and_author_header_lines_are_metadata_not_text(tmp_path: Path) -> None:
    f = tmp_path / "aspirin.txt"
    f.write_text("Title: Aspirin and colorectal cancer in a cohort\nAuthors: A. Smith; B. Jones\nYear: 2020\n"
                 "DOI: https://doi.org/10.1234/abc.99\n\nAbstract\n\nAspirin reduced colorectal cancer risk by 20%.\n",
                 encoding="utf-8")
    p = _one(f)
    assert p.title == "Aspirin and colorectal cancer in a cohort"
    assert (p.authors, p.year, p.doi) == (["A. Smith", "B. Jones"], 2020, "10.1234/abc.99")
    assert [(s.section_kind, s.is_heading, s.text) for s in p.sentences] == [
        ("title", False, "Aspirin and colorectal cancer in a cohort"), ("abstract", True, "Abstract"),
        ("abstract", False, "Aspirin reduced colorectal cancer risk by 20%.")]


def test_markdown_front_matter_is_metadata(tmp_path: Path) -> None:
    f = tmp_path / "vitd.md"
    f.write_text('---\ntitle: "Vitamin D and fractures: a trial"\nauthor:\n  - Jane Doe\n  - name: John Roe\n'
                 "date: 2021-03-04\ntags: [bone]\n---\n\n# Results\n\nVitamin D reduced fractures.\n",
                 encoding="utf-8")
    p = _one(f)
    assert (p.title, p.authors, p.year) == ("Vitamin D and fractures: a trial", ["Jane Doe", "John Roe"], 2021)
    assert [s.text for s in p.sentences] == ["Vitamin D and fractures: a trial", "Results",
                                             "Vitamin D reduced fractures."]


def test_a_title_line_does_not_run_into_the_author_line(tmp_path: Path) -> None:
    f = tmp_path / "copied.txt"
    f.write_text("Aspirin and colorectal cancer: a cohort study\nA. Smith, B. Jones\n\nAspirin helped.\n",
                 encoding="utf-8")
    p = _one(f)
    assert p.title == "Aspirin and colorectal cancer: a cohort study"
    assert p.sentences[1].text == "A. Smith, B. Jones" and p.sentences[1].section_kind != "title"


def test_hard_wrapped_prose_and_a_background_sentence_stay_text(tmp_path: Path) -> None:
    f = tmp_path / "wrapped.txt"
    f.write_text("Background: aspirin reduced colorectal cancer risk in a cohort of\nadults. The effect was small.\n",
                 encoding="utf-8")
    p = _one(f)
    assert p.title.startswith("Background: aspirin reduced colorectal cancer risk in a cohort of adults.")
    assert p.authors == [] and p.sentences[-1].text == "The effect was small."


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-32"])
def test_utf16_and_utf32_text_with_a_byte_order_mark_is_read(tmp_path: Path, codec: str) -> None:
    f = tmp_path / "notepad.txt"
    text = "Café and sleep\n\nCaffeine increased sleep latency. Zürich 咖啡 drinkers slept less.\n"
    data = text.encode(codec)
    if codec == "utf-16-be":
        data = b"\xfe\xff" + data
    f.write_bytes(data)
    assert detect_format(f) == "text"
    p = _one(f)
    assert p.title == "Café and sleep"
    assert [s.text for s in p.sentences[1:]] == ["Caffeine increased sleep latency.", "Zürich 咖啡 drinkers slept less."]


def test_gzipped_utf16_markdown_and_a_utf16_jats_file_are_read(tmp_path: Path) -> None:
    md = tmp_path / "note.md.gz"
    md.write_bytes(gzip.compress("# Gzipped title\n\nÇa marche.\n".encode("utf-16")))
    assert _one(md).title == "Gzipped title"
    jats = tmp_path / "paper.xml"
    jats.write_bytes(('<?xml version="1.0" encoding="UTF-16"?>\n<article><front><article-meta><title-group>'
                      "<article-title>Café trial</article-title></title-group></article-meta></front>"
                      "<body><p>Coffee reduced fatigue in nurses.</p></body></article>").encode("utf-16"))
    assert detect_format(jats) == "jats"
    p = _one(jats)
    assert p.title == "Café trial" and p.sentences[-1].text == "Coffee reduced fatigue in nurses."


def test_utf16_without_a_byte_order_mark_gets_its_own_reason(tmp_path: Path) -> None:
    f = tmp_path / "nobom.txt"
    f.write_bytes("A title\n\nSome text here.\n".encode("utf-16-le"))
    (err,) = list(iter_papers(f))
    assert isinstance(err, IngestError) and "UTF-16 text without a byte-order mark" in err.reason


def test_a_huge_text_keeps_its_first_sentences_and_says_how_many_there_were(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loaders, "MAX_PAPER_SENTENCES", 50)
    f = tmp_path / "book.txt"
    f.write_text("A long book\n\n" + "".join(f"Sentence number {i} is here. " for i in range(120)), encoding="utf-8")
    p = _one(f)
    assert len(p.sentences) == 50
    assert p.notes == [f"paper {p.id}: only its first 50 of 121 sentences kept"]
