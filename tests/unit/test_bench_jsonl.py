"""The benchmarks' JSON Lines reader names the file's line of a broken record (json's own position is within it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evtui.bench.jsonl import read_json_lines
from evtui.errors import EvtuiError


def _any(_obj: object, _where: str) -> None:
    return None


def test_a_broken_line_is_named_by_its_line_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "claims.jsonl"
    path.write_text('{"id": 1, "claim": "x"}\n\nnot json\n', encoding="utf-8")
    with pytest.raises(EvtuiError, match=r"line 3 is not JSON"):
        read_json_lines(path, "SciFact claims", _any)


def test_blank_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "claims.jsonl"
    path.write_text('{"id": 1}\n\n{"id": 2}\n', encoding="utf-8")
    assert [r["id"] for r in read_json_lines(path, "SciFact claims", _any)] == [1, 2]
