"""Zotero: the items of a Zotero data folder (`zotero.sqlite` + `storage/KEY/file.pdf`).

Zotero keeps zotero.sqlite locked (and its WAL unmerged) while it runs, so the database is COPIED (with its -wal
and -journal files) to a temporary folder and only the copy is opened, read-only: the user's library is never
written. Item fields (title, date, DOI, publicationTitle, PMID in `extra`), creators in their order, collections
(a collection also holds its subcollections' items) and PDF attachments (stored: storage/KEY/name.pdf; linked:
an absolute path). An item without a readable PDF is a metadata-only paper ("no full text").

Re-running picks up new and changed items only: each paper's info keeps a version (the item's dateModified and
its PDF's size and mtime); with `known_versions` set (the CLI sets it from the library), an item whose version is
unchanged is not read again (its PDF is not even parsed) and is counted in `skipped`.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import tempfile
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from evtui.errors import IngestError
from evtui.ingest.refs import SUPPLEMENT, person_name
from evtui.ingest.splitter import split_sentences
from evtui.models import ParsedPaper, ParsedSentence

Result = Iterator["ParsedPaper | IngestError"]
_SKIP_TYPES = ("attachment", "note", "annotation")
_ATTACHMENT_TITLES = frozenset({"full text pdf", "pdf", "full text", "submitted version", "accepted version",
                                 "preprint pdf", "published version"})
_STANDALONE_PDFS = ("SELECT itemID FROM itemAttachments WHERE parentItemID IS NULL"
                    " AND (contentType = 'application/pdf' OR lower(path) LIKE '%.pdf')")


@dataclass
class ZoteroRun:
    """What one `ingest --zotero` asks for and what it skipped."""

    collection: str | None = None
    known_versions: dict[str, str] = field(default_factory=dict)
    skipped: int = 0


_RUN: ContextVar[ZoteroRun | None] = ContextVar("evtui_zotero_run", default=None)


def active_run() -> ZoteroRun | None:
    """The ZoteroRun this ingest set, if any (`evtui ingest --zotero` sets one; a zotero.sqlite met in a folder
    gets one from the library, so that it too skips unchanged items)."""
    return _RUN.get()


def known_versions(infos: dict[str, dict[str, object]]) -> dict[str, str]:
    """paper id -> stored Zotero version, from the library's paper infos."""
    return {pid: str(info.get("zotero_version")) for pid, info in infos.items()
            if pid.startswith("zotero:") and info.get("zotero_version") is not None}


@contextmanager
def zotero_run(run: ZoteroRun) -> Iterator[ZoteroRun]:
    token = _RUN.set(run)
    try:
        yield run
    finally:
        _RUN.reset(token)


def find_database(folder: str | Path | None) -> Path:
    """zotero.sqlite in `folder` (default ~/Zotero), or the file itself when given one."""
    p = Path(folder or "~/Zotero").expanduser()
    db = p if p.is_file() else p / "zotero.sqlite"
    if not db.is_file():
        raise IngestError(str(db), "no zotero.sqlite here (give the Zotero data folder: Zotero > Settings > "
                                   "Advanced > Files and Folders)")
    return db


@contextmanager
def _copy(db: Path) -> Iterator[sqlite3.Connection]:
    with tempfile.TemporaryDirectory(prefix="evtui-zotero-") as tmp:
        dest = Path(tmp) / "zotero.sqlite"
        try:
            shutil.copyfile(db, dest)
            for suffix in ("-wal", "-journal"):
                side = db.with_name(db.name + suffix)
                if side.is_file():
                    shutil.copyfile(side, dest.with_name(dest.name + suffix))
        except OSError as exc:
            raise IngestError(str(db), f"cannot copy the Zotero database: {exc.strerror or exc}") from exc
        try:
            # The copy, never the user's file, is opened writable: copied while Zotero was writing it (a sync, an
            # import), it comes with a hot -journal that SQLite must roll back before reading, which a read-only
            # connection refuses ("attempt to write a readonly database"). No statement of ours writes.
            con = sqlite3.connect(f"file:{dest}?mode=rw", uri=True)
            con.execute("PRAGMA query_only = ON")
        except sqlite3.Error as exc:
            raise IngestError(str(db), f"not a readable Zotero database ({exc})") from exc
        try:
            yield con
        finally:
            con.close()


def load_zotero(path: Path) -> Result:
    run = _RUN.get() or ZoteroRun()
    db = find_database(path)
    with _copy(db) as con:
        try:
            items = _items(con, run.collection, db)
            fields = _fields(con)
            creators = _creators(con)
            colls = _collections_of(con)
            pdfs = _attachments(con, db.parent)
            standalone = _ints(con.execute(_STANDALONE_PDFS))
        except sqlite3.DatabaseError as exc:
            if "malformed" in str(exc):  # copied while Zotero was writing it: a later copy reads
                raise IngestError(str(db), f"the copy of the Zotero database could not be read ({exc}): Zotero may "
                                           "have been writing it; try again, or close Zotero first") from exc
            raise IngestError(str(db), f"not a Zotero database ({exc})") from exc
    from evtui.ingest.pdf_worker import parse

    for item_id, key, lib_id, modified, item_type in items:
        if lib_id is None:  # a damaged row: that item, not the library
            yield IngestError(str(db), f"item {key}: its libraryID is not a number: item skipped")
            continue
        f = fields.get(item_id, {})
        pid = f"zotero:{key}" if lib_id == 1 else f"zotero:{lib_id}/{key}"
        # the paper's own PDF before a supplement attached before it ("Supplementary Material", "..._ESM.pdf")
        pdf = next((p for p in sorted(pdfs.get(item_id, []), key=lambda p: SUPPLEMENT.search(p.stem) is not None)
                    if p.is_file()), None)
        stat = pdf.stat() if pdf else None
        version = f"{modified}|{stat.st_size}:{stat.st_mtime_ns}" if stat else str(modified)
        if run.known_versions.get(pid) == version:
            run.skipped += 1
            continue
        title = " ".join((f.get("title") or "").split())
        if item_id in standalone and (title.lower().endswith(".pdf") or title.lower() in _ATTACHMENT_TITLES):
            title = ""  # a file name, or Zotero's "Full Text PDF": the PDF's own title is better
        year_m = re.search(r"\d{4}", f.get("date", ""))
        pmid_m = re.search(r"PMID:\s*(\d+)", f.get("extra", ""))
        doi_m = re.search(r"10\.\d{4,9}/\S+", f.get("DOI", ""))
        meta = {"title": title, "authors": creators.get(item_id, []), "year": int(year_m.group(0)) if year_m else None,
                "doi": doi_m.group(0) if doi_m else None, "pmid": pmid_m.group(1) if pmid_m else None,
                "journal": f.get("publicationTitle") or f.get("proceedingsTitle") or None}
        info: dict[str, object] = {"zotero_key": key, "zotero_version": version,
                                   "collections": colls.get(item_id, [])}
        if item_type and item_type != "attachment":  # the export writes a bookSection as @incollection, ...
            info["item_type"] = item_type
        if item_id in standalone:
            info["zotero_standalone"] = True  # a bare PDF: a parent item made for it later is the better record
        paper: ParsedPaper | None = None
        problem = ""
        if pdf is not None:
            got = parse(pdf)
            if isinstance(got, IngestError):
                problem = got.reason
            else:
                paper = got
                if title and paper.sentences and paper.sentences[0].section_kind == "title":
                    paper.sentences[0] = ParsedSentence(title, "Title", "title")
                paper.source_path = str(pdf)
        elif pdfs.get(item_id):
            problem = _not_found(pdfs[item_id][0])
        if paper is None:
            if item_id in standalone or not title:
                what = "PDF without a parent item" if item_id in standalone else "item"
                yield IngestError(str(db), f"{what} {key}: {problem or 'no title and no readable PDF'}")
                continue
            sents = [ParsedSentence(title, "Title", "title")]
            sents.extend(ParsedSentence(s, "Abstract", "abstract") for s in split_sentences(f.get("abstractNote", "")))
            paper = ParsedPaper(id=pid, title=title, sentences=sents, source_path=str(db))
            info["full_text"] = False
            if problem:
                info["missing"] = [problem]
                paper.notes.append(f"item {key}: metadata only ({problem})")
        else:
            info.update(paper.info)
        paper.id = pid
        paper.title = title or paper.title
        paper.authors = meta["authors"] or paper.authors  # type: ignore[assignment]
        paper.year = meta["year"] or paper.year  # type: ignore[assignment]
        paper.doi = meta["doi"] or paper.doi  # type: ignore[assignment]
        paper.pmid = meta["pmid"]  # type: ignore[assignment]
        paper.journal = meta["journal"]  # type: ignore[assignment]
        paper.info = info
        yield paper


def _int(value: object) -> int | None:
    """A Zotero id as an int; None for a value a damaged or hand-edited database holds instead ("abc", 1.5, a blob)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    try:
        return int(str(value)) if isinstance(value, str) else None
    except ValueError:
        return None


def _ints(rows: Iterator[tuple[object, ...]]) -> set[int]:
    return {i for i in (_int(r[0]) for r in rows) if i is not None}


def _items(con: sqlite3.Connection, collection: str | None, db: Path) -> list[tuple[int, str, int | None, str, str]]:
    """(itemID, key, libraryID, dateModified, type) of each item; a row whose itemID is not a number is passed
    over, one whose libraryID is not has None there (the caller says so, item by item)."""
    # A PDF dropped into Zotero without a parent item is a paper too (Zotero's metadata lookup often finds none).
    standalone = _ints(con.execute(_STANDALONE_PDFS))
    sql = ("SELECT i.itemID, i.key, i.libraryID, i.dateModified, t.typeName FROM items i"
           " JOIN itemTypes t USING (itemTypeID) WHERE i.itemID NOT IN (SELECT itemID FROM deletedItems)")
    params: list[object] = []
    if collection is not None:
        # Compared in Python: SQLite's NOCASE folds ASCII only ("thèse" missed "THÈSE"), and a name typed on one
        # system may be composed differently from the one Zotero stored (NFC vs NFD "è").
        rows = [(cid, str(r[1] or "")) for r in con.execute("SELECT collectionID, collectionName FROM collections")
                if (cid := _int(r[0])) is not None]
        want = _fold(collection)
        ids = [cid for cid, name in rows if _fold(name) == want]
        if not ids:
            names = sorted(name for _cid, name in rows)
            raise IngestError(str(db), f"no collection named {collection!r} (there are: {', '.join(names[:20]) or 'none'})")
        sql += (" AND i.itemID IN (WITH RECURSIVE sub(id) AS (SELECT collectionID FROM collections WHERE"
                f" collectionID IN ({', '.join('?' * len(ids))}) UNION SELECT c.collectionID FROM collections c JOIN sub"
                " ON c.parentCollectionID = sub.id) SELECT itemID FROM collectionItems WHERE collectionID IN"
                " (SELECT id FROM sub))")
        params.extend(ids)
    out: list[tuple[int, str, int | None, str, str]] = []
    for r in con.execute(sql + " ORDER BY i.itemID", params):
        item_id = _int(r[0])
        if item_id is None or (r[4] in _SKIP_TYPES and item_id not in standalone):
            continue
        out.append((item_id, str(r[1]), 1 if not r[2] else _int(r[2]), str(r[3]), str(r[4] or "")))
    return out


def _fold(name: str) -> str:
    return unicodedata.normalize("NFC", " ".join(name.split())).casefold()


def _fields(con: sqlite3.Connection) -> dict[int, dict[str, str]]:
    table = "fieldsCombined" if con.execute(
        "SELECT 1 FROM sqlite_master WHERE name = 'fieldsCombined'").fetchone() else "fields"
    out: dict[int, dict[str, str]] = {}
    for item_id, name, value in con.execute(
            f"SELECT d.itemID, f.fieldName, v.value FROM itemData d JOIN {table} f USING (fieldID)"
            " JOIN itemDataValues v USING (valueID)"):
        if (iid := _int(item_id)) is not None:
            out.setdefault(iid, {})[str(name)] = "" if value is None else str(value)
    return out


def _creators(con: sqlite3.Connection) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for item_id, first, last in con.execute(
            "SELECT ic.itemID, c.firstName, c.lastName FROM itemCreators ic JOIN creators c USING (creatorID)"
            " ORDER BY ic.itemID, ic.orderIndex"):
        name = person_name(first or "", last or "")
        if name:
            if (iid := _int(item_id)) is not None:
                out.setdefault(iid, []).append(name)
    return out


def _collections_of(con: sqlite3.Connection) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for item_id, name in con.execute(
            "SELECT ci.itemID, c.collectionName FROM collectionItems ci JOIN collections c USING (collectionID)"
            " ORDER BY c.collectionName"):
        if (iid := _int(item_id)) is not None:
            out.setdefault(iid, []).append(str(name))
    return out


def _attachments(con: sqlite3.Connection, base: Path) -> dict[int, list[Path]]:
    """parent item -> its PDF attachments' paths (stored files under storage/KEY/, linked files as they are)."""
    out: dict[int, list[Path]] = {}
    linked_base: Path | None = None
    for parent, key, path, ctype in con.execute(
            "SELECT coalesce(a.parentItemID, a.itemID), i.key, a.path, a.contentType"
            " FROM itemAttachments a JOIN items i USING (itemID)"
            " WHERE a.itemID NOT IN (SELECT itemID FROM deletedItems) ORDER BY a.itemID"):
        p = str(path or "")
        if ctype != "application/pdf" and not p.lower().endswith(".pdf"):
            continue
        if p.startswith("storage:"):
            f = base / "storage" / str(key) / p.removeprefix("storage:")
        elif p.startswith("attachments:"):
            # relative to the "linked attachment base directory", a setting in Zotero's profile, not in the DB
            if linked_base is None:
                linked_base = _linked_attachment_base(base) or Path()
            rel = p.removeprefix("attachments:")
            f = linked_base / rel if linked_base != Path() else Path(p)
        else:
            f = Path(p)
        if (pid := _int(parent)) is not None:
            out.setdefault(pid, []).append(f)
    return out


def _not_found(pdf: Path) -> str:
    if str(pdf).startswith("attachments:"):
        return (f"PDF linked relative to Zotero's base directory ({pdf}), which was not found in a Zotero profile "
                "(Zotero > Settings > Advanced > Files and Folders > Linked Attachment Base Directory)")
    return f"PDF not found: {pdf}"


_PREF = re.compile(r'user_pref\("extensions\.zotero\.(baseAttachmentPath|dataDir)",\s*"((?:[^"\\]|\\.)*)"\)')


def _profiles() -> list[Path]:
    """prefs.js of every Zotero profile in the standard places (Linux, macOS, Windows)."""
    home = Path.home()
    roots = [home / ".zotero" / "zotero", home / "Library" / "Application Support" / "Zotero" / "Profiles"]
    if appdata := os.environ.get("APPDATA"):
        roots.append(Path(appdata) / "Zotero" / "Zotero" / "Profiles")
    found: list[Path] = []
    for root in roots:
        try:
            found.extend(sorted(root.glob("*/prefs.js")))
        except OSError:
            continue
    return found


def _linked_attachment_base(data_dir: Path) -> Path | None:
    """The linked attachment base directory of the Zotero profile whose data folder is `data_dir` (a profile
    without a dataDir setting uses ~/Zotero), from its prefs.js; None when no profile says."""
    target = _resolved(data_dir)
    for prefs in _profiles():
        try:
            text = prefs.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        pref = {m.group(1): re.sub(r"\\(.)", r"\1", m.group(2)) for m in _PREF.finditer(text)}  # JS string escapes
        data = Path(pref["dataDir"]).expanduser() if pref.get("dataDir") else Path.home() / "Zotero"
        if pref.get("baseAttachmentPath") and _resolved(data) == target:
            return Path(pref["baseAttachmentPath"]).expanduser()
    return None


def _resolved(p: Path) -> Path:
    try:
        return p.resolve()
    except OSError:
        return p
