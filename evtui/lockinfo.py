"""Who holds a library: the owning process leaves a note beside its locks, so a second evtui can say who.

DuckDB's file lock and Tantivy's writer lock are per process and die with it (a SIGKILL frees them), so the note
is advisory: it names the holder in the message and is ignored when its process is gone.
Only the verb is recorded, never the rest of the command line (an `--api-base` URL may carry credentials).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

OWNER_FILE = "owner.json"
_VERBS = {"search", "ingest", "embed", "bench", "judge", "export", "select", "stats", "papers", "remove", "tui",
          "llm", "evidencebench", "scifact", "checkcovid", "runs", "serve"}


def process_started(pid: int) -> int | None:
    """When a process started, in clock ticks after boot (Linux /proc; None elsewhere or when it is gone).

    A pid alone names a process only while it lives: after a crash the kernel hands the number to the next
    process, and a note naming it would then point at a stranger. The pid with its start time does not."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except (OSError, ValueError):
        return None
    # the command name (field 2) may hold spaces and ')': the fields after it start past its last ')'
    fields = stat[stat.rfind(b")") + 2:].split()
    try:
        return int(fields[19])  # field 22, starttime
    except (IndexError, ValueError):
        return None


def process_alive(pid: int, started: int | None = None) -> bool:
    """Whether the process a note names still runs: the pid exists and, when the note recorded its start time
    and this system can read it, started at that moment (not a later process given the same pid)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass  # it exists, owned by another user
    if started is None:
        return True
    now = process_started(pid)
    return now is None or now == started


def _command() -> str:
    """`evtui ingest`, `evtui bench scifact`, `evtui` (the app), or the Python script name."""
    prog = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"
    if prog in {"-c", ""}:
        prog = "python"
    words = [w for w in sys.argv[1:4] if w in _VERBS]
    return " ".join([prog, *words])


def claim(home: Path, *, shared: bool = False) -> None:
    """Record this process as the library's owner (called once both locks are held). `shared`: it holds
    DuckDB read-only between its writes (the app), so readers may open the library beside it."""
    note = {"pid": os.getpid(), "started": process_started(os.getpid()), "host": socket.gethostname(),
            "command": _command(), "since": time.strftime("%Y-%m-%d %H:%M:%S"), "shared": shared}
    tmp = home / f".{OWNER_FILE}.{os.getpid()}"
    try:
        tmp.write_text(json.dumps(note), encoding="utf-8")
        os.replace(tmp, home / OWNER_FILE)
    except OSError:
        pass  # advisory only: a read-only data home still works


def release(home: Path) -> None:
    path = home / OWNER_FILE
    try:
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError, AttributeError):
        pass


def _note_alive(note: dict) -> bool:
    started = note.get("started")
    return process_alive(note["pid"], started if isinstance(started, int) else None)


def describe(home: Path, pid: int | None = None) -> str:
    """A sentence naming the holder: process, command and start time when the note is current."""
    try:
        note = json.loads((home / OWNER_FILE).read_text(encoding="utf-8"))
        if not isinstance(note, dict):
            note = {}
    except (OSError, ValueError):
        note = {}
    holder = note.get("pid")
    same_host = note.get("host") in (None, socket.gethostname())
    if isinstance(holder, int) and (pid is None or holder == pid) and (not same_host or _note_alive(note)):
        who = f"process {holder} (`{note.get('command', 'evtui')}`, since {note.get('since', '?')})"
        if not same_host:
            who += f" on {note.get('host')}"
    elif pid is not None:
        who = f"process {pid}"
    else:
        who = "another process"
    return (f"the library at {home} is in use by {who}; wait for it to finish or close it "
            "(one process owns a writable library at a time)")


def shares_reads(home: Path) -> bool:
    """Whether the library's current owner (a live process) lets readers open it beside it."""
    try:
        note = json.loads((home / OWNER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(note, dict) or not isinstance(note.get("pid"), int):
        return False
    same_host = note.get("host") in (None, socket.gethostname())
    return bool(note.get("shared")) and (not same_host or _note_alive(note))
