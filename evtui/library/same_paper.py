"""Recognising a paper already stored: the same file read again (an edited draft, a moved or renamed file, a copy),
an unchanged PDF skipped unread, and the same paper under another id (its DOI, PMCID, PMID, PDF bytes or file), where
the better record wins (a full text over an entry, an entry over its bare PDF, a JATS text over a PDF reading)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evtui.errors import IngestError
from evtui.filehash import content_sha256
from evtui.library.base import LibraryBase
from evtui.library.identity import (
    MOVED_EDIT_KEPT,
    ONE_PAPER_FILES,
    _gone,
    _path_forms,
    _same_title,
    _with_id,
    content_hash,
    file_derived,
    from_reference,
    has_full_text,
)
from evtui.library.report import IngestReport
from evtui.models import ParsedPaper

if TYPE_CHECKING:
    from evtui.ingest.zotero import ZoteroRun


class SamePapers(LibraryBase):
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
