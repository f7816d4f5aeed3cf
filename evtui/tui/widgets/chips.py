"""The query's aspects as coloured chips the user can edit, drop or add before searching."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from evtui.models import Aspect
from evtui.render import aspect_color


class AspectBar(Widget, can_focus=True):
    """One chip per aspect, in the aspect's colour (the colour its matches have everywhere)."""

    BINDINGS = [
        Binding("left,h", "move(-1)", "Previous aspect", show=False, id="chips.previous"),
        Binding("right", "move(1)", "Next aspect", show=False, id="chips.next"),
        Binding("enter", "edit", "Edit aspect", id="chips.edit"),
        Binding("d,delete", "drop", "Drop aspect", id="chips.drop"),
        Binding("a,plus", "add", "Add aspect", id="chips.add"),
    ]

    cursor: reactive[int] = reactive(0)

    class EditRequested(Message):
        """The user wants to edit aspect `index` (-1: a new aspect)."""

        def __init__(self, bar: AspectBar, index: int) -> None:
            super().__init__()
            self.bar = bar
            self.index = index

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

    def render(self) -> Text:
        out = Text(no_wrap=False)
        if not self.aspects:
            out.append(self.note or "aspects appear here as you type", style="dim")
            return out
        if self.edited:
            out.append("edited ", style="bold yellow")
        for i, a in enumerate(self.aspects):
            if i:
                out.append(" ")
            style = f"bold black on {aspect_color(i)}"
            if self.has_focus and i == self.cursor:
                style += " underline reverse"
            out.append(f" {a.id}: {a.label} ", style=style)
        if self.has_focus:
            out.append("  ←/→ pick · enter edit · d drop · a add", style="dim")
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
