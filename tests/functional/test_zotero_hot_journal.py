"""`evtui ingest ~/Zotero` while Zotero is writing its database (a sync, an import): the copy evtui reads comes with
a hot rollback journal."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from evtui.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from zotero_fixture import ZoteroFixture  # noqa: E402


def test_a_zotero_database_mid_transaction_is_read_and_left_untouched(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """It said "not a Zotero database (attempt to write a readonly database)" and read nothing: the copy was
    opened read-only, and SQLite must roll a hot journal back before it reads."""
    z = ZoteroFixture(tmp_path / "Zotero")
    z.add_item("K1111111", {"title": "Aspirin shortened fever in adults: a randomised trial", "date": "2020"},
               [("Jane", "Doe")])
    zotero = sqlite3.connect(z.db, isolation_level=None)  # Zotero, running, in the middle of a write
    zotero.execute("PRAGMA cache_size = 1")  # its changed pages spill into zotero.sqlite before the commit
    zotero.execute("BEGIN IMMEDIATE")
    for i in range(2000):
        zotero.execute("INSERT INTO itemDataValues (value) VALUES (?)", [f"{'x' * 200}{i}"])
    assert (tmp_path / "Zotero" / "zotero.sqlite-journal").is_file()
    before = z.db.read_bytes()
    try:
        assert main(["ingest", str(tmp_path / "Zotero"), "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        after = z.db.read_bytes()  # the user's database, as Zotero left it: never written by evtui
    finally:
        zotero.rollback()
        zotero.close()
    assert report["errors"] == [] and report["papers_added"] == 1
    assert after == before
    assert main(["papers", "--json"]) == 0
    assert [p["id"] for p in json.loads(capsys.readouterr().out)] == ["zotero:K1111111"]


def test_an_items_own_pdf_is_read_before_a_supplement_attached_first(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The first PDF attachment that exists was read: a supplement attached before the paper became its text."""
    pdfs = Path(__file__).resolve().parents[1] / "fixtures" / "pdf"
    z = ZoteroFixture(tmp_path / "Zotero")
    item = z.add_item("K1111111", {"title": "A thesis on hypoxia in fibroblasts", "date": "2020"}, [("Jane", "Doe")],
                      pdf=pdfs / "layout" / "thesis.pdf")
    con = sqlite3.connect(z.db)
    # the supplement attached first: the lower itemID, which Zotero's attachments are read in the order of
    con.execute("INSERT INTO items (itemID, itemTypeID, libraryID, key) VALUES (0, 3, 1, 'ASUPP001')")
    con.execute("INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, path)"
                " VALUES (0, ?, 0, 'application/pdf', 'storage:41586_2020_MOESM1_ESM.pdf')", [item])
    con.commit()
    con.close()
    (tmp_path / "Zotero" / "storage" / "ASUPP001").mkdir()
    (tmp_path / "Zotero" / "storage" / "ASUPP001" / "41586_2020_MOESM1_ESM.pdf").write_bytes(
        (pdfs / "layout" / "short-twocol.pdf").read_bytes())
    assert main(["ingest", str(tmp_path / "Zotero"), "--json"]) == 0
    capsys.readouterr()
    assert main(["show", "zotero:K1111111", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["paper"]["source_path"].endswith("thesis.pdf")
    assert any("hypoxia in fibroblasts" in s["text"] for s in shown["sentences"][1:])
