"""Loaders: files and folders in, ParsedPaper out. Format detection, safe decoding, per-record errors."""

from __future__ import annotations

import errno
import io
import json
import os
import re
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from evtui.errors import IngestError
from evtui.ingest.reader import MAX_FILE_BYTES, MAX_PAPER_SENTENCES, open_capped
from evtui.ingest.sections import mark_metadata, section_kind
from evtui.ingest.splitter import split_sentences
from evtui.models import INGEST_FORMATS, ParsedPaper, ParsedSentence

__all__ = ["DOC_SKIPPED", "FORMATS", "INTERNAL_ERROR", "MAX_FILE_BYTES", "OTHER_KIND", "detect_format", "discover",
           "iter_papers", "section_kind", "split_sentences"]

FORMATS: tuple[str, ...] = INGEST_FORMATS  # defined with the domain objects: the CLI's parser reads it from there
# Binary formats: never through the text checks (the loader checks them itself).
_BINARY_FORMATS = frozenset({"pdf", "zotero"})
# A folder's own documentation, by whole name ("README.md", "SOURCE.md", "LICENSE-MIT"), never by prefix: a paper
# saved as "Source apportionment of PM2.5.pdf" or "licensed_nurses.txt" is a paper.
_DOC_NAMES = frozenset({"readme", "license", "licence", "copying", "changelog", "changes", "source", "sources",
                        "notice", "contributing"})
_DOC_SUFFIXED = re.compile(r"(readme|licen[cs]e|copying)-[a-z0-9-]+(\.(md|txt|rst))?")
# The reason discover() gives a folder's documentation; the library reports those files as one note, not as errors.
DOC_SKIPPED = "skipped: documentation file, not a paper"
# What a folder of papers also holds and no loader reads: figures, data, code, slides, archives, media. Met in a
# folder they are one note (OTHER_KIND), not a line each saying "unknown format (use --format ...)", as if a
# --format could read a PNG; named on the command line, detect_format says what the file is.
_NOT_PAPERS: dict[str, str] = {
    **dict.fromkeys(("png", "jpg", "jpeg", "gif", "tif", "tiff", "bmp", "svg", "webp", "heic", "eps", "ico"),
                    "an image"),
    **dict.fromkeys(("csv", "tsv", "xls", "xlsx", "ods", "sav", "dta", "rds", "rdata", "parquet", "h5", "mat"),
                    "a data file"),
    **dict.fromkeys(("ppt", "pptx", "odp", "key"), "a presentation"),
    **dict.fromkeys(("zip", "tar", "tgz", "7z", "rar", "bz2", "xz", "dmg", "iso", "exe", "msi", "jar"),
                    "an archive or program"),
    **dict.fromkeys(("mp3", "mp4", "m4a", "wav", "mov", "avi", "mkv", "flac", "ogg", "webm"), "audio or video"),
    **dict.fromkeys(("py", "js", "ts", "r", "ipynb", "c", "cpp", "h", "java", "sh", "m", "jl", "css", "sql"),
                    "source code"),
}
# Documents that may well be a paper, in a format evtui does not read: always an error, with what to do.
_CONVERT_FIRST: dict[str, str] = {
    **dict.fromkeys(("doc", "docx", "odt", "rtf", "pages"), "a word-processor document"),
    **dict.fromkeys(("html", "htm", "xhtml", "mhtml", "epub", "djvu"), "a web page or e-book"),
}
OTHER_KIND = "skipped: a kind of file that holds no paper"
# Files an operating system or office suite leaves in any folder (thumbnail caches, folder settings, lock files):
# never the user's, never worth a line in the report.
_SYSTEM_NAMES = frozenset({"thumbs.db", "ehthumbs.db", "ehthumbs_vista.db", "desktop.ini", "icon\r"})
_SYSTEM_PREFIXES = ("~$", ".~lock.")
_SNIFF = 64 * 1024
_CONTROL_BYTES = bytes([*range(9), *range(14, 32)])
# A sentence longer than this is cut into pieces at ingest (with a note), a title cut short: real sentences are
# well under 5,000 characters, and no search should pay for a megabyte "sentence".
MAX_SENTENCE_CHARS = 20_000
MAX_TITLE_CHARS = 2_000
# Longer ids are refused: Tantivy silently drops a raw term over 64 KiB, and a paper whose id is not indexed
# could never be deleted from the index again.
MAX_ID_CHARS = 1000
# The reason given when a loader fails in a way it did not foresee (a bug to report, not a bad file).
INTERNAL_ERROR = "internal error while reading this file"
_SURROGATE = re.compile("[\ud800-\udfff]")
# NUL characters (a JSON "\u0000", a stray byte in a converted text): no part of any sentence, and one in an export
# makes grep, git and editors take the whole Markdown file for binary. Other control characters are stored as they
# came (a terminal escape is made harmless where text is shown: evtui.render).
_NUL = re.compile("\x00+")
# Reading errors of a damaged or disguised file (zlib.error: a gzip stream whose data is garbage).
_READ_ERRORS = (OSError, EOFError, zlib.error)


def _reading_order(f: Path) -> tuple[str, ...]:
    """Path order, but a name before its numbered copies ("paper.pdf" before "paper (1).pdf", where plain string
    order puts the space first), so that of two identical files the library keeps the original name."""
    return (*f.parts[:-1], f.name.split(".")[0], f.name)


def discover(paths: Iterable[str | Path], *, skip: Iterable[Path] = ()) -> tuple[list[Path], list[IngestError]]:
    """The files to read under `paths`. What is in `skip` (the library's own files, Config.own_paths, when a user
    ingests the folder that holds its data home) is passed over in folders: a database is not a paper."""
    files: list[Path] = []
    errors: list[IngestError] = []
    own = _file_keys(skip)
    for raw in paths:
        p = Path(raw).expanduser()
        if p.is_dir():
            found, unreadable = _walk(p, own)
            errors.extend(unreadable)
            # A Zotero data folder inside: its zotero.sqlite reads the PDFs in storage/ with their records; the
            # rest is Zotero's own (backups, translators, styles, snapshots), and a PDF read bare as well would be
            # parsed twice.
            zotero = {f.parent for f in found if f.name.lower() == "zotero.sqlite" and f.is_file()}
            for f in found:
                rel = f.relative_to(p)
                if any(part.startswith(".") for part in rel.parts):
                    continue
                if not f.is_file():
                    if f.is_symlink() and not f.exists():  # is_file() is False for it too, without saying why
                        errors.append(IngestError(str(f), _dangling(f)))
                    continue
                if zotero and f.name.lower() != "zotero.sqlite" and any(d in zotero for d in f.parents):
                    continue
                if f.name.lower() in _SYSTEM_NAMES or f.name.startswith(_SYSTEM_PREFIXES):
                    continue
                if _is_documentation(f.name):
                    errors.append(IngestError(str(f), DOC_SKIPPED))
                    continue
                if _suffix(f) in _NOT_PAPERS:
                    errors.append(IngestError(str(f), OTHER_KIND))
                    continue
                files.append(f)
        elif p.is_file():
            files.append(p)
        elif p.exists():
            errors.append(IngestError(str(p), "not a regular file"))
        elif p.is_symlink():
            errors.append(IngestError(str(p), _dangling(p)))
        else:
            errors.append(IngestError(str(p), "no such file or folder"))
    return files, errors


def _file_keys(paths: Iterable[Path]) -> set[tuple[int, int]]:
    """(device, inode) of each path that exists: what names one file or folder whatever the path (or link) to it."""
    keys: set[tuple[int, int]] = set()
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        keys.add((st.st_dev, st.st_ino))
    return keys


def _walk(root: Path, own: set[tuple[int, int]]) -> tuple[list[Path], list[IngestError]]:
    """Every entry under `root` that is not a folder, in reading order, and the folders that could not be listed.
    Linked folders are followed (a reading list of links to other folders is a researcher's way to gather papers;
    Path.rglob skips them without a word), each real folder once, so a link back up makes no loop; a file reached
    twice (itself and a link to it) is read once, under its own path where it has one. `own` (the library's own
    files and folders, by device and inode) is passed over, whatever path leads there."""
    entries: list[Path] = []
    errors: list[IngestError] = []
    seen: set[tuple[int, int]] = set(own)

    def unreadable(exc: OSError) -> None:
        errors.append(IngestError(str(exc.filename or root), f"folder not read: {exc.strerror or exc}"))

    for dirpath, dirnames, filenames in os.walk(root, onerror=unreadable, followlinks=True):
        try:
            st = os.stat(dirpath)
        except OSError:
            dirnames.clear()
            continue
        if (st.st_dev, st.st_ino) in seen:  # reached again through a link: listed already
            dirnames.clear()
            continue
        seen.add((st.st_dev, st.st_ino))
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]  # hidden: never read, so never walked
        entries.extend(Path(dirpath, name) for name in filenames)
    entries.sort(key=_reading_order)
    by_file: dict[tuple[int, int], int] = {}
    out: list[Path] = []
    for f in entries:
        try:
            st = f.stat()
        except OSError:  # a link to nothing: discover() says why
            out.append(f)
            continue
        key = (st.st_dev, st.st_ino)
        if key in own:
            continue
        at = by_file.get(key)
        if at is None:
            by_file[key] = len(out)
            out.append(f)
        elif out[at].is_symlink() and not f.is_symlink():
            out[at] = f
    return out, errors


def _dangling(f: Path) -> str:
    """Why a symbolic link leads to no file: a loop, or a target that does not exist."""
    try:
        f.resolve(strict=True)
    except RuntimeError:
        return "symbolic link loop: it leads back to itself, not to a file"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symbolic link loop: it leads back to itself, not to a file"
        return f"broken symbolic link: its target {os.readlink(f)!r} does not exist"
    return "not a regular file"


def _suffix(f: Path) -> str:
    """The file's extension, lower-cased, without the dot and past a ".gz" ("fig.png.gz": "png")."""
    return Path(f.name.lower().removesuffix(".gz")).suffix.lstrip(".")


def _is_documentation(name: str) -> bool:
    low = name.lower()
    return low.split(".")[0] in _DOC_NAMES or _DOC_SUFFIXED.fullmatch(low) is not None


def _open_bytes(path: Path, *, transcode: bool = True) -> io.BufferedReader:
    """The file's bytes, gunzipped for a .gz, UTF-16/32 text as UTF-8, capped in total (evtui/ingest/reader.py)."""
    return open_capped(path, transcode=transcode)


def _head(path: Path) -> bytes:
    try:
        with _open_bytes(path) as fh:
            return fh.read(_SNIFF)
    except _READ_ERRORS as exc:
        raise IngestError(str(path), f"cannot read: {exc}") from exc


def _utf16_without_bom(head: bytes) -> bool:
    """Mostly-ASCII UTF-16 whose byte-order mark is missing: every other byte a NUL, the rest not."""
    sample = head[:4096]
    if len(sample) < 8:
        return False
    for zeros, chars in ((sample[1::2], sample[0::2]), (sample[0::2], sample[1::2])):
        if zeros.count(0) >= 0.9 * len(zeros) and chars.count(0) <= 0.1 * len(chars):
            return True
    return False


def _looks_binary(head: bytes) -> bool:
    """Binary content: more than a stray NUL (a text saved by a buggy converter keeps its words; the loader drops
    the NULs), or many control bytes (compressed or image data has ~9% of them, text next to none)."""
    sample = head[:8192]
    if not sample:
        return False
    if sample.count(0) > max(2, len(sample) // 100):
        return True
    ctrl = len(sample) - len(sample.translate(None, _CONTROL_BYTES))  # in C: a Python loop was 0.3 ms a file
    return ctrl / len(sample) > 0.05


def _precheck(path: Path) -> bytes:
    """The file's first bytes, once it is known to be a non-empty text file within the size limit."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise IngestError(str(path), f"cannot read: {exc.strerror}") from exc
    if size == 0:
        raise IngestError(str(path), "empty file")
    if size > MAX_FILE_BYTES:
        raise IngestError(str(path), f"file is {size / 2**20:.0f} MiB, over the {MAX_FILE_BYTES // 2**20} MiB limit")
    head = _head(path)  # UTF-16/32 with a byte-order mark arrives here as UTF-8 (evtui/ingest/reader.py)
    if _utf16_without_bom(head):
        raise IngestError(str(path), "UTF-16 text without a byte-order mark: re-save the file as UTF-8")
    if not head.strip():
        raise IngestError(str(path), "empty file")
    if _looks_binary(head):
        raise IngestError(str(path), "not a text file (binary content)")
    return head


def _binary_format(path: Path) -> str | None:
    """'pdf' for a PDF (a %PDF header near the start, as readers accept it), 'zotero' for a zotero.sqlite."""
    name = path.name.lower()
    if name == "zotero.sqlite":
        return "zotero"
    try:
        with _open_bytes(path, transcode=False) as fh:
            start = fh.read(1024)
    except _READ_ERRORS:
        return None
    if b"%PDF-" in start:
        return "pdf"
    if name.removesuffix(".gz").endswith(".pdf") and start:
        raise IngestError(str(path), "not a PDF (no %PDF header): damaged, or another kind of file")
    return None


def detect_format(path: Path) -> str:
    binary = _binary_format(path)
    if binary is not None:
        return binary
    suffix = _suffix(path)
    if suffix in _CONVERT_FIRST:
        raise IngestError(str(path), f"{_CONVERT_FIRST[suffix]} (.{suffix}), which evtui does not read: save it as PDF "
                                     "or plain text and ingest that")
    if suffix in _NOT_PAPERS:
        raise IngestError(str(path), f"{_NOT_PAPERS[suffix]} (.{suffix}), not a paper: evtui reads papers as PDF, "
                                     "JATS/BioC XML, text or Markdown, and the formats listed in the README")
    head = _precheck(path)
    name = path.name.lower().removesuffix(".gz")
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    from evtui.ingest.refs import sniff_refs

    refs = sniff_refs(name, text)
    if refs is not None:
        return refs
    if text.startswith("<") or name.endswith((".xml", ".nxml")):
        low = text[:_SNIFF].lower()
        if "<collection" in low:
            return "bioc"
        if "<article" in low or "<!doctype article" in low:
            return "jats"
        if name.endswith((".xml", ".nxml")):
            raise IngestError(str(path), "XML file is neither JATS (<article>) nor BioC (<collection>)")
    if text.startswith("{") or text.startswith("[") or name.endswith((".json", ".jsonl")):
        first_line = text.split("\n", 1)[0]
        if '"paper_as_candidate_pool"' in text:
            return "evidencebench"
        if '"body_text"' in text or '"pdf_parse"' in text:
            return "cord"
        if '"abstract"' in first_line and ('"doc_id"' in first_line or '"cord_id"' in first_line):
            return "corpus-jsonl"
        if name.endswith((".json", ".jsonl")):
            raise IngestError(str(path), "JSON of an unknown schema (expected EvidenceBench, CORD-19/S2ORC, or "
                                         "SciFact/Check-COVID corpus lines)")
    first = text.split("\n", 1)[0]
    if "|t|" in first or "|a|" in first:
        return "pubtator"
    if name.endswith((".txt", ".md", ".markdown", ".text")):
        return "text"
    raise IngestError(str(path), "unknown format (use --format to say which)")


def iter_papers(path: Path, fmt: str = "auto") -> Iterator[ParsedPaper | IngestError]:
    """The papers in one file, in order, each as a ParsedPaper or an IngestError with the path and the reason.
    Never raises for what is in the file: a broken, disguised or hostile file is an IngestError."""
    from evtui.ingest import loaders

    if fmt in (None, "", "auto"):
        try:
            fmt = detect_format(path)
        except IngestError as exc:
            yield exc
            return
    elif fmt not in FORMATS:
        yield IngestError(str(path), f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
        return
    elif fmt not in _BINARY_FORMATS:
        try:
            _precheck(path)
        except IngestError as exc:
            yield exc
            return
    if fmt == "europepmc":  # its loader reads the JATS through loaders: registered here, not there
        from evtui.ingest.europepmc import load_europepmc as loader
    else:
        loader = loaders.LOADERS[fmt]
    try:
        for item in loader(path):
            if isinstance(item, ParsedPaper):
                item.source_path = item.source_path or str(path)
                item.source_format = fmt
                yield _checked(item, path)
            else:
                yield item
    except IngestError as exc:
        yield exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        yield IngestError(str(path), f"{type(exc).__name__}: {exc}")
    except _READ_ERRORS as exc:
        yield IngestError(str(path), f"cannot read: {exc}")
    except RecursionError:
        yield IngestError(str(path), "structure nested too deeply")
    except Exception as exc:  # noqa: BLE001 - one odd file must not end an ingest of thousands
        yield IngestError(str(path), f"{INTERNAL_ERROR} ({type(exc).__name__}: {exc}); please report it")


def _clean(text: object) -> str:
    """A str the store can hold: JSON escapes (and undecodable file names) can carry lone surrogates, which
    UTF-8 cannot encode; each becomes U+FFFD."""
    s = text if isinstance(text, str) else "" if text is None else str(text)
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        s = _SURROGATE.sub("\ufffd", s)
    return s


def _optional(text: object) -> str | None:
    return None if text is None else _clean(text) or None


def _checked(p: ParsedPaper, path: Path) -> ParsedPaper | IngestError:
    """The paper with every field as the store expects it (fixed in place), or an IngestError for an id it
    cannot hold. A loader's odd value (a year like 99999999999, a number where a DOI belongs, a lone surrogate
    from a JSON escape) must not reach the batch write, where it would fail the other papers of the batch."""
    p.id = _clean(p.id).strip()
    if not p.id:
        return IngestError(str(path), "a paper without an id")
    if len(p.id) > MAX_ID_CHARS:
        return IngestError(str(path), f"paper id of {len(p.id)} characters (over {MAX_ID_CHARS}): {p.id[:60]}...")
    if not (isinstance(p.year, int) and not isinstance(p.year, bool) and 0 < p.year < 10_000):
        p.year = None
    p.title = _clean(p.title)
    p.authors = [a for a in (_clean(a) for a in p.authors) if a] if isinstance(p.authors, list) else []
    p.journal, p.doi, p.pmid, p.pmcid, p.licence = (
        _optional(v) for v in (p.journal, p.doi, p.pmid, p.pmcid, p.licence))
    p.source_path = _clean(p.source_path)
    # Lone surrogates come from a JSON escape, and from a PDF whose ToUnicode map names one (pdfium hands it on):
    # each becomes U+FFFD in every format, so one bad character never costs the paper ("surrogates not allowed").
    for s in p.sentences:
        if not (type(s.text) is str and s.text.isascii()):
            s.text = _clean(s.text)
        if not (type(s.section_title) is str and s.section_title.isascii()):
            s.section_title = _clean(s.section_title)
    _drop_nuls(p)
    mark_metadata(p.sentences)  # keywords, registration and funding lines are no sentence of the abstract or body
    if len(p.title) > MAX_TITLE_CHARS:
        p.title = p.title[:MAX_TITLE_CHARS]
        p.notes.append(f"paper {p.id}: title cut to its first {MAX_TITLE_CHARS:,} characters")
    if any(len(s.text) > MAX_SENTENCE_CHARS for s in p.sentences):
        _split_long_sentences(p)
    if len(p.sentences) > MAX_PAPER_SENTENCES:
        p.notes.append(f"paper {p.id}: only its first {MAX_PAPER_SENTENCES:,} of {len(p.sentences):,} sentences "
                       "kept")
        del p.sentences[MAX_PAPER_SENTENCES:]
    return p


def _drop_nuls(p: ParsedPaper) -> None:
    """NUL characters out of the title and the sentences (a run between words becomes one space), with a note; a
    sentence left empty is dropped."""
    n = 0

    def scrub(text: str) -> str:
        nonlocal n
        if "\x00" not in text:
            return text
        n += text.count("\x00")
        return " ".join(_NUL.sub(" ", text).split())

    p.title = scrub(p.title)
    for s in p.sentences:
        s.text, s.section_title = scrub(s.text), scrub(s.section_title)
    if n:
        p.sentences = [s for s in p.sentences if s.text]
        p.notes.append(f"paper {p.id}: {n:,} NUL character(s) removed from its text")


def _split_long_sentences(p: ParsedPaper) -> None:
    """Cut every sentence over MAX_SENTENCE_CHARS into pieces at spaces: a 9 MB "sentence" (a table or a
    whole file without punctuation) is no evidence sentence, and every search that ranks it pays for its size."""
    out: list[ParsedSentence] = []
    n = 0
    for s in p.sentences:
        if len(s.text) <= MAX_SENTENCE_CHARS:
            out.append(s)
            continue
        n += 1
        out.extend(ParsedSentence(piece, s.section_title, s.section_kind, s.is_heading)
                   for piece in _pieces(s.text, MAX_SENTENCE_CHARS))
    p.sentences = out
    p.notes.append(f"paper {p.id}: {n:,} sentence(s) over {MAX_SENTENCE_CHARS:,} characters split into pieces")


def _pieces(text: str, limit: int) -> Iterator[str]:
    """`text` in pieces of at most `limit` characters, cut at the last space where there is one (linear)."""
    start, end = 0, len(text)
    while start < end:
        stop = start + limit
        if stop < end:
            space = text.rfind(" ", start + limit // 2, stop + 1)
            stop = space if space > start else stop
        piece = text[start:stop].strip()
        if piece:
            yield piece
        start = stop

