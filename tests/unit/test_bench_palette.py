"""The benchmark reports draw in the palette of the app's theme: on a light theme the dark palette's bright
yellows and greens fade on white, so the chart's bars and the score plot take the light palette."""

from __future__ import annotations

from rich.text import Text

from evtui.bench.report import PLOT_STYLE, PLOT_STYLE_LIGHT, chart, score_plot
from evtui.render import ASPECT_COLORS, ASPECT_COLORS_LIGHT


def _styles(text: Text) -> set[str]:
    return {str(s.style) for s in text.spans}


RUNS = [{"id": f"r{i}", "dataset": "evidencebench:eb3.json", "task": "er-10", "method": m, "status": "done",
         "aspect_recall": 40.0 + i, "n_items": 3} for i, m in enumerate(["bm25", "random", "semantic"])]


def test_chart_bars_take_the_light_palette_on_a_light_theme() -> None:
    dark, light = _styles(chart(RUNS)), _styles(chart(RUNS, light=True))
    assert set(ASPECT_COLORS[:3]) <= dark and not dark & set(ASPECT_COLORS_LIGHT)
    assert set(ASPECT_COLORS_LIGHT[:3]) <= light and not light & set(ASPECT_COLORS)


def test_score_plot_takes_a_pale_band_on_a_light_theme() -> None:
    series = [("bm25", {"a": 10.0, "b": 90.0})]
    assert PLOT_STYLE in _styles(score_plot(series)) and PLOT_STYLE_LIGHT not in _styles(score_plot(series))
    assert PLOT_STYLE_LIGHT in _styles(score_plot(series, light=True))
    assert PLOT_STYLE not in _styles(score_plot(series, light=True))
