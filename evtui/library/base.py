"""The state every part of the Library shares (set in Library.__init__, evtui/library/core.py), and the read-write
windows its writers take: each part (ingesting, same_paper, writing, maintenance) is a mixin over this class."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evtui.backend import SearchBackend
    from evtui.config import Config
    from evtui.store import Store

# How long a shared library's writer waits for other processes' readers (a CLI search) to close DuckDB.
RW_WAIT = 10.0


class LibraryBase:
    config: Config
    store: Store
    index: SearchBackend
    notes: list[str]  # what opening repaired or could not, for the user
    read_only: bool
    shared: bool
    switch_guard: Callable[[], AbstractContextManager[object]]
    _abbrev: dict[str, str] | None
    _write_lock: threading.RLock
    _writer_store: Store | None
    _mode_lock: threading.Lock
    _rw_users: int

    if TYPE_CHECKING:
        def _recover(self) -> list[str]: ...  # Maintenance's: an ingest settles a failed batch with it

    @contextmanager
    def rw(self, wait: float = RW_WAIT) -> Iterator[None]:
        """DuckDB read-write for the block (a no-op unless shared). Nested and concurrent users share one
        switch; the last one out hands the file back to readers. LibraryLockedError when another process's
        reader keeps it past `wait` seconds. Never enter it holding a lock that switch_guard takes."""
        if not self.shared:
            yield
            return
        with self._mode_lock:
            if self._rw_users == 0:
                with self.switch_guard():
                    self.store.reopen(False, wait=wait)
            self._rw_users += 1
        try:
            yield
        finally:
            with self._mode_lock:
                self._rw_users -= 1
                if self._rw_users == 0:
                    with self.switch_guard():
                        self.store.reopen(True, wait=RW_WAIT)

    def _writes(self) -> Store:
        """The writers' own DuckDB connection, so a search on `store` in another thread never shares one."""
        if self._writer_store is None:
            self._writer_store = self.store.cursor()
        return self._writer_store
