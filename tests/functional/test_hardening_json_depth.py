"""JSON nested past Python's limit (`[` a hundred thousand times) as a claims, predictions or benchmark file: one
line naming the file, exit 2, in every verb that reads one (it was a RecursionError traceback)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evtui.bench.provenance import run_items
from evtui.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "core"
DEEP = "[" * 100_000 + "]" * 100_000


def _files(tmp_path: Path) -> dict[str, Path]:
    deep = tmp_path / "deep.jsonl"
    deep.write_text(DEEP + "\n", encoding="utf-8")
    deep_json = tmp_path / "deep.json"
    deep_json.write_text(DEEP, encoding="utf-8")
    claims = tmp_path / "claims.jsonl"
    claims.write_text(json.dumps({"id": 1, "claim": "Aspirin lowers fever.", "evidence": {}, "cited_doc_ids": [1]})
                      + "\n", encoding="utf-8")
    return {"deep": deep, "deep_json": deep_json, "claims": claims}


@pytest.mark.parametrize("argv", [
    ["verify", "--claims", "{deep}", "--out", "{tmp}/pred.jsonl"],
    ["bench", "scifact", "--corpus", str(FIXTURES / "scifact5.jsonl"), "--claims", "{deep}", "--method", "bm25",
     "--no-save"],
    ["bench", "scifact-eval", "--gold", "{deep}", "--pred", "{claims}"],
    ["bench", "scifact-eval", "--gold", "{claims}", "--pred", "{deep}"],
    ["bench", "evidencebench", "--data", "{deep_json}", "--task", "er-10", "--method", "bm25", "--no-save"],
    ["bench", "checkcovid", "--corpus", "{deep}", "--claims", "{deep}", "--method", "bm25", "--no-save"],
], ids=["verify", "scifact", "scifact-eval-gold", "scifact-eval-pred", "evidencebench", "checkcovid"])
def test_deep_json_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          argv: list[str]) -> None:
    files = _files(tmp_path)
    args = [a.format(tmp=tmp_path, **files) for a in argv]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert "nested too deeply" in err and "Traceback" not in err, err
    assert len(err.splitlines()) == 1, err


def test_a_runs_data_file_nested_too_deeply_is_unreadable_not_a_crash(tmp_path: Path) -> None:
    files = _files(tmp_path)
    assert run_items(str(files["deep_json"])) == frozenset()
