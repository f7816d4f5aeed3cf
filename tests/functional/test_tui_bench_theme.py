"""The Bench screen draws its chart and score plot in the palette of the app's theme, and draws them again when
a theme is picked (command palette → theme), as the Search screen does with its aspect colours."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.widgets import DataTable, Static
from tui_pilot import open_screen, run, started, until

from evtui.bench.evidencebench import dataset_name, run_params
from evtui.bench.report import PLOT_STYLE, PLOT_STYLE_LIGHT
from evtui.bench.runs import save_run
from evtui.config import load_config
from evtui.library import Library
from evtui.render import ASPECT_COLORS, ASPECT_COLORS_LIGHT
from evtui.tui.screens.bench import BenchScreen

EB3 = Path(__file__).parents[1] / "fixtures" / "bench" / "eb3.json"
SCORES = {"bm25": {"evidencebench_dev_id_28": 20.0, "evidencebench_dev_id_16": 50.0},
          "random": {"evidencebench_dev_id_28": 30.0, "evidencebench_dev_id_16": 40.0}}


def _styles(widget: Static) -> set[str]:
    content = widget.content
    assert isinstance(content, Text)
    return {str(s.style) for s in content.spans}


def test_chart_and_plot_follow_the_theme() -> None:
    with Library(load_config()) as lib:
        for method, scores in SCORES.items():
            res = {"dataset": dataset_name(EB3), "task": "er-10", "method": method, "n_items": 2, "n_skipped": 0,
                   "aspect_recall": sum(scores.values()) / 2, "per_item": scores, "seconds": 0.1}
            save_run(lib, res, run_params(EB3, 0))

    async def flow() -> None:
        async with started() as (app, pilot):
            app.theme = "textual-dark"
            screen = await open_screen(app, pilot, "b", BenchScreen)
            await pilot.press("2")
            runs = screen.query_one("#runs-table", DataTable)
            await until(pilot, lambda: app.focused is runs and runs.row_count == 2, "the runs tab")
            chart = screen.query_one("#chart", Static)
            await until(pilot, lambda: ASPECT_COLORS[0] in _styles(chart), "the chart in the dark palette")
            await pilot.press("enter")  # the run's items and their score plot
            plot = screen.query_one("#items-plot", Static)
            await until(pilot, lambda: PLOT_STYLE in _styles(plot), "the score plot on its dark band")
            app.theme = "textual-light"
            await until(pilot, lambda: PLOT_STYLE_LIGHT in _styles(plot), "the score plot on a pale band")
            await until(pilot, lambda: ASPECT_COLORS_LIGHT[0] in _styles(chart), "the chart in the light palette")
            assert not _styles(chart) & set(ASPECT_COLORS)

    run(flow)
