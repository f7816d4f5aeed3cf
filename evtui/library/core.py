"""The Library itself: opening a data home (the store, the index, repair), closing it, reading, and embedding; its
other parts are the mixins it is made of (evtui/library/__init__.py lists them)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from evtui.backend import SearchBackend, open_backend
from evtui.config import Config, load_config
from evtui.errors import EvtuiError, LibraryLockedError
from evtui.library.ingesting import Ingesting
from evtui.library.maintenance import INDEX_REBUILT, Maintenance
from evtui.lockinfo import claim, describe, release
from evtui.store import Store

if TYPE_CHECKING:
    import duckdb


class Library(Ingesting, Maintenance):
    def __init__(self, config: Config | None = None, *, read_only: bool = False, shared: bool = False) -> None:
        self.config = config or load_config()
        home = self.config.home
        try:
            home.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise EvtuiError(f"cannot create the data home {home}: {exc.strerror}") from exc
        # read_only: a searcher only (Ray workers, evtui/scale): no writer lock, no owner note, no repair. Many
        # may be open at once, but DuckDB refuses them while a writer holds the file (and the reverse).
        self.read_only = read_only
        if read_only and not self.config.db_path.exists():
            raise EvtuiError(f"no library at {home} to open read-only")
        self.store = Store(self.config.db_path, read_only=read_only, memory_limit=self.config.db_memory)
        self.index: SearchBackend
        self.notes: list[str] = []  # what opening repaired or could not, for the user
        self.reindexed: tuple[int, float] | None = None  # (sentences, seconds) when opening rebuilt the search index
        self._snapshot_dir: Path | None = None  # a read-only home's index copy (see _index_snapshot)
        try:
            self.index = self._open_index(read_only)
        except BaseException:
            self.store.close()
            raise
        if not read_only:
            claim(home, shared=shared)
        self._abbrev: dict[str, str] | None = None
        # Writes (ingest, remove, repair) take turns on the Tantivy writer; searches never wait for them:
        # they read the last committed index and DuckDB through their own connection.
        self._write_lock = threading.RLock()
        self._writer_store: Store | None = None
        # shared (the app): DuckDB is held read-only between writes, so other processes can read it (DuckDB
        # allows one read-write process or many read-only ones); every write runs inside rw(). The Tantivy
        # writer stays claimed, so a second writer still gets the "in use by" message.
        self.shared = shared and not read_only
        self._mode_lock = threading.Lock()
        self._rw_users = 0
        # Held around each switch: the app passes its own locks so no thread is mid-query on a connection then.
        self.switch_guard: Callable[[], AbstractContextManager[object]] = nullcontext
        if read_only:
            self.recovered: list[str] = []
            return
        try:
            if (self.index.rebuilt or self.store.get_meta("reindex_pending") == "1") and \
                    (n := int(self.store.stats()["sentences"])):
                t0 = time.perf_counter()
                self.reindex_all()  # also one that an earlier open started and was killed in: its mark says so
                self.reindexed = (n, time.perf_counter() - t0)
            self.recovered = self.recover()
        except Exception as exc:  # noqa: BLE001 - a failed repair must not make the library unreadable
            # Typically a full disk: what is indexed stays searchable, the unfinished papers stay 'pending' in
            # DuckDB (not searchable yet), and the next open tries again.
            from evtui.repair import short_reason, why_not_written

            self.recovered = []
            try:
                left = len(self.store.unfinished())
            except Exception:  # noqa: BLE001 - the database itself failed: the command's own error says how
                left = 0
            if left:  # "could not finish indexing 0 paper(s)" said nothing true
                self.notes.append(f"could not finish indexing {left} paper(s): "
                                  f"{why_not_written(home, exc) or short_reason(exc)}; searches see the rest, and "
                                  "the next command tries again")
            try:
                self.index.rollback()
            except Exception:  # noqa: BLE001 - a killed writer cannot roll back either; nothing was committed
                pass
        if self.shared:
            self.store.reopen(True)
        try:
            self._check_reads()
        except Exception:  # noqa: BLE001 - a hint must never keep the library from opening (the next open tries again)
            pass

    def _open_index(self, read_only: bool) -> SearchBackend:
        """The search index, writer claimed unless read-only. A damaged index (Tantivy's open fails, and not on
        its writer lock) is removed and rebuilt from DuckDB by a writable open; a read-only one says so."""
        from evtui.repair import is_lock_error, is_unwritable, remove_index, short_reason

        home = self.config.home
        for attempt in (1, 2):
            try:
                index = open_backend(self.config, writable=not read_only)
                if not read_only:
                    # Claim the writer now: Tantivy's lock is per process, so a second owner fails here, clearly.
                    _ = index.writer
                return index
            except ValueError as exc:
                if is_lock_error(exc):
                    raise LibraryLockedError(describe(home)) from exc
                if is_unwritable(exc) and read_only:
                    # Tantivy writes a lock file even to read, so a read-only data home (a read-only mount, a
                    # shared folder) is searched through a private copy of its index, removed on close.
                    return self._index_snapshot()
                if is_unwritable(exc):
                    raise EvtuiError(f"the search index at {self.config.index_path} cannot be opened: its folder is "
                                     "not writable (a read-only file system or permissions), and the index needs "
                                     "to write a lock file even to search; copy the data home somewhere writable "
                                     "and point EVTUI_HOME (or --home) at the copy") from exc
                if read_only:
                    raise EvtuiError(f"the search index at {self.config.index_path} is damaged "
                                     f"({short_reason(exc)}); run `evtui stats --check` once the library is free: it "
                                     "rebuilds the index from the database") from exc
                if attempt == 2:
                    raise EvtuiError(f"the search index at {self.config.index_path} is damaged and could not be "
                                     f"rebuilt ({short_reason(exc)})") from exc
                # DuckDB holds every sentence: the index is derived data, rebuilt below (rebuilt=True).
                remove_index(self.config.index_path)
                self.notes.append(f"the search index was damaged ({short_reason(exc, 100)}); {INDEX_REBUILT}")
        raise AssertionError("unreachable")

    def _index_snapshot(self) -> SearchBackend:
        """A read-only copy of the search indexes (sentences and papers) in a temporary folder, for a data home
        that cannot be written: the copy is searched instead, and removed when the library closes."""
        import shutil
        import tempfile

        from evtui.index import SentenceIndex
        from evtui.papers import paper_index_path

        src = self.config.index_path
        tmp = Path(tempfile.mkdtemp(prefix="evtui-index-"))
        try:
            shutil.copytree(src, tmp / src.name)
            if paper_index_path(src).is_dir():
                shutil.copytree(paper_index_path(src), paper_index_path(tmp / src.name))
            index = SentenceIndex(tmp / src.name, writable=False)
        except Exception as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            raise EvtuiError(f"the data home {self.config.home} is read-only and its search index could not be "
                             f"copied to search it ({type(exc).__name__}: {exc})") from exc
        self._snapshot_dir = tmp
        self.notes.append(f"the data home is read-only: searching a copy of its index ({tmp})")
        return index

    def close(self) -> None:
        with self._write_lock:
            if self._writer_store is not None:
                self._writer_store.close()
            self.index.close()
            self.store.close()
        if not self.read_only:
            release(self.config.home)
        snapshot = getattr(self, "_snapshot_dir", None)
        if snapshot is not None:
            import shutil

            shutil.rmtree(snapshot, ignore_errors=True)
            self._snapshot_dir = None

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def embed(self, on_progress: Callable[[int, int], None] | None = None,
              on_papers: Callable[[int, int], None] | None = None, stop: Callable[[], bool] | None = None) -> int:
        """Embed every ready paper's title + abstract (`best`'s dense paper channel, `on_papers` reporting), then
        every searchable sentence, that lacks a current vector (what `evtui embed` does), through the writers'
        connection, so searches keep running meanwhile; chunks are committed as they finish, and an exception from
        a progress callback stops the run keeping them. Returns how many sentences were embedded."""
        from evtui.embed import ensure_embeddings
        from evtui.paper_vectors import ensure_paper_vectors

        if not self.shared:  # this process holds DuckDB read-write anyway: one window
            with self._write_lock, self.rw():
                ensure_paper_vectors(self, on_progress=on_papers, con=self._writes().con, stop=stop)
                return ensure_embeddings(self, on_progress=on_progress, con=self._writes().con, stop=stop)

        # The app's library: read-write only while a chunk is stored, so `evtui search` or `stats` in another
        # terminal read meanwhile, and the app's own writers (a selection, a cached verdict) take turns with the
        # run. Each read holds the write lock too: the writers' connection is one, and they may use it meanwhile.
        @contextmanager
        def reading() -> Iterator[duckdb.DuckDBPyConnection]:
            with self._write_lock:
                yield self._writes().con

        @contextmanager
        def writing() -> Iterator[duckdb.DuckDBPyConnection]:
            with self._write_lock, self.rw():
                yield self._writes().con

        ensure_paper_vectors(self, on_progress=on_papers, windows=(reading, writing), stop=stop)
        return ensure_embeddings(self, on_progress=on_progress, windows=(reading, writing), stop=stop)

    # -- reading ---------------------------------------------------------------------------------
    def abbreviations(self) -> dict[str, str]:
        if self._abbrev is None:
            self._abbrev = self.store.abbreviations()
        return self._abbrev

    def stats(self) -> dict[str, object]:
        s = self.store.stats()
        s["index_docs"] = self.index.num_docs()
        s["index_bytes"] = self.index.size_bytes()
        s["home"] = str(self.config.home)
        return s

    def is_empty(self) -> bool:
        return self.store.con.execute("SELECT 1 FROM papers WHERE state = 'ready' LIMIT 1").fetchone() is None
