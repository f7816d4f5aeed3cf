from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_fault_server import FaultServer, fault_server

import evtui.access as access
from evtui.config import load_config
from evtui.library import Library

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).parent.parent


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own data home and config, so nothing touches the user's library."""
    home = tmp_path / "evtui-home"
    monkeypatch.setenv("EVTUI_HOME", str(home))
    monkeypatch.setenv("EVTUI_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("EVTUI_DEMO", "false")
    for key in list(os.environ):
        if key.startswith("EVTUI_") and key not in {"EVTUI_HOME", "EVTUI_CONFIG", "EVTUI_DEMO"}:
            monkeypatch.delenv(key)
    return home


@pytest.fixture
def papers_dir(tmp_path: Path) -> Path:
    """Three small Markdown papers with known content."""
    d = tmp_path / "papers"
    d.mkdir()
    (d / "aspirin.md").write_text(
        "# Aspirin and colorectal cancer\n\n## Abstract\n\n"
        "Regular aspirin use reduced the incidence of colorectal cancer in a large cohort. "
        "The effect was seen after 10 years (HR 0.74, 95% CI 0.56-0.97).\n\n"
        "## Results\n\nAspirin at 75 mg daily lowered colorectal adenoma recurrence by 21%. "
        "No effect on gastric cancer was seen.\n",
        encoding="utf-8",
    )
    (d / "ace.md").write_text(
        "# Cough with angiotensin-converting enzyme inhibitors\n\n## Results\n\n"
        "Angiotensin-converting enzyme (ACE) inhibitors caused a dry cough in 10% of patients. "
        "Cough resolved within four weeks after ACE inhibitors were stopped.\n",
        encoding="utf-8",
    )
    (d / "tnf.md").write_text(
        "# Cytokines in Zürich cohorts\n\n## Methods\n\n"
        "Serum TNF-α and IL-6 were measured by ELISA in 120 patients. "
        "IL-6 levels were higher in patients with COVID-19 than in controls (p < 0.05).\n",
        encoding="utf-8",
    )
    return d


@pytest.fixture
def papers_library(papers_dir: Path) -> Iterator[Library]:
    """A library (in the isolated home) holding the three `papers_dir` papers."""
    with Library(load_config()) as library:
        library.ingest([papers_dir])
        yield library


@pytest.fixture
def papers_ingested(papers_dir: Path) -> Path:
    """The three `papers_dir` papers ingested into the isolated home, the library closed again (for the app or the
    CLI to open)."""
    with Library(load_config()) as library:
        library.ingest([papers_dir])
    return papers_dir


@pytest.fixture
def server() -> Iterator[FaultServer]:
    """A loopback OpenAI-style server whose replies and faults a test sets (tests/llm_fault_server.py)."""
    with fault_server() as srv:
        yield srv


def pytest_unconfigure(config: pytest.Config) -> None:
    """Free what the run left in reference cycles (apps, workers and the DuckDB connections they held) while the
    interpreter is still whole: DuckDB's bindings otherwise report every connection still alive at exit as a
    "nanobind: leaked" line, and a green run should look green."""
    import gc

    gc.collect()


@pytest.fixture
def small_demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A nine-paper stand-in for the bundled demo (three formats, a jats/ subfolder), as EVTUI_DEMO_DIR."""
    src = tmp_path / "demo"
    (src / "jats").mkdir(parents=True)
    shutil.copy(FIXTURES / "core" / "scifact5.jsonl", src)
    shutil.copy(FIXTURES / "core" / "cdr3.pubtator.txt", src)
    shutil.copy(FIXTURES / "core" / "PMC2852030.xml", src / "jats")
    monkeypatch.setenv("EVTUI_DEMO_DIR", str(src))
    return src


@pytest.fixture
def unwritable_home(papers_ingested: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The library's folder made read-only (root ignores the mode bits: there the check for it is told so, the fault
    simulated). Shared by the read-only app tests."""
    home = load_config().home
    if os.geteuid() == 0:
        real = os.access
        monkeypatch.setattr(access.os, "access", lambda p, mode, **kw: (
            False if mode & os.W_OK and Path(p) == home else real(p, mode, **kw)))
        yield home
        return
    modes = {p: p.stat().st_mode for p in [home, *home.rglob("*")]}
    for p in modes:
        p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        yield home
    finally:
        for p, mode in modes.items():
            p.chmod(mode)
