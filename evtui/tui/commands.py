"""The command palette (ctrl+p): every action of every screen, by its description, runnable from anywhere."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any, cast

from textual.app import App
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider

from evtui.tui.base import AppServices


def _bindings(cls: type) -> list[Binding]:
    return [b for b in getattr(cls, "BINDINGS", []) if isinstance(b, Binding)]


def key_names(app: App[Any], b: Binding) -> str:
    """"? / f1" for a binding of "question_mark,f1" (Textual displays a multi-key binding's raw names)."""
    return " / ".join(app.get_key_display(Binding(k.strip(), b.action)) for k in b.key.split(",") if k.strip())


class EvtuiCommands(Provider):
    """One command per Binding: the app's, each mode screen's, and the screen on top (the reader, say)."""

    def commands(self) -> Iterator[tuple[str, Callable[[], object], str]]:
        app = self.app
        services = cast("AppServices", app)
        seen: set[str] = set()
        for b in _bindings(type(app)):
            if b.action == "command_palette":
                continue
            name = f"{b.description}"
            seen.add(name)
            yield name, partial(app.run_action, b.action), f"{key_names(app, b)} · everywhere"
        top = self.screen
        top_cls = type(top)
        modes = services.mode_screens()
        for mode, screen_cls in modes.items():
            for b in _bindings(screen_cls):
                name = f"{mode.title()}: {b.description}"
                if name in seen:
                    continue
                seen.add(name)
                if top_cls is screen_cls:
                    yield name, partial(app.run_action, b.action, top), f"{key_names(app, b)}"
                else:
                    yield name, partial(services.run_in_mode, mode, b.action), f"{key_names(app, b)} · {mode}"
        if top_cls not in modes.values():
            title = top_cls.__name__.removesuffix("Screen")
            for b in _bindings(top_cls):
                name = f"{title}: {b.description}"
                if name not in seen:
                    seen.add(name)
                    yield name, partial(app.run_action, b.action, top), key_names(app, b)

    async def discover(self) -> Hits:
        for name, callback, help_text in self.commands():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, callback, help_text in self.commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
