"""A note naming a process (the library's owner, a bench run's owner) stays true after the kernel reuses the pid:
the note carries the process's start time, and a live process that started at another moment is not its owner."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from evtui.bench.runs import _runs_live
from evtui.lockinfo import OWNER_FILE, describe, process_alive, process_started, shares_reads

linux_only = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")


@linux_only
def test_a_pid_with_another_start_time_is_not_the_process_the_note_names() -> None:
    me, started = os.getpid(), process_started(os.getpid())
    assert isinstance(started, int)
    assert process_alive(me, started)
    assert not process_alive(me, started + 1)  # the same pid, a later process: the noted one is gone
    assert process_alive(me)  # an older note without a start time: the pid is all there is to go on


def test_a_finished_process_is_not_alive() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert not process_alive(child.pid, None)
    assert process_started(child.pid) is None


@linux_only
def test_notes_with_a_reused_pid_name_nobody(tmp_path: Path) -> None:
    me, started = os.getpid(), process_started(os.getpid())
    assert started is not None
    reused = {"pid": me, "started": started - 1, "host": socket.gethostname(), "command": "evtui tui",
              "since": "2026-01-01 00:00:00", "shared": True}
    (tmp_path / OWNER_FILE).write_text(json.dumps(reused), encoding="utf-8")
    assert not shares_reads(tmp_path)
    assert "evtui tui" not in describe(tmp_path)
    (tmp_path / OWNER_FILE).write_text(json.dumps({**reused, "started": started}), encoding="utf-8")
    assert shares_reads(tmp_path) and "evtui tui" in describe(tmp_path)
    # a bench run's owner the same way
    assert _runs_live(json.dumps({"pid": me, "started": started, "host": socket.gethostname()}))
    assert not _runs_live(json.dumps({"pid": me, "started": started + 5, "host": socket.gethostname()}))
