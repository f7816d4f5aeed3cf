"""The full-text search tier behind one interface, so a library can outgrow one Tantivy directory.

`SearchBackend` is what the rest of evtui uses of the index — nothing more (tests/test_backend.py scans evtui/ for
every `index.<name>` use and checks it is here). `SentenceIndex` (evtui/index.py, Tantivy in-process) implements it;
the config key `search_backend` picks the implementation through `open_backend`. docs/scale.md describes what a
Quickwit backend (Tantivy on a cluster, over object storage) would implement.

Queries are the backend's own objects (`BackendQuery`): built by `phrase_query` and `filter_query`, combined with
Tantivy's query combinators by evtui/search.py and evtui/rank, and handed back to `search`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from evtui.errors import EvtuiError
from evtui.index import Hit
from evtui.models import Sentence

if TYPE_CHECKING:
    from evtui.config import Config

# The backend's query object (tantivy.Query for the Tantivy backend); opaque to everything but the backend.
BackendQuery = Any
# (Occur, query) clauses of a boolean query, as `filter_query` returns them.
FilterClauses = list[tuple[Any, Any]]


@runtime_checkable
class SearchBackend(Protocol):
    """The full-text tier over sentences: documents keyed by sentence id, deletable by paper id.

    Writes are staged until `commit` (atomic: all of them become searchable together) or dropped by `rollback`;
    the library writes DuckDB first and commits the index before it marks papers ready (evtui/library.py).
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

    def phrase_query(self, words: Sequence[str], *, fast: bool = False) -> tuple[BackendQuery, bool]:
        """A query for one term (word or phrase) over the analysed text; True when it had to be parsed leniently."""
        ...

    def filter_query(
        self,
        *,
        paper: str | None = None,
        section: str | None = None,
        year_from: int | None = None,
        year_to: int | None = None,
        include_headings: bool = False,
        papers: Sequence[str] | None = None,
    ) -> FilterClauses:
        """Must/MustNot clauses for the filters (headings are excluded unless asked for; `papers`: any of these)."""
        ...

    def paper_ids(self) -> list[str]:
        """Every paper id in the paper-level channel, duplicates kept (for consistency checks)."""
        ...

    def paper_search(self, words: Sequence[str], limit: int, *, year_from: int | None = None,
                     year_to: int | None = None) -> list[tuple[str, float]]:
        """(paper id, score) of the top `limit` papers by a bag of words over title + abstract, the paper-level
        channel kept in step with the sentences (evtui/papers.py); [] where a backend has none."""
        ...

    def search(self, query: BackendQuery, limit: int) -> list[Hit]:
        """The top `limit` hits by BM25, each with every stored field a result row needs."""
        ...


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
