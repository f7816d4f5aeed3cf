"""The Searcher: a SearchRequest -> aspects -> text query -> ranked, highlighted Evidence.

The text query (evtui/backend.py `build_query`) is a query tree that only the backend compiles; the filters travel
as one `Filters` value (evtui/request.py). The CLI, the TUI and the benchmarks all search through this one class,
and the detail pane and the reader read a sentence's context through it (`context`, `read`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from evtui.backend import build_query
from evtui.errors import QueryError
from evtui.library import Library
from evtui.methods import DEFAULT_METHOD, draw, search_methods
from evtui.models import Evidence, Paper, ParsedQuery, Sentence
from evtui.query import Matcher, compile_matcher, parse_query
from evtui.query.parse import CommonWordsOnly, no_claim
from evtui.querytree import Node, must
from evtui.request import Filters, SearchRequest
from evtui.store import Store

if TYPE_CHECKING:
    from evtui.dense import DenseRetriever
    from evtui.rank.pipeline import BestRanker, PoolCache

RANDOM_POOL = 1000  # `random` samples from this many BM25 matches when no paper is given
# bm25-coverage re-ranks this many BM25 candidates (at least) by how many aspects each covers.
COVERAGE_POOL = 200
# hybrid fuses this many candidates from each of BM25 and dense retrieval (reciprocal-rank fusion).
HYBRID_POOL = 100
# Relation words (increase, associated, ...) are common; covering a concept counts for more.
RELATION_WEIGHT = 0.5


@dataclass
class SearchResult:
    query: ParsedQuery
    method: str
    evidence: list[Evidence]
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "query": self.query.text,
            "mode": self.query.mode,
            "method": self.method,
            "aspects": [a.to_json() for a in self.query.aspects],
            "notes": self.notes,
            "results": [e.to_json() for e in self.evidence],
        }


@dataclass
class Context:
    """A sentence among its neighbours (or a whole paper), and the paper's metadata."""

    paper: Paper | None
    sentences: list[Sentence]


class Searcher:
    def __init__(self, library: Library, *, pool_cache: PoolCache | None = None) -> None:
        """`pool_cache`: `best`'s candidate pools, shared with other searchers (a benchmark's tasks over the
        same items); keyed by query and paper content, so never stale."""
        self.library = library
        self._dense_retriever: DenseRetriever | None = None
        self._best: BestRanker | None = None
        self._pool_cache = pool_cache

    def _dense(self, parsed: ParsedQuery, method: str, bm25_query: Node, matcher: Matcher,
               notes: list[str], *, k: int, filters: Filters) -> SearchResult:
        from evtui.dense import DenseRetriever, fuse_hybrid, to_evidence
        from evtui.rank.pipeline import dense_text

        if self._dense_retriever is None:
            self._dense_retriever = DenseRetriever(self.library)
        text = dense_text(parsed)  # a triplet as its three parts in order; a claim without citations or figures
        pool = k if method == "dense" else max(k, HYBRID_POOL)
        if method == "dense":
            hits = self._dense_retriever.search(text, k=pool, filters=filters)
        else:
            bm25_ids = [h.sentence.id for h in self.library.index.search(bm25_query, pool)]
            dense_hits = self._dense_retriever.search(text, k=pool, candidates=bm25_ids, filters=filters)
            hits = fuse_hybrid(bm25_ids, dense_hits, k)
        notes = notes + self._dense_retriever.notes
        evidence = to_evidence(self.library, hits[:k], matcher.spans)
        return SearchResult(query=parsed, method=method, evidence=evidence, notes=list(parsed.notes) + notes)

    @property
    def ranker(self) -> BestRanker:
        """The `best` ranker (loaded on first use), shared with whoever judges this searcher's results, so its
        model, embedder and pools are built once."""
        from evtui.rank.pipeline import BestRanker

        if self._best is None:
            self._best = BestRanker(self.library, pool_cache=self._pool_cache)
        return self._best

    def _best_search(self, parsed: ParsedQuery, full: Node, matcher: Matcher, notes: list[str], *, k: int,
                     filters: Filters, results: bool) -> SearchResult:
        ranker = self.ranker
        pool = ranker.pool(parsed, full, matcher, filters)
        ranked = ranker.rank(parsed, pool, k, results=results)
        evidence = []
        for n, (i, score) in enumerate(ranked, 1):
            c = pool.candidates[i]
            evidence.append(Evidence(rank=n, sentence=c.sentence, title=pool.titles.get(c.sentence.paper_id, ""),
                                     score=score, highlights=c.spans))
        return SearchResult(query=parsed, method="best", evidence=evidence,
                            notes=list(parsed.notes) + notes + pool.notes)

    def _random(self, parsed: ParsedQuery, full: Node, matcher: Matcher, notes: list[str], *, k: int,
                paper: str | None, section: str | None, seed: int) -> SearchResult:
        """Seeded random sentences: of the paper when one is given (a benchmark floor), else of the matches."""
        if paper is not None:
            pool = [s for s in self.library.store.sentences(paper)
                    if not s.is_heading and (section is None or s.section_kind == section)]
            title = (p.title if (p := self.library.store.paper(paper)) else "")
            items = [(s, title) for s in pool]
        else:
            items = [(h.sentence, h.title) for h in self.library.index.search(full, RANDOM_POOL)]
        picked = draw(items, k, seed, parsed.text)
        evidence = [Evidence(rank=n, sentence=s, title=t, score=0.0, highlights=matcher.spans(s.text))
                    for n, (s, t) in enumerate(picked, 1)]
        return SearchResult(query=parsed, method="random", evidence=evidence, notes=list(parsed.notes) + notes)

    def parse(self, text: str, mode: str | None = None) -> ParsedQuery:
        return parse_query(text, mode, abbreviations=self.library.abbreviations())

    def context(self, sentence_id: str, *, window: int = 2, paper_id: str | None = None,
                store: Store | None = None) -> Context:
        """The sentence with up to `window` neighbours on each side, in order, and its paper (the detail pane);
        `paper_id` finds the paper even when the sentence is gone. `store`: a connection of the caller's own (the
        TUI's UI-thread view), else the library's."""
        store = store or self.library.store
        sentences = store.context(sentence_id, window=window)
        paper_id = paper_id or (sentences[0].paper_id if sentences else None)
        return Context(store.paper(paper_id) if paper_id else None, sentences)

    def read(self, paper_id: str, *, store: Store | None = None) -> Context:
        """A whole paper in reading order, headings included (the reader)."""
        store = store or self.library.store
        return Context(store.paper(paper_id), store.sentences(paper_id))

    def search(
        self,
        query: str | ParsedQuery,
        *,
        k: int = 20,
        paper: str | None = None,
        section: str | None = None,
        year_from: int | None = None,
        year_to: int | None = None,
        mode: str | None = None,
        method: str = DEFAULT_METHOD,
        results: bool = False,
        seed: int = 0,
    ) -> SearchResult:
        """Ranked evidence for `query` (keywords for `run`'s SearchRequest)."""
        return self.run(SearchRequest(query, k=k, method=method, mode=mode, results=results, seed=seed,
                                      filters=Filters(paper, section, year_from, year_to)))

    def run(self, request: SearchRequest) -> SearchResult:
        """Ranked evidence for a request. `results` asks `best` for results evidence (numbers, effects,
        comparisons) rather than any evidence; `seed` makes `random` reproducible."""
        method = request.method or DEFAULT_METHOD
        if method not in search_methods():
            raise QueryError(f"unknown method {method!r}; choose one of: {', '.join(search_methods())}")
        request.check()
        k, filters, query = request.k, request.filters, request.query
        try:
            parsed = query if isinstance(query, ParsedQuery) else self.parse(query, request.mode)
        except CommonWordsOnly as exc:  # "the of and": no sentence is evidence for it, and the note says why
            return SearchResult(query=exc.parsed, method=method, evidence=[], notes=list(exc.parsed.notes))
        index = self.library.index
        # `best` scores with the query its ranker was trained on; the BM25 methods with the faster one.
        text_query, notes = build_query(index, parsed, fast=method not in ("best", "evidential"))
        if filters.paper is None and (filters.year_from is not None or filters.year_to is not None):
            undated, total = self.library.store.undated_papers()
            if undated:  # most datasets (SciFact, PubTator) carry no year: say so, or an empty list reads as absence
                notes = [*notes, f"{undated:,} of {total:,} papers have no year, so the year filter leaves them out"]
        full = must(text_query, index.filter_query(filters))
        matcher = compile_matcher(parsed.aspects)
        if method == "best":
            return self._best_search(parsed, full, matcher, notes, k=k, filters=filters, results=request.results)
        if method == "evidential":
            from evtui.verify.evidential import POOL, rerank
            from evtui.verify.model import default_verifier

            if no_claim(parsed):  # no side to weigh against a question: `best`'s order, as its note says
                res = self._best_search(parsed, full, matcher, notes, k=k, filters=filters, results=request.results)
                res.notes.append("evidential: with no claim, no sentence takes a side, so the order is best's")
            else:
                res = self._best_search(parsed, full, matcher, notes, k=max(k, POOL), filters=filters,
                                        results=request.results)
                res.evidence = rerank(default_verifier(), parsed, res.evidence, k, self.library.store)
            res.method = "evidential"
            return res
        if method == "random":
            return self._random(parsed, full, matcher, notes, k=k, paper=filters.paper, section=filters.section,
                                seed=request.seed)
        if method in ("dense", "hybrid"):
            return self._dense(parsed, method, full, matcher, notes, k=k, filters=filters)
        if method == "bm25":
            scored = [(h, matcher.spans(h.sentence.text)) for h in index.search(full, k)]
        elif method == "bm25-coverage":
            # A sentence that covers every aspect is better evidence than a short one that repeats two of them:
            # rank by aspects covered (the same matches the user sees highlighted), then by BM25.
            pool = [(h, matcher.spans(h.sentence.text)) for h in index.search(full, max(COVERAGE_POOL, 5 * k))]
            weight = {a.id: RELATION_WEIGHT if a.role == "relation" else 1.0 for a in parsed.aspects}
            pool.sort(key=lambda hs: (-sum(weight.get(a, 0.0) for a in {s.aspect for s in hs[1]}), -hs[0].score))
            scored = pool[:k]
        else:  # registered (evtui.methods) but never implemented here: no silent stand-in
            raise QueryError(f"the Searcher has no implementation of method {method!r}")
        evidence = [
            Evidence(rank=i + 1, sentence=h.sentence, title=h.title, score=h.score, highlights=spans)
            for i, (h, spans) in enumerate(scored)
        ]
        return SearchResult(query=parsed, method=method, evidence=evidence, notes=list(parsed.notes) + notes)
