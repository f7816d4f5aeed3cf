"""The full-text search tier behind one interface, so a library can outgrow one Tantivy directory.

`SearchBackend` is what the rest of evtui uses of the index — nothing more (tests/functional/test_backend.py scans evtui/ for
every `index.<name>` use and checks it is here). `SentenceIndex` (evtui/index.py, Tantivy in-process) implements it;
the config key `search_backend` picks the implementation through `open_backend`. docs/scale.md describes what a
Quickwit backend (Tantivy on a cluster, over object storage) would implement.

Queries are query trees (evtui/querytree.py): leaves built by `phrase_query` and `filter_query`, combined by
evtui/search.py and evtui/rank with the tree's combinators, and handed back to `search`, which compiles them for its
engine (Tantivy is imported by evtui/index.py alone). Filters arrive as one `Filters` value (evtui/request.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from evtui.errors import EvtuiError, QueryError
from evtui.index import Hit
from evtui.models import ParsedQuery, Sentence
from evtui.query import search_terms
from evtui.querytree import Bool, Boost, Clause, DisMax, Node, Occur, Phrase, all_of
from evtui.request import NO_FILTERS, Filters

if TYPE_CHECKING:
    from evtui.config import Config


@runtime_checkable
class SearchBackend(Protocol):
    """The full-text tier over sentences: documents keyed by sentence id, deletable by paper id.

    Writes are staged until `commit` (atomic: all of them become searchable together) or dropped by `rollback`;
    the library writes DuckDB first and commits the index before it marks papers ready
    (evtui/library/writing.py).
    """

    rebuilt: bool  # True when the index was (re)created empty and must be rebuilt from DuckDB

    # -- writing ---------------------------------------------------------------------------------
    @property
    def writer(self) -> object:
        """Claim the single writer now (ValueError when another process holds it)."""
        ...

    def add(self, sentences: Iterable[Sentence], titles: dict[str, str], years: dict[str, int | None]) -> int:
        """Stage one document per sentence (title and year come from its paper). Returns how many."""
        ...

    def delete_papers(self, paper_ids: Iterable[str]) -> None:
        """Stage the deletion of every document of these papers."""
        ...

    def delete_all(self) -> None: ...

    def commit(self) -> None:
        """Make every staged change searchable, atomically, and durable."""
        ...

    def rollback(self) -> None: ...

    def close(self) -> None: ...

    # -- reading ---------------------------------------------------------------------------------
    def num_docs(self) -> int: ...

    def size_bytes(self) -> int: ...

    def fetch(self, sentence_ids: Sequence[str]) -> dict[str, Hit]:
        """The indexed sentences with these ids, by id (a lookup, not a scan)."""
        ...

    def sentence_ids(self, paper_id: str | None = None) -> set[str]:
        """Every indexed sentence id (of one paper), for consistency checks."""
        ...

    def phrase_query(self, words: Sequence[str], *, fast: bool = False) -> tuple[Phrase, bool]:
        """A query for one term (word or phrase) over the analysed text; True when it had to be parsed leniently."""
        ...

    def filter_query(
        self,
        filters: Filters = NO_FILTERS,
        *,
        include_headings: bool = False,
        papers: Sequence[str] | None = None,
    ) -> list[Clause]:
        """Must/MustNot clauses for the filters (headings are excluded unless asked for; `papers`: any of these)."""
        ...

    def paper_ids(self) -> list[str]:
        """Every paper id in the paper-level channel, duplicates kept (for consistency checks)."""
        ...

    def paper_search(self, words: Sequence[str], limit: int, *, filters: Filters = NO_FILTERS,
                     alternatives: Mapping[str, Sequence[str]] | None = None) -> list[tuple[str, float]]:
        """(paper id, score) of the top `limit` papers by a bag of words over title + abstract, the paper-level
        channel kept in step with the sentences (evtui/papers.py); [] where a backend has none. `alternatives`: a
        word's other forms (a drug class's members), scored as one concept by its best form."""
        ...

    def search(self, query: Node, limit: int) -> list[Hit]:
        """The top `limit` hits by BM25, each with every stored field a result row needs."""
        ...


def build_query(index: SearchBackend, parsed: ParsedQuery, *, fast: bool = False) -> tuple[Node, list[str]]:
    """The text query for a parsed query, plus notes (e.g. when the lenient parser had to step in).

    Each aspect becomes a disjunction-max over its terms (so a sentence is not rewarded twice for two words of one
    relation family), and aspects are OR-ed: BM25 then rewards sentences that cover more aspects.
    `fast` (the BM25 methods): plain words go to the hyphen-splitting field alone (`SentenceIndex.phrase_query`);
    `best`, its training and the local judge keep the two-field scores their model was fitted on."""
    notes: list[str] = []
    aspect_queries: list[tuple[Occur, Node]] = []
    for aspect in parsed.aspects:
        term_queries: list[Node] = []
        for n, words in enumerate(search_terms(aspect)):
            q, lenient = index.phrase_query(words, fast=fast)
            if lenient:
                notes.append(f"query syntax in {' '.join(words)!r} was not understood; searched leniently")
            term_queries.append(q)
            if n == 0 and len(words) > 1:
                # The concept's words in any order ("colorectal adenoma and cancer"), below the exact phrase;
                # a long concept may miss one word ("pancreatic cancer perfusion CT").
                # Written as intersections, which leapfrog the rarest word's postings, not as "n-1 of n should
                # match", which walks the union of every word's postings (most of the p95 at 10M sentences). Same
                # scores: a matching clause adds its score in either form, and the max over {all n, each n-1
                # subset} is the sum over the words the sentence has.
                words_q: list[Node] = [index.phrase_query([w], fast=fast)[0] for w in words]
                subsets = [words_q] if len(words) < 3 else [words_q] + [
                    words_q[:i] + words_q[i + 1:] for i in range(len(words_q))]
                parts: list[Node] = [all_of(sub) for sub in subsets]
                any_order = parts[0] if len(parts) == 1 else DisMax(tuple(parts), 0.0)
                term_queries.append(Boost(any_order, 0.7))
        if term_queries:
            aspect_queries.append(("should", DisMax(tuple(term_queries), 0.1)))
    if not aspect_queries:
        raise QueryError(f"nothing searchable in {parsed.text!r}: every word is a stopword or punctuation")
    return Bool(tuple(aspect_queries)), notes


def _tantivy(config: Config, writable: bool) -> SearchBackend:
    from evtui.index import SentenceIndex

    return SentenceIndex(config.index_path, writable=writable)


# name -> factory; a new tier registers here and implements SearchBackend (docs/scale.md).
BACKENDS: dict[str, Callable[[Config, bool], SearchBackend]] = {"tantivy": _tantivy}
DEFAULT_BACKEND = "tantivy"


def open_backend(config: Config, *, writable: bool = True) -> SearchBackend:
    """The search backend the config names (`search_backend`, default tantivy) for this data home.

    `writable=False` opens it for searching only (no writer lock: any number of readers, e.g. Ray workers)."""
    name = (config.search_backend or DEFAULT_BACKEND).strip().lower()
    factory = BACKENDS.get(name)
    if factory is None:
        raise EvtuiError(f"config: unknown search_backend {name!r}; choose one of: {', '.join(sorted(BACKENDS))}")
    return factory(config, writable)
