"""A researcher's Zotero library as it really is: collection names in any script and case, PDFs dropped in without a
parent item, and files linked relative to Zotero's "Linked Attachment Base Directory"."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from zotero_fixture import ZoteroFixture

from evtui.cli import main

PDFS = Path(__file__).resolve().parents[1] / "fixtures" / "pdf"
RAO, UHL = PDFS / "PMC2768302.pdf", PDFS / "PMC6398430.pdf"


def _papers(capsys: pytest.CaptureFixture[str]) -> dict[str, dict]:
    capsys.readouterr()
    assert main(["papers", "--json"]) == 0
    return {p["id"]: p for p in json.loads(capsys.readouterr().out)}


def _ingest(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    capsys.readouterr()
    rc = main(["ingest", *argv, "--json"])
    return rc, json.loads(capsys.readouterr().out)


def _standalone(z: ZoteroFixture, item_id: int, key: str, pdf: Path | None, name: str) -> None:
    """A PDF attachment without a parent item, titled with its file name (as Zotero does)."""
    con = sqlite3.connect(z.db)
    con.execute("INSERT INTO items (itemID, itemTypeID, libraryID, key) VALUES (?, 3, 1, ?)", [item_id, key])
    con.execute("INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, path)"
                " VALUES (?, NULL, 0, 'application/pdf', ?)", [item_id, f"storage:{name}"])
    con.execute("INSERT OR IGNORE INTO itemDataValues (value) VALUES (?)", [name])
    con.execute("INSERT INTO itemData VALUES (?, 1, (SELECT valueID FROM itemDataValues WHERE value = ?))",
                [item_id, name])
    con.commit()
    con.close()
    if pdf is not None:
        (z.folder / "storage" / key).mkdir(parents=True)
        shutil.copy(pdf, z.folder / "storage" / key / name)


def test_a_collection_name_matches_whatever_its_case_or_composition(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    z = ZoteroFixture(tmp_path / "Zotero")
    z.add_item("ITHE0001", {"title": "A chapter paper", "abstractNote": "Crows count."}, [("Ann", "Poe")],
               ["THÈSE — Chapitre 1"])
    z.add_item("IOTH0002", {"title": "Another paper"}, [("Bo", "Lee")], ["Other"])
    decomposed = "the\u0300se — chapitre 1"  # "è" as e + combining grave, lower case
    rc, report = _ingest(capsys, "--zotero", str(z.folder), "--collection", decomposed)
    assert rc == 0 and report["papers_added"] == 1 and report["errors"] == []
    assert set(_papers(capsys)) == {"zotero:ITHE0001"}


def test_a_pdf_without_a_parent_item_is_a_paper_and_its_parent_later_replaces_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    z = ZoteroFixture(tmp_path / "Zotero")
    z.add_item("IRAO0001", {"title": "Genomic promoter analysis", "date": "2008"}, [("J.", "Rao")])
    _standalone(z, 100, "SUHL0100", UHL, "Uhl et al. - 2019 - Counting crows.pdf")
    _standalone(z, 102, "SGON0102", None, "gone.pdf")
    rc, report = _ingest(capsys, "--zotero", str(z.folder))
    assert rc == 0 and report["papers_added"] == 2
    (err,) = report["errors"]
    assert "PDF without a parent item SGON0102: PDF not found" in err["reason"]
    papers = _papers(capsys)
    bare = papers["zotero:SUHL0100"]
    assert bare["title"].startswith("Counting crows")  # the PDF's own title, not its file name
    assert bare["source"] == "Zotero · PDF" and bare["read"]["pages"] == 12

    # the user makes a parent item for the PDF (Zotero: "Create Parent Item"): its record replaces the bare PDF
    z.add_item("IUHL0003", {"title": "Counting crows (Zotero record)", "date": "2019"}, [("Florian", "Uhl")])
    con = sqlite3.connect(z.db)
    con.execute("UPDATE itemAttachments SET parentItemID = ? WHERE itemID = 100",
                [con.execute("SELECT itemID FROM items WHERE key = 'IUHL0003'").fetchone()[0]])
    con.commit()
    con.close()
    rc, report = _ingest(capsys, "--zotero", str(z.folder))
    assert rc == 0 and report["papers_added"] == 1
    papers = _papers(capsys)
    assert "zotero:SUHL0100" not in papers
    assert papers["zotero:IUHL0003"]["title"] == "Counting crows (Zotero record)"
    assert papers["zotero:IUHL0003"]["read"]["pages"] == 12


def _linked(z: ZoteroFixture, item_id: int, rel: str) -> None:
    con = sqlite3.connect(z.db)
    con.execute("INSERT INTO items (itemID, itemTypeID, libraryID, key) VALUES (?, 3, 1, 'ALNK0001')", [item_id + 1])
    con.execute("INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, path)"
                " VALUES (?, ?, 2, 'application/pdf', ?)", [item_id + 1, item_id, f"attachments:{rel}"])
    con.commit()
    con.close()


def test_a_file_linked_to_the_base_directory_is_read_from_the_profiles_setting(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "user"
    monkeypatch.setenv("HOME", str(home))
    z = ZoteroFixture(tmp_path / "Zotero")
    item = z.add_item("IRAO0001", {"title": "Genomic promoter analysis", "date": "2008"}, [("J.", "Rao")])
    _linked(z, item, "Rao/PMC2768302.pdf")
    rc, report = _ingest(capsys, "--zotero", str(z.folder))
    assert rc == 0 and report["papers_added"] == 1
    (note,) = report["notes"]  # no profile says where the base directory is: said, not silently "no full text"
    assert "attachments:Rao/PMC2768302.pdf" in note and "Linked Attachment Base Directory" in note

    base = tmp_path / "Dropbox" / "Papers"
    (base / "Rao").mkdir(parents=True)
    shutil.copy(RAO, base / "Rao" / "PMC2768302.pdf")
    profile = home / ".zotero" / "zotero" / "abcd1234.default"
    profile.mkdir(parents=True)
    (profile / "prefs.js").write_text(
        f'user_pref("extensions.zotero.baseAttachmentPath", "{base}");\n'
        f'user_pref("extensions.zotero.dataDir", "{z.folder}");\n', encoding="utf-8")
    rc, report = _ingest(capsys, "--zotero", str(z.folder))
    assert rc == 0 and report["papers_replaced"] == 1 and report["notes"] == []
    paper = _papers(capsys)["zotero:IRAO0001"]
    assert paper["source"] == "Zotero · PDF" and paper["source_path"] == str(base / "Rao" / "PMC2768302.pdf")


def test_a_zotero_folder_given_as_a_path_is_read_through_its_database(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`evtui ingest ~/Zotero`: the items with their records, not Zotero's backups, translators and snapshots as
    failed papers, nor each PDF a second time bare; a second run skips unchanged items without reading a PDF."""
    z = ZoteroFixture(tmp_path / "Zotero")
    z.add_item("IUHL0002", {"title": "Counting crows", "date": "2019"}, [("Florian", "Uhl")], ["Birds"], pdf=UHL)
    z.add_item("INOP0003", {"title": "No attachment here", "abstractNote": "Crows count."}, [("Ann", "Poe")])
    shutil.copy(z.db, z.folder / "zotero.sqlite.bak")
    (z.folder / "translators").mkdir()
    (z.folder / "translators" / "PubMed.js").write_text('{"translatorID": "x"}\n')
    (z.folder / "storage" / "SNAP0001").mkdir(parents=True)
    (z.folder / "storage" / "SNAP0001" / "page.html").write_text("<html><body>Snapshot</body></html>\n")
    rc, report = _ingest(capsys, str(z.folder))
    assert rc == 0 and report["errors"] == [] and report["notes"] == []
    assert (report["files"], report["papers_added"]) == (1, 2)
    assert set(_papers(capsys)) == {"zotero:IUHL0002", "zotero:INOP0003"}

    from evtui.ingest import pdf_worker

    def no_pdf_read(path: Path) -> object:
        raise AssertionError(f"{path} read again")

    monkeypatch.setattr(pdf_worker, "parse", no_pdf_read)
    rc, report = _ingest(capsys, str(z.folder))
    assert rc == 0 and (report["papers_unchanged"], report["papers_added"], report["errors"]) == (2, 0, [])


def test_a_database_copied_mid_write_says_so_not_that_it_is_no_zotero_database(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    z = ZoteroFixture(tmp_path / "Zotero")
    z.add_item("INOP0003", {"title": "No attachment here"}, [("Ann", "Poe")])
    size = z.db.stat().st_size
    with z.db.open("r+b") as fh:  # torn pages, as a copy taken while Zotero writes can have
        for off in range(4096, size, 4096):
            fh.seek(off + 8)
            fh.write(b"\xff" * 64)
    rc, report = _ingest(capsys, "--zotero", str(z.folder))
    (err,) = report["errors"]
    assert rc == 1 and "Zotero may have been writing it; try again, or close Zotero first" in err["reason"]
