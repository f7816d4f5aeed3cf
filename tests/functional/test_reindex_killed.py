"""A rebuild of the search index killed half way is finished by the next command, and that command says so: the
mark it left in DuckDB was cleared by the finished rebuild before the CLI looked, so the rebuild went unsaid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evtui.cli import main
from evtui.config import load_config
from evtui.library import Library


def test_a_rebuild_left_half_done_is_finished_and_said(papers_ingested: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    with Library(load_config()) as lib:  # as a killed `stats --check` leaves it: marked, the index half written
        lib.store.set_meta("reindex_pending", "1")
        lib.index.delete_all()
        lib.index.commit()
    assert main(["search", "ACE inhibitors cause cough", "--k", "2", "--json"]) == 0
    out = capsys.readouterr()
    assert len(json.loads(out.out)["results"]) == 2
    (line,) = out.err.strip().splitlines()
    assert "rebuilt the search index from the database" in line and " sentences, " in line
    assert main(["search", "ACE inhibitors cause cough", "--k", "2", "--json"]) == 0
    assert "rebuilt" not in capsys.readouterr().err
