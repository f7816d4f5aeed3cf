"""What the SciFact and Check-COVID harnesses share: the run/qrels contract, rankers, metrics, bench libraries.

Runs and qrels are BEIR / ranx shaped, `{query_id: {doc_or_sentence_id: score}}`, with our own paper ids
(`scifact:<doc_id>`, `cord:<cord_id>`) and sentence ids (`<paper_id>:<position>`) on both sides, so nothing is
translated between retrieval and scoring. A ranker sees a `Query` — the text and, for a within-paper task,
the paper id — and nothing else; labels are read afterwards, by the scorer alone. Metrics come from
ir-measures (pytrec_eval underneath, the same code BEIR scores with).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import ir_measures

from evtui import methods
from evtui.bench.driver import ProgressFn, Query
from evtui.errors import EvtuiError
from evtui.library import Library
from evtui.rank.pipeline import paper_bm25
from evtui.request import NO_FILTERS

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]

# Sentences asked for per doc-retrieval query at first: ~10 sentences per abstract, so ~100 distinct docs.
DOC_SENTENCES_K = 1000
MAX_DOC_SENTENCES_K = 16000


def harness_methods() -> list[str]:
    """What these harnesses run: the seeded draw (the harness's own), then the Searcher's other methods."""
    names = methods.search_methods()
    draws = [n for n in names if methods.get(n).ranker == "draw"]
    return [*draws, *(n for n in names if n not in draws)]


def check_method(method: str) -> None:
    """Fail before any ingest on a name that is not one of `harness_methods()`."""
    names = harness_methods()
    if method not in names:
        raise EvtuiError(f"unknown method {method!r}; choose one of: {', '.join(names)}")


def embed_if_needed(library: Library, method: str, on_progress: ProgressFn | None = None) -> int:
    """Embed what the method may search (cached, so only the first run pays). Returns how many sentences.

    Methods that use embeddings (`best` and its kin) get every paper's title + abstract vector, as `evtui embed`
    gives them first: `best`'s paper channel fuses them with BM25 (one vector per paper, minutes for a
    5,000-paper corpus). Only methods that rank by embeddings (dense, hybrid) get every sentence embedded too, so
    a whole-corpus search covers every sentence; `best` uses sentence embeddings only on a fully embedded library,
    and its library-wide training groups had none, so it is measured without them."""
    from evtui.embed import ensure_embeddings, model_available

    if methods.uses_embeddings(method) and model_available():
        from evtui.paper_vectors import ensure_paper_vectors

        pcb = (lambda done, total: on_progress("embedding papers", done, total)) if on_progress else None
        ensure_paper_vectors(library, on_progress=pcb)
    if not methods.needs_embeddings(method):
        return 0
    cb = (lambda done, total: on_progress("embedding", done, total)) if on_progress else None
    return ensure_embeddings(library, on_progress=cb)


def ranked(ids: Iterable[str]) -> dict[str, float]:
    """An ordered id list as a run row whose scores are strictly decreasing, so no scorer's tie-break reorders it."""
    return {d: 1.0 / rank for rank, d in enumerate(dict.fromkeys(ids), 1)}


def docs_from_hits(hits: Iterable[tuple[str, float]], depth: int) -> dict[str, float]:
    """Sentence hits (paper id, score) in rank order -> the first `depth` documents, in order of their first hit.

    A document scores its best sentence's score when those scores agree with the rank order (BM25, cosine,
    RRF); when the method re-orders hits (bm25-coverage ranks by aspects covered first), or scores tie, the
    first-hit rank is used instead, so the method's order is what gets evaluated either way.
    """
    best: dict[str, float] = {}
    for paper, score in hits:
        best[paper] = max(score, best.get(paper, score))
    best = dict(list(best.items())[:depth])
    scores = list(best.values())
    if all(a > b for a, b in zip(scores, scores[1:], strict=False)):
        return best
    return ranked(best)


def make_doc_ranker(library: Library, method: str, seed: int, depth: int = 100) -> Callable[[Query], dict[str, float]]:
    """Query -> {paper id: score} for the top `depth` papers of the whole library."""
    if methods.get(method).ranker == "draw":
        papers = sorted(p.id for p in library.store.papers())

        def rank_random(q: Query) -> dict[str, float]:  # keyed by query, so queries are independent of order
            return ranked(methods.draw(papers, depth, seed, q.query_id))
        return rank_random

    from evtui.search import Searcher

    searcher = Searcher(library)
    n_papers = len(library.store.paper_hashes())

    def rank(q: Query) -> dict[str, float]:
        if method == "bm25":
            # whole-abstract BM25 through the paper index (0.694 nDCG@10 on SciFact train against 0.557 for
            # pooled sentence hits); a library without a complete paper channel pools sentences as before
            papers = paper_bm25(library, searcher.parse(q.text, "claim"), depth, NO_FILTERS)
            if papers:
                return docs_from_hits(papers, depth)
        want = min(depth, n_papers)
        k = DOC_SENTENCES_K
        while True:
            res = searcher.search(q.text, k=k, mode="claim", method=method)
            docs = docs_from_hits(((e.sentence.paper_id, e.score) for e in res.evidence), depth)
            # Stop when enough papers are found, the method has nothing more to give, or at the cap.
            if len(docs) >= want or len(res.evidence) < k or k >= MAX_DOC_SENTENCES_K:
                return docs
            k *= 2

    return rank


def make_sentence_ranker(library: Library, method: str, seed: int, k: int) -> Callable[[Query], list[str]]:
    """Query (with paper id) -> at most `k` sentence ids of that paper's abstract, best first.

    The title is not a candidate: the benchmarks' sentence indices count abstract sentences only.
    """
    def candidate(kind: str, is_heading: bool) -> bool:
        return kind != "title" and not is_heading

    if methods.get(method).ranker == "draw":
        def rank_random(q: Query) -> list[str]:
            pool = [s.id for s in library.store.sentences(q.paper_id or "") if candidate(s.section_kind, s.is_heading)]
            return methods.draw(pool, k, seed, q.query_id)
        return rank_random

    from evtui.search import Searcher

    searcher = Searcher(library)

    def rank(q: Query) -> list[str]:
        if q.paper_id is None:
            raise EvtuiError(f"query {q.query_id} has no paper to search within")
        res = searcher.search(q.text, k=k + 1, paper=q.paper_id, mode="claim", method=method)  # +1: the title
        return [e.sentence.id for e in res.evidence if candidate(e.sentence.section_kind, e.sentence.is_heading)][:k]

    return rank


def evaluate(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]],
             measures: Iterable[str]) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """(mean per measure, per query per measure) over every query with a relevant document in `qrels`.

    Measures are ir-measures names (`nDCG@10`, `R@5`). A query the run has nothing for scores 0, as in BEIR:
    every judged query counts.
    """
    parsed = {m: ir_measures.parse_measure(m) for m in measures}
    judged = {q: {d: int(r) for d, r in docs.items()} for q, docs in qrels.items() if any(r > 0 for r in docs.values())}
    per_query: dict[str, dict[str, float]] = {q: dict.fromkeys(parsed, 0.0) for q in judged}
    by_measure = {v: k for k, v in parsed.items()}
    rows = {q: dict(docs) for q, docs in run.items() if q in judged and docs}
    if rows:
        for m in ir_measures.iter_calc(list(parsed.values()), judged, rows):
            if m.query_id in per_query:
                per_query[m.query_id][by_measure[m.measure]] = float(m.value)
    n = len(per_query)
    means = {name: (sum(v[name] for v in per_query.values()) / n if n else 0.0) for name in parsed}
    return means, per_query


def save(library: Library, result: Mapping[str, Any], params: Mapping[str, Any], task: str, *,
         run_id: str | None = None) -> str:
    """Store a run with `evtui.bench.runs.save_run` (which counts items as `n_items`); returns the run id.
    With `run_id` (a run started by `start_runs`), that row is completed."""
    from evtui.bench.runs import save_run

    row = {k: v for k, v in result.items() if k != "n_queries"}
    row.update(task=task, n_items=result["n_queries"], n_skipped=0)
    return save_run(library, row, dict(params), run_id=run_id)

