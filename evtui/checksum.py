"""The sha256 of a shipped file, checked against the one its manifest (model.json) records before it is loaded."""

from __future__ import annotations

import hashlib
from pathlib import Path

from evtui.errors import EvtuiError


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def checked_file(path: Path, expected: str, what: str) -> Path:
    """`path`, once it exists and matches `expected`; otherwise a one-line error naming `what` it is."""
    if not path.is_file():
        raise EvtuiError(f"the {what} {path} is missing; reinstall evtui")
    digest = sha256_file(path)
    if digest != expected:
        raise EvtuiError(f"the {what} {path} does not match its sha256 in model.json "
                         f"({digest[:12]} != {expected[:12]}); reinstall evtui")
    return path
