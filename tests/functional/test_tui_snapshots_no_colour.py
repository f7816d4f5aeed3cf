"""Snapshots without colour (NO_COLOR): each aspect's matches and its chip in their own text attributes, the
verdict bar and the judge column readable in greys. Same data, clock and judge as test_tui_snapshots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pytest_textual_snapshot")

from test_tui_snapshots import _app, _quiet, _searched, fixed_clock  # noqa: E402, F401 - fixed_clock: a fixture
from tui_pilot import until  # noqa: E402

from evtui.tui.screens.reader import ReaderScreen  # noqa: E402

pytestmark = pytest.mark.usefixtures("fixed_clock")


@pytest.fixture(autouse=True)
def _no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    random.seed(0)  # as test_tui_snapshots: Rich's link ids
    monkeypatch.setenv("NO_COLOR", "1")


def test_search_80x24_no_color(snap_compare: Any, papers_ingested: Path) -> None:
    async def before(pilot: Any) -> None:
        await _searched(pilot)
        await pilot.pause(0.2)
        _quiet(pilot.app)
        await pilot.pause()

    assert snap_compare(_app(), terminal_size=(80, 24), run_before=before)


def test_paper_reader_no_color(snap_compare: Any, papers_ingested: Path) -> None:
    async def before(pilot: Any) -> None:
        await _searched(pilot)
        await pilot.press("o")
        await until(pilot, lambda: isinstance(pilot.app.screen, ReaderScreen))
        await pilot.pause(0.1)
        await pilot.press("n")
        _quiet(pilot.app)
        await pilot.pause()

    assert snap_compare(_app(), terminal_size=(100, 30), run_before=before)
