"""Requests a CLI hands to the open app: the app owns the library's writes while it runs.

The app keeps DuckDB open read-only between its own writes, and DuckDB lets no other process open the file
read-write while any connection is open. So a CLI writer beside the app (`evtui select`) cannot write; it does
the reading work itself (search, verdicts) and posts the rows to write as a request file. The app takes each
request (an atomic rename, so a request is applied once), writes it inside its own read-write switch, and leaves
an answer file. A request nobody takes is withdrawn by its poster, so a closed app never applies it later.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

INBOX = "inbox"
_REQUEST, _TAKEN, _ANSWER = ".request.json", ".taken", ".answer.json"
TAKEN_WAIT = 60.0  # seconds a taken request may take to be written (a search worker may hold the database)


def _dir(home: Path) -> Path:
    return home / INBOX


def _write(path: Path, doc: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(doc), encoding="utf-8")
    os.replace(tmp, path)  # a reader never sees half a file


def post(home: Path, request: dict[str, Any]) -> str:
    """Leave a request for the app; returns its id."""
    folder = _dir(home)
    folder.mkdir(parents=True, exist_ok=True)
    rid = f"{time.time_ns():020d}-{uuid.uuid4().hex[:8]}"  # sorts in posting order
    _write(folder / f"{rid}{_REQUEST}", {**request, "id": rid})
    return rid


def withdraw(home: Path, rid: str) -> bool:
    """Take back a request nobody has taken; False when the app took it first (its answer is on the way)."""
    try:
        (_dir(home) / f"{rid}{_REQUEST}").unlink()
    except FileNotFoundError:
        return False
    return True


def await_answer(home: Path, rid: str, timeout: float, *, poll: float = 0.1,
                 taken_wait: float = TAKEN_WAIT) -> dict[str, Any] | None:
    """The app's answer to request `rid`, or None after `timeout` seconds with the request withdrawn (no app
    took it). A request the app has taken is waited for `taken_wait` seconds more: its write is under way."""
    answer = _dir(home) / f"{rid}{_ANSWER}"
    deadline, taken_deadline = time.monotonic() + timeout, None
    while True:
        try:
            doc = json.loads(answer.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            doc = None
        if isinstance(doc, dict):
            answer.unlink(missing_ok=True)
            return doc
        now = time.monotonic()
        if taken_deadline is None and now >= deadline:
            if withdraw(home, rid):
                return None
            taken_deadline = now + taken_wait
        elif taken_deadline is not None and now >= taken_deadline:
            return {"error": f"the app took the request but gave no answer within {taken_wait:.0f} s"}
        time.sleep(poll)


def take(home: Path) -> list[tuple[str, dict[str, Any] | None]]:
    """The app's side: every waiting request, oldest first, claimed (a request is taken once). A request that
    cannot be read comes back as None, to be answered with an error."""
    folder = _dir(home)
    try:
        names = sorted(p.name for p in folder.iterdir() if p.name.endswith(_REQUEST))
    except OSError:
        return []
    out: list[tuple[str, dict[str, Any] | None]] = []
    for name in names:
        rid = name[: -len(_REQUEST)]
        taken = folder / f"{rid}{_TAKEN}"
        try:
            os.replace(folder / name, taken)
        except OSError:
            continue  # withdrawn meanwhile
        try:
            doc = json.loads(taken.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            doc = None
        out.append((rid, doc if isinstance(doc, dict) else None))
    return out


def pending(home: Path) -> bool:
    """Whether a request waits (a cheap check the app makes on a timer)."""
    try:
        return any(p.name.endswith(_REQUEST) for p in _dir(home).iterdir())
    except OSError:
        return False


def answer(home: Path, rid: str, reply: dict[str, Any]) -> None:
    """The app's answer to a taken request (`error` set when it could not be applied)."""
    folder = _dir(home)
    _write(folder / f"{rid}{_ANSWER}", reply)
    (folder / f"{rid}{_TAKEN}").unlink(missing_ok=True)
