"""Shown while the library opens; on first launch with the demo enabled, the demo ingest's progress."""

from __future__ import annotations

import os

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Center, Middle, Vertical
from textual.screen import Screen
from textual.widgets import Label, ProgressBar, Static

from evtui.tui.messages import IngestStep
from evtui.tui.widgets.keybar import KeyBar


class LoadingScreen(Screen[None]):
    BINDINGS = [Binding("q", "app.quit", "Quit", id="loading.quit")]

    def compose(self) -> ComposeResult:
        with Middle(), Center(), Vertical(id="loading-box"):
            yield Label("evtui", id="loading-title")
            yield Static("opening the library…", id="loading-text")
            yield ProgressBar(id="loading-bar", show_eta=False)
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one(ProgressBar).display = False

    def step(self, msg: IngestStep) -> None:
        bar = self.query_one(ProgressBar)
        bar.display = True
        bar.update(total=msg.files_total or None, progress=msg.files_done)
        name = os.path.basename(msg.current)[-50:]
        self.query_one("#loading-text", Static).update(
            f"loading the demo library: file {msg.files_done}/{msg.files_total} · {msg.papers_seen:,} papers"
            + (f" · {name}" if name else ""))

    def failed(self, reason: str) -> None:
        self.query_one(ProgressBar).display = False
        self.query_one("#loading-text", Static).update(
            Text.assemble(("cannot open the library\n", "bold red"), (reason, "red"), ("\n\nq quits", "dim")))
