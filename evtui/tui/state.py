"""What the app remembers between runs that is no library data: export options, the query history.

One small JSON file in the data home, written atomically; a missing or damaged file is an empty state (it is a
convenience, never worth an error)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

STATE_FILE = "tui-state.json"
HISTORY_MAX = 200


class UiState:
    def __init__(self, home: Path) -> None:
        self.path = home / STATE_FILE
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        self.data: dict[str, Any] = data if isinstance(data, dict) else {}

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def set(self, key: str, value: Any) -> None:
        self.data[key] = value
        self.save()

    def history(self) -> list[str]:
        h = self.data.get("history")
        return [x for x in h if isinstance(x, str)] if isinstance(h, list) else []

    def remember_query(self, text: str) -> None:
        text = " ".join(text.split())
        if not text:
            return
        h = [x for x in self.history() if x != text] + [text]
        self.set("history", h[-HISTORY_MAX:])

    def save(self) -> None:
        try:
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".tui-state.", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self.data, fh, ensure_ascii=False)
            os.replace(tmp, self.path)
        except OSError:
            pass  # a read-only data home: remembered for this run only
