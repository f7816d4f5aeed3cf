"""PDF ingest (layout, sections, metadata), bad PDFs, BibTeX/RIS/CSL-JSON, Zotero and `evtui show`.

Only committed fixtures are read (tests/fixtures/pdf, made by benchmarks/make_pdfs.py); hostile PDFs are built
here, byte by byte or with pypdfium2."""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
import sys
import zlib
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from zotero_fixture import ZoteroFixture

from evtui.cli import main
from evtui.config import load_config
from evtui.errors import IngestError
from evtui.ingest import detect_format, iter_papers, pdf_worker
from evtui.ingest.pdf import parse_pdf
from evtui.library import Library
from evtui.models import ParsedPaper

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from fuzz_loaders import _pdf  # noqa: E402 - the harness builds the bad PDFs; the tests reuse its builder

PDFS = Path(__file__).parents[1] / "fixtures" / "pdf"
RAO = PDFS / "PMC2768302.pdf"
UHL = PDFS / "PMC6398430.pdf"


@pytest.fixture(scope="module")
def rao() -> ParsedPaper:
    return parse_pdf(RAO)


def _texts(p: ParsedPaper, kind: str | None = None) -> list[str]:
    return [s.text for s in p.sentences if not s.is_heading and (kind is None or s.section_kind == kind)]


# -- layout and sections -----------------------------------------------------------------------------------------
def test_metadata_from_the_first_page_and_the_info_dictionary(rao: ParsedPaper) -> None:
    assert rao.title == "Genomic Promoter Analysis Predicts Functional Transcription Factor Binding"
    assert rao.doi == "10.1155/2008/369830" and rao.id == "doi:10.1155/2008/369830"
    assert rao.year == 2008
    assert rao.authors[0] == "J. Sunil Rao" and len(rao.authors) == 4
    assert rao.sentences[0].section_kind == "title"


def test_two_columns_read_in_order_with_hyphenation_joined(rao: ParsedPaper) -> None:
    texts = _texts(rao)
    # "bi-|ology", "transcrip-|tion" are split over lines of the left column in the PDF
    first = ("One of the important challenges in computational biology is the accurate prediction of functional "
             "transcription factor binding sites (TFBSs).")
    assert first in texts
    nxt = texts.index(first) + 1
    assert texts[nxt].startswith("A primary reason that accurate prediction of relevant TFBS remains difficult")
    assert not any("\ufffe" in t or "\ufb01" in t or "\ufb02" in t for t in texts)  # hyphen marks, ligatures


def test_headings_map_to_the_jats_section_kinds(rao: ParsedPaper) -> None:
    heads = {s.text: s.section_kind for s in rao.sentences if s.is_heading}
    assert heads["1 Background"] == "introduction"
    assert heads["2 Results"] == "results"
    assert heads["2.1 In Vivo Occupancy Predictions"] == "results"  # a subsection inherits its section's kind
    assert heads["3 Discussion"] == "discussion"
    assert heads["4 Conclusions"] == "conclusion"
    assert heads["5 Methods"] == "methods"
    assert any(t.startswith("The computational identification of functional transcription") for t in
               _texts(rao, "abstract"))


def test_references_headers_and_citation_markers_are_not_text(rao: ParsedPaper) -> None:
    texts = _texts(rao)
    # a reference-list entry, the running header, a page number, [n] markers
    assert not any("Control of pancreas and liver gene expression" in t for t in texts)
    assert not any("Advances in Bioinformatics" in t for t in texts)
    assert not any(t.strip().isdigit() for t in texts)
    assert not any("[1]" in t or "[2–9]" in t for t in texts)
    assert "conserved and statistically overrepresented TFBS." in " ".join(texts)
    dropped = rao.info["dropped"]
    assert isinstance(dropped, dict)
    assert dropped["reference_lines"] > 20 and dropped["header_footer_lines"] >= 7
    assert rao.info["pages"] == 8


def test_captions_are_their_own_kind(rao: ParsedPaper) -> None:
    caps = [s for s in rao.sentences if s.section_kind == "caption"]
    assert caps and caps[0].section_title.startswith(("Table", "Figure"))
    assert not any(s.text.startswith("Table 1:") for s in rao.sentences if s.section_kind != "caption")


def test_a_second_layout_finds_its_sections() -> None:
    p = parse_pdf(UHL)
    kinds = {s.section_kind for s in p.sentences}
    assert {"abstract", "introduction", "methods", "results", "discussion", "caption"} <= kinds
    assert p.doi == "10.1093/beheco/ary157" and p.year == 2019


# -- detection, gzip, the worker ---------------------------------------------------------------------------------
def test_pdf_detected_and_gzip_read(tmp_path: Path) -> None:
    assert detect_format(RAO) == "pdf"
    gz = tmp_path / "paper.pdf.gz"
    gz.write_bytes(gzip.compress(RAO.read_bytes()))
    assert detect_format(gz) == "pdf"
    got = list(iter_papers(gz))
    assert len(got) == 1 and isinstance(got[0], ParsedPaper) and got[0].doi == "10.1155/2008/369830"


# -- bad PDFs -----------------------------------------------------------------------------------------------------
_BASE = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
         b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>"]
_TEXT = b"BT /F1 12 Tf 72 700 Td (Hello) Tj ET"


def _stream(data: bytes, extra: bytes = b"") -> bytes:
    return b"<< /Length %d %s>>\nstream\n" % (len(data), extra) + data + b"\nendstream"


def _bad_pdfs(d: Path) -> dict[str, str]:
    """name -> a word its one-line reason must hold."""
    d.mkdir(parents=True, exist_ok=True)
    doc = pdfium.PdfDocument.new()
    for _ in range(3):
        doc.new_page(612, 792)
    doc.save(d / "scanned.pdf")
    book = pdfium.PdfDocument.new()
    for _ in range(2000):
        book.new_page(100, 100)
    book.save(d / "book.pdf")
    enc = b"<< /Filter /Standard /V 1 /R 2 /O <" + b"00" * 32 + b"> /U <" + b"11" * 32 + b"> /P -4 >>"
    (d / "encrypted.pdf").write_bytes(_pdf([*_BASE, _stream(_TEXT), enc], b"/Encrypt 5 0 R /ID [<0102> <0102>] "))
    (d / "truncated.pdf").write_bytes(RAO.read_bytes()[:2000])
    (d / "garbage.pdf").write_bytes(b"this is not a PDF at all\n" * 50)
    nest = b"[" * 100_000 + b"]" * 100_000
    (d / "nested.pdf").write_bytes(_pdf([*_BASE[:2], b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                                          b"/Contents 4 0 R /Junk " + nest + b" >>", _stream(_TEXT)]))
    return {"scanned.pdf": "OCR", "book.pdf": "2,000 pages", "encrypted.pdf": "password",
            "truncated.pdf": "PDF", "garbage.pdf": "not a PDF", "nested.pdf": "PDF"}


def test_bad_pdfs_get_one_line_reasons_and_the_batch_loads(tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    expect = _bad_pdfs(folder)
    shutil.copy(RAO, folder / "good.pdf")
    with Library(load_config()) as lib:
        report = lib.ingest([folder])
        assert report.added == 1
        reasons = {Path(e.path).name: e.reason for e in report.errors}
        for name, word in expect.items():
            assert word in reasons[name], (name, reasons.get(name))
            assert "\n" not in reasons[name] and "Traceback" not in reasons[name]
        assert lib.store.paper("doi:10.1155/2008/369830") is not None


def test_a_pdf_over_the_time_budget_is_given_up_and_the_next_one_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pdf_worker, "TIME_LIMIT_S", 0.001)
    got = pdf_worker.parse(RAO)
    assert isinstance(got, IngestError) and "took over" in got.reason
    monkeypatch.setattr(pdf_worker, "TIME_LIMIT_S", 60.0)
    again = pdf_worker.parse(RAO)
    assert isinstance(again, ParsedPaper)


def test_a_pdf_bomb_over_the_memory_limit_costs_one_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bomb = tmp_path / "bomb.pdf"
    c = zlib.compressobj(1)
    blank = b" " * 2**20
    data = b"".join(c.compress(blank) for _ in range(400)) + c.flush()  # 400 MB of content stream in 2 MB
    bomb.write_bytes(_pdf([*_BASE, _stream(data, b"/Filter /FlateDecode ")]))
    pdf_worker._shutdown()
    monkeypatch.setenv("EVTUI_PDF_MEMORY_MB", "200")  # read by the worker process when it starts
    try:
        got = pdf_worker.parse(bomb)
        assert isinstance(got, IngestError)
        assert "200 MB memory limit" in got.reason or "over 200 MB" in got.reason
        monkeypatch.delenv("EVTUI_PDF_MEMORY_MB")
        pdf_worker._shutdown()
        assert isinstance(pdf_worker.parse(RAO), ParsedPaper)
    finally:
        pdf_worker._shutdown()


# -- BibTeX / RIS / CSL-JSON ---------------------------------------------------------------------------------------
def test_bibtex_follows_file_fields_and_keeps_metadata_only_entries() -> None:
    got = [x for x in iter_papers(PDFS / "refs.bib")]
    papers = {p.id: p for p in got if isinstance(p, ParsedPaper)}
    rao = papers["doi:10.1155/2008/369830"]
    assert rao.source_format == "bibtex" and rao.source_path.endswith("PMC2768302.pdf")
    assert rao.journal == "Advances in Bioinformatics" and rao.info["pages"] == 8
    assert len(rao.sentences) > 100
    assert papers["doi:10.1093/beheco/ary157"].authors[0] == "Florian Uhl"
    nofile = papers["bib:nofile2020"]
    assert nofile.info == {"full_text": False, "item_type": "article"}  # the entry's type, for the BibTeX export
    assert nofile.authors == ["Anna Müller", "John Smith"]
    assert [s.text for s in nofile.sentences] == ["A paper the user has no PDF of",
                                                  "Aspirin reduced headache duration in adults.",
                                                  "The effect was small."]
    moved = papers["bib:missing2021"]
    assert moved.info["full_text"] is False and "not found" in str(moved.info["missing"])


def test_ris_and_csl_json(tmp_path: Path) -> None:
    shutil.copy(RAO, tmp_path / "rao.pdf")
    (tmp_path / "refs.ris").write_text(
        "TY  - JOUR\nTI  - Genomic promoter analysis\nAU  - Rao, J. Sunil\nPY  - 2008\nDO  - 10.1155/2008/369830\n"
        "L1  - rao.pdf\nER  - \n\nTY  - JOUR\nTI  - Only metadata here\nAU  - Roe, Richard\nPY  - 2011\nER  - \n",
        encoding="utf-8")
    (tmp_path / "refs.json").write_text(json.dumps([
        {"id": "x1", "type": "article-journal", "title": "A CSL item", "author": [{"family": "Poe", "given": "Ann"}],
         "issued": {"date-parts": [[2015, 3]]}, "DOI": "10.1000/xyz123", "container-title": "J. Tests"}]),
        encoding="utf-8")
    assert detect_format(tmp_path / "refs.ris") == "ris"
    assert detect_format(tmp_path / "refs.json") == "csl-json"
    ris = [p for p in iter_papers(tmp_path / "refs.ris") if isinstance(p, ParsedPaper)]
    assert ris[0].info["pages"] == 8 and ris[0].title == "Genomic promoter analysis"
    assert ris[1].info == {"full_text": False, "item_type": "jour"} and ris[1].year == 2011
    csl = [p for p in iter_papers(tmp_path / "refs.json") if isinstance(p, ParsedPaper)]
    assert csl[0].id == "doi:10.1000/xyz123" and csl[0].authors == ["Ann Poe"] and csl[0].year == 2015


# -- Zotero -------------------------------------------------------------------------------------------------------
def _zotero(tmp_path: Path) -> ZoteroFixture:
    z = ZoteroFixture(tmp_path / "Zotero")
    z.add_item("IRAO0001", {"title": "Genomic Promoter Analysis Predicts Functional Transcription Factor Binding",
                            "date": "2008-00-00 2008", "DOI": "10.1155/2008/369830",
                            "publicationTitle": "Advances in Bioinformatics", "extra": "PMID: 19578431"},
               [("J. Sunil", "Rao"), ("Carlos S.", "Moreno")], ["Genomics"], pdf=RAO)
    z.add_item("IUHL0002", {"title": "Counting crows", "date": "2019-01-12"}, [("Florian", "Uhl")], ["Birds"],
               pdf=UHL)
    z.add_item("INOP0003", {"title": "No attachment here", "abstractNote": "Crows count. Zoos help."},
               [("Ann", "Poe")], ["Birds"])
    return z


def test_zotero_reads_a_copy_collections_and_only_new_or_changed(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    z = _zotero(tmp_path)
    before = z.db.read_bytes()
    assert main(["ingest", "--zotero", str(z.folder), "--collection", "Birds", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["papers_added"] == 2 and not first["errors"]
    assert z.db.read_bytes() == before  # never written
    assert main(["papers", "--json"]) == 0
    papers = {p["id"]: p for p in json.loads(capsys.readouterr().out)}
    assert set(papers) == {"zotero:IUHL0002", "zotero:INOP0003"}
    assert papers["zotero:INOP0003"]["source"] == "Zotero · no full text"
    assert papers["zotero:IUHL0002"]["read"]["collections"] == ["Birds"]
    assert papers["zotero:IUHL0002"]["read"]["pages"] == 12

    assert main(["ingest", "--zotero", str(z.folder), "--json"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["papers_added"] == 1 and second["papers_unchanged"] == 2
    z.touch(1, "2025-02-02 10:00:00")
    assert main(["ingest", "--zotero", str(z.folder), "--json"]) == 0
    third = json.loads(capsys.readouterr().out)
    assert third["papers_replaced"] == 1 and third["papers_unchanged"] == 2
    assert main(["show", "zotero:IRAO0001", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["paper"]["doi"] == "10.1155/2008/369830" and doc["paper"]["authors"] == ["J. Sunil Rao",
                                                                                        "Carlos S. Moreno"]


def test_zotero_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    z = _zotero(tmp_path)
    assert main(["ingest", "--zotero", str(z.folder), "--collection", "Nope", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert "no collection named 'Nope'" in out["errors"][0]["reason"] and "Birds" in out["errors"][0]["reason"]
    assert main(["ingest", "--zotero", str(tmp_path / "nowhere"), "--json"]) == 1
    assert "no zotero.sqlite" in json.loads(capsys.readouterr().out)["errors"][0]["reason"]
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "zotero.sqlite").write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    assert main(["ingest", "--zotero", str(broken), "--json"]) == 1
    assert "Zotero database" in json.loads(capsys.readouterr().out)["errors"][0]["reason"]
    assert sqlite3.sqlite_version  # the stdlib module, no other driver


# -- evtui show ----------------------------------------------------------------------------------------------------
def test_show_json_contract_for_pdf_and_other_formats(papers_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", str(RAO), str(papers_dir), "--json"]) == 0
    capsys.readouterr()
    assert main(["show", "doi:10.1155/2008/369830", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"paper", "sentences"}
    assert {"id", "title", "authors", "year", "doi", "source_format", "source_path"} <= set(doc["paper"])
    assert doc["paper"]["source_format"] == "pdf"
    sents = doc["sentences"]
    assert all(set(s) == {"sentence_id", "position", "section", "section_kind", "text"} for s in sents)
    assert [s["position"] for s in sents] == list(range(len(sents)))
    assert sents[0]["section_kind"] == "title"
    assert any(s["section_kind"] == "heading" and s["text"] == "2 Results" for s in sents)
    assert not any(s["section_kind"] == "heading" and s["text"] == "References" for s in sents)
    assert main(["papers", "--json"]) == 0
    md = next(p for p in json.loads(capsys.readouterr().out) if p["source_format"] == "text")
    assert main(["show", md["id"], "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["paper"]["source_format"] == "text"
    assert main(["show", "no-such-paper", "--json"]) == 2
    assert "no paper" in json.loads(capsys.readouterr().out)["error"]
    assert main(["show", "doi:10.1155/2008/369830"]) == 0
    shown = capsys.readouterr().out
    assert "8/8 pages" in shown
    header = next(line for line in shown.splitlines() if line.startswith("doi:10.1155/2008/369830 ·"))
    assert header.count("10.1155/2008/369830") == 1  # a DOI-keyed paper's header names its DOI once


def test_papers_lists_source_and_what_was_dropped(capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["ingest", str(PDFS / "refs.bib"), "--json"]) == 0
    capsys.readouterr()
    assert main(["papers", "--json"]) == 0
    rows = {p["id"]: p for p in json.loads(capsys.readouterr().out)}
    assert rows["bib:nofile2020"]["source"] == "BibTeX · no full text"
    assert rows["doi:10.1155/2008/369830"]["source"] == "BibTeX · PDF"
    assert rows["doi:10.1155/2008/369830"]["read"]["dropped"]["reference_lines"] > 0
    assert main(["papers"]) == 0  # piped: tab-separated, with how each paper was read
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split("\t")[-2:] == ["source", "read"]
    rao = next(ln.split("\t") for ln in lines if ln.startswith("doi:10.1155/2008/369830"))
    assert rao[-2] == "BibTeX · PDF" and rao[-1].startswith("8 pp · ") and "ref" in rao[-1]


def test_library_screen_shows_pdf_reading_and_no_full_text() -> None:
    from tui_pilot import library_screen, run, started

    with Library(load_config()) as lib:
        lib.ingest([PDFS / "refs.bib"])

    async def flow() -> None:
        async with started((160, 40)) as (app, pilot):
            screen = await library_screen(app, pilot)
            table = screen.query_one("#papers")
            rows = [" | ".join(str(c) for c in table.get_row_at(i)) for i in range(table.row_count)]
            text = "\n".join(rows)
            assert "no full text" in text and "pp · " in text and "ref" in text, text

    run(flow)


def test_library_screen_filters_by_zotero_collection(tmp_path: Path) -> None:
    from tui_pilot import library_screen, run, started

    z = _zotero(tmp_path)
    assert main(["ingest", "--zotero", str(z.folder)]) == 0

    async def flow() -> None:
        async with started((160, 40)) as (app, pilot):
            screen = await library_screen(app, pilot)
            table = screen.query_one("#papers")
            everything = table.row_count
            assert everything == 3 and screen.collections
            await pilot.press("z")
            await pilot.pause()
            ids = {str(table.get_row_at(i)[0]) for i in range(table.row_count)}
            assert screen.collection == "Birds" and ids == {"zotero:IUHL0002", "zotero:INOP0003"}
            assert "collection: Birds" in str(screen.query_one("#library-stats").render())
            for _ in screen.collections:
                await pilot.press("z")
            await pilot.pause()
            assert screen.collection is None and table.row_count == everything

    run(flow)


def test_an_unlabelled_abstract_is_kept_and_affiliations_and_page_numbers_are_not() -> None:
    p = parse_pdf(PDFS / "unlabelled-abstract.pdf")
    assert p.title == "Aspirin lowers fever in adults: a trial" and p.authors == ["Ann Poe", "Bo Lee"]
    assert _texts(p, "abstract")[0] == "We tested whether aspirin lowers fever in adults."
    assert not any("University of Examples" in s.text for s in p.sentences)
    assert [s.text for s in p.sentences if s.is_heading] == ["1 Introduction", "2 Results"]
    assert p.sentences[-1].text == "Temperature fell by 1.2 degrees."
