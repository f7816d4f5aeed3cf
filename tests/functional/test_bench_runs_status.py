"""Stored runs say what they are: a 'running' run that no live process runs is interrupted (and `--resume`
finishes it), every run says whether its figure is in-sample, and the runs table fits 80 columns."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from evtui.bench.driver import RunBook
from evtui.bench.evidencebench import dataset_name, run_params
from evtui.bench.report import runs_table
from evtui.bench.runs import INTERRUPTED, ItemResult, find_resumable, list_runs, save_run
from evtui.config import load_config
from evtui.library import Library

EB3 = Path(__file__).parents[1] / "fixtures" / "bench" / "eb3.json"
DEV = "evidencebench_dev_set.json"


def test_a_running_run_nobody_runs_is_interrupted_until_resumed() -> None:
    with Library(load_config()) as lib:
        book = RunBook(lib, dataset_name(EB3), ["er-10"], "bm25", run_params(EB3, 0))
        record = book.recorder("er-10")
        assert record is not None
        record(ItemResult("evidencebench_dev_id_28", 50.0, [0], 0.1))
        rid = book.run_id("er-10")
        assert [r["status"] for r in list_runs(lib)] == ["running"]  # this process runs it
        book.release()  # an app sweep cancelled: the app lives on, the run is not running any more
        assert [r["status"] for r in list_runs(lib)] == [INTERRUPTED]
        # a process that is gone (a Ctrl-C'd CLI bench) leaves it interrupted as well
        lib.store.con.execute("UPDATE runs SET owner = ? WHERE id = ?", [json.dumps({"pid": 2**22 + 7}), rid])
        assert [r["status"] for r in list_runs(lib)] == [INTERRUPTED]
        # resumable all the same; resuming claims it (running again) and finishing makes it done
        assert find_resumable(lib, dataset_name(EB3), ["er-10"], "bm25", book.params) == {"er-10": rid}
        again = RunBook(lib, dataset_name(EB3), ["er-10"], "bm25", run_params(EB3, 0), resume=True)
        assert again.run_id("er-10") == rid and [r["status"] for r in list_runs(lib)] == ["running"]
        save_run(lib, {"dataset": dataset_name(EB3), "task": "er-10", "method": "bm25", "n_items": 3,
                       "aspect_recall": 40.0}, again.params, run_id=rid)
        assert [r["status"] for r in list_runs(lib)] == ["done"]


def _store(lib: Library, method: str, value: float) -> str:
    return save_run(lib, {"dataset": f"evidencebench:{DEV}", "task": "er-optimal", "method": method, "n_items": 37,
                          "n_skipped": 0, "aspect_recall": value, "seconds": 3.0},
                    {"data": f"/data/{DEV}", "seed": 0})


def test_runs_say_in_sample_and_the_table_fits_80_columns() -> None:
    with Library(load_config()) as lib:
        best, bm25 = _store(lib, "best", 46.49), _store(lib, "bm25", 27.6)
        book = RunBook(lib, dataset_name(EB3), ["er-10"], "evidential", run_params(EB3, 0))
        book.release()
        runs = list_runs(lib)
    by_id = {r["id"]: r for r in runs}
    assert by_id[best]["in_sample"] is True and by_id[bm25]["in_sample"] is False  # a key added to --json
    for width in (80, 200):
        table, notes = runs_table(runs, width)
        console = Console(width=width, record=True, emoji=False)
        console.print(table)
        for note in notes:
            console.print(note)
        text = console.export_text()
        lines = text.splitlines()
        assert max(len(line) for line in lines) <= width
        row = {rid: next(line for line in lines if rid in line) for rid in (best, bm25)}  # the id whole, one line
        assert "46.49 in-sample" in row[best] and "in-sample" not in row[bm25]
        assert "interrupted" in text and "--resume" in text
