"""What the Bench screen's tabs share: the method lists, the runs table's figures, and the state the tabs read."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text

from evtui import methods as registry
from evtui.bench.estimate import (
    IN_SAMPLE_STYLE,
    SweepClock,
    SweepCost,
    in_sample,
)
from evtui.bench.sweep import SweepChild
from evtui.tui.base import EvtuiScreen
from evtui.tui.messages import (
    SweepProgress,
)

if TYPE_CHECKING:
    from evtui.library import Library


def judge_methods() -> tuple[str, ...]:
    """The harness's judge strategies (llm-rerank, llm-sbs, evidential)."""
    return registry.judge_methods()


def bench_methods() -> list[str]:
    """Every method the EvidenceBench harness runs: the search methods, then the judge strategies."""
    return list(registry.bench_methods())


def calls_llm(method: str, judge: str) -> bool:
    """Does this method make LLM calls (which cost money) with this judge?"""
    m = registry.lookup(method)
    return m is not None and m.calls_llm(judge)


PROGRESS_EVERY = 0.1  # seconds between progress redraws during a sweep
NARROW = 110  # columns below which the Runs and Items tabs stack their panes
DEFAULT_CSV = "~/evtui-runs.csv"  # where `w` in the Runs tab writes first (then: the last path written)
# The runs table's columns (title, width): what tells runs apart first, so a narrow screen cuts the rest.
RUN_COLUMNS = (("✓", 1), ("task", 18), ("method", 13), ("metric", 16), ("items", 5), ("dataset", 20),
               ("seconds", 7), ("run", 12))


def metric_cell(value: float | None, run: dict[str, Any], width: int, decimals: int) -> Text:
    """A run's figure, marked "in-sample" (evtui.bench.estimate.in_sample) when its model was trained on the
    run's dataset: that figure is not what to expect on new papers."""
    if value is None:
        return Text("—")
    out = Text(f"{value:{width}.{decimals}f}")
    if in_sample(run):
        out.stylize(IN_SAMPLE_STYLE)
        out.append(" in-sample", style=IN_SAMPLE_STYLE)
    return out


def run_id(run: dict[str, Any]) -> str:
    """A sweep result carries `run_id`, a stored run `id`."""
    return str(run.get("run_id") or run.get("id") or "")


class BenchTab(EvtuiScreen):
    """The state the Bench screen's tabs share (set in BenchScreen.__init__); each tab is a mixin over it."""

    cancel_event: threading.Event
    _child: SweepChild | None
    running: bool
    _start_pending: bool  # a confirmed sweep waits for the cost line's read of the benchmark library
    sweep_started: float
    results: dict[str, dict[str, Any]]
    runs: list[dict[str, Any]]
    marked: list[str]
    per_item: dict[str, dict[str, float]]
    items_run: dict[str, Any] | None
    _items_cache: dict[str, dict[str, dict[str, Any]]]
    _drill_lock: threading.RLock
    _drill_lib: tuple[str, Library] | None
    _rankers: dict[tuple[str, str, int, str], Any]
    diff: tuple[dict[str, Any], dict[str, Any]] | None
    _shown_item: str | None
    _drilled: tuple[Path, str, str, int, str, float | None, dict[str, Any]] | None
    _missing_data: set[str]
    cost: SweepCost | None
    _cost_key: tuple[Any, ...] | None
    _cost_timer: Any
    sweep_plan: list[float] | None
    clock: SweepClock | None
    _progress: SweepProgress | None
