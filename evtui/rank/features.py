"""Features of (query, candidate sentence) pairs for the learned reranker and the local judge.

Every feature is computable at search time from what the library holds — the query's aspects, BM25, cached
embeddings, the sentence's section and position — never from benchmark labels. Missing signals (no embedding,
no neighbour) are NaN, which the gradient-boosted model handles natively.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from evtui.models import SECTION_KINDS, ParsedQuery, Sentence, Span
from evtui.query import FILLER, PART_RE, STOPWORDS, stem
from evtui.query.parse import claim_text

FEATURES: tuple[str, ...] = (
    "bm25", "bm25_norm", "bm25_rank", "bm25_prev", "bm25_next",
    "dense", "dense_norm", "dense_rank", "dense_prev", "dense_next",
    "cov_concepts", "cov_weighted", "cov_relation", "n_concepts", "term_overlap", "idf_overlap",
    *(f"sec_{k}" for k in SECTION_KINDS),
    "rel_pos", "log_position", "log_paper_len", "n_tokens",
    "has_number", "has_pvalue", "has_stat", "has_percent", "compare_words", "result_verbs",
    "negation", "hedge", "first_person", "cites_figure", "pool_size",
    "bm25_z", "dense_z", "dense_section_rank", "sec_rel_pos", "sec_len",
    "aspect_dense_max", "aspect_dense_mean", "aspect_dense_top",
    "paper_cov", "paper_hits", "title_overlap",
)

# Features whose value does not depend on the other candidates: the judge uses only these, so a sentence's score
# says how relevant it is, not how it compares with the rest of its paper (the best sentence of an off-topic
# paper must not look like evidence).
POOL_RELATIVE = frozenset({"bm25_norm", "bm25_rank", "bm25_prev", "bm25_next", "dense_norm", "dense_rank", "bm25_z",
                           "dense_z", "dense_section_rank", "aspect_dense_top", "pool_size", "idf_overlap",
                           "paper_cov", "paper_hits"})
JUDGE_FEATURES: tuple[str, ...] = tuple(f for f in FEATURES if f not in POOL_RELATIVE)

_NUMBER = re.compile(r"\d")
_PVALUE = re.compile(r"\b[pP]\s*(?:[<>=≤≥]|value)")
_STAT = re.compile(r"\b(?:OR|RR|HR|CI|SD|SEM?|IQR|AUC|odds ratio|relative risk|hazard ratio|confidence interval|"
                   r"mean|median|r\s*=|rho|correlation coefficient)\b")
_PERCENT = re.compile(r"%|\bper ?cent\b")
_COMPARE = re.compile(r"\b(?:higher|lower|increas\w*|decreas\w*|reduc\w*|elevat\w*|greater|less|more|fewer|"
                      r"significant\w*|associated|compared|than|versus|vs\.?|differ\w*|risk)\b", re.I)
_RESULT_VERBS = re.compile(r"\b(?:we (?:found|observed|show|showed|demonstrated?|report)|results? (?:show|indicate|"
                           r"suggest|demonstrate)\w*|was (?:found|observed)|were (?:found|observed)|revealed?|"
                           r"conclud\w*)\b", re.I)
_NEGATION = re.compile(r"\b(?:no|not|neither|nor|without|failed|absence|lack\w*|none|did not|does not|cannot)\b",
                       re.I)
_HEDGE = re.compile(r"\b(?:may|might|could|possibly|perhaps|suggest\w*|likely|unclear|unknown)\b", re.I)
_FIRST_PERSON = re.compile(r"\b(?:we|our|us)\b", re.I)
_FIGURE = re.compile(r"\b(?:fig(?:ure)?s?\.?|tables?)\s*\d", re.I)


@dataclass
class Candidate:
    """A sentence to score, with what retrieval already knows about it."""

    sentence: Sentence
    spans: list[Span]
    bm25: float = 0.0
    dense: float = float("nan")
    section_index: int = -1  # index within its run of same-section sentences, -1 when unknown
    section_len: int = 0


def query_stems(parsed: ParsedQuery) -> set[str]:
    """Content-word stems of the query (stopwords and hypothesis filler dropped)."""
    out: set[str] = set()
    for w in PART_RE.findall(claim_text(parsed)):
        lw = w.lower()
        if lw not in STOPWORDS and lw not in FILLER and len(lw) > 1:
            out.add(stem(lw))
    return out


def _stems_by_aspect(parsed: ParsedQuery, qstems: set[str]) -> dict[str, set[str]]:
    """Aspect id -> the query stems of its label: what a span of that aspect stands for."""
    out: dict[str, set[str]] = {}
    for a in parsed.aspects:
        own = {stem(w.lower()) for w in PART_RE.findall(a.label)} & qstems
        if own:
            out.setdefault(a.id, set()).update(own)
    return out


def _found(qstems: set[str], stems: set[str], covered: set[str], by_aspect: Mapping[str, set[str]]) -> set[str]:
    """The query stems a text holds: its own words, plus the label words of every aspect it matches."""
    hit = qstems & stems
    for aid in covered:
        hit |= by_aspect.get(aid, set())
    return hit


def _rank_feature(values: np.ndarray) -> np.ndarray:
    """log2(1 + rank) within the pool, rank 0 = best; NaN stays NaN."""
    out = np.full(len(values), np.nan)
    ok = ~np.isnan(values)
    if ok.any():
        order = np.argsort(-values[ok], kind="stable")
        ranks = np.empty(ok.sum())
        ranks[order] = np.arange(ok.sum())
        out[ok] = np.log2(1 + ranks)
    return out


def featurize(
    parsed: ParsedQuery,
    candidates: Sequence[Candidate],
    *,
    paper_sizes: Mapping[str, int],
    neighbours: Mapping[tuple[str, int], tuple[float, float]] | None = None,
    doc_freq: Mapping[str, float] | None = None,
    aspect_sims: np.ndarray | None = None,
    titles: Mapping[str, str] | None = None,
    title_aspects: Mapping[str, set[str]] | None = None,
    aspect_forms: bool = False,
) -> np.ndarray:
    """One row per candidate, columns in FEATURES order.

    `neighbours` maps (paper_id, position) to that sentence's (bm25, dense), for the prev/next features (the
    sentence before "…was significantly higher in X" often names what X is). `doc_freq` maps a stem to its
    document frequency within the candidate pool's papers, for an IDF-weighted overlap. `aspect_sims` holds the
    cosine of each candidate (rows) with each concept aspect's own embedding (columns): a hypothesis has several
    parts and a sentence that states one of them well is evidence even when it is far from the whole.
    The paper-level columns judge the sentence's paper as a whole: across the library a relevant abstract states
    the claim's parts in several sentences, so `paper_cov` (query stems found in any of the paper's candidates),
    `paper_hits` (how many of its sentences the pool holds) and `title_overlap` (query stems in its `titles`
    entry) lift the sentences of papers that are about the query over a lone sentence that happens to match.
    With `aspect_forms` (a library-wide pool) the paper-level columns count a query word as found where its aspect
    is: the highlighter matches an aspect's synonyms, drug-class members and expansions ("statins" in a trial of
    pravastatin), so `paper_cov` takes the candidates' spans and `title_overlap` the title's (`title_aspects`:
    paper id -> aspects its title matches) as well as their words. Within one paper they stay lexical (they are
    constant there, and the judge's calibration was fitted so), and the sentence's own word columns stay lexical
    everywhere: with spans they lowered EvidenceBench and the judge in cross-validation (BENCHMARKS.md, "Drug
    classes across the library").
    """
    n = len(candidates)
    x = np.full((n, len(FEATURES)), np.nan, dtype=np.float64)
    if n == 0:
        return x
    col = {f: i for i, f in enumerate(FEATURES)}
    bm25 = np.array([c.bm25 for c in candidates], dtype=np.float64)
    dense = np.array([c.dense for c in candidates], dtype=np.float64)
    x[:, col["bm25"]] = bm25
    top = bm25.max()
    x[:, col["bm25_norm"]] = bm25 / top if top > 0 else 0.0
    x[:, col["bm25_rank"]] = _rank_feature(np.where(bm25 > 0, bm25, np.nan))
    x[:, col["dense"]] = dense
    x[:, col["bm25_z"]] = (bm25 - bm25.mean()) / (bm25.std() + 1e-6)
    if not np.isnan(dense).all():
        x[:, col["dense_norm"]] = dense - np.nanmax(dense)
        x[:, col["dense_rank"]] = _rank_feature(dense)
        x[:, col["dense_z"]] = (dense - np.nanmean(dense)) / (np.nanstd(dense) + 1e-6)
        # rank among the sentences of the same paper and section: "the abstract's sentence closest to the query"
        by_sec: dict[tuple[str, str], list[int]] = {}
        for i, c in enumerate(candidates):
            by_sec.setdefault((c.sentence.paper_id, c.sentence.section_kind), []).append(i)
        sec_rank = np.full(n, np.nan)
        for idx in by_sec.values():
            sec_rank[idx] = _rank_feature(dense[idx])
        x[:, col["dense_section_rank"]] = sec_rank
    if aspect_sims is not None and aspect_sims.size:
        x[:, col["aspect_dense_max"]] = aspect_sims.max(axis=1)
        x[:, col["aspect_dense_mean"]] = aspect_sims.mean(axis=1)
        # for how many aspects is this sentence among the pool's 3 closest
        near = np.zeros(n)
        for j in range(aspect_sims.shape[1]):
            near[np.argsort(-aspect_sims[:, j], kind="stable")[:3]] += 1
        x[:, col["aspect_dense_top"]] = near / aspect_sims.shape[1]

    concepts = [a for a in parsed.aspects if a.role != "relation"]
    relations = {a.id for a in parsed.aspects if a.role == "relation"}
    weights = {a.id: (0.5 if a.role == "relation" else 1.0) for a in parsed.aspects}
    total_w = sum(weights.values()) or 1.0
    qstems = query_stems(parsed)
    idf = {}
    if doc_freq is not None:
        n_docs = max(doc_freq.values(), default=1.0)
        idf = {s: float(np.log((1 + n_docs) / (1 + doc_freq.get(s, 0.0))) + 1) for s in qstems}
    idf_total = sum(idf.values()) or 1.0
    sec_cols = {k: col[f"sec_{k}"] for k in SECTION_KINDS}
    pool = float(np.log2(1 + n))
    by_aspect = _stems_by_aspect(parsed, qstems) if aspect_forms else {}
    sent_stems = [{stem(w) for w in PART_RE.findall(c.sentence.text)} for c in candidates]
    paper_stems: dict[str, set[str]] = {}
    paper_n: Counter[str] = Counter()
    for c, st in zip(candidates, sent_stems, strict=True):
        paper_stems.setdefault(c.sentence.paper_id, set()).update(
            _found(qstems, st, {sp.aspect for sp in c.spans}, by_aspect))
        paper_n[c.sentence.paper_id] += 1
    title_cov: dict[str, float] = {}
    for pid in paper_stems:
        t = (titles or {}).get(pid)
        if t and qstems:  # no title known: NaN, not "shares nothing"
            found = _found(qstems, {stem(w) for w in PART_RE.findall(t)}, (title_aspects or {}).get(pid, set()),
                           by_aspect)
            title_cov[pid] = len(found) / len(qstems)
    for i, c in enumerate(candidates):
        s = c.sentence
        text = s.text
        covered = {sp.aspect for sp in c.spans}
        r = x[i]
        r[col["cov_concepts"]] = (sum(1 for a in concepts if a.id in covered) / len(concepts)) if concepts else 0.0
        r[col["cov_weighted"]] = sum(weights.get(a, 0.0) for a in covered) / total_w
        r[col["cov_relation"]] = 1.0 if covered & relations else 0.0
        r[col["n_concepts"]] = len(concepts)
        hit = qstems & sent_stems[i]
        r[col["term_overlap"]] = len(hit) / len(qstems) if qstems else 0.0
        if idf:
            r[col["idf_overlap"]] = sum(idf.get(h, 0.0) for h in hit) / idf_total
        for k, ci in sec_cols.items():
            r[ci] = 1.0 if s.section_kind == k else 0.0
        size = max(1, paper_sizes.get(s.paper_id, 0))
        r[col["rel_pos"]] = min(1.0, s.position / size)
        r[col["log_position"]] = np.log2(1 + s.position)
        r[col["log_paper_len"]] = np.log2(1 + size)
        r[col["n_tokens"]] = len(text.split())
        r[col["has_number"]] = 1.0 if _NUMBER.search(text) else 0.0
        r[col["has_pvalue"]] = 1.0 if _PVALUE.search(text) else 0.0
        r[col["has_stat"]] = 1.0 if _STAT.search(text) else 0.0
        r[col["has_percent"]] = 1.0 if _PERCENT.search(text) else 0.0
        r[col["compare_words"]] = len(_COMPARE.findall(text))
        r[col["result_verbs"]] = 1.0 if _RESULT_VERBS.search(text) else 0.0
        r[col["negation"]] = 1.0 if _NEGATION.search(text) else 0.0
        r[col["hedge"]] = 1.0 if _HEDGE.search(text) else 0.0
        r[col["first_person"]] = 1.0 if _FIRST_PERSON.search(text) else 0.0
        r[col["cites_figure"]] = 1.0 if _FIGURE.search(text) else 0.0
        r[col["pool_size"]] = pool
        r[col["paper_cov"]] = len(paper_stems[s.paper_id]) / len(qstems) if qstems else 0.0
        r[col["paper_hits"]] = np.log2(1 + paper_n[s.paper_id])
        r[col["title_overlap"]] = title_cov.get(s.paper_id, np.nan)
        if c.section_index >= 0:
            r[col["sec_rel_pos"]] = c.section_index / max(1, c.section_len)
            r[col["sec_len"]] = np.log2(1 + c.section_len)
        if neighbours is not None:
            prev = neighbours.get((s.paper_id, s.position - 1))
            nxt = neighbours.get((s.paper_id, s.position + 1))
            if prev is not None:
                r[col["bm25_prev"]] = prev[0] / top if top > 0 else 0.0
                r[col["dense_prev"]] = prev[1]
            if nxt is not None:
                r[col["bm25_next"]] = nxt[0] / top if top > 0 else 0.0
                r[col["dense_next"]] = nxt[1]
    return x
