"""A weaker reading never replaces a stronger one: ingest again a .bib or a Zotero library whose linked PDF went
missing or broke, or a JATS file of the same paper with front matter only, and the full text stays, with the
sentences selected in it, and one line says why."""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from evtui.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from zotero_fixture import ZoteroFixture  # noqa: E402

PDF = Path(__file__).resolve().parents[1] / "fixtures" / "pdf" / "PMC6398430.pdf"  # doi:10.1093/beheco/ary157
DOI = "10.1093/beheco/ary157"
QUERY = "crows group size urban population"


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> Any:
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _papers(capsys: pytest.CaptureFixture[str]) -> dict[str, int]:
    return {p["id"]: p["sentences"] for p in _json(capsys, ["papers"])}


def _selected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    out = tmp_path / "sel.jsonl"
    capsys.readouterr()
    assert main(["export", "--out", str(out)]) == 0
    return [json.loads(line)["sentence_id"] for line in out.read_text(encoding="utf-8").splitlines()]


def _select(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["select", QUERY, "--k", "3", "--no-judge"]) == 0
    capsys.readouterr()


def _bib(tmp_path: Path) -> Path:
    folder = tmp_path / "refs"
    folder.mkdir()
    shutil.copy(PDF, folder / "crows.pdf")
    bib = folder / "refs.bib"
    bib.write_text("@article{uhl2019,\n  title = {Counting crows},\n  author = {Uhl, Florian},\n  year = {2019},\n"
                   f"  doi = {{{DOI}}},\n  file = {{:crows.pdf:PDF}}\n}}\n", encoding="utf-8")
    return bib


@pytest.mark.parametrize("damage", ["deleted", "broken"])
def test_bib_entry_whose_pdf_went_keeps_its_full_text(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      damage: str) -> None:
    bib = _bib(tmp_path)
    assert main(["ingest", str(bib)]) == 0
    full = _papers(capsys)
    assert full[f"doi:{DOI}"] > 100
    _select(capsys)
    before = _selected(tmp_path, capsys)
    assert before
    pdf = bib.parent / "crows.pdf"
    if damage == "deleted":
        pdf.unlink()
    else:
        pdf.write_bytes(b"%PDF-1.4\n" + b"\x00garbage" * 100)
    report = _json(capsys, ["ingest", str(bib)])
    assert report["papers_replaced"] == 0 and report["papers_added"] == 0
    kept = [n for n in report["notes"] if "kept" in n]
    assert len(kept) == 1 and f"doi:{DOI}" in kept[0], report["notes"]
    assert not any("metadata only" in n for n in report["notes"])
    assert _papers(capsys) == full
    assert _selected(tmp_path, capsys) == before


def test_zotero_item_whose_pdf_went_keeps_its_full_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    z = ZoteroFixture(tmp_path / "Zotero")
    z.add_item("K1111111", {"title": "Counting crows", "date": "2019"}, [("Florian", "Uhl")], pdf=PDF)
    assert main(["ingest", str(tmp_path / "Zotero")]) == 0
    full = _papers(capsys)
    assert full["zotero:K1111111"] > 100
    _select(capsys)
    before = _selected(tmp_path, capsys)
    for f in (tmp_path / "Zotero" / "storage").rglob("*.pdf"):  # "download files on demand": the files go
        f.unlink()
    report = _json(capsys, ["ingest", str(tmp_path / "Zotero")])
    assert report["papers_replaced"] == 0
    assert sum("kept" in n for n in report["notes"]) == 1, report["notes"]
    assert _papers(capsys) == full and _selected(tmp_path, capsys) == before


def _stub_jats(path: Path, *, pmcid: bool) -> Path:
    ids = f'<article-id pub-id-type="doi">{DOI}</article-id>'
    if pmcid:
        ids += '<article-id pub-id-type="pmc">6398430</article-id>'
    path.write_text(f"""<?xml version="1.0"?>
<article><front><article-meta>{ids}
<title-group><article-title>Counting crows: population structure and group size variation</article-title>
</title-group><abstract><p>Crows live in cities.</p></abstract></article-meta></front></article>
""", encoding="utf-8")
    return path


@pytest.mark.parametrize("pmcid", [True, False], ids=["pmcid-id", "doi-id"])
def test_stub_jats_does_not_replace_a_pdf_reading(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  pmcid: bool) -> None:
    assert main(["ingest", str(PDF)]) == 0
    full = _papers(capsys)
    _select(capsys)
    before = _selected(tmp_path, capsys)
    report = _json(capsys, ["ingest", str(_stub_jats(tmp_path / "stub.xml", pmcid=pmcid))])
    assert report["papers_added"] == 0 and report["papers_replaced"] == 0
    assert sum("front matter only" in n for n in report["notes"]) == 1, report["notes"]
    assert _papers(capsys) == full and _selected(tmp_path, capsys) == before


def test_a_full_jats_still_replaces_the_pdf_reading(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", str(PDF)]) == 0
    body = "".join(f"<p>Crows in group {i} were counted on {i + 2} days in the city park.</p>" for i in range(200))
    jats = _stub_jats(tmp_path / "full.xml", pmcid=True)
    jats.write_text(jats.read_text(encoding="utf-8").replace("</front>", f"</front><body><sec>{body}</sec></body>"),
                    encoding="utf-8")
    report = _json(capsys, ["ingest", str(jats)])
    assert any("the JATS text replaces the PDF reading" in n for n in report["notes"]), report["notes"]
    assert list(_papers(capsys)) == ["PMC6398430"]


def test_zotero_row_with_a_non_integer_library_id_is_skipped(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    z = ZoteroFixture(tmp_path / "Zotero")
    bad = z.add_item("KBAD0001", {"title": "An item of a damaged row, about aspirin", "date": "2020"})
    z.add_item("KGOOD001", {"title": "Aspirin shortened fever in adults: a randomised trial", "date": "2020"})
    con = sqlite3.connect(z.db)
    con.execute("PRAGMA foreign_keys = OFF")
    con.execute("UPDATE items SET libraryID = 'abc' WHERE itemID = ?", [bad])
    con.commit()
    con.close()
    report = _json(capsys, ["ingest", str(tmp_path / "Zotero")])
    assert report["papers_added"] == 1
    assert len(report["errors"]) == 1 and "KBAD0001" in report["errors"][0]["reason"]
    assert list(_papers(capsys)) == ["zotero:KGOOD001"]
