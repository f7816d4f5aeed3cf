"""The query's aspects as coloured chips the user can edit, drop or add before searching."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from evtui.models import Aspect
from evtui.render import chip_style
from evtui.tui.data import flow, light_theme


class AspectBar(Widget, can_focus=True):
    """One chip per aspect, in the aspect's colour (the colour its matches have everywhere)."""

    BINDINGS = [
        Binding("left,h", "move(-1)", "Previous aspect", show=False, id="chips.previous"),
        Binding("right", "move(1)", "Next aspect", show=False, id="chips.next"),
        Binding("enter", "edit", "Edit aspect", id="chips.edit"),
        Binding("d,delete", "drop", "Drop aspect", id="chips.drop"),
        Binding("a,plus", "add", "Add aspect", id="chips.add"),
        # enter edits the chip, so "enter searches with them" sent a user back into the dialog they had just saved
        Binding("s", "search", "Search with these", id="chips.search"),
    ]

    cursor: reactive[int] = reactive(0)

    class EditRequested(Message):
        """The user wants to edit aspect `index` (-1: a new aspect)."""

        def __init__(self, bar: AspectBar, index: int) -> None:
            super().__init__()
            self.bar = bar
            self.index = index

    class SearchRequested(Message):
        """The user wants the results for the aspects as they are now."""

        def __init__(self, bar: AspectBar) -> None:
            super().__init__()
            self.bar = bar

    class Changed(Message):
        def __init__(self, bar: AspectBar) -> None:
            super().__init__()
            self.bar = bar

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.aspects: list[Aspect] = []
        self.mode = ""
        self.edited = False
        self.note = ""

    def set_aspects(self, aspects: list[Aspect], mode: str, *, edited: bool = False) -> None:
        new = [Aspect(a.id, a.label, list(a.terms), a.role) for a in aspects]
        if new == self.aspects and mode == self.mode and edited == self.edited:
            return  # unchanged (the live parse already showed them): no layout pass
        self.aspects = new
        self.mode = mode
        self.edited = edited
        self.cursor = min(self.cursor, max(0, len(self.aspects) - 1))
        self.refresh(layout=True)

    def clear(self, note: str = "") -> None:
        self.aspects = []
        self.mode = ""
        self.edited = False
        self.note = note
        self.refresh(layout=True)

    HINTS = ("  ←/→ pick · enter edit · d drop · a add · s search", "  ←/→ pick · s search", "  ←/→ pick")  # the longest that fits is shown

    def render(self) -> Text:
        return self.chip_text(self.size.width)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        # measured on the lines chip_text lays out for this width (Textual's cache may hold the last width's)
        return len(self.chip_text(width).wrap(self.app.console, width)) if width else 0

    def chip_text(self, width: int) -> Text:
        """The chips, each whole on its line (a long query's chips no longer break "a8:" from "reduce"), and, when
        focused, the key hint where it fits whole on the last line (the key bar has the keys too)."""
        if not self.aspects:
            return Text(self.note or "aspects appear here as you type", style="dim")
        chips: list[Text] = []
        for i, a in enumerate(self.aspects):
            style = chip_style(i, mono=self.app.no_color, light=light_theme(self.app))
            picked = self.has_focus and i == self.cursor
            if picked and not self.app.no_color:
                style += " underline reverse"
            # without colour the chip's attributes are its aspect's legend: the picked one gets a pointer instead
            chips.append(Text(f"{'▸' if picked and self.app.no_color else ' '}{a.id}: {a.label} ", style=style))
        if self.edited:
            chips[0] = Text.assemble(("edited ", "bold yellow"), chips[0])
        out = flow(chips, width)
        if self.has_focus:
            last = out.plain.rsplit("\n", 1)[-1]
            hint = next((h for h in self.HINTS if not width or cell_len(last) + len(h) <= width), "")
            out.append(hint, style="dim")
        return out

    def watch_cursor(self) -> None:
        self.refresh()

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def action_move(self, delta: int) -> None:
        if self.aspects:
            self.cursor = (self.cursor + delta) % len(self.aspects)

    def action_edit(self) -> None:
        if self.aspects:
            self.post_message(self.EditRequested(self, self.cursor))

    def action_search(self) -> None:
        if self.aspects:
            self.post_message(self.SearchRequested(self))

    def action_add(self) -> None:
        self.post_message(self.EditRequested(self, -1))

    def action_drop(self) -> None:
        if len(self.aspects) <= 1:
            self.app.notify("a query needs at least one aspect", title="Aspects", severity="warning")
            return
        del self.aspects[self.cursor]
        self.cursor = min(self.cursor, len(self.aspects) - 1)
        self.edited = True
        self.refresh(layout=True)
        self.post_message(self.Changed(self))

    def replace(self, index: int, aspect: Aspect) -> None:
        if index < 0:
            self.aspects.append(aspect)
            self.cursor = len(self.aspects) - 1
        else:
            self.aspects[index] = aspect
        self.edited = True
        self.refresh(layout=True)
        self.post_message(self.Changed(self))

    def new_id(self) -> str:
        taken = {a.id for a in self.aspects}
        n = 1
        while f"u{n}" in taken:
            n += 1
        return f"u{n}"
