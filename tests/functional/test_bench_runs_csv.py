"""`evtui bench runs --csv PATH [--items]`: the stored runs (and their per-item scores) as CSV files."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from evtui.bench.csvout import ITEM_COLUMNS, RUN_COLUMNS
from evtui.bench.evidencebench import dataset_name, run_params
from evtui.bench.runs import save_run
from evtui.cli import main
from evtui.config import load_config
from evtui.library import Library

EB3 = Path(__file__).parents[1] / "fixtures" / "bench" / "eb3.json"


def _store() -> list[str]:
    ids = []
    with Library(load_config()) as lib:
        for method, scores in (("bm25", {"evidencebench_dev_id_28": 33.3, "evidencebench_train_id_49": 51.9}),
                               ("random", {"evidencebench_dev_id_28": 0.0, "evidencebench_train_id_49": 70.4})):
            res = {"dataset": dataset_name(EB3), "task": "results-er-5", "method": method, "n_items": 2,
                   "n_skipped": 1, "aspect_recall": round(sum(scores.values()) / 2, 2), "per_item": scores,
                   "seconds": 0.5}
            ids.append(save_run(lib, res, run_params(EB3, 0)))
    return ids


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return [dict(zip(rows[0], r, strict=True)) for r in rows[1:]]


def test_cli_writes_runs_and_items_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids = _store()
    out = tmp_path / "runs.csv"
    assert main(["bench", "runs", "--csv", str(out), "--items", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == {"csv": str(out), "runs": 2, "items_csv": str(tmp_path / "runs-items.csv"), "items": 4}
    with out.open(newline="", encoding="utf-8") as fh:
        assert tuple(next(csv.reader(fh))) == RUN_COLUMNS
    runs = _read(out)
    assert {r["run_id"] for r in runs} == set(ids)
    bm25 = next(r for r in runs if r["method"] == "bm25")
    assert bm25["metric"] == "aspect_recall" and float(bm25["value"]) == 42.6 and bm25["n_skipped"] == "1"
    assert json.loads(bm25["parameters"]) == {"data": str(EB3), "seed": 0}
    items = _read(tmp_path / "runs-items.csv")
    assert set(items[0]) == set(ITEM_COLUMNS) and len(items) == 4
    row = next(r for r in items if r["method"] == "random" and r["item_id"] == "evidencebench_train_id_49")
    assert float(row["score"]) == 70.4 and row["hypothesis"].startswith("Exposure to welding fumes")


def test_cli_csv_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _store()
    assert main(["bench", "runs", "--items"]) == 2
    assert "--items goes with --csv" in capsys.readouterr().err
    assert main(["bench", "runs", "--csv", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is a folder" in err and "Traceback" not in err
    assert main(["bench", "runs", "--csv", str(tmp_path / "runs.csv")]) == 0
    assert "wrote 2 run(s)" in capsys.readouterr().err.replace("\n", " ")
