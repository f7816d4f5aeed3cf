"""The sha256 of a shipped file, checked against the one its manifest (model.json) records before it is loaded."""

from __future__ import annotations

from pathlib import Path

from evtui.errors import EvtuiError
from evtui.filehash import sha256_file

__all__ = ["checked_file", "sha256_file"]


def checked_file(path: Path, expected: str, what: str) -> Path:
    """`path`, once it exists and matches `expected`; otherwise a one-line error naming `what` it is."""
    if not path.is_file():
        raise EvtuiError(f"the {what} {path} is missing; reinstall evtui")
    digest = sha256_file(path)
    if digest != expected:
        raise EvtuiError(f"the {what} {path} does not match its sha256 in model.json "
                         f"({digest[:12]} != {expected[:12]}); reinstall evtui")
    return path
