"""The sha256 of a file, read a MiB at a time: the shipped-model checks (evtui.checksum) and the PDF loader's
copy detection (evtui.ingest.pdf) both need it, from two layers that may not import each other."""

from __future__ import annotations

import hashlib
from pathlib import Path


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return h.hexdigest()


# Past this many decompressed bytes a .gz is hashed no further (no PDF evtui reads is larger; a gzip bomb must not
# cost minutes before the reader refuses it).
MAX_CONTENT_BYTES = 1 << 30


def content_sha256(path: Path) -> str:
    """The sha256 of what the file holds: a gzip file's decompressed bytes, so that "paper.pdf" and "paper.pdf.gz"
    of the same PDF have one digest (one paper, as identical copies are); any other file's own bytes. A gzip
    stream that cannot be read is hashed as the bytes it is."""
    import gzip
    import zlib

    with path.open("rb") as fh:
        if fh.read(2) != b"\x1f\x8b":
            return sha256_file(path)
    h = hashlib.sha256()
    total = 0
    try:
        with gzip.open(path, "rb") as gz:
            while total <= MAX_CONTENT_BYTES and (block := gz.read(1 << 20)):
                h.update(block)
                total += len(block)
    except (OSError, EOFError, zlib.error):
        return sha256_file(path)
    return h.hexdigest()
