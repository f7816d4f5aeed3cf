"""Reading commands beside the app: the app's library (Library(shared=True)) keeps DuckDB read-only between its
writes, so `evtui search` / `judge` / `papers` / `stats` / `export` in another process work while it is open;
only a second writer gets "in use by process N"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from evtui.access import open_reader
from evtui.config import load_config
from evtui.errors import LibraryLockedError
from evtui.library import Library
from evtui.lockinfo import shares_reads
from evtui.search import Searcher

# A process that holds the library as the app does: it ingests, selects a sentence, then waits for commands
# on stdin ("write" runs one write inside rw(), "hold N" stays read-write for N seconds).
HOLDER = r"""
import sys, time
from evtui.config import load_config
from evtui.export import Basket
from evtui.library import Library
from evtui.search import Searcher
from evtui.access import prepare_tables
lib = Library(load_config(), shared=True)
lib.ingest([sys.argv[1]])
with lib.rw():
    prepare_tables(lib)  # as the app does on start
    res = Searcher(lib).search("ACE inhibitors cough", k=1, method="bm25")
    Basket(lib).add(res.evidence[0], res.query, "bm25")
print("ready", flush=True)
for line in sys.stdin:
    cmd = line.split()
    if cmd[0] == "hold":
        with lib.rw():
            print("holding", flush=True)
            time.sleep(float(cmd[1]))
        print("released", flush=True)
    elif cmd[0] == "quit":
        break
lib.close()
"""


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evtui.cli", *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "COLUMNS": "200"})


@pytest.fixture
def holder(papers_dir: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(papers_dir)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    yield proc
    if proc.poll() is None:
        assert proc.stdin is not None
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_cli_reads_while_the_app_holds_the_library(holder: subprocess.Popen[str], tmp_path: Path) -> None:
    home = load_config().home
    assert shares_reads(home)
    proc = _cli("search", "ACE inhibitors cause cough", "--method", "bm25", "--json")
    assert proc.returncode == 0, proc.stderr
    hits = json.loads(proc.stdout)["results"]
    assert hits and "cough" in hits[0]["text"].lower()
    assert _cli("search", "aspirin colorectal cancer", "--method", "bm25-coverage").returncode == 0
    proc = _cli("papers", "--json")
    assert proc.returncode == 0 and len(json.loads(proc.stdout)) == 3
    # `best` within a paper embeds the paper's sentences for itself; beside the app they are used, not stored
    pid = hits[0]["paper_id"]
    proc = _cli("search", "ACE inhibitors cause cough", "--paper", pid, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["results"]
    proc = _cli("verify", "ACE inhibitors cause cough", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["papers"]
    proc = _cli("stats", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["papers"] == 3
    proc = _cli("judge", "ACE inhibitors cause cough", "--judge", "local", "--k", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    assert all(r["status"] == "ok" for r in json.loads(proc.stdout)["results"])
    out = tmp_path / "sel.md"
    proc = _cli("export", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "cough" in out.read_text(encoding="utf-8").lower()
    # a second writer still gets the message, naming the app's process
    proc = _cli("ingest", str(tmp_path))
    assert proc.returncode == 2 and f"in use by process {holder.pid}" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert holder.poll() is None  # and the holder never noticed


def test_a_reader_waits_out_the_apps_write(holder: subprocess.Popen[str]) -> None:
    assert holder.stdin is not None and holder.stdout is not None
    holder.stdin.write("hold 1.5\n")
    holder.stdin.flush()
    assert holder.stdout.readline().strip() == "holding"
    t0 = time.monotonic()
    lib, note = open_reader(load_config())  # read-write is held: the reader waits for the write to end
    try:
        assert lib.read_only and note and f"process {holder.pid}" in note
        assert time.monotonic() - t0 > 0.5
        assert Searcher(lib).search("IL-6 COVID-19", k=3, method="bm25").evidence
    finally:
        lib.close()
    assert holder.stdout.readline().strip() == "released"


def test_the_app_waits_for_a_reader_to_finish(papers_dir: Path) -> None:
    """The other direction, in one process pair: a write of the shared library waits for a reader to close."""
    lib = Library(load_config(), shared=True)
    try:
        lib.ingest([papers_dir])
        reader = subprocess.Popen(
            [sys.executable, "-c", "import time; from evtui.config import load_config; from evtui.library import "
             "Library; lib = Library(load_config(), read_only=True); print('open', flush=True); time.sleep(1.0); "
             "lib.close()"], stdout=subprocess.PIPE, text=True)
        assert reader.stdout is not None and reader.stdout.readline().strip() == "open"
        t0 = time.monotonic()
        with lib.rw():  # waits (up to RW_WAIT) for the reader's shared lock to go
            lib.store.set_meta("touched", "yes")
        assert time.monotonic() - t0 > 0.3
        reader.wait(timeout=20)
        assert lib.store.read_only and lib.store.get_meta("touched") == "yes"
        with pytest.raises(LibraryLockedError, match="in use"):  # a reader that stays: a clear error, no hang
            blocker = subprocess.Popen(
                [sys.executable, "-c", "import time; from evtui.config import load_config; from evtui.library "
                 "import Library; lib = Library(load_config(), read_only=True); print('open', flush=True); "
                 "time.sleep(5)"], stdout=subprocess.PIPE, text=True)
            try:
                assert blocker.stdout is not None and blocker.stdout.readline().strip() == "open"
                with lib.rw(wait=0.3):
                    pass
            finally:
                blocker.kill()
                blocker.wait()
        assert lib.store.read_only and lib.store.get_meta("touched") == "yes"  # still usable for reads
    finally:
        lib.close()


def test_cursors_follow_the_switch_and_threads_share_one(papers_dir: Path) -> None:
    """Threads writing and reading as the app's do: each on its own cursor, reads under the gate the switch
    holds (the app's db_gate), writes inside rw(); every cursor follows each switch."""
    lib = Library(load_config(), shared=True)
    gate = threading.RLock()
    lib.switch_guard = lambda: gate
    try:
        lib.ingest([papers_dir])
        view = lib.store.cursor()
        assert view.read_only
        errors: list[BaseException] = []

        def work(n: int) -> None:
            mine = lib.store.cursor()  # a connection per thread (DuckDB refuses two calls on one)
            try:
                for i in range(5):
                    with lib.rw(), gate:
                        mine.set_meta(f"k{n}", str(i))
                    with gate:
                        assert len(mine.papers()) == 3
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert view.read_only and lib.store.read_only
        assert [view.get_meta(f"k{n}") for n in range(4)] == ["4"] * 4
    finally:
        lib.close()
