"""`evtui show` names each sentence's section in full: "metho", "discu" and "capti" were cut to five letters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evtui.cli import main


def test_show_prints_whole_section_names(papers_ingested: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["papers", "--json"]) == 0
    papers = json.loads(capsys.readouterr().out)
    rows = papers["papers"] if isinstance(papers, dict) else papers
    tnf = next(p["id"] for p in rows if "Cytokines" in p["title"])
    assert main(["show", tnf, "--json"]) == 0
    kinds = {s["section_kind"] for s in json.loads(capsys.readouterr().out)["sentences"]}
    assert "methods" in kinds
    assert main(["show", tnf]) == 0
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if "ELISA" in ln]
    assert lines and " methods " in lines[0] and "metho " not in lines[0], out
