"""Aspect colours in every terminal and theme: eight aspects stay eight colours on a 16-colour terminal (orange and
red both became bright red), and on the app's light themes the matches read on the light background (yellow, cyan
and green all but vanished on white)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.color import Color
from rich.console import Console
from textual.theme import BUILTIN_THEMES
from textual.widgets import DataTable
from tui_pilot import TRIPLET, run, search, started, until

from evtui.models import Aspect, Span
from evtui.render import ASPECT_COLORS, ASPECT_COLORS_LIGHT, aspect_chips, highlight
from evtui.tui.data import LEVEL_COLORS_LIGHT
from evtui.tui.widgets import AspectBar

EIGHT = [Aspect(f"a{i}", f"w{i}", [f"w{i}"]) for i in range(8)]
TEXT = " ".join(f"w{i}" for i in range(8))
SPANS = [Span(f"a{i}", 3 * i, 3 * i + 2) for i in range(8)]


def _sgr_per_aspect(color_system: str, *, light: bool) -> list[str]:
    """The escape codes a terminal of `color_system` gets for each aspect's match (what it actually draws)."""
    buf = io.StringIO()
    Console(file=buf, color_system=color_system, force_terminal=True, width=200).print(
        highlight(TEXT, SPANS, EIGHT, mono=False, light=light), end="")
    codes = re.findall(r"\x1b\[([0-9;]*)mw\d", buf.getvalue())
    assert len(codes) == 8, buf.getvalue()
    return codes


def test_eight_aspects_stay_eight_colours_on_16_and_256_colour_terminals() -> None:
    for light in (False, True):
        for system in ("standard", "256", "truecolor"):
            codes = _sgr_per_aspect(system, light=light)
            assert len(set(codes)) == 8, (system, light, codes)


def _luminance(c: Color) -> float:
    def channel(v: int) -> float:
        x = v / 255
        return x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4

    t = c.get_truecolor()
    return 0.2126 * channel(t.red) + 0.7152 * channel(t.green) + 0.0722 * channel(t.blue)


def _contrast(a: Color, b: Color) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _backgrounds(dark: bool) -> list[Color]:
    out = []
    for theme in BUILTIN_THEMES.values():
        bg = theme.to_color_system().generate().get("background", "")
        if theme.dark == dark and bg.startswith("#"):
            out.append(Color.parse(bg))
    return out


def test_each_palette_reads_on_its_themes_backgrounds() -> None:
    for palette, dark, floor in ((ASPECT_COLORS_LIGHT, False, 3.3), (ASPECT_COLORS, True, 2.5)):
        bgs = _backgrounds(dark)
        assert bgs
        for colour in palette:
            worst = min(_contrast(Color.parse(colour), bg) for bg in bgs)
            assert worst >= floor, (colour, dark, worst)


def test_judge_levels_read_on_light_themes() -> None:
    bgs = _backgrounds(False)
    for style in LEVEL_COLORS_LIGHT.values():
        colour = Color.parse(style.split()[-1])
        assert min(_contrast(colour, bg) for bg in bgs) >= 3.0, style


def test_chips_text_reads_on_their_colour() -> None:
    for light in (False, True):
        chips = aspect_chips(EIGHT, mono=False, light=light)
        for span in chips.spans:
            style = chips.get_style_at_offset(Console(), span.start)
            assert style.color is not None and style.bgcolor is not None
            assert _contrast(style.color, style.bgcolor) >= 4.0, (light, str(style))


def _match_colours(app: object) -> set[str]:
    """The colours of the aspect matches in the first result row, as the table holds them."""
    cell = app.screen.query_one("#results", DataTable).get_cell_at((0, 3))  # type: ignore[attr-defined]
    return {str(s.style).split()[1] for s in cell.spans if "underline" in str(s.style)}


def test_the_app_on_a_light_theme_draws_aspects_that_read_on_it(papers_ingested: Path) -> None:
    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            await search(app, pilot, TRIPLET)
            assert _match_colours(app) <= set(ASPECT_COLORS)
            app.theme = "textual-light"  # as the command palette's theme picker sets it
            await until(pilot, lambda: _match_colours(app) and _match_colours(app) <= set(ASPECT_COLORS_LIGHT),
                        "the results in the light palette")
            background = Color.parse(BUILTIN_THEMES["textual-light"].to_color_system().generate()["background"])
            for colour in _match_colours(app):
                assert _contrast(Color.parse(colour), background) >= 3.3, colour
            table = app.screen.query_one("#results", DataTable)
            await until(pilot, lambda: str(table.get_cell_at((0, 1))).strip() not in ("", "…"), "a verdict")
            assert str(table.get_cell_at((0, 1)).style) in LEVEL_COLORS_LIGHT.values()
            chips = app.screen.query_one(AspectBar).chip_text(78)
            assert any(ASPECT_COLORS_LIGHT[0] in str(s.style) for s in chips.spans)
            app.theme = "textual-dark"
            await until(pilot, lambda: _match_colours(app) and _match_colours(app) <= set(ASPECT_COLORS),
                        "the results in the dark palette again")

    run(flow)


def test_a_theme_picked_in_the_app_is_kept_for_the_next_launch(papers_ingested: Path, tmp_path: Path) -> None:
    from evtui.config import load_config
    from evtui.tui.app import EvtuiApp

    async def pick() -> None:
        async with started((80, 24)) as (app, pilot):
            assert app.theme == "textual-dark"
            app.theme = "solarized-light"
            await pilot.pause()

    async def next_launch(expected: str) -> None:
        async with started((80, 24)) as (app, pilot):
            assert app.theme == expected
            await search(app, pilot, TRIPLET)
            assert _match_colours(app) <= set(ASPECT_COLORS_LIGHT if expected.endswith("light") else ASPECT_COLORS)

    run(pick)
    run(lambda: next_launch("solarized-light"))
    # config.toml's theme changed after the pick: the file wins again
    (tmp_path / "config.toml").write_text('theme = "nord"\n', encoding="utf-8")
    assert load_config().theme == "nord" and EvtuiApp(load_config()).theme == "nord"


def test_the_cli_takes_the_light_palette_on_a_terminal_that_says_it_is_light(monkeypatch: pytest.MonkeyPatch) -> None:
    mp = monkeypatch

    def colours() -> set[str]:
        return {str(s.style).split()[1] for s in highlight(TEXT, SPANS, EIGHT, mono=False).spans}

    mp.delenv("COLORFGBG", raising=False)
    assert colours() == set(ASPECT_COLORS)  # unknown background: as before
    mp.setenv("COLORFGBG", "0;15")  # black on white (rxvt, Konsole, iTerm2)
    assert colours() == set(ASPECT_COLORS_LIGHT)
    mp.setenv("COLORFGBG", "15;default;0")  # white on black
    assert colours() == set(ASPECT_COLORS)
