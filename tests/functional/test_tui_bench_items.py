"""The Bench screen's Items tab at 80x24: its title (a diff names both runs) is shown whole, wrapped."""

from __future__ import annotations

from test_tui_bench_runs import DEV16, DEV28, EB3, TRAIN49, _runs_tab
from textual.widgets import DataTable, Label
from tui_pilot import run, started, until

from evtui.bench.evidencebench import dataset_name, run_params
from evtui.bench.runs import save_run
from evtui.config import load_config
from evtui.library import Library


def test_items_title_wraps_whole_at_80_columns() -> None:
    """Two runs with the longest names: "A bm25-coverage · results-er-optimal vs B evidential · …" ran off the
    right edge, cutting "most different first" (and the run B it names)."""
    with Library(load_config()) as lib:
        for method, scores in {"bm25-coverage": (20.0, 50.0, 80.0), "evidential": (30.0, 50.0, 40.0)}.items():
            per_item = dict(zip((DEV28, DEV16, TRAIN49), scores, strict=True))
            save_run(lib, {"dataset": dataset_name(EB3), "task": "results-er-optimal", "method": method,
                           "n_items": 3, "n_skipped": 0, "aspect_recall": 50.0, "per_item": per_item,
                           "seconds": 0.2}, run_params(EB3, 0))

    async def flow() -> None:
        async with started(size=(80, 24)) as (app, pilot):
            screen = await _runs_tab(app, pilot)
            await pilot.press("space", "j", "space", "d")
            items = screen.query_one("#items-table", DataTable)
            await until(pilot, lambda: app.focused is items, "the diff")
            await pilot.pause()
            title = screen.query_one("#items-title", Label)
            words = " ".join(str(title.render()).split())
            assert words.endswith("most different first") and len(words) > 80
            assert title.region.right <= screen.region.right
            shown = " ".join(" ".join(strip.text for strip in title.render_lines(title.region.reset_offset)).split())
            assert shown == words, (shown, words)  # nothing cut at the right edge

    run(flow)
