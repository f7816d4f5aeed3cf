"""Shown while the library opens; on first launch with the demo enabled, the demo ingest's progress."""

from __future__ import annotations

import os
import time

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Center, Middle, Vertical
from textual.screen import Screen
from textual.widgets import Label, ProgressBar, Static

from evtui.demo import demo_papers
from evtui.tui.messages import IngestStep
from evtui.tui.widgets.keybar import KeyBar


def time_left(seconds: float) -> str:
    if seconds < 10:
        return "a few seconds left"
    if seconds < 90:
        return f"about {round(seconds / 5) * 5:.0f} s left"
    return f"about {round(seconds / 60):.0f} min left"


class LoadingScreen(Screen[None]):
    BINDINGS = [Binding("q", "app.quit", "Quit", id="loading.quit")]

    def __init__(self) -> None:
        super().__init__()
        self._total: int | None = None  # the demo's papers, counted at its first step
        self._start: tuple[float, int] | None = None  # (when, papers) of the first step that read any
        self._said = ""  # what opening is doing (say), if not the default

    def compose(self) -> ComposeResult:
        with Middle(), Center(), Vertical(id="loading-box"):
            yield Label("evtui", id="loading-title")
            yield Static("opening the library…", id="loading-text")
            yield ProgressBar(id="loading-bar", show_eta=False)
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one(ProgressBar).display = False
        if self._said:
            self.say(self._said)

    def step(self, msg: IngestStep) -> None:
        if self._total is None:
            self._total = demo_papers()
        bar = self.query_one(ProgressBar)
        bar.display = True
        name = os.path.basename(msg.current)[-50:]
        total = max(self._total, msg.papers_seen)
        if not total:  # no count (an unusual demo folder): by files, as the ingest reports them
            bar.update(total=msg.files_total or None, progress=msg.files_done)
            head = f"file {msg.files_done}/{msg.files_total} · {msg.papers_seen:,} papers"
        else:
            # Papers, not files: the demo's last file holds three quarters of its papers.
            bar.update(total=total, progress=msg.papers_seen)
            head = f"{msg.papers_seen:,} of {total:,} papers"
            now = time.monotonic()
            if self._start is None:
                self._start = (now, msg.papers_seen)
            elif msg.papers_seen > self._start[1] and msg.papers_seen < total:
                rate = (msg.papers_seen - self._start[1]) / max(now - self._start[0], 1e-6)
                head += f" · {time_left((total - msg.papers_seen) / rate)}"
        self.query_one("#loading-text", Static).update(
            f"first launch: loading the demo library\n{head}" + (f"\nreading {name}" if name else ""))

    def say(self, text: str) -> None:
        """What opening is doing, where it takes long (rebuilding a missing search index); kept for the mount when
        said before it."""
        self._said = text
        for shown in self.query("#loading-text").results(Static):
            shown.update(Text(text))

    def failed(self, reason: str) -> None:
        self.query_one(ProgressBar).display = False
        self.query_one("#loading-text", Static).update(
            Text.assemble(("cannot open the library\n", "bold red"), (reason, "red"), ("\n\nq quits", "dim")))
