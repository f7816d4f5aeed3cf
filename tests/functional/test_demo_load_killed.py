"""The first launch's demo load cut short (a real SIGKILL of the CLI in the middle of it, as Ctrl-C or closing the
terminal leaves it): the next launch finishes the demo instead of taking the papers stored so far for the
library, also in a home an evtui from before the fix left half loaded."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from evtui.config import Config
from evtui.demo import ensure_demo
from evtui.library import Library, audit

CORE = Path(__file__).parents[1] / "fixtures" / "core"


@pytest.fixture
def demo(small_demo: Path) -> Path:
    return small_demo


def _stats(home: Path, crash: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, EVTUI_HOME=str(home), EVTUI_BATCH_SENTENCES="5", EVTUI_DEMO="true")
    if crash:
        env["EVTUI_CRASH_AT"] = crash
    return subprocess.run([sys.executable, "-m", "evtui.cli", "stats"], env=env, capture_output=True, text=True,
                          timeout=120)


def _papers(home: Path) -> set[str]:
    with Library(Config(home=home, demo=False)) as lib:
        assert audit(lib)["ok"]
        return {p.id for p in lib.store.papers()}


def test_demo_load_killed_midway_is_finished_by_the_next_launch(demo: Path, tmp_path: Path) -> None:
    with Library(Config(home=tmp_path / "whole", demo=False)) as lib:
        lib.ingest([demo])
        whole = {p.id for p in lib.store.papers()}
    home = tmp_path / "home"
    killed = _stats(home, crash="parse:7")  # several batches of 5 sentences are committed by then
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    part = _papers(home)
    assert part and part < whole  # the kill left a part of the demo
    again = _stats(home)
    assert again.returncode == 0, again.stderr
    assert "loaded the bundled demo library" in again.stderr
    assert _papers(home) == whole
    with Library(Config(home=home)) as lib:  # done now: the next launches read nothing
        assert ensure_demo(lib) is None


def test_a_home_left_half_loaded_before_the_fix_is_finished(demo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Library(Config(home=home, demo=False)) as lib:  # what an older evtui left: papers, no mark at all
        lib.ingest([demo / "scifact5.jsonl"])
    with Library(Config(home=home)) as lib:
        report = ensure_demo(lib)
        assert report is not None and report.unchanged == 5 and report.added == 4
        assert ensure_demo(lib) is None


def test_a_library_of_ones_own_papers_is_left_alone(demo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Library(Config(home=home, demo=False)) as lib:
        lib.ingest([CORE / "cdr2.bioc.xml"])
    with Library(Config(home=home)) as lib:
        assert ensure_demo(lib) is None
        assert {p.source_format for p in lib.store.papers()} == {"bioc"}
