"""Our SciFact paper ids and sentence positions <-> the SciFact corpus's doc_ids and abstract indices."""

from __future__ import annotations

from evtui.errors import EvtuiError

PREFIX = "scifact:"


def doc_id_of(paper_id: str) -> str:
    """The SciFact corpus doc_id of our paper id (`scifact:4983` -> `4983`)."""
    if not paper_id.startswith(PREFIX) or len(paper_id) == len(PREFIX):
        raise EvtuiError(f"{paper_id!r} is not a SciFact paper id (scifact:<doc_id>)")
    return paper_id[len(PREFIX):]


def to_scifact_index(paper_id: str, position: int, *, titled: bool = True) -> int | None:
    """The 0-based SciFact abstract sentence index of the sentence stored at `position` (None for the title).

    The corpus-jsonl loader stores the title at position 0 and abstract sentence i at position i + 1; it stores
    no headings (a structured abstract's "METHODS:" stays inside its sentence). It would skip an empty sentence
    and leave out an empty title (`titled=False`), but the SciFact corpus has neither: all 5,183 documents
    ingest to exactly 1 + len(abstract) sentences, text for text.
    """
    doc_id_of(paper_id)
    if position < 0:
        raise EvtuiError(f"{paper_id}: no sentence at position {position}")
    if not titled:
        return position
    return position - 1 if position > 0 else None
