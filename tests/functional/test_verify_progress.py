"""`verify --claims` in a log (stderr not a terminal): plain progress lines, the last saying all claims are done,
no bar escape codes; the predictions on stdout (`--out -`) stay clean JSON lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evtui.cli import main

BENCH = Path(__file__).resolve().parents[1] / "fixtures" / "bench"


def test_progress_lines_on_a_non_terminal_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", str(BENCH / "scifact_corpus30.jsonl")]) == 0
    capsys.readouterr()
    assert main(["verify", "--claims", str(BENCH / "scifact_claims6.jsonl"), "--out", "-"]) == 0
    captured = capsys.readouterr()
    assert len([json.loads(x) for x in captured.out.splitlines()]) == 6
    progress = [x for x in captured.err.splitlines() if x.startswith("verify: ")]
    assert progress and progress[-1].startswith("verify: 6 of 6 claims (100%) · ")
    assert "\x1b" not in captured.err
