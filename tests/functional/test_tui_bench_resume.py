"""The Bench screen's sweeps go through the bench driver's RunBook: items are stored as they finish, and a sweep
killed midway (in the app or in `evtui bench … `) is finished by the next sweep with the same arguments."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Input, SelectionList
from tui_pilot import messages, open_screen, run, started, until

from evtui.bench.driver import RunBook
from evtui.bench.evidencebench import dataset_name, run_params
from evtui.bench.runs import ItemResult, list_runs, stored_items
from evtui.config import load_config
from evtui.library import Library
from evtui.tui.screens.bench import BenchScreen

EB3 = Path(__file__).parents[1] / "fixtures" / "bench" / "eb3.json"
KEPT = "evidencebench_dev_id_28"


def test_an_app_sweep_finishes_the_killed_run_item_by_item() -> None:
    # A sweep killed after its first item: its run row is 'running' with that item stored. The stored score is
    # not what bm25 gives, so the finished run shows whether the item was taken as stored or ranked again.
    with Library(load_config()) as lib:
        book = RunBook(lib, dataset_name(EB3), ["er-10"], "bm25", run_params(EB3, 0))
        record = book.recorder("er-10")
        assert record is not None
        record(ItemResult(KEPT, 99.0, [0], 0.5))
        killed = book.run_id("er-10")

    async def flow() -> None:
        async with started() as (app, pilot):
            screen = await open_screen(app, pilot, "b", BenchScreen)
            screen.query_one("#dataset", Input).value = str(EB3)
            for wid, wanted in (("#tasks", "er-10"), ("#methods", "bm25")):
                sl = screen.query_one(wid, SelectionList)
                sl.deselect_all()
                sl.select(wanted)
            screen.query_one("#sweep-results").focus()
            await pilot.press("r")
            await until(pilot, lambda: any("sweep done" in m for m in messages(app)), "the sweep", timeout=60)
            row = [str(c) for c in screen.query_one("#sweep-results", DataTable).get_row_at(0)]
            assert row[-1] == killed  # the killed run, completed, not a new one
            assert screen.results[killed]["per_item"][KEPT] == 99.0

    run(flow)
    with Library(load_config()) as lib:
        runs = list_runs(lib)
        assert [(r["id"], r["status"], r["n_items"]) for r in runs] == [(killed, "done", 3)]
        assert runs[0]["parameters"] == {"data": str(EB3), "seed": 0}
        assert set(stored_items(lib, killed)) == {KEPT, "evidencebench_dev_id_16", "evidencebench_train_id_49"}
