"""Reading the benchmarks' JSON Lines files (claims, predictions): one object per line, blank lines skipped, each
object checked where it stands so an error names its line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evtui.errors import EvtuiError

NESTING_HINT = "arrays or objects inside each other past Python's limit: not a benchmark file"


def read_json_lines(path: Path, what: str, check: Callable[[Any, str], None], *,
                    unique: str | None = None) -> list[dict[str, Any]]:
    """Every object of the file; `check(obj, "<path> line N")` raises for one that is not a `what`.

    A byte-order mark (a file saved by a Windows editor) and CRLF line ends are read as the file's text. `unique`
    names a field (a claim's `id`) that no two objects may share, compared as text as the harness keys items: a
    repeated id would silently keep one of the two claims' answers and score the other's."""
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    try:
        with path.open(encoding="utf-8-sig") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                    check(obj, f"{path} line {lineno}")
                except json.JSONDecodeError as exc:  # its own position is within the line: name the file's line
                    raise EvtuiError(f"cannot read {what} {path}: line {lineno} is not JSON ({exc.msg})") from exc
                except RecursionError:  # `[` a hundred thousand times: Python's decoder gives up, not evtui
                    raise EvtuiError(f"cannot read {what} {path}: line {lineno} is nested too deeply "
                                     f"({NESTING_HINT})") from None
                if unique is not None and isinstance(obj, dict) and unique in obj:
                    key = str(obj[unique])
                    if key in seen:
                        raise EvtuiError(f"{path} line {lineno}: {unique} {obj[unique]!r} is already on line "
                                         f"{seen[key]} (ids are compared as text, so 2 and \"2\" are the same): "
                                         f"give each {unique} once")
                    seen[key] = lineno
                rows.append(obj)
    except (OSError, UnicodeDecodeError) as exc:
        raise EvtuiError(f"cannot read {what} {path}: {exc}") from exc
    return rows
