"""Filesystem completion for path inputs (→ or tab accepts the suggestion)."""

from __future__ import annotations

import os
from pathlib import Path

from textual.suggester import Suggester


def complete_path(value: str, *, files: bool = True) -> str | None:
    """The first entry that extends what was typed: the longest common prefix of all matches when several
    match, the whole name (with a trailing '/' for folders) when one does."""
    if not value:
        return None
    expanded = os.path.expanduser(value)
    folder, prefix = os.path.split(expanded)
    base = Path(folder or ".")
    try:
        names = sorted(
            e.name + ("/" if e.is_dir() else "")
            for e in os.scandir(base)
            if e.name.startswith(prefix) and (prefix.startswith(".") or not e.name.startswith("."))
            and (files or e.is_dir())
        )
    except OSError:
        return None
    if not names:
        return None
    common = os.path.commonprefix(names) if len(names) > 1 else names[0]
    if len(common) <= len(prefix):
        common = names[0]
    completion = value + common[len(prefix):]
    return completion if completion != value else None


class PathSuggester(Suggester):
    def __init__(self, *, files: bool = True) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.files = files

    async def get_suggestion(self, value: str) -> str | None:
        return complete_path(value, files=self.files)
