"""Rich rendering shared by the CLI and the TUI: one colour per aspect, used everywhere. Rich is imported by the
functions that draw, not with the module: a CLI verb that only prints JSON (json_text) never loads it."""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.measure import Measurement
    from rich.text import Text

    from evtui.models import Aspect, Span

# C0 controls but tab and newline, DEL and C1: an ESC or an OSC in a paper's title or an LLM's rationale would
# reach the terminal raw (retitle it, move the cursor, rewrite what is shown). Replaced one for one, so the
# highlight offsets into the stored text stay exact; the stored text keeps them.
# Bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069) are replaced too: a U+202E in a
# title shows the rest of the line reversed, so a file name or a figure reads as another ("Trojan Source").
_BIDI = "\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")
_CONTROL_OR_BREAK = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{_BIDI}]")
# What JSON (with ensure_ascii=False) leaves raw that a terminal acts on: C1 controls (U+009B is an 8-bit CSI),
# bidi controls and the line/paragraph separators. Escaped as \uXXXX, the document decodes to the same text.
_JSON_RAW = re.compile(f"[\x7f-\x9f\u2028\u2029{_BIDI}]")


def json_text(obj: object, **kwargs: object) -> str:
    """json.dumps(obj, ensure_ascii=False, **kwargs) with every character a terminal would act on escaped: the
    same JSON to a parser, harmless on a screen. Every JSON document evtui prints goes through this."""
    import json

    text = json.dumps(obj, ensure_ascii=False, **kwargs)  # type: ignore[arg-type]
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def printable(text: object, *, oneline: bool = False) -> str:
    """`text` safe to show on a terminal: control characters become spaces (newlines and tabs too when
    `oneline`). Every string from a paper, a file name or an LLM goes through this before it is displayed."""
    s = text if isinstance(text, str) else "" if text is None else str(text)
    return (_CONTROL_OR_BREAK if oneline else _CONTROL).sub(" ", s)


def safe(text: object, *, oneline: bool = False) -> str:
    """`text` for a Rich markup string: printable, and its [brackets] escaped ("[/]" in a title, "[letter]")."""
    from rich.markup import escape

    return escape(printable(text, oneline=oneline))


def plain(text: object, style: str = "", *, oneline: bool = False) -> Text:
    """`text` as a Rich Text that is never read as markup (table cells: a str cell is parsed as markup)."""
    from rich.text import Text

    return Text(printable(text, oneline=oneline), style=style)


def safe_text(text: Text) -> Text:
    """A Text with its control characters replaced in place (same length, so its styles stay where they were)."""
    if _CONTROL.search(text.plain):
        text.plain = _CONTROL.sub(" ", text.plain)
    return text


def cell(value: object) -> object:
    """A table cell that is safe to show: a str becomes plain Text, a Text loses its control characters."""
    from rich.text import Text

    if isinstance(value, str):
        return plain(value)
    return safe_text(value) if isinstance(value, Text) else value

# Aspect i always gets colour i. Two palettes, each of eight colours that stay eight where the terminal has 256
# colours or only 16 (each maps to another of the 16 ANSI colours: at 16 colours orange and red used to both become
# bright red). DARK (the CLI, the app's dark themes): bright, at least 2.5:1 on every dark theme's background.
# LIGHT (the app's light themes): deep, at least 3.3:1 on every light theme's background, where DARK's yellow, cyan
# and green all but vanished.
ASPECT_COLORS: tuple[str, ...] = (
    "#d78700", "#5f87ff", "#5fd75f", "#d75fd7", "#ffd700", "#ff5f5f", "#5fd7d7", "#af00ff",
)
ASPECT_COLORS_LIGHT: tuple[str, ...] = (
    "#a85a00", "#005fd7", "#007f00", "#af00af", "#7a5c3a", "#d70000", "#007a7a", "#3f00c0",
)
# A chip's text on its aspect's colour: black reads on DARK's bright colours, white on LIGHT's deep ones.
CHIP_INK = {False: "black", True: "#ffffff"}
# Without colour (NO_COLOR, or the app's monochrome mode) every aspect's matches looked alike: each aspect gets its
# own text attributes instead, and its chip is drawn in them, so the chips are the legend. The first three (a
# triplet's) are the attributes nearly every terminal draws.
ASPECT_MARKS: tuple[str, ...] = (
    "underline", "reverse", "italic", "underline italic", "reverse italic", "reverse underline", "strike",
    "strike italic",
)


def no_color() -> bool:
    """NO_COLOR is set and not empty (no-color.org, as Rich reads it): the CLI's output has no colour."""
    return os.environ.get("NO_COLOR", "") != ""


def light_terminal() -> bool:
    """The terminal says its background is light: COLORFGBG ("0;15": black on white; set by rxvt, Konsole, iTerm2
    and others) names background 7 or 15. The CLI then prints the LIGHT palette; unset, DARK as before."""
    bg = os.environ.get("COLORFGBG", "").rsplit(";", 1)[-1].strip()
    return bg in ("7", "15")


def aspect_color(index: int, *, light: bool = False) -> str:
    """Aspect `index`'s colour; `light`: the palette for a light background."""
    palette = ASPECT_COLORS_LIGHT if light else ASPECT_COLORS
    return palette[index % len(palette)]


def aspect_mark(index: int) -> str:
    return ASPECT_MARKS[index % len(ASPECT_MARKS)]


def aspect_styles(aspects: Sequence[Aspect], *, mono: bool | None = None,
                  light: bool | None = None) -> dict[str, str]:
    """Each aspect's highlight style: its colour, or (`mono`; None: NO_COLOR decides) its text attributes. `light`:
    the palette for a light background (None: the terminal's COLORFGBG decides)."""
    mono = no_color() if mono is None else mono
    light = light_terminal() if light is None else light
    return {a.id: f"bold {aspect_mark(i)}" if mono else f"bold {aspect_color(i, light=light)} underline"
            for i, a in enumerate(aspects)}


def chip_style(index: int, *, mono: bool | None = None, light: bool | None = None) -> str:
    """Aspect `index`'s chip: its ink on its colour, or (`mono`) drawn in the attributes its matches have."""
    mono = no_color() if mono is None else mono
    light = light_terminal() if light is None else light
    return f"bold {aspect_mark(index)}" if mono else f"bold {CHIP_INK[light]} on {aspect_color(index, light=light)}"


def highlight(text: str, spans: Sequence[Span], aspects: Sequence[Aspect], base_style: str = "", *,
              mono: bool | None = None, light: bool | None = None) -> Text:
    """The sentence with each aspect's matches in its colour, or its attributes when `mono` (later spans win
    where aspects overlap)."""
    from rich.text import Text

    styles = aspect_styles(aspects, mono=mono, light=light)
    out = Text(printable(text), style=base_style)
    for s in spans:
        style = styles.get(s.aspect)
        if style and 0 <= s.start < s.end <= len(text):
            out.stylize(style, s.start, s.end)
    return out


def aspect_chips(aspects: Sequence[Aspect], *, mono: bool | None = None, light: bool | None = None) -> Text:
    from rich.text import Text

    out = Text()
    for i, a in enumerate(aspects):
        if i:
            out.append("  ")
        out.append(f" {a.id}: {printable(a.label, oneline=True)} ", style=chip_style(i, mono=mono, light=light))
    return out


def coverage_marker(spans: Sequence[Span], aspects: Sequence[Aspect], partly: Collection[str] = (), *,
                    light: bool | None = None) -> Text:
    """One dot per aspect: filled in the aspect's colour when the sentence matches it, half-filled for the ids in
    `partly` (concepts it mentions only in part, as the result filter counts them: evtui.honest.in_part)."""
    from rich.text import Text

    light = light_terminal() if light is None else light
    hit = {s.aspect for s in spans}
    part = set(partly)
    out = Text()
    for i, a in enumerate(aspects):
        if a.id in hit:
            out.append("●", style=aspect_color(i, light=light))
        elif a.id in part:
            out.append("◐", style=aspect_color(i, light=light))
        else:
            out.append("○", style="dim")
    return out


def short(text: str, width: int) -> str:
    """One line of at most `width` characters, without control characters (still a str: wrap it in plain()
    where markup could be read)."""
    text = " ".join(printable(text, oneline=True).split())
    return text if len(text) <= width else text[: max(1, width - 1)] + "…"


def bar(value: float, total: float, width: int, style: str) -> Text:
    """A horizontal bar with eighth-block resolution."""
    from rich.text import Text

    frac = 0.0 if total <= 0 else max(0.0, min(1.0, value / total))
    eighths = int(round(frac * width * 8))
    full, rest = divmod(eighths, 8)
    out = Text("█" * full, style=style)
    if rest:
        out.append(" ▏▎▍▌▋▊▉"[rest], style=style)
    out.append(" " * max(0, width - full - (1 if rest else 0)))
    return out


class TailKept:
    """`text` wrapped to the width it is given, with `tail` after it on its last line when the whole tail fits there,
    else on a line of its own: a group such as "(P support 0.68 · refute 0.23)" is never split across lines (Rich
    breaks at any whitespace, a no-break space included, so the group cannot be glued with characters alone)."""

    def __init__(self, text: Text, tail: Text, sep: str = "  ") -> None:
        self.text = text
        self.tail = tail
        self.sep = sep

    def joined(self, console: Console, width: int) -> Text:
        from rich.cells import cell_len

        lines = self.text.wrap(console, max(1, width), justify="left", overflow="fold")
        last = lines[-1].plain.rstrip() if len(lines) else ""
        fits = cell_len(last) + len(self.sep) + self.tail.cell_len <= width
        out = self.text.copy()
        out.append(self.sep if fits or not self.text.plain else "\n")
        out.append_text(self.tail)
        return out

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.joined(console, options.max_width)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        from rich.measure import Measurement
        from rich.text import Text

        return Measurement.get(console, options, self.text + Text(self.sep) + self.tail)
