"""The Library: one data home holding the DuckDB store and the Tantivy index, kept in agreement.

Write protocol per batch of papers (so a SIGKILL anywhere leaves a repairable state):
  1. DuckDB transaction: replace the papers' rows, state = 'pending'
  2. Tantivy: delete the papers' old docs, add the new ones, commit (atomic)
  3. DuckDB: state = 'ready'
On open, `recover()` re-indexes every 'pending' paper from DuckDB and finishes every 'deleting' one.
Tantivy never holds a paper DuckDB lacks, because DuckDB is always written first and deleted last.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evtui.backend import SearchBackend, open_backend
from evtui.config import Config, load_config
from evtui.errors import EvtuiError, IngestError, LibraryLockedError
from evtui.faults import batch_sentences, crash_point
from evtui.filehash import content_sha256
from evtui.lockinfo import claim, describe, release
from evtui.models import Paper, ParsedPaper, Sentence, sentence_id
from evtui.sharing import WRITER_WAIT, sharing_reads
from evtui.store import Store

if TYPE_CHECKING:
    import duckdb

    from evtui.ingest.zotero import ZoteroRun

# DuckDB's memory limit while ingesting (the configured db_memory when that is lower): appends need no cache of
# what they wrote, and an ingest's resident memory must not grow with the library (evtui/store.py memory_capped).
INGEST_DB_MEMORY = "256MB"
BATCH_SENTENCES = batch_sentences(50_000)  # EVTUI_BATCH_SENTENCES: crash tests want many batches
# How long a shared library's writer waits for other processes' readers (a CLI search) to close DuckDB.
RW_WAIT = 10.0


def identity_keys(p: ParsedPaper) -> list[tuple[str, str]]:
    """The identifiers that name one paper whatever file it came from (a JATS file and a PDF of it get different
    ids: PMC6398430 and doi:10.1093/beheco/ary157; a PDF without a DOI read bare and through a .bib entry:
    pdf:name-hash and bib:key; two copies of one PDF without a DOI: pdf:name-hash each, the same sha256)."""
    keys = []
    if p.doi and p.doi.strip():
        keys.append(("doi", p.doi.strip().lower()))
    if p.pmcid and p.pmcid.strip():
        keys.append(("pmcid", p.pmcid.strip()))
    if p.pmid and p.pmid.strip():
        keys.append(("pmid", p.pmid.strip()))
    if p.source_path and p.source_path.lower().endswith(".pdf"):  # one PDF file, read bare and through a .bib
        keys.append(("file", os.path.abspath(p.source_path)))
    digest = p.info.get("file_sha256")
    if isinstance(digest, str) and digest:  # the same bytes under another name or folder
        keys.append(("pdf", digest))
    return keys


TITLE_KEY_MIN = 30  # shorter titles ("Editorial", "Correspondence") name many papers
# The formats of a researcher's own papers, whose titles are compared with the library's (a scan of every title per
# batch); bulk corpora (PubTator, BioC, CORD, JSONL, EvidenceBench) are not: millions of papers, no preprints.
TITLE_CHECKED = frozenset({"jats", "pdf", "bibtex", "ris", "csl-json", "zotero", "text", "europepmc"})


def title_key(title: str) -> str | None:
    """The title's letters and digits, lower-cased (as Store.same_titles computes it in SQL); None for a short
    title. A preprint and its published version differ in DOI and usually share this."""
    key = re.sub(r"[^A-Za-z0-9]+", "", title or "").lower()
    return key if len(key) >= TITLE_KEY_MIN else None


def from_reference(info: Mapping[str, object]) -> bool:
    """Read through a reference manager's entry (.bib / RIS / CSL-JSON, Zotero): metadata from the user's records.
    A PDF kept in Zotero without a parent item is not: its parent, made later, is the better record of the file."""
    return "entry" in info or ("zotero_key" in info and not info.get("zotero_standalone"))


def has_full_text(info: Mapping[str, object]) -> bool:
    """False for a metadata-only paper (a .bib or Zotero entry without a readable PDF: title and abstract)."""
    return info.get("full_text") is not False


# How similar (difflib ratio) a sentence of a paper's new version must be to a selected one of the old version for
# the selection to follow it as the same sentence revised ("by 30%" -> "by 45%"), not another sentence.
REVISED_SENTENCE = 0.75
# The share of a stored paper's sentences that a file read from elsewhere must still hold, with its title, to be that
# paper moved and edited (Library._moved_and_edited) rather than another paper.
MOVED_EDIT_KEPT = 0.5
# Formats whose file holds one paper: reading that file again reads that paper again (an edited draft, a PDF
# replaced by its published version), whatever id the new reading would make (Library._same_files).
ONE_PAPER_FILES = frozenset({"text", "pdf", "jats", "cord", "europepmc"})


def file_derived(paper_id: str) -> bool:
    """An id made from the file (a text's name and content, a PDF's path), not from an identifier of the paper."""
    return paper_id.startswith(("file:", "pdf:"))


def _path_forms(path: str) -> set[str]:
    """The forms under which `path` may have been stored: as given, absolute, relative to here."""
    out = {path, os.path.abspath(path)}
    try:
        out.add(os.path.relpath(path))
    except ValueError:  # another drive (Windows)
        pass
    return out


def _same_title(a: str, b: str) -> bool:
    return (title_key(a) or a.strip().lower()) == (title_key(b) or b.strip().lower())


def _gone(path: str | None) -> bool:
    """Whether a stored source file is no longer there. A relative path (stored by an evtui before source paths
    were made absolute) names no file for sure: never gone; nor does one with U+FFFD in it, a file name that was not
    UTF-8 (an old archive's "caf\xe9.txt"), stored with the replacement character the database needs instead of
    the byte: its file is there, under a name this string cannot give back."""
    return bool(path) and os.path.isabs(path or "") and "\ufffd" not in (path or "") and not os.path.exists(path or "")


# Reader fixes that leave papers stored before them wrong, checked once per library (Library._check_reads). Bump it
# with a new query when a reader is fixed again. 1: every JATS abstract was read twice (lxml's "{*}abstract" also
# matches the un-namespaced element, and the loader asked for both), so the same sentences sat under two ids.
READS_CHECKED = "1"
_DOUBLED_JATS_ABSTRACTS = """
    SELECT id, content_hash FROM papers WHERE state = 'ready' AND source_format = 'jats' AND id IN (
        SELECT paper_id FROM sentences
        WHERE section_kind = 'abstract' AND NOT is_heading
          AND paper_id IN (SELECT id FROM papers WHERE source_format = 'jats')
        GROUP BY paper_id, text HAVING count(*) > 1)
    ORDER BY id"""


def _inside(path: str, folder: str) -> bool:
    try:
        return Path(path).is_relative_to(folder)
    except (TypeError, ValueError):
        return False


def _in_run(run: ZoteroRun, path: Path, fmt: str, report: IngestReport) -> Iterator[ParsedPaper | IngestError]:
    """A zotero.sqlite's papers read inside `run` (evtui/ingest/zotero.py: ZoteroRun), its skipped items counted as
    unchanged once it is read."""
    from evtui.ingest import iter_papers
    from evtui.ingest.zotero import zotero_run

    with zotero_run(run):
        yield from iter_papers(path, fmt)
    report.unchanged += run.skipped


def _with_id(p: ParsedPaper, paper_id: str) -> ParsedPaper:
    """`p` under another id (a shallow copy), to compare its content with a paper stored under that id."""
    return dataclasses.replace(p, id=paper_id)


def content_hash(p: ParsedPaper) -> str:
    h = hashlib.sha1(usedforsecurity=False)
    meta = [p.id, p.title, p.authors, p.year, p.journal, p.doi, p.pmid, p.pmcid, p.licence]
    h.update(json.dumps(meta, ensure_ascii=False, default=str).encode())
    # only when there is some: the hashes of papers stored before `info` existed stay the same; the PDF reader's
    # version is not content (a new version that reads a file the same leaves its paper unchanged)
    info = {k: v for k, v in p.info.items() if k != "reader"}
    if info:
        h.update(json.dumps(info, ensure_ascii=False, sort_keys=True, default=str).encode())
    for s in p.sentences:
        h.update(b"\x1e")
        h.update(f"{s.section_kind}\x1f{s.section_title}\x1f{int(s.is_heading)}\x1f{s.text}".encode())
    return h.hexdigest()


@dataclass
class IngestProgress:
    files_done: int = 0
    files_total: int = 0
    papers_seen: int = 0
    current: str = ""


@dataclass
class IngestReport:
    added: int = 0
    replaced: int = 0
    unchanged: int = 0
    sentences: int = 0
    files: int = 0
    seconds: float = 0.0
    errors: list[IngestError] = field(default_factory=list)
    by_format: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # papers stored with a change (a split sentence, a cut title)
    paper_vectors: int = 0  # new or replaced papers given their dense vector (only in a library that has them)
    same_paper: int = 0  # not added: the same paper (DOI, PMCID, PMID or PDF file) is stored under another id
    # those of `notes` that say a paper is already stored, or may be (the same title): the app shows them
    same_paper_notes: list[str] = field(default_factory=list)
    stored: list[str] = field(default_factory=list)  # ids of the papers added or replaced

    def to_json(self) -> dict[str, object]:
        return {
            "files": self.files,
            "papers_added": self.added,
            "papers_replaced": self.replaced,
            "papers_unchanged": self.unchanged,
            "papers_already_stored": self.same_paper,
            "sentences": self.sentences,
            "seconds": round(self.seconds, 3),
            "sentences_per_second": round(self.sentences / self.seconds, 1) if self.seconds > 0 else None,
            "formats": self.by_format,
            "errors": [{"path": e.path, "reason": e.reason} for e in self.errors],
            "notes": self.notes,
            "paper_vectors_embedded": self.paper_vectors,
        }


INDEX_REBUILT = "rebuilt it from the database"  # how the note on a damaged search index ends


class Library:
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

    # -- papers an earlier reader stored wrongly --------------------------------------------------
    def _check_reads(self) -> None:
        """Once per library (meta `reads_checked`), list the papers an earlier evtui read wrongly in meta
        `stale_reads` ({id: content hash}); a paper leaves the list once it is read again (its hash changes) or
        removed. Then a note says which are left, but for the bundled demo's, which ensure_demo reads again
        (evtui/demo.py). Every later open costs one meta read, and a look-up of the listed ids while any are left."""
        store = self.store  # shared (the app): read-only here; each write below switches it for a moment
        if store.get_meta("reads_checked") != READS_CHECKED:
            listed = {pid: h for pid, h in store.con.execute(_DOUBLED_JATS_ABSTRACTS).fetchall()}
            with self.rw(wait=1.0):
                store.set_meta("stale_reads", json.dumps(listed))
                store.set_meta("reads_checked", READS_CHECKED)
        listed = self._listed_stale()
        if not listed:
            return
        rows = self._stale_rows(listed)
        if len(rows) < len(listed):
            with self.rw(wait=1.0):
                store.set_meta("stale_reads", json.dumps({pid: h for pid, h, _path in rows}))
        demo = store.get_meta("demo_loaded") if self.config.demo else None
        own = [(pid, path) for pid, _h, path in rows if not (demo and _inside(path, demo))]
        if own:
            ids = ", ".join(pid for pid, _path in own[:3]) + (", …" if len(own) > 3 else "")
            self.notes.append(f"{len(own)} JATS paper(s) stored by an earlier evtui hold their abstract twice ({ids}): "
                              f"ingest their files again to correct them (evtui ingest {own[0][1] or 'FILE'}"
                              f"{' …' if len(own) > 1 else ''})")

    def _listed_stale(self) -> dict[str, str]:
        raw = self.store.get_meta("stale_reads")
        if not raw or raw == "{}":
            return {}
        try:
            listed = json.loads(raw)
        except ValueError:
            return {}
        return {str(k): str(v) for k, v in listed.items()} if isinstance(listed, dict) else {}

    def _stale_rows(self, listed: Mapping[str, str]) -> list[tuple[str, str, str]]:
        """(id, content hash, source path) of the listed papers still stored as the earlier reader read them."""
        rows = self.store.con.execute(
            "SELECT id, content_hash, source_path FROM papers WHERE state = 'ready' AND id IN (SELECT unnest(?))"
            " ORDER BY id", [list(listed)]).fetchall()
        return [(pid, h, path or "") for pid, h, path in rows if listed.get(pid) == h]

    def stale_reads(self) -> dict[str, str]:
        """id -> source path of the stored papers an earlier evtui read wrongly (a JATS paper with its abstract
        twice), still as it read them: ingesting their files again corrects them. {} on almost every open."""
        listed = self._listed_stale()
        return {pid: path for pid, _h, path in self._stale_rows(listed)} if listed else {}

    # -- consistency -----------------------------------------------------------------------------
    def recover(self) -> list[str]:
        """Finish whatever a crash interrupted. Returns the paper ids repaired."""
        with self._write_lock, self.rw():
            return self._recover()

    def _recover(self) -> list[str]:
        unfinished = self.store.unfinished()
        if not unfinished:
            return []
        pending = [pid for pid, st in unfinished if st == "pending"]
        deleting = [pid for pid, st in unfinished if st != "pending"]
        ids = pending + deleting
        self.index.delete_papers(ids)
        if pending:
            titles, years = self.store.titles_years(pending)
            self.index.add(self.store.sentences_of(pending), titles, years)
        crash_point("recover")
        self.index.commit()
        self.store.mark_ready(pending)
        if deleting:
            self.store.delete_papers(deleting)
        return ids

    def opening_notes(self) -> list[tuple[str, str]]:
        """What opening repaired or could not, for the CLI's stderr and the app's toasts, as (severity, text):
        a search index that was missing, half rebuilt (a killed command) or from another version was rebuilt from
        DuckDB, with how many sentences and how long (a search that took that long says why), then `notes`, a
        damaged index's with its size and time. A read-only library rebuilt nothing."""
        if self.read_only:
            return []
        rebuilt = self.reindexed
        out: list[tuple[str, str]] = []
        for note in self.notes:
            if rebuilt is not None and note.endswith(INDEX_REBUILT):  # its own note, and how long
                note = f"{note} ({rebuilt[0]:,} sentences, {rebuilt[1]:.1f}s)"
                rebuilt = None
            out.append(("warning", note))
        if rebuilt is not None:
            out.insert(0, ("information", f"rebuilt the search index from the database ({rebuilt[0]:,} sentences, "
                                          f"{rebuilt[1]:.1f}s): it was missing, incomplete or from another version"))
        return out

    def reindex_all(self) -> None:
        """Rebuild the whole index from DuckDB (after a schema change of the index)."""
        with self._write_lock, self.rw():
            self._reindex_all()

    def _reindex_all(self) -> None:
        # Marked in DuckDB until the rebuild's single commit: a rebuild killed half way (the damaged index was
        # already removed) is started again by the next open instead of leaving an index that silently lacks papers.
        self.store.set_meta("reindex_pending", "1")
        self.index.delete_all()
        papers = [p.id for p in self.store.papers()]
        for i in range(0, len(papers), 500):
            chunk = papers[i:i + 500]
            titles, years = self.store.titles_years(chunk)
            self.index.add(self.store.sentences_of(chunk), titles, years)
        self.index.commit()
        self.store.set_meta("reindex_pending", "0")

    def check_consistency(self) -> dict[str, object]:
        from evtui.repair import verify_database

        verify_database(self.store.con, self.config.home)  # every table read whole: damage is an EvtuiError
        found = self._consistency()
        if found["consistent"] or self.read_only:
            return {**found, "repaired": False}
        # The index is derived data and DuckDB the source of truth: an index restored from an older backup or
        # synced from another machine (sentences missing from searches, or removed papers still found) is rebuilt
        # from it, as the message for a damaged index promises, rather than only listed.
        self.recover()
        self.reindex_all()
        after = self._consistency()
        n_db, n_ix = len(found["only_in_db"]), len(found["only_in_index"])  # type: ignore[arg-type]
        self.notes.append(f"the search index disagreed with the database ({found['db_sentences']:,} sentences "
                          f"stored, {found['index_docs']:,} indexed; {n_db}{'+' if n_db == 20 else ''} missing, "
                          f"{n_ix}{'+' if n_ix == 20 else ''} extra): rebuilt it from the database")
        return {**after, "repaired": True, "before": found}

    def _consistency(self) -> dict[str, object]:
        db = self.store.all_sentence_ids()
        ix = self.index.sentence_ids()
        unfinished = self.store.unfinished()
        return {
            "consistent": db == ix and not unfinished,
            "db_sentences": len(db),
            "index_docs": len(ix),
            "only_in_db": sorted(db - ix)[:20],
            "only_in_index": sorted(ix - db)[:20],
            "unfinished_papers": unfinished,
        }

    # -- ingest ----------------------------------------------------------------------------------
    def _writes(self) -> Store:
        """The writers' own DuckDB connection, so a search on `store` in another thread never shares one."""
        if self._writer_store is None:
            self._writer_store = self.store.cursor()
        return self._writer_store

    def ingest(
        self,
        paths: Iterable[str | Path],
        fmt: str = "auto",
        on_progress: Callable[[IngestProgress], None] | None = None,
        *,
        one_copy: bool = True,
        share: bool = False,
    ) -> IngestReport:
        """`one_copy`: a paper whose DOI / PMCID / PMID is already stored under another id (a PDF of a JATS
        paper) is not added twice. A benchmark's corpus turns it off: its ids are the benchmark's own.
        `share` (`evtui ingest`, the app's ingest): DuckDB is read-write only while a batch is stored, read-only
        while files are read, so `evtui stats` / `search` in another process (or the app's searches) read the
        library meanwhile instead of being refused for the whole run (see sharing_reads)."""
        if not share:
            with self._write_lock, self.rw(), self._writes().memory_capped(INGEST_DB_MEMORY):
                return self._ingest_and_embed(paths, fmt, on_progress, one_copy, nullcontext, nullcontext)
        with self._write_lock, sharing_reads(self):
            # Between windows the writers' connection is read-only, and another thread's write (the app's) may
            # switch it: its reads hold _mode_lock, under which every switch happens, so none closes it mid-query.
            return self._ingest_and_embed(paths, fmt, on_progress, one_copy, self._ingest_window,
                                          lambda: self._mode_lock)

    @contextmanager
    def _ingest_window(self) -> Iterator[None]:
        """One batch's read-write window of a shared ingest. The cap is set anew in each: a switch re-makes the
        connection, and with it DuckDB's memory limit."""
        with self.rw(wait=WRITER_WAIT), self._writes().memory_capped(INGEST_DB_MEMORY):
            yield

    def _ingest_and_embed(self, paths: Iterable[str | Path], fmt: str,
                          on_progress: Callable[[IngestProgress], None] | None, one_copy: bool,
                          window: Callable[[], AbstractContextManager[object]],
                          reads: Callable[[], AbstractContextManager[object]]) -> IngestReport:
        report = self._ingest(paths, fmt, on_progress, one_copy, window, reads)
        # a PDF in the folder read bare and through the .bib beside it meets the same stored paper twice: one note
        report.notes = list(dict.fromkeys(report.notes))
        report.same_paper_notes = list(dict.fromkeys(report.same_paper_notes))
        if report.added or report.replaced:
            t0 = time.perf_counter()
            with window():  # one window: only this run's papers (~0.12 s each), read and written on one connection
                self._keep_paper_vectors(report)
            report.seconds += time.perf_counter() - t0
        return report

    def _keep_paper_vectors(self, report: IngestReport) -> None:
        """In a library whose papers have dense vectors (`evtui embed` ran), embed the new and replaced ones now
        (~0.12 s each): `best` fuses the vectors in only while every paper has one, so one added PDF would
        otherwise silently turn the dense half of its paper channel off. A failure here loses nothing stored."""
        from evtui import paper_vectors
        from evtui.embed import model_available

        con = self._writes().con
        if not paper_vectors.has_rows(con) or not model_available():
            return
        try:
            # only this ingest's papers: those an interrupted `evtui embed` left are its to finish (thousands of
            # papers and GBs of memory inside a one-file ingest, and with the library locked all the while)
            report.paper_vectors = paper_vectors.ensure_paper_vectors(self, con=con, papers=report.stored)
        except (EvtuiError, OSError, RuntimeError, ValueError) as exc:
            report.notes.append(f"the new papers' dense vectors were not computed ({exc}); `evtui embed` adds them")

    def _ingest(
        self,
        paths: Iterable[str | Path],
        fmt: str,
        on_progress: Callable[[IngestProgress], None] | None,
        one_copy: bool = True,
        window: Callable[[], AbstractContextManager[object]] = nullcontext,
        reads: Callable[[], AbstractContextManager[object]] = nullcontext,
    ) -> IngestReport:
        """`window()` is entered around each batch's writes (and the reads of what is stored that decide them),
        `reads()` around each read between them."""
        from evtui.ingest import DOC_SKIPPED, OTHER_KIND, discover, iter_papers
        from evtui.query import extract_abbreviations

        t0 = time.perf_counter()
        report = IngestReport()
        paths = list(paths)
        files, errors = discover(paths, skip=self.config.own_paths())
        # A README or LICENSE beside the papers is expected, not a failure: one note names them.
        docs = [e.path for e in errors if e.reason == DOC_SKIPPED]
        others = [e.path for e in errors if e.reason == OTHER_KIND]  # figures, data, code beside the papers: one note
        report.errors.extend(e for e in errors if e.reason not in (DOC_SKIPPED, OTHER_KIND))
        if docs:
            names = ", ".join(Path(d).name for d in docs[:3]) + (", …" if len(docs) > 3 else "")
            report.notes.append(f"not read as papers: {len(docs)} documentation file(s) ({names})")
        if others:
            kinds: dict[str, int] = {}
            for o in others:
                kind = Path(o.lower().removesuffix(".gz")).suffix
                kinds[kind] = kinds.get(kind, 0) + 1
            counted = sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))
            listed = ", ".join(f"{n} {kind}" for kind, n in counted[:5]) + (", …" if len(counted) > 5 else "")
            report.notes.append(f"not read: {len(others)} file(s) of kinds that hold no paper ({listed})")
        # Nothing here grows with the library: stored hashes are looked up per batch (a map of every paper's
        # hash was ~100 MB per million papers), and "already in this run" is a paper stored since the run began.
        with reads():
            row = self._writes().con.execute("SELECT CAST(current_timestamp AS TIMESTAMP)").fetchone()  # added_at
        run_start = row[0] if row else None
        progress = IngestProgress(files_total=len(files))
        stop: list[str] = []  # set when the disk is full: the rest of the files are not read
        batch: list[tuple[ParsedPaper, str]] = []
        batch_sents = 0
        in_batch: set[str] = set()
        digests_checked = False  # stored PDFs from before file_sha256 get theirs once per run, when a PDF comes
        # ids read a second time in this run with other content (a corpus file with a doc_id twice): not stored
        twice: list[tuple[str, str]] = []
        note_at: dict[str, int] = {}  # a metadata-only paper of the batch -> where its note is in report.notes

        def flush() -> None:
            nonlocal batch, batch_sents, in_batch, digests_checked
            if not batch:
                return
            open_window = ExitStack()
            try:
                # a reader of another process that keeps the file past WRITER_WAIT fails this batch only
                open_window.enter_context(window())
                batch, fresh = self._same_files(batch, report)
                stored = self._writes().paper_states([p.id for p, _h in batch])
                # a new id's DOI / PMCID / PMID / PDF file, to find the same paper stored under another id (but not
                # by the file for a new paper in a file that held another one: see _same_files)
                keys_of = {p.id: [k for k in identity_keys(p) if not (k[0] == "file" and p.id in fresh)]
                           for p, _h in batch if p.id not in stored} if one_copy else {}
                if not digests_checked and any(k[0] == "pdf" for keys in keys_of.values() for k in keys):
                    digests_checked = True
                    self._record_pdf_digests()
                found = self._writes().same_papers(k for keys in keys_of.values() for k in keys)
                titles_of = {p.id: title_key(p.title) for p, _h in batch
                             if p.id in keys_of and p.source_format in TITLE_CHECKED}
                titled = self._writes().same_titles(k for k in titles_of.values() if k)
                todo: list[tuple[ParsedPaper, str]] = []
                stubs: list[str] = []  # metadata-only papers that a full text of the same paper replaces
                winner_of: dict[str, str] = {}  # stub -> the id of the paper that replaces it
                held: dict[tuple[str, str], tuple[str, dict[str, Any], str]] = {}  # key -> (id, info, format) kept
                kept = self._stronger_stored([p for p, h in batch if p.id in stored and stored[p.id][0] != h])
                batch_paths = {q.id: q.source_path for q, _h in batch}  # once per batch, not per paper
                batch_sizes = {q.id: len(q.sentences) for q, _h in batch}
                for paper, h in batch:
                    state = stored.get(paper.id)
                    if state is not None and run_start is not None and state[1] >= run_start:
                        if state[0] != h:  # the same paper earlier in this run (two benchmark items): first wins;
                            twice.append((paper.id, paper.source_path))  # another text under its id: said
                        continue
                    if paper.id in kept:  # a "metadata only" note of it becomes the line that says so
                        line = f"{paper.source_path}: {paper.id}: {kept[paper.id]}"
                        at = note_at.get(paper.id)
                        if at is not None and "metadata only" in report.notes[at]:
                            report.notes[at] = line
                        else:
                            report.notes.append(line)
                        report.unchanged += 1
                        continue
                    if state is not None and state[0] == h:
                        report.unchanged += 1
                        if "reader" in paper.info:  # read again by another reader version, the same: recorded,
                            self._writes().set_paper_info(  # so that the next run skips the file unread
                                paper.id, json.dumps(paper.info, ensure_ascii=False, default=str))
                        continue
                    keys = keys_of.get(paper.id, []) if state is None else []
                    n_stubs = len(stubs)
                    other = self._same_paper(paper, keys, found, held, stubs, report, batch_paths, batch_sizes)
                    if other:
                        continue
                    winner_of.update(dict.fromkeys(stubs[n_stubs:], paper.id))
                    held.update({k: (paper.id, paper.info, paper.source_format) for k in keys})
                    tkey = titles_of.get(paper.id)
                    if tkey and titled.get(tkey, paper.id) not in (paper.id, *stubs):  # perhaps not a new paper
                        note = (f"{paper.source_path}: stored as {paper.id}, with the same title as {titled[tkey]} "
                                f"(another version of it, such as its preprint?): both kept; remove one if they are "
                                f"the same")
                        report.notes.append(note)
                        report.same_paper_notes.append(note)
                    elif tkey:
                        titled.setdefault(tkey, paper.id)
                    todo.append((paper, h))
                    report.by_format[paper.source_format] = report.by_format.get(paper.source_format, 0) + 1
                todo = [(p, h) for p, h in todo if p.id not in stubs]  # a stub of this batch is simply not stored
                if todo:
                    self._write_batch(todo, report, {pid: st[0] for pid, st in stored.items()},
                                      extract_abbreviations)
                if stubs:
                    self._follow_to_winners(winner_of, report)
                    self._remove(stubs)  # only stored ones are there to remove
            except Exception as exc:  # noqa: BLE001 - one failed batch must not end the ingest or lose its report
                # Rolled back, or left 'pending' for recover(): what was stored before is untouched either way.
                from evtui.repair import why_not_written

                full = why_not_written(self.config.home, exc)
                if full:  # every later batch would fail the same way: one message, and stop reading files
                    stop.append(full)
                    report.errors.append(IngestError(str(self.config.home), f"{len(batch)} paper(s) not stored: "
                                                     f"{full}; free some space and ingest again"))
                for paper, _h in [] if full else batch:
                    report.errors.append(IngestError(paper.source_path or "?",
                                                     f"paper {paper.id}: not stored ({type(exc).__name__}: {exc})"))
                try:
                    self.index.rollback()
                    self._recover()  # settle any 'pending' rows now rather than at the next open
                except Exception:  # noqa: BLE001 - the next open repairs it
                    pass
            finally:
                batch, batch_sents, in_batch = [], 0, set()
                note_at.clear()
                open_window.close()  # readers are let in again

        # The PDFs that a reference entry of this run read (a .bib and the PDFs it links in one folder, as Zotero's
        # "Export Files" writes them): met again as files of the folder, they are that entry's, already read.
        linked: dict[str, tuple[str, object, object]] = {}  # path -> (the entry's id, the PDF's sha256, reader)
        bare_linked: list[tuple[str, str, object, object]] = []  # those met bare: remembered (see _unchanged_pdf)
        for path in files:
            if stop:
                report.errors.append(IngestError(str(path), f"not read: {stop[0]}"))
                continue
            progress.current = str(path)
            if on_progress:
                on_progress(progress)
            try:
                with reads():
                    unchanged = self._unchanged_pdf(path, fmt)
                    zotero = None if unchanged else self._zotero_run(path, fmt)
                if unchanged:
                    report.unchanged += 1
                    report.files += 1
                    progress.files_done += 1
                    if on_progress:
                        on_progress(progress)
                    continue
                entry = linked.get(os.path.abspath(path)) if fmt in ("auto", "", None, "pdf") else None
                if entry is not None:  # counted as the bare reading of a linked PDF always was, but not read again
                    report.same_paper += 1
                    report.files += 1
                    progress.files_done += 1
                    bare_linked.append((os.path.abspath(path), *entry))
                    continue
                for item in iter_papers(path, fmt) if zotero is None else _in_run(zotero, path, fmt, report):
                    if isinstance(item, IngestError):
                        report.errors.append(item)
                        continue
                    progress.papers_seen += 1
                    crash_point("parse")
                    if item.source_format in ONE_PAPER_FILES and item.source_path:
                        # stored absolute: the file is found again whatever folder the next ingest runs in
                        item.source_path = os.path.abspath(item.source_path)
                    elif item.source_path and from_reference(item.info) and has_full_text(item.info):
                        linked[os.path.abspath(item.source_path)] = (
                            item.id, item.info.get("file_sha256"), item.info.get("reader"))
                    if item.id in in_batch:
                        # The same paper twice in one batch: first wins (across batches: see flush) — but a reference
                        # manager's entry (its title, authors, journal) wins over the bare PDF it links whichever is
                        # read first, as it does across batches and runs.
                        i = next(i for i, (p, _h) in enumerate(batch) if p.id == item.id)
                        if item.sentences and from_reference(item.info) and not from_reference(batch[i][0].info):
                            batch_sents += len(item.sentences) - len(batch[i][0].sentences)
                            batch[i] = (item, content_hash(item))
                        elif item.sentences and content_hash(item) != batch[i][1]:
                            twice.append((item.id, str(path)))
                        continue
                    if not item.sentences:
                        report.errors.append(IngestError(str(path), f"paper {item.id}: no text found"))
                        continue
                    in_batch.add(item.id)
                    if item.notes and not has_full_text(item.info):
                        note_at[item.id] = len(report.notes)
                    report.notes.extend(f"{path}: {note}" for note in item.notes)
                    batch.append((item, content_hash(item)))
                    batch_sents += len(item.sentences)
                    if batch_sents >= BATCH_SENTENCES:
                        flush()
                        if on_progress:
                            on_progress(progress)
                        if stop:
                            break
            except IngestError as exc:
                report.errors.append(exc)
            except (OSError, UnicodeError, ValueError) as exc:
                report.errors.append(IngestError(str(path), f"{type(exc).__name__}: {exc}"))
            report.files += 1
            progress.files_done += 1
            if on_progress:
                on_progress(progress)
        flush()
        if bare_linked and not stop:
            self._remember_linked(bare_linked, window)
        if twice:
            ids = ", ".join(dict.fromkeys(pid for pid, _path in twice[:3])) + (", …" if len(twice) > 3 else "")
            files_of = {Path(path).name for _pid, path in twice}
            where = f" in {next(iter(files_of))}" if len(files_of) == 1 else ""
            report.notes.append(f"{len(twice)} paper id(s) came again{where} with other text: the first reading is "
                                f"kept, the later one not stored ({ids})")
        if not stop:
            with reads():
                self._note_missing(paths, report)
        self._abbrev = None
        report.seconds = time.perf_counter() - t0
        return report

    def _note_missing(self, paths: Sequence[str | Path], report: IngestReport) -> None:
        """A note on the papers stored from an ingested folder whose files are no longer there. They are kept:
        a file deleted or moved out of the folder may be a mistake, and its paper may hold selected evidence."""
        folders = [Path(p).expanduser() for p in paths if Path(p).expanduser().is_dir()]
        if not folders:
            return
        prefixes = list({os.path.join(form, "") for f in folders for form in _path_forms(str(f))})
        rows: set[tuple[str, str]] = set()
        for prefix in prefixes:  # a few: each folder as given, absolute and relative
            rows.update(self._writes().con.execute(
                "SELECT id, source_path FROM papers WHERE state = 'ready' AND source_format IN (SELECT unnest(?))"
                " AND starts_with(source_path, ?)", [list(ONE_PAPER_FILES), prefix]).fetchall())
        gone = sorted((pid, path) for pid, path in rows if _gone(path))
        if gone:
            ids = ", ".join(pid for pid, _path in gone[:3]) + (", …" if len(gone) > 3 else "")
            where = "these folders" if len(folders) > 1 else str(folders[0])
            report.notes.append(f"{len(gone)} stored paper(s) read from {where} no longer have their file there "
                                f"({ids}): kept; `evtui remove ID` drops one")

    def _same_files(self, batch: list[tuple[ParsedPaper, str]],
                    report: IngestReport) -> tuple[list[tuple[ParsedPaper, str]], set[str]]:
        """The batch with each paper read again from its stored file under the stored paper's id. A text paper's id
        holds a hash of its content and a PDF's its path or DOI, so an edited draft, a PDF that gained a DOI, or a
        moved file would otherwise be a second paper beside the stale one. Recognising the file rather than changing
        the id scheme keeps every stored id (selections and cached verdicts name sentence ids: no migration), and
        keeps two different files of identical content one paper, as before. The replacement is then the ordinary
        one-transaction replace of a paper (crash-safe, selected sentences follow their text: Store.write_pending).
        A moved file (same reading, its stored path gone) keeps its paper, with the new path. Also returns the ids of
        new papers read from a file that a stored paper came from (that paper is now elsewhere, or the file was
        overwritten by another paper): they are stored, not taken for that paper again."""
        mine = [p for p, _h in batch if p.source_format in ONE_PAPER_FILES and p.source_path]
        fresh: set[str] = set()
        if not mine:
            return batch, fresh
        paths = {form for p in mine for form in _path_forms(p.source_path)}
        rows = self._writes().con.execute(
            "SELECT id, source_path, source_format, content_hash, title, n_sentences FROM papers"
            " WHERE state = 'ready' AND (id IN (SELECT unnest(?)) OR source_path IN (SELECT unnest(?))"
            " OR (source_format IN (SELECT unnest(?)) AND title IN (SELECT unnest(?))))"
            " ORDER BY added_at DESC, id DESC",
            [[p.id for p, _h in batch], list(paths), list(ONE_PAPER_FILES), list({p.title for p in mine})]).fetchall()
        by_id = {r[0]: r for r in rows}
        by_path: dict[str, list[tuple[Any, ...]]] = {}
        for r in rows:
            if r[1] and r[2] in ONE_PAPER_FILES:
                by_path.setdefault(os.path.abspath(r[1]), []).append(r)
        # First the copies of a content whose stored paper was since re-read from its own, edited file (a/x.md
        # edited, b/x.md still the old text): each is a paper of its own now, and its id is free for the edit.
        hashes = [h for _p, h in batch]
        for i, (p, h) in enumerate(batch):
            row = by_id.get(p.id)
            if (p.source_format == "text" and row is not None and row[1] and row[3] != h
                    and os.path.abspath(row[1]) != os.path.abspath(p.source_path)
                    and self._holds_other_text(row[1], p.id)):
                where = os.path.abspath(p.source_path).encode()
                p.id = f"{p.id}-{hashlib.sha1(where, usedforsecurity=False).hexdigest()[:6]}"
                hashes[i] = content_hash(p)
        taken = {p.id for p, _h in batch}
        out: list[tuple[ParsedPaper, str]] = []
        texts: dict[str, str] = {}  # a text's content whatever its id -> the id of the first file of it in this batch
        for (p, _h0), h in zip(batch, hashes, strict=True):
            if p.source_format not in ONE_PAPER_FILES or not p.source_path:
                out.append((p, h))
                continue
            copy_of = self._copy_of(p, rows, texts, taken)
            if copy_of is not None:  # "notes (1).md", "notes copy.md": the same text under another name
                why = f"not added: an identical copy of this file is already in the library as {copy_of}"
                report.same_paper += 1
                report.notes.append(f"{p.source_path}: {why}")
                report.same_paper_notes.append(f"{p.source_path}: {why}")
                continue
            here = os.path.abspath(p.source_path)
            row = by_id.get(p.id)
            if row is None:
                olds = [r for r in by_path.get(here, []) if r[2] == p.source_format and r[0] != p.id]
                # A stored id made from the file: this is its new version, whatever it now says (a draft's title
                # changes too). A stored identifier (DOI) but none read now: the same paper only by its title.
                if olds and olds[0][0] not in taken and (file_derived(olds[0][0]) or (
                        file_derived(p.id) and _same_title(olds[0][4], p.title))):
                    p.id, h = self._rekeyed(p, olds[0][0], taken)  # the latest reading of this file: its new version
                    if len(olds) > 1:
                        extra = ", ".join(r[0] for r in olds[1:4]) + (", …" if len(olds) > 4 else "")
                        report.notes.append(f"{p.source_path}: earlier versions of this file are also stored ({extra}):"
                                            f" `evtui remove` them if they are not wanted")
                elif olds:  # another paper in this file now (by its identifiers, or the old one's are read elsewhere)
                    fresh.add(p.id)
                    report.notes.append(f"{p.source_path}: now holds another paper ({p.id}) than {olds[0][0]}, read "
                                        f"from it before, which is kept (`evtui remove {olds[0][0]}` drops it)")
                else:
                    moved = next((r for r in rows if r[2] == p.source_format and r[4] == p.title and r[0] not in taken
                                  and r[5] == len(p.sentences) and _gone(r[1])
                                  and content_hash(_with_id(p, r[0])) == r[3]), None)
                    if moved is not None:  # the same reading, its old file gone: moved or renamed
                        p.id, h = self._rekeyed(p, moved[0], taken)
                        row = moved
                    elif (edited := self._moved_and_edited(p, rows, taken)) is not None:
                        report.notes.append(f"{p.source_path}: moved from {edited[1]} and edited; replaces its "
                                            f"earlier version, {edited[0]}")
                        p.id, h = self._rekeyed(p, edited[0], taken)
            if row is not None and row[0] == p.id and row[3] == h and row[1] and _gone(row[1]):
                self._writes().con.execute("UPDATE papers SET source_path = ? WHERE id = ?", [p.source_path, p.id])
                report.notes.append(f"{p.source_path}: moved from {row[1]}; kept as {p.id}")
            out.append((p, h))
        return out, fresh

    @staticmethod
    def _copy_of(p: ParsedPaper, rows: Sequence[tuple[Any, ...]], texts: dict[str, str], taken: set[str]) -> str | None:
        """The id of the paper already stored (or earlier in this batch) from another text file of exactly this
        content, under another name, whose file is still there (or is read in this batch, moved); None for a paper
        of its own. A text's id holds its file name, so a copy ("notes (1).md") was a second paper where a copy of a
        PDF is not. The content is compared whole (content_hash under the other's id), never by the id's short
        digest alone."""
        if p.source_format != "text" or not file_derived(p.id) or any(r[0] == p.id for r in rows):
            return None
        for r in rows:
            if (r[2] == "text" and file_derived(r[0]) and r[4] == p.title and r[5] == len(p.sentences)
                    and r[1] and os.path.abspath(r[1]) != os.path.abspath(p.source_path)
                    and (r[0] in taken or not _gone(r[1]))
                    and content_hash(_with_id(p, r[0])) == r[3]):
                return str(r[0])
        key = content_hash(_with_id(p, ""))
        first = texts.setdefault(key, p.id)
        return first if first != p.id else None

    def _moved_and_edited(self, p: ParsedPaper, rows: Sequence[tuple[Any, ...]],
                          taken: set[str]) -> tuple[Any, ...] | None:
        """The stored paper that `p` is a moved (or renamed) and edited version of: one of the same format and title,
        both ids made from their files, whose file is gone and most of whose sentences `p` still has. Otherwise the
        edited draft in its new place would be a second paper beside its stale self, both found by every search."""
        if not file_derived(p.id):
            return None
        olds = [r for r in rows if r[2] == p.source_format and r[0] not in taken and file_derived(r[0])
                and _same_title(r[4], p.title) and _gone(r[1])]
        if len(olds) != 1:  # none, or several stale copies: which one this is cannot be told
            return None
        texts = {s.text for s in p.sentences if not s.is_heading}
        stored = [t for (t,) in self._writes().con.execute(
            "SELECT text FROM sentences WHERE paper_id = ? AND NOT is_heading", [olds[0][0]]).fetchall()]
        kept = sum(t in texts for t in stored)
        return olds[0] if stored and kept >= MOVED_EDIT_KEPT * len(stored) else None

    def _unchanged_pdf(self, path: Path, fmt: str) -> bool:
        """Whether `path` is a PDF stored from this very path, with the same bytes (sha256) and read by this version
        of the reader: then parsing it again (a worker process, ~0.3 s a paper) would read the same paper, and a
        touched or re-synced folder of hundreds of PDFs is re-ingested in seconds."""
        if fmt not in ("auto", "", None, "pdf") or path.suffix.lower() != ".pdf":
            return False
        from evtui.ingest.pdf import PDF_READER

        try:
            digest = content_sha256(path)
        except OSError:
            return False  # the reader reports why
        row = self._writes().con.execute(
            "SELECT 1 FROM papers p JOIN paper_info i ON i.paper_id = p.id WHERE p.state = 'ready'"
            " AND p.source_format = 'pdf' AND p.source_path IN (SELECT unnest(?))"
            " AND json_extract_string(i.info, '$.file_sha256') = ? AND json_extract_string(i.info, '$.reader') = ?"
            " LIMIT 1", [list(_path_forms(str(path))), digest, PDF_READER]).fetchone()
        # or this file, found before to be a paper stored under another id (its JATS text): the same verdict again
        return row is not None or \
            self._writes().pdf_reading(digest, PDF_READER, list(_path_forms(str(path)))) is not None

    def _remember_linked(self, bare: Sequence[tuple[str, str, object, object]],
                         window: Callable[[], AbstractContextManager[object]]) -> None:
        """Record that each PDF met bare after a reference entry read it in this run (path, the entry's id, sha256,
        reader) is that entry's paper: the next ingest of the folder counts it unchanged, unread."""
        try:
            with window():
                for path, paper_id, digest, reader in bare:
                    if isinstance(digest, str) and digest and isinstance(reader, str):
                        self._writes().remember_pdf_reading(digest, reader, paper_id, path)
        except Exception:  # noqa: BLE001 - only a cache: without it the next ingest reads the PDF again
            pass

    def _remember_pdf(self, info: Mapping[str, Any], paper_id: str, path: str | None) -> None:
        """Record that the bare PDF at `path` read with `info` is the stored paper `paper_id` (see _unchanged_pdf)."""
        digest, reader = info.get("file_sha256"), info.get("reader")
        if isinstance(digest, str) and digest and isinstance(reader, str) and path and not from_reference(info):
            self._writes().remember_pdf_reading(digest, reader, paper_id, os.path.abspath(path))

    @staticmethod
    def _rekeyed(p: ParsedPaper, stored_id: str, taken: set[str]) -> tuple[str, str]:
        taken.add(stored_id)
        p.id = stored_id
        return stored_id, content_hash(p)

    @staticmethod
    def _holds_other_text(stored_path: str, paper_id: str) -> bool:
        """Whether the file a text paper was stored from now holds other content than `paper_id` was made from."""
        from evtui.ingest.loaders import file_text_digest

        try:
            return file_text_digest(Path(stored_path)) != paper_id.rsplit("-", 1)[-1]
        except (OSError, IngestError):
            return False

    def _zotero_run(self, path: Path, fmt: str) -> ZoteroRun | None:
        """For a zotero.sqlite met among the paths (`evtui ingest ~/Zotero`) with no run set by the caller: a run
        that skips the items whose stored version is unchanged, as `ingest --zotero` does (their PDFs unread)."""
        from evtui.ingest.zotero import ZoteroRun, active_run, known_versions

        if path.name.lower() != "zotero.sqlite" or fmt not in ("auto", "", None, "zotero") or active_run() is not None:
            return None
        return ZoteroRun(known_versions=known_versions(self._writes().paper_infos()))

    def _record_pdf_digests(self) -> None:
        """A library from before `file_sha256`: the sha256 of each stored paper's PDF that is still on disk, so that
        a copy of it ingested now is found (evtui.ingest.pdf records it for every PDF read since)."""
        store = self._writes()
        for pid, path, info in store.pdfs_without_digest():
            try:
                digest = content_sha256(Path(path))
            except OSError:  # moved or deleted since: nothing to compare a copy with
                continue
            store.set_paper_info(pid, json.dumps({**info, "file_sha256": digest}, ensure_ascii=False, default=str))

    def _stronger_stored(self, papers: Sequence[ParsedPaper]) -> dict[str, str]:
        """Those of `papers` (each stored under its id with other content) whose stored reading is the stronger
        (evtui.readings.weaker): id -> why it is kept. A reference entry whose PDF went missing or broke ("download
        files on demand", a moved folder) or a stub JATS file never replaces the full text, nor drops the
        sentences selected in it."""
        from evtui.readings import weaker

        if not papers:
            return {}
        ids = [p.id for p in papers]
        rows = {r[0]: r[1:] for r in self._writes().con.execute(
            "SELECT id, source_format, n_sentences, source_path FROM papers WHERE id IN (SELECT unnest(?))",
            [ids]).fetchall()}
        infos = self._writes().paper_infos(ids)
        out: dict[str, str] = {}
        for p in papers:
            if p.id not in rows:
                continue
            fmt, n, path = rows[p.id]
            why = weaker(p, str(fmt or ""), int(n or 0), infos.get(p.id, {}),
                         same_file=bool(path) and os.path.abspath(str(path)) == os.path.abspath(p.source_path or ""))
            if why:
                out[p.id] = why
        return out

    def _same_paper(self, paper: ParsedPaper, keys: list[tuple[str, str]],
                    found: dict[tuple[str, str], str], held: dict[tuple[str, str], tuple[str, dict[str, Any], str]],
                    stubs: list[str], report: IngestReport, batch_paths: Mapping[str, str] | None = None,
                    batch_sizes: Mapping[str, int] | None = None) -> str | None:
        """The id of the paper already kept under another id with one of `paper`'s identifiers (a PDF of a JATS
        paper: its DOI; a PDF that a .bib entry also links: its file), noted and counted; None to store `paper`.
        The better record wins instead when `paper` is one: a full text over a metadata-only entry, and a reference
        manager's entry (its title, authors, year) over the bare PDF it links, and a JATS file (the publisher's own
        text) over a PDF reading of the same DOI / PMCID / PMID. The loser goes to `stubs`, to be removed once
        `paper` is stored: the paper keeps the winner's id, as in each of these cases."""
        from evtui.readings import weaker

        infos: dict[str, dict[str, Any]] | None = None
        for key in keys:
            fmt: str | None = None  # the other's format, looked up only where it decides
            if key in held and held[key][0] != paper.id:
                other, info, fmt = held[key]
            elif key in found and found[key] != paper.id:
                other = found[key]
                if infos is None:
                    infos = self._writes().paper_infos([other])
                info = infos.get(other, {})
            else:
                continue
            full = has_full_text(info)
            if not full and has_full_text(paper.info):
                stubs.append(other)
                report.notes.append(f"{paper.source_path}: the full text of {other} (same {key[0].upper()} "
                                    f"{key[1]}), stored as {paper.id}; the metadata-only entry is removed")
                return None
            # the same file (whichever key matched first: a PDF's DOI is listed before its file)
            same_file = any(k[0] in ("file", "pdf") and (found.get(k) == other or held.get(k, ("",))[0] == other)
                            for k in keys)
            if same_file and from_reference(paper.info) and not from_reference(info):
                stubs.append(other)
                report.notes.append(f"{paper.source_path}: read through its reference entry as {paper.id}, which "
                                    f"replaces {other} (the same {'PDF' if key[0] == 'pdf' else 'file'} read bare)")
                return None
            # a publisher's JATS text (a file, or Europe PMC's full text) over a PDF reading
            if (paper.source_format == "jats" or (paper.source_format == "europepmc" and has_full_text(paper.info))) \
                    and key[0] in ("doi", "pmcid", "pmid"):
                if fmt is None:
                    stored = self._writes().paper(other)
                    fmt = stored.source_format if stored is not None else ""
                pdf = self._writes().paper(other) if fmt == "pdf" else None
                n_pdf = pdf.n_sentences if pdf is not None else (batch_sizes or {}).get(other, 0)
                why = weaker(paper, "PDF", n_pdf, info, same_file=False) if fmt == "pdf" else None
                if why:
                    report.same_paper += 1
                    note = f"{paper.source_path}: not added as {paper.id}: {why} (as {other})"
                    report.notes.append(note)
                    report.same_paper_notes.append(note)
                    return other
                if fmt == "pdf":
                    stubs.append(other)
                    # the PDF, read again there, is this paper: skipped unread (stored, or read in this same batch)
                    self._remember_pdf(info, paper.id, pdf.source_path if pdf is not None else
                                       (batch_paths or {}).get(other))
                    report.notes.append(f"{paper.source_path}: the JATS text replaces the PDF reading of {other} (same "
                                        f"{key[0].upper()} {key[1]}), stored as {paper.id}")
                    return None
            report.same_paper += 1
            if paper.source_format == "pdf":  # the next ingest skips this file unread, as unchanged
                self._remember_pdf(paper.info, other, paper.source_path)
            why = ""
            if full and not has_full_text(paper.info):
                why = f"{paper.id}: already in the library with its full text, as {other}"
            elif key[0] == "pdf":
                why = (f"not added: an identical copy of this PDF is already in the library as {other} (remove "
                       f"{other} first to replace it)")
            elif key[0] != "file":
                why = (f"not added: the same paper ({key[0].upper()} {key[1]}) is already in the library as {other} "
                       f"(remove {other} first to replace it)")
            elif not from_reference(info):  # a PDF beside its .bib read again: counted, not noted file by file
                why = f"not added again: this file is already in the library as {other}"
            elif from_reference(paper.info):  # two entries (a duplicate, two exports) that link one PDF: the first
                why = (f"not added: {paper.id} links the same PDF as {other}, already in the library (a duplicate "
                       f"entry? remove {other} first to replace it)")
            if why:
                report.notes.append(f"{paper.source_path}: {why}")
                report.same_paper_notes.append(f"{paper.source_path}: {why}")
            return other
        return None

    def _write_batch(
        self,
        batch: Sequence[tuple[ParsedPaper, str]],
        report: IngestReport,
        known: dict[str, str],
        extract_abbreviations: Callable[[Iterable[str]], dict[str, str]],
    ) -> None:
        papers: list[Paper] = []
        sentences: list[Sentence] = []
        abbrevs: list[tuple[str, str, str]] = []
        infos = [(p.id, json.dumps(p.info, ensure_ascii=False, default=str)) for p, _h in batch if p.info]
        for p, h in batch:
            sents = [
                Sentence(sentence_id(p.id, i), p.id, i, s.section_title, s.section_kind, s.is_heading, s.text)
                for i, s in enumerate(p.sentences)
            ]
            sentences.extend(sents)
            papers.append(Paper(
                id=p.id, title=p.title, authors=p.authors, year=p.year, journal=p.journal, doi=p.doi,
                pmid=p.pmid, pmcid=p.pmcid, licence=p.licence, source_path=p.source_path,
                source_format=p.source_format, content_hash=h, n_sentences=len(sents),
            ))
            with_parens = [s.text for s in p.sentences if "(" in s.text]
            if with_parens:
                abbrevs.extend((p.id, short, long) for short, long in extract_abbreviations(with_parens).items())
        ids = [p.id for p in papers]
        selected, selected_ids = self._selected_rows([pid for pid in ids if pid in known])
        # DuckDB's transaction runs in a thread (it releases the GIL) while Tantivy takes the documents;
        # the index is committed only after the rows are durable as 'pending', which keeps recovery exact.
        with ThreadPoolExecutor(max_workers=1) as pool:
            pending = pool.submit(self._writes().write_pending, papers, sentences, abbrevs, infos)
            self.index.delete_papers(pid for pid in ids if pid in known)
            self.index.add(sentences, {p.id: p.title for p in papers}, {p.id: p.year for p in papers})
            try:
                pending.result()
            except BaseException:
                self.index.rollback()
                raise
        crash_point("index_commit")
        self.index.commit()
        crash_point("mark_ready")
        self._writes().mark_ready(ids)
        if selected:
            self._settle_selections(selected, selected_ids, sentences, report)
        for stored in papers:
            if stored.id in known:
                report.replaced += 1
            else:
                report.added += 1
            report.stored.append(stored.id)
            known[stored.id] = stored.content_hash
        report.sentences += len(sentences)

    def _follow_to_winners(self, winner_of: Mapping[str, str], report: IngestReport) -> None:
        """Selected sentences of papers about to give way to a better record of the same paper (a PDF reading to its
        JATS text, a metadata-only entry to its full text) go to the same sentence of that paper, as those of a paper
        replaced under its own id do, instead of staying behind as "no longer in the library"."""
        rows, selected = self._selected_rows(list(winner_of))
        if not rows:
            return
        stored = {p for (p,) in self._writes().con.execute(
            "SELECT id FROM papers WHERE id IN (SELECT unnest(?))", [list(set(winner_of.values()))]).fetchall()}
        rows = [(*r[:9], winner_of[r[9]], *r[10:]) for r in rows if winner_of.get(r[9]) in stored]
        if rows:
            self._settle_selections(rows, selected, self._writes().sentences_of(list({r[9] for r in rows})), report)

    def _selected_rows(self, paper_ids: Sequence[str]) -> tuple[list[tuple[Any, ...]], set[tuple[str, str]]]:
        """The selection's rows on sentences of these stored papers, before they are replaced (every column, then
        the sentence's paper, text and position), and every selected item (sentence id, query)."""
        con = self._writes().con
        if not paper_ids or not con.execute(
                "SELECT 1 FROM duckdb_tables() WHERE table_name = 'selections'").fetchone():
            return [], set()
        rows = con.execute(
            "SELECT sel.sentence_id, sel.position, sel.query, sel.mode, sel.aspects, sel.highlights, sel.method,"
            " sel.score, sel.added_at, s.paper_id, s.text, s.position FROM selections sel JOIN sentences s"
            " ON s.id = sel.sentence_id WHERE s.paper_id IN (SELECT unnest(?)) ORDER BY sel.position",
            [list(paper_ids)]).fetchall()
        every = {(r[0], r[1]) for r in con.execute("SELECT sentence_id, query FROM selections").fetchall()
                 } if rows else set()
        return rows, every

    def _settle_selections(self, before: Sequence[tuple[Any, ...]], selected_before: set[tuple[str, str]],
                           sentences: Sequence[Sentence], report: IngestReport) -> None:
        """The selection of replaced papers, settled on their new versions: each selected sentence goes to the same
        text in the new version (the nearest by position), else to its revision (the most similar sentence, clearly
        the same one edited: its highlights dropped, their offsets were the old text's), else it leaves the
        selection, with a note, rather than quote whatever sentence now holds its old number. Store.write_pending
        moves the unchanged ones already, but one whose text changed kept its number there and could take the
        number another selected sentence moved to: the selection is redone here from the rows as they were. An item
        is (sentence, query): a sentence selected for two questions is settled once per question."""
        from difflib import SequenceMatcher

        by_paper: dict[str, list[Sentence]] = {}
        for s in sentences:
            by_paper.setdefault(s.paper_id, []).append(s)
        target: dict[int, tuple[str, bool]] = {}  # row -> (new id, same text)
        used: set[tuple[str, str]] = set()  # (new id, query): each question's items settle apart
        for i, row in enumerate(before):  # the same text first, so that no revision takes its place
            same = [s for s in by_paper.get(row[9], []) if s.text == row[10] and (s.id, row[2]) not in used]
            if same:
                best = min(same, key=lambda s: abs(s.position - row[11]))
                target[i] = (best.id, True)
                used.add((best.id, row[2]))
        for i, row in enumerate(before):
            if i in target:
                continue
            found, ratio = None, REVISED_SENTENCE
            for s in by_paper.get(row[9], []):
                if s.is_heading or (s.id, row[2]) in used:
                    continue
                m = SequenceMatcher(None, row[10], s.text, autojunk=False)
                if m.real_quick_ratio() >= ratio and m.quick_ratio() >= ratio and m.ratio() >= ratio:
                    found, ratio = s.id, m.ratio()
            if found is not None:
                target[i] = (found, False)
                used.add((found, row[2]))
        con = self._writes().con
        now = {(r[0], r[1]) for r in con.execute("SELECT sentence_id, query FROM selections").fetchall()}
        # the items as they were, and the store's moves
        stale = sorted({(row[0], row[2]) for row in before} | (now - selected_before))
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute("DELETE FROM selections s USING (SELECT unnest(?) AS sid, unnest(?) AS q) d"
                        " WHERE s.sentence_id = d.sid AND s.query = d.q",
                        [[sid for sid, _ in stale], [q for _, q in stale]])
            for i, row in enumerate(before):
                if i in target:
                    new_id, same_text = target[i]
                    con.execute("INSERT OR REPLACE INTO selections (sentence_id, position, query, mode, aspects,"
                                " highlights, method, score, added_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                [new_id, *row[1:5], row[5] if same_text else "[]", *row[6:9]])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        dropped = [row[10] for i, row in enumerate(before) if i not in target]
        if dropped:
            quoted = "; ".join(f"“{t[:60]}{'…' if len(t) > 60 else ''}”" for t in dropped[:3])
            report.notes.append(f"{len(dropped)} selected sentence(s) are no longer in the new version of their paper "
                                f"and left the selection: {quoted}")

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

    def remove(self, paper_ids: Sequence[str]) -> int:
        with self._write_lock, self.rw():
            return self._remove(paper_ids)

    def _remove(self, paper_ids: Sequence[str]) -> int:
        present = [pid for pid in paper_ids if self._writes().paper(pid)]
        if not present:
            return 0
        self._writes().mark_deleting(present)
        self.index.delete_papers(present)
        self.index.commit()
        self._writes().delete_papers(present)
        return len(present)

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


def audit(library: Library) -> dict[str, Any]:
    """Everything a crash must never leave behind (the crash tests' check after a kill), beyond
    `Library.check_consistency` (id sets agree, no unfinished paper): orphan rows, papers whose stored sentence
    count is wrong, duplicate ids on either side, duplicate embedding or paper-vector rows, a paper channel out of step with the
    ready papers. `ok` is True only when all hold."""
    from evtui import paper_vectors
    from evtui.embed import duplicate_rows

    check = library.check_consistency()
    tables = library.store.integrity()
    ix_ids = library.index.sentence_ids()
    out: dict[str, Any] = {
        "consistent": bool(check["consistent"]),
        "unfinished_papers": len(check["unfinished_papers"]),  # type: ignore[arg-type]
        "db_sentences": check["db_sentences"],
        "index_docs": library.index.num_docs(),
        "orphan_sentences": tables["orphan_sentences"],
        "orphan_abbreviations": tables["orphan_abbreviations"],
        "wrong_counts": tables["wrong_counts"],
        "duplicate_db_ids": tables["duplicate_db_ids"],
        "duplicate_index_docs": library.index.num_docs() - len(ix_ids),
        "duplicate_positions": tables["duplicate_positions"],
    }
    # The paper-level channel (evtui/papers.py) holds exactly one document per ready paper.
    channel = library.index.paper_ids()
    out["paper_channel_mismatch"] = len(set(channel) ^ library.store.ready_ids()) + len(channel) - len(set(channel))
    out["duplicate_embeddings"] = duplicate_rows(library.store.con)
    out["duplicate_paper_vectors"] = paper_vectors.duplicate_rows(library.store.con)
    problems = [k for k, v in out.items() if k not in {"consistent", "db_sentences", "index_docs"} and v]
    out["ok"] = out["consistent"] and not problems
    out["problems"] = problems if out["consistent"] else ["inconsistent", *problems]
    return out
