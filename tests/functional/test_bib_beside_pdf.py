"""A .bib entry's metadata wins over the bare PDF it links whichever is read first — also when both are read in one
ingest (the PDF came first in the batch and the entry was dropped: no journal, the PDF's author list)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evtui.cli import main

PDFS = Path(__file__).parents[1] / "fixtures" / "pdf"


@pytest.mark.parametrize("order", ["pdf first", "bib first"])
def test_the_entry_wins_in_one_ingest(tmp_path: Path, capsys: pytest.CaptureFixture[str], order: str) -> None:
    for name in ("PMC6398430.pdf", "refs.bib"):
        shutil.copy(PDFS / name, tmp_path)
    paths = [str(tmp_path / "PMC6398430.pdf"), str(tmp_path / "refs.bib")]
    assert main(["ingest", *(paths if order == "pdf first" else paths[::-1])]) == 0
    capsys.readouterr()
    assert main(["show", "doi:10.1093/beheco/ary157", "--json"]) == 0
    paper = json.loads(capsys.readouterr().out)["paper"]
    assert paper["journal"] == "Behavioral Ecology" and paper["source_format"] == "bibtex"
    assert paper["authors"] == ["Florian Uhl", "Max Ringler", "Rachael Miller"]  # the user's record
    assert main(["papers", "--json"]) == 0
    ids = [p["id"] for p in json.loads(capsys.readouterr().out)]
    assert ids.count("doi:10.1093/beheco/ary157") == 1
