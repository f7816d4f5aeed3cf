"""The full-text query as a small tree of plain values, which only the search backend compiles (evtui/index.py
turns it into Tantivy queries): the Searcher, the ranker and the judge build and combine queries without knowing
the engine.

Leaves come from the backend (`SearchBackend.phrase_query` for a word or phrase over the analysed text,
`SearchBackend.filter_query` for the filters); the combinators here join them: `Bool` (must / should / must-not
clauses), `DisMax` (the best part plus `tie` times the others) and `Boost`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Occur = Literal["must", "should", "must_not"]


@dataclass(frozen=True, slots=True)
class Phrase:
    """A word or a multi-word phrase over the analysed text. `fast`: see `SentenceIndex.phrase_query`."""

    words: tuple[str, ...]
    fast: bool = False


@dataclass(frozen=True, slots=True)
class Term:
    """An exact value of a stored field (a paper id, a section kind, the heading flag)."""

    field: str
    value: str | int


@dataclass(frozen=True, slots=True)
class TermSet:
    """Any of these exact values of a field."""

    field: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Range:
    """An integer field between two bounds, both inclusive; None leaves that side open."""

    field: str
    lo: int | None
    hi: int | None


@dataclass(frozen=True, slots=True)
class Bool:
    clauses: tuple[tuple[Occur, Node], ...]


@dataclass(frozen=True, slots=True)
class DisMax:
    parts: tuple[Node, ...]
    tie: float


@dataclass(frozen=True, slots=True)
class Boost:
    node: Node
    factor: float


Node = Phrase | Term | TermSet | Range | Bool | DisMax | Boost
Clause = tuple[Occur, Node]


def must(query: Node, filters: Sequence[Clause] = ()) -> Bool:
    """`query` restricted by filter clauses (as `SearchBackend.filter_query` returns them)."""
    return Bool((("must", query), *filters))


def all_of(nodes: Sequence[Node]) -> Bool:
    return Bool(tuple(("must", n) for n in nodes))


def any_of(nodes: Sequence[Node]) -> Bool:
    return Bool(tuple(("should", n) for n in nodes))
