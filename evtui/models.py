"""Domain objects shared by ingest, store, query and search.

Plain dataclasses: cheap to build in the ingest hot path (tens of thousands per second).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

SectionKind = Literal["title", "abstract", "introduction", "methods", "results", "discussion", "conclusion", "other"]
SECTION_KINDS: tuple[str, ...] = (
    "title", "abstract", "introduction", "methods", "results", "discussion", "conclusion", "other",
)

QueryMode = Literal["triplet", "claim", "hypothesis"]
QUERY_MODES: tuple[str, ...] = ("triplet", "claim", "hypothesis")
# The file formats ingest reads (evtui.ingest.FORMATS): here, so that `evtui`'s parser lists them for --format
# without importing the readers.
INGEST_FORMATS: tuple[str, ...] = ("jats", "bioc", "pubtator", "cord", "corpus-jsonl", "evidencebench", "text", "pdf",
                                   "bibtex", "ris", "csl-json", "zotero", "europepmc")
# The evidence rubric's levels (0-5; a score is 20 x level): what the judge assigns and every face names.
LEVELS: dict[int, str] = {
    0: "no relevance",
    1: "tangential",
    2: "peripheral",
    3: "substantial",
    4: "primary",
    5: "direct correspondence",
}


@dataclass(slots=True)
class ParsedSentence:
    """One sentence (or heading) of a paper, in reading order, as a loader produces it."""

    text: str
    section_title: str = ""
    section_kind: str = "other"
    is_heading: bool = False


@dataclass(slots=True)
class ParsedPaper:
    """A paper as a loader produces it, before it is stored.

    `id` keeps the source's own identifier (PMC123, PMID:123, scifact:4983, cord:abc, pmc_1474570, ...).
    """

    id: str
    title: str
    sentences: list[ParsedSentence]
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    journal: str | None = None
    doi: str | None = None
    pmid: str | None = None
    pmcid: str | None = None
    licence: str | None = None
    source_path: str = ""
    source_format: str = ""
    notes: list[str] = field(default_factory=list)  # what the ingest changed, for its report (a split sentence)
    # How the text was read, shown by `evtui papers`/`show` and the Library screen: pages, what was dropped
    # (references, running headers), "full_text": False for a metadata-only entry (BibTeX/RIS/Zotero, no PDF).
    info: dict[str, object] = field(default_factory=dict)


@dataclass(slots=True)
class Paper:
    id: str
    title: str
    authors: list[str]
    year: int | None
    journal: str | None
    doi: str | None
    pmid: str | None
    pmcid: str | None
    licence: str | None
    source_path: str
    source_format: str
    content_hash: str
    n_sentences: int = 0


@dataclass(slots=True)
class Sentence:
    id: str
    paper_id: str
    position: int
    section_title: str
    section_kind: str
    is_heading: bool
    text: str


def sentence_id(paper_id: str, position: int) -> str:
    """Stable across re-ingest of the same content: the paper's own id plus the sentence's position."""
    return f"{paper_id}:{position}"


@dataclass(slots=True)
class Aspect:
    """One facet of a query (triplet head/relation/tail, or a key concept of a claim/hypothesis).

    `terms` are the surface forms to match (the label first, then variants and relation-family words).
    """

    id: str
    label: str
    terms: list[str]
    role: str = "concept"  # head | relation | tail | concept

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "label": self.label, "terms": list(self.terms)}


@dataclass(slots=True)
class Span:
    """A match of one aspect inside a sentence, as Python string offsets [start, end)."""

    aspect: str
    start: int
    end: int

    def to_json(self) -> dict[str, object]:
        return {"aspect": self.aspect, "start": self.start, "end": self.end}


@dataclass(slots=True)
class ParsedQuery:
    text: str
    mode: str
    aspects: list[Aspect]
    notes: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Evidence:
    """One ranked search hit."""

    rank: int
    sentence: Sentence
    title: str
    score: float
    highlights: list[Span]

    def to_json(self) -> dict[str, object]:
        return {
            "rank": self.rank,
            "sentence_id": self.sentence.id,
            "paper_id": self.sentence.paper_id,
            "title": self.title,
            "section": self.sentence.section_title or self.sentence.section_kind,
            "section_kind": self.sentence.section_kind,
            "position": self.sentence.position,
            "text": self.sentence.text,
            "score": round(self.score, 6),
            "highlights": [h.to_json() for h in self.highlights],
        }
