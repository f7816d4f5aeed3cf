"""EvidenceBench runs in a child process, for the Bench screen.

A sweep ranks thousands of sentences per item; run in a thread of the app it competes with the UI thread for the
GIL, and keys took 180 ms to seconds to show during one. Here the ranking runs in `python -m evtui.bench.sweep`,
at a lower CPU priority, and the app's thread only relays what the child reports and stores each finished item
(the child never writes the user's library: the app holds it, see `Library.rw`).

The protocol is JSON Lines. The parent writes requests to the child's stdin — one run
`{"run": {data, task, method, seed, judge_opts, home, done}}`, or `{"cancel": true}` — and the child answers on its
own copy of stdout (fd 1 itself is pointed at stderr, so a library's stray print cannot break the protocol):
`{"progress": [done, total]}`, `{"item": {...}}` per finished item, then `{"result": {...}}`, `{"cancelled": true}`
or `{"error": "one line"}`. A cancel stops the run between two items; once cancelled, the child answers every
later run with `cancelled` too, so a cancel that arrives between two runs is never lost.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any

from evtui.bench.runs import ItemResult
from evtui.errors import EvtuiError

CHILD_NICE = 10  # the UI process keeps the CPU when the machine is busy; the sweep gets what is left
STORE_EVERY = 1.0  # seconds between the app's stores of finished items (each store switches its library to rw)


class SweepCancelled(Exception):
    """The run stopped between two items because the sweep was cancelled."""


class SweepChild:
    """One child process for a whole sweep: its models load once, its runs go one after another."""

    def __init__(self) -> None:
        self._err = tempfile.TemporaryFile()  # a pipe could fill and stall the child; a file cannot
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "evtui.bench.sweep"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._err, text=True, encoding="utf-8", bufsize=1,
        )
        self._write_lock = threading.Lock()  # cancel() comes from the UI thread while run() writes from a worker

    def _send(self, message: dict[str, Any]) -> None:
        stdin = self._proc.stdin
        assert stdin is not None
        with self._write_lock:
            try:
                stdin.write(json.dumps(message) + "\n")
                stdin.flush()
            except (BrokenPipeError, ValueError, OSError):
                pass  # the child has gone: run() reports why from its stderr

    def cancel(self) -> None:
        """Stop after the current item (safe from any thread)."""
        self._send({"cancel": True})

    def run(self, data: Path, task: str, method: str, *, home: Path, seed: int = 0,
            judge_opts: Mapping[str, Any] | None = None, done: Mapping[str, ItemResult] | None = None,
            on_progress: Callable[[int, int], None] | None = None,
            on_item: Callable[[ItemResult], None] | None = None) -> dict[str, Any]:
        """What `run_evidencebench` returns, computed in the child; raises SweepCancelled or EvtuiError."""
        self._send({"run": {"data": str(data), "task": task, "method": method, "seed": seed,
                            "judge_opts": dict(judge_opts) if judge_opts else None, "home": str(home),
                            "done": [asdict(r) for r in (done or {}).values()]}})
        stdout = self._proc.stdout
        assert stdout is not None
        for line in stdout:
            msg = json.loads(line)
            if "progress" in msg:
                if on_progress is not None:
                    on_progress(*msg["progress"])
            elif "item" in msg:
                if on_item is not None:
                    on_item(ItemResult(**msg["item"]))
            elif "result" in msg:
                return dict(msg["result"])
            elif "cancelled" in msg:
                raise SweepCancelled
            elif "error" in msg:
                raise EvtuiError(str(msg["error"]))
        raise EvtuiError(f"the sweep process stopped{self._why()}")

    def _why(self) -> str:
        code = self._proc.wait(timeout=10)
        self._err.seek(0)
        lines = [ln.strip() for ln in self._err.read().decode("utf-8", "replace").splitlines() if ln.strip()]
        return f" (exit {code}): {lines[-1]}" if lines else f" (exit {code})"

    def close(self, timeout: float = 10.0) -> None:
        """End the child: EOF on its stdin ends its loop; one that does not end in time is killed."""
        with self._write_lock:
            if self._proc.stdin is not None and not self._proc.stdin.closed:
                try:
                    self._proc.stdin.close()
                except OSError:
                    pass
        try:
            self._proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._err.close()

    def __enter__(self) -> SweepChild:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ItemBatches:
    """Finished items stored in batches: the app's library switches to read-write for each store (~0.1 s on the
    demo library), which for quick methods took longer than ranking the items. A batch goes at most `every`
    seconds after its first item, so a killed sweep loses at most that much; `flush()` stores the rest."""

    def __init__(self, store: Callable[[list[ItemResult]], None], every: float = STORE_EVERY,
                 clock: Callable[[], float] | None = None) -> None:
        self._store = store
        self._every = every
        self._clock = clock or time.monotonic
        self._pending: list[ItemResult] = []
        self._since = 0.0

    def add(self, item: ItemResult) -> None:
        if not self._pending:
            self._since = self._clock()
        self._pending.append(item)
        if self._clock() - self._since >= self._every:
            self.flush()

    def flush(self) -> None:
        if self._pending:
            batch, self._pending = self._pending, []
            self._store(batch)


# -- the child ---------------------------------------------------------------------------------------------------

def _serve(requests: IO[str], out: IO[str]) -> None:
    from queue import Queue

    from evtui.bench.evidencebench import run_evidencebench

    cancelled = threading.Event()
    runs: Queue[dict[str, Any] | None] = Queue()

    def read() -> None:  # a thread, so that a cancel is seen while a run is in progress
        for line in requests:
            msg = json.loads(line)
            if msg.get("cancel"):
                cancelled.set()
            elif "run" in msg:
                runs.put(msg["run"])
        runs.put(None)  # EOF: the parent is done (or gone)

    threading.Thread(target=read, daemon=True).start()

    def say(msg: dict[str, Any]) -> None:
        out.write(json.dumps(msg) + "\n")
        out.flush()

    while (req := runs.get()) is not None:
        if cancelled.is_set():
            say({"cancelled": True})
            continue

        def progress(done: int, total: int) -> None:
            if cancelled.is_set():
                raise SweepCancelled
            say({"progress": [done, total]})

        done = {d["item_id"]: ItemResult(**d) for d in req["done"]}
        try:
            res = run_evidencebench(Path(req["data"]), req["task"], req["method"], seed=req["seed"],
                                    home=Path(req["home"]), judge_opts=req["judge_opts"], done=done,
                                    on_progress=progress, on_item=lambda item: say({"item": asdict(item)}))
        except SweepCancelled:
            say({"cancelled": True})
        except EvtuiError as exc:
            say({"error": str(exc)})
        except Exception as exc:  # noqa: BLE001 - one failing run is reported; the sweep goes on to the next
            say({"error": f"{type(exc).__name__}: {exc}"})
        else:
            say({"result": res})


def main() -> None:
    try:
        os.nice(CHILD_NICE)
    except OSError:
        pass  # not allowed here: run at the parent's priority
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # stray prints go to stderr, not into the protocol
    _serve(sys.stdin, out)


if __name__ == "__main__":
    main()
