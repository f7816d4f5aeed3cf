"""A Bench sweep beside another process's reader (a CLI command on the same home opens the library read-only, and
the app's writes wait for it): the sweep waits, says whom for, and stores every run; a cancel still stops it. And
the tab keys work from every tab."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from textual.widgets import Button, DataTable, Input, Static, TabbedContent
from tui_pilot import messages, open_screen, run, started, until

from evtui.bench.runs import list_runs
from evtui.config import load_config
from evtui.errors import LibraryLockedError
from evtui.library import Library
from evtui.tui.app import EvtuiApp
from evtui.tui.screens.bench import BenchScreen

EB3 = Path(__file__).parents[1] / "fixtures" / "bench" / "eb3.json"

# A reading CLI command, held open until told to go: it opens the library as `evtui judge` does beside the app.
READER = r"""
import sys
from evtui.access import open_reader
from evtui.config import load_config
lib, note = open_reader(load_config())
print("ready", note, flush=True)
sys.stdin.readline()
lib.close()
print("closed", flush=True)
"""


@contextmanager
def _reader() -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen([sys.executable, "-c", READER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("ready read-only"), line
        yield proc
    finally:
        _release(proc)


def _release(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


async def _bench(app: EvtuiApp, pilot: Any) -> BenchScreen:
    screen = await open_screen(app, pilot, "b", BenchScreen)
    screen.query_one("#dataset", Input).value = str(EB3)  # er-optimal × the 3 quick methods: 3 runs
    screen.query_one("#sweep-results").focus()
    return screen


def _line(screen: BenchScreen) -> str:
    return str(screen.query_one("#sweep-text", Static).render())


def _stored() -> list[dict[str, Any]]:
    with Library(load_config()) as lib:
        return list_runs(lib)


def test_a_sweep_waits_for_a_cli_reader_and_stores_every_run() -> None:
    async def flow() -> None:
        async with started() as (app, pilot):
            screen = await _bench(app, pilot)
            with _reader() as reader:
                await pilot.press("r")
                # the reader is held: the sweep's first write waits, and says for whom, as long as it reads
                await until(pilot, lambda: f"waiting for process {reader.pid} to finish reading" in _line(screen),
                            "the waiting line")
                await pilot.pause(2.5)  # longer than one try: still waiting, nothing failed, nothing dropped
                assert screen.running and f"process {reader.pid}" in _line(screen)
                assert not [m for m in messages(app) if "in use by" in m]
                _release(reader)
                await until(pilot, lambda: any("sweep done" in m for m in messages(app)), "the sweep", timeout=60)
            assert screen.query_one("#sweep-results", DataTable).row_count == 3
            assert "done · 3 run(s) stored" in _line(screen)
            assert not [m for m in messages(app) if "in use by" in m or "failed" in m]

    run(flow)
    runs = _stored()
    assert sorted((r["method"], r["status"], r["n_items"]) for r in runs) == [
        ("bm25", "done", 3), ("bm25-coverage", "done", 3), ("random", "done", 3)]


def test_every_write_of_a_sweep_retries_a_locked_library() -> None:
    """The first two tries of every write the sweep makes (its run row, each batch of items, the finished run)
    find the library locked: each is retried, no run is lost and none is left running."""
    tries: list[bool] = []  # per try of a sweep's write: did it get the library?

    async def flow() -> None:
        from evtui.tui.screens.bench.sweep_tab import WRITE_TRY

        async with started() as (app, pilot):
            screen = await _bench(app, pilot)
            library = app.library
            assert library is not None
            real = library.rw

            @contextmanager
            def flaky(wait: float = 10.0) -> Iterator[None]:
                if wait == WRITE_TRY:  # the sweep's writes: two refusals, then the library
                    tries.append(len(tries) % 3 == 2)
                    if not tries[-1]:
                        raise LibraryLockedError(f"the library at {library.config.home} is in use by process 4242")
                with real(wait):
                    yield

            library.rw = flaky  # type: ignore[method-assign]
            try:
                await pilot.press("r")
                await until(pilot, lambda: any("sweep done" in m for m in messages(app)), "the sweep", timeout=60)
            finally:
                library.rw = real  # type: ignore[method-assign]
            assert "done · 3 run(s) stored" in _line(screen)
            assert not [m for m in messages(app) if "in use by" in m]

    run(flow)
    assert tries.count(True) >= 3 * 3 and tries.count(False) == 2 * tries.count(True)  # each run: row, items, result
    runs = _stored()
    assert sorted((r["method"], r["status"], r["n_items"]) for r in runs) == [
        ("bm25", "done", 3), ("bm25-coverage", "done", 3), ("random", "done", 3)]


def test_a_sweep_waiting_for_a_reader_is_cancelled_at_once() -> None:
    async def flow() -> None:
        async with started() as (app, pilot):
            screen = await _bench(app, pilot)
            with _reader() as reader:
                await pilot.press("r")
                await until(pilot, lambda: f"waiting for process {reader.pid}" in _line(screen), "the waiting line")
                await pilot.press("c")
                await until(pilot, lambda: not screen.running, "the cancel", timeout=5)
                assert "cancelled" in _line(screen)
                assert not screen.query_one("#run", Button).disabled
        assert not [m for m in messages(app) if "in use by" in m]

    run(flow)
    assert _stored() == []


def test_each_tab_key_works_from_every_tab() -> None:
    async def flow() -> None:
        for size in ((80, 24), (120, 40)):
            async with started(size) as (app, pilot):
                screen = await open_screen(app, pilot, "b", BenchScreen)
                tabs = screen.query_one(TabbedContent)
                for key, tab in (("2", "runs"), ("1", "sweep"), ("3", "items"), ("1", "sweep"), ("3", "items"),
                                 ("2", "runs"), ("3", "items"), ("2", "runs"), ("1", "sweep")):
                    await pilot.press(key)
                    await pilot.pause(0.1)
                    assert tabs.active == tab, (size, key, tabs.active)
                # the palette's entry runs the same action
                await pilot.press("2")
                await pilot.pause(0.1)
                assert tabs.active == "runs"
                await screen.run_action("tab('sweep')")
                await pilot.pause(0.1)
                assert tabs.active == "sweep"

    run(flow)
