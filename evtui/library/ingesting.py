"""Files in: discovery, batches of parsed papers, and the flush that decides for each paper whether it is new, a new
version, unchanged, or a paper already stored under another id (same_paper.py), before writing.py stores the batch."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evtui.errors import EvtuiError, IngestError
from evtui.faults import batch_sentences, crash_point
from evtui.library.identity import (
    ONE_PAPER_FILES,
    TITLE_CHECKED,
    _gone,
    _path_forms,
    content_hash,
    from_reference,
    has_full_text,
    identity_keys,
    title_key,
)
from evtui.library.report import IngestProgress, IngestReport
from evtui.library.same_paper import SamePapers
from evtui.library.writing import BatchWrites
from evtui.models import ParsedPaper
from evtui.sharing import WRITER_WAIT, sharing_reads

if TYPE_CHECKING:
    from evtui.ingest.zotero import ZoteroRun

# DuckDB's memory limit while ingesting (the configured db_memory when that is lower): appends need no cache of
# what they wrote, and an ingest's resident memory must not grow with the library (evtui/store.py memory_capped).
INGEST_DB_MEMORY = "256MB"
BATCH_SENTENCES = batch_sentences(50_000)  # EVTUI_BATCH_SENTENCES: crash tests want many batches


def _in_run(run: ZoteroRun, path: Path, fmt: str, report: IngestReport) -> Iterator[ParsedPaper | IngestError]:
    """A zotero.sqlite's papers read inside `run` (evtui/ingest/zotero.py: ZoteroRun), its skipped items counted as
    unchanged once it is read."""
    from evtui.ingest import iter_papers
    from evtui.ingest.zotero import zotero_run

    with zotero_run(run):
        yield from iter_papers(path, fmt)
    report.unchanged += run.skipped


class Ingesting(SamePapers, BatchWrites):
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
