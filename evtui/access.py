"""Opening a library to read it while another process (the app) owns it.

DuckDB holds a file read-write in one process or read-only in many, never both; Tantivy's index is readable by
any number of processes, only its writer is exclusive. The app therefore keeps DuckDB read-only between its
writes (Library(shared=True)), and a reading command falls back to a read-only open when the writer lock is
taken or the data home cannot be written. Only a second *writer* gets "in use by process N".
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import duckdb

from evtui.config import Config
from evtui.errors import EvtuiError, LibraryLockedError
from evtui.library import Library
from evtui.lockinfo import shares_reads

# A reader that finds the app in the middle of a write (a basket change, a cached verdict: tens of ms; an
# ingest: longer) tries again for this long before it says who holds the library.
READ_WAIT = 15.0


def open_reader(config: Config, *, wait: float = READ_WAIT) -> tuple[Library, str | None]:
    """The library for a reading command: writable when nobody else has it (so the demo can load and caches
    fill), else read-only beside its owner. Returns (library, a note saying it is read-only, or None)."""
    home = config.home
    if home.exists() and not os.access(home, os.W_OK) and config.db_path.exists():
        return Library(config, read_only=True), f"the data home {home} is not writable: reading it read-only"
    try:
        return Library(config), None
    except LibraryLockedError as exc:
        if not shares_reads(home):
            raise  # a CLI writer (ingest, bench) holds DuckDB read-write for its whole run
        owner = str(exc)
    except EvtuiError:
        raise
    except (OSError, duckdb.Error) as exc:  # a read-only file system under a writable-looking folder
        if not config.db_path.exists():
            raise EvtuiError(f"cannot open the library at {home}: {getattr(exc, 'strerror', None) or exc}") from exc
        owner = ""
    deadline = time.monotonic() + wait
    while True:
        try:
            lib = Library(config, read_only=True)
        except LibraryLockedError:
            if time.monotonic() >= deadline:
                raise LibraryLockedError(
                    f"{owner.split(';')[0] or 'the library is in use'} and is writing to it; "
                    f"try again when it finishes") from None
            time.sleep(0.1)
            continue
        who = owner.split(";")[0].removeprefix(f"the library at {home} is ")
        return lib, f"read-only: the library is {who}" if who else "read-only: the library is in use"


def prepare_tables(library: Library) -> None:
    """Create every table a reader may look in or the app writes later (selection, verdict cache, runs,
    embeddings), inside library.rw(): between writes a shared library is read-only, where CREATE fails."""
    from evtui.bench.runs import _ensure
    from evtui.embed import ensure_table
    from evtui.export import Basket
    from evtui.judge.cache import JudgmentCache

    Basket(library)
    JudgmentCache(library.store.con)
    _ensure(library.store.con)
    ensure_table(library.store.con)


def read_only_refusal(exc: BaseException) -> str | None:
    """The message for a write attempted on a read-only library (a DuckDB error), else None."""
    if type(exc).__module__.split(".")[0] in ("duckdb", "_duckdb") and "read-only mode" in str(exc):
        return ("this needs to write to the library (e.g. embeddings for dense/hybrid search or --paper), but it "
                "is open read-only beside the app: use --method best or bm25, or run it when the app is closed")
    return None


class ReadOnlyLibraryError(EvtuiError):
    """A write asked of a library the app opened read-only (see open_for_app)."""


class ReadOnlyLibrary(Library):
    """A library the app reads but cannot write (a colleague's shared folder, a read-only mount, a full disk):
    every write of the app goes through rw(), which refuses it in one line instead of DuckDB's "attached in
    read-only mode" from deep inside the write."""

    why = "data home not writable"

    def rw(self, wait: float = 0.0) -> Iterator[None]:  # type: ignore[override]
        raise ReadOnlyLibraryError(f"the library is open read-only ({self.why}): nothing can be saved to it; "
                                   "searching, reading and judging still work")


def open_for_app(config: Config) -> tuple[Library, str | None]:
    """The app's library: shared (read-write in short windows, see Library.rw) where its data home can be written,
    else read-only (a colleague's library, a read-only mount, a full disk) with the one line the app shows for it.
    A library another evtui holds is refused as before ("in use by process N"): a reader that stays open (the app)
    would keep that writer from ever writing again."""
    home = config.home
    if home.exists() and not os.access(home, os.W_OK) and config.db_path.exists():
        return _read_only(config, "folder not writable")
    try:
        return Library(config, shared=True), None
    except LibraryLockedError:
        raise
    except (EvtuiError, OSError, duckdb.Error) as exc:
        from evtui.repair import is_no_space, is_unwritable

        causes = [exc, exc.__cause__] if exc.__cause__ is not None else [exc]
        if not config.db_path.exists():
            raise
        if any(is_no_space(e) for e in causes):
            return _read_only(config, "disk full")
        if any(is_unwritable(e) for e in causes):
            return _read_only(config, "files not writable")
        raise


def _read_only(config: Config, why: str) -> tuple[Library, str]:
    lib = ReadOnlyLibrary(config, read_only=True)
    lib.why = why
    return lib, f"read-only: {why}"  # one short line: the app's status line is 80 columns with the counts
