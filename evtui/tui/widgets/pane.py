"""A scrollable pane of rich text that updates without a layout pass (a Static in a scroll container re-lays out
the whole screen on every update; this repaints only itself, which keeps cursor moves in the results fast)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import RichLog

from evtui.render import plain, safe_text


class TextPane(RichLog):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, wrap=True, markup=False, highlight=False, auto_scroll=False, min_width=20)
        self.text = Text()

    def show(self, text: Text | str) -> None:
        self.text = safe_text(text) if isinstance(text, Text) else plain(text)  # no raw escapes to the terminal
        self.clear()
        self.write(self.text, shrink=True, expand=True, scroll_end=False)
        self.scroll_home(animate=False, immediate=True)

    def on_resize(self) -> None:
        if self.text.plain:
            self.show(self.text)
