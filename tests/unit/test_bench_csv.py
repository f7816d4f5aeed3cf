"""Stored runs as CSV (evtui.bench.csvout): what is written reads back, field for field, with csv.reader."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from evtui.bench import csvout
from evtui.errors import EvtuiError

EB3 = Path(__file__).parents[1] / "fixtures" / "bench" / "eb3.json"


def _runs() -> list[dict[str, Any]]:
    return [
        {"id": "aaa111", "created_at": "2026-01-02T03:04:05", "dataset": "evidencebench:eb3.json", "task": "er-10",
         "method": "bm25", "parameters": {"data": str(EB3), "seed": 0, "model": 'a "quoted", comma'},
         "code_version": "0.1.0+abc", "n_items": 3, "n_skipped": 0, "metrics": {"aspect_recall": 40.74},
         "seconds": 0.12, "status": "done"},
        {"id": "bbb222", "created_at": "2026-01-02T03:05:00", "dataset": "scifact:dev", "task": "",
         "method": "random", "parameters": {}, "code_version": "", "n_items": 0, "n_skipped": 0,
         "metrics": {}, "seconds": 0.0, "status": "running"},
    ]


def _read(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def test_runs_csv_round_trip(tmp_path: Path) -> None:
    out = tmp_path / "runs.csv"
    assert csvout.write_runs_csv(out, _runs()) == 2
    header, first, second = _read(out)
    assert tuple(header) == csvout.RUN_COLUMNS
    row = dict(zip(header, first, strict=True))
    assert row["run_id"] == "aaa111" and row["created_at"] == "2026-01-02T03:04:05"
    assert (row["dataset"], row["task"], row["method"], row["status"]) == ("evidencebench:eb3.json", "er-10",
                                                                           "bm25", "done")
    assert row["metric"] == "aspect_recall" and float(row["value"]) == 40.74
    assert int(row["n_items"]) == 3 and float(row["seconds"]) == 0.12 and row["code_version"] == "0.1.0+abc"
    assert json.loads(row["parameters"]) == _runs()[0]["parameters"]  # quotes and commas survive
    assert json.loads(row["metrics"]) == {"aspect_recall": 40.74}
    empty = dict(zip(header, second, strict=True))
    assert empty["metric"] == "" and empty["value"] == "" and empty["status"] == "running"


def test_items_csv_round_trip_with_hypotheses(tmp_path: Path) -> None:
    runs = _runs()[:1]
    per_item: dict[str, dict[str, float | None]] = {"aaa111": {"evidencebench_dev_id_28": 0.0,
                                                               "evidencebench_train_id_49": 51.8519}}
    hyps = csvout.hypotheses(runs)  # read from the run's dataset file
    assert hyps["evidencebench_dev_id_28"].startswith("Polymorphic variants in the NAT1 gene")
    hyps["evidencebench_train_id_49"] = 'line one\nline "two", with a comma'
    path = csvout.items_path(tmp_path / "runs.csv")
    assert path == tmp_path / "runs-items.csv"
    assert csvout.write_items_csv(path, runs, per_item, hyps) == 2
    header, *rows = _read(path)
    assert tuple(header) == csvout.ITEM_COLUMNS
    got = [dict(zip(header, r, strict=True)) for r in rows]
    assert [(r["run_id"], r["item_id"], float(r["score"])) for r in got] == [
        ("aaa111", "evidencebench_dev_id_28", 0.0), ("aaa111", "evidencebench_train_id_49", 51.8519)]
    assert got[1]["hypothesis"] == 'line one\nline "two", with a comma'
    assert got[0]["method"] == "bm25" and got[0]["task"] == "er-10"


def test_hypotheses_skip_missing_files_and_other_benchmarks(tmp_path: Path) -> None:
    gone = {**_runs()[0], "parameters": {"data": str(tmp_path / "gone.json")}}
    assert csvout.hypotheses([gone, _runs()[1]]) == {}


def test_bad_paths_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(EvtuiError, match="is a folder"):
        csvout.write_runs_csv(tmp_path, _runs())
    with pytest.raises(EvtuiError, match="does not exist"):
        csvout.write_runs_csv(tmp_path / "no" / "runs.csv", _runs())
    with pytest.raises(EvtuiError, match="is a folder"):
        csvout.write_items_csv(tmp_path, _runs(), {})


def test_runs_csv_says_which_figures_are_in_sample(tmp_path: Path) -> None:
    # `best` ranks with the shipped model, trained on the EvidenceBench dev set's file and on eb3.json's items (they
    # are dev and public-train items): in-sample there, not on hypotheses of the user's own
    dev = {"data": "/data/evidencebench_dev_set.json", "seed": 0}
    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps({"mine_1": {"hypothesis": "A hypothesis of the user's own, in no training set."}}))
    runs = [{**_runs()[0], "id": "b1", "method": "best", "parameters": dev},
            {**_runs()[0], "id": "b2", "method": "best", "parameters": {"data": str(mine)}},
            {**_runs()[0], "id": "b3", "method": "best"},  # eb3.json: renamed training items
            {**_runs()[0], "id": "m1", "method": "bm25", "parameters": dev}]
    out = tmp_path / "runs.csv"
    csvout.write_runs_csv(out, runs)
    header, *rows = _read(out)
    assert {r[0]: dict(zip(header, r, strict=True))["in_sample"] for r in rows} == {"b1": "yes", "b2": "no",
                                                                                   "b3": "yes", "m1": "no"}
