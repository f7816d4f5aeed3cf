"""The one way loaders read a source file's bytes: decompressed when it is gzip, and never past a total cap.

Every format goes through `open_capped` (or `read_bytes`), so a 1 MB .gz that inflates to gigabytes of
newlines stops at MAX_DECOMPRESSED_BYTES with the file named in the error, whichever loader reads it; a gzip
member followed by garbage (padding, a truncated second copy) keeps its data, as `gzip -d` does. A text file
with a UTF-16 or UTF-32 byte-order mark (Windows Notepad's "Unicode") comes out as UTF-8, so every loader reads
it as it reads any other file.
"""

from __future__ import annotations

import codecs
import io
import re
import zlib
from pathlib import Path

from evtui.errors import IngestError

MAX_DECOMPRESSED_BYTES = 512 * 1024 * 1024
MAX_FILE_BYTES = MAX_DECOMPRESSED_BYTES  # on disk, and in total once decompressed
# A paper has a few thousand sentences, a book some tens of thousands; a 100 MB text of a million "sentences" is
# no paper, and storing, indexing and searching it whole cost gigabytes.
MAX_PAPER_SENTENCES = 100_000
_CHUNK = 1 << 16
_GZIP_MAGIC = b"\x1f\x8b"
# UTF-32 first: its little-endian mark starts with UTF-16's.
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))
# An XML declaration naming the encoding the bytes were in: after transcoding they are UTF-8, and lxml refuses a
# declaration that contradicts its bytes.
_XML_ENCODING = re.compile(rb"""\A(\s*<\?xml[^>]{0,200}?encoding\s*=\s*["'])[^"']{0,40}(["'])""")


class BadGzipError(OSError):
    """The bytes of a .gz file are not gzip data (an OSError, as gzip.BadGzipFile is)."""


class _CappedRaw(io.RawIOBase):
    def __init__(self, path: Path, limit: int, transcode: bool = True) -> None:
        self._path = path
        self._limit = limit
        self._fh = path.open("rb")
        self._gzip = path.name.lower().endswith(".gz")
        self._z = zlib.decompressobj(16 + zlib.MAX_WBITS) if self._gzip else None
        self._total = 0
        self._ended = False
        self.trailing_garbage = False  # set when bytes after the last gzip member were ignored
        self._sniffed = not transcode  # whether the first bytes were checked for a UTF-16/32 byte-order mark
        self._decoder: codecs.IncrementalDecoder | None = None
        self._pending = b""  # transcoded bytes not yet handed out (UTF-8 can be longer than UTF-16)
        self.encoding: str | None = None  # "utf-16" / "utf-32" when the file was transcoded

    def readable(self) -> bool:
        return True

    def readinto(self, b: memoryview) -> int:  # type: ignore[override]
        data = self._next(len(b))
        n = len(data)
        b[:n] = data
        self._total += n
        if self._total > self._limit:
            size = f"{self._limit // 2**20} MiB" if self._limit >= 2**20 else f"{self._limit:,} bytes"
            raise IngestError(str(self._path), f"{self._path.name}: more than {size} of text once decompressed; "
                                               "not loaded past that point")
        return n

    def _next(self, n: int) -> bytes:
        """At most n bytes of the file, transcoded to UTF-8 when it opens with a UTF-16/32 byte-order mark."""
        if not self._sniffed:
            self._sniffed = True
            head = self._read(max(n, 4))
            while len(head) < 4 and (more := self._read(4)):
                head += more
            codec = next((name for bom, name in _BOMS if head.startswith(bom)), None)
            if codec is None:
                self._pending = head
            else:
                self.encoding = codec
                self._decoder = codecs.getincrementaldecoder(codec)(errors="replace")
                first = self._decoder.decode(head).encode("utf-8")
                self._pending = _XML_ENCODING.sub(rb"\1UTF-8\2", first, count=1)
        while not self._pending and self._decoder is not None:
            raw = self._read(max(n, 4))
            self._pending = self._decoder.decode(raw, final=not raw).encode("utf-8")
            if not raw:
                self._decoder = None
        if self._pending:
            out, self._pending = self._pending[:n], self._pending[n:]
            return out
        return self._read(n)

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


def open_capped(path: Path, limit: int | None = None, *, transcode: bool = True) -> io.BufferedReader:
    """`path`'s bytes (gunzipped for a .gz name; UTF-8 for a text with a UTF-16/32 byte-order mark unless
    `transcode` is off, as a binary format wants) as a buffered reader that raises IngestError, naming the file,
    once more than `limit` (default MAX_DECOMPRESSED_BYTES) bytes have been read from it."""
    return io.BufferedReader(_CappedRaw(path, MAX_DECOMPRESSED_BYTES if limit is None else limit, transcode),
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
