"""`evtui bench runs` on a read-only library where no benchmark has run yet (a colleague's share) lists no runs; it
failed with "this needs to write to the library (e.g. embeddings …)" because listing made the runs table."""

from __future__ import annotations

from pathlib import Path

from evtui.bench.runs import list_runs
from evtui.config import load_config
from evtui.library import Library


def test_no_runs_table_read_only(papers_ingested: Path) -> None:
    with Library(load_config(), read_only=True) as lib:
        assert list_runs(lib) == []
    with Library(load_config()) as lib:  # writable: the table is made, still empty
        assert list_runs(lib) == []
