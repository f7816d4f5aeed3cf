"""`evtui ingest` on a folder of a researcher's own notes, as the CLI reports it: a Notepad "Unicode" file is read,
"Title:" lines are metadata, a bad file is one line while the rest load, a second run stores nothing twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evtui.cli import main


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, object]:
    capsys.readouterr()
    rc = main([*argv, "--json"])
    return rc, json.loads(capsys.readouterr().out)


def test_a_folder_of_own_notes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "notepad.txt").write_bytes(
        "Caffeine and sleep latency\r\n\r\nCaffeine increased sleep latency in adults.\r\n".encode("utf-16"))
    (notes / "aspirin.txt").write_text("Title: Aspirin and colorectal cancer\nAuthors: A. Smith, B. Jones\n"
                                       "Year: 2020\n\nAspirin reduced colorectal cancer risk.\n", encoding="utf-8")
    (notes / "photo.txt").write_bytes(bytes(range(256)) * 8)
    rc, report = _json(capsys, "ingest", str(notes))
    assert rc == 0 and isinstance(report, dict)
    assert report["papers_added"] == 2
    assert [e["reason"] for e in report["errors"]] == ["not a text file (binary content)"]

    rc, papers = _json(capsys, "papers")
    assert isinstance(papers, list)
    by_title = {p["title"]: p for p in papers}
    assert set(by_title) == {"Caffeine and sleep latency", "Aspirin and colorectal cancer"}
    assert by_title["Aspirin and colorectal cancer"]["authors"] == ["A. Smith", "B. Jones"]
    assert by_title["Aspirin and colorectal cancer"]["year"] == 2020

    rc, again = _json(capsys, "ingest", str(notes))
    assert isinstance(again, dict) and (again["papers_added"], again["papers_unchanged"]) == (0, 2)
    rc, stats = _json(capsys, "stats", "--check")
    assert isinstance(stats, dict) and stats["papers"] == 2 and stats["consistency"]["consistent"]
    rc, found = _json(capsys, "search", "caffeine sleep latency", "--method", "bm25", "--k", "1")
    assert isinstance(found, dict) and found["results"][0]["title"] == "Caffeine and sleep latency"
