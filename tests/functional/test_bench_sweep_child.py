"""The Bench screen's sweeps run in a child process (evtui.bench.sweep): same answers as the harness run here,
items reported as they finish, a cancel stops between items, and a failing or dying child is a one-line error."""

from __future__ import annotations

from pathlib import Path

import pytest

from evtui.bench import run_evidencebench
from evtui.bench.runs import ItemResult
from evtui.bench.sweep import SweepCancelled, SweepChild
from evtui.errors import EvtuiError

EB3 = Path(__file__).parents[1] / "fixtures" / "bench" / "eb3.json"
KEPT = "evidencebench_dev_id_28"


def test_the_child_answers_as_the_harness_does(tmp_path: Path) -> None:
    here = run_evidencebench(EB3, "er-10", "bm25", home=tmp_path)
    items: list[ItemResult] = []
    progress: list[tuple[int, int]] = []
    with SweepChild() as child:
        res = child.run(EB3, "er-10", "bm25", home=tmp_path, on_item=items.append,
                        on_progress=lambda d, t: progress.append((d, t)))
        # the same child serves a second run (a sweep's next method), resuming from what it is given
        again = child.run(EB3, "er-10", "bm25", home=tmp_path, done={KEPT: ItemResult(KEPT, 99.0, [0], 0.5)})
    assert res["per_item"] == here["per_item"] and res["aspect_recall"] == here["aspect_recall"]
    assert {i.item_id for i in items} == set(here["per_item"])
    assert progress[-1] == (3, 3)
    assert again["per_item"][KEPT] == 99.0  # taken as given, not ranked again


def test_a_cancel_stops_this_run_and_every_later_one(tmp_path: Path) -> None:
    with SweepChild() as child:
        child.cancel()
        with pytest.raises(SweepCancelled):
            child.run(EB3, "er-10", "bm25", home=tmp_path)
        with pytest.raises(SweepCancelled):
            child.run(EB3, "er-5", "bm25", home=tmp_path)


def test_errors_are_one_line_and_the_child_serves_on(tmp_path: Path) -> None:
    with SweepChild() as child:
        with pytest.raises(EvtuiError, match="unknown task 'nope'"):
            child.run(EB3, "nope", "bm25", home=tmp_path)
        with pytest.raises(EvtuiError, match="no such file|cannot read"):
            child.run(tmp_path / "missing.json", "er-10", "bm25", home=tmp_path)
        assert child.run(EB3, "er-10", "bm25", home=tmp_path)["n_items"] >= 1


def test_a_child_that_dies_is_reported_not_waited_for(tmp_path: Path) -> None:
    child = SweepChild()
    child._proc.kill()  # noqa: SLF001 - simulate the child killed (OOM, a signal)
    with pytest.raises(EvtuiError, match=r"the sweep process stopped \(exit -9\)"):
        child.run(EB3, "er-10", "bm25", home=tmp_path)
    child.close()


def test_a_query_submitted_during_a_sweep_is_answered(papers_ingested: Path) -> None:
    """The sweep runs in its own process: the Search screen answers while it runs, and the sweep still ends."""
    from textual.widgets import Input, SelectionList
    from tui_pilot import messages, open_screen, run, search, started, until

    from evtui.tui.screens.bench import BenchScreen

    async def flow() -> None:
        async with started() as (app, pilot):
            screen = await open_screen(app, pilot, "b", BenchScreen)
            screen.query_one("#dataset", Input).value = str(EB3)
            for wid, wanted in (("#tasks", ["er-optimal", "er-10", "results-er-optimal", "results-er-5"]),
                                ("#methods", ["bm25", "bm25-coverage", "random"])):
                sl = screen.query_one(wid, SelectionList)
                sl.deselect_all()
                for v in wanted:
                    sl.select(v)
            screen.action_run()
            assert screen.running
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is not screen, "the search screen")
            await search(app, pilot, "ACE inhibitors cause cough", "bm25")
            assert app.result is not None and app.result.evidence
            await until(pilot, lambda: any("sweep done" in m for m in messages(app)), "the sweep", timeout=90)
            assert len(screen.results) == 12

    run(flow)
