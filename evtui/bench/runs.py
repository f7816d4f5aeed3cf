"""Benchmark runs stored in the library's DuckDB, so the CLI and the TUI can list and compare them.

A resumable run is written as it goes: `start_runs` inserts its row as 'running', `record_item` commits each
finished item to `run_items` on its own (a SIGKILL keeps every item finished before it), and `save_run(...,
run_id=)` fills in the metrics and marks it 'done'. `find_resumable` picks up the newest unfinished sweep with
the same dataset, tasks, method and parameters.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import time
import uuid
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from evtui import __version__
from evtui.faults import crash_point
from evtui.library import Library
from evtui.lockinfo import process_alive, process_started
from evtui.sharing import batch_write

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
# Added after the first release: libraries with an older runs table get the columns (their runs are 'done').
_MIGRATIONS = (
    "ALTER TABLE runs ADD COLUMN IF NOT EXISTS status VARCHAR DEFAULT 'done'",
    "ALTER TABLE runs ADD COLUMN IF NOT EXISTS sweep_id VARCHAR",
    "ALTER TABLE runs ADD COLUMN IF NOT EXISTS resume_key VARCHAR",
    """CREATE TABLE IF NOT EXISTS run_items (
        run_id VARCHAR,
        item_id VARCHAR,
        score DOUBLE,
        picked VARCHAR,
        seconds DOUBLE,
        PRIMARY KEY (run_id, item_id)
    )""",
    # who is running an unfinished run ({"pid", "host"}): a 'running' run nobody runs any more was interrupted
    "ALTER TABLE runs ADD COLUMN IF NOT EXISTS owner VARCHAR",
)
# How a run that is still 'running' but that no live process runs (a Ctrl-C, a kill, a cancelled app sweep) is
# listed: its status in list_runs, and what the CLI and the app say of it.
INTERRUPTED = "interrupted"
INTERRUPTED_HINT = "interrupted (finish it with --resume)"
STORE_EVERY = 5.0  # seconds a batched item (batch_items) may wait before it is stored: a switch costs ~0.05-0.2 s


@dataclass(frozen=True)
class ItemResult:
    """One finished benchmark item: its score (None when it cannot be scored) and what the ranker picked."""

    item_id: str
    score: float | None
    picked: Any  # JSON-serialisable: sentence indices, or a {doc id: score} run row
    seconds: float = 0.0


def _ensure(con: duckdb.DuckDBPyConnection) -> None:
    have = {r[0] for r in con.execute(
        "SELECT table_name || '.' || column_name FROM information_schema.columns"
        " WHERE table_name IN ('runs', 'run_items')").fetchall()}
    if {"runs.resume_key", "run_items.run_id", "runs.owner"} <= have:
        return  # nothing to create: also keeps a read-only connection working
    try:
        con.execute(_DDL)
        for stmt in _MIGRATIONS:
            con.execute(stmt)
    except duckdb.Error:
        if {"runs.resume_key", "run_items.run_id"} <= have:
            return  # read-only beside the app, an older table without `owner`: readable as it is (list_runs)
        raise


def _owner() -> str:
    return json.dumps({"pid": os.getpid(), "started": process_started(os.getpid()), "host": socket.gethostname()})


def _runs_live(owner: str | None) -> bool:
    """Is the process that started (or resumed) a 'running' run still running? Unknown owners (runs stored by an
    older evtui, or released by a cancelled app sweep) are not; a process on another host is taken to be."""
    try:
        note = json.loads(owner or "")
        pid, host, started = int(note["pid"]), note.get("host"), note.get("started")
    except (ValueError, TypeError, KeyError):
        return False
    if host not in (None, socket.gethostname()):
        return True
    return process_alive(pid, started if isinstance(started, int) else None)


# The parameters that name a run's data files (EvidenceBench's `data`; a SciFact / Check-COVID corpus and claims).
DATA_PARAMS: tuple[str, ...] = ("data", "corpus", "claims")


def data_digests(params: Mapping[str, Any]) -> dict[str, str]:
    """param -> sha1 of the file it names, for each of DATA_PARAMS that names a readable file: part of the resume key,
    so a file edited between a killed run and `--resume` starts a new run instead of mixing two files' items."""
    out: dict[str, str] = {}
    for name in DATA_PARAMS:
        value = params.get(name)
        if not isinstance(value, str) or not value:
            continue
        digest = hashlib.sha1(usedforsecurity=False)
        try:
            with Path(value).expanduser().open("rb") as fh:
                while chunk := fh.read(1 << 20):
                    digest.update(chunk)
        except OSError:
            continue  # not readable: the run fails on it, with its own message
        out[name] = digest.hexdigest()[:16]
    return out


def resume_key(dataset: str, task: str, method: str, params: Mapping[str, Any],
               files: Mapping[str, str] | None = None) -> str:
    """What makes two runs the same run: a resumed run must compute exactly what the killed one would have, so
    the contents of its data files count as well as their names (`files`: data_digests(params) unless given)."""
    files = data_digests(params) if files is None else files
    return json.dumps({"dataset": dataset, "task": task, "method": method, "params": params,
                       **({"files": dict(files)} if files else {})}, sort_keys=True)


def code_version() -> str:
    try:
        rev = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True, timeout=5,
                             cwd=Path(__file__).resolve().parent).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        rev = ""
    return f"{__version__}+{rev}" if rev else __version__


def save_run(library: Library, result: dict[str, Any], params: dict[str, Any], *, run_id: str | None = None) -> str:
    """Store a finished run and return its id; with `run_id` (from `start_runs`), complete that row instead."""
    flush_items(library)
    metrics = {k: v for k, v in result.items() if k not in {"per_item", "dataset", "task", "method", "n_items",
                                                             "n_skipped", "seconds", "run_id"}}
    values = [result["dataset"], result.get("task", ""), result["method"], json.dumps(params), code_version(),
              result.get("n_items", 0), result.get("n_skipped", 0), json.dumps(metrics),
              json.dumps(result.get("per_item", {})), result.get("seconds", 0.0)]
    with batch_write(library) as con:  # code_version (a git call) and the JSON are made before the window opens
        return _save_run(con, values, run_id)


def _save_run(con: duckdb.DuckDBPyConnection, values: list[Any], run_id: str | None) -> str:
    _ensure(con)
    if run_id is not None:
        con.execute(
            "UPDATE runs SET dataset = ?, task = ?, method = ?, parameters = ?, code_version = ?, n_items = ?,"
            " n_skipped = ?, metrics = ?, per_item = ?, seconds = ?, status = 'done' WHERE id = ?", [*values, run_id])
        return run_id
    run_id = uuid.uuid4().hex[:12]
    con.execute(
        "INSERT INTO runs (id, dataset, task, method, parameters, code_version, n_items, n_skipped, metrics,"
        " per_item, seconds) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [run_id, *values])
    return run_id


def start_runs(library: Library, dataset: str, tasks: Sequence[str], method: str, params: dict[str, Any]) -> list[str]:
    """One 'running' row per task, all of one sweep, before any item runs; returns their ids in task order."""
    sweep = uuid.uuid4().hex[:12]
    version = code_version()
    files = data_digests(params)  # read once, before the write window opens
    ids = []
    with batch_write(library) as con:
        _ensure(con)
        for task in tasks:
            run_id = uuid.uuid4().hex[:12]
            con.execute(
                "INSERT INTO runs (id, dataset, task, method, parameters, code_version, n_items, n_skipped, metrics,"
                " per_item, seconds, status, sweep_id, resume_key, owner) VALUES (?, ?, ?, ?, ?, ?, 0, 0, '{}', '{}',"
                " 0, 'running', ?, ?, ?)",
                [run_id, dataset, task, method, json.dumps(params), version, sweep,
                 resume_key(dataset, task, method, params, files), _owner()])
            ids.append(run_id)
    return ids


def find_resumable(library: Library, dataset: str, tasks: Sequence[str], method: str,
                   params: dict[str, Any]) -> dict[str, str]:
    """task -> run id in the newest sweep that left one of these runs unfinished ({} when there is none).

    Runs of that sweep already done are included, so a resumed `--task all` finishes the sweep the kill
    interrupted instead of starting its finished tasks over."""
    con = library.store.con
    _ensure(con)
    files = data_digests(params)
    keys = {resume_key(dataset, t, method, params, files): t for t in tasks}
    # a run started by an evtui that recorded no file contents is resumed on its arguments alone, as it was then
    keys.update({resume_key(dataset, t, method, params, {}): t for t in tasks})
    row = con.execute(
        "SELECT sweep_id FROM runs WHERE status = 'running' AND resume_key IN (SELECT unnest(?))"
        " ORDER BY created_at DESC, id LIMIT 1", [list(keys)]).fetchone()
    if row is None:
        return {}
    rows = con.execute("SELECT id, resume_key FROM runs WHERE sweep_id = ? AND resume_key IN (SELECT unnest(?))",
                       [row[0], list(keys)]).fetchall()
    return {keys[k]: run_id for run_id, k in rows}


def changed_since(library: Library, dataset: str, tasks: Sequence[str], method: str,
                  params: dict[str, Any]) -> tuple[str, list[str]] | None:
    """When `find_resumable` finds nothing: the newest unfinished run with these very arguments whose data files
    have changed since it started, and the parameters naming them; None when there is none (a run by an older
    evtui recorded no contents: find_resumable resumes it on its arguments). Its items may have been computed on other
    data, so a resume starts a new run rather than mixing them."""
    con = library.store.con
    _ensure(con)
    files = data_digests(params)
    rows = con.execute(
        "SELECT id, resume_key FROM runs WHERE status = 'running' AND dataset = ? AND method = ?"
        " AND task IN (SELECT unnest(?)) ORDER BY created_at DESC, id", [dataset, method, list(tasks)]).fetchall()
    want = json.loads(json.dumps(params))  # as stored: tuples become lists
    for run_id, key in rows:
        try:
            stored = json.loads(key or "")
        except ValueError:
            continue
        if not isinstance(stored, dict) or stored.get("params") != want:
            continue
        if not isinstance(before := stored.get("files"), dict):
            continue
        changed = sorted(name for name in files if before.get(name) != files[name])
        if changed:
            return run_id, changed
    return None


def claim_runs(library: Library, run_ids: Sequence[str]) -> None:
    """This process runs these unfinished runs now (a resume): they are listed as running, not interrupted."""
    with batch_write(library) as con:
        con.execute("UPDATE runs SET owner = ? WHERE status = 'running' AND id IN (SELECT unnest(?))",
                    [_owner(), list(run_ids)])


def release_runs(library: Library, run_ids: Sequence[str]) -> None:
    """This process stopped these runs unfinished (a cancelled or failed app sweep, which lives on): they are
    listed as interrupted, and `--resume` (or the next sweep) finishes them."""
    flush_items(library)
    with batch_write(library) as con:
        con.execute("UPDATE runs SET owner = NULL WHERE status = 'running' AND id IN (SELECT unnest(?))",
                    [list(run_ids)])


class _Pending:
    def __init__(self) -> None:
        self.items: list[tuple[str, ItemResult]] = []
        self.since = 0.0


# Libraries whose finished items are stored in batches (batch_items): a CLI sweep's, which is read-only between
# its writes so that `evtui bench runs` reads it meanwhile. Each write switches DuckDB to read-write and back
# (~0.1-0.2 s), which per item more than doubled a quick method's sweep.
_PENDING: weakref.WeakKeyDictionary[Library, _Pending] = weakref.WeakKeyDictionary()


def _pending_of(library: Library) -> _Pending | None:
    try:
        return _PENDING.get(library)
    except TypeError:  # a reader's stand-in (the app's LibraryView) that cannot be weakly referenced: never batched
        return None


def batch_items(library: Library) -> None:
    """From now on, items recorded for `library` are stored together, at most STORE_EVERY seconds after the first of
    them (a killed sweep loses at most that much), and before anything reads or completes a run."""
    _PENDING.setdefault(library, _Pending())


def record_item(library: Library, run_id: str, item: ItemResult) -> None:
    """Commit one finished item (its own transaction: a kill right after it keeps it), or, for a library whose
    items are batched (batch_items), once its batch is due."""
    pending = _pending_of(library)
    if pending is None:
        with batch_write(library) as con:
            _insert_items(con, [(run_id, item)])
        return
    if not pending.items:
        pending.since = time.monotonic()
    pending.items.append((run_id, item))
    if time.monotonic() - pending.since >= STORE_EVERY:
        flush_items(library)


def flush_items(library: Library) -> None:
    """Store the items batch_items holds back for `library` (nothing when there are none)."""
    pending = _pending_of(library)
    if pending is None or not pending.items:
        return
    items, pending.items = pending.items, []
    try:
        with batch_write(library) as con:
            _insert_items(con, items)
    except BaseException:
        pending.items[:0] = items  # kept for the next try (the end of the run)
        raise


def _insert_items(con: duckdb.DuckDBPyConnection, items: Sequence[tuple[str, ItemResult]]) -> None:
    for run_id, item in items:
        con.execute("INSERT OR REPLACE INTO run_items (run_id, item_id, score, picked, seconds) VALUES (?, ?, ?, ?, ?)",
                    [run_id, item.item_id, item.score, json.dumps(item.picked), item.seconds])
        crash_point("bench_item")


def discard_empty(library: Library, run_ids: Sequence[str]) -> None:
    """Forget runs that failed before finishing any item (a wrong method, an unreadable file): nothing to resume."""
    flush_items(library)
    with batch_write(library) as con:
        con.execute("DELETE FROM runs WHERE status = 'running' AND id IN (SELECT unnest(?))"
                    " AND id NOT IN (SELECT run_id FROM run_items)", [list(run_ids)])


def stored_items(library: Library, run_id: str) -> dict[str, ItemResult]:
    flush_items(library)
    con = library.store.con
    _ensure(con)
    rows = con.execute("SELECT item_id, score, picked, seconds FROM run_items WHERE run_id = ?", [run_id]).fetchall()
    return {r[0]: ItemResult(r[0], r[1], json.loads(r[2]), r[3] or 0.0) for r in rows}


def stored_run(library: Library, dataset: str, task: str, method: str, params: Mapping[str, Any]
               ) -> dict[str, Any] | None:
    """The newest finished run with these very arguments, data file contents and code version (None when there is
    none), as the sweep that made it reported it: the same sweep started again gives the same figures, and stored
    each run a second time (the Runs tab listed bm25 twice)."""
    con = library.store.con
    if not con.execute("SELECT count(*) FROM information_schema.columns"
                       " WHERE table_name = 'runs' AND column_name = 'resume_key'").fetchone()[0]:
        return None
    row = con.execute(
        "SELECT id, dataset, task, method, n_items, n_skipped, metrics, per_item, seconds FROM runs"
        " WHERE status = 'done' AND resume_key = ? AND code_version = ? ORDER BY created_at DESC, id LIMIT 1",
        [resume_key(dataset, task, method, params), code_version()]).fetchone()
    if row is None:
        return None
    return {**json.loads(row[6] or "{}"), "run_id": row[0], "dataset": row[1], "task": row[2], "method": row[3],
            "n_items": row[4], "n_skipped": row[5], "per_item": json.loads(row[7] or "{}"), "seconds": row[8]}


def run_per_item(library: Library, run_id: str) -> dict[str, float]:
    """A stored run's score per item ({} for an unknown run). Read-only: no table is created."""
    flush_items(library)
    row = library.store.con.execute("SELECT per_item FROM runs WHERE id = ?", [run_id]).fetchone()
    return json.loads(row[0] or "{}") if row else {}


_LIST_RUNS = ("SELECT id, created_at, dataset, task, method, parameters, code_version,"
              " CASE WHEN status = 'running' THEN (SELECT count(*) FROM run_items i WHERE i.run_id = runs.id)"
              " ELSE n_items END, n_skipped, metrics, seconds, coalesce(status, 'done'), owner"
              " FROM runs ORDER BY created_at DESC")
_LIST_RUNS_NO_OWNER = _LIST_RUNS.replace(", owner FROM", ", NULL FROM")


def list_runs(library: Library) -> list[dict[str, Any]]:
    """Every stored run, newest first. `status`: done, running (a live process runs it) or interrupted (nobody
    does: `--resume` finishes it); `in_sample`: whether its figure is in-sample (evtui.bench.provenance.in_sample)."""
    from evtui.bench.provenance import in_sample

    flush_items(library)
    con = library.store.con
    if not con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'runs'").fetchone()[0] \
            and (library.read_only or library.shared):
        return []  # no benchmark has run here, and a read-only library cannot make the (empty) table
    _ensure(con)
    has_owner = con.execute("SELECT count(*) FROM information_schema.columns"
                            " WHERE table_name = 'runs' AND column_name = 'owner'").fetchone()
    # An unfinished run counts the items it has stored so far. A library from before the owner column (read-only
    # beside the app, so not yet upgraded) has no owner to read: its running rows count as interrupted.
    rows = con.execute(_LIST_RUNS if has_owner and has_owner[0] else _LIST_RUNS_NO_OWNER).fetchall()
    runs = [{
        "id": r[0], "created_at": r[1].isoformat(timespec="seconds"), "dataset": r[2], "task": r[3], "method": r[4],
        "parameters": json.loads(r[5] or "{}"), "code_version": r[6], "n_items": r[7], "n_skipped": r[8],
        "metrics": json.loads(r[9] or "{}"), "seconds": r[10],
        "status": INTERRUPTED if r[11] == "running" and not _runs_live(r[12]) else r[11],
    } for r in rows]
    for run in runs:
        run["in_sample"] = in_sample(run)
    return runs
