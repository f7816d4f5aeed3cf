"""The `file` fields reference managers really write: Mendeley's LaTeX-escaped and slash-less paths, Windows paths
from another computer, JabRef's file directory, several files (a supplement listed first) in one field."""

from __future__ import annotations

from pathlib import Path

from evtui.ingest.refs import _bib_files, _jabref_dirs


def _pdf(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"%PDF-1.4\n%%EOF\n")
    return path


def test_mendeley_escaped_underscore_is_unescaped(tmp_path: Path) -> None:
    pdf = _pdf(tmp_path / "papers" / "smith_2020_aspirin.pdf")
    assert _bib_files(f":{pdf.parent}/smith\\_2020\\_aspirin.pdf:pdf", tmp_path) == [pdf]


def test_mendeley_linux_path_without_its_leading_slash_is_found(tmp_path: Path) -> None:
    pdf = _pdf(tmp_path / "Mendeley Desktop" / "Downloaded" / "Smith - 2020 - Aspirin.pdf")
    field = f":{str(pdf).lstrip('/')}:pdf"  # Mendeley writes {:home/ann/.local/.../x.pdf:pdf}
    assert _bib_files(field, tmp_path / "elsewhere") == [pdf]


def test_a_windows_path_is_unescaped_and_found_by_name_beside_the_bib(tmp_path: Path) -> None:
    pdf = _pdf(tmp_path / "Smith - 2020 - Aspirin.pdf")
    mendeley = ":C$\\backslash$:/Users/ann/Documents/Mendeley Desktop/Smith - 2020 - Aspirin.pdf:pdf"
    zotero = "Full Text PDF:C\\:\\\\Users\\\\ann\\\\Zotero\\\\storage\\\\AB12CD34\\\\Smith - 2020 - Aspirin.pdf:application/pdf"
    assert _bib_files(mendeley, tmp_path) == [pdf]
    assert _bib_files(zotero, tmp_path) == [pdf]
    pdf.unlink()
    # not there: the path as the manager wrote it, unescaped, for the note
    assert [str(p) for p in _bib_files(mendeley, tmp_path)] == [
        "C:/Users/ann/Documents/Mendeley Desktop/Smith - 2020 - Aspirin.pdf"]


def test_the_papers_pdf_is_read_before_a_supplement_listed_first(tmp_path: Path) -> None:
    supp = _pdf(tmp_path / "papers" / "smith_supp.pdf")
    main = _pdf(tmp_path / "papers" / "smith.pdf")
    field = "Supplementary Material:papers/smith_supp.pdf:PDF;Full Text:papers/smith.pdf:PDF"
    assert _bib_files(field, tmp_path) == [main, supp]
    esm = _pdf(tmp_path / "41586_2020_2012_MOESM1_ESM.pdf")
    assert _bib_files(f"{esm.name};{main.relative_to(tmp_path)}", tmp_path) == [main, esm]


def test_jabref_file_directory_is_where_relative_paths_are_found(tmp_path: Path) -> None:
    pdf = _pdf(tmp_path / "library-files" / "rao2008.pdf")
    text = "@article{rao2008, file = {:rao2008.pdf:PDF}}\n\n@Comment{jabref-meta: fileDirectory:library-files;}\n"
    dirs = _jabref_dirs(text, tmp_path)
    assert dirs == (tmp_path / "library-files",)
    assert _bib_files(":rao2008.pdf:PDF", tmp_path / "nowhere", dirs) == [pdf]


def test_an_endnote_internal_pdf_link_is_found_in_the_library_data_folder(tmp_path: Path) -> None:
    """EndNote's RIS writes `L1  - internal-pdf://0123456789/Roe-2019.pdf`: it was read as a relative path,
    "file not found: .../internal-pdf:/0123456789/Roe-2019.pdf", though the PDF sat in the library's .Data folder."""
    from evtui.ingest.refs import _endnote_pdf

    pdf = _pdf(tmp_path / "My EndNote Library.Data" / "PDF" / "0123456789" / "Roe-2019.pdf")
    assert _endnote_pdf("0123456789/Roe-2019.pdf", tmp_path) == pdf
    assert _endnote_pdf("0123456789/Roe-2019.pdf", tmp_path / "exports") == pdf  # the export one folder down
    assert str(_endnote_pdf("99/Gone.pdf", tmp_path)).startswith("internal-pdf:")
