"""Damage to a library's files, told apart from a busy library, and turned into a repair or a clear message.

The Tantivy index is derived data: DuckDB holds every sentence, so a damaged index (garbage in meta.json, a
deleted or truncated segment file) is removed and rebuilt from DuckDB by the next writable open. DuckDB is the
record itself: its damage is reported with what to do, never repaired by guessing.
"""

from __future__ import annotations

import errno
import re
import shutil
from pathlib import Path

NO_SPACE = "the disk is full (no space left on device)"


def is_lock_error(exc: BaseException) -> bool:
    """Tantivy's "another writer holds this index" (the rest of its ValueErrors on open are damage)."""
    msg = str(exc)
    return "LockBusy" in msg or "Lockfile" in msg and not is_unwritable(exc)


def is_unwritable(exc: BaseException) -> bool:
    """Tantivy could not create its lock file: a read-only file system or a folder it may not write."""
    msg = str(exc)
    return any(m in msg for m in ("ReadOnlyFilesystem", "Read-only file system", "PermissionDenied",
                                  "Permission denied"))


def is_no_space(exc: BaseException) -> bool:
    """An out-of-space failure, from the OS or wrapped in a Tantivy or DuckDB message."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        msg = str(e).lower()
        if "no space left" in msg or "disk quota exceeded" in msg or "os error 28" in msg:
            return True
        e = e.__cause__ or e.__context__
    return False


def index_folders(index_path: Path) -> list[Path]:
    """The index folder and its siblings written with it (index-papers, ...)."""
    parent = index_path.parent
    if not parent.is_dir():
        return []
    return sorted(p for p in parent.iterdir()
                  if p.is_dir() and (p.name == index_path.name or p.name.startswith(index_path.name + "-")))


def remove_index(index_path: Path) -> None:
    """Delete the (damaged) index folders; the library rebuilds them from DuckDB."""
    for p in index_folders(index_path):
        shutil.rmtree(p, ignore_errors=True)


def short_reason(exc: BaseException, limit: int = 160) -> str:
    return _cut(str(exc), limit) or type(exc).__name__


def _cut(text: str, limit: int) -> str:
    msg = " ".join(text.split())
    return msg if len(msg) <= limit else msg[: limit - 1] + "…"


def why_not_written(home: Path, exc: BaseException) -> str | None:
    """NO_SPACE when a failed write was (most likely) the disk filling up, else None. Tantivy reports a full
    disk only as "An index writer was killed", so the free space of the data home decides."""
    if is_no_space(exc):
        return NO_SPACE
    try:
        free = shutil.disk_usage(home).free
    except OSError:
        return None
    return NO_SPACE if free < LOW_SPACE_BYTES else None


LOW_SPACE_BYTES = 8 * 2**20


def database_damage(home: Path, exc: BaseException) -> str:
    """The message for a DuckDB file that fails its own checks (a checksum, a bad block): what to do."""
    return (f"the library's database ({home / 'library.duckdb'}) is damaged: {short_reason(exc)}. Nothing was "
            "changed. Restore library.duckdb from a backup, or move it aside and ingest your files again (the "
            "search index is rebuilt from it)")


def verify_database(con: object, home: Path) -> dict[str, int]:
    """Read every column of every table (DuckDB checks each block's checksum as it reads it), so damage is found
    by `stats --check` rather than by a later command. Returns the rows per table; raises EvtuiError on damage."""
    import duckdb

    from evtui.errors import EvtuiError

    rows: dict[str, int] = {}
    try:
        names = [r[0] for r in con.execute(  # type: ignore[attr-defined]
            "SELECT table_name FROM duckdb_tables() WHERE NOT internal ORDER BY table_name").fetchall()]
        for name in names:
            # con.table() takes the table's name, never SQL text; COLUMNS(*) makes it read every column
            got = con.table(name).aggregate("count(*), sum(hash(COLUMNS(*)))").fetchall()  # type: ignore[attr-defined]
            rows[name] = int(got[0][0]) if got else 0
    except duckdb.Error as exc:
        raise EvtuiError(database_damage(home, exc)) from exc
    return rows


def user_message(exc: BaseException, home: Path | None) -> str | None:
    """A one-line message for a failure a user can cause or meet (a damaged or unwritable library, a file the
    OS refuses, a full disk), or None for a bug, whose traceback is worth having."""
    import duckdb

    where = home or Path(".")
    at = f" at {home}" if home is not None else ""  # the app passes no home: DuckDB's own words name the file
    if isinstance(exc, duckdb.Error):
        # A fatal error (a write that failed on a full disk) "invalidates" the database: the cause, after "Original
        # error:", is what happened; "invalidated" itself says nothing about the file (it is not damage).
        cause = str(exc).split("Original error:", 1)[-1]
        low = cause.lower()
        if is_no_space(exc):
            return f"cannot write the library{at}: {NO_SPACE}; free some space and run it again ({_cut(cause, 100)})"
        # "could not read enough bytes": the file ends before a block DuckDB needs (cut short by a copy or a crash);
        # "is cut short": evtui.store's check at open found that before any command ran into it
        if ("corrupt" in low or "checksum" in low or "not a valid duckdb" in low or "could not read enough bytes" in low
                or "is cut short" in low or re.search(r"\binvalid\b", low) and "file" in low):
            return database_damage(where, exc)
        # "read-only mode" is a write on a connection opened read-only (access.read_only_refusal's case, or a bug),
        # not a read-only data home
        if "read-only" in low and "read-only mode" not in low or "permission denied" in low:
            return f"cannot write the library{at}: the data home is read-only ({_cut(cause, 100)})"
        return f"the library's database failed: {_cut(cause, 160)}"
    if isinstance(exc, OSError):
        if is_no_space(exc):
            return f"{NO_SPACE} while writing {exc.filename or where}: free some space and run the command again"
        what = f" {exc.filename}" if exc.filename else ""
        return f"cannot use{what}: {exc.strerror or short_reason(exc)}"
    if isinstance(exc, ValueError) and "index writer was killed" in str(exc):
        reason = why_not_written(where, exc) or "the index writer failed"
        return f"{reason}; what was stored is kept, and the next command finishes the indexing"
    return None


MAX_INPUT_BYTES = 4 * 2**30  # a benchmark's data file; the EvidenceBench, SciFact and Check-COVID files are far smaller


def check_input_file(path: str, flag: str) -> None:
    """A data file a verb reads whole (`bench --data/--corpus/--claims`): a regular file of a sane size, checked
    before it is opened, since a FIFO would hang the read and /dev/zero would never end it."""
    import os
    import stat

    from evtui.errors import EvtuiError

    p = Path(path).expanduser()
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise EvtuiError(f"{flag} {p}: no such file") from None
    except OSError as exc:
        raise EvtuiError(f"{flag} {p}: cannot read it ({exc.strerror or exc})") from None
    if stat.S_ISDIR(st.st_mode):
        return  # the verb says what it wants of a folder
    if not stat.S_ISREG(st.st_mode):
        raise EvtuiError(f"{flag} {p}: not a regular file (a device, FIFO or socket)")
    if st.st_size > MAX_INPUT_BYTES:
        raise EvtuiError(f"{flag} {p}: {st.st_size / 2**30:.1f} GiB, over the {MAX_INPUT_BYTES // 2**30} GiB limit")
