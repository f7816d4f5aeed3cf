"""A researcher's .bib with its PDFs: paths stored so they are found from any folder, one note per problem naming
the entry, two entries that link one PDF said, and a folder's .bib and PDFs not noted twice."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evtui.library import Library

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "pdf"
DEMO_JATS = Path(__file__).resolve().parents[2] / "data" / "demo" / "jats" / "PMC2768302.xml"


def _folder(tmp_path: Path, bib: str) -> Path:
    d = tmp_path / "refs"
    (d / "papers").mkdir(parents=True)
    shutil.copy(FIX / "layout" / "thesis.pdf", d / "papers" / "thesis.pdf")
    (d / "lib.bib").write_text(bib, encoding="utf-8")
    return d


def test_a_bib_ingested_by_a_relative_path_stores_absolute_paths(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """`evtui ingest refs/lib.bib` stored "refs/papers/thesis.pdf": from any other folder the path named nothing."""
    _folder(tmp_path, "@article{t1, title = {A thesis}, year = 2020, file = {:papers/thesis.pdf:PDF}}\n"
                      "@article{m1, title = {No file at all}, year = 2021}\n")
    monkeypatch.chdir(tmp_path)
    with Library() as lib:
        report = lib.ingest([Path("refs/lib.bib")])
        assert report.added == 2, report.notes
        paths = {p.id: p.source_path for p in lib.store.papers()}
    assert paths == {"bib:t1": str(tmp_path / "refs" / "papers" / "thesis.pdf"),
                     "bib:m1": str(tmp_path / "refs" / "lib.bib")}


def test_a_missing_file_beside_a_read_one_is_noted_with_its_entry(tmp_path: Path) -> None:
    d = _folder(tmp_path, "@article{t1, title = {A thesis}, year = 2020,\n"
                          "  file = {Full Text:papers/gone.pdf:PDF;Other copy:papers/thesis.pdf:PDF}}\n")
    with Library() as lib:
        report = lib.ingest([d / "lib.bib"])
    assert report.added == 1
    assert report.notes == [f"{d / 'lib.bib'}: entry t1: file not found: {d / 'papers' / 'gone.pdf'}"]


def test_two_entries_linking_one_pdf_are_said_not_silently_merged(tmp_path: Path) -> None:
    """The second entry vanished: counted as "already stored", no note, not in `evtui papers`."""
    d = _folder(tmp_path, "@article{t1, title = {A thesis}, year = 2020, file = {:papers/thesis.pdf:PDF}}\n"
                          "@article{t1dup, title = {A thesis (dup)}, year = 2020, file = {papers/thesis.pdf}}\n")
    with Library() as lib:
        report = lib.ingest([d / "lib.bib"])
        assert [p.id for p in lib.store.papers()] == ["bib:t1"]
    assert report.same_paper == 1
    assert any("bib:t1dup links the same PDF as bib:t1" in n for n in report.notes), report.notes


def test_a_folder_with_a_bib_and_its_pdfs_says_each_thing_once(tmp_path: Path) -> None:
    """The PDF is read bare and through the .bib beside it: the same note about it came twice."""
    d = tmp_path / "refs"
    d.mkdir()
    shutil.copy(FIX / "PMC2768302.pdf", d)
    shutil.copy(FIX / "refs.bib", d)
    with Library() as lib:
        lib.ingest([DEMO_JATS])
        report = lib.ingest([d])
    about_rao = [n for n in report.notes if n.startswith(str(d / "PMC2768302.pdf"))]
    assert len(about_rao) == 1, report.notes
    assert len(report.notes) == len(set(report.notes))


def test_an_exported_bib_with_its_files_folder_reads_each_pdf_once(tmp_path: Path) -> None:
    """Zotero's "Export Files" layout (the .bib, then files/N/x.pdf): each PDF was read again bare after its entry
    and said "1 paper id(s) came again in PMC2768302.pdf with other text", as if two papers clashed."""
    d = tmp_path / "Exported Items"
    (d / "files" / "12").mkdir(parents=True)
    shutil.copy(FIX / "PMC2768302.pdf", d / "files" / "12")
    (d / "Exported Items.bib").write_text(
        (FIX / "refs.bib").read_text(encoding="utf-8").replace(":PMC2768302.pdf:", ":files/12/PMC2768302.pdf:"),
        encoding="utf-8")
    with Library() as lib:
        report = lib.ingest([d])
        rao = lib.store.paper("doi:10.1155/2008/369830")
    assert not [n for n in report.notes if "came again" in n], report.notes
    assert rao is not None and rao.source_format == "bibtex" and rao.journal == "Advances in Bioinformatics"
    assert report.same_paper == 1 and report.errors == []
