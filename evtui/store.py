"""The DuckDB store: papers, sentences and the abbreviations seen in them.

DuckDB is the source of truth. Each paper has a `state`: rows are written as 'pending', the Tantivy index is
committed, then the paper turns 'ready'. A crash at any point leaves a state the library can repair on the next
open (see Library.recover), so DuckDB and the index never disagree for longer than one open.
Every statement is parameterised; bulk inserts go through Arrow for speed.
"""

from __future__ import annotations

import functools
import gc
import json
import os
import re
import threading
import time
import weakref
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from evtui.errors import EvtuiError, LibraryLockedError
from evtui.faults import crash_point
from evtui.models import Paper, Sentence

if TYPE_CHECKING:
    import pyarrow as pa

SCHEMA = [
    """CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)""",
    """CREATE TABLE IF NOT EXISTS papers (
        id VARCHAR PRIMARY KEY,
        title VARCHAR,
        authors VARCHAR[],
        year INTEGER,
        journal VARCHAR,
        doi VARCHAR,
        pmid VARCHAR,
        pmcid VARCHAR,
        licence VARCHAR,
        source_path VARCHAR,
        source_format VARCHAR,
        content_hash VARCHAR,
        n_sentences INTEGER,
        state VARCHAR,
        added_at TIMESTAMP DEFAULT current_timestamp
    )""",
    # No primary key on sentences: uniqueness holds because a paper's rows are always replaced whole,
    # and an ART index would halve bulk-insert speed.
    """CREATE TABLE IF NOT EXISTS sentences (
        id VARCHAR,
        paper_id VARCHAR,
        position INTEGER,
        section_title VARCHAR,
        section_kind VARCHAR,
        is_heading BOOLEAN,
        text VARCHAR
    )""",
    """CREATE TABLE IF NOT EXISTS abbreviations (paper_id VARCHAR, short VARCHAR, long VARCHAR)""",
    # How a paper was read (JSON: pages, what was dropped, "full_text": false, Zotero key/collections), in its
    # own table so libraries made before it open unchanged; only papers with something to say have a row.
    """CREATE TABLE IF NOT EXISTS paper_info (paper_id VARCHAR, info VARCHAR)""",
    # PDFs read and found to be a paper stored under another id (a JATS text of the same DOI): by the file's path,
    # sha256 and the reader version, so that re-ingesting the folder skips the file unread instead of parsing it again
    # (a worker process, ~0.3-1 s) to reach the same verdict; a copy elsewhere is read and reported as before. A row
    # counts only while its paper is stored (joined on papers), so a removed paper's PDF is read again.
    """CREATE TABLE IF NOT EXISTS pdf_seen (sha256 VARCHAR, reader VARCHAR, paper_id VARCHAR, path VARCHAR)""",
]

# The selection basket (evtui.export.Basket). An item is a sentence picked as evidence for one question: the same
# sentence may be evidence for two questions of a review, so the key is (sentence_id, query). Libraries made before
# that keyed it on sentence_id alone: Store.migrate_selections rekeys them at the first read-write open.
SELECTIONS_DDL = """CREATE TABLE IF NOT EXISTS selections (
    sentence_id VARCHAR,
    position INTEGER,
    query VARCHAR,
    mode VARCHAR,
    aspects VARCHAR,      -- JSON [{id, label, terms}]
    highlights VARCHAR,   -- JSON [{aspect, start, end}]
    method VARCHAR,
    score DOUBLE,
    added_at TIMESTAMP DEFAULT current_timestamp,
    PRIMARY KEY (sentence_id, query)
)"""
_SELECTION_COLUMNS = "sentence_id, position, query, mode, aspects, highlights, method, score, added_at"

_PAPER_COLUMNS = ("id", "title", "authors", "year", "journal", "doi", "pmid", "pmcid", "licence", "source_path",
                  "source_format", "content_hash", "n_sentences")


@functools.cache
def _arrow_schemas() -> tuple[pa.Schema, pa.Schema]:
    """(papers, sentences) as Arrow schemas; pyarrow (and numpy under it, ~0.1 s) is imported by the writes that
    use it, so a search, which only reads, starts without it."""
    import pyarrow as pa

    sentences = pa.schema([
        ("id", pa.string()), ("paper_id", pa.string()), ("position", pa.int32()), ("section_title", pa.string()),
        ("section_kind", pa.string()), ("is_heading", pa.bool_()), ("text", pa.string()),
    ])
    papers = pa.schema([
        ("id", pa.string()), ("title", pa.string()), ("authors", pa.list_(pa.string())), ("year", pa.int32()),
        ("journal", pa.string()), ("doi", pa.string()), ("pmid", pa.string()), ("pmcid", pa.string()),
        ("licence", pa.string()), ("source_path", pa.string()), ("source_format", pa.string()),
        ("content_hash", pa.string()), ("n_sentences", pa.int32()),
    ])
    return papers, sentences


def _id_table(ids: Sequence[str]) -> pa.Table:
    import pyarrow as pa

    return pa.table({"id": pa.array(list(ids), pa.string())})



_SETTLE = 2.0  # seconds a reopen waits for the closed database to be released (see _reopen)
_MEMORY = re.compile(r"\d+(\.\d+)?\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)", re.IGNORECASE)
_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "KIB": 2**10, "MIB": 2**20,
          "GIB": 2**30, "TIB": 2**40}


def _bytes(size: str) -> float:
    """'512MB', '1.8 GiB' (DuckDB prints settings as the latter) -> bytes; unparsable -> infinity."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?I?B)?\s*", size, re.IGNORECASE)
    return float(m.group(1)) * _UNITS[(m.group(2) or "").upper()] if m else float("inf")


def _checked(size: str) -> str:
    if not _MEMORY.fullmatch(size.strip()):
        raise EvtuiError(f"not a memory size: {size!r}")
    return size.strip()


def _paper(row: Sequence[object]) -> Paper:
    values = dict(zip(_PAPER_COLUMNS, row, strict=True))
    values["authors"] = list(values["authors"] or [])  # type: ignore[call-overload]
    return Paper(**values)  # type: ignore[arg-type]


def _lock_message(exc: Exception, path: Path) -> str:
    from evtui.lockinfo import describe

    m = re.search(r"PID (\d+)", str(exc))
    return describe(path.parent, int(m.group(1)) if m else None)


def _check_length(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """A file cut short (a copy that stopped, a truncation) opens without complaint, and each command then fails on
    the first missing block with "Could not read enough bytes", after half its work. DuckDB's header knows how many
    blocks the file holds, so the damage is told at open, once: a DuckDB IOException, which evtui.repair words as
    damage with what to do (the CLI's error line, the app's loading screen)."""
    try:
        row = con.execute("PRAGMA database_size").fetchone()
        size = path.stat().st_size
    except (duckdb.Error, OSError):
        return  # no verdict: the command itself meets the damage, if any
    if row is None:
        return
    # used, not total: DuckDB cuts free blocks off the file's end but still counts them. Every used block is in
    # the file, so a file shorter than them (headers not even counted) is cut short.
    block_size, used_blocks = int(row[2] or 0), int(row[4] or 0)
    if size < block_size * used_blocks:
        raise duckdb.IOException(f'IO Error: the file "{path}" is cut short: {size:,} bytes, less than the '
                                 f"{used_blocks} blocks of {block_size:,} bytes it holds")


class Store:
    def __init__(self, path: Path, *, read_only: bool = False, memory_limit: str | None = None) -> None:
        self.path = path
        self.memory_limit = memory_limit.strip() if memory_limit is not None else None
        path.parent.mkdir(parents=True, exist_ok=True)
        if memory_limit is not None and not _MEMORY.fullmatch(memory_limit.strip()):
            raise EvtuiError(f"config: db_memory must look like 512MB or 2GB, got {memory_limit!r}")
        self.read_only = read_only and path.exists()
        self._cursors: weakref.WeakSet[Store] = weakref.WeakSet()  # cursor() stores, re-derived by reopen()
        self._switch_lock = threading.RLock()  # a cursor is never derived from a connection being reopened
        self.closed = False
        self._selections_keyed = False  # the selection table checked for its (sentence_id, query) key
        self.con = self._connect(self.read_only)
        try:  # once, at the first open: a reopen can see blocks of this process's own that are not on disk yet
            _check_length(self.con, path)
        except BaseException:
            self.con.close()
            raise
        if not read_only:
            for stmt in SCHEMA:
                self.con.execute(stmt)
            self.migrate_selections()

    def migrate_selections(self) -> bool:
        """Rekey a selection table of a library made before one sentence could be selected for two questions
        (PRIMARY KEY (sentence_id)) on (sentence_id, query): a new table, the rows copied, the old one dropped and
        the new one renamed, in one transaction. Only on a read-write connection (a read-only library reads the
        old table as it is: each of its sentences is under one query there). True when it rekeyed the table."""
        if self.read_only or self._selections_keyed:
            return False
        con = self.con
        row = con.execute(
            "SELECT constraint_column_names FROM duckdb_constraints() WHERE table_name = 'selections'"
            " AND schema_name = 'main' AND database_name = current_database() AND constraint_type = 'PRIMARY KEY'"
        ).fetchone()
        if row is None or list(row[0]) != ["sentence_id"]:
            # keyed already: not asked again at each switch to read-write (a shared library's every write)
            self._selections_keyed = row is not None
            return False
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(SELECTIONS_DDL.replace("selections", "selections_rekeyed", 1))
            con.execute(f"INSERT INTO selections_rekeyed ({_SELECTION_COLUMNS}) SELECT sentence_id, position,"
                        " coalesce(query, ''), mode, aspects, highlights, method, score, added_at FROM selections")
            con.execute("DROP TABLE selections")
            con.execute("ALTER TABLE selections_rekeyed RENAME TO selections")
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        self._selections_keyed = True
        return True

    def _connect(self, read_only: bool) -> duckdb.DuckDBPyConnection:
        try:
            con = duckdb.connect(str(self.path), read_only=read_only)
        except duckdb.IOException as exc:
            if "lock" in str(exc).lower():
                raise LibraryLockedError(_lock_message(exc, self.path)) from exc
            raise
        if self.memory_limit is not None:
            con.execute(f"SET memory_limit = '{self.memory_limit}'")  # validated in __init__: digits + unit
        return con

    def reopen(self, read_only: bool, *, wait: float = 0.0) -> None:
        """Close the database and open it again read-only (a shared lock other processes may share) or
        read-write (exclusive), re-deriving every cursor() store. DuckDB holds one file read-write in one process
        or read-only in many, never both; a process that writes now and then switches around its writes.
        Read-write waits up to `wait` seconds for readers to let go; if they do not, the database is read-only
        again and LibraryLockedError says who holds it."""
        with self._switch_lock:
            self._reopen(read_only, wait)

    def _reopen(self, read_only: bool, wait: float) -> None:
        if read_only == self.read_only:
            return
        for cur in list(self._cursors):
            cur.con.close()
        self._cursors = weakref.WeakSet(c for c in self._cursors if not c.closed)
        if read_only:
            self.con.execute("CHECKPOINT")  # the writes go into the file itself, not a WAL readers replay
        self.con.close()
        deadline = time.monotonic() + wait
        settle = time.monotonic() + _SETTLE
        while True:
            try:
                self.con = self._connect(read_only)
                self.read_only = read_only
                break
            except duckdb.ConnectionException as exc:
                # The database of the connections just closed can outlive them for a moment (a result another
                # thread has not dropped yet holds it); DuckDB refuses a second configuration until it is gone.
                if "different configuration" not in str(exc) or time.monotonic() >= settle:
                    raise
                gc.collect()
                time.sleep(0.01)
            except LibraryLockedError:  # a reader of another process (or, briefly, a writer failing to start)
                if time.monotonic() >= deadline:
                    if not read_only:
                        self.con = self._connect(True)
                        for cur in list(self._cursors):
                            cur.con = self.con.cursor()
                    raise
                time.sleep(0.05)
        if not read_only:  # an app that opened an older library read-only rekeys its selection at its first write
            try:
                self.migrate_selections()
            except duckdb.Error:
                pass  # the old key stays (the Basket's writes refuse a second question's row there, never replace it)
        for cur in list(self._cursors):
            cur.con = self.con.cursor()
            cur.read_only = read_only

    def close(self) -> None:
        self.closed = True  # a closed cursor() store is not re-derived by reopen()
        self.con.close()

    @contextmanager
    def memory_capped(self, limit: str) -> Iterator[None]:
        """DuckDB's memory limit lowered to `limit` (when below the current one) for the block.

        An ingest only appends: the table blocks it wrote sit in DuckDB's buffer pool until the limit, which at
        10M sentences was a gigabyte of resident memory for nothing. Capped, written blocks are evicted (they
        are on disk already); searches keep their own caches."""
        limit = _checked(limit)
        row = self.con.execute("SELECT current_setting('memory_limit')").fetchone()
        # DuckDB prints the setting rounded ("953.6 MiB"): restore the configured value itself where there is one
        current = self.memory_limit or (str(row[0]) if row else "")
        if _bytes(limit) >= _bytes(current or "0B"):
            yield
            return
        self.con.execute(f"SET memory_limit = '{_checked(limit)}'")
        try:
            yield
        finally:
            self.con.execute(f"SET memory_limit = '{_checked(current)}'")

    def cursor(self) -> Store:
        """Another connection to the same open database, for another thread: a DuckDB connection must not be
        used by two threads at once, and connections of one database see each other's commits (MVCC)."""
        with self._switch_lock:
            other = Store.__new__(Store)
            other.path = self.path
            other.con = self.con.cursor()
            other.memory_limit = self.memory_limit
            other.read_only = self.read_only
            other._cursors = weakref.WeakSet()
            other._switch_lock = self._switch_lock
            other._selections_keyed = True  # the owner's reopen keys the table, not a cursor
            other.closed = False
            self._cursors.add(other)
            return other

    # -- papers ----------------------------------------------------------------------------------
    def paper_hashes(self) -> dict[str, str]:
        """id -> content hash of papers that are fully stored and indexed."""
        rows = self.con.execute("SELECT id, content_hash FROM papers WHERE state = 'ready'").fetchall()
        return {r[0]: r[1] for r in rows}

    def paper_states(self, ids: Sequence[str]) -> dict[str, tuple[str, Any]]:
        """id -> (content hash, added_at) of those of `ids` that are fully stored and indexed."""
        rows = self.con.execute("SELECT id, content_hash, added_at FROM papers WHERE state = 'ready'"
                                " AND id IN (SELECT unnest(?))", [list(ids)]).fetchall()
        return {r[0]: (r[1], r[2]) for r in rows}

    def same_papers(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
        """(kind, value) -> id of a stored paper with that identifier: kind "doi" (lower-cased), "pmcid", "pmid",
        "file" (the PDF it was read from) or "pdf" (that file's sha256, in paper_info). One scan of the papers table
        per ingest batch (no index on these columns), and one of paper_info when a PDF is among them."""
        want: dict[str, list[str]] = {"doi": [], "pmcid": [], "pmid": [], "file": [], "pdf": []}
        for kind, value in keys:
            want[kind].append(value)
        if not any(want.values()):
            return {}
        out: dict[tuple[str, str], str] = {}
        if want["pdf"]:  # "pdf": the sha256 of the PDF file a paper was read from (its paper_info)
            for pid, digest in self.con.execute(
                    "SELECT p.id, json_extract_string(i.info, '$.file_sha256') AS d FROM paper_info i"
                    " JOIN papers p ON p.id = i.paper_id WHERE p.state = 'ready' AND"
                    " json_extract_string(i.info, '$.file_sha256') IN (SELECT unnest(?)) ORDER BY p.added_at, p.id",
                    [want["pdf"]]).fetchall():
                out.setdefault(("pdf", digest), pid)
        rows = self.con.execute(
            "SELECT id, lower(doi), pmcid, pmid, source_path FROM papers WHERE state = 'ready' AND"
            " (lower(doi) IN (SELECT unnest(?)) OR pmcid IN (SELECT unnest(?)) OR pmid IN (SELECT unnest(?))"
            " OR source_path IN (SELECT unnest(?))) ORDER BY added_at, id",
            [want["doi"], want["pmcid"], want["pmid"], want["file"]]).fetchall()
        for pid, doi, pmcid, pmid, path in rows:
            for key in (("doi", doi), ("pmcid", pmcid), ("pmid", pmid), ("file", path)):
                if key[1]:
                    out.setdefault(key, pid)  # the earliest stored paper holds the identifier
        return out

    def pdfs_without_digest(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(id, PDF path, info) of stored papers read from a PDF whose paper_info has no file_sha256 (stored before
        it was recorded)."""
        rows = self.con.execute(
            "SELECT p.id, p.source_path, i.info FROM papers p JOIN paper_info i ON i.paper_id = p.id"
            " WHERE p.state = 'ready' AND lower(p.source_path) LIKE '%.pdf'"
            " AND json_extract_string(i.info, '$.file_sha256') IS NULL ORDER BY p.id").fetchall()
        out = []
        for pid, path, info in rows:
            try:
                out.append((pid, path, json.loads(info)))
            except (TypeError, ValueError):
                continue
        return out

    def pdf_reading(self, digest: str, reader: str, paths: Sequence[str]) -> str | None:
        """The id of the stored paper the PDF at one of `paths` (the forms of one path) with this sha256, read by this
        reader version, was found to be; None if it was never read there, or its paper is gone. A library opened
        read-only from before the table: None."""
        try:
            row = self.con.execute(
                "SELECT r.paper_id FROM pdf_seen r JOIN papers p ON p.id = r.paper_id WHERE p.state = 'ready'"
                " AND r.sha256 = ? AND r.reader = ? AND r.path IN (SELECT unnest(?)) LIMIT 1",
                [digest, reader, list(paths)]).fetchone()
        except duckdb.CatalogException:
            return None
        return str(row[0]) if row else None

    def remember_pdf_reading(self, digest: str, reader: str, paper_id: str, path: str) -> None:
        """Record that the PDF at `path` with this sha256, read by this reader version, is the stored paper `paper_id`."""
        self.con.execute("DELETE FROM pdf_seen WHERE sha256 = ? AND reader = ? AND path = ?", [digest, reader, path])
        self.con.execute("INSERT INTO pdf_seen VALUES (?, ?, ?, ?)", [digest, reader, paper_id, path])

    def set_paper_info(self, paper_id: str, info: str) -> None:
        self.con.execute("UPDATE paper_info SET info = ? WHERE paper_id = ?", [info, paper_id])

    def same_titles(self, keys: Iterable[str]) -> dict[str, str]:
        """title key (evtui.library.title_key) -> id of the earliest stored paper with that title."""
        want = sorted(set(keys))
        if not want:
            return {}
        rows = self.con.execute(
            "SELECT id, lower(regexp_replace(title, '[^A-Za-z0-9]+', '', 'g')) AS k FROM papers"
            " WHERE state = 'ready' AND lower(regexp_replace(title, '[^A-Za-z0-9]+', '', 'g')) IN (SELECT unnest(?))"
            " ORDER BY added_at, id", [want]).fetchall()
        out: dict[str, str] = {}
        for pid, key in rows:
            out.setdefault(key, pid)
        return out

    def write_pending(self, papers: Sequence[Paper], sentences: Sequence[Sentence],
                      abbreviations: Sequence[tuple[str, str, str]],
                      infos: Sequence[tuple[str, str]] = ()) -> None:
        """Replace these papers' rows in one transaction and mark them pending (index not yet committed)."""
        ids = [p.id for p in papers]
        import pyarrow as pa

        con = self.con
        paper_schema, sentence_schema = _arrow_schemas()
        con.execute("BEGIN TRANSACTION")
        try:
            picked = self._selected_in(ids)
            self._delete_rows(ids)
            paper_table = pa.Table.from_pydict({
                name: [getattr(p, name) for p in papers] for name in _PAPER_COLUMNS
            }, schema=paper_schema)
            con.register("_new_papers", paper_table)
            con.execute(f"INSERT INTO papers ({', '.join(_PAPER_COLUMNS)}, state)"
                        f" SELECT {', '.join(_PAPER_COLUMNS)}, 'pending' FROM _new_papers")
            con.unregister("_new_papers")
            table = pa.Table.from_pydict({
                "id": [s.id for s in sentences],
                "paper_id": [s.paper_id for s in sentences],
                "position": [s.position for s in sentences],
                "section_title": [s.section_title for s in sentences],
                "section_kind": [s.section_kind for s in sentences],
                "is_heading": [s.is_heading for s in sentences],
                "text": [s.text for s in sentences],
            }, schema=sentence_schema)
            con.register("_new_sentences", table)
            con.execute("INSERT INTO sentences SELECT * FROM _new_sentences")
            con.unregister("_new_sentences")
            if abbreviations:
                cols = list(zip(*abbreviations, strict=True))
                con.register("_new_abbrev", pa.table({"paper_id": cols[0], "short": cols[1], "long": cols[2]}))
                con.execute("INSERT INTO abbreviations SELECT paper_id, short, long FROM _new_abbrev")
                con.unregister("_new_abbrev")
            if infos:
                cols = list(zip(*infos, strict=True))
                con.register("_new_info", pa.table({"paper_id": cols[0], "info": cols[1]}))
                con.execute("INSERT INTO paper_info SELECT paper_id, info FROM _new_info")
                con.unregister("_new_info")
            self._follow_selections(picked, sentences)
            crash_point("db_write")
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise

    def _selected_in(self, ids: Sequence[str]) -> list[tuple[Any, ...]]:
        """The selection's rows (every column) on sentences of these papers, each with its sentence's text and
        position, before the papers are replaced."""
        has = self.con.execute("SELECT 1 FROM duckdb_tables() WHERE table_name = 'selections'").fetchone()
        if not ids or not has:
            return []
        return self.con.execute(
            "SELECT sel.sentence_id, sel.position, sel.query, sel.mode, sel.aspects, sel.highlights, sel.method,"
            " sel.score, sel.added_at, s.paper_id AS _paper, s.text AS _text, s.position AS _pos FROM selections sel"
            " JOIN sentences s ON s.id = sel.sentence_id WHERE s.paper_id IN (SELECT unnest(?))", [list(ids)]).fetchall()

    def _follow_selections(self, picked: list[tuple[Any, ...]], sentences: Sequence[Sentence]) -> None:
        """A replaced paper's sentences are numbered anew (a corrected reader, an edited file): a selected sentence
        follows its text to its new id (the nearest same text by position), so the selection keeps the sentence the
        user picked rather than whichever now sits at the old number. One whose text is gone keeps its id."""
        if not picked:
            return
        by_text: dict[tuple[str, str], list[tuple[int, str]]] = {}
        for s in sentences:
            by_text.setdefault((s.paper_id, s.text), []).append((s.position, s.id))
        # An item is (sentence, query): one sentence selected for two questions moves as two items.
        moved: list[tuple[Any, ...]] = []
        for row in picked:
            sid, paper, text, pos = row[0], row[-3], row[-2], row[-1]
            same = by_text.get((paper, text))
            if not same:
                continue
            new = min(same, key=lambda ps: abs(ps[0] - pos))[1]
            if new != sid:
                moved.append((new, *row[1:-3], sid))
        if not moved:
            return
        old = [(m[-1], m[2]) for m in moved]
        kept = {(row[0], row[2]) for row in picked} - set(old)
        self.con.execute("DELETE FROM selections s USING (SELECT unnest(?) AS sid, unnest(?) AS q) d"
                         " WHERE s.sentence_id = d.sid AND s.query = d.q",
                         [[sid for sid, _ in old], [q for _, q in old]])
        seen = set(kept)
        for m in moved:
            if (m[0], m[2]) in seen:  # two selected copies of one sentence (a reading that repeated it) become one
                continue
            seen.add((m[0], m[2]))
            self.con.execute(f"INSERT INTO selections ({_SELECTION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             list(m[:-1]))

    def _delete_rows(self, ids: Sequence[str]) -> None:
        if not ids:
            return
        id_table = _id_table(ids)
        self.con.register("_ids", id_table)
        try:
            self.con.execute("DELETE FROM sentences WHERE paper_id IN (SELECT id FROM _ids)")
            self.con.execute("DELETE FROM abbreviations WHERE paper_id IN (SELECT id FROM _ids)")
            self.con.execute("DELETE FROM paper_info WHERE paper_id IN (SELECT id FROM _ids)")
            self.con.execute("DELETE FROM papers WHERE id IN (SELECT id FROM _ids)")
        finally:
            self.con.unregister("_ids")

    def mark_ready(self, ids: Sequence[str]) -> None:
        if ids:
            self.con.register("_ready", _id_table(ids))
            try:
                self.con.execute("UPDATE papers SET state = 'ready' WHERE id IN (SELECT id FROM _ready)")
            finally:
                self.con.unregister("_ready")

    def mark_deleting(self, ids: Sequence[str]) -> None:
        if ids:
            self.con.execute("UPDATE papers SET state = 'deleting' WHERE id IN (SELECT unnest(?))", [list(ids)])

    def delete_papers(self, ids: Sequence[str]) -> None:
        self.con.execute("BEGIN TRANSACTION")
        try:
            self._delete_rows(ids)
            # a removed paper's PDFs are no longer "that paper" (a replaced one keeps them: see write_pending)
            self.con.execute("DELETE FROM pdf_seen WHERE paper_id IN (SELECT unnest(?))", [list(ids)])
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise

    def unfinished(self) -> list[tuple[str, str]]:
        """(id, state) of papers a crash left between states."""
        return [(r[0], r[1]) for r in self.con.execute(
            "SELECT id, state FROM papers WHERE state <> 'ready' ORDER BY id").fetchall()]

    def papers(self, *, limit: int | None = None) -> list[Paper]:
        sql = ("SELECT id, title, authors, year, journal, doi, pmid, pmcid, licence, source_path, source_format,"
               " content_hash, n_sentences FROM papers WHERE state = 'ready' ORDER BY id")
        params: list[object] = []
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [_paper(r) for r in self.con.execute(sql, params).fetchall()]

    def paper(self, paper_id: str) -> Paper | None:
        r = self.con.execute(
            "SELECT id, title, authors, year, journal, doi, pmid, pmcid, licence, source_path, source_format,"
            " content_hash, n_sentences FROM papers WHERE id = ?", [paper_id]).fetchone()
        return _paper(r) if r else None

    def undated_papers(self) -> tuple[int, int]:
        """(ready papers without a year, all ready papers): what a year filter leaves out unseen."""
        row = self.con.execute("SELECT count(*) FILTER (WHERE year IS NULL), count(*) FROM papers"
                               " WHERE state = 'ready'").fetchone()
        return (int(row[0]), int(row[1])) if row else (0, 0)

    def titles_years(self, ids: Iterable[str]) -> tuple[dict[str, str], dict[str, int | None]]:
        rows = self.con.execute(
            "SELECT id, title, year FROM papers WHERE id IN (SELECT unnest(?))", [list(ids)]).fetchall()
        return {r[0]: r[1] or "" for r in rows}, {r[0]: r[2] for r in rows}

    def paper_infos(self, ids: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        """paper id -> how it was read (see SCHEMA's paper_info); {} for a library older than that table."""
        sql = "SELECT paper_id, info FROM paper_info"
        params: list[object] = []
        if ids is not None:
            sql += " WHERE paper_id IN (SELECT unnest(?))"
            params.append(list(ids))
        try:
            rows = self.con.execute(sql, params).fetchall()
        except duckdb.CatalogException:  # opened read-only before any writer added the table
            return {}
        out: dict[str, dict[str, Any]] = {}
        for pid, info in rows:
            try:
                out[pid] = json.loads(info)
            except (TypeError, ValueError):
                continue
        return out

    # -- sentences -------------------------------------------------------------------------------
    def integrity(self) -> dict[str, int]:
        """What a crash must never leave in the tables: orphan rows, papers whose stored sentence count is wrong,
        duplicate sentence ids or positions (all 0 when sound)."""

        def one(sql: str) -> int:
            row = self.con.execute(sql).fetchone()
            return int(row[0]) if row else 0

        return {
            "orphan_sentences": one("SELECT count(*) FROM sentences s WHERE NOT EXISTS"
                                    " (SELECT 1 FROM papers p WHERE p.id = s.paper_id)"),
            "orphan_abbreviations": one("SELECT count(*) FROM abbreviations a WHERE NOT EXISTS"
                                        " (SELECT 1 FROM papers p WHERE p.id = a.paper_id)"),
            "wrong_counts": one("SELECT count(*) FROM papers p WHERE n_sentences <>"
                                " (SELECT count(*) FROM sentences s WHERE s.paper_id = p.id)"),
            "duplicate_db_ids": one("SELECT count(*) - count(DISTINCT id) FROM sentences"),
            "duplicate_positions": one("SELECT count(*) - count(DISTINCT (paper_id, position)) FROM sentences"),
        }

    def ready_ids(self) -> set[str]:
        return {r[0] for r in self.con.execute("SELECT id FROM papers WHERE state = 'ready'").fetchall()}

    def sentence_counts(self, ids: Sequence[str]) -> dict[str, int]:
        """Paper id -> its stored sentence count, for the papers among `ids` that exist."""
        rows = self.con.execute("SELECT id, n_sentences FROM papers WHERE id IN (SELECT unnest(?))",
                                [list(ids)]).fetchall()
        return {r[0]: int(r[1] or 0) for r in rows}

    def sentences(self, paper_id: str) -> list[Sentence]:
        rows = self.con.execute(
            "SELECT id, paper_id, position, section_title, section_kind, is_heading, text FROM sentences"
            " WHERE paper_id = ? ORDER BY position", [paper_id]).fetchall()
        return [Sentence(*r) for r in rows]

    def sentences_of(self, paper_ids: Sequence[str]) -> list[Sentence]:
        rows = self.con.execute(
            "SELECT id, paper_id, position, section_title, section_kind, is_heading, text FROM sentences"
            " WHERE paper_id IN (SELECT unnest(?)) ORDER BY paper_id, position", [list(paper_ids)]).fetchall()
        return [Sentence(*r) for r in rows]

    def context(self, sentence_id: str, window: int = 2) -> list[Sentence]:
        """The sentence with up to `window` neighbours on each side, in order."""
        r = self.con.execute("SELECT paper_id, position FROM sentences WHERE id = ?", [sentence_id]).fetchone()
        if not r:
            return []
        rows = self.con.execute(
            "SELECT id, paper_id, position, section_title, section_kind, is_heading, text FROM sentences"
            " WHERE paper_id = ? AND position BETWEEN ? AND ? ORDER BY position",
            [r[0], r[1] - window, r[1] + window]).fetchall()
        return [Sentence(*x) for x in rows]

    def previous_texts(self, sentence_ids: Sequence[str]) -> list[str]:
        """Each sentence's previous sentence in its paper, in order ('' for a first sentence or after a heading):
        the verifier's context, one query for the whole batch."""
        rows = self.con.execute(
            "SELECT s.id, p.text, p.is_heading FROM sentences s JOIN sentences p"
            " ON p.paper_id = s.paper_id AND p.position = s.position - 1 WHERE s.id IN (SELECT unnest(?))",
            [list(sentence_ids)]).fetchall()
        prev = {sid: ("" if heading else text) for sid, text, heading in rows}
        return [prev.get(sid, "") for sid in sentence_ids]

    def all_sentence_ids(self) -> set[str]:
        return {r[0] for r in self.con.execute("SELECT id FROM sentences").fetchall()}

    def abbreviations(self) -> dict[str, str]:
        """short form -> its most frequent long form across the library (ties: the first alphabetically), in
        the order of the short forms: a query's variants come out in this order, the same on every run (GROUP BY
        alone hands rows back in whatever order its parallel workers finish)."""
        rows = self.con.execute(
            "SELECT short, long FROM (SELECT short, long, row_number() OVER (PARTITION BY short ORDER BY n DESC, long)"
            " AS r FROM (SELECT short, lower(long) AS long, count(*) AS n FROM abbreviations GROUP BY 1, 2))"
            " WHERE r = 1 ORDER BY short").fetchall()
        return {r[0]: r[1] for r in rows}

    # -- stats -----------------------------------------------------------------------------------
    def stats(self) -> dict[str, object]:
        con = self.con
        n_papers = con.execute("SELECT count(*) FROM papers WHERE state = 'ready'").fetchone()[0]
        n_sent = con.execute("SELECT count(*) FROM sentences").fetchone()[0]
        by_format = dict(con.execute(
            "SELECT source_format, count(*) FROM papers WHERE state = 'ready' GROUP BY 1 ORDER BY 1").fetchall())
        by_section = dict(con.execute(
            "SELECT section_kind, count(*) FROM sentences GROUP BY 1 ORDER BY 1").fetchall())
        return {
            "papers": int(n_papers),
            "sentences": int(n_sent),
            "formats": {k or "unknown": int(v) for k, v in by_format.items()},
            "sections": {k or "other": int(v) for k, v in by_section.items()},
            "db_bytes": os.path.getsize(self.path) if self.path.exists() else 0,
        }

    def get_meta(self, key: str) -> str | None:
        r = self.con.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
        return r[0] if r else None

    def set_meta(self, key: str, value: object) -> None:
        self.con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                         [key, value if isinstance(value, str) else json.dumps(value)])
