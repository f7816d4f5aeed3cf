"""A reference manager's item type survives ingest, so the BibTeX export writes a chapter as @incollection and a book
as @book (it wrote every entry as @article before, and a chapter's venue as `journal`)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from zotero_fixture import ZoteroFixture

from evtui.cli import main

BIB = """@incollection{chap2021,
  title = {Crows in cities},
  author = {Poe, Ann},
  booktitle = {Urban Birds},
  year = {2021},
  abstract = {Crows adapt to cities. Their numbers rose by ten percent.}
}
@article{art2020,
  title = {ACE inhibitors cause cough},
  author = {Smith, John},
  journal = {J. Hypertens.},
  year = {2020},
  abstract = {Cough occurred in 10 percent of patients on ACE inhibitors.}
}
"""


def _export_bib(tmp_path: Path, capsys: pytest.CaptureFixture[str], query: str) -> str:
    assert main(["select", query, "--k", "3", "--no-judge"]) == 0
    out = tmp_path / "refs.bib"
    assert main(["export", "--out", str(out)]) == 0
    capsys.readouterr()
    return out.read_text(encoding="utf-8")


def test_a_bib_chapter_is_exported_as_a_chapter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "lib.bib").write_text(BIB, encoding="utf-8")
    assert main(["ingest", str(tmp_path / "lib.bib")]) == 0
    bib = _export_bib(tmp_path, capsys, "crows cities cough")
    assert "@incollection{poe2021crows," in bib and "booktitle = {Urban Birds}" in bib
    assert "@article{smith2020ace," in bib and "journal = {J. Hypertens.}" in bib


def test_a_zotero_book_is_exported_as_a_book(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    z = ZoteroFixture(tmp_path / "Zotero")
    item = z.add_item("IBOO0001", {"title": "Counting crows in winter", "abstractNote": "Crows count to four."},
                      [("Ann", "Poe")])
    con = sqlite3.connect(z.db)
    con.execute("UPDATE items SET itemTypeID = 2 WHERE itemID = ?", [item])  # 2: "book" in Zotero's itemTypes
    con.commit()
    con.close()
    assert main(["ingest", "--zotero", str(z.folder)]) == 0
    bib = _export_bib(tmp_path, capsys, "crows count")
    assert bib.startswith("@book{")
