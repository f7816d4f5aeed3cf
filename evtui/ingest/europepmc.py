"""Europe PMC records (format "europepmc"): one `search?resultType=core` result, as the service returned it, saved as
`<stem>.json` in the data home by `evtui fetch` (evtui/fetch.py), and its JATS full text as `<stem>.xml` beside it
where the paper is open access. The full text is read by the JATS loader, so sections, captions and references
behave as for a downloaded file; the record fills what the JATS lacks (its licence, year, journal) and, alone, gives
a metadata-only paper (title and abstract). Every field is the network's, so each is checked for type and size."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from evtui.errors import IngestError
from evtui.ingest.loaders import _json_object, load_jats
from evtui.ingest.refs import person_name
from evtui.ingest.splitter import split_sentences
from evtui.models import ParsedPaper, ParsedSentence

FORMAT = "europepmc"
MAX_FIELD_CHARS = 200_000  # an abstract is a few thousand characters; a longer field is cut, not refused
MAX_AUTHORS = 2_000
_PMCID = re.compile(r"PMC\d{1,12}")
_PMID = re.compile(r"\d{1,12}")
_DOI = re.compile(r"10\.\d{3,9}/\S{1,300}")
# The markup Europe PMC leaves in titles and abstracts (<h4> section labels, <sup>, <i>, <b>): only these tags are
# removed, so that "p < .001" or "n<5" in a sentence stays as it is.
_TAG = re.compile(r"</?(?:h[1-6]|sup|sub|i|b|em|strong|u|p|br|span|small|sc|italic|bold)\b[^<>]{0,200}>", re.I)
_HEADING = re.compile(r"<h[1-6][^<>]{0,200}>(.{0,200}?)</h[1-6]>", re.I | re.S)
# PubMed publication types of a paper that is no longer part of the literature (Europe PMC passes them on).
WITHDRAWN_TYPES = frozenset({"retracted publication", "withdrawn publication"})


def text_field(record: dict[str, Any], key: str) -> str:
    """A string field, whitespace-normalised and capped; '' for a missing or non-string value."""
    value = record.get(key)
    if not isinstance(value, str):
        return ""
    return " ".join(value[:MAX_FIELD_CHARS].split())


def plain(text: str) -> str:
    return " ".join(_TAG.sub(" ", text).split())


def pmcid_of(record: dict[str, Any]) -> str | None:
    v = text_field(record, "pmcid").upper()
    return v if _PMCID.fullmatch(v) else None


def pmid_of(record: dict[str, Any]) -> str | None:
    v = text_field(record, "pmid")
    return v if _PMID.fullmatch(v) else None


def doi_of(record: dict[str, Any]) -> str | None:
    v = text_field(record, "doi")
    return v if _DOI.fullmatch(v) else None


def year_of(record: dict[str, Any]) -> int | None:
    v = text_field(record, "pubYear")
    return int(v) if v.isascii() and v.isdigit() and len(v) == 4 else None


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def journal_of(record: dict[str, Any]) -> str | None:
    journal = _dict(_dict(record.get("journalInfo")).get("journal"))
    return text_field(journal, "title")[:500] or None


def open_access(record: dict[str, Any]) -> bool:
    return text_field(record, "isOpenAccess") == "Y"


def pub_types(record: dict[str, Any]) -> list[str]:
    types = _list(_dict(record.get("pubTypeList")).get("pubType"))
    return [" ".join(t.split())[:200] for t in types[:50] if isinstance(t, str)]


def withdrawn(record: dict[str, Any]) -> str | None:
    """The publication type that says the paper was retracted or withdrawn, or None."""
    return next((t for t in pub_types(record) if t.lower() in WITHDRAWN_TYPES), None)


def licence_of(record: dict[str, Any]) -> str | None:
    """'cc by-nc-nd' as the JATS loader writes licences: 'CC BY-NC-ND'."""
    v = text_field(record, "license")[:120]
    if not v:
        return None
    if v.lower().startswith("cc"):
        return "CC " + v[2:].strip().upper()
    return v


def title_of(record: dict[str, Any]) -> str:
    return plain(text_field(record, "title"))


def authors_of(record: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for a in _list(_dict(record.get("authorList")).get("author"))[:MAX_AUTHORS]:
        a = _dict(a)
        name = person_name(text_field(a, "firstName")[:200], text_field(a, "lastName")[:200]) or \
            text_field(a, "fullName")[:200] or text_field(a, "collectiveName")[:500]
        if name:
            out.append(name)
    return out


def paper_id(record: dict[str, Any]) -> str | None:
    """The id the JATS loader would give the same paper (so a full text fetched later replaces the record)."""
    pmcid, pmid, doi = pmcid_of(record), pmid_of(record), doi_of(record)
    return pmcid or (f"PMID:{pmid}" if pmid else None) or (f"doi:{doi}" if doi else None)


def abstract_sentences(record: dict[str, Any]) -> list[ParsedSentence]:
    """The abstract's sentences, under its own labels where it has them ("<h4>Methods</h4>...")."""
    raw = record.get("abstractText")
    if not isinstance(raw, str) or not raw.strip():
        return []
    raw = raw[:MAX_FIELD_CHARS]
    out: list[ParsedSentence] = []
    parts = _HEADING.split(raw)  # [before, label1, text1, label2, text2, ...]
    chunks = [("Abstract", parts[0])] + [(plain(parts[i]) or "Abstract", parts[i + 1])
                                          for i in range(1, len(parts) - 1, 2)]
    for label, chunk in chunks:
        out.extend(ParsedSentence(s, label, "abstract") for s in split_sentences(plain(chunk)))
    return out


def load_europepmc(path: Path) -> Any:
    if path.suffix.lower() == ".xml" and path.with_suffix(".json").is_file():
        return  # a full text beside its record (a folder of them ingested whole): read with the record
    record = _json_object(path, "a Europe PMC record (one JSON object)")
    pid = paper_id(record)
    if pid is None:
        raise IngestError(str(path), "Europe PMC record without a PMCID, PMID or DOI")
    xml = path.with_suffix(".xml")
    info: dict[str, Any] = {"fetched_from": "europepmc"}
    note = ""
    if xml.is_file():
        try:
            items = list(load_jats(xml))
        except IngestError as exc:  # an error page or a damaged answer in place of the JATS: the abstract still
            items, note = [], exc.reason
        for item in items:
            if isinstance(item, IngestError):
                note = item.reason
                break
            item.id = pid  # the record's, as the JATS would give it (its PMCID)
            item.licence = item.licence or licence_of(record)
            item.year = item.year or year_of(record)
            item.journal = item.journal or journal_of(record)
            item.doi = item.doi or doi_of(record)
            item.pmid = item.pmid or pmid_of(record)
            item.pmcid = item.pmcid or pmcid_of(record)
            item.authors = item.authors or authors_of(record)
            item.info = info
            item.source_path = str(path)
            yield item
            return
    title = title_of(record)
    if not title:
        raise IngestError(str(path), f"Europe PMC record {pid}: no title")
    sents = [ParsedSentence(title, "Title", "title"), *abstract_sentences(record)]
    yield ParsedPaper(id=pid, title=title, sentences=sents, authors=authors_of(record), year=year_of(record),
                      journal=journal_of(record), doi=doi_of(record), pmid=pmid_of(record), pmcid=pmcid_of(record),
                      licence=licence_of(record), source_path=str(path), info={**info, "full_text": False},
                      notes=[f"paper {pid}: its full text {xml.name} was not read ({note[:200]}): title and abstract "
                             "only"] if note else [])
