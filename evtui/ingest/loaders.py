"""One loader per format. Each yields ParsedPaper (or IngestError for one bad record) in reading order."""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from lxml import etree

from evtui.errors import IngestError
from evtui.ingest.reader import MAX_PAPER_SENTENCES
from evtui.ingest.reader import decode as _decode
from evtui.ingest.reader import open_capped as _open
from evtui.ingest.reader import read_bytes as _read_bytes
from evtui.ingest.refs import person_name
from evtui.ingest.sections import flat_section_kind, section_kind
from evtui.ingest.splitter import split_sentences
from evtui.models import ParsedPaper, ParsedSentence

Result = Iterator["ParsedPaper | IngestError"]
MAX_LINE_BYTES = 10 * 1024 * 1024


_BLANK_RUN = re.compile(rb"[ \t\r\n]*")


def _bounded_lines(fh: io.BufferedReader, path: Path) -> Iterator[tuple[int, bytes | IngestError]]:
    """(line number, line) pairs; a line over MAX_LINE_BYTES is skipped as an error without holding it whole.
    A run of blank lines comes out as one blank line (the numbering still counts them all), skipped a buffer at
    a time: a gigabyte of newlines was a readline call each, half an hour of a held writer lock."""
    lineno = 0
    while True:
        raw = fh.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        lineno += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while (rest := fh.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                pass
            yield lineno, IngestError(str(path), f"line {lineno}: longer than {MAX_LINE_BYTES // 2**20} MiB")
            continue
        if raw.endswith(b"\n") and not raw.strip():
            while ahead := fh.peek(_BLANK_PEEK)[:_BLANK_PEEK]:
                end = _BLANK_RUN.match(ahead).end()  # type: ignore[union-attr]
                last = ahead.rfind(b"\n", 0, end)
                if last < 0:
                    break
                lineno += ahead.count(b"\n", 0, last + 1)
                fh.read(last + 1)
                if end < len(ahead):
                    break
        yield lineno, raw


_BLANK_PEEK = 1 << 16


def _ws(text: str) -> str:
    return " ".join(text.split())


def _title_sentence(title: str) -> list[ParsedSentence]:
    return [ParsedSentence(title, "Title", "title")] if title else []


# -- XML -------------------------------------------------------------------------------------------
def _parser() -> etree.XMLParser:
    # Never resolve entities, load DTDs or touch the network; refuse pathological trees.
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
                           recover=False, remove_comments=True, remove_pis=True)


def _xml_root(path: Path) -> etree._Element:
    data = _read_bytes(path)
    try:
        return etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as exc:
        raise _xml_error(path, exc) from exc


def _xml_error(path: Path, exc: etree.XMLSyntaxError) -> IngestError:
    msg = str(getattr(exc, "msg", None) or exc)
    if "Excessive depth" in msg:
        return IngestError(str(path), "XML nested too deeply (over 256 levels): not a paper")
    if "huge text node" in msg.lower():
        return IngestError(str(path), "XML text block over 10 MB: not a paper")
    line = getattr(exc, "lineno", None)
    return IngestError(str(path), f"XML is malformed{f' at line {line}' if line else ''}: {msg}")


def _local(tag: object) -> str:
    return etree.QName(tag).localname if isinstance(tag, str) else ""


_SKIP_INLINE = {"fig", "table-wrap", "disp-formula", "fn", "supplementary-material", "table", "graphic",
                "media", "ref-list", "fig-group", "table-wrap-group", "alternatives", "inline-graphic"}


def _text(el: etree._Element) -> str:
    """Element text without figures/tables/formulas, inline markup joined without breaking words."""
    parts: list[str] = []

    def walk(e: etree._Element) -> None:
        if e.text:
            parts.append(e.text)
        for child in e:
            if _local(child.tag) not in _SKIP_INLINE:
                walk(child)
            if child.tail:
                parts.append(child.tail)

    walk(el)
    return _ws("".join(parts))


def _jats_licence(root: etree._Element) -> str | None:
    for lic in root.iter("{*}license", "license"):
        href = lic.get("{http://www.w3.org/1999/xlink}href") or ""
        # A licence is a sentence or two; the lazy pattern below is quadratic on a huge hostile one.
        txt = (href[:500] + " " + _text(lic))[:2000]
        m = re.search(r"creativecommons\.org/licenses/([a-z\-]+)/(\d\.\d)", txt)
        if m:
            return f"CC {m.group(1).upper()} {m.group(2)}"
        m = re.search(r"Creative Commons (Attribution[\w\s\-]*?)(?: License| licen[cs]e|\))", txt)
        if m:
            name = m.group(1)
            code = "BY" + ("-NC" if "NonCommercial" in name or "Non-Commercial" in name else "") + \
                   ("-ND" if "NoDeriv" in name else "") + ("-SA" if "ShareAlike" in name else "")
            v = re.search(r"(\d\.\d)", txt)
            return f"CC {code}" + (f" {v.group(1)}" if v else "")
        if txt.strip():
            return _ws(txt)[:120]
    return None


def load_jats(path: Path) -> Result:
    root = _xml_root(path)
    if _local(root.tag) != "article":
        art = next(root.iter("{*}article", "article"), None)
        if art is None:
            raise IngestError(str(path), "no <article> element: not a JATS article")
        root = art
    meta = next(root.iter("{*}article-meta", "article-meta"), None)
    ids: dict[str, str] = {}
    title = ""
    authors: list[str] = []
    year: int | None = None
    journal = None
    if meta is not None:
        for aid in _children(meta, "article-id"):
            ids[(aid.get("pub-id-type") or "").lower()] = (aid.text or "").strip()
        t = next(meta.iter("{*}article-title", "article-title"), None)
        title = _text(t) if t is not None else ""
        for c in meta.iter("{*}contrib", "contrib"):
            if c.get("contrib-type", "author") != "author":
                continue
            name = next(c.iter("{*}name", "name"), None)
            if name is not None:
                given = next(name.iter("{*}given-names", "given-names"), None)
                sur = next(name.iter("{*}surname", "surname"), None)
                suffix = next(name.iter("{*}suffix", "suffix"), None)
                full = person_name(*(_text(e) if e is not None else "" for e in (given, sur, suffix)))
                if full:
                    authors.append(full)
        dates = list(meta.iter("{*}pub-date", "pub-date"))
        dates.sort(key=lambda d: 0 if (d.get("pub-type") or d.get("date-type") or "") in ("epub", "ppub", "pub") else 1)
        for d in dates:
            y = next(d.iter("{*}year", "year"), None)
            digits = (y.text or "").strip() if y is not None else ""
            if digits.isascii() and digits.isdigit() and len(digits) == 4:
                year = int(digits)
                break
    jt = next(root.iter("{*}journal-title", "journal-title"), None)
    journal = _text(jt) if jt is not None else None
    pmc = ids.get("pmc") or ids.get("pmcid") or ids.get("pmc-uid") or ""
    pmcid = ("PMC" + pmc.removeprefix("PMC")) if pmc else None
    pmid = ids.get("pmid") or None
    doi = ids.get("doi") or None
    pid = pmcid or (f"PMID:{pmid}" if pmid else None) or (f"doi:{doi}" if doi else None) or f"file:{path.stem}"
    sents = _title_sentence(title)
    if meta is not None:
        _jats_abstracts(meta, sents)
    body = next(root.iter("{*}body", "body"), None)
    if body is not None:
        _jats_block(body, "Main text", "other", sents)
    yield ParsedPaper(id=pid, title=title or pid, sentences=sents, authors=authors, year=year, journal=journal,
                      doi=doi, pmid=pmid, pmcid=pmcid, licence=_jats_licence(root), source_path=str(path))


def _children(el: etree._Element, name: str) -> list[etree._Element]:
    """`el`'s child elements called `name`, in any namespace or none, each once. (lxml's "{*}name" already matches
    un-namespaced elements too: `findall("{*}abstract") + findall("abstract")` listed every abstract twice, and each
    JATS paper stored its abstract twice.)"""
    return [c for c in el if _local(c.tag) == name]


# Extra abstracts (a teaser, an author summary beside the paper's abstract): each kept as its own section, headed by
# its <title> or by this label. A graphical abstract is a picture; what text it has is a caption of it.
_ABSTRACT_LABELS = {"teaser": "Teaser", "summary": "Summary", "author-summary": "Author summary",
                    "editor-summary": "Editor summary", "executive-summary": "Executive summary",
                    "toc": "Contents summary", "short": "Short abstract", "precis": "Précis",
                    "web-summary": "Web summary", "plain-language-summary": "Plain language summary",
                    "key-points": "Key points"}
_MAIN_ABSTRACT_TYPES = frozenset({"", "abstract", "normal", "main", "full", "structured", "unstructured"})


def _jats_abstracts(meta: etree._Element, out: list[ParsedSentence]) -> None:
    """The article's abstract (section "Abstract", no heading), then any other abstracts, each under a heading of
    its own, all of kind abstract. The main one comes first whatever the XML order, so its sentences keep positions
    1..N; an article whose only abstract is typed (a lone "summary") reads that one as its abstract."""
    found = [ab for ab in _children(meta, "abstract") if (ab.get("abstract-type") or "").lower() != "graphical"]
    main = [ab for ab in found if (ab.get("abstract-type") or "").strip().lower() in _MAIN_ABSTRACT_TYPES]
    main = main or found[:1]
    for ab in main:
        _jats_block(ab, "Abstract", "abstract", out, fixed_kind="abstract")
    for ab in found:
        if any(ab is m for m in main):
            continue
        first = len(out)
        t = next(iter(_children(ab, "title")), None)
        kind = (ab.get("abstract-type") or "").strip()
        label = (_text(t) if t is not None else "") or _ABSTRACT_LABELS.get(kind.lower()) or \
            (kind.replace("-", " ").capitalize() if kind else "Other abstract")
        out.append(ParsedSentence(label, label, "abstract", True))
        _jats_block(ab, label, "abstract", out, fixed_kind="abstract")
        if len(out) == first + 1:  # no text in it: no heading either
            out.pop()


def _jats_block(el: etree._Element, sec_title: str, kind: str, out: list[ParsedSentence],
                fixed_kind: str | None = None) -> None:
    for child in el:
        tag = _local(child.tag)
        if tag in ("sec", "app", "boxed-text"):
            t = child.find("{*}title")
            if t is None:
                t = child.find("title")
            title = _text(t) if t is not None else ""
            own = section_kind(title) if title else "other"
            sub_kind = fixed_kind or (own if own != "other" else kind)
            if title:
                out.append(ParsedSentence(title, title, sub_kind, True))
            _jats_block(child, title or sec_title, sub_kind, out, fixed_kind)
        elif tag in ("p", "list", "disp-quote", "statement", "def-list"):
            for s in split_sentences(_text(child)):
                out.append(ParsedSentence(s, sec_title, fixed_kind or kind))
        # title, fig, table-wrap, ref-list, etc. are handled elsewhere or left out on purpose


def load_bioc(path: Path) -> Result:
    opener = _open(path)
    try:
        # Handed a reader without `.name`: lxml encodes a file object's name as its URL, and a name that is not
        # valid UTF-8 (bytes from another system) would fail there.
        ctx = etree.iterparse(_Reader(opener), events=("end",), tag="document", resolve_entities=False,
                              no_network=True, load_dtd=False, huge_tree=False, remove_comments=True)
        for _ev, doc in ctx:
            try:
                yield _bioc_doc(path, doc)
            except IngestError as exc:
                yield exc
            doc.clear()
    except etree.XMLSyntaxError as exc:
        raise _xml_error(path, exc) from exc
    finally:
        opener.close()


class _Reader:
    """Only `read`, nothing else of the file object."""

    def __init__(self, fh: io.BufferedIOBase) -> None:
        self._fh = fh

    def read(self, n: int = -1) -> bytes:
        return self._fh.read(n)


def _bioc_doc(path: Path, doc: etree._Element) -> ParsedPaper:
    did = (doc.findtext("id") or "").strip()
    if not did:
        raise IngestError(str(path), "BioC document without <id>")
    title = ""
    sents: list[ParsedSentence] = []
    for p in doc.findall("passage"):
        typ = next((i.text or "" for i in p.findall("infon") if i.get("key") == "type"), "").lower()
        text = _ws(p.findtext("text") or "")
        if not text:
            continue
        if typ in ("title", "front") and not title:
            title = text
            sents.insert(0, ParsedSentence(text, "Title", "title"))
        else:
            kind = "abstract" if typ in ("abstract", "abstract_title_1") else section_kind(typ)
            sents.extend(ParsedSentence(s, "Abstract" if kind == "abstract" else typ, kind)
                         for s in split_sentences(text))
    pid = f"PMID:{did}" if did.isdigit() else f"bioc:{did}"
    return ParsedPaper(id=pid, title=title or pid, sentences=sents, pmid=did if did.isdigit() else None,
                       source_path=str(path))


def load_pubtator(path: Path) -> Result:
    with _open(path) as fh:
        block: dict[str, str] = {}
        for lineno, raw in _bounded_lines(fh, path):
            if isinstance(raw, IngestError):
                yield raw
                continue
            bad = False
            try:
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8").rstrip("\r\n")
            except UnicodeDecodeError:
                # this document is lost, not the ones after it
                line, bad = raw.decode("utf-8", errors="replace").rstrip("\r\n"), True
            if not line.strip():
                if block:
                    yield _pubtator_doc(path, block)
                    block = {}
                continue
            m = re.match(r"^([^|\t]+)\|([ta])\|(.*)$", line)
            if m:
                if block and block.get("id") != m.group(1):
                    yield _pubtator_doc(path, block)
                    block = {}
                block["id"] = m.group(1)
                block[m.group(2)] = m.group(3)
            if bad:
                block.setdefault("bad", str(lineno))
        if block:
            yield _pubtator_doc(path, block)


def _pubtator_doc(path: Path, block: dict[str, str]) -> ParsedPaper | IngestError:
    if "bad" in block:
        return IngestError(str(path), f"line {block['bad']}: not valid UTF-8; document "
                                      f"{block.get('id', '?').strip()[:60]} skipped")
    if "id" not in block:
        return IngestError(str(path), "annotation lines without a title or abstract line")
    did = block["id"].strip()
    title = _ws(block.get("t", ""))
    sents = _title_sentence(title) + [ParsedSentence(s, "Abstract", "abstract")
                                      for s in split_sentences(block.get("a", ""))]
    return ParsedPaper(id=f"PMID:{did}" if did.isdigit() else f"pubtator:{did}", title=title, sentences=sents,
                       pmid=did if did.isdigit() else None, source_path=str(path))


def _json_lines(path: Path) -> Iterator[tuple[int, dict | IngestError]]:
    with _open(path) as fh:
        for lineno, raw in _bounded_lines(fh, path):
            if isinstance(raw, IngestError):
                yield lineno, raw
                continue
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw.decode("utf-8-sig"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                yield lineno, IngestError(str(path), f"line {lineno}: invalid JSON ({exc})")
                continue
            except RecursionError:  # one hostile line must not end the file: the lines after it still load
                yield lineno, IngestError(str(path), f"line {lineno}: JSON nested too deeply")
                continue
            if not isinstance(obj, dict):
                yield lineno, IngestError(str(path), f"line {lineno}: expected a JSON object")
                continue
            yield lineno, obj


_STRUCT_LABEL = re.compile(r"^([A-Z][A-Z /&]{2,40})(?::|\s)")


def load_corpus_jsonl(path: Path) -> Result:
    for lineno, obj in _json_lines(path):
        if isinstance(obj, IngestError):
            yield obj
            continue
        abstract = obj.get("abstract")
        did = obj.get("doc_id", obj.get("cord_id"))
        if did is None or not isinstance(abstract, list) or not all(isinstance(s, str) for s in abstract):
            yield IngestError(str(path), f"line {lineno}: expected doc_id/cord_id and an abstract sentence list")
            continue
        pid = f"scifact:{did}" if "doc_id" in obj else f"cord:{did}"
        title = _ws(str(obj.get("title") or ""))
        sents = _title_sentence(title)
        kind = "abstract"
        for s in abstract:
            s = _ws(s)
            if not s:
                continue
            if obj.get("structured"):
                m = _STRUCT_LABEL.match(s)
                if m:
                    k = section_kind(m.group(1).title())
                    kind = k if k in ("results", "methods", "conclusion", "introduction") else "abstract"
            sents.append(ParsedSentence(s, "Abstract", kind))
        yield ParsedPaper(id=pid, title=title, sentences=sents, source_path=str(path))


def _json_object(path: Path, what: str) -> dict:
    """The file's single JSON object, or a clear error."""
    try:
        data = json.loads(_decode(path, _read_bytes(path)))
    except json.JSONDecodeError as exc:
        raise IngestError(str(path), f"invalid JSON at line {exc.lineno}: {exc.msg}") from exc
    if not isinstance(data, dict):
        raise IngestError(str(path), f"expected {what}")
    return data


def load_evidencebench(path: Path) -> Result:
    data = _json_object(path, "an object of EvidenceBench items")
    seen: set[str] = set()
    for item_id, item in data.items():
        if not isinstance(item, dict) or not isinstance(item.get("paper_as_candidate_pool"), list):
            yield IngestError(str(path), f"item {item_id}: no paper_as_candidate_pool list")
            continue
        pid = str(item.get("paper_id") or item_id)
        if pid in seen:
            continue
        seen.add(pid)
        pool = item["paper_as_candidate_pool"]
        types = item.get("sentence_types_in_candidate_pool")
        if not isinstance(types, list) or not types:
            types = ["normal_paragraph"] * len(pool)
        sents: list[ParsedSentence] = []
        sec_title, kind = "Abstract", "abstract"
        for text, typ in zip(pool, types, strict=False):
            text = str(text)
            if typ == "section_name":
                sec_title, kind = _ws(text), flat_section_kind(text, kind)
                sents.append(ParsedSentence(text, sec_title, kind, True))
            elif typ == "abstract":
                sents.append(ParsedSentence(text, "Abstract", "abstract"))
            else:
                k = kind if kind != "abstract" else "other"
                sents.append(ParsedSentence(text, sec_title if kind != "abstract" else "", k))
        if len(types) < len(pool):
            sents.extend(ParsedSentence(str(t), sec_title, kind) for t in pool[len(types):])
        # The pool opens with the title as a section_name; else fall back to the first sentence.
        first = sents[0].text if sents and sents[0].is_heading else next(
            (s.text for s in sents if not s.is_heading), pid)
        yield ParsedPaper(id=pid, title=first[:200], sentences=sents, pmcid=_pmcid(pid), source_path=str(path))


def _pmcid(pid: str) -> str | None:
    m = re.fullmatch(r"pmc_?(\d+)", pid, re.I)
    return f"PMC{m.group(1)}" if m else None


def load_cord(path: Path) -> Result:
    obj = _json_object(path, "a CORD-19 / S2ORC JSON object")
    parse = _dict(obj.get("pdf_parse")) or obj
    meta = _dict(obj.get("metadata"))
    title = _ws(str(meta.get("title") or obj.get("title") or ""))
    authors = [person_name(" ".join(x for x in [a.get("first"), *_list(a.get("middle"))] if isinstance(x, str)),
                           *(x if isinstance(x, str) else "" for x in (a.get("last"), a.get("suffix"))))
               for a in _list(meta.get("authors")) if isinstance(a, dict)]
    pid = f"cord:{obj.get('paper_id') or path.stem}"
    sents = _title_sentence(title)
    abstract = parse.get("abstract") or obj.get("abstract") or []
    for para in abstract if isinstance(abstract, list) else []:
        if isinstance(para, dict):
            sents.extend(ParsedSentence(s, "Abstract", "abstract") for s in split_sentences(str(para.get("text", ""))))
    current = None
    kind = "other"
    for para in _list(parse.get("body_text")):
        if not isinstance(para, dict):
            continue
        sec = _ws(str(para.get("section") or ""))
        if sec != current:
            current = sec
            kind = flat_section_kind(sec, kind) if sec else "other"
            if sec:
                sents.append(ParsedSentence(sec, sec, kind, True))
        sents.extend(ParsedSentence(s, sec, kind) for s in split_sentences(str(para.get("text", ""))))
    if not title and len(sents) <= 0:
        raise IngestError(str(path), "no title, abstract or body_text found")
    doi = meta.get("doi")
    yield ParsedPaper(id=pid, title=title or pid, sentences=sents, authors=[a for a in authors if a],
                      doi=doi if isinstance(doi, str) else None, source_path=str(path))


def _list(value: object) -> list[Any]:
    """A JSON value that should be an array; anything else (a number, an object, null) counts as empty."""
    return value if isinstance(value, list) else []


def _dict(value: object) -> dict[str, Any]:
    """A JSON value that should be an object; anything else counts as empty."""
    return value if isinstance(value, dict) else {}


_MD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_KNOWN = re.compile(r"^(abstract|introduction|background|methods?|materials and methods|results?|discussion|"
                    r"conclusions?|summary|findings)$", re.I)


# Whitespace holding two or more newlines: one paragraph break. Character classes only: a repeated group such as
# (?:[ \t]*\n){3,} keeps state per repetition in Python's re (1.8 GB for 12M blank lines).
_BLANK_LINES = re.compile(r"\n[ \t\r\f\v]*\n[ \t\r\f\v\n]*")


# A plain-text paper's header lines ("Title: ...", "Authors: ...") or Markdown front matter ("title: ..."):
# metadata, not text. Only these keys, so a first sentence such as "Background: ..." stays text.
_FRONT_KEY = re.compile(r"^\s*(title|authors?|year|date|doi|journal|pmid|source|url|keywords)\s*:\s*(.*)$", re.I)
_FRONT_FENCE = ("---", "...")
_FRONT_MAX_LINES = 60


def _front_matter(lines: list[str]) -> tuple[dict[str, Any], int]:
    """The metadata a text file opens with and the index of its first body line: YAML-style front matter
    between "---" fences, or "Key: value" header lines (title, authors, year, DOI, journal) before the text.
    ({}, 0) when it opens with neither."""
    start = next((i for i, line in enumerate(lines[:_FRONT_MAX_LINES]) if line.strip()), 0)
    fenced = start < len(lines) and lines[start].strip() == "---"
    raw: dict[str, str] = {}
    last = ""
    i = start + 1 if fenced else start
    while i < len(lines) and i < start + _FRONT_MAX_LINES:
        line = lines[i]
        if fenced and line.strip() in _FRONT_FENCE:
            i += 1
            break
        m = _FRONT_KEY.match(line)
        if m:
            last = m.group(1).lower()
            raw[last] = m.group(2).strip()
        elif fenced and last and line.strip().startswith("- "):  # a YAML list item: one more author
            item = re.sub(r"^name\s*:\s*", "", line.strip()[2:].strip())  # "- name: A. Smith" (pandoc)
            raw[last] = "; ".join(x for x in (raw[last], item) if x)
        elif fenced:
            last = ""  # another key of the front matter (tags, lang ...): not evtui's
        else:
            break
        i += 1
    else:
        if fenced:  # no closing fence: not front matter after all
            return {}, 0
    if not raw or not fenced and not raw.get("title"):
        return {}, 0
    meta: dict[str, Any] = {"title": _ws(raw.get("title", "").strip("\"'"))}
    names = raw.get("authors") or raw.get("author") or ""
    names = names.strip("[]")
    parts = re.split(r"\s*;\s*", names) if ";" in names else re.split(r"\s*,\s*|\s+and\s+", names)
    meta["authors"] = [_ws(a.strip("\"'")) for a in parts if a.strip("\"' ")]
    year = re.search(r"\b(1[5-9]\d\d|20\d\d)\b", raw.get("year") or raw.get("date") or "")
    meta["year"] = int(year.group(1)) if year else None
    doi = re.search(r"10\.\d{4,9}/\S+", raw.get("doi", ""))
    meta["doi"] = doi.group(0).rstrip(".,;") if doi else None
    meta["journal"] = _ws(raw.get("journal", "").strip("\"'")) or None
    pmid = raw.get("pmid", "").strip()
    meta["pmid"] = pmid if pmid.isdigit() else None
    return meta, i


_FUNCTION_WORDS = frozenset("a an and the of in on for to with by from or at as is are was were that".split())


def _title_line(lines: list[str], sents: list[ParsedSentence]) -> None:
    """A file that opens with its title on a line of its own, the authors or affiliations on the next ones (text
    copied from a PDF): the first line is the title, not the start of a paragraph that runs into the author list.
    Hard-wrapped prose is left alone (a line ending in punctuation or a function word, a next line in lower case)."""
    i = next((n for n, line in enumerate(lines) if line.strip()), None)
    if i is None or i + 1 >= len(lines):
        return
    first, nxt = lines[i].strip(), lines[i + 1].strip()
    words = first.split()
    if not nxt or _MD_HEADING.match(first) or set(nxt) <= {"=", "-"} or _KNOWN.match(first.rstrip(":")):
        return  # a one-line paragraph, a heading: the loop below takes it as the title
    if len(words) > 30 or first[-1] in ".!?,;:-" or words[-1].lower() in _FUNCTION_WORDS:
        return
    if not (nxt[0].isupper() or nxt[0].isdigit()):
        return
    sents.append(ParsedSentence(first, "Title", "title"))
    lines[i] = ""


def text_digest(data: bytes) -> str:
    """The content part of a text paper's id (file:NAME-DIGEST). Two files of identical content are one paper;
    an edited file keeps its stored id all the same (evtui.library: same source file, new content)."""
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()[:8]


def file_text_digest(path: Path) -> str:
    """text_digest of a file as load_text reads it (gunzipped, UTF-16/32 as UTF-8)."""
    return text_digest(_read_bytes(path))


def load_text(path: Path) -> Result:
    data = _read_bytes(path)
    digest = text_digest(data)
    # A run of blank lines is one paragraph break: a newline bomb would be a Python loop turn per line. Each
    # earlier form of the text is let go as soon as the next exists (a 500 MB file held three times over).
    text = _decode(path, data, lenient=True)
    del data
    text = _BLANK_LINES.sub("\n\n", text)
    lines = text.splitlines()
    del text
    meta, body = _front_matter(lines)
    title = meta.get("title") or ""
    sents: list[ParsedSentence] = _title_sentence(title)
    if body:
        lines = lines[body:]
    elif lines:
        _title_line(lines, sents)
        title = sents[0].text if sents else ""
    sec_title, kind = "", "other"
    para: list[str] = []
    over = 0  # sentences past MAX_PAPER_SENTENCES: counted, never held (a 500 MB text made millions of objects)

    def flush() -> None:
        nonlocal over
        if para:
            found = split_sentences(" ".join(para))
            room = max(0, MAX_PAPER_SENTENCES - len(sents))
            sents.extend(ParsedSentence(s, sec_title, kind) for s in found[:room])
            over += len(found) - len(found[:room])
            para.clear()

    for i, line in enumerate(lines):
        stripped = line.strip()
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        heading = None
        m = _MD_HEADING.match(stripped)
        if m:
            heading = m.group(2)
        elif stripped and nxt and set(nxt) <= {"="} and len(nxt) >= 3:
            heading = stripped
        elif stripped and nxt and set(nxt) <= {"-"} and len(nxt) >= 3 and not para:
            heading = stripped
        elif stripped and set(stripped) <= {"=", "-"} and len(stripped) >= 3:
            continue
        elif _KNOWN.match(stripped.rstrip(":")) and not para:
            heading = stripped.rstrip(":")
        if heading is not None:
            flush()
            if not title and not sents:
                title = heading
                sents.append(ParsedSentence(heading, "Title", "title"))
                continue
            sec_title, kind = heading, flat_section_kind(heading, kind)
            sents.append(ParsedSentence(heading, heading, kind, True))
            continue
        if not stripped:
            flush()
            continue
        para.append(stripped)
    flush()
    if not title and sents:
        title = sents[0].text[:200]
        sents[0] = ParsedSentence(sents[0].text, "Title", "title")
    if not sents:
        raise IngestError(str(path), "no text found")
    pid = f"file:{path.name.split('.')[0]}-{digest}"
    notes: list[str] = []
    if over or len(sents) > MAX_PAPER_SENTENCES:
        over += max(0, len(sents) - MAX_PAPER_SENTENCES)
        del sents[MAX_PAPER_SENTENCES:]
        notes.append(f"paper {pid}: only its first {MAX_PAPER_SENTENCES:,} of {len(sents) + over:,} sentences kept")
    yield ParsedPaper(id=pid, title=title, sentences=sents, authors=meta.get("authors") or [], year=meta.get("year"),
                      journal=meta.get("journal"), doi=meta.get("doi"), pmid=meta.get("pmid"), source_path=str(path),
                      notes=notes)


LOADERS: dict[str, Callable[[Path], Result]] = {
    "jats": load_jats, "bioc": load_bioc, "pubtator": load_pubtator, "cord": load_cord,
    "corpus-jsonl": load_corpus_jsonl, "evidencebench": load_evidencebench, "text": load_text,
}


def load_pdf(path: Path) -> Result:
    from evtui.ingest.pdf_worker import parse

    yield parse(path)


def _register_library_formats() -> None:
    """PDF and the reference-manager formats (evtui/ingest/pdf.py, refs.py, zotero.py)."""
    from evtui.ingest.refs import load_bibtex, load_csl_json, load_ris
    from evtui.ingest.zotero import load_zotero

    LOADERS.update({"pdf": load_pdf, "bibtex": load_bibtex, "ris": load_ris, "csl-json": load_csl_json,
                    "zotero": load_zotero})


_register_library_formats()
