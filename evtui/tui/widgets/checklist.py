"""A SelectionList whose unticked boxes are empty: Textual draws every box with an X and tells ticked from unticked
by colour alone, so an unticked item read as ticked (a dim X), and without colour the two were the same."""

from __future__ import annotations

from typing import TypeVar

from rich.segment import Segment
from textual.binding import Binding
from textual.strip import Strip
from textual.widgets import SelectionList
from textual.widgets._toggle_button import ToggleButton
from textual.widgets.option_list import OptionDoesNotExist

T = TypeVar("T")


class CheckList(SelectionList[T]):
    """Ticked items show ✔ in the box; unticked ones an empty box. Space ticks, and the key bar says so: the Bench
    screen's task and method lists showed no key at all, so a keyboard user had no hint how to pick a method."""

    BINDINGS = [Binding("space", "select", "Tick", id="bench.tick")]
    TICK = "✔"

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        try:
            option = self.get_option_at_index(self.scroll_offset.y + y)
        except OptionDoesNotExist:
            return strip
        glyph = self.TICK if option.value in self.selected else " "
        segments = list(strip)
        # SelectionList draws [left edge, inner, right edge, " ", prompt…]: replace the inner glyph only
        if len(segments) > 1 and segments[1].text == ToggleButton.BUTTON_INNER:
            segments[1] = Segment(glyph, segments[1].style, segments[1].control)
            return Strip(segments, strip.cell_length)
        return strip
