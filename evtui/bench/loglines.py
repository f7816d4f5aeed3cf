"""Progress for a log: when stderr is not a terminal (a batch job, `2> log`, CI), a long loop says how far it got in
plain lines, never a bar's escape codes: one at each tenth of the way (but not within MIN_GAP_S of the last), one at
least every MAX_GAP_S while items finish, and one at the end. `verify --claims` of 3,000 claims (minutes) uses it."""

from __future__ import annotations

import time
from collections.abc import Callable

MIN_GAP_S = 5.0
MAX_GAP_S = 30.0


class LogLines:
    def __init__(self, label: str, unit: str, total: int, write: Callable[[str], None],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.label, self.unit, self.total, self.write, self.clock = label, unit, total, write, clock
        self.start = self.last_t = clock()
        self.last_step = 0  # the last tenth of the way a line was written at

    def update(self, done: int) -> None:
        """`done` of `total` items finished: a line when one is due."""
        now = self.clock()
        step = done * 10 // self.total if self.total else 0
        due = (done >= self.total or (step > self.last_step and now - self.last_t >= MIN_GAP_S)
               or now - self.last_t >= MAX_GAP_S)
        if not due:
            return
        self.last_t, self.last_step = now, step
        self.write(self.line(done, now))

    def line(self, done: int, now: float) -> str:
        spent = now - self.start
        pct = f" ({100 * done // self.total}%)" if self.total else ""
        left = ""
        if 0 < done < self.total:
            left = f" · about {_duration(spent / done * (self.total - done))} left"
        return f"{self.label}: {done:,} of {self.total:,} {self.unit}{pct} · {_duration(spent)}{left}"


def _duration(seconds: float) -> str:
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    m, s = divmod(s, 60)
    if m < 60:
        return f"{m} min {s:02d} s"
    h, m = divmod(m, 60)
    return f"{h} h {m:02d} min"
