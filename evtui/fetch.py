"""`evtui fetch`: papers from Europe PMC into the library, by DOI / PMID / PMCID or by a search.

Each paper becomes two files under `<home>/europepmc/papers/`: its `core` record as Europe PMC returned it
(`<stem>.json`) and, where it is open access, its JATS full text (`<stem>.xml`); the library then ingests them as
format "europepmc" (evtui/ingest/europepmc.py), so the rules that keep one copy of a paper, let the better text win
and move selections along are ingest's own. Everything is fetched before anything is stored: a network that fails
midway stores nothing. The files stay, so a re-fetch sends nothing and `evtui ingest --format europepmc
<home>/europepmc/papers` rebuilds those papers offline."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evtui.config import Config
from evtui.errors import EvtuiError
from evtui.europepmc import Client, Ident, Refused, Unreachable, parse_id, write_atomic
from evtui.ingest import europepmc as rec
from evtui.library import IngestReport, Library, has_full_text
from evtui.store import Store

FETCH_DIR = "europepmc"
SOURCE = "europepmc"
MAX_LIMIT = 1000  # Europe PMC's largest page

__all__ = ["Hit", "Outcome", "Refused", "Unreachable", "client_for", "download", "held", "lookup", "papers_dir",
           "parse_ids", "search", "store"]


def papers_dir(config: Config) -> Path:
    return config.home / FETCH_DIR / "papers"


def client_for(config: Config, **kwargs: Any) -> Client:
    return Client(config.home / FETCH_DIR, contact=config.contact_email or None, base_url=config.europepmc_url,
                  **kwargs)


def parse_ids(texts: Sequence[str]) -> list[Ident]:
    out: list[Ident] = []
    for t in texts:
        try:
            out.append(parse_id(t))
        except ValueError as exc:
            raise EvtuiError(str(exc)) from exc
    return out


@dataclass
class Hit:
    """One Europe PMC record, and what the user asked for to find it (an ID, or the search)."""

    record: dict[str, Any]
    asked: str = ""

    @property
    def paper_id(self) -> str | None:
        return rec.paper_id(self.record)

    @property
    def title(self) -> str:
        return rec.title_of(self.record)

    @property
    def year(self) -> int | None:
        return rec.year_of(self.record)

    @property
    def journal(self) -> str | None:
        return rec.journal_of(self.record)

    @property
    def open_access(self) -> bool:
        return rec.open_access(self.record) and rec.pmcid_of(self.record) is not None

    @property
    def name(self) -> str:
        return self.asked or self.paper_id or "?"

    def row(self) -> dict[str, Any]:
        return {"id": self.paper_id, "title": self.title, "year": self.year, "journal": self.journal,
                "open_access": self.open_access}


@dataclass
class Outcome:
    fetched: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    report: IngestReport | None = None

    def skip(self, asked: str, reason: str) -> None:
        self.skipped.append({"id": asked, "reason": reason})

    def to_json(self) -> dict[str, Any]:
        return {"fetched": self.fetched, "skipped": self.skipped}


def _results(doc: dict[str, Any]) -> list[dict[str, Any]]:
    results = doc.get("resultList")
    items = results.get("result") if isinstance(results, dict) else None
    return [r for r in items if isinstance(r, dict)] if isinstance(items, list) else []


def _matches(record: dict[str, Any], ident: Ident) -> bool:
    if ident.kind == "pmcid":
        return rec.pmcid_of(record) == ident.value.upper()
    if ident.kind == "pmid":
        return rec.pmid_of(record) == ident.value
    return (rec.doi_of(record) or "").lower() == ident.value.lower()


def _parallel(client: Client, items: Sequence[Any], work: Callable[[Any], Any],
              cancelled: Callable[[], bool] | None = None) -> list[Any]:
    """work(item) for each item, `client.concurrency` at a time, in order; the first failure is raised once the
    rest have stopped (nothing is stored from a half-done fetch)."""
    stop = threading.Event()

    def guarded(item: Any) -> Any:
        if stop.is_set() or (cancelled is not None and cancelled()):
            return None
        try:
            return work(item)
        except BaseException:
            stop.set()
            raise

    with ThreadPoolExecutor(max_workers=client.concurrency, thread_name_prefix="europepmc") as pool:
        futures = [pool.submit(guarded, item) for item in items]
        return [f.result() for f in futures]


def held(lib: Library, idents: Sequence[Ident], reader: Store | None = None
         ) -> tuple[list[Ident], list[dict[str, str]]]:
    """The IDs to look up, and those whose paper the library already holds with its full text: skipped without
    asking the network (a paper held as metadata only is looked up: Europe PMC may have its full text now).
    `reader`: a connection of this thread's own (the app's workers make theirs under its lock)."""
    reader = reader or lib.store.cursor()
    todo: list[Ident] = []
    skipped: list[dict[str, str]] = []
    for ident in idents:
        value = ident.value.lower() if ident.kind == "doi" else ident.value
        own_id = ident.value if ident.kind == "pmcid" else f"PMID:{ident.value}" if ident.kind == "pmid" else ""
        other = own_id if own_id and reader.paper_states([own_id]) else \
            reader.same_papers([(ident.kind, value)]).get((ident.kind, value))
        if other is not None and has_full_text(reader.paper_infos([other]).get(other, {})):
            skipped.append({"id": ident.given, "reason": f"already in the library as {other}"})
        else:
            todo.append(ident)
    return todo, skipped


def lookup(client: Client, idents: Sequence[Ident], *, cancelled: Callable[[], bool] | None = None
           ) -> tuple[list[Hit], list[dict[str, str]]]:
    """Each ID's record (the one whose PMCID / PMID / DOI is that ID); the IDs Europe PMC does not know, skipped."""

    def one(ident: Ident) -> Hit | None:
        doc = client.search(ident.query(), page_size=5, ttl=None)
        found = next((r for r in _results(doc) if _matches(r, ident)), None)
        return Hit(found, ident.given) if found is not None else None

    found = _parallel(client, idents, one, cancelled)
    hits = [h for h in found if h is not None]
    skipped = [{"id": i.given, "reason": "not found in Europe PMC"} for i, h in zip(idents, found, strict=True)
               if h is None and not (cancelled and cancelled())]
    return hits, skipped


def search_query(query: str, *, open_access: bool = False, since: int | None = None) -> str:
    """Europe PMC's own syntax passes through; the filters are its OPEN_ACCESS and PUB_YEAR fields."""
    q = query.strip()
    if open_access:
        q = f"({q}) AND OPEN_ACCESS:y"
    if since is not None:
        q = f"({q}) AND PUB_YEAR:[{since} TO 3000]"
    return q


def search(client: Client, query: str, *, limit: int = 20, open_access: bool = False, since: int | None = None
           ) -> tuple[list[Hit], int]:
    """The first `limit` hits and how many Europe PMC has in all."""
    if not query.strip():
        raise EvtuiError("an empty search: give Europe PMC's query, e.g. --search 'malaria AND vaccine'")
    q = search_query(query, open_access=open_access, since=since)
    hits: list[Hit] = []
    cursor, total = "*", 0
    while len(hits) < limit:
        doc = client.search(q, page_size=min(MAX_LIMIT, limit), cursor=cursor)
        count = doc.get("hitCount")
        total = count if isinstance(count, int) and not isinstance(count, bool) else total
        page = _results(doc)
        hits.extend(Hit(r) for r in page[: limit - len(hits)])
        nxt = doc.get("nextCursorMark")
        if not page or not isinstance(nxt, str) or nxt == cursor or len(hits) >= total:
            break
        cursor = nxt
    return hits, max(total, len(hits))


def stem(paper_id: str) -> str:
    """A file name for the paper: PMC123, PMID-123, doi-<hash> (a DOI holds any character)."""
    if paper_id.startswith("doi:"):
        return "doi-" + hashlib.sha256(paper_id[4:].lower().encode()).hexdigest()[:24]
    return paper_id.replace(":", "-")


def _stored_as(reader: Store, hit: Hit) -> tuple[str, bool] | None:
    """(id, has full text) of the paper already in the library with this record's id, PMCID, PMID or DOI."""
    keys = [(k, v) for k, v in (("pmcid", rec.pmcid_of(hit.record)), ("pmid", rec.pmid_of(hit.record)),
                                ("doi", (rec.doi_of(hit.record) or "").lower())) if v]
    pid = hit.paper_id or ""
    other = pid if reader.paper_states([pid]) else next(iter(reader.same_papers(keys).values()), None)
    if other is None:
        return None
    return other, has_full_text(reader.paper_infos([other]).get(other, {}))


def download(lib: Library, client: Client, hits: Sequence[Hit], *, cancelled: Callable[[], bool] | None = None,
             on_hit: Callable[[Hit, str], None] | None = None, reader: Store | None = None
             ) -> tuple[list[tuple[Hit, Path]], Outcome]:
    """Each hit's files under papers_dir (its record, and its full text where open access), except those the
    library holds already as well as Europe PMC could give them, those withdrawn, and those without an id."""
    out = Outcome()
    reader = reader or lib.store.cursor()
    folder = papers_dir(lib.config)
    todo: list[Hit] = []
    for hit in hits:
        pid = hit.paper_id
        why = rec.withdrawn(hit.record)
        if pid is None:
            out.skip(hit.name, "the Europe PMC record has no PMCID, PMID or DOI")
        elif why:
            out.skip(hit.name, f"withdrawn: Europe PMC lists it as a {why}; not added")
        elif (held := _stored_as(reader, hit)) is not None and (held[1] or not hit.open_access):
            out.skip(hit.name, f"already in the library as {held[0]}")
        else:
            todo.append(hit)

    def one(hit: Hit) -> tuple[Hit, Path]:
        path = folder / (stem(hit.paper_id or "") + ".json")
        xml = path.with_suffix(".xml")
        if hit.open_access and not xml.is_file():
            data = client.full_text(rec.pmcid_of(hit.record) or "")
            if data is not None and data.lstrip()[:1] == b"<":
                write_atomic(xml, data)
        write_atomic(path, json.dumps(hit.record, ensure_ascii=False).encode("utf-8"))
        if on_hit is not None:
            on_hit(hit, "full text" if xml.is_file() else "abstract")
        return hit, path

    done = _parallel(client, todo, one, cancelled)
    return [d for d in done if d is not None], out


def store(lib: Library, files: Sequence[tuple[Hit, Path]], out: Outcome | None = None,
          on_progress: Callable[[Any], None] | None = None, reader: Store | None = None) -> Outcome:
    """Ingest the fetched files as one run; each hit is then fetched (with its id, full text or not, licence) or
    skipped with ingest's reason (the same paper already stored, an unreadable answer)."""
    out = out or Outcome()
    if not files:
        return out
    report = lib.ingest([p for _h, p in files], fmt="europepmc", on_progress=on_progress, share=True)
    out.report = report
    stored = set(report.stored)
    errors = {e.path: e.reason for e in report.errors}
    reader = reader or lib.store.cursor()
    for hit, path in files:
        pid = hit.paper_id or ""
        if pid in stored:
            paper = reader.paper(pid)
            full = has_full_text(reader.paper_infos([pid]).get(pid, {"full_text": False}))
            out.fetched.append({"paper_id": pid, "title": paper.title if paper else hit.title, "source": SOURCE,
                                "full_text": full,
                                "licence": paper.licence if paper else rec.licence_of(hit.record)})
            continue
        reason = errors.get(str(path)) or errors.get(str(path.with_suffix(".xml")))
        if reason:
            out.skip(hit.name, reason)
            continue
        held = _stored_as(reader, hit)
        out.skip(hit.name, f"already in the library as {held[0] if held else pid}")
    return out
