"""The key bar at the bottom of every screen: the active bindings with their descriptions, on one line.

Textual's Footer mounts a widget per key and re-mounts them all whenever focus moves (about 40 ms a time on a
small machine, paid on every search as focus goes from the query bar to the results). This is one Static that
re-renders its line; clicking a key or its description presses that key, as in the Footer.
"""

from __future__ import annotations

import unicodedata
from contextlib import suppress
from typing import NamedTuple

from rich.text import Text
from textual import events
from textual.keys import KEY_NAME_REPLACEMENTS, key_to_character
from textual.screen import Screen
from textual.widgets import Static

# Shorter descriptions, used only when the full ones leave keys off a narrow bar (the help keeps the full ones).
SHORT: dict[str, str] = {
    "search.open": "Open", "search.results_only": "Results", "search.group": "Group",
    "search.verdicts": "Verdicts", "search.link": "Link",
    "library.find": "Find", "library.add": "Add", "library.remove": "Remove", "library.open": "Open",
    "library.embed": "Embed", "library.cancel_embed": "Cancel embedding",
    "export.up": "Up", "export.down": "Down", "export.raw": "Raw", "export.plain": "Plain",
    "export.open": "Open", "export.clear": "Clear",
    "bench.run": "Run", "bench.cancel": "Cancel", "bench.diff": "Diff marked", "bench.csv_close": "Close CSV",
    "reader.previous": "Prev hit",
}


def character(key: str) -> str | None:
    """The character a key types. Textual's key_to_character misses the keys it renames ("slash" for
    "solidus"), so its own bar lists "/ Query" while a text field has the focus and takes the "/"."""
    found = key_to_character(key)
    if found is None and "+" not in key:
        name = next((n for n, renamed in KEY_NAME_REPLACEMENTS.items() if renamed == key), None)
        with suppress(KeyError):
            found = unicodedata.lookup(name.replace("_", " ").upper()) if name else None
    return found


class Item(NamedTuple):
    key: str
    display: str
    description: str
    short: str
    style: str


def fit(own: list[Item], nav: list[Item], help_item: Item | None, palette: Item | None,
        width: int) -> tuple[Text, list[tuple[int, int, str]]]:
    """The line for `width` cells, loosest first: every key spaced out; closer together; with short descriptions;
    without the app's own keys (l b e q, the same on every screen), full then short; then the screen's least important keys
    left off. Help is always shown: it lists everything left off."""
    tail = [help_item] if help_item is not None else []
    everything = own + tail + nav + ([palette] if palette is not None else [])
    tries: list[tuple[list[Item], bool, bool]] = [
        (everything, False, False), (everything, True, False), (everything, True, True), (own + tail, True, False),
        (own + tail, True, True)]
    tries += [(own[:n] + tail, True, True) for n in range(len(own) - 1, -1, -1)]
    for items, compact, short in tries:
        line, spans = render(items, compact, short)
        if line.cell_len <= width:
            return line, spans
    return line, spans


def render(items: list[Item], compact: bool, short: bool) -> tuple[Text, list[tuple[int, int, str]]]:
    """Each item is " key description"; spaced out, one more space after each and two between them."""
    line = Text(no_wrap=True, overflow="ellipsis")
    spans: list[tuple[int, int, str]] = []
    for i, item in enumerate(items):
        if i:
            line.append(" ")
        start = len(line)
        line.append(f" {item.display}", style=item.style)
        line.append(f" {item.short if short else item.description}" + ("" if compact else " "))
        spans.append((start, len(line), item.key))
    return line, spans


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

    def on_resize(self) -> None:
        self.bindings_changed(self.screen)  # what fits depends on the width

    def bindings_changed(self, screen: Screen[object]) -> None:
        if not self.is_attached or screen is not self.screen:
            return
        variables = self.app.theme_variables
        key_style = f"bold {variables.get('footer-key-foreground', variables.get('accent', 'orange'))}"
        off_style = "dim"  # a disabled key (check_action None); the theme's text-disabled ("auto 38%") is no Rich style
        own: list[Item] = []  # the screen's and the focused widget's keys, in their order of importance
        nav: list[Item] = []  # the app's keys, the same on every screen
        help_item: Item | None = None
        palette: Item | None = None
        seen: set[tuple[str, str]] = set()
        focused = screen.focused
        for key, active in screen.active_bindings.items():
            b = active.binding
            if focused is not None and not b.priority and focused.check_consume_key(key, character(key)):
                continue  # typed into the focused field ("/" in a path), never reaching the binding
            if b.action in ("command_palette", "app.command_palette"):
                palette = Item(key, self.app.get_key_display(b), "palette", "palette", key_style)
                continue
            if not b.show or (b.action, b.description) in seen:
                continue
            seen.add((b.action, b.description))
            item = Item(key, self.app.get_key_display(b), b.description, SHORT.get(b.id or "", b.description),
                        key_style if active.enabled else off_style)
            if b.action in ("help", "app.help"):
                help_item = item
            elif active.node is self.app:
                nav.append(item)
            else:
                own.append(item)
        width = self.size.width or self.app.size.width
        line, self.spans = fit(own, nav, help_item, palette, width)
        self.update(line, layout=False)

    def on_click(self, event: events.Click) -> None:
        for start, end, key in self.spans:
            if start <= event.x < end:
                self.app.simulate_key(key)
                return
