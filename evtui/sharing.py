"""A long writer beside readers: DuckDB holds a file read-write in one process or read-only in many, so a CLI
writer that runs for minutes (`evtui embed`, a bench sweep, `evtui ingest`) holds its library as the app does —
read-only between short read-write windows — and `evtui stats`, `bench runs` and searches in another process read
meanwhile. Written against the Library's attributes (store, shared, read_only, rw, config), not the class: the
library imports this module, and embed / paper_vectors (which the library imports) use it too."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import duckdb

from evtui.errors import LibraryLockedError
from evtui.lockinfo import claim

# A long writer (embed, a bench sweep) asks for read-write once per batch; a reader beside it (`evtui stats`, a
# search loading its model) is given this long to finish before the writer gives up and says who holds it.
WRITER_WAIT = 120.0


@contextmanager
def sharing_reads(library: Any) -> Iterator[None]:
    """For a long writer (`evtui embed`, a bench sweep recording its runs): the library is held as the app holds it,
    DuckDB read-only between short writes (each inside `batch_write`), so `evtui stats`, `bench runs` and searches in
    another terminal read it meanwhile instead of being refused for minutes. The owner note says "shared" so those
    readers wait out a write rather than fail. A library already shared (the app's) or read-only is left as it is.
    At the end the library is exclusive again, unless a reader still holds it: then it stays shared (every Library
    write goes through rw(), so it keeps working)."""
    if not share_reads(library):
        yield
        return
    try:
        yield
    finally:
        _exclusive_again(library)


def share_reads(library: Any) -> bool:
    """Hold a CLI writer's library as the app holds it from now on (see sharing_reads), for a run that ends by
    closing it (a bench sweep). False when it already was shared, or is read-only: nothing to change."""
    if getattr(library, "shared", True) or getattr(library, "read_only", True):
        return False
    library.store.reopen(True)
    library.shared = True
    claim(library.config.home, shared=True)
    return True


def _exclusive_again(library: Any) -> None:
    if library.store.closed:
        return
    try:
        library.store.reopen(False, wait=1.0)
    except (LibraryLockedError, duckdb.Error, OSError):
        return
    library.shared = False
    claim(library.config.home, shared=False)


@contextmanager
def batch_write(library: Any, *, writer: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    """One short read-write window of a long writer (see sharing_reads; nested in an open one, e.g. the app's, it
    switches nothing), yielding the connection to write on: the library's own, or with `writer` the writers' own
    (Library._writes, which the app's writers hold under Library._write_lock). Connections are re-made at each
    switch, so take it from here every time, never keep it across windows."""
    rw = getattr(library, "rw", None)
    if rw is None:  # not an evtui Library (a test double of the embed.Library protocol)
        yield library.store.con
        return
    with rw(wait=WRITER_WAIT):
        yield writer_con(library) if writer else library.store.con


def writer_con(library: Any) -> duckdb.DuckDBPyConnection:
    """The connection a long writer reads and writes on: the library's writers' own where it has one (so the app's
    searches on `store` in other threads never share it), as it is now (a switch re-makes it: never keep it)."""
    writes = getattr(library, "_writes", None)
    return writes().con if writes is not None else library.store.con
