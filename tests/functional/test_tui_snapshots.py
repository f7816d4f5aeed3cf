"""Snapshot tests (pytest-textual-snapshot): the search screen, the paper reader, the bench screen and the export
preview, rendered at a fixed size from fixed data — no clocks, no timestamps, no temporary paths on screen.

Update the SVGs after an intended change with `python -m pytest tests/test_tui_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pytest_textual_snapshot")

from textual.widgets import Input, Select  # noqa: E402
from tui_pilot import TRIPLET, focus_results, ready, until  # noqa: E402

from evtui.config import load_config  # noqa: E402
from evtui.tui.app import EvtuiApp  # noqa: E402
from evtui.tui.screens import export as export_screen  # noqa: E402
from evtui.tui.screens.bench import screen as bench_screen  # noqa: E402
from evtui.tui.screens.export import ExportScreen  # noqa: E402
from evtui.tui.screens.reader import ReaderScreen  # noqa: E402
from evtui.tui.screens.search import SearchScreen  # noqa: E402
from evtui.tui.widgets.keybar import KeyBar  # noqa: E402

SIZE = (140, 40)


@pytest.fixture(autouse=True)
def _seeded_random() -> None:
    """Rich gives each link a random id, and the SVG's element ids hash the whole render: seed it, or a snapshot
    would depend on how many random numbers earlier tests drew."""
    import random

    random.seed(0)


def _app() -> EvtuiApp:
    cfg = load_config()
    cfg.export_path = "evidence.md"  # shown in the export screen: not a temporary path
    return EvtuiApp(cfg, clock=lambda: 0.0)  # "0 ms" in the status line


async def _searched(pilot: Any) -> None:
    app = pilot.app
    await until(pilot, lambda: app.searcher is not None and isinstance(app.screen, SearchScreen))
    screen = app.screen
    screen.query_one("#method", Select).value = "bm25-coverage"
    query = screen.query_one("#query", Input)
    query.focus()
    query.value = TRIPLET
    await pilot.press("enter")
    await until(pilot, lambda: app.result is not None)
    # The automatic verdicts arrive from a worker: a slow machine must not snapshot "judging…" instead
    await until(pilot, lambda: not app.screen.judge_pending, "the automatic verdicts")
    await pilot.pause(0.3)  # the live parse timer settles
    await pilot.pause()


def _quiet(app: EvtuiApp) -> None:
    app.clear_notifications()


@pytest.fixture
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(export_screen, "now", lambda: datetime(2025, 1, 2, 3, 4, tzinfo=timezone.utc))
    monkeypatch.setattr(bench_screen, "default_dataset", lambda: None)
    # The automatic local judge fills the judge column on every search: a fixed judge keeps the snapshots
    # independent of the local model (which is retrained now and then).
    from types import SimpleNamespace

    from evtui.judge.base import Judgment
    from evtui.tui.app import EvtuiApp

    def judge_evidence(_library: Any, _parsed: Any, evidence: Any, **_kw: Any) -> list[Judgment]:
        out = []
        for e in evidence:
            text = e.sentence.text.lower()
            stance = "refutes" if "no effect" in text else "supports" if "reduc" in text or "lower" in text \
                else "neutral"
            level = 4 if stance == "supports" else 2
            out.append(Judgment(sentence_id=e.sentence.id, score=20 * level, level=level, confidence=7, stance=stance,
                                aspects=[], rationale="fixed", judge="local", model="fixed", prompt_version="t"))
        return out

    fake = SimpleNamespace(judge_evidence=judge_evidence, make_judge=lambda *_a, **_kw: "fixed")
    monkeypatch.setattr(EvtuiApp, "judge_service", lambda self: fake)


def test_search_screen(snap_compare: Any, papers_ingested: Path, fixed_clock: None) -> None:
    async def before(pilot: Any) -> None:
        await _searched(pilot)
        await pilot.press("j")
        await until(pilot, lambda: pilot.app.screen.detail_row == 1, "the detail pane on row 2")
        await pilot.pause(0.3)
        _quiet(pilot.app)
        await pilot.pause()

    assert snap_compare(_app(), terminal_size=SIZE, run_before=before)


def test_paper_reader(snap_compare: Any, papers_ingested: Path, fixed_clock: None) -> None:
    async def before(pilot: Any) -> None:
        await _searched(pilot)
        await pilot.press("o")
        await until(pilot, lambda: isinstance(pilot.app.screen, ReaderScreen))
        await pilot.pause(0.1)
        await pilot.press("n")
        _quiet(pilot.app)
        await pilot.pause()

    assert snap_compare(_app(), terminal_size=SIZE, run_before=before)


async def _bench(pilot: Any) -> None:
    app = pilot.app
    await ready(app, pilot)
    await focus_results(app, pilot)  # taken again until it holds, else "b" may land in the query bar
    await pilot.press("b")
    await until(pilot, lambda: type(app.screen).__name__ == "BenchScreen")
    # The cost line is filled 0.2 s after the screen opens (a debounce timer): on a loaded machine a fixed pause
    # could take the picture before it (a flaky CI run, 2026-11-25).
    await until(pilot, lambda: str(app.screen.query_one("#sweep-cost").render()).strip() != "")
    await pilot.pause(0.1)
    _quiet(app)
    # The key bar fits its keys to its width (and again on resize): fitted once more at its final width, so a loaded
    # machine cannot take the picture between two fittings.
    bar = app.screen.query_one(KeyBar)
    await until(pilot, lambda: bar.size.width > 0)
    bar.bindings_changed(app.screen)
    await pilot.pause()


def test_bench_screen(snap_compare: Any, papers_ingested: Path, fixed_clock: None) -> None:
    assert snap_compare(_app(), terminal_size=SIZE, run_before=_bench)


def test_bench_screen_80x24(snap_compare: Any, papers_ingested: Path, fixed_clock: None) -> None:
    """The Sweep tab on the smallest supported terminal: both checklists, the buttons and the cost line fit."""
    assert snap_compare(_app(), terminal_size=(80, 24), run_before=_bench)


def test_export_preview(snap_compare: Any, papers_ingested: Path, fixed_clock: None) -> None:
    async def before(pilot: Any) -> None:
        await _searched(pilot)
        await pilot.press("space", "j", "j", "space", "e")
        await until(pilot, lambda: isinstance(pilot.app.screen, ExportScreen))
        await pilot.pause(0.2)
        _quiet(pilot.app)
        await pilot.pause()

    assert snap_compare(_app(), terminal_size=SIZE, run_before=before)


def test_search_80x24(snap_compare: Any, papers_ingested: Path, fixed_clock: None) -> None:
    """The smallest supported terminal: no side pane, filters folded away, the sentence column wide."""
    async def before(pilot: Any) -> None:
        await _searched(pilot)
        await pilot.pause(0.2)
        _quiet(pilot.app)
        await pilot.pause()

    assert snap_compare(_app(), terminal_size=(80, 24), run_before=before)


def test_search_80x24_detail(snap_compare: Any, papers_ingested: Path, fixed_clock: None) -> None:
    """`d` on a narrow terminal: the detail pane over the results (Esc returns)."""
    async def before(pilot: Any) -> None:
        await _searched(pilot)
        await pilot.press("d")
        await pilot.pause(0.3)
        _quiet(pilot.app)
        await pilot.pause()

    assert snap_compare(_app(), terminal_size=(80, 24), run_before=before)


def test_search_120x40_grouped(snap_compare: Any, papers_ingested: Path, fixed_clock: None) -> None:
    """120×40 with the side pane, the verdict bar and the rows grouped by paper (`g`)."""
    async def before(pilot: Any) -> None:
        await _searched(pilot)
        await pilot.press("g")
        await pilot.pause(0.3)
        _quiet(pilot.app)
        await pilot.pause()

    assert snap_compare(_app(), terminal_size=(120, 40), run_before=before)
