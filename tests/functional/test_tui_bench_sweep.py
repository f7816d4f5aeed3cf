"""The Bench screen's Sweep tab: a quick preselection, the cost of the selected sweep before it runs (a line, and a
confirm step for a slow or paid one), the time left from the items done, in-sample figures marked, checklists
whose unticked items look unticked, and the judge Search uses."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from textual.widgets import DataTable, Input, ProgressBar, Select, SelectionList, Static
from tui_pilot import answer_confirm, messages, notified, open_screen, plain_text, run, started, until

from evtui.bench.estimate import IN_SAMPLE_NOTE, quick_methods
from evtui.tui.app import EvtuiApp
from evtui.tui.messages import SweepRunDone
from evtui.tui.screens.bench import BenchScreen
from evtui.tui.screens.modals import ConfirmScreen
from evtui.tui.widgets import CheckList

EB3 = Path(__file__).parents[1] / "fixtures" / "bench" / "eb3.json"


async def _bench(app: EvtuiApp, pilot: Any, methods: list[str] | None = None) -> BenchScreen:
    screen = await open_screen(app, pilot, "b", BenchScreen)
    screen.query_one("#dataset", Input).value = str(EB3)
    if methods is not None:
        sl = screen.query_one("#methods", SelectionList)
        sl.deselect_all()
        for m in methods:
            sl.select(m)
    screen.query_one("#sweep-results").focus()
    return screen


def _cost(screen: BenchScreen) -> str:
    return str(screen.query_one("#sweep-cost", Static).render())


def _rows(checklist: CheckList[str]) -> list[str]:
    return [checklist.render_line(y).text for y in range(checklist.option_count)]


def test_the_preselected_sweep_is_quick_and_its_cost_shows_before_r() -> None:
    async def flow() -> None:
        async with started() as (app, pilot):
            screen = await _bench(app, pilot)
            assert list(screen.query_one("#tasks", SelectionList).selected) == ["er-optimal"]
            assert list(screen.query_one("#methods", SelectionList).selected) == quick_methods()
            await until(pilot, lambda: "3 runs ·" in _cost(screen), "the cost line")
            assert "3 runs · 0 papers to embed · no LLM calls · ~" in _cost(screen) and "(rough)" in _cost(screen)
            # ticking an embedding method: the line counts the papers it would embed (none is embedded yet)
            screen.query_one("#methods", SelectionList).select("best")
            await until(pilot, lambda: "4 runs · 3 papers to embed" in _cost(screen), "the new estimate")
            screen.query_one("#methods", SelectionList).deselect("best")
            await until(pilot, lambda: "3 runs ·" in _cost(screen), "the estimate again")
            # a quick sweep starts without asking; the progress bar's own ETA is off (the text has the time left)
            assert not screen.query_one("#sweep-bar", ProgressBar).show_eta
            await pilot.press("r")
            assert not isinstance(app.screen, ConfirmScreen)
            await until(pilot, lambda: any("sweep done" in m for m in messages(app)), "the sweep", timeout=60)
            assert screen.query_one("#sweep-results", DataTable).row_count == 3
            # now the stored runs time the same selection: no longer a rough figure
            await until(pilot, lambda: "3 runs ·" in _cost(screen) and "rough" not in _cost(screen),
                        "an estimate from the stored runs")

    run(flow)


def test_a_slow_sweep_asks_first_and_a_no_runs_nothing() -> None:
    async def flow() -> None:
        async with started() as (app, pilot):
            screen = await _bench(app, pilot, ["best", "bm25"])
            await pilot.press("r")
            def cost(dialog: Any) -> None:
                body = plain_text(dialog.body)
                assert "2 runs · 3 papers to embed · no LLM calls" in body
                assert "er-optimal · best: 3 item(s)" in body and "embedding 3 of 3 paper(s)" in body

            await answer_confirm(app, pilot, "n", "the confirm step", check=cost)
            await until(pilot, lambda: isinstance(app.screen, BenchScreen), "the bench screen again")
            assert not screen.running and screen.query_one("#sweep-results", DataTable).row_count == 0

    run(flow)


def test_in_sample_figures_are_marked_with_a_legend() -> None:
    async def flow() -> None:
        async with started() as (app, pilot):
            screen = await _bench(app, pilot)
            legend = screen.query_one("#sweep-legend", Static)
            assert not legend.display
            base = {"task": "er-optimal", "n_items": 37, "n_skipped": 0, "per_item": {}, "seconds": 3.0}
            screen.post_message(SweepRunDone({**base, "method": "bm25", "aspect_recall": 27.6, "run_id": "r1",
                                              "dataset": "evidencebench:evidencebench_dev_set.json"}))
            await pilot.pause()
            assert not legend.display  # bm25 has no learned model
            screen.post_message(SweepRunDone({**base, "method": "best", "aspect_recall": 46.5, "run_id": "r2",
                                              "dataset": "evidencebench:evidencebench_dev_set.json"}))
            await until(pilot, lambda: legend.display, "the legend")
            table = screen.query_one("#sweep-results", DataTable)
            assert str(table.get_row_at(0)[4]).strip() == "27.6"
            assert str(table.get_row_at(1)[4]).strip() == "46.5 in-sample"
            assert IN_SAMPLE_NOTE in str(legend.render())

    run(flow)


def test_llm_sbs_sets_the_llm_judge_and_its_calls_show() -> None:
    async def flow() -> None:
        async with started() as (app, pilot):
            screen = await _bench(app, pilot)
            assert screen.query_one("#bench-judge-kind", Select).value == "local"  # Search's judge
            screen.query_one("#methods", SelectionList).select("llm-sbs")
            await until(pilot, lambda: screen.query_one("#bench-judge-kind", Select).value == "llm", "the judge")
            await notified(pilot, "llm-sbs always prompts an LLM")
            await until(pilot, lambda: "LLM calls: llm-sbs" in _cost(screen), "the LLM calls in the line")

    run(flow)


def test_the_bench_judge_is_the_configured_one(tmp_path: Path) -> None:
    Path(os.environ["EVTUI_CONFIG"]).write_text('judge = "llm"\njudge_model = "openai/some-model"\n',
                                                encoding="utf-8")

    async def flow() -> None:
        async with started() as (app, pilot):
            search_judge = app.screen.query_one("#judge", Select).value
            screen = await _bench(app, pilot)
            assert screen.query_one("#bench-judge-kind", Select).value == search_judge == "llm"
            assert screen.query_one("#bench-model", Input).value == "openai/some-model"

    run(flow)


def test_unticked_items_look_empty_and_names_fit_at_80_columns() -> None:
    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            screen = await _bench(app, pilot)
            await pilot.pause()
            tasks = _rows(screen.query_one("#tasks", CheckList))
            methods = _rows(screen.query_one("#methods", CheckList))
            assert tasks[0].startswith("▐✔▌ er-optimal") and tasks[1].startswith("▐ ▌ er-10")
            assert any(r.startswith("▐ ▌ results-er-optimal") for r in tasks)  # not cut at 80 columns
            assert any(r.startswith("▐✔▌ bm25-coverage") for r in methods)
            assert any(r.startswith("▐ ▌ best") for r in methods)
            await until(pilot, lambda: "3 runs ·" in _cost(screen), "the cost line")
            line = screen.query_one("#sweep-cost", Static)
            assert line.region.y + 1 < screen.size.height and len(_cost(screen)) <= line.region.width
            assert screen.query_one("#run").region.right <= 80 and screen.query_one("#cancel").region.right <= 80

    run(flow)


def test_stored_in_sample_runs_are_marked_in_the_runs_table_and_chart() -> None:
    from evtui.bench import save_run
    from evtui.config import load_config
    from evtui.library import Library

    dev = "/data/evidencebench/evidencebench_dev_set.json"
    with Library(load_config()) as lib:
        for method, value in (("best", 46.5), ("bm25", 27.6)):
            save_run(lib, {"dataset": "evidencebench:evidencebench_dev_set.json", "task": "er-optimal",
                           "method": method, "n_items": 37, "n_skipped": 0, "aspect_recall": value,
                           "per_item": {}, "seconds": 2.0}, {"data": dev, "seed": 0})

    async def flow() -> None:
        async with started() as (app, pilot):
            screen = await open_screen(app, pilot, "b", BenchScreen)
            await pilot.press("2")
            table = screen.query_one("#runs-table", DataTable)
            await until(pilot, lambda: table.row_count == 2, "the stored runs")
            cells = {str(table.get_row_at(i)[2]): str(table.get_row_at(i)[3]).strip() for i in range(2)}
            assert cells == {"best": "46.50 in-sample", "bm25": "27.60"}
            chart = str(screen.query_one("#chart", Static).render())
            assert "46.5 in-sample" in chart and "27.6 in-sample" not in chart and "in-sample: the method's" in chart

    run(flow)


def test_a_sweep_started_while_the_cost_line_reads_the_library_waits_for_it() -> None:
    """The cost line's worker reads the benchmark library under the drill-down lock; a sweep started in that moment
    starts when the read is done, rather than refusing with "an item is being re-ranked" (and, once, in a CI
    replica under load, never starting)."""
    import threading

    async def flow() -> None:
        async with started() as (app, pilot):
            screen = await _bench(app, pilot, ["bm25"])
            await until(pilot, lambda: "1 run ·" in _cost(screen), "the cost line")
            held, release = threading.Event(), threading.Event()

            def reader() -> None:  # as sweep_cost holds the lock while it reads
                with screen._drill_lock:
                    held.set()
                    release.wait(5)

            threading.Thread(target=reader, daemon=True).start()
            held.wait(5)
            await pilot.press("r")
            await pilot.pause(0.5)
            assert not screen.running and screen._start_pending  # waiting, not refused
            await pilot.press("r")  # a second r while it waits starts nothing twice
            release.set()
            await until(pilot, lambda: any("sweep done" in m for m in messages(app)), "the sweep", timeout=60)
            assert screen.query_one("#sweep-results", DataTable).row_count == 1
            assert not any("being re-ranked" in m for m in app.notified)  # type: ignore[attr-defined]

    run(flow)
