"""The Searcher: query text -> aspects -> Tantivy query -> ranked, highlighted Evidence.

Each aspect becomes a disjunction-max over its terms (so a sentence is not rewarded twice for two words of one
relation family), and aspects are OR-ed: BM25 then rewards sentences that cover more aspects.
The CLI, the TUI and the benchmarks all search through this one class.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import tantivy

from evtui.backend import SearchBackend
from evtui.errors import QueryError
from evtui.library import Library
from evtui.models import SECTION_KINDS, Evidence, ParsedQuery
from evtui.query import Matcher, compile_matcher, parse_query, search_terms

if TYPE_CHECKING:
    from evtui.dense import DenseRetriever
    from evtui.rank.pipeline import BestRanker

METHODS: tuple[str, ...] = ("best", "evidential", "bm25-coverage", "bm25", "dense", "hybrid", "random")
# best = learned reranker over BM25, dense, aspect-coverage, structure and results features, then
# coverage-aware selection (evtui/rank); the others are its baselines and ingredients.
DEFAULT_METHOD = "best"
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


def build_query(index: SearchBackend, parsed: ParsedQuery, *, fast: bool = False) -> tuple[tantivy.Query, list[str]]:
    """The Tantivy query for a parsed query, plus notes (e.g. when the lenient parser had to step in).

    `fast` (the BM25 methods): plain words go to the hyphen-splitting field alone (`SentenceIndex.phrase_query`);
    `best`, its training and the local judge keep the two-field scores their model was fitted on."""
    notes: list[str] = []
    aspect_queries: list[tuple[tantivy.Occur, tantivy.Query]] = []
    for aspect in parsed.aspects:
        term_queries = []
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
                words_q = [index.phrase_query([w], fast=fast)[0] for w in words]
                subsets = [words_q] if len(words) < 3 else [words_q] + [
                    words_q[:i] + words_q[i + 1:] for i in range(len(words_q))]
                parts = [tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in sub]) for sub in subsets]
                any_order = parts[0] if len(parts) == 1 else tantivy.Query.disjunction_max_query(parts, 0.0)
                term_queries.append(tantivy.Query.boost_query(any_order, 0.7))
        if term_queries:
            aspect_queries.append((tantivy.Occur.Should, tantivy.Query.disjunction_max_query(term_queries, 0.1)))
    if not aspect_queries:
        raise QueryError(f"nothing searchable in {parsed.text!r}: every word is a stopword or punctuation")
    return tantivy.Query.boolean_query(aspect_queries), notes


class Searcher:
    def __init__(self, library: Library) -> None:
        self.library = library
        self._dense_retriever: DenseRetriever | None = None
        self._best: BestRanker | None = None

    def _dense(self, parsed: ParsedQuery, method: str, bm25_query: tantivy.Query, matcher: Matcher,
               notes: list[str], *, k: int, **filters: object) -> SearchResult:
        from evtui.dense import DenseRetriever, fuse_hybrid, to_evidence

        if self._dense_retriever is None:
            self._dense_retriever = DenseRetriever(self.library)
        # A triplet embeds as its three parts in order; a claim or hypothesis as written.
        text = " ".join(a.label for a in parsed.aspects) if parsed.mode == "triplet" else parsed.text
        pool = k if method == "dense" else max(k, HYBRID_POOL)
        if method == "dense":
            hits = self._dense_retriever.search(text, k=pool, **filters)  # type: ignore[arg-type]
        else:
            bm25_ids = [h.sentence.id for h in self.library.index.search(bm25_query, pool)]
            dense_hits = self._dense_retriever.search(text, k=pool, candidates=bm25_ids, **filters)  # type: ignore[arg-type]
            hits = fuse_hybrid(bm25_ids, dense_hits, k)
        notes = notes + self._dense_retriever.notes
        evidence = to_evidence(self.library, hits[:k], matcher.spans)
        return SearchResult(query=parsed, method=method, evidence=evidence, notes=list(parsed.notes) + notes)

    def _best_search(self, parsed: ParsedQuery, full: tantivy.Query, matcher: Matcher, notes: list[str], *, k: int,
                     paper: str | None, section: str | None, year_from: int | None, year_to: int | None,
                     results: bool) -> SearchResult:
        from evtui.rank.pipeline import BestRanker

        if self._best is None:
            self._best = BestRanker(self.library)
        pool = self._best.pool(parsed, full, matcher, paper=paper, section=section, year_from=year_from,
                               year_to=year_to)
        ranked = self._best.rank(parsed, pool, k, results=results)
        evidence = []
        for n, (i, score) in enumerate(ranked, 1):
            c = pool.candidates[i]
            evidence.append(Evidence(rank=n, sentence=c.sentence, title=pool.titles.get(c.sentence.paper_id, ""),
                                     score=score, highlights=c.spans))
        return SearchResult(query=parsed, method="best", evidence=evidence,
                            notes=list(parsed.notes) + notes + pool.notes)

    def _random(self, parsed: ParsedQuery, full: tantivy.Query, matcher: Matcher, notes: list[str], *, k: int,
                paper: str | None, section: str | None, seed: int) -> SearchResult:
        """Seeded random sentences: of the paper when one is given (a benchmark floor), else of the matches."""
        import random

        if paper is not None:
            pool = [s for s in self.library.store.sentences(paper)
                    if not s.is_heading and (section is None or s.section_kind == section)]
            title = (p.title if (p := self.library.store.paper(paper)) else "")
            items = [(s, title) for s in pool]
        else:
            items = [(h.sentence, h.title) for h in self.library.index.search(full, RANDOM_POOL)]
        rng = random.Random(f"{seed}:{parsed.text}")
        picked = rng.sample(items, min(k, len(items)))
        evidence = [Evidence(rank=n, sentence=s, title=t, score=0.0, highlights=matcher.spans(s.text))
                    for n, (s, t) in enumerate(picked, 1)]
        return SearchResult(query=parsed, method="random", evidence=evidence, notes=list(parsed.notes) + notes)

    def parse(self, text: str, mode: str | None = None) -> ParsedQuery:
        return parse_query(text, mode, abbreviations=self.library.abbreviations())

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
        """Ranked evidence for `query`. `results=True` asks `best` for results evidence (numbers, effects,
        comparisons) rather than any evidence; `seed` makes `random` reproducible."""
        if method not in METHODS:
            raise QueryError(f"unknown method {method!r}; choose one of: {', '.join(METHODS)}")
        if section is not None and section not in SECTION_KINDS:
            raise QueryError(f"unknown section kind {section!r}; choose one of: {', '.join(SECTION_KINDS)}")
        if k < 1:
            raise QueryError("k must be at least 1")
        for name, year in (("year_from", year_from), ("year_to", year_to)):
            if year is not None and not -9999 <= year <= 9999:  # the index holds years as 64-bit numbers
                raise QueryError(f"{name.replace('_', '-')} {year} is not a year")
        parsed = query if isinstance(query, ParsedQuery) else self.parse(query, mode)
        index = self.library.index
        # `best` scores with the query its ranker was trained on; the BM25 methods with the faster one.
        text_query, notes = build_query(index, parsed, fast=method not in ("best", "evidential"))
        filters = index.filter_query(paper=paper, section=section, year_from=year_from, year_to=year_to)
        full = tantivy.Query.boolean_query([(tantivy.Occur.Must, text_query), *filters])
        matcher = compile_matcher(parsed.aspects)
        if method == "best":
            return self._best_search(parsed, full, matcher, notes, k=k, paper=paper, section=section,
                                     year_from=year_from, year_to=year_to, results=results)
        if method == "evidential":
            from evtui.verify.evidential import POOL, rerank
            from evtui.verify.model import default_verifier

            res = self._best_search(parsed, full, matcher, notes, k=max(k, POOL), paper=paper, section=section,
                                    year_from=year_from, year_to=year_to, results=results)
            res.evidence = rerank(default_verifier(), parsed, res.evidence, k, self.library.store)
            res.method = "evidential"
            return res
        if method == "random":
            return self._random(parsed, full, matcher, notes, k=k, paper=paper, section=section, seed=seed)
        if method in ("dense", "hybrid"):
            return self._dense(parsed, method, full, matcher, notes, k=k, paper=paper, section=section,
                               year_from=year_from, year_to=year_to)
        if method == "bm25":
            scored = [(h, matcher.spans(h.sentence.text)) for h in index.search(full, k)]
        else:
            # A sentence that covers every aspect is better evidence than a short one that repeats two of them:
            # rank by aspects covered (the same matches the user sees highlighted), then by BM25.
            pool = [(h, matcher.spans(h.sentence.text)) for h in index.search(full, max(COVERAGE_POOL, 5 * k))]
            weight = {a.id: RELATION_WEIGHT if a.role == "relation" else 1.0 for a in parsed.aspects}
            pool.sort(key=lambda hs: (-sum(weight.get(a, 0.0) for a in {s.aspect for s in hs[1]}), -hs[0].score))
            scored = pool[:k]
        evidence = [
            Evidence(rank=i + 1, sentence=h.sentence, title=h.title, score=h.score, highlights=spans)
            for i, (h, spans) in enumerate(scored)
        ]
        return SearchResult(query=parsed, method=method, evidence=evidence, notes=list(parsed.notes) + notes)
