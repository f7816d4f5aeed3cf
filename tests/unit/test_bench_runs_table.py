"""`evtui bench runs` with runs of two datasets (two metric names) and an interrupted run: at 80 columns the
in-sample mark, the task and the status were cut ("abstract F1 0.8 in-samp…", "interrupt…"), and at 120 the task
and method shrank to "resul…"/"b…" while the items column vanished. What tells runs apart stays whole; extra
columns come only where they fit."""

from __future__ import annotations

from rich.console import Console

from evtui.bench.report import runs_table
from evtui.bench.runs import INTERRUPTED


def _run(rid: str, task: str, method: str, **extra: object) -> dict[str, object]:
    return {"id": rid, "created_at": "2026-11-26T11:53:00", "dataset": "evidencebench:evidencebench_dev_set.json",
            "task": task, "method": method, "parameters": {}, "n_items": 12, "n_skipped": 0, "metrics": {},
            "seconds": 5.1, "status": "done", **extra}


RUNS = [
    _run("a6f370a2f4a8", "results-er-5", "best", status=INTERRUPTED),
    _run("c79b585bac0c", "er-optimal", "best", aspect_recall=54.03),
    _run("7a3507eb7d11", "results-er-optimal", "bm25-coverage", aspect_recall=47.51),
    _run("6b6d858f081b", "verify", "verifier", dataset="scifact:claims_train.jsonl",
         parameters={"claims": "/d/claims_train.jsonl"}, metrics={"abstract_label_only_f1": 0.8}),
]


def _lines(width: int) -> list[str]:
    table, notes = runs_table(RUNS, width)
    console = Console(width=width, record=True, emoji=False)
    console.print(table)
    for note in notes:
        console.print(note)
    return console.export_text().splitlines()


def test_what_tells_runs_apart_is_never_cut() -> None:
    for width in (80, 100, 120, 200):
        lines = _lines(width)
        assert max(len(line) for line in lines) <= width
        assert "…" not in "\n".join(lines), width
        row = {rid: next(line for line in lines if rid in line) for rid in ("a6f370a2f4a8", "6b6d858f081b")}
        assert "results-er-5" in row["a6f370a2f4a8"] and "interrupted" in row["a6f370a2f4a8"]
        assert "0.8 in-sample" in row["6b6d858f081b"] and "verifier" in row["6b6d858f081b"]
        assert any("results-er-optimal" in line and "bm25-coverage" in line for line in lines)
        assert any("--resume" in line for line in lines)


def test_wide_screens_add_when_dataset_and_seconds() -> None:
    header = next(line for line in _lines(200) if line.lstrip().startswith("id"))
    assert all(h in header for h in ("when", "dataset", "items", "status"))
    assert "interrupted (finish it with --resume)" in "\n".join(_lines(200))
    narrow = next(line for line in _lines(80) if line.lstrip().startswith("id"))
    assert "dataset" not in narrow and any("COLUMNS=120+" in line for line in _lines(80))
