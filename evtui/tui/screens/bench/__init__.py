"""The Bench screen (screen.py), one module per tab (sweep_tab, runs_tab, items_tab) over the state they share
(common.py)."""

from evtui.tui.screens.bench.common import bench_methods, calls_llm, judge_methods
from evtui.tui.screens.bench.screen import BenchScreen

__all__ = ["BenchScreen", "bench_methods", "calls_llm", "judge_methods"]
