"""Where a paper came from and how it was read: the labels `evtui papers` and the Library screen show, the
`evtui show` document, and a Zotero ingest that reads only new and changed items."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from evtui.errors import EvtuiError
from evtui.models import Paper

_LABELS = {"pdf": "PDF", "jats": "JATS", "bioc": "BioC", "pubtator": "PubTator", "cord": "CORD-19",
           "corpus-jsonl": "JSONL", "evidencebench": "EvidenceBench", "text": "text", "bibtex": "BibTeX",
           "ris": "RIS", "csl-json": "CSL-JSON", "zotero": "Zotero", "europepmc": "Europe PMC"}


def source_label(p: Paper, info: dict[str, Any] | None) -> str:
    """'PDF', 'Zotero · PDF', 'BibTeX · no full text', 'JATS' ..."""
    label = _LABELS.get(p.source_format, p.source_format or "?")
    info = info or {}
    if info.get("full_text") is False:
        return f"{label} · no full text"
    if "pages" in info and p.source_format != "pdf":
        return f"{label} · PDF"
    return label


def read_summary(info: dict[str, Any] | None, n_sentences: int) -> str:
    """For a PDF: '8 pages, 185 sentences; dropped 216 reference lines, 15 header/footer lines' (else '')."""
    info = info or {}
    if "pages" not in info:
        return ""
    dropped = info.get("dropped") or {}
    parts = [f"{dropped[k]:,} {label}" for k, label in (
        ("reference_lines", "reference lines"), ("header_footer_lines", "header/footer lines"),
        ("small_print_lines", "small-print lines"), ("citation_markers", "citation markers"))
        if isinstance(dropped, dict) and dropped.get(k)]
    out = f"{info.get('pages_read', info['pages'])}/{info['pages']} pages, {n_sentences:,} sentences"
    return out + (f"; dropped {', '.join(parts)}" if parts else "")


def read_note(info: dict[str, Any] | None) -> str:
    """A short line for a table cell: '8 pp · 32 ref + 15 header lines dropped', 'no full text', '' (nothing)."""
    info = info or {}
    parts: list[str] = []
    if info.get("full_text") is False:
        parts.append("no full text")
    if "pages" in info:
        d = info.get("dropped") or {}
        drop = [f"{d[k]:,} {label}" for k, label in (("reference_lines", "ref"), ("header_footer_lines", "header"))
                if isinstance(d, dict) and d.get(k)]
        parts.append(f"{info['pages']} pp" + (f" · {' + '.join(drop)} lines dropped" if drop else ""))
    colls = info.get("collections")
    if isinstance(colls, list) and colls:
        parts.append("in " + ", ".join(str(c) for c in colls))
    return " · ".join(parts)


def show_document(lib: Any, paper_id: str) -> dict[str, Any]:
    """The `evtui show --json` contract: the paper's metadata and every stored sentence in order. Headings carry
    section_kind "heading", the title "title"."""
    paper = lib.store.paper(paper_id)
    if paper is None:
        raise EvtuiError(f"no paper {paper_id!r} in the library (see `evtui papers`)")
    info = lib.store.paper_infos([paper_id]).get(paper_id, {})
    sentences = [{
        "sentence_id": s.id, "position": s.position, "section": s.section_title,
        "section_kind": "heading" if s.is_heading else s.section_kind, "text": s.text,
    } for s in lib.store.sentences(paper_id)]
    return {
        "paper": {"id": paper.id, "title": paper.title, "authors": paper.authors, "year": paper.year,
                  "doi": paper.doi, "source_format": paper.source_format, "source_path": paper.source_path,
                  "journal": paper.journal, "pmid": paper.pmid, "pmcid": paper.pmcid, "licence": paper.licence,
                  "source": source_label(paper, info), "read": info},
        "sentences": sentences,
    }


def ingest_zotero(lib: Any, folder: str | None, collection: str | None,
                  on_progress: Callable[..., None] | None = None, *, share: bool = False) -> Any:
    """Ingest a Zotero library (evtui/ingest/zotero.py): items whose stored version is unchanged are skipped
    without reading their PDFs, and counted as unchanged."""
    from evtui.errors import IngestError
    from evtui.ingest.zotero import ZoteroRun, find_database, known_versions, zotero_run
    from evtui.library import IngestReport

    try:
        db = find_database(folder)
    except IngestError as exc:
        report = IngestReport()
        report.errors.append(exc)
        return report
    known = known_versions(lib.store.paper_infos())
    with zotero_run(ZoteroRun(collection=collection, known_versions=known)) as run:
        report = lib.ingest([Path(db)], fmt="zotero", on_progress=on_progress, share=share)
    report.unchanged += run.skipped
    return report
