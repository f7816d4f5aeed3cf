"""Two CLI gaps: Ctrl-C under --json, and `--paper ""`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evtui.cli import main, papers


def test_ctrl_c_under_json_leaves_one_error_document(papers_ingested: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # The README: under --json a failure prints one {"error": ...} document on stdout; a Ctrl-C printed nothing.
    def interrupted(_args: object) -> int:
        raise KeyboardInterrupt  # the user's Ctrl-C, simulated mid-command

    monkeypatch.setattr(papers, "cmd_embed", interrupted)
    assert main(["embed", "--json"]) == 130
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert doc["error"].startswith("interrupted") and "vectors made so far are kept" in doc["error"]
    assert "interrupted" in out.err


def test_ctrl_c_without_json_prints_nothing_on_stdout(papers_ingested: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(papers, "cmd_stats", lambda _args: (_ for _ in ()).throw(KeyboardInterrupt))
    assert main(["stats"]) == 130
    out = capsys.readouterr()
    assert out.out == "" and "interrupted" in out.err


def test_an_empty_paper_flag_is_an_unknown_paper(papers_ingested: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `--paper "$PAPER"` with PAPER unset searched the whole library... and returned nothing, without a word
    assert main(["search", "aspirin", "--paper", "", "--json"]) == 2
    assert "unknown paper ''" in json.loads(capsys.readouterr().out)["error"]



def test_check_says_what_it_rebuilt(papers_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `stats --check` printed the raw consistency dict; now it rebuilds a stale index (an older backup put back)
    import shutil

    from evtui.config import load_config
    from evtui.library import Library

    config = load_config()
    files = sorted(p for p in papers_dir.iterdir() if p.is_file())
    with Library(config) as lib:
        lib.ingest(files[:1])
    shutil.copytree(config.index_path, tmp_path / "backup")
    with Library(config) as lib:
        lib.ingest(files[1:])
    shutil.rmtree(config.index_path)
    shutil.copytree(tmp_path / "backup", config.index_path)
    assert main(["stats", "--check"]) == 0
    out = capsys.readouterr().out
    assert "disagreed with the database" in out and "rebuilt it" in out and "DuckDB and the index agree" in out
