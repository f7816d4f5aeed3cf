"""A researcher keeps the data home beside the papers (EVTUI_HOME=~/review/.. or ~/review/evtui) and ingests the
whole folder: the library's own database, indexes and notes are not papers, and papers kept in the home are."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evtui.cli import main
from evtui.config import load_config
from evtui.library import Library


def _ingest_twice(folder: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["ingest", str(folder)]) == 0
    assert main(["ingest", str(folder)]) == 0  # the second run sees the database and indexes the first wrote
    got = capsys.readouterr()
    return got.out + got.err


def test_home_inside_the_ingested_folder_is_passed_over(tmp_path: Path, papers_dir: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    home = papers_dir / "evtui-home"
    monkeypatch.setenv("EVTUI_HOME", str(home))
    out = _ingest_twice(papers_dir, capsys)
    assert "✗" not in out and "library.duckdb" not in out, out
    with Library(load_config()) as lib:
        assert lib.store.con.execute("SELECT count(*) FROM papers").fetchone()[0] == 3


def test_papers_kept_in_the_home_are_read(tmp_path: Path, papers_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "review"
    shutil.copytree(papers_dir, home / "papers")
    monkeypatch.setenv("EVTUI_HOME", str(home))
    out = _ingest_twice(home, capsys)
    assert "✗" not in out and "library.duckdb" not in out, out
    with Library(load_config()) as lib:
        assert lib.store.con.execute("SELECT count(*) FROM papers").fetchone()[0] == 3
