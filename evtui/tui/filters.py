"""Line filters: Textual's NO_COLOR greyscale, kept legible.

Under NO_COLOR Textual turns every colour into its grey by luminance, so text meant to stand out by hue sinks into
the background: "▼ refute" in red became grey 237 on grey 233, a low judge score's dim red vanished. This filter
greys the same way, then moves a foreground too close to its background's grey to light (on a dark background) or
dark (on a light one); the text keeps its attributes.
"""

from __future__ import annotations

import re
from functools import lru_cache

from rich.color import Color as RichColor
from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.filter import Monochrome, monochrome_style

MIN_CONTRAST = 0.45  # the least difference in lightness (0..1) between a text's grey and its background's
# Borders, scrollbars and the input's tall edge are drawn in box and block characters, some on purpose in their
# background's colour (a blurred input's edge): those are left as Textual greys them.
_DRAWING = re.compile("[\u2500-\u259f\u2800-\u28ff ]*")


def _grey(color: RichColor | None, fallback: Color) -> Color:
    return fallback if color is None or color.is_default else Color.from_rich_color(color).monochrome


@lru_cache(1024)
def legible_style(style: Style, background: Color) -> Style:
    """`style` in greys, its foreground at least MIN_CONTRAST away from its background."""
    mono = monochrome_style(style)
    if mono.color is None or mono.color.is_default:
        return mono
    back = _grey(mono.bgcolor, background.monochrome)
    fore = _grey(mono.color, back)
    if abs(fore.brightness - back.brightness) >= MIN_CONTRAST:
        return mono
    target = min(1.0, back.brightness + MIN_CONTRAST) if back.brightness < 0.5 else \
        max(0.0, back.brightness - MIN_CONTRAST)
    level = round(target * 255)
    return mono + Style(color=RichColor.from_rgb(level, level, level))


class LegibleMonochrome(Monochrome):
    """Monochrome, but no text is drawn in (nearly) its background's grey."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        return [Segment(text, None if style is None else
                        monochrome_style(style) if _DRAWING.fullmatch(text) else legible_style(style, background),
                        control)
                for text, style, control in segments]
