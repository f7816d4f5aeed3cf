"""The selection basket and its export (Markdown with citations, JSON Lines, BibTeX).

The basket is persisted in DuckDB (`selections`), so what a researcher picks in the TUI survives a restart and
`evtui export` can write it from the shell. Each entry keeps the query, aspects and scores it was picked under.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from evtui import __version__
from evtui.errors import EvtuiError
from evtui.library import Library
from evtui.models import Aspect, Evidence, Paper, ParsedQuery, Span

FORMATS = ("md", "jsonl", "bibtex")

_DDL = """CREATE TABLE IF NOT EXISTS selections (
    sentence_id VARCHAR PRIMARY KEY,
    position INTEGER,
    query VARCHAR,
    mode VARCHAR,
    aspects VARCHAR,      -- JSON [{id, label, terms}]
    highlights VARCHAR,   -- JSON [{aspect, start, end}]
    method VARCHAR,
    score DOUBLE,
    added_at TIMESTAMP DEFAULT current_timestamp
)"""


@dataclass
class Selected:
    sentence_id: str
    query: str
    mode: str
    aspects: list[Aspect]
    highlights: list[Span]
    method: str
    score: float
    text: str
    section: str
    paper: Paper | None


class Basket:
    def __init__(self, library: Library) -> None:
        self.library = library
        self.con = library.store.con
        self.con.execute(_DDL)

    def ids(self) -> list[str]:
        return [r[0] for r in self.con.execute("SELECT sentence_id FROM selections ORDER BY position").fetchall()]

    def add(self, evidence: Evidence, query: ParsedQuery, method: str) -> None:
        nxt = self.con.execute("SELECT coalesce(max(position), -1) + 1 FROM selections").fetchone()[0]
        self.con.execute(
            "INSERT OR REPLACE INTO selections (sentence_id, position, query, mode, aspects, highlights, method, score)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [evidence.sentence.id, nxt, query.text, query.mode, json.dumps([a.to_json() for a in query.aspects]),
             json.dumps([h.to_json() for h in evidence.highlights]), method, evidence.score],
        )

    def remove(self, sentence_id: str) -> None:
        self.con.execute("DELETE FROM selections WHERE sentence_id = ?", [sentence_id])

    def toggle(self, evidence: Evidence, query: ParsedQuery, method: str) -> bool:
        """Add or remove; returns True when the sentence is now selected."""
        if evidence.sentence.id in self.ids():
            self.remove(evidence.sentence.id)
            return False
        self.add(evidence, query, method)
        return True

    def move(self, sentence_id: str, delta: int) -> None:
        ids = self.ids()
        if sentence_id not in ids:
            return
        i = ids.index(sentence_id)
        j = max(0, min(len(ids) - 1, i + delta))
        ids[i], ids[j] = ids[j], ids[i]
        for pos, sid in enumerate(ids):
            self.con.execute("UPDATE selections SET position = ? WHERE sentence_id = ?", [pos, sid])

    def clear(self) -> None:
        self.con.execute("DELETE FROM selections")

    def items(self) -> list[Selected]:
        rows = self.con.execute(
            "SELECT s.sentence_id, s.query, s.mode, s.aspects, s.highlights, s.method, s.score, t.text,"
            " coalesce(nullif(t.section_title, ''), t.section_kind), t.paper_id"
            " FROM selections s LEFT JOIN sentences t ON t.id = s.sentence_id ORDER BY s.position").fetchall()
        out: list[Selected] = []
        for sid, query, mode, aspects, highlights, method, score, text, section, paper_id in rows:
            out.append(Selected(
                sentence_id=sid, query=query, mode=mode,
                aspects=[Aspect(a["id"], a["label"], a["terms"]) for a in json.loads(aspects or "[]")],
                highlights=[Span(h["aspect"], h["start"], h["end"]) for h in json.loads(highlights or "[]")],
                method=method, score=score or 0.0, text=text or "(sentence no longer in the library)",
                section=section or "", paper=self.library.store.paper(paper_id) if paper_id else None,
            ))
        return out


# -- rendering ---------------------------------------------------------------------------------------
def citation(p: Paper) -> str:
    authors = p.authors[:3]
    who = ", ".join(authors) + (" et al." if len(p.authors) > 3 else "") if authors else "Unknown authors"
    parts = [f"{who} ({p.year or 'n.d.'}). {p.title.rstrip('.')}."]
    if p.journal:
        parts.append(f"*{p.journal}*.")
    links = []
    if p.doi:
        links.append(f"[doi:{p.doi}](https://doi.org/{p.doi})")
    if p.pmid:
        links.append(f"[PMID {p.pmid}](https://pubmed.ncbi.nlm.nih.gov/{p.pmid}/)")
    if p.pmcid:
        links.append(f"[{p.pmcid}](https://www.ncbi.nlm.nih.gov/pmc/articles/{p.pmcid}/)")
    if links:
        parts.append(" · ".join(links))
    return " ".join(parts)


def _marked(text: str, spans: Sequence[Span], aspects: Sequence[Aspect]) -> str:
    """The sentence with each aspect match in bold and tagged with its aspect id: **aspirin**[head]."""
    label = {a.id: a.id for a in aspects}
    out, last = [], 0
    for s in sorted(spans, key=lambda s: (s.start, -s.end)):
        if s.start < last or s.end > len(text):
            continue
        out.append(text[last:s.start])
        out.append(f"**{text[s.start:s.end]}**<sub>{label.get(s.aspect, s.aspect)}</sub>")
        last = s.end
    out.append(text[last:])
    return "".join(out)


def to_markdown(items: Sequence[Selected], *, now: datetime | None = None) -> str:
    now = now or datetime.now(timezone.utc)
    lines = ["# Evidence", ""]
    by_query: dict[str, list[Selected]] = {}
    for it in items:
        by_query.setdefault(it.query, []).append(it)
    methods = sorted({it.method for it in items})
    for query, group in by_query.items():
        first = group[0]
        lines += [f"## {query}", "", f"*{first.mode}* · aspects: " + "; ".join(
            f"`{a.id}` {a.label}" for a in first.aspects), ""]
        for n, it in enumerate(group, 1):
            covered = sorted({h.aspect for h in it.highlights})
            lines.append(f"### {n}. {it.paper.title if it.paper else it.sentence_id}")
            lines.append("")
            lines.append("> " + _marked(it.text, it.highlights, it.aspects))
            lines.append("")
            if it.paper:
                lines.append(f"- Citation: {citation(it.paper)}")
            lines.append(f"- Section: {it.section} · sentence `{it.sentence_id}`")
            lines.append(f"- Aspects covered: {', '.join(covered) if covered else 'none'} "
                         f"({len(covered)}/{len(it.aspects)})")
            lines.append(f"- Retrieval score: {it.score:.3f} ({it.method})")
            lines.append("")
    lines += ["---", f"Exported by evtui {__version__} on {now:%Y-%m-%d %H:%M} UTC · "
                     f"method: {', '.join(methods) or 'n/a'} · judge: none", ""]
    return "\n".join(lines)


def to_jsonl(items: Sequence[Selected]) -> str:
    rows = []
    for it in items:
        p = it.paper
        rows.append(json.dumps({
            "sentence_id": it.sentence_id, "text": it.text, "section": it.section, "query": it.query,
            "mode": it.mode, "aspects": [a.to_json() for a in it.aspects],
            "highlights": [h.to_json() for h in it.highlights], "method": it.method, "score": it.score,
            "paper": None if p is None else {"id": p.id, "title": p.title, "authors": p.authors, "year": p.year,
                                              "journal": p.journal, "doi": p.doi, "pmid": p.pmid, "pmcid": p.pmcid},
        }, ensure_ascii=False))
    return "\n".join(rows) + ("\n" if rows else "")


def to_bibtex(items: Sequence[Selected]) -> str:
    seen: dict[str, str] = {}
    for it in items:
        p = it.paper
        if p is None or p.id in seen:
            continue
        first = (p.authors[0].split()[-1] if p.authors else "anon").lower()
        key = re.sub(r"[^a-z0-9]", "", first) + str(p.year or "") + re.sub(r"[^a-z0-9]", "", p.id.lower())[-8:]
        fields = {"title": p.title, "author": " and ".join(p.authors), "year": p.year, "journal": p.journal,
                  "doi": p.doi, "pmid": p.pmid, "pmcid": p.pmcid}
        body = ",\n".join(f"  {k} = {{{str(v).replace('{', '(').replace('}', ')')}}}" for k, v in fields.items() if v)
        seen[p.id] = f"@article{{{key},\n{body}\n}}"
    return "\n\n".join(seen.values()) + ("\n" if seen else "")


def render(items: Sequence[Selected], fmt: str) -> str:
    if fmt == "md":
        return to_markdown(items)
    if fmt == "jsonl":
        return to_jsonl(items)
    if fmt == "bibtex":
        return to_bibtex(items)
    raise EvtuiError(f"unknown export format {fmt!r}; choose one of: {', '.join(FORMATS)}")


def write_export(library: Library, out: Path, fmt: str = "md") -> int:
    """Write the basket to exactly `out` (atomically: a failed write leaves any old file intact)."""
    items = Basket(library).items()
    if not items:
        raise EvtuiError("the selection is empty: select sentences first (space in the app)")
    text = render(items, fmt)
    out = out.expanduser()
    try:  # is_dir() itself raises for a name the OS refuses (too long)
        if out.is_dir():
            raise EvtuiError(f"{out} is a folder; give a file name")
        if not out.parent.exists():
            raise EvtuiError(f"folder {out.parent} does not exist")
        if not out.parent.is_dir():
            raise EvtuiError(f"{out.parent} is a file, not a folder")
    except OSError as exc:
        raise EvtuiError(f"cannot write {out}: {exc.strerror or exc}") from exc
    # The temporary file sits beside the target (so the rename is atomic); a symlink at `out` is replaced by the
    # new file, never followed, so nothing outside the chosen path is written.
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=".evtui-export.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, out)
    except OSError as exc:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise EvtuiError(f"cannot write {out}: {exc.strerror or exc}") from exc
    return len(items)
