"""Benchmark runs stored in the library's DuckDB, so the CLI and the TUI can list and compare them."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path
from typing import Any

from evtui import __version__
from evtui.library import Library

_DDL = """CREATE TABLE IF NOT EXISTS runs (
    id VARCHAR PRIMARY KEY,
    created_at TIMESTAMP DEFAULT current_timestamp,
    dataset VARCHAR,
    task VARCHAR,
    method VARCHAR,
    parameters VARCHAR,
    code_version VARCHAR,
    n_items INTEGER,
    n_skipped INTEGER,
    metrics VARCHAR,
    per_item VARCHAR,
    seconds DOUBLE
)"""


def code_version() -> str:
    try:
        rev = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True, timeout=5,
                             cwd=Path(__file__).resolve().parent).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        rev = ""
    return f"{__version__}+{rev}" if rev else __version__


def save_run(library: Library, result: dict[str, Any], params: dict[str, Any]) -> str:
    con = library.store.con
    con.execute(_DDL)
    run_id = uuid.uuid4().hex[:12]
    metrics = {k: v for k, v in result.items() if k not in {"per_item", "dataset", "task", "method", "n_items",
                                                             "n_skipped", "seconds", "run_id"}}
    con.execute(
        "INSERT INTO runs (id, dataset, task, method, parameters, code_version, n_items, n_skipped, metrics,"
        " per_item, seconds) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [run_id, result["dataset"], result.get("task", ""), result["method"], json.dumps(params), code_version(),
         result.get("n_items", 0), result.get("n_skipped", 0), json.dumps(metrics),
         json.dumps(result.get("per_item", {})), result.get("seconds", 0.0)],
    )
    return run_id


def list_runs(library: Library) -> list[dict[str, Any]]:
    con = library.store.con
    con.execute(_DDL)
    rows = con.execute(
        "SELECT id, created_at, dataset, task, method, parameters, code_version, n_items, n_skipped, metrics, seconds"
        " FROM runs ORDER BY created_at DESC").fetchall()
    return [{
        "id": r[0], "created_at": r[1].isoformat(timespec="seconds"), "dataset": r[2], "task": r[3], "method": r[4],
        "parameters": json.loads(r[5] or "{}"), "code_version": r[6], "n_items": r[7], "n_skipped": r[8],
        "metrics": json.loads(r[9] or "{}"), "seconds": r[10],
    } for r in rows]
