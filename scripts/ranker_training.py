"""Training data for the reranker and the local judge, built from the public labelled data only
(used by scripts/train_ranker.py, experiments/cross_encoder/export_ce_data.py and experiments/cross_encoder/eval_ce.py; not part of the app).

Every group is one (query, paper): all the paper's sentences are candidates, as in a paper-scoped search, and
features come from the very `BestRanker.pool` that search uses. Labels:
- EvidenceBench (dev + public train): the number of the item's aspects a sentence covers (results aspects for
  the results head);
- SciFact train: rationale sentences of each evidence document (SUPPORT or CONTRADICT);
- Check-COVID train: the evidence sentences of SUPPORT / REFUTE claims (NOT ENOUGH INFO claims are skipped).
Needs scikit-learn only in scripts/train_ranker.py; this module needs what search needs. Each corpus is
loaded into its own library by the benchmarks' one library builder (evtui.bench.driver.bench_library).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evtui.bench.driver import bench_library as corpus_library
from evtui.bench.evidencebench import bench_library, load_items
from evtui.library import Library
from evtui.rank.features import FEATURES
from evtui.rank.pipeline import BestRanker, Pool
from evtui.request import NO_FILTERS, Filters
from evtui.search import Searcher

DENSE_DERIVED = [i for i, f in enumerate(FEATURES) if "dense" in f]


@dataclass
class Group:
    """One (query, paper) group of candidates with labels."""

    source: str  # evidencebench | scifact | checkcovid
    query_id: str
    paper_id: str
    x: np.ndarray
    positions: list[int]
    aspects: list[set[str]]  # query-aspect ids each candidate covers (for coverage-aware selection)
    vectors: np.ndarray | None
    texts: list[str]
    label: np.ndarray  # graded relevance for the evidence head
    results_label: np.ndarray | None = None  # for the results head (EvidenceBench items with results labels)
    stance: str | None = None  # SUPPORT / REFUTE of the claim, where the dataset has one
    aspect_weights: dict[str, float] = field(default_factory=dict)
    item: dict[str, Any] | None = None  # the EvidenceBench item, for task scoring in cross-validation
    candidate_papers: list[str] = field(default_factory=list)  # library-wide groups: each candidate's paper
    gold_papers: list[str] = field(default_factory=list)  # library-wide groups: the relevant documents
    query: str = ""  # the query text (item hypothesis / claim), for the cross-encoder


def _ws(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def _pool(ranker: BestRanker, searcher: Searcher, text: str, mode: str, paper: str) -> tuple[Pool, Any]:
    parsed = searcher.parse(text, mode)
    return ranker.pool_for(parsed, Filters(paper=paper)), parsed


def _group(source: str, qid: str, paper: str, pool: Pool, parsed: Any, label: np.ndarray, **kw: Any) -> Group:
    return Group(
        source=source, query_id=qid, paper_id=paper, x=pool.x,
        positions=[c.sentence.position for c in pool.candidates],
        aspects=[{sp.aspect for sp in c.spans} for c in pool.candidates],
        vectors=pool.vectors, texts=[c.sentence.text for c in pool.candidates], label=label,
        aspect_weights={a.id: (0.5 if a.role == "relation" else 1.0) for a in parsed.aspects}, **kw)


def evidencebench_groups(data: Path, home: Path, log: Callable[[str], None] = print) -> Iterator[Group]:
    items = load_items(data)
    lib = bench_library(data, home)
    try:
        ranker, searcher = BestRanker(lib), Searcher(lib)
        for n, (item_id, item) in enumerate(items.items(), 1):
            paper = str(item.get("paper_id") or item_id)
            pool, parsed = _pool(ranker, searcher, item["hypothesis"], "hypothesis", paper)
            s2a = {int(i): set(a) for i, a in item["sentence_index2aspects"].items()}
            pos = [c.sentence.position for c in pool.candidates]
            label = np.array([min(3, len(s2a.get(p, ()))) for p in pos], dtype=np.float64)
            res_label = None
            if item.get("results_aspect_list_ids"):
                wanted = set(item["results_aspect_list_ids"])
                res_label = np.array([min(3, len(s2a.get(p, set()) & wanted)) for p in pos], dtype=np.float64)
            yield _group("evidencebench", item_id, paper, pool, parsed, label, results_label=res_label, item=item,
                         query=item["hypothesis"])
            if n % 20 == 0:
                log(f"  evidencebench {data.name}: {n}/{len(items)}")
    finally:
        lib.close()


def _position_map(lib: Library, paper: str, abstract: list[str]) -> dict[int, int]:
    """Dataset sentence index -> our position, matched by text (our loader drops empty sentences, adds a title)."""
    by_text: dict[str, int] = {}
    for s in lib.store.sentences(paper):
        by_text.setdefault(s.text, s.position)
    return {i: by_text[_ws(t)] for i, t in enumerate(abstract) if _ws(t) in by_text}


def scifact_groups(corpus: Path, claims: Path, home: Path, log: Callable[[str], None] = print) -> Iterator[Group]:
    docs = {int(d["doc_id"]): d for d in map(json.loads, corpus.read_text(encoding="utf-8").splitlines()) if d}
    lib = corpus_library("scifact", corpus, home)
    try:
        ranker, searcher = BestRanker(lib), Searcher(lib)
        rows = [json.loads(line) for line in claims.read_text(encoding="utf-8").splitlines() if line.strip()]
        for n, c in enumerate(rows, 1):
            for did, sets in (c.get("evidence") or {}).items():
                paper = f"scifact:{did}"
                doc = docs.get(int(did))
                if doc is None:
                    continue
                posmap = _position_map(lib, paper, doc["abstract"])
                gold = {posmap[i] for s in sets for i in s["sentences"] if i in posmap}
                if not gold:
                    continue
                pool, parsed = _pool(ranker, searcher, c["claim"], "claim", paper)
                label = np.array([1.0 if cand.sentence.position in gold else 0.0 for cand in pool.candidates])
                stance = "SUPPORT" if sets[0]["label"] == "SUPPORT" else "REFUTE"
                yield _group("scifact", f"scifact:{c['id']}:{did}", paper, pool, parsed, label, stance=stance,
                             query=c["claim"])
            if n % 200 == 0:
                log(f"  scifact: {n}/{len(rows)} claims")
    finally:
        lib.close()


def checkcovid_groups(corpus: Path, claims: Path, home: Path, log: Callable[[str], None] = print) -> Iterator[Group]:
    docs = {d["cord_id"]: d for d in map(json.loads, corpus.read_text(encoding="utf-8").splitlines()) if d}
    lib = corpus_library("checkcovid", corpus, home)
    try:
        ranker, searcher = BestRanker(lib), Searcher(lib)
        rows = [json.loads(line) for line in claims.read_text(encoding="utf-8").splitlines() if line.strip()]
        for n, c in enumerate(rows, 1):
            if c.get("label") not in ("SUPPORT", "REFUTE") or c.get("cord_id") not in docs:
                continue
            paper = f"cord:{c['cord_id']}"
            posmap = _position_map(lib, paper, docs[c["cord_id"]]["abstract"])
            gold = {posmap[e["sent_index"]] for e in c.get("evidence_set") or [] if e["sent_index"] in posmap}
            if not gold:
                continue
            pool, parsed = _pool(ranker, searcher, c["claim"], "claim", paper)
            label = np.array([1.0 if cand.sentence.position in gold else 0.0 for cand in pool.candidates])
            yield _group("checkcovid", f"checkcovid:{c['id']}", paper, pool, parsed, label, stance=c["label"],
                         query=c["claim"])
            if n % 200 == 0:
                log(f"  check-covid: {n}/{len(rows)} claims")
    finally:
        lib.close()


def scifact_library_groups(corpus: Path, claims: Path, home: Path,
                           log: Callable[[str], None] = print) -> Iterator[Group]:
    """Library-wide groups: each SciFact claim against the whole corpus (the BM25 pool), as `evtui search` sees it.
    Label 2 = a rationale sentence, 1 = another sentence of an evidence document, 0 = the rest."""
    docs = {int(d["doc_id"]): d for d in map(json.loads, corpus.read_text(encoding="utf-8").splitlines()) if d}
    lib = corpus_library("scifact", corpus, home)
    try:
        ranker, searcher = BestRanker(lib, embed=False), Searcher(lib)
        rows = [json.loads(line) for line in claims.read_text(encoding="utf-8").splitlines() if line.strip()]
        for n, c in enumerate(rows, 1):
            ev = c.get("evidence") or {}
            if not ev:
                continue
            rationale: set[str] = set()
            for did, sets in ev.items():
                doc = docs.get(int(did))
                if doc is None:
                    continue
                posmap = _position_map(lib, f"scifact:{did}", doc["abstract"])
                rationale |= {f"scifact:{did}:{posmap[i]}" for s in sets for i in s["sentences"] if i in posmap}
            gold = [f"scifact:{did}" for did in ev]
            parsed = searcher.parse(c["claim"], "claim")
            pool = ranker.pool_for(parsed, NO_FILTERS)
            if not pool.candidates:
                continue
            # Only the evidence documents were embedded (for the per-document groups), so here "has an
            # embedding" would give the label away: these groups are trained without embedding features,
            # as a library that has not run `evtui embed` is searched.
            pool.x[:, DENSE_DERIVED] = np.nan
            pool.vectors = None
            label = np.array([2.0 if cand.sentence.id in rationale else 1.0 if cand.sentence.paper_id in gold else 0.0
                              for cand in pool.candidates])
            yield _group("scifact-library", f"scifact-library:{c['id']}", gold[0], pool, parsed, label,
                         candidate_papers=[cand.sentence.paper_id for cand in pool.candidates], gold_papers=gold,
                         query=c["claim"])
            if n % 200 == 0:
                log(f"  scifact library-wide: {n}/{len(rows)} claims")
    finally:
        lib.close()
