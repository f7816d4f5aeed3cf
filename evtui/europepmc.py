"""A polite client of Europe PMC's REST service (https://europepmc.org/RestfulWebService): `search` in `core` form
and `{PMCID}/fullTextXML`, with the standard library only.

Manners: a User-Agent naming evtui and the user's contact e-mail (config `contact_email`), at most a few requests at
a time, backoff on 429 / 5xx that honours Retry-After (every thread waits out a 429), a timeout on each request, and
a cap on every response's size. Answers are kept under the data home (`http/`, by URL), so a second fetch of the
same papers sends nothing. A network that cannot be reached is one `Unreachable` ("cannot reach Europe PMC: ...")."""

from __future__ import annotations

import email.utils
import gzip
import hashlib
import io
import json
import os
import random
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evtui import __version__
from evtui.errors import EvtuiError

BASE_URL = "https://www.ebi.ac.uk/europepmc/webservices/rest/"
TIMEOUT = 30.0  # seconds per request: a full text of a long review is ~1 MB
RETRIES = 4  # tries of one request that meets 429 / 5xx / a timeout
MAX_RETRY_AFTER = 60.0  # a longer Retry-After is not waited out: the fetch says the service is busy
MAX_JSON_BYTES = 32 * 2**20  # a page of 1000 core results is ~10 MB
MAX_XML_BYTES = 64 * 2**20  # the largest PMC full texts are a few MB
SEARCH_TTL = 24 * 3600.0  # a free-text search is asked again after a day; an id's record is kept
_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
_CHUNK = 1 << 16


class Unreachable(EvtuiError):
    """The service could not be reached (offline, DNS, refused, timed out, or busy past every retry)."""

    def __init__(self, why: str) -> None:
        super().__init__(f"cannot reach Europe PMC: {why}")


class Refused(EvtuiError):
    """The service answered with an error about the request itself (HTTP 4xx other than 404 / 429)."""


@dataclass(frozen=True)
class Ident:
    kind: str  # "doi" | "pmid" | "pmcid"
    value: str
    given: str  # as the user wrote it

    def query(self) -> str:
        if self.kind == "pmcid":
            return f"PMCID:{self.value}"
        if self.kind == "pmid":
            return f"EXT_ID:{self.value} AND SRC:MED"
        return f'DOI:"{self.value}"'


def parse_id(text: str) -> Ident:
    """A DOI (10.x/…, doi:…, https://doi.org/…), a PMID (PMID:123 or 123) or a PMCID (PMC123); ValueError else."""
    raw = text.strip()
    low = raw.lower()
    for prefix in ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/", "doi:"):
        if low.startswith(prefix):
            raw, low = raw[len(prefix):].strip(), low[len(prefix):].strip()
            break
    if low.startswith("pmc") and low[3:].isdigit() and 0 < len(low) - 3 <= 12:
        return Ident("pmcid", "PMC" + raw[3:], text)
    digits = low.removeprefix("pmid:").strip()
    if digits.isascii() and digits.isdigit() and len(digits) <= 12:
        return Ident("pmid", digits, text)
    if low.startswith("10.") and "/" in low and len(raw) <= 300 and not any(c in raw for c in '"\\ \t\n'):
        return Ident("doi", raw, text)
    raise ValueError(f"{text!r} is not a DOI, a PMID (PMID:123 or 123) or a PMCID (PMC123)")


def user_agent(contact: str | None) -> str:
    who = f"mailto:{contact}" if contact else "no contact e-mail set: config contact_email"
    return f"evtui/{__version__} (evidence-finding terminal app; {who})"


def _retry_after(value: str | None) -> float | None:
    """Retry-After as seconds to wait: a number, or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _why(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None)
    if isinstance(reason, BaseException):
        exc = reason
    if isinstance(exc, socket.gaierror):
        return "the host name could not be resolved (offline?)"
    if isinstance(exc, (TimeoutError, socket.timeout)):
        return "no answer in time"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, ssl.SSLError):
        return f"TLS error ({exc.reason or exc})"
    return str(exc) or type(exc).__name__


class Client:
    """`opener` stands in for urllib's (tests simulate faults with it); `sleep` for time.sleep."""

    def __init__(self, cache_dir: Path, *, contact: str | None = None, base_url: str = BASE_URL,
                 timeout: float = TIMEOUT, retries: int = RETRIES, concurrency: int = 3,
                 opener: Callable[..., Any] | None = None, sleep: Callable[[float], None] = time.sleep,
                 offline: bool = False) -> None:
        self.cache_dir = cache_dir
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.timeout, self.retries, self.concurrency = timeout, retries, max(1, concurrency)
        self.headers = {"User-Agent": user_agent(contact), "Accept-Encoding": "gzip"}
        self._open = opener or urllib.request.build_opener().open
        self._sleep = sleep
        self._slots = threading.BoundedSemaphore(self.concurrency)
        self._pause_lock = threading.Lock()
        self._pause_until = 0.0  # a 429's Retry-After holds back every thread
        self.offline = offline  # answers from the cache only (a rebuild without a network)
        self.requests = 0  # sent, for the report and the benchmark
        self.cached = 0  # answered from the cache

    # -- the two calls -------------------------------------------------------------------------------------------
    def search(self, query: str, *, page_size: int = 25, cursor: str = "*", ttl: float | None = SEARCH_TTL
               ) -> dict[str, Any]:
        """One page of `search?resultType=core&format=json`."""
        params = {"query": query, "resultType": "core", "format": "json", "pageSize": str(page_size),
                  "cursorMark": cursor}
        url = self.base_url + "search?" + urllib.parse.urlencode(params)
        data = self._get(url, MAX_JSON_BYTES, ttl=ttl, suffix=".json")
        if data is None:
            raise Refused(f"Europe PMC found no search service at {self.base_url} (HTTP 404)")
        try:
            doc = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            self._forget(url, ".json")
            raise Unreachable(f"its answer was not JSON ({type(exc).__name__})") from exc
        if not isinstance(doc, dict):
            raise Unreachable("its answer was not a JSON object")
        return doc

    def full_text(self, pmcid: str) -> bytes | None:
        """The JATS of an open-access paper; None where Europe PMC has none (HTTP 404)."""
        url = self.base_url + urllib.parse.quote(pmcid) + "/fullTextXML"
        return self._get(url, MAX_XML_BYTES, ttl=None, suffix=".xml", cache=False)

    # -- HTTP ----------------------------------------------------------------------------------------------------
    def _cache_path(self, url: str, suffix: str) -> Path:
        # keyed by what was asked, not where: the same answers serve a mirror (or a test's server)
        key = url.removeprefix(self.base_url)
        return self.cache_dir / "http" / (hashlib.sha256(key.encode()).hexdigest()[:32] + suffix)

    def _forget(self, url: str, suffix: str) -> None:
        self._cache_path(url, suffix).unlink(missing_ok=True)

    def _get(self, url: str, cap: int, *, ttl: float | None, suffix: str, cache: bool = True) -> bytes | None:
        path = self._cache_path(url, suffix)
        if cache:
            try:
                st = path.stat()
                if ttl is None or self.offline or time.time() - st.st_mtime < ttl:
                    self.cached += 1
                    return path.read_bytes()
            except OSError:
                pass
        if self.offline:
            raise Unreachable("not in the local cache, and offline")
        data = self._request(url, cap)
        if data is not None and cache:
            write_atomic(path, data)
        return data

    def _request(self, url: str, cap: int) -> bytes | None:
        last = ""
        for attempt in range(self.retries):
            self._wait_pause()
            req = urllib.request.Request(url, headers=self.headers)
            try:
                with self._slots:
                    self.requests += 1
                    with self._open(req, timeout=self.timeout) as resp:
                        return _read_body(resp, cap)
            except urllib.error.HTTPError as exc:
                status = exc.code
                if status == 404:
                    return None
                if status not in _RETRY_STATUS:
                    raise Refused(f"Europe PMC refused the request (HTTP {status}: {_error_text(exc)})") from exc
                last = f"HTTP {status}"
                wait = _retry_after(exc.headers.get("Retry-After") if exc.headers else None)
                if wait is not None and wait > MAX_RETRY_AFTER:
                    raise Unreachable(f"busy (HTTP {status}), asked to wait {wait:.0f} s") from exc
                if status == 429:
                    self._pause(wait if wait is not None else self._backoff(attempt))
                elif attempt + 1 < self.retries:
                    self._sleep(wait if wait is not None else self._backoff(attempt))
            except TimeoutError as exc:
                last = _why(exc)
            except urllib.error.URLError as exc:
                if isinstance(exc.reason, (TimeoutError, socket.timeout)):
                    last = _why(exc)
                else:  # offline, DNS, refused: no retry would help now
                    raise Unreachable(_why(exc)) from exc
            except (ConnectionError, OSError) as exc:  # reset mid-answer, a truncated gzip stream
                last = _why(exc)
                if attempt + 1 < self.retries:
                    self._sleep(self._backoff(attempt))
        raise Unreachable(f"{last or 'no answer'} after {self.retries} tries")

    @staticmethod
    def _backoff(attempt: int) -> float:
        return min(MAX_RETRY_AFTER, 0.5 * 2 ** attempt) * (1 + random.random() / 4)

    def _pause(self, seconds: float) -> None:
        with self._pause_lock:
            self._pause_until = max(self._pause_until, time.monotonic() + seconds)

    def _wait_pause(self) -> None:
        with self._pause_lock:
            wait = self._pause_until - time.monotonic()
        if wait > 0:
            self._sleep(wait)


def _error_text(exc: urllib.error.HTTPError) -> str:
    try:
        body = exc.read(2000).decode("utf-8", "replace")
    except Exception:  # noqa: BLE001 - only for a message
        body = ""
    text = " ".join(body.split())[:160]
    return text or (exc.reason if isinstance(exc.reason, str) else "") or "no reason given"


def _read_body(resp: Any, cap: int) -> bytes:
    """The answer's bytes, gunzipped where the server compressed them, refused past `cap` (compressed or not)."""
    buf = io.BytesIO()
    while chunk := resp.read(_CHUNK):
        buf.write(chunk)
        if buf.tell() > cap:
            raise Refused(f"Europe PMC's answer is over {cap // 2**20} MiB: not read")
    data = buf.getvalue()
    headers = getattr(resp, "headers", None)
    if headers is not None and (headers.get("Content-Encoding") or "").lower() == "gzip":
        out = io.BytesIO()
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as gz:
            while chunk := gz.read(_CHUNK):
                out.write(chunk)
                if out.tell() > cap:
                    raise Refused(f"Europe PMC's answer is over {cap // 2**20} MiB once unpacked: not read")
        data = out.getvalue()
    return data


def write_atomic(path: Path, data: bytes) -> None:
    """Written whole or not at all: a fetch killed mid-write leaves no half file for the loader."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.part")
    tmp.write_bytes(data)
    os.replace(tmp, path)
