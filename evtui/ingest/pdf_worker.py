"""PDFs are parsed in a child process: pdfium is C code reading untrusted files, and a PDF bomb (a huge stream, a
deeply nested object graph) must cost one file, never the ingest. The child runs under an address-space limit
(EVTUI_PDF_MEMORY_MB, default 1 GB) and each file under a time budget (TIME_LIMIT_S, 60 s); past either, the child is killed and the file gets
a one-line reason. One child serves many files (it is restarted every RESTART_AFTER files, so memory stays flat
across a folder of thousands).

Protocol: the parent writes one pickled path, the child answers one pickled ParsedPaper or the reason (a str)
the file could not be read.
"""

from __future__ import annotations

import atexit
import os
import pickle
import select
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

from evtui.errors import IngestError
from evtui.models import ParsedPaper

TIME_LIMIT_S = float(os.environ.get("EVTUI_PDF_TIME_LIMIT", "60"))


def _memory_limit() -> int:
    """Bytes of address space a worker may use (EVTUI_PDF_MEMORY_MB, default 1024), read when it starts."""
    try:
        return max(64, int(os.environ.get("EVTUI_PDF_MEMORY_MB", "1024"))) * 2**20
    except ValueError:
        return 1024 * 2**20

RESTART_AFTER = 200
_HEADER = struct.Struct("!Q")


class _Child:
    def __init__(self) -> None:
        self.memory_limit = _memory_limit()
        env = {**os.environ, "EVTUI_PDF_MEMORY_MB": str(self.memory_limit // 2**20)}
        self.proc = subprocess.Popen([sys.executable, "-m", "evtui.ingest.pdf_worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, close_fds=True, env=env)
        self.served = 0

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for fh in (self.proc.stdin, self.proc.stdout):
            if fh is not None:
                fh.close()


_child: _Child | None = None


def _shutdown() -> None:
    global _child
    if _child is not None:
        _child.kill()
        _child = None


atexit.register(_shutdown)


def _read_exact(fh: IO[bytes], n: int, deadline: float) -> bytes | None:
    buf = b""
    fd = fh.fileno()
    while len(buf) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return None
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def parse(path: Path) -> ParsedPaper | IngestError:
    """The paper in one PDF, parsed in the worker under the time and memory limits."""
    global _child
    if _child is None or _child.proc.poll() is not None or _child.served >= RESTART_AFTER:
        _shutdown()
        _child = _Child()
    child = _child
    assert child.proc.stdin is not None and child.proc.stdout is not None
    payload = pickle.dumps(str(path))
    try:
        child.proc.stdin.write(_HEADER.pack(len(payload)) + payload)
        child.proc.stdin.flush()
        deadline = time.monotonic() + TIME_LIMIT_S
        head = _read_exact(child.proc.stdout, _HEADER.size, deadline)
        body = _read_exact(child.proc.stdout, _HEADER.unpack(head)[0], deadline) if head else None
    except (EOFError, BrokenPipeError, OSError):
        _shutdown()
        return IngestError(str(path), f"PDF reader gave up: over the {child.memory_limit // 2**20} MB memory limit or "
                                      "crashed on this file (a damaged PDF or a PDF bomb)")
    if body is None:
        _shutdown()
        return IngestError(str(path), f"PDF took over {TIME_LIMIT_S:.0f} s to read: given up (a PDF bomb or a "
                                      "pathological file)")
    child.served += 1
    result = pickle.loads(body)  # noqa: S301 - our own child process, not the file, wrote this
    if isinstance(result, str):  # the reason of an IngestError (whose constructor pickle cannot call)
        return IngestError(str(path), result)
    if not isinstance(result, ParsedPaper):
        return IngestError(str(path), "PDF reader returned nothing")
    return result


def _serve() -> None:
    import resource

    limit = _memory_limit()
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError):
        pass
    from evtui.ingest.pdf import parse_pdf

    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        head = stdin.read(_HEADER.size)
        if len(head) < _HEADER.size:
            return
        path = Path(pickle.loads(stdin.read(_HEADER.unpack(head)[0])))  # noqa: S301 - from our parent
        result: ParsedPaper | IngestError
        try:
            result = parse_pdf(path)
        except IngestError as exc:
            result = exc
        except MemoryError:
            result = IngestError(str(path), f"PDF needs over {limit // 2**20} MB to read: given up "
                                            "(a PDF bomb or a pathological file)")
        except RecursionError:
            result = IngestError(str(path), "PDF structure nested too deeply")
        except Exception as exc:  # noqa: BLE001 - one odd PDF must not end the worker
            result = IngestError(str(path), f"not a readable PDF ({type(exc).__name__}: {exc})"[:300])
        data = pickle.dumps(result.reason if isinstance(result, IngestError) else result)
        stdout.write(_HEADER.pack(len(data)) + data)
        stdout.flush()


if __name__ == "__main__":
    _serve()
