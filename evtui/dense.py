"""Dense (embedding) retrieval over the library's sentences, and reciprocal-rank fusion with BM25.

With a paper filter, that paper's sentences are embedded on demand (per-paper search needs no pre-embedding).
Without one, the search runs over every cached embedding (a numpy matrix kept in memory and reloaded when the
library or the cache changes); `notes` says when that covers only part of the library.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from evtui.embed import (
    DIM,
    MODEL_ID,
    Embedder,
    coverage,
    ensure_embeddings,
    ensure_table,
    get_embedder,
    library_state,
    load_matrix,
    vectors_for,
)
from evtui.models import Evidence, Sentence, Span
from evtui.request import NO_FILTERS, Filters

if TYPE_CHECKING:
    from evtui.library import Library

RRF_K = 60
# With partial coverage, hybrid embeds at most this many of its BM25 candidates on the fly (~1 s on 2 cores the
# first time, cached after), so its dense half ranks what BM25 found rather than only the embedded part.
LAZY_CANDIDATES = 100


def rrf(rankings: list[list[str]], k: int = RRF_K) -> list[tuple[str, float]]:
    """Reciprocal-rank fusion: score(d) = sum over rankings of 1 / (k + rank), rank from 1.

    Ties keep the order in which ids were first seen (earlier rankings first).
    """
    scores: dict[str, float] = {}
    for ranking in rankings:
        seen: set[str] = set()
        for rank, doc in enumerate(ranking, start=1):
            if doc in seen:
                continue
            seen.add(doc)
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank)
    order = {d: i for i, d in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def fuse_hybrid(bm25_ids: list[str], dense_hits: list[tuple[str, float]], k: int) -> list[tuple[str, float]]:
    """The top `k` of the RRF fusion of a BM25 ranking (ids) and a dense ranking ((id, cosine) pairs)."""
    return rrf([list(bm25_ids), [sid for sid, _ in dense_hits]])[:k]


def titled_sentences(library: Library, ids: Sequence[str]) -> dict[str, tuple[Sentence, str]]:
    """id -> (Sentence, paper title) for the searchable sentences among `ids`: looked up in the index by id
    (DuckDB has no index on sentence ids, and a join would scan every sentence)."""
    return {sid: (h.sentence, h.title) for sid, h in library.index.fetch(ids).items()}


def sentences_by_ids(library: Library, ids: Sequence[str]) -> dict[str, Sentence]:
    """id -> Sentence for the ids that exist (titles: see `titled_sentences`)."""
    return {sid: s for sid, (s, _t) in titled_sentences(library, ids).items()}


def to_evidence(
    library: Library,
    hits: Sequence[tuple[str, float]],
    highlight: Callable[[str], list[Span]] | None = None,
) -> list[Evidence]:
    """Evidence rows (rank from 1) for (sentence_id, score) hits; ids no longer in the library are dropped."""
    rows = titled_sentences(library, [sid for sid, _ in hits])
    out: list[Evidence] = []
    for sid, score in hits:
        if sid not in rows:
            continue
        sent, title = rows[sid]
        out.append(Evidence(rank=len(out) + 1, sentence=sent, title=title, score=float(score),
                            highlights=highlight(sent.text) if highlight else []))
    return out


class DenseRetriever:
    """Cosine search over sentence embeddings. `notes` holds remarks about the last search."""

    def __init__(self, library: Library, *, embedder: Embedder | None = None, auto_embed_limit: int = 500) -> None:
        self.library = library
        self.embedder = embedder or get_embedder(library.config.cache_dir)
        self.auto_embed_limit = auto_embed_limit  # unfiltered search embeds this many missing sentences itself
        self.notes: list[str] = []
        self._key: tuple[object, ...] | None = None
        self._ids: np.ndarray = np.zeros(0, dtype=object)
        self._papers: np.ndarray = np.zeros(0, dtype=object)
        self._sections: np.ndarray = np.zeros(0, dtype=object)
        self._years: np.ndarray = np.zeros(0, dtype=np.int64)
        self._matrix: np.ndarray = np.zeros((0, DIM), dtype=np.float32)
        self._qcache: dict[str, np.ndarray] = {}
        self._coverage: tuple[tuple[object, ...], tuple[int, int]] | None = None
        self._lazy = 0  # embeddings this retriever added on the fly since the matrix was loaded

    # -- helpers ---------------------------------------------------------------------------------
    def _query_vec(self, text: str) -> np.ndarray:
        v = self._qcache.get(text)
        if v is None:
            if len(self._qcache) > 256:
                self._qcache.clear()
            v = self._qcache[text] = self.embedder.embed_one(text)
        return v

    def _state_key(self) -> tuple[object, ...]:
        return library_state(self.library, MODEL_ID)

    def _refresh(self, key: tuple[object, ...]) -> None:
        # Embeddings added on the fly for candidates are scored directly; they alone do not reload the matrix.
        seen = self._key is not None and key[1:] == self._key[1:] and key[0] == int(self._key[0]) + self._lazy  # type: ignore[call-overload]
        if self._key is None or (key != self._key and not seen):
            self._ids, self._papers, self._sections, self._years, self._matrix = load_matrix(
                self.library.store.con, MODEL_ID)
            self._key, self._lazy = key, 0

    def _coverage_of(self, key: tuple[object, ...]) -> tuple[int, int]:
        """coverage() is a join over every sentence: computed once per library state, not once per search."""
        if self._coverage is None or self._coverage[0] != key:
            self._coverage = (key, coverage(self.library))
        return self._coverage[1]

    @staticmethod
    def _top(ids: np.ndarray, mat: np.ndarray, q: np.ndarray, k: int) -> list[tuple[str, float]]:
        if len(ids) == 0:
            return []
        scores = mat @ q
        if k < len(scores):
            idx = np.argpartition(-scores, k - 1)[:k]
            idx = idx[np.argsort(-scores[idx], kind="stable")]
        else:
            idx = np.argsort(-scores, kind="stable")
        return [(str(ids[i]), float(scores[i])) for i in idx]

    # -- search ----------------------------------------------------------------------------------
    def search(
        self,
        query_text: str,
        *,
        k: int,
        filters: Filters = NO_FILTERS,
        candidates: Sequence[str] = (),
    ) -> list[tuple[str, float]]:
        """Top-k (sentence_id, cosine), headings excluded, within the filters' paper/section/years.

        `candidates` (e.g. BM25's hits, already filtered) are embedded when missing and always scored, so a
        partly embedded library still gets a dense opinion on them."""
        self.notes = []
        if k < 1 or not query_text.strip():
            return []
        con = self.library.store.con
        ensure_table(con)
        paper, section, year_from, year_to = filters.paper, filters.section, filters.year_from, filters.year_to
        if paper is not None:
            ensure_embeddings(self.library, paper=paper, section=section, embedder=self.embedder)
            ids, _p, _s, years, mat = load_matrix(con, MODEL_ID, paper=paper, section=section)
            mask = self._year_mask(years, year_from, year_to)
            if mask is not None:
                ids, mat = ids[mask], mat[mask]
            return self._top(ids, mat, self._query_vec(query_text), k)

        key = self._state_key()
        done, total = self._coverage_of(key)
        if done < total and total - done <= self.auto_embed_limit:
            ensure_embeddings(self.library, embedder=self.embedder)
            key = self._state_key()
            done, total = self._coverage_of(key)
        extra: list[tuple[str, float]] = []
        if done < total and candidates:
            cand = list(dict.fromkeys(candidates))[:LAZY_CANDIDATES]
            texts = {sid: h.sentence.text for sid, h in self.library.index.fetch(cand).items()
                     if not h.sentence.is_heading}
            vecs, added = vectors_for(self.library, texts, embed_missing=True, embedder=self.embedder)
            if added:
                self._lazy += added
                self._coverage = (self._state_key(), (done + added, total))
            c_ids = np.asarray([sid for sid in cand if sid in vecs], dtype=object)
            c_mat = np.asarray([vecs[sid] for sid in c_ids], dtype=np.float32).reshape(len(c_ids), DIM)
            extra = self._top(c_ids, c_mat, self._query_vec(query_text), len(c_ids))
            self.notes.append(f"dense search covers {done:,} of {total:,} sentences, plus the {len(extra)} BM25 "
                              "candidates embedded on the fly; run `evtui embed` for the rest")
        elif done < total:
            self.notes.append(f"dense search covers {done:,} of {total:,} sentences; run `evtui embed`")
        self._refresh(self._coverage[0] if self._coverage is not None else key)
        ids, mat = self._ids, self._matrix
        mask = np.ones(len(ids), dtype=bool)
        if section is not None:
            mask &= self._sections == section
        ym = self._year_mask(self._years, year_from, year_to)
        if ym is not None:
            mask &= ym
        if not mask.all():
            ids, mat = ids[mask], mat[mask]
        top = self._top(ids, mat, self._query_vec(query_text), k)
        if extra:
            merged = dict(top)
            merged.update(extra)
            top = sorted(merged.items(), key=lambda kv: -kv[1])[:k]
        return top

    @staticmethod
    def _year_mask(years: np.ndarray, year_from: int | None, year_to: int | None) -> np.ndarray | None:
        if year_from is None and year_to is None:
            return None
        mask = years >= 0  # papers without a year never pass a year filter (as in the Tantivy range query)
        if year_from is not None:
            mask &= years >= year_from
        if year_to is not None:
            mask &= years <= year_to
        return mask
