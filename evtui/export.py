"""The selection basket and its export (Markdown with citations, JSON Lines, BibTeX).

The basket is persisted in DuckDB (`selections`), so what a researcher picks in the TUI survives a restart and
`evtui export` can write it from the shell. Each entry keeps the query, aspects and scores it was picked under. An
entry is a (sentence, query) item: a sentence that is evidence for two questions of a review is selected for each
of them apart, exported under each, and deselecting it for one leaves it selected for the other.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import sys
import tempfile
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

from evtui import __version__
from evtui.errors import EvtuiError
from evtui.ingest.refs import display_name
from evtui.ingest.refs import display_names as display_names  # an author list as the screens show it
from evtui.ingest.refs import is_organisation as is_organisation  # an organisation is braced whole in BibTeX
from evtui.library import Library
from evtui.models import LEVELS, Aspect, Evidence, Paper, ParsedQuery, Span
from evtui.outpaths import check_output
from evtui.render import json_text
from evtui.store import SELECTIONS_DDL as SELECTIONS_DDL  # the table's key: (sentence_id, query)

FORMATS = ("md", "jsonl", "bibtex")
FORMAT_NAMES = {"md": "Markdown", "jsonl": "JSON Lines", "bibtex": "BibTeX"}
# The file name's extension (lower-cased) -> the format it implies; any other extension implies none.
EXTENSIONS = {".md": "md", ".markdown": "md", ".jsonl": "jsonl", ".bib": "bibtex"}
FORMAT_EXTENSIONS = {"md": ".md", "jsonl": ".jsonl", "bibtex": ".bib"}  # what a new file name gets
# The method of a sentence picked in the reader that no search ranked: it has no retrieval score.
READER_METHOD = "reader"


def format_of(out: Path | str) -> str | None:
    """The format `out`'s extension implies (refs.bib -> "bibtex"), None for any other extension."""
    return EXTENSIONS.get(Path(str(out)).suffix.lower())


def choose_format(out: Path | str, fmt: str | None) -> tuple[str, str | None]:
    """The format to write `out` in, and a one-line warning when it contradicts the extension.

    No format asked for: the extension decides (.md/.markdown, .jsonl, .bib), Markdown for any other. A format
    asked for is written as asked, with a warning when the extension implies another one (the CLI's --format and
    the app's format field follow the same rule)."""
    implied = format_of(out)
    if fmt is None:
        return implied or "md", None
    if implied is not None and implied != fmt:
        return fmt, (f"writing {FORMAT_NAMES.get(fmt, fmt)} to {Path(str(out)).name}, though its extension "
                     f"{Path(str(out)).suffix} means {FORMAT_NAMES[implied]}")
    return fmt, None


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
    verdict: dict[str, Any] | None = None  # the judge's latest verdict for this sentence under this query
    # What the library knows of the paper's kind, for the BibTeX entry type: the item type its reference manager
    # gave (paper_info "item_type", when ingest kept one) and the section kinds of its stored sentences.
    item_type: str | None = None
    sections: frozenset[str] = frozenset()
    key: str | None = None  # the paper's citation key in this library (bibtex_keys), set by Basket.items


# The newest ok verdict per (query, sentence), an LLM's before the local judge's (the cache: evtui/judge/cache.py).
_VERDICTS = """SELECT sentence_id, score, level, stance, confidence, rationale, judge, model FROM (
    SELECT *, row_number() OVER (PARTITION BY sentence_id ORDER BY (judge = 'llm') DESC, updated_at DESC) AS n
    FROM judgments WHERE status = 'ok' AND query = ? AND query_mode = ? AND sentence_id IN (SELECT unnest(?)))
    WHERE n = 1"""


def verdicts(con: Any, query: str, mode: str, sentence_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """sentence id -> {score, level, stance, confidence, rationale, judge, model} from the verdict cache."""
    try:
        rows = con.execute(_VERDICTS, [" ".join(query.split()), mode, list(sentence_ids)]).fetchall()
    except Exception:  # noqa: BLE001 - no verdict table yet (nothing was ever judged)
        return {}
    keys = ("score", "level", "stance", "confidence", "rationale", "judge", "model")
    return {r[0]: dict(zip(keys, r[1:], strict=True)) for r in rows}


class Basket:
    def __init__(self, library: Library) -> None:
        self.library = library
        if self.con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'selections'"
                            ).fetchone()[0] == 0:  # a read-only library that never had a selection has no table
            if getattr(library.store, "read_only", False):
                raise EvtuiError("the selection is empty: select sentences first (space in the app)")
            self.con.execute(SELECTIONS_DDL)

    @property
    def con(self) -> Any:
        """The library's connection now (a shared library reopens it around its writes)."""
        return self.library.store.con

    def ids(self) -> list[str]:
        """The selected sentence ids in basket order, one per item (a sentence selected for two questions twice)."""
        return [r[0] for r in self.con.execute("SELECT sentence_id FROM selections ORDER BY position").fetchall()]

    def keys(self) -> list[tuple[str, str]]:
        """The items, (sentence id, query), in basket order."""
        return [(r[0], r[1]) for r in self.con.execute(
            "SELECT sentence_id, query FROM selections ORDER BY position").fetchall()]

    def selected_for(self, query: str) -> set[str]:
        """The sentence ids selected for `query` (a ParsedQuery's text, as `add` stores it)."""
        return {r[0] for r in self.con.execute(
            "SELECT sentence_id FROM selections WHERE query = ?", [query]).fetchall()}

    def add(self, evidence: Evidence, query: ParsedQuery, method: str) -> None:
        self.add_row(self.row(evidence, query, method))

    @staticmethod
    def row(evidence: Evidence, query: ParsedQuery, method: str) -> dict[str, Any]:
        """What the selection stores of one hit, as plain JSON values (a CLI beside the app hands these to it)."""
        return {"sentence_id": evidence.sentence.id, "query": query.text, "mode": query.mode,
                "aspects": json.dumps([a.to_json() for a in query.aspects]),
                "highlights": json.dumps([h.to_json() for h in evidence.highlights]), "method": method,
                "score": evidence.score}

    def add_row(self, row: dict[str, Any]) -> None:
        """Select the row's sentence for the row's query (again: it moves to the end with the new values); its
        items under other queries stay as they are."""
        sid, query = str(row["sentence_id"]), str(row["query"])
        nxt = self.con.execute("SELECT coalesce(max(position), -1) + 1 FROM selections").fetchone()[0]
        # Not INSERT OR REPLACE: a library still keyed on sentence_id alone (read before its first write) would
        # replace the sentence's item for another question; there the second question's row is refused instead.
        self.con.execute("DELETE FROM selections WHERE sentence_id = ? AND query = ?", [sid, query])
        self.con.execute(
            "INSERT INTO selections (sentence_id, position, query, mode, aspects, highlights, method, score)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [sid, nxt, query, str(row["mode"]), str(row["aspects"]), str(row["highlights"]), str(row["method"]),
             float(row["score"])],
        )

    def remove(self, sentence_id: str, query: str | None = None) -> None:
        """Deselect the sentence for `query`; for every query it is selected for when `query` is None."""
        if query is None:
            self.con.execute("DELETE FROM selections WHERE sentence_id = ?", [sentence_id])
        else:
            self.con.execute("DELETE FROM selections WHERE sentence_id = ? AND query = ?", [sentence_id, query])

    def toggle(self, evidence: Evidence, query: ParsedQuery, method: str) -> bool:
        """Add or remove the sentence for this query (its items under other queries are left alone); returns True
        when the sentence is now selected for it."""
        if self.con.execute("SELECT count(*) FROM selections WHERE sentence_id = ? AND query = ?",
                            [evidence.sentence.id, query.text]).fetchone()[0]:
            self.remove(evidence.sentence.id, query.text)
            return False
        self.add(evidence, query, method)
        return True

    def move(self, sentence_id: str, delta: int, query: str | None = None) -> None:
        """Move the item (sentence, query) `delta` places; without `query`, the sentence's first item."""
        keys = self.keys()
        at = [i for i, (sid, q) in enumerate(keys) if sid == sentence_id and (query is None or q == query)]
        if not at:
            return
        i = at[0]
        j = max(0, min(len(keys) - 1, i + delta))
        keys[i], keys[j] = keys[j], keys[i]
        for pos, (sid, q) in enumerate(keys):
            self.con.execute("UPDATE selections SET position = ? WHERE sentence_id = ? AND query = ?", [pos, sid, q])

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
                # a removed paper's sentence: its spans would light the placeholder ("li**brary**")
                highlights=[Span(h["aspect"], h["start"], h["end"]) for h in json.loads(highlights or "[]")]
                if text is not None else [],
                method=method, score=score or 0.0, text=text or "(sentence no longer in the library)",
                section=section or "", paper=self.library.store.paper(paper_id) if paper_id else None,
            ))
        pids = sorted({it.paper.id for it in out if it.paper is not None})
        if pids:
            keys = bibtex_keys([it.paper for it in out if it.paper is not None], self._key_bases(out))
            infos = self.library.store.paper_infos(pids)
            kinds = dict(self.con.execute(
                "SELECT paper_id, list(DISTINCT section_kind) FROM sentences WHERE paper_id IN (SELECT unnest(?))"
                " GROUP BY paper_id", [pids]).fetchall())
            for it in out:
                if it.paper is not None:
                    typ = infos.get(it.paper.id, {}).get("item_type")
                    it.item_type = str(typ) if typ else None
                    it.sections = frozenset(k for k in kinds.get(it.paper.id) or [] if k)
                    it.key = keys[it.paper.id]
        by_query: dict[tuple[str, str], list[Selected]] = {}
        for it in out:
            by_query.setdefault((it.query, it.mode), []).append(it)
        for (query, mode), group in by_query.items():
            found = verdicts(self.con, query, mode, [it.sentence_id for it in group])
            for it in group:
                it.verdict = found.get(it.sentence_id)
        return out

    def _key_bases(self, items: Sequence[Selected]) -> dict[str, str]:
        """paper id -> base key of every paper of the library that may share a base key with the selected ones:
        those of the same years (a base key holds its year), so a big library is not read whole."""
        years = sorted({-1 if it.paper.year is None else it.paper.year for it in items if it.paper is not None})
        rows = self.con.execute(
            "SELECT id, title, authors, year FROM papers WHERE coalesce(year, -1) IN (SELECT unnest(?))"
            " AND state IS DISTINCT FROM 'deleting'", [years]).fetchall()
        return {pid: _base_key(title or "", authors or [], year) for pid, title, authors, year in rows}


# -- rendering ---------------------------------------------------------------------------------------
# Paper and LLM text is data, never markup of the file it lands in: in Markdown, raw HTML (</details>,
# <script>, <img onerror>), links ([x](javascript:...)), images and emphasis are escaped; in BibTeX, TeX
# commands (\input, \write18) and specials. Control characters and line breaks become spaces in both.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>&~|#])")  # `#`: also a heading's closing sequence ("C #")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def md(text: object) -> str:
    """`text` as literal Markdown text on one line."""
    return _MD_SPECIAL.sub(r"\\\1", _CONTROL.sub(" ", str(text)))


# What makes a line's start a block of its own (a heading, list item, thematic break, indented code) though it is
# text: "# of patients", "- 5 mg", "1. Introduction", "+/-", "---".
_LINE_START = re.compile(r"^(\d{1,9})([.)])|^([-+=])")


def _line_safe(escaped: str) -> str:
    """Already escaped Markdown text that starts a line, its leading list / setext marker escaped too (leading
    spaces dropped: four of them would make it code)."""
    return _LINE_START.sub(lambda m: f"{m.group(1)}\\{m.group(2)}" if m.group(1) else f"\\{m.group(3)}",
                           escaped.lstrip())


def _code(text: object) -> str:
    return "`" + _CONTROL.sub(" ", str(text)).replace("`", "'") + "`"


def _url_part(text: str) -> str:
    return quote(_CONTROL.sub("", text), safe="/")


_TEX_SPECIAL = {"\\": r"\textbackslash{}", "{": "(", "}": ")", "%": r"\%", "#": r"\#", "&": r"\&", "$": r"\$",
                "_": r"\_", "^": r"\^{}", "~": r"\~{}"}
_TEX_RE = re.compile(r"[\\{}%#&$_^~]")


def tex(value: object) -> str:
    """A BibTeX field value as literal text: no TeX command (\\input, \\write18) and no brace survives."""
    return _TEX_RE.sub(lambda m: _TEX_SPECIAL[m.group(0)], " ".join(_CONTROL.sub(" ", str(value)).split()))


def corpus_source(p: Paper) -> str | None:
    """Where a corpus abstract (SciFact, PubTator: no authors, no year) is from, as plain text ("SciFact corpus,
    doc 15648443"); None for a paper with authors or a year."""
    if p.authors or p.year:
        return None
    prefix, _, num = p.id.partition(":")
    if prefix.lower() == "scifact" and num:
        return f"SciFact corpus, doc {num}"
    if p.pmid or prefix.upper() == "PMID":
        return f"PubMed abstract {p.pmid or num}"
    return f"{Path(p.source_path).name or 'corpus'}, doc {p.id}"


def _sentence(text: str) -> str:
    """`text` as Markdown ending in one full stop: "J. Hypertens." and "Does it work?" get none added."""
    text = " ".join(text.split())
    return md(text) + ("" if text.endswith((".", "?", "!")) else ".")


# BibTeX's "and others" (a list cut short): the citation says "et al." instead of naming an author "others".
_OTHERS = frozenset({"others", "et al", "et al."})


def citation(p: Paper) -> str:
    source = corpus_source(p)
    if source is not None:  # a corpus abstract (SciFact, PubTator): say where it is from, not "Unknown"
        where = md(source)
        cited = f"{where}. {_sentence(p.title)}" if p.title.strip() else f"{where}."
        if p.pmid:
            cited += f" [PMID {md(p.pmid)}](https://pubmed.ncbi.nlm.nih.gov/{_url_part(p.pmid)}/)"
        return cited
    names = [a for a in p.authors if a.strip()]
    cut = bool(names) and names[-1].strip().lower() in _OTHERS
    names = [a for a in names if a.strip().lower() not in _OTHERS]
    who = (", ".join(md(display_name(a)) for a in names[:3]) + (" et al." if len(names) > 3 or cut else "") if names
           else "Unknown authors")
    parts = [f"{who} ({p.year or 'n.d.'})."]
    if p.title.strip():
        parts.append(_sentence(p.title))
    journal = " ".join((p.journal or "").split())
    if journal:  # an abbreviation's own full stop ends it ("*J. Hypertens.*", not "*J. Hypertens.*.")
        parts.append(f"*{md(journal)}*" + ("" if journal.endswith((".", "?", "!")) else "."))
    links = []
    if p.doi:
        links.append(f"[doi:{md(p.doi)}](https://doi.org/{_url_part(p.doi)})")
    if p.pmid:
        links.append(f"[PMID {md(p.pmid)}](https://pubmed.ncbi.nlm.nih.gov/{_url_part(p.pmid)}/)")
    if p.pmcid:
        links.append(f"[{md(p.pmcid)}](https://www.ncbi.nlm.nih.gov/pmc/articles/{_url_part(p.pmcid)}/)")
    if links:
        parts.append(" · ".join(links))
    return " ".join(parts)


_GLYPHS = {"supports": "▲", "refutes": "▼", "neutral": "●"}


def verdict_summary(group: Sequence[Selected]) -> str:
    """"▲ 2 support · ▼ 1 refute · ● 0 neutral · 1 not judged · 3 papers" for one query's sentences."""
    counts = {"supports": 0, "refutes": 0, "neutral": 0}
    for it in group:
        if it.verdict is not None:
            counts[it.verdict["stance"]] = counts.get(it.verdict["stance"], 0) + 1
    unjudged = sum(1 for it in group if it.verdict is None)
    papers = len({it.paper.id for it in group if it.paper is not None})
    out = (f"▲ {counts['supports']} support · ▼ {counts['refutes']} refute · ● {counts['neutral']} neutral"
           f"{f' · {unjudged} not judged' if unjudged else ''} · {papers} paper{'s' if papers != 1 else ''}")
    return out


def verdict_line(v: dict[str, Any]) -> str:
    """One verdict on one line, its level named as the judge's rubric names it (evtui.models.LEVELS)."""
    level = LEVELS.get(int(v["level"]), "")
    line = (f"{_GLYPHS.get(v['stance'], '?')} {v['stance']} · {v['score']}/100 (level {v['level']}"
            f"{f' {level}' if level else ''}) · confidence {v['confidence']}/10 · {v['judge']} judge ({v['model']})")
    return md(line) + (f" — {md(v['rationale'])}" if v.get("rationale") else "")


def _marked(text: str, spans: Sequence[Span], aspects: Sequence[Aspect], *, tags: bool = True) -> str:
    """The sentence with each aspect match in bold and tagged with its aspect id: **aspirin**<sub>head</sub>
    (`tags=False`: bold only, for plain notes)."""
    label = {a.id: a.id for a in aspects}
    out, last = [], 0
    for s in sorted(spans, key=lambda s: (s.start, -s.end)):
        if s.start < last or s.end > len(text):
            continue
        out.append(md(text[last:s.start]))
        out.append(f"**{md(text[s.start:s.end])}**" + (f"<sub>{md(label.get(s.aspect, s.aspect))}</sub>"
                                                       if tags else ""))
        last = s.end
    out.append(md(text[last:]))
    return _line_safe("".join(out))


def by_question(items: Sequence[Selected]) -> dict[str, list[Selected]]:
    """The items by question, in the order each question was first selected, each question's in selection order:
    how the Markdown export lists them, and the app's Export screen too."""
    out: dict[str, list[Selected]] = {}
    for it in items:
        out.setdefault(it.query, []).append(it)
    return out


def to_markdown(items: Sequence[Selected], *, now: datetime | None = None, plain: bool = False,
                references: bool = True) -> str:
    """The evidence report; `plain`: notes without the aspect tags (<sub>head</sub>) after each match;
    `references`: end with each paper's citation key and citation (the keys of the BibTeX export)."""
    now = now or datetime.now(timezone.utc)
    lines = ["# Evidence", ""]
    by_query = by_question(items)
    methods = sorted({it.method for it in items})
    keys = _item_keys(items)  # the BibTeX export's keys, on each sentence and in the references
    for query, group in by_query.items():
        first = group[0]
        lines += [f"## {md(query)}", "", f"*{md(first.mode)}* · aspects: " + "; ".join(
            f"{_code(a.id)} {md(a.label)}" for a in first.aspects), "", f"Verdicts: {verdict_summary(group)}", ""]
        for n, it in enumerate(group, 1):
            covered = sorted({h.aspect for h in it.highlights})
            lines.append(f"### {n}. {md(it.paper.title if it.paper else it.sentence_id)}")
            lines.append("")
            lines.append("> " + _marked(it.text, it.highlights, it.aspects, tags=not plain))
            lines.append("")
            if it.paper:  # its key beside it: a draft cites this sentence without looking the paper up below
                lines.append(f"- Citation: {_code(keys[it.paper.id])} {citation(it.paper)}")
            lines.append(f"- Section: {md(it.section) or 'unknown'} · sentence {_code(it.sentence_id)}")
            lines.append(f"- Aspects covered: {md(', '.join(covered)) if covered else 'none'} "
                         f"({len(covered)}/{len(it.aspects)})")
            lines.append("- Retrieval score: none (picked while reading the paper, not ranked by a search)"
                         if it.method == READER_METHOD else f"- Retrieval score: {it.score:.3f} ({md(it.method)})")
            lines.append(f"- Verdict: {verdict_line(it.verdict) if it.verdict else 'not judged'}")
            lines.append("")
    # One entry per paper under the citation key the BibTeX export gives it, so notes and .bib line up.
    papers: dict[str, Paper] = {}
    for it in items:
        if it.paper is not None:
            papers.setdefault(it.paper.id, it.paper)
    if papers and references:
        lines += ["## References", "", "Citation keys as in this selection's BibTeX export:", ""]
        lines += [f"- {_code(keys[pid])} {citation(p)}" for pid, p in sorted(papers.items(), key=lambda kv: keys[kv[0]])]
        lines.append("")
    judges = sorted({f"{it.verdict['judge']} ({it.verdict['model']})" for it in items if it.verdict})
    if any(it.verdict and it.verdict["judge"] == "local" for it in items):
        judges_note = (" · the local judge is evtui's offline rubric (ranker features; stance from its trained "
                       "verifier), not an LLM")
    else:
        judges_note = ""
    lines += ["---", f"Exported by evtui {__version__} on {now:%Y-%m-%d %H:%M} UTC · "
                     f"method: {md(', '.join(methods)) or 'n/a'} · judge: {md(', '.join(judges)) or 'none'}{judges_note}",
              ""]
    return "\n".join(lines)


def to_jsonl(items: Sequence[Selected]) -> str:
    keys = _item_keys(items)  # each paper's BibTeX key, to join the rows to a .bib of the same library
    rows = []
    for it in items:
        p = it.paper
        rows.append(json_text({  # as JSON, a C1 or bidi control escaped: `--out -` may be a terminal
            "sentence_id": it.sentence_id, "text": it.text, "section": it.section, "query": it.query,
            "mode": it.mode, "aspects": [a.to_json() for a in it.aspects],
            "highlights": [h.to_json() for h in it.highlights], "method": it.method, "score": it.score,
            "verdict": it.verdict,
            "paper": None if p is None else {"id": p.id, "title": p.title, "authors": p.authors, "year": p.year,
                                              "journal": p.journal, "doi": p.doi, "pmid": p.pmid, "pmcid": p.pmcid,
                                              "citation_key": keys.get(p.id)},
        }))
    return "\n".join(rows) + ("\n" if rows else "")


_ASCII = str.maketrans({"ß": "ss", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "ø": "o", "Ø": "O", "ł": "l",
                        "Ł": "L", "đ": "d", "Đ": "D", "ð": "d", "þ": "th", "Þ": "Th", "ı": "i"})
# Words a citation key skips to reach the title's first significant one ("The effect of ..." -> "effect").
_KEY_STOPWORDS = frozenset(
    "a an the of on in for and or to with by at from as is are was were be its into via versus vs not no do does "
    "how what why when which who whether".split())
_NAME_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})


def _key_part(text: str) -> str:
    """`text` in [a-z0-9] only: accents dropped (Günter -> gunter), anything else left out."""
    folded = unicodedata.normalize("NFKD", text.translate(_ASCII)).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]", "", folded.lower())


def _surname(author: str) -> str:
    """The family name of "Given Family" ("Florian Uhl" -> "uhl") or "Family, Given"; "Jr."/"III" skipped; an
    organisation's whole name ("World Health Organization" -> "worldhealthorganization", not "organization")."""
    if is_organisation(author):
        return "".join(w for w in (_key_part(t) for t in author.split()) if w and w not in _KEY_STOPWORDS)
    if "," in author:
        return _key_part(author.split(",", 1)[0])
    words = [_key_part(w) for w in author.split()]
    words = [w for w in words if w]
    while len(words) > 1 and words[-1] in _NAME_SUFFIXES:
        words.pop()
    return words[-1] if words else ""


def base_key(p: Paper) -> str:
    """surname + year + the title's first significant word ("uhl2019counting"); without an author, as Zotero
    keys it, the title's first significant word + year ("longterm2019": "anonlongterm" told nothing); "anon" +
    year when there is no title word either."""
    return _base_key(p.title, p.authors, p.year)


def _base_key(title: str, authors: Sequence[str], year: int | None) -> str:
    surname = _surname(authors[0]) if authors else ""
    word = next((w for w in (_key_part(t) for t in title.split()) if w and w not in _KEY_STOPWORDS), "")
    if not surname:
        return (word or "anon") + (str(year) if year else "")
    return surname + (str(year) if year else "") + word


def _id_letters(paper_id: str) -> str:
    """Letters a-z drawn from a hash of the paper's id: its clash suffix never depends on any other paper."""
    return "".join(chr(ord("a") + b % 26) for b in hashlib.sha256(paper_id.encode("utf-8")).digest()[:16])


def _shared_prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def bibtex_keys(papers: Sequence[Paper], library: dict[str, str] | None = None) -> dict[str, str]:
    """paper id -> its citation key, only [a-z0-9] characters.

    A key must name the same paper in every export of a library (a draft's \\cite{...} outlives the selection),
    so clashes are settled over `library` (paper id -> base key of the library's papers that may share one;
    without it, over `papers` alone), never by which papers happen to be selected. A base key no other paper
    shares is the key ("uhl2019counting"). Papers sharing one each add the fewest letters of a hash of their own
    id that tell them apart ("lee2020aspirinq", "lee2020aspirinf"): a new paper with the same base changes the
    others' keys at most by making them disappear (an undefined citation LaTeX reports), never by handing one
    paper's key to another, as "a, b in some order" would when the order changes."""
    bases = dict(library or {})
    bases.update({p.id: base_key(p) for p in papers})
    groups: dict[str, list[str]] = {}
    for pid, base in bases.items():
        groups.setdefault(base, []).append(pid)
    keys: dict[str, str] = {}
    for pid in dict.fromkeys(p.id for p in papers):
        base = bases[pid]
        if len(groups[base]) == 1:
            keys[pid] = base
            continue
        mine = _id_letters(pid)
        # Prefixes that differ from every other member's are unique in the group, whatever their lengths.
        n = 1 + max(_shared_prefix(mine, _id_letters(o)) for o in groups[base] if o != pid)
        while base + mine[:n] in groups and n < len(mine):  # never another paper's own key ("lee2020aspirina")
            n += 1
        keys[pid] = base + mine[:n]
    # Two bases one of which extends the other ("lee2020a" + letters) could still meet: the later one takes its id.
    used: set[str] = set()
    for pid, key in keys.items():
        if key in used:
            keys[pid] = key = key + _key_part(pid)
        used.add(key)
    return keys


def _item_keys(items: Sequence[Selected]) -> dict[str, str]:
    """paper id -> citation key of the items' papers: the library's keys Basket.items set, else settled among
    these papers alone (items built by hand)."""
    papers = {it.paper.id: it for it in items if it.paper is not None}
    if papers and all(it.key for it in papers.values()):
        return {pid: str(it.key) for pid, it in papers.items()}
    return bibtex_keys([it.paper for it in papers.values() if it.paper is not None])


# Formats that hold journal articles only (PMC, PubMed, SciFact/Check-COVID, CORD-19, EvidenceBench).
_ARTICLE_FORMATS = frozenset({"jats", "bioc", "pubtator", "cord", "corpus-jsonl", "evidencebench"})
_REFERENCE_FORMATS = frozenset({"bibtex", "ris", "csl-json", "zotero"})
# A text or PDF with these sections is a research paper, not a note.
_PAPER_SECTIONS = frozenset({"abstract", "introduction", "methods", "results", "discussion", "conclusion"})
# Preprint servers' DOIs (bioRxiv/medRxiv dated or numeric; CSHL journals' own 10.1101/gad... are not), and names.
_PREPRINT_DOI = re.compile(r"10\.(1101/(\d{4}\.\d\d\.\d\d\.)?\d{6,}|48550/arxiv|21203/rs\.|20944/preprints|"
                           r"3121[0-9]/osf|3122[0-9]/osf|3123[0-9]/osf|2139/ssrn|26434/chemrxiv)", re.IGNORECASE)
_PREPRINT_VENUE = re.compile(r"\b((bio|med|chem|psy|soc|eng|edu)?rxiv|research square|ssrn|preprints\.org)\b",
                             re.IGNORECASE)
# A reference manager's item type (BibTeX entry type, Zotero itemType, RIS TY, CSL type) -> the BibTeX entry type.
_ENTRY_TYPES = {
    **dict.fromkeys(("article", "journalarticle", "jour", "ejour", "article-journal", "magazinearticle",
                     "article-magazine", "newspaperarticle", "article-newspaper", "mgzn", "news"), "article"),
    **dict.fromkeys(("incollection", "inbook", "booksection", "chap", "chapter", "entry", "entry-encyclopedia",
                     "encyclopediaarticle", "dictionaryentry", "entry-dictionary"), "incollection"),
    **dict.fromkeys(("inproceedings", "conference", "conferencepaper", "conf", "cpaper", "paper-conference"),
                    "inproceedings"),
    **dict.fromkeys(("book", "edbook", "ebook", "mvbook"), "book"),
    **dict.fromkeys(("phdthesis", "thesis", "thes", "dissertation"), "phdthesis"),
    "mastersthesis": "mastersthesis",
    **dict.fromkeys(("techreport", "report", "rprt"), "techreport"),
    "proceedings": "proceedings",
}
# Where each entry type keeps the paper's venue (the library stores one venue string, "journal").
_VENUE_FIELD = {"article": "journal", "incollection": "booktitle", "inproceedings": "booktitle",
                "techreport": "institution", "phdthesis": "school", "mastersthesis": "school", "book": "publisher",
                "proceedings": "publisher", "misc": "howpublished"}


def is_preprint(p: Paper) -> bool:
    """A preprint by its DOI's registrant (bioRxiv, medRxiv, arXiv, Research Square, SSRN, OSF) or venue name."""
    return bool((p.doi and _PREPRINT_DOI.match(p.doi.strip())) or (p.journal and _PREPRINT_VENUE.search(p.journal)))


def entry_type(p: Paper, item_type: str | None = None, sections: frozenset[str] = frozenset()) -> str:
    """The BibTeX entry type: the stored item type when ingest kept one, else @article only when something says the
    paper is a journal article (a journal, an article corpus, a PubMed/PMC id, a research paper's sections), and
    @misc for a preprint or a plain note."""
    if item_type:
        mapped = _ENTRY_TYPES.get(item_type.strip().lower().replace("_", "-"))
        if mapped is not None:
            return mapped
        return "misc"
    if is_preprint(p):
        return "misc"
    if p.journal or p.source_format in _ARTICLE_FORMATS or p.pmid or p.pmcid:
        return "article"
    # A reference manager's entry without a journal gets its abstract as a section: that says nothing of its kind.
    if p.source_format in _REFERENCE_FORMATS:
        return "misc"
    return "article" if sections & _PAPER_SECTIONS else "misc"


def bib_verbatim(value: object) -> str:
    """An identifier field (doi, pmid, pmcid) as it is: biblatex, Zotero and JabRef read it verbatim, so a TeX
    escape (10.1000/abc\\_123) would become part of the DOI. Only what would break the entry itself (braces,
    backslashes, spaces, control characters) is percent-encoded, as in the DOI's URL."""
    return re.sub(r"[{}\\\s\x00-\x1f\x7f]", lambda m: quote(m.group(0), safe=""), str(value).strip())


# A word BibTeX styles would lower-case that must keep its capitals: an acronym or mixed case (LDL, mRNA, COVID-19,
# CAPP2, Ki-67), a capital with a digit, or one capital letter that is not the article "A" (vitamin D, T cells).
_WORD = re.compile(r"(?<![\\\w])[^\W_](?:[\w'-]*[^\W_])?")


def _protect(word: str) -> bool:
    if len(word) == 1:
        return word.isupper() and word != "A"
    if word[0].isupper() and word[1] == "-":  # a letter prefix keeps its capital: N-acyl, T-cell, C-reactive
        return True
    return any(c.isupper() for c in word[1:]) or (word[0].isupper() and any(c.isdigit() for c in word))


def bib_title(title: str) -> str:
    """A title as a BibTeX field value: literal text (tex) whose acronyms and mixed-case words are braced so styles
    that lower-case titles keep them ("{LDL}", "{mRNA}"). In a sentence-case title (its significant words after
    the first mostly lower-case) a capitalised word is a name, braced too ("in {Alzheimer}'s disease",
    "{Chromobacterium} aquaticum"); a Title Case title says nothing of its names, so only its acronyms are."""
    text = tex(title)
    words = [m.group(0) for m in _WORD.finditer(text)]
    plain = [w for w in words[1:] if w[0].isalpha() and w.lower() not in _KEY_STOPWORDS and not _protect(w)]
    capitalised = sum(w[0].isupper() for w in plain)
    names = len(plain) >= 3 and capitalised * 2 < len(plain)
    first = True

    def brace(m: re.Match[str]) -> str:
        nonlocal first
        word, was_first, first = m.group(0), first, False
        if _protect(word) or (names and not was_first and word[0].isupper()):
            return "{" + word + "}"
        return word

    return _WORD.sub(brace, text)


def _suffix_first(name: str) -> str:
    """"Given Family Jr." as BibTeX's "Family, Jr., Given": in the "Given Family" form BibTeX takes the last word
    for the family name, so "John Smith Jr." became Mr "Jr." (ingest stores "Smith, Jr., John" that way). A
    particle stays with the family name ("Anna van der Berg III" -> "van der Berg, III, Anna")."""
    words = name.split()
    if ("," in name or len(words) < 3 or not words[-1][:1].isupper()
            or words[-1].strip(".").lower() not in _NAME_SUFFIXES):
        return name
    suffix, rest = words[-1], words[:-1]
    start = next((i for i in range(1, len(rest) - 1) if rest[i][:1].islower()), len(rest) - 1)
    return f"{' '.join(rest[start:])}, {suffix}, {' '.join(rest[:start])}"


def bib_author(name: str) -> str:
    return "{" + tex(name) + "}" if is_organisation(name) else tex(_suffix_first(name))


def to_bibtex(items: Sequence[Selected]) -> str:
    papers: dict[str, Selected] = {}
    for it in items:
        if it.paper is not None:
            papers.setdefault(it.paper.id, it)
    keys = _item_keys(items)
    entries = []
    for it in papers.values():
        p = it.paper
        assert p is not None
        typ = entry_type(p, it.item_type, it.sections)
        # A corpus abstract has only a title: the note says where it is from (its corpus and doc, or PubMed id).
        note = corpus_source(p) or ("Preprint" if typ == "misc" and is_preprint(p) else None)
        fields = {"title": bib_title(p.title) if p.title else "",
                  "author": " and ".join(bib_author(a) for a in p.authors if a.strip()),
                  "year": tex(p.year) if p.year else "", _VENUE_FIELD.get(typ, "note"): tex(p.journal or ""),
                  "doi": bib_verbatim(p.doi or ""), "pmid": bib_verbatim(p.pmid or ""),
                  "pmcid": bib_verbatim(p.pmcid or "")}
        fields["note"] = " · ".join(x for x in (fields.get("note"), tex(note) if note else "") if x)
        body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields.items() if v)
        entries.append(f"@{typ}{{{keys[p.id]},\n{body}\n}}")
    return "\n\n".join(entries) + ("\n" if entries else "")


def render(items: Sequence[Selected], fmt: str, *, plain: bool = False) -> str:
    if fmt == "md":
        return to_markdown(items, plain=plain)
    if fmt == "jsonl":
        return to_jsonl(items)
    if fmt == "bibtex":
        return to_bibtex(items)
    raise EvtuiError(f"unknown export format {fmt!r}; choose one of: {', '.join(FORMATS)}")


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_text_file(out: Path, text: str) -> None:
    """Write `text` to exactly `out`, atomically (a failed write leaves any old file intact), refusing folders,
    devices and FIFOs, keeping a replaced file's mode: every file evtui writes for the user goes through here."""
    out = out.expanduser()
    try:  # is_dir() itself raises for a name the OS refuses (too long)
        if out.is_dir():
            raise EvtuiError(f"{out} is a folder; give a file name")
        if not out.parent.exists():
            raise EvtuiError(f"folder {out.parent} does not exist")
        if not out.parent.is_dir():
            raise EvtuiError(f"{out.parent} is a file, not a folder")
        st = out.lstat() if out.is_symlink() or out.exists() else None
    except OSError as exc:
        raise EvtuiError(f"cannot write {out}: {exc.strerror or exc}") from exc
    # A device or a FIFO is never replaced by a regular file (as root, --out /dev/null would have been).
    if st is not None and not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
        raise EvtuiError(f"{out} is not a regular file (a device, FIFO or socket): give a file name")
    # A replaced file keeps its permissions; a new one gets the usual ones (0666 less the umask), not mkstemp's 0600.
    mode = stat.S_IMODE(st.st_mode) if st is not None and stat.S_ISREG(st.st_mode) else 0o666 & ~_umask()
    # The temporary file sits beside the target (so the rename is atomic); a symlink at `out` is replaced by the
    # new file, never followed, so nothing outside the chosen path is written.
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=".evtui-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            os.fchmod(fh.fileno(), mode)
        os.replace(tmp, out)
    except OSError as exc:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise EvtuiError(f"cannot write {out}: {exc.strerror or exc}") from exc


STDOUT = "-"  # the --out that means standard output


# The Markdown footer's "on 2026-01-31 12:00 UTC": the one part of an export that changes when nothing else did.
_EXPORTED_ON = re.compile(r"(\n---\nExported by evtui \S+ on )\d{4}-\d\d-\d\d \d\d:\d\d( UTC)")


def holds_export(out: Path, text: str) -> bool:
    """Does the regular file `out` already hold the export `text`, but for the minute its Markdown footer says it
    was written? A re-export of an unchanged selection then leaves the file as it was, byte for byte and with its
    modification time, so notes kept in git (or a Makefile built on them) see no change where there is none."""
    try:
        st = out.lstat()
        if not stat.S_ISREG(st.st_mode) or st.st_size > 4 * len(text) + 4096:  # a symlink is replaced, not read
            return False
        old = out.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return old == text or _EXPORTED_ON.sub(r"\1\2", old) == _EXPORTED_ON.sub(r"\1\2", text)


def write_export(library: Library, out: Path, fmt: str = "md", *, plain: bool = False) -> int:
    """Write the basket to exactly `out` (atomically: a failed write leaves any old file intact), or to standard
    output for `-`; `plain`: Markdown notes without the aspect tags."""
    return export_selection(library, out, fmt, plain=plain)[0]


def export_selection(library: Library, out: Path, fmt: str = "md", *, plain: bool = False,
                     keep_same: bool = False) -> tuple[int, bool]:
    """write_export; `keep_same`: leave `out` as it was when it already holds this export (see holds_export).
    Returns (sentences, whether `out` was left as it was)."""
    if str(out) != STDOUT:  # the app's Export save and `export --out` alike: never over the library's own files
        check_output(out, library.config.home)
    items = Basket(library).items()
    if not items:
        raise EvtuiError("the selection is empty: select sentences first (space in the app)")
    if fmt == "bibtex" and all(it.paper is None for it in items):
        # An empty .bib would replace the researcher's earlier one and still say "wrote N sentence(s)".
        raise EvtuiError(f"no BibTeX entry to write: the paper of every selected sentence ({len(items)}) was removed "
                         "from the library (x on the Export screen takes them out of the selection)")
    text = render(items, fmt, plain=plain)
    if str(out) == STDOUT:  # `--out -`: the export on standard output (| pandoc), never a file named "-"
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            raise  # the CLI ends quietly when a reader closes the pipe early
        except OSError as exc:
            raise EvtuiError(f"cannot write to standard output: {exc.strerror or exc}") from exc
        return len(items), False
    if keep_same and holds_export(out.expanduser(), text):
        return len(items), True
    write_text_file(out, text)
    return len(items), False
