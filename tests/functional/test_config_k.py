"""config.toml's `k` is the default result count of `evtui search` (as in the app); --k still wins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evtui.cli import main

pytestmark = pytest.mark.usefixtures("papers_ingested")


def test_search_takes_its_default_count_from_the_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.toml"
    config.write_text("k = 2\n", encoding="utf-8")
    monkeypatch.setenv("EVTUI_CONFIG", str(config))
    assert main(["search", "aspirin colorectal cancer", "--method", "bm25", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["results"]) == 2  # it was always 20
    assert main(["search", "aspirin colorectal cancer", "--method", "bm25", "--k", "3", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["results"]) == 3
