"""The one way loaders read a source file's bytes: decompressed when it is gzip, and never past a total cap.

Every format goes through `open_capped` (or `read_bytes`), so a 1 MB .gz that inflates to gigabytes of
newlines stops at MAX_DECOMPRESSED_BYTES with the file named in the error, whichever loader reads it; a gzip
member followed by garbage (padding, a truncated second copy) keeps its data, as `gzip -d` does.
"""

from __future__ import annotations

import io
import zlib
from pathlib import Path

from evtui.errors import IngestError

MAX_DECOMPRESSED_BYTES = 512 * 1024 * 1024
MAX_FILE_BYTES = MAX_DECOMPRESSED_BYTES  # on disk, and in total once decompressed
_CHUNK = 1 << 16
_GZIP_MAGIC = b"\x1f\x8b"


class BadGzipError(OSError):
    """The bytes of a .gz file are not gzip data (an OSError, as gzip.BadGzipFile is)."""


class _CappedRaw(io.RawIOBase):
    def __init__(self, path: Path, limit: int) -> None:
        self._path = path
        self._limit = limit
        self._fh = path.open("rb")
        self._gzip = path.name.lower().endswith(".gz")
        self._z = zlib.decompressobj(16 + zlib.MAX_WBITS) if self._gzip else None
        self._total = 0
        self._ended = False
        self.trailing_garbage = False  # set when bytes after the last gzip member were ignored

    def readable(self) -> bool:
        return True

    def readinto(self, b: memoryview) -> int:  # type: ignore[override]
        data = self._read(len(b))
        n = len(data)
        b[:n] = data
        self._total += n
        if self._total > self._limit:
            size = f"{self._limit // 2**20} MiB" if self._limit >= 2**20 else f"{self._limit:,} bytes"
            raise IngestError(str(self._path), f"{self._path.name}: more than {size} of text once decompressed; "
                                               "not loaded past that point")
        return n

    def _read(self, n: int) -> bytes:
        if self._z is None:
            return self._fh.read(n)
        while not self._ended:
            z = self._z
            if z.eof:  # one member done: another member, the end, or trailing garbage
                rest = z.unused_data
                while len(rest) < 2 and (more := self._fh.read(_CHUNK)):
                    rest += more
                if not rest:
                    self._ended = True
                    break
                if not rest.startswith(_GZIP_MAGIC):
                    self._ended, self.trailing_garbage = True, True
                    break
                z = self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)
                feed = rest
            else:
                feed = z.unconsumed_tail or self._fh.read(_CHUNK)
                if not feed:
                    raise EOFError("compressed file ended before the end-of-stream marker was reached")
            try:
                out = z.decompress(feed, n)  # max_length: a bomb never inflates more than asked for
            except zlib.error as exc:
                raise BadGzipError(f"not valid gzip data ({exc})") from exc
            if out:
                return out
        return b""

    def close(self) -> None:
        if not self.closed:
            self._fh.close()
        super().close()


def open_capped(path: Path, limit: int | None = None) -> io.BufferedReader:
    """`path`'s bytes (gunzipped for a .gz name) as a buffered reader that raises IngestError, naming the file,
    once more than `limit` (default MAX_DECOMPRESSED_BYTES) bytes have been read from it."""
    return io.BufferedReader(_CappedRaw(path, MAX_DECOMPRESSED_BYTES if limit is None else limit),
                             buffer_size=_CHUNK)


def read_bytes(path: Path) -> bytes:
    """The whole (decompressed) file, bounded: read a MiB at a time, since read(MAX_FILE_BYTES + 1) on a buffered
    reader allocates the whole cap up front, 512 MiB for every file."""
    chunks: list[bytes] = []
    total = 0
    with open_capped(path) as fh:
        while chunk := fh.read(1 << 20):
            total += len(chunk)
            if total > MAX_FILE_BYTES:
                raise IngestError(str(path), f"more than {MAX_FILE_BYTES // 2**20} MiB of text once decompressed")
            chunks.append(chunk)
    return b"".join(chunks)


def decode(path: Path, data: bytes, *, lenient: bool = False) -> str:
    """UTF-8 (a BOM allowed); `lenient` reads anything else as cp1252 (reference-manager exports from old tools)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if lenient:
            return data.decode("cp1252", errors="replace")
        raise IngestError(str(path), f"not valid UTF-8 text (byte {exc.start}); re-save the file as UTF-8") from exc
