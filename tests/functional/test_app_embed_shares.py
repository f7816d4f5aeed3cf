"""The app's own embedding run (Library `m`) holds the library read-write only while it stores a chunk: `evtui stats`
in another terminal reads it meanwhile (it was "in use" for the whole run, minutes on a real library), and the run's
vectors are all stored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evtui import paper_vectors
from evtui.config import load_config
from evtui.embed import coverage, model_available
from evtui.library import Library


def _stats() -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evtui.cli", "stats", "--json"], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "COLUMNS": "200"})


@pytest.mark.skipif(not model_available(), reason="the offline embedding model is not installed")
def test_another_process_reads_while_the_app_embeds(papers_ingested: Path) -> None:
    seen: list[tuple[str, int, str]] = []
    with Library(load_config(), shared=True) as lib:  # as the app opens it
        assert lib.shared

        def beside(phase: str) -> object:
            def call(done: int, total: int) -> None:
                if done == 0:  # between windows: the run has read what to do and computes outside them
                    proc = _stats()
                    seen.append((phase, proc.returncode, proc.stderr.strip()))
                    if proc.returncode == 0:
                        assert json.loads(proc.stdout)["papers"] == 3
            return call

        n = lib.embed(on_progress=beside("sentences"), on_papers=beside("papers"))  # type: ignore[arg-type]
        assert n and coverage(lib) == (n, n) and paper_vectors.coverage(lib) == (3, 3)
    assert [(phase, rc) for phase, rc, _ in seen] == [("papers", 0), ("sentences", 0)], seen
