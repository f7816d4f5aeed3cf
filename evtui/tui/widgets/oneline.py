"""An Input that keeps every line of a paste: text copied from a PDF or a web page wraps, and Textual's Input keeps
only the first line of a paste, so "aspirin reduces<newline>colorectal cancer" searched for "aspirin reduces"."""

from __future__ import annotations

from textual import events
from textual.widgets import Input


def one_line(text: str) -> str:
    """`text`'s lines joined by single spaces (blank lines and the breaks' own indentation dropped)."""
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


class OneLineInput(Input):
    def _on_paste(self, event: events.Paste) -> None:
        if len(event.text.splitlines()) < 2:
            return  # one line: Input's own handler (Textual calls each class's _on_paste in turn)
        # \r\n, \n, \r, U+2028 ...: each break becomes one space; prevent_default keeps Input's from adding line 1
        event.prevent_default()
        event.stop()
        text = one_line(event.text)
        if self.selection.is_empty:
            self.insert_text_at_cursor(text)
        else:
            self.replace(text, *self.selection)
