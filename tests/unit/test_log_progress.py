"""Progress lines for a log (stderr not a terminal): a tenth of the way at a time but never within MIN_GAP_S of
the last line, at least every MAX_GAP_S, and the end; each a plain line with what is left. A fake clock, no
timing."""

from __future__ import annotations

from evtui.bench.loglines import MAX_GAP_S, MIN_GAP_S, LogLines


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def _run(total: int, seconds_per_item: float) -> list[str]:
    clock, out = Clock(), []
    log = LogLines("verify", "claims", total, out.append, clock)
    for done in range(1, total + 1):
        clock.t += seconds_per_item
        log.update(done)
    return out


def test_3000_slow_claims_give_a_line_at_least_every_30_s_and_the_end() -> None:
    lines = _run(3000, 0.13)  # 6.5 minutes: each tenth (39 s) and every 30 s between them
    assert 10 <= len(lines) <= 25
    assert lines[0] == "verify: 231 of 3,000 claims (7%) · 30 s · about 6 min 00 s left"
    assert "verify: 300 of 3,000 claims (10%) · 39 s · about 5 min 51 s left" in lines
    assert lines[-1] == "verify: 3,000 of 3,000 claims (100%) · 6 min 30 s"
    assert all("\x1b" not in line and "\n" not in line for line in lines)


def test_fast_claims_are_not_a_line_each() -> None:
    lines = _run(300, 0.01)  # 3 s in all: only the end
    assert lines == ["verify: 300 of 300 claims (100%) · 3 s"]


def test_a_slow_tenth_still_says_something_every_max_gap() -> None:
    lines = _run(20, MAX_GAP_S / 2 + 1)  # each tenth takes two items, a line at each
    assert len(lines) == 20 // 2 and MIN_GAP_S < MAX_GAP_S
    lines = _run(1000, 1.0)  # a tenth takes 100 s: a line every 30 s between them
    assert len(lines) >= 1000 // MAX_GAP_S
