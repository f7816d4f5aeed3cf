"""Loaders: files and folders in, ParsedPaper out. Format detection, safe decoding, per-record errors."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from evtui.errors import IngestError
from evtui.ingest.sections import section_kind
from evtui.ingest.splitter import split_sentences
from evtui.models import ParsedPaper

__all__ = ["FORMATS", "MAX_FILE_BYTES", "detect_format", "discover", "iter_papers", "section_kind", "split_sentences"]

FORMATS: tuple[str, ...] = ("jats", "bioc", "pubtator", "cord", "corpus-jsonl", "evidencebench", "text")
MAX_FILE_BYTES = 512 * 1024 * 1024
_DOC_PREFIXES = ("readme", "license", "licence", "source", "changelog")
_SNIFF = 64 * 1024


def discover(paths: Iterable[str | Path]) -> tuple[list[Path], list[IngestError]]:
    files: list[Path] = []
    errors: list[IngestError] = []
    for raw in paths:
        p = Path(raw).expanduser()
        if p.is_dir():
            for f in sorted(p.rglob("*")):
                rel = f.relative_to(p)
                if any(part.startswith(".") for part in rel.parts) or not f.is_file():
                    continue
                if f.name.lower().startswith(_DOC_PREFIXES):
                    errors.append(IngestError(str(f), "skipped: documentation file, not a paper"))
                    continue
                files.append(f)
        elif p.is_file():
            files.append(p)
        elif p.exists():
            errors.append(IngestError(str(p), "not a regular file"))
        else:
            errors.append(IngestError(str(p), "no such file or folder"))
    return files, errors


def _open_bytes(path: Path) -> io.BufferedIOBase:
    if path.name.endswith(".gz"):
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return path.open("rb")


def _head(path: Path) -> bytes:
    try:
        with _open_bytes(path) as fh:
            return fh.read(_SNIFF)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise IngestError(str(path), f"cannot read: {exc}") from exc


def _looks_binary(head: bytes) -> bool:
    if b"\x00" in head[:8192]:
        return True
    sample = head[:8192]
    if not sample:
        return False
    ctrl = sum(1 for b in sample if b < 9 or 13 < b < 32)
    return ctrl / len(sample) > 0.05


def detect_format(path: Path) -> str:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise IngestError(str(path), f"cannot read: {exc.strerror}") from exc
    if size == 0:
        raise IngestError(str(path), "empty file")
    if size > MAX_FILE_BYTES:
        raise IngestError(str(path), f"file is {size / 2**20:.0f} MiB, over the {MAX_FILE_BYTES // 2**20} MiB limit")
    head = _head(path)
    if not head.strip():
        raise IngestError(str(path), "empty file")
    if _looks_binary(head):
        raise IngestError(str(path), "not a text file (binary content)")
    name = path.name.lower().removesuffix(".gz")
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
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
    else:
        try:
            detect_size = path.stat().st_size
        except OSError as exc:
            yield IngestError(str(path), f"cannot read: {exc.strerror}")
            return
        if detect_size == 0:
            yield IngestError(str(path), "empty file")
            return
    loader = loaders.LOADERS[fmt]
    try:
        for item in loader(path):
            if isinstance(item, ParsedPaper):
                item.source_path = item.source_path or str(path)
                item.source_format = fmt
            yield item
    except IngestError as exc:
        yield exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        yield IngestError(str(path), f"{type(exc).__name__}: {exc}")
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        yield IngestError(str(path), f"cannot read: {exc}")
    except RecursionError:
        yield IngestError(str(path), "structure nested too deeply")
