"""An id that is not valid UTF-8 (a shell's raw bytes: they arrive as lone surrogates) names no paper: `show`,
`remove`, `search --paper` and `embed --paper` say "invalid paper id" in one line (exit 2), not that the database
failed; the library is untouched."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evtui.cli import main

BAD = os.fsdecode(b"doi:\xff\xfe")


@pytest.mark.parametrize("argv", [["show", BAD], ["show", BAD, "--json"], ["remove", BAD],
                                  ["search", "aspirin", "--paper", BAD], ["embed", "--paper", BAD]],
                         ids=["show", "show-json", "remove", "search", "embed"])
def test_a_non_utf8_id_is_invalid(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{a, title = {Aspirin lowers fever in adults}, year = 2020}\n", encoding="utf-8")
    assert main(["ingest", str(bib)]) == 0
    capsys.readouterr()
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "invalid paper id 'doi:\\xff\\xfe'" in captured.err and "database" not in captured.err, captured.err
    assert len(captured.err.strip().splitlines()) == 1
    if "--json" in argv:
        assert "invalid paper id" in json.loads(captured.out)["error"]
    assert main(["papers", "--json"]) == 0
    assert [p["id"] for p in json.loads(capsys.readouterr().out)] == ["bib:a"]
