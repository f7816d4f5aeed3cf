"""A progress bar that, once its work is over, says so: Textual's ETA reads "--:--:--" for ever after the last
step (no estimate is left to give), which looks like work still under way. `finish` swaps it for the outcome."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Label, ProgressBar


def elapsed(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02}m{secs:02}s" if hours else f"{minutes}m{secs:02}s"


class RunBar(ProgressBar):
    DEFAULT_CSS = """
    RunBar > #outcome { width: auto; padding-left: 1; display: none; }
    """

    def compose(self) -> ComposeResult:
        yield from super().compose()
        yield Label(id="outcome")

    def start(self, total: float | None = None) -> None:
        """A new run: the bar empty and the time left counting again."""
        self._outcome(None)
        self.update(total=total, progress=0)

    def finish(self, seconds: float, word: str = "done", *, note: str = "", complete: bool = True) -> None:
        """The run is over: `word`, how long it took and a `note` where the time left was (the bar full if
        `complete`)."""
        if complete:
            total = self.total or 1
            self.update(total=total, progress=total)
        self._outcome(f"{word} in {elapsed(seconds)}" + (f" · {note}" if note else ""))

    def fail(self, word: str = "failed") -> None:
        self._outcome(word)

    def _outcome(self, text: str | None) -> None:
        for eta in self.query("#eta"):
            eta.display = text is None
        outcome = self.query_one("#outcome", Label)
        outcome.update(text or "")
        outcome.display = text is not None
