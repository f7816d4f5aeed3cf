"""What identifies a parsed paper whatever file it came from (DOI, PMCID, PMID, the file, its bytes, its title), and
its content hash: the facts the ingest compares with what is stored, free of any Library state."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from collections.abc import Mapping

from evtui.models import ParsedPaper


def identity_keys(p: ParsedPaper) -> list[tuple[str, str]]:
    """The identifiers that name one paper whatever file it came from (a JATS file and a PDF of it get different
    ids: PMC6398430 and doi:10.1093/beheco/ary157; a PDF without a DOI read bare and through a .bib entry:
    pdf:name-hash and bib:key; two copies of one PDF without a DOI: pdf:name-hash each, the same sha256)."""
    keys = []
    if p.doi and p.doi.strip():
        keys.append(("doi", p.doi.strip().lower()))
    if p.pmcid and p.pmcid.strip():
        keys.append(("pmcid", p.pmcid.strip()))
    if p.pmid and p.pmid.strip():
        keys.append(("pmid", p.pmid.strip()))
    if p.source_path and p.source_path.lower().endswith(".pdf"):  # one PDF file, read bare and through a .bib
        keys.append(("file", os.path.abspath(p.source_path)))
    digest = p.info.get("file_sha256")
    if isinstance(digest, str) and digest:  # the same bytes under another name or folder
        keys.append(("pdf", digest))
    return keys


TITLE_KEY_MIN = 30  # shorter titles ("Editorial", "Correspondence") name many papers
# The formats of a researcher's own papers, whose titles are compared with the library's (a scan of every title per
# batch); bulk corpora (PubTator, BioC, CORD, JSONL, EvidenceBench) are not: millions of papers, no preprints.
TITLE_CHECKED = frozenset({"jats", "pdf", "bibtex", "ris", "csl-json", "zotero", "text", "europepmc"})


def title_key(title: str) -> str | None:
    """The title's letters and digits, lower-cased (as Store.same_titles computes it in SQL); None for a short
    title. A preprint and its published version differ in DOI and usually share this."""
    key = re.sub(r"[^A-Za-z0-9]+", "", title or "").lower()
    return key if len(key) >= TITLE_KEY_MIN else None


def from_reference(info: Mapping[str, object]) -> bool:
    """Read through a reference manager's entry (.bib / RIS / CSL-JSON, Zotero): metadata from the user's records.
    A PDF kept in Zotero without a parent item is not: its parent, made later, is the better record of the file."""
    return "entry" in info or ("zotero_key" in info and not info.get("zotero_standalone"))


def has_full_text(info: Mapping[str, object]) -> bool:
    """False for a metadata-only paper (a .bib or Zotero entry without a readable PDF: title and abstract)."""
    return info.get("full_text") is not False


# The share of a stored paper's sentences that a file read from elsewhere must still hold, with its title, to be that
# paper moved and edited (Library._moved_and_edited) rather than another paper.
MOVED_EDIT_KEPT = 0.5
# Formats whose file holds one paper: reading that file again reads that paper again (an edited draft, a PDF
# replaced by its published version), whatever id the new reading would make (Library._same_files).
ONE_PAPER_FILES = frozenset({"text", "pdf", "jats", "cord", "europepmc"})


def file_derived(paper_id: str) -> bool:
    """An id made from the file (a text's name and content, a PDF's path), not from an identifier of the paper."""
    return paper_id.startswith(("file:", "pdf:"))


def _path_forms(path: str) -> set[str]:
    """The forms under which `path` may have been stored: as given, absolute, relative to here."""
    out = {path, os.path.abspath(path)}
    try:
        out.add(os.path.relpath(path))
    except ValueError:  # another drive (Windows)
        pass
    return out


def _same_title(a: str, b: str) -> bool:
    return (title_key(a) or a.strip().lower()) == (title_key(b) or b.strip().lower())


def _gone(path: str | None) -> bool:
    """Whether a stored source file is no longer there. A relative path (stored by an evtui before source paths
    were made absolute) names no file for sure: never gone; nor does one with U+FFFD in it, a file name that was not
    UTF-8 (an old archive's "caf\xe9.txt"), stored with the replacement character the database needs instead of
    the byte: its file is there, under a name this string cannot give back."""
    return bool(path) and os.path.isabs(path or "") and "\ufffd" not in (path or "") and not os.path.exists(path or "")


def _with_id(p: ParsedPaper, paper_id: str) -> ParsedPaper:
    """`p` under another id (a shallow copy), to compare its content with a paper stored under that id."""
    return dataclasses.replace(p, id=paper_id)


def content_hash(p: ParsedPaper) -> str:
    h = hashlib.sha1(usedforsecurity=False)
    meta = [p.id, p.title, p.authors, p.year, p.journal, p.doi, p.pmid, p.pmcid, p.licence]
    h.update(json.dumps(meta, ensure_ascii=False, default=str).encode())
    # only when there is some: the hashes of papers stored before `info` existed stay the same; the PDF reader's
    # version is not content (a new version that reads a file the same leaves its paper unchanged)
    info = {k: v for k, v in p.info.items() if k != "reader"}
    if info:
        h.update(json.dumps(info, ensure_ascii=False, sort_keys=True, default=str).encode())
    for s in p.sentences:
        h.update(b"\x1e")
        h.update(f"{s.section_kind}\x1f{s.section_title}\x1f{int(s.is_heading)}\x1f{s.text}".encode())
    return h.hexdigest()

