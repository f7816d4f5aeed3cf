"""A loopback stand-in for Europe PMC's REST service that answers from recorded responses (a test helper only).

The recordings in tests/fixtures/europepmc/ are the service's own answers, kept by the pyEuropePMC project's tests
(github.com/JonasHeinickeBio/pyEuropePMC): two `search?resultType=core&format=json` pages (an open-access query and
"cancer": open-access hits with licences, hits without a PMCID, a non-OA hit that has a PMCID), an empty result,
and the `fullTextXML` of PMC12311175. An ID's search is answered as Europe PMC answers one: the page's envelope
with that ID's one record (hitCount 1), or the empty result. Nothing is invented: a "withdrawn" record is a recorded
one whose pubTypeList says "Retracted Publication", as PubMed's records of retracted papers do.

`faults` scripts HTTP errors for the next requests (status, Retry-After); `requests` records what the client sent;
`delay`, `served_s` and `any_full_text` serve benchmarks/bench_fetch.py.
"""

from __future__ import annotations

import copy
import gzip
import json
import re
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures" / "europepmc"
OA_PMCID = "PMC12311175"  # the recorded full text's paper: DOI 10.1038/s41392-025-02280-1, PMID 40739089


def _load(name: str) -> dict[str, Any]:
    path = FIXTURES / name
    raw = gzip.decompress(path.read_bytes()) if name.endswith(".gz") else path.read_bytes()
    return json.loads(raw)


OA_PAGE = _load("search_core_open_access.json.gz")
CANCER_PAGE = _load("search_core_cancer.json.gz")
EMPTY = _load("search_no_results.json")
FULL_TEXT = {OA_PMCID: gzip.decompress((FIXTURES / f"{OA_PMCID}.fullTextXML.xml.gz").read_bytes())}
RECORDS = OA_PAGE["resultList"]["result"] + CANCER_PAGE["resultList"]["result"]


def record(pmcid: str | None = None, pmid: str | None = None) -> dict[str, Any]:
    for r in RECORDS:
        if (pmcid and r.get("pmcid") == pmcid) or (pmid and r.get("pmid") == pmid):
            return copy.deepcopy(r)
    raise KeyError(pmcid or pmid)


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class EuropePMCServer:
    def __init__(self) -> None:
        self.faults: list[tuple[int, str | None]] = []  # (status, Retry-After) for the next requests
        self.requests: list[dict[str, Any]] = []
        self.withdrawn: set[str] = set()  # PMIDs answered with pubType "Retracted Publication"
        self.delay = 0.0  # seconds before each answer (the benchmark's stand-in for the network's time)
        self.served_s = 0.0  # time spent answering, delay excluded (the benchmark subtracts it from the client's)
        self.any_full_text = False  # the benchmark: every open-access hit answered with the recorded full text
        self._lock = threading.Lock()
        self.httpd = _QuietServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/europepmc/webservices/rest/"

    def _fault(self) -> tuple[int, str | None] | None:
        with self._lock:
            return self.faults.pop(0) if self.faults else None

    def answer(self, path: str, query: dict[str, str]) -> tuple[int, bytes, str]:
        m = re.fullmatch(r"/europepmc/webservices/rest/(PMC\d+)/fullTextXML", path)
        if m:
            data = FULL_TEXT.get(m.group(1))
            if data is None and self.any_full_text:  # the recorded text under the asked paper's ids (a benchmark)
                digits = m.group(1)[3:].encode()
                data = (FULL_TEXT[OA_PMCID].replace(b">12311175<", b">" + digits + b"<")
                        .replace(b">40739089<", b">" + digits + b"<")
                        .replace(b">10.1038/s41392-025-02280-1<", b">10.9999/bench." + digits + b"<"))
            return (200, data, "application/xml") if data else (404, b"", "text/plain")
        if path != "/europepmc/webservices/rest/search":
            return 404, b"", "text/plain"
        q = query.get("query", "")
        size = int(query.get("pageSize", "25"))
        ident = re.fullmatch(r'PMCID:(PMC\d+)|EXT_ID:(\d+) AND SRC:MED|DOI:"(.+)"', q)
        if ident:
            pmcid, pmid, doi = ident.groups()
            found = [r for r in RECORDS if (pmcid and r.get("pmcid") == pmcid) or (pmid and r.get("pmid") == pmid)
                     or (doi and (r.get("doi") or "").lower() == doi.lower())][:1]
            doc = copy.deepcopy(OA_PAGE if found else EMPTY)
            doc["hitCount"] = len(found)
            doc.pop("nextCursorMark", None)
            doc.pop("nextPageUrl", None)
            doc["resultList"]["result"] = [self._served(r) for r in found]
        elif "zzzznothing" in q:
            doc = copy.deepcopy(EMPTY)
        else:
            page = OA_PAGE if "OPEN_ACCESS:y" in q else CANCER_PAGE
            doc = copy.deepcopy(page)
            later = query.get("cursorMark", "*") != "*"  # one recorded page: the next is empty, as at the end
            doc["resultList"]["result"] = [] if later else [self._served(r) for r in doc["resultList"]["result"][:size]]
        doc["request"]["queryString"] = q
        doc["request"]["resultType"] = query.get("resultType", "lite")
        doc["request"]["pageSize"] = size
        return 200, json.dumps(doc).encode(), "application/json;charset=UTF-8"

    def _served(self, r: dict[str, Any]) -> dict[str, Any]:
        r = copy.deepcopy(r)
        if r.get("pmid") in self.withdrawn:
            r["pubTypeList"] = {"pubType": ["Retracted Publication", "Journal Article"]}
        return r

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                parts = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(parts.query))
                with server._lock:
                    server.requests.append({"path": parts.path, "query": query, "headers": dict(self.headers)})
                if server.delay:
                    time.sleep(server.delay)
                t0 = time.perf_counter()
                fault = server._fault()
                if fault is not None:
                    status, retry_after = fault
                    body = json.dumps({"errCode": status, "errMsg": "scripted fault"}).encode()
                    self.send_response(status)
                    if retry_after is not None:
                        self.send_header("Retry-After", retry_after)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                status, body, ctype = server.answer(parts.path, query)
                gz = "gzip" in (self.headers.get("Accept-Encoding") or "") and len(body) > 1000
                if gz:
                    body = gzip.compress(body, 5)
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                if gz:
                    self.send_header("Content-Encoding", "gzip")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                with server._lock:
                    server.served_s += time.perf_counter() - t0

        return Handler


@contextmanager
def europepmc_server() -> Iterator[EuropePMCServer]:
    srv = EuropePMCServer()
    thread = threading.Thread(target=srv.httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.httpd.shutdown()
        srv.httpd.server_close()
