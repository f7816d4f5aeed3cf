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
