"""What an ingest reports: its progress while it runs, and its outcome (`evtui ingest --json` prints to_json())."""

from __future__ import annotations

from dataclasses import dataclass, field

from evtui.errors import IngestError


@dataclass
class IngestProgress:
    files_done: int = 0
    files_total: int = 0
    papers_seen: int = 0
    current: str = ""


@dataclass
class IngestReport:
    added: int = 0
    replaced: int = 0
    unchanged: int = 0
    sentences: int = 0
    files: int = 0
    seconds: float = 0.0
    errors: list[IngestError] = field(default_factory=list)
    by_format: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # papers stored with a change (a split sentence, a cut title)
    paper_vectors: int = 0  # new or replaced papers given their dense vector (only in a library that has them)
    same_paper: int = 0  # not added: the same paper (DOI, PMCID, PMID or PDF file) is stored under another id
    # those of `notes` that say a paper is already stored, or may be (the same title): the app shows them
    same_paper_notes: list[str] = field(default_factory=list)
    stored: list[str] = field(default_factory=list)  # ids of the papers added or replaced

    def to_json(self) -> dict[str, object]:
        return {
            "files": self.files,
            "papers_added": self.added,
            "papers_replaced": self.replaced,
            "papers_unchanged": self.unchanged,
            "papers_already_stored": self.same_paper,
            "sentences": self.sentences,
            "seconds": round(self.seconds, 3),
            "sentences_per_second": round(self.sentences / self.seconds, 1) if self.seconds > 0 else None,
            "formats": self.by_format,
            "errors": [{"path": e.path, "reason": e.reason} for e in self.errors],
            "notes": self.notes,
            "paper_vectors_embedded": self.paper_vectors,
        }
