"""The Bench screen at 80x24: a running sweep's progress line fits the screen, its numbers whole."""

from __future__ import annotations

import time
from typing import Any

import pytest
from rich.cells import cell_len
from textual.widgets import DataTable, Static
from tui_pilot import open_screen, plain_text, run, started, until

from evtui.tui.messages import SweepFinished, SweepProgress
from evtui.tui.screens.bench import BenchScreen


def _shown(text: Static) -> list[str]:
    """The rows the widget shows on screen, as plain text."""
    return [strip.text.rstrip() for strip in text.render_lines(text.region.reset_offset)]


def test_sweep_progress_line_fits_80_columns(papers_ingested: object) -> None:
    """At 80 columns "item 123/456 · ~12 min left · run 2/12 · results-er-optimal · bm25-coverage" was cut at the
    edge (the run's method, then "run 2/12" itself, lost on a longer wait); the line now drops words, then the
    run's task, and keeps the numbers."""

    async def flow() -> None:
        async with started(size=(80, 24)) as (app, pilot):
            screen = await open_screen(app, pilot, "b", BenchScreen)
            screen.query_one("#sweep-progress").display = True
            screen.running, screen.sweep_started, screen.sweep_plan = True, time.monotonic() - 60, [600.0] * 12
            screen.post_message(SweepProgress(1, 12, 123, 456, "results-er-optimal · bm25-coverage"))
            text = screen.query_one("#sweep-text", Static)
            await until(pilot, lambda: "123/456" in str(text.render()), "the progress line")
            await pilot.pause()
            line = str(text.render())
            assert cell_len(line) <= text.content_size.width, line
            assert text.region.right <= screen.region.right
            assert "item 123/456" in line and "left" in line and "run 2/12" in line and "bm25-coverage" in line
            assert _shown(text)[0] == line  # one row, nothing cut
            screen.on_sweep_waiting(type("W", (), {"reader": "process 83201"})())  # another process reads
            line = str(text.render())
            assert cell_len(line) <= text.content_size.width, line
            assert "123/456" in line and "waiting for process 83201" in line and "2/12" in line, line
            # the last line, naming the runs that failed, wraps whole rather than losing them at the edge
            screen._failed = ("results-er-optimal · llm-rerank", "results-er-optimal · llm-sbs")
            screen.post_message(SweepFinished(10, False))
            await until(pilot, lambda: "failed" in str(text.render()), "the sweep's last line")
            await pilot.pause()
            shown = " ".join(" ".join(_shown(text)).split())
            assert shown.endswith("results-er-optimal · llm-sbs"), shown
            row = screen.query_one("#sweep-progress").region
            assert row.contains_region(text.region), (row, text.region)  # every row of it on screen

    run(flow)


def test_runs_tab_says_which_run_the_cursor_is_on_at_80_columns() -> None:
    """Three runs of one method on one dataset read as one run three times at 80 columns: the table cuts the
    dataset and leaves the run id (and when it was made) off the screen. With none marked, the side pane shows the
    run under the cursor in full, and follows the cursor."""
    from test_tui_bench_runs import EB3, SCORES, _runs_tab

    from evtui.bench.evidencebench import dataset_name, run_params
    from evtui.bench.runs import save_run
    from evtui.config import load_config
    from evtui.library import Library

    with Library(load_config()) as lib:
        for _ in range(2):
            scores = SCORES["bm25"]
            res = {"dataset": dataset_name(EB3), "task": "er-10", "method": "bm25", "n_items": 3, "n_skipped": 0,
                   "aspect_recall": 50.0, "per_item": scores, "seconds": 0.2}
            save_run(lib, res, run_params(EB3, 0))

    async def flow() -> None:
        async with started(size=(80, 24)) as (app, pilot):
            screen = await _runs_tab(app, pilot)
            table = screen.query_one("#runs-table", DataTable)
            side = screen.query_one("#compare", Static)

            def says(run_id: str) -> bool:
                return f"run {run_id}" in plain_text(side.content)

            first = screen.runs[0]["id"]
            await until(pilot, lambda: says(first), "the first run described")
            text = plain_text(side.content)
            assert "made " in text and dataset_name(EB3).split(":")[-1] in text, text
            await pilot.press("j")
            await until(pilot, lambda: says(screen.runs[1]["id"]), "the side pane following the cursor")
            assert table.cursor_row == 1
            await pilot.press("space", "k", "space")  # two marked: side by side again, as before
            await until(pilot, lambda: "head to head" in plain_text(side.content), "the two runs compared")
            assert not says(first)

    run(flow)


def test_the_progress_line_names_the_next_run_while_it_sets_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sweep of bm25 then best: while best embedded its papers (minutes), the line still read "item 3/3 · run 1/2
    · er-10 · bm25", a finished run, as if the sweep had stalled. It names the next run from its start."""
    import threading
    from pathlib import Path

    from test_tui_bench_runs import EB3, SCORES

    import evtui.tui.screens.bench.sweep_tab as sweep_tab
    from evtui.bench.sweep import SweepCancelled

    setup = threading.Event()  # the second run's setup goes on until the test sets this

    class SlowSetupChild:
        """The sweep's child process, in-process: the first run at once, the second after its setup."""

        def __init__(self) -> None:
            self.cancelled = False

        def run(self, data: Path, task: str, method: str, **kw: Any) -> dict[str, Any]:
            if method == "random":
                while not setup.wait(0.05):
                    if self.cancelled:
                        raise SweepCancelled
            kw["on_progress"](3, 3)
            scores = SCORES[method]
            return {"dataset": "evidencebench:eb3.json", "task": task, "method": method, "n_items": 3,
                    "n_skipped": 0, "aspect_recall": sum(scores.values()) / 3, "per_item": scores, "seconds": 0.1}

        def cancel(self) -> None:
            self.cancelled = True

        def close(self) -> None:
            pass

    monkeypatch.setattr(sweep_tab, "SweepChild", SlowSetupChild)

    async def flow() -> None:
        async with started(size=(80, 24)) as (app, pilot):
            screen = await open_screen(app, pilot, "b", BenchScreen)
            text = screen.query_one("#sweep-text", Static)
            screen.start_sweep(EB3, [("er-10", "bm25"), ("er-10", "random")], 3)
            try:
                await until(pilot, lambda: screen.query_one("#sweep-results").row_count == 1, "the first run")
                await pilot.pause(0.3)
                line = str(text.render())
                assert "run 2/2" in line and "random" in line and "0/3" in line, line
                assert "bm25" not in line, line
            finally:
                setup.set()
            await until(pilot, lambda: "done · 2 run(s) stored" in str(text.render()), "the sweep's end")

    run(flow)


def test_the_key_bar_says_space_ticks_a_method(papers_ingested: object) -> None:
    """Tab into the Bench screen's method list: the key bar listed only r 1 2 3 ?, no word of how to tick a method
    without a mouse. It says "space Tick" there, and the key can be rebound like every other."""
    from evtui.tui.app import EvtuiApp
    from evtui.tui.widgets.keybar import KeyBar

    assert "bench.tick" in EvtuiApp.binding_ids()

    async def flow() -> None:
        async with started(size=(80, 24)) as (app, pilot):
            screen = await open_screen(app, pilot, "b", BenchScreen)
            methods = screen.query_one("#methods")
            methods.focus()
            await pilot.pause()
            bar = screen.query_one(KeyBar)
            await until(pilot, lambda: "space Tick" in str(bar.render()), "space Tick on the key bar")
            before = list(methods.selected)  # type: ignore[attr-defined]
            await pilot.press("space")
            await until(pilot, lambda: list(methods.selected) != before, "a method ticked")  # type: ignore[attr-defined]

    run(flow)
