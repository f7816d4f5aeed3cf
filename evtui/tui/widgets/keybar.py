"""The key bar at the bottom of every screen: the active bindings with their descriptions, on one line.

Textual's Footer mounts a widget per key and re-mounts them all whenever focus moves (about 40 ms a time on a
small machine, paid on every search as focus goes from the query bar to the results). This is one Static that
re-renders its line; clicking a key or its description presses that key, as in the Footer.
"""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.screen import Screen
from textual.widgets import Static


class KeyBar(Static):
    DEFAULT_CSS = """
    KeyBar { dock: bottom; height: 1; background: $footer-background; color: $footer-foreground;
             text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.spans: list[tuple[int, int, str]] = []  # (start, end, key) of each item on the line

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)
        self.bindings_changed(self.screen)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def bindings_changed(self, screen: Screen[object]) -> None:
        if not self.is_attached or screen is not self.screen:
            return
        variables = self.app.theme_variables
        key_style = f"bold {variables.get('footer-key-foreground', variables.get('accent', 'orange'))}"
        off_style = "dim"  # a disabled key (check_action None); the theme's text-disabled ("auto 38%") is no Rich style
        items: list[tuple[str, str, str, str]] = []
        seen: set[tuple[str, str]] = set()
        palette = None
        for key, active in screen.active_bindings.items():
            b = active.binding
            if b.action in ("command_palette", "app.command_palette"):
                palette = (key, self.app.get_key_display(b), "palette", key_style)
                continue
            if not b.show or (b.action, b.description) in seen:
                continue
            seen.add((b.action, b.description))
            items.append((key, self.app.get_key_display(b), b.description, key_style if active.enabled else off_style))
        if palette is not None:
            items.append(palette)
        line = Text(no_wrap=True, overflow="ellipsis")
        self.spans = []
        for key, display, description, style in items:
            start = len(line)
            line.append(f" {display}", style=style)
            line.append(f" {description} ")
            self.spans.append((start, len(line), key))
            line.append(" ")
        self.update(line, layout=False)

    def on_click(self, event: events.Click) -> None:
        for start, end, key in self.spans:
            if start <= event.x < end:
                self.app.simulate_key(key)
                return
