"""Family names, end to end: `evtui ingest` of a .bib naming "García Márquez, Gabriel", then `evtui export` cites
and keys the whole family name (it wrote "márquez", and the BibTeX named him "Márquez")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evtui.cli import main


def test_ingest_select_export_keeps_the_family_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{gm,\n  title = {Solitude and hypoxia},\n  author = {Garc{\\'\\i}a M{\\'a}rquez, Gabriel"
                   " and De la Cruz, Maria},\n  year = {1967},\n  abstract = {Solitude reduces hypoxia in mice.}\n}\n",
                   encoding="utf-8")
    assert main(["ingest", str(bib), "--json"]) == 0
    capsys.readouterr()
    assert main(["select", "solitude reduces hypoxia", "-k", "1"]) == 0
    md, bibout = tmp_path / "ev.md", tmp_path / "ev.bib"
    assert main(["export", "--out", str(md)]) == 0
    assert main(["export", "--format", "bibtex", "--out", str(bibout)]) == 0
    text = md.read_text(encoding="utf-8")
    assert "`garciamarquez1967solitude` Gabriel García Márquez, Maria De la Cruz (1967)." in text
    assert "García Márquez, Gabriel," not in text  # a list joined with ", " stays unambiguous
    exported = bibout.read_text(encoding="utf-8")
    assert exported.startswith("@article{garciamarquez1967solitude,")
    assert "author = {García Márquez, Gabriel and De la Cruz, Maria}" in exported
    capsys.readouterr()
    assert main(["papers", "--json"]) == 0
    (paper,) = json.loads(capsys.readouterr().out)
    assert paper["authors"] == ["García Márquez, Gabriel", "De la Cruz, Maria"]
