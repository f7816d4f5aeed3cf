"""Reading the benchmarks' JSON Lines files (claims, predictions): one object per line, blank lines skipped, each
object checked where it stands so an error names its line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evtui.errors import EvtuiError


def read_json_lines(path: Path, what: str, check: Callable[[Any, str], None]) -> list[dict[str, Any]]:
    """Every object of the file; `check(obj, "<path> line N")` raises for one that is not a `what`."""
    rows: list[dict[str, Any]] = []
    try:
        with path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:  # its own position is within the line: name the file's line
                    raise EvtuiError(f"cannot read {what} {path}: line {lineno} is not JSON ({exc.msg})") from exc
                check(obj, f"{path} line {lineno}")
                rows.append(obj)
    except (OSError, UnicodeDecodeError) as exc:
        raise EvtuiError(f"cannot read {what} {path}: {exc}") from exc
    return rows
