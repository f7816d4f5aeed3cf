"""Where evtui may write a file the user named (`export --out`, `verify --out`, `bench runs --csv`, the app's
Export): never inside the data home, where it would replace the library's database, index or runs, and never onto
a file the same command reads. Paths are compared as the file system sees them (`..`, symbolic links, another
spelling of the same folder on a case-insensitive disk, a bind mount): by resolved path and by device and inode."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from evtui.errors import EvtuiError


def _key(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def _real(path: Path) -> Path:
    """`path` made absolute with `..` and every symbolic link resolved, the parts that exist and a link at the end
    too (a link whose target is in the home is refused, whatever the writer would do with it)."""
    return Path(os.path.realpath(path.expanduser()))


def inside(path: Path, folder: Path) -> bool:
    """Whether `path` (existing or not) is `folder` or lies anywhere under it."""
    real, home = _real(path), _real(folder)
    if real == home or real.is_relative_to(home):
        return True
    want = _key(str(home))
    if want is None:
        return False
    for anc in (real, *real.parents):  # the nearest existing folder above decides, under any spelling
        key = _key(str(anc))
        if key == want:
            return True
    return False


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file: one path resolved, or one inode (a hard link)."""
    if _real(a) == _real(b):
        return True
    ka = _key(str(a.expanduser()))
    return ka is not None and ka == _key(str(b.expanduser()))


def check_output(out: Path, home: Path, *, flag: str = "", inputs: Sequence[tuple[str, Path]] = ()) -> None:
    """Raise EvtuiError (one line) when `out` is inside the data home `home` or is one of `inputs` ((flag, path)
    pairs the same command reads): writing it would replace what the user keeps."""
    named = f"{flag} {out}".strip()  # no flag in the app: "/path is inside ..."
    if inside(out, home):
        raise EvtuiError(f"{named} is inside the data home ({home}), where it could replace the library's own "
                         "files: write it somewhere else")
    for name, path in inputs:
        if same_file(out, path):
            raise EvtuiError(f"{named} is the file {name} reads: writing it would replace that input; give "
                             "another file name")
