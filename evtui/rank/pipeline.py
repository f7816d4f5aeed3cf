"""The `best` pipeline: candidates -> features -> learned relevance -> coverage-aware selection.

Within one paper (the EvidenceBench setting, and `--paper` searches) every sentence of the paper is a candidate,
so an abstract sentence that shares no word with the query can still win on structure and meaning. Across the
library the candidates are the BM25 pool plus, when the library is fully embedded, the dense pool.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from evtui.backend import build_query
from evtui.honest import core_of, named
from evtui.index import Hit
from evtui.ingest.sections import METADATA_KIND, caption_title
from evtui.library import Library
from evtui.models import ParsedQuery, Sentence
from evtui.query import FILLER, PART_RE, STOPWORDS, Matcher, compile_matcher, stem
from evtui.query.parse import claim_text
from evtui.querytree import Node, any_of, must
from evtui.rank.features import Candidate, featurize
from evtui.rank.model import RankerModel, default_model
from evtui.rank.select import normalise, select
from evtui.request import Filters
from evtui.verify.cues import background_label, plans

if TYPE_CHECKING:
    from evtui.embed import Embedder

# Candidates from one paper at most (its best BM25 matches beyond this): bounds a `--paper` search's work.
PAPER_CANDIDATES = 5_000
CROSS_POOL = 200  # BM25 candidates across the library
DENSE_POOL = 100  # dense candidates across the library (only when every sentence is embedded)
EMBED_LIMIT = 1500  # a paper-scoped search embeds at most this many missing sentences itself
# The paper-level channel across the library (evtui/papers.py; settings chosen by scripts/tune_paper_channel.py,
# see BENCHMARKS.md "Paper-level channel"): the top PAPER_POOL papers by title+abstract BM25 give each candidate
# a prior (1 for the top paper, falling to 0 at the PAPER_POOL-th and beyond) added to its 0-1 relevance with
# weight PAPER_WEIGHT; the top PAPER_PULL papers with no candidate yet can add their best bag-of-words sentences.
PAPER_POOL = 100
PAPER_WEIGHT = 1.0
PAPER_PRIOR = "minmax"
PAPER_PULL = 0  # pulling in 20 or 50 papers raised SciFact R@100 by under a point and nDCG@10 by nothing
# Where every ready paper has a dense vector (evtui/paper_vectors.py), the channel's ranking is the BM25 top
# PAPER_POOL and the dense top PAPER_POOL fused: each min-max rescaled over its own list, the dense one times
# PAPER_DENSE_WEIGHT (BENCHMARKS.md "Dense paper vectors in the channel": nested CV chose 1.0 in every fold;
# 0.75-1.5 are all within 0.006 nDCG@10 of it).
PAPER_DENSE_WEIGHT = 1.0
PULL_PER_PAPER = 3
# A caption's title line ("Table 1: Prediction of in vivo occupancy by HNF1 and HNF4.") names a hypothesis's
# concepts as densely as any finding, and topped PDF searches for it, yet reports nothing: its relevance (0-1, plus
# at most the abstract bonus and the paper prior) is lowered by more than that whole range, so it follows every
# other candidate and is shown only when nothing else is left. No benchmark library holds a caption (JATS and
# SciFact/Check-COVID/EvidenceBench texts keep none), so this leaves their figures unchanged.
CAPTION_TITLE_PENALTY = 3.0
# Within a paper, a results or conclusions sentence that states the query's relation (its subject, its outcome and
# a relation word, or the finding in the negative: "Conclusions: Metformin did not reduce the recurrence of
# colorectal adenomas.") is the paper's answer: it goes before the methods, eligibility and keyword lines that share
# the query's words ("Participants took metformin 500 mg …" ranked above it). The bonus is on the 0-1 relevance:
# 0.3 leaves EvidenceBench dev's four tasks within 0.3 points of none (1.0 cost Result-ER@optimal 15 points: the
# labels reward covering the hypothesis's parts, not its one answer).
RELATION_BONUS = 0.3
# Sections whose sentences report findings, and a structured abstract's findings by their label ("Conclusions:",
# "RESULTS"): an unlabelled abstract sentence may be its background or aims (a bonus for those cost EvidenceBench's
# Result-ER@5 0.8 points, docs/experiments/ranker.md).
_FINDING_KINDS = frozenset({"results", "conclusion"})
_FINDING_LABEL = re.compile(r"^\s*(?:results?|findings|conclusions?|interpretation)\b\s*[:.]?", re.I)
# Library-wide, plain BM25's top RECALL_FLOOR sentences for the same words are always in `best`'s pool (the aspect
# query's top CROSS_POOL), and in its results whenever the list has room for twice as many: one the model and the
# paper prior ranked below the list takes one of its last places. The model orders them: holding each at <= 2x its
# BM25 rank cost SciFact train nDCG@10 0.022 (0.749 -> 0.727, in-sample; docs/experiments/ranker.md), because the
# learned order beats BM25's on the claims' evidence papers.
RECALL_FLOOR = 10
# Library-wide, when at most this many candidates name every concept of the query, the paper prior does not bury
# them: they are ranked in the first FULL_COVER_RANK (+1 for each more) whatever their paper's prior ("Vitamin D
# insufficiency … increase the risk of skeletal fractures", the only sentence on both concepts, was rank 37 for
# "Vitamin D supplementation reduces fracture risk").
FULL_COVER_FEW = 3
FULL_COVER_RANK = 3


@dataclass
class Pool:
    candidates: list[Candidate]
    titles: dict[str, str]
    vectors: np.ndarray | None  # one row per candidate; zero rows where no embedding is cached
    x: np.ndarray
    notes: list[str] = field(default_factory=list)
    scoped: bool = False  # every sentence of one paper (True) or a library-wide pool (False)
    papers: list[tuple[str, float]] = field(default_factory=list)  # the paper channel's ranking (library-wide)


PoolCache = dict[tuple[object, ...], Pool]  # paper-scoped candidate pools, by query + paper content


def dense_text(parsed: ParsedQuery) -> str:
    """A triplet embeds as its parts in order; a claim or hypothesis as written, without citations or figures."""
    return " ".join(a.label for a in parsed.aspects) if parsed.mode == "triplet" else claim_text(parsed)


def fuse_papers(bm25: Sequence[tuple[str, float]], dense: Sequence[tuple[str, float]], weight: float,
                limit: int = PAPER_POOL) -> list[tuple[str, float]]:
    """One paper ranking from the BM25 and the dense one: each rescaled to 0-1 over its own list (their scales
    differ), the dense one times `weight`, summed (a paper absent from a list gets 0 from it), best first."""
    fused: dict[str, float] = {}
    for ranking, w in ((bm25, 1.0), (dense, weight)):
        for pid, prior in paper_prior(ranking, "minmax").items():
            fused[pid] = fused.get(pid, 0.0) + w * prior
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]


def paper_prior(papers: Sequence[tuple[str, float]], form: str = PAPER_PRIOR) -> dict[str, float]:
    """Paper id -> prior in [0, 1] from the paper channel's ranking (best first); papers not in it get none.

    `minmax`: BM25 rescaled between the last and the first paper listed (BM25 has no fixed scale across
    queries); `ratio`: BM25 / the top paper's; `rrf`: 61 / (60 + rank), rank 1 -> 1."""
    if not papers:
        return {}
    if form == "rrf":
        return {pid: 61.0 / (60.0 + r) for r, (pid, _s) in enumerate(papers, 1)}
    hi, lo = papers[0][1], papers[-1][1]
    if form == "ratio":
        return {pid: s / hi if hi > 0 else 0.0 for pid, s in papers}
    return {pid: (s - lo) / (hi - lo) if hi > lo else 1.0 for pid, s in papers}


def _load_vectors(library: Library, sents: Sequence[Sentence]) -> dict[str, np.ndarray]:
    """Cached vectors of these sentences whose text is unchanged: looked up by id, hashes checked on the texts
    we hold, so no join over the sentences table (a scan at 10M sentences)."""
    from evtui.embed import has_table, vectors_for

    if not sents or not has_table(library.store.con):
        return {}
    return vectors_for(library, {s.id: s.text for s in sents})[0]


def _section_runs(sentences: Sequence[Sentence]) -> dict[str, tuple[int, int]]:
    """sentence id -> (index within its run of same-section sentences, run length); headings start runs."""
    out: dict[str, tuple[int, int]] = {}
    run: list[Sentence] = []

    def flush() -> None:
        for i, s in enumerate(run):
            out[s.id] = (i, len(run))
        run.clear()

    for s in sentences:
        if s.is_heading or (run and (s.section_kind, s.section_title) != (run[-1].section_kind, run[-1].section_title)):
            flush()
        if not s.is_heading:
            run.append(s)
    flush()
    return out


class BestRanker:
    """Holds the model and embedder across searches (both are slow to load)."""

    def __init__(self, library: Library, model: RankerModel | None = None,
                 embedder: Embedder | None = None, *, embed: bool = True, pool_cache: PoolCache | None = None) -> None:
        self.library = library
        self.embed = embed  # False: use cached embeddings only (the judge must not stall on embedding)
        self._model = model
        self._embedder = embedder
        self._qvec: dict[str, np.ndarray] = {}
        # Paper-scoped pools, keyed by query + paper content; `pool_cache` shares them with other rankers.
        self._pools: PoolCache = {} if pool_cache is None else pool_cache
        # The paper channel's settings (module constants; scripts/tune_paper_channel.py varies them).
        self.paper_weight, self.paper_form, self.paper_pull = PAPER_WEIGHT, PAPER_PRIOR, PAPER_PULL
        self.paper_dense_weight = PAPER_DENSE_WEIGHT
        # The rank rules (module constants, set off to compare them: docs/experiments/ranker.md).
        self.relation_bonus, self.recall_floor, self.full_cover_few = RELATION_BONUS, RECALL_FLOOR, FULL_COVER_FEW

    @property
    def model(self) -> RankerModel:
        if self._model is None:
            self._model = default_model()
        return self._model

    def sibling(self, *, embed: bool) -> BestRanker:
        """A ranker sharing this one's model, embedder and pool cache, that embeds missing sentences or not:
        the local judge (embed=False) takes the pools a search already built instead of rebuilding them."""
        other = BestRanker(self.library, self.model, self._embedder, embed=embed, pool_cache=self._pools)
        other._qvec = self._qvec
        other.paper_weight, other.paper_form, other.paper_pull = self.paper_weight, self.paper_form, self.paper_pull
        other.paper_dense_weight = self.paper_dense_weight
        other.relation_bonus, other.recall_floor = self.relation_bonus, self.recall_floor
        other.full_cover_few = self.full_cover_few
        return other

    def _embedder_or_none(self) -> Embedder | None:
        from evtui.embed import get_embedder, model_available

        if self._embedder is None and model_available():
            self._embedder = get_embedder(self.library.config.cache_dir)
        return self._embedder

    def _query_vector(self, text: str) -> np.ndarray | None:
        v = self._qvec.get(text)
        if v is None:
            emb = self._embedder_or_none()
            if emb is None:
                return None
            if len(self._qvec) > 256:
                self._qvec.clear()
            v = self._qvec[text] = emb.embed_one(text)
        return v

    # -- candidates ------------------------------------------------------------------------------
    def pool_for(self, parsed: ParsedQuery, filters: Filters) -> Pool:
        """The pool for a parsed query under these filters, with the query `best` searches with (what the Searcher
        builds): the judge asks for each paper's pool this way, and gets the search's own when it is cached."""
        text_query, _notes = build_query(self.library.index, parsed)
        return self.pool(parsed, must(text_query, self.library.index.filter_query(filters)),
                         compile_matcher(parsed.aspects), filters)

    def pool(self, parsed: ParsedQuery, query: Node, matcher: Matcher, filters: Filters) -> Pool:
        lib = self.library
        paper, section, year_from, year_to = filters.paper, filters.section, filters.year_from, filters.year_to
        notes: list[str] = []
        fresh: dict[str, np.ndarray] = {}  # vectors computed for this search only (a read-only library)
        full = False  # the whole library embedded (asked only across the library)
        key: tuple[object, ...] | None = None
        papers: list[tuple[str, float]] = []  # the paper channel plays no part within one paper
        if paper is not None:
            # The same query on the same paper (a benchmark's four tasks, a judge after a search) reuses the pool;
            # the paper's content hash is in the key, so a re-ingested paper is never served stale.
            p = lib.store.paper(paper)
            key = (parsed.text, parsed.mode, tuple((a.id, tuple(a.terms)) for a in parsed.aspects), paper,
                   p.content_hash if p else None, section, year_from, year_to)
            # A pool built by an embedding ranker is what a non-embedding one would build after it (the paper's
            # vectors are stored by then); the reverse does not hold, so `embed` is part of the key.
            hit = self._pools.get((*key, True))
            if hit is None and not self.embed:
                hit = self._pools.get((*key, False))
            if hit is not None:
                return hit
            key = (*key, self.embed)
        if paper is not None:
            sents_all = lib.store.sentences(paper)
            meta = lib.store.paper(paper)
            year = meta.year if meta is not None else None
            sents = [s for s in sents_all if not s.is_heading and (section is None or s.section_kind == section)]
            if not filters.years_admit(year):
                sents = []
            bm25 = {h.sentence.id: h.score for h in lib.index.search(query, max(1, min(len(sents_all),
                                                                                        PAPER_CANDIDATES)))}
            if len(sents) > PAPER_CANDIDATES:
                # One giant paper (a book, a 100 MB text): features, vectors and the ranker for a million
                # sentences would exhaust the machine; its best BM25 matches are the candidates.
                notes.append(f"{paper} has {len(sents):,} sentences: ranked its {PAPER_CANDIDATES:,} best "
                             "word matches")
                sents = [s for s in sents if s.id in bm25]
            titles = {paper: meta.title if meta else ""}
            sizes = {paper: len(sents_all)}
            missing = self._missing(sents)
            if missing and self.embed and len(missing) <= EMBED_LIMIT and self._embedder_or_none() is not None:
                if lib.read_only:  # beside the app, which holds the file: embedded for this search, not stored
                    fresh = self._embed_unstored(sents, set(missing))
                else:
                    from evtui.embed import ensure_embeddings

                    ensure_embeddings(lib, missing, embedder=self._embedder)
            elif missing:
                notes.append(f"{len(missing)} sentences of {paper} have no embedding; run `evtui embed`")
            context = sents_all
        else:
            hits = lib.index.search(query, CROSS_POOL)
            bm25 = {h.sentence.id: h.score for h in hits}
            # A bag-of-words query too: the aspect query wants a concept's words together, which misses
            # paraphrases ("tissue-resident macrophages" vs "macrophages resident in tissue").
            bow_hits = self._bag_of_words(parsed, filters)
            hits += [h for h in bow_hits if h.sentence.id not in bm25]
            for h in bow_hits:
                bm25.setdefault(h.sentence.id, 0.0)
            papers = self._paper_channel(parsed, filters)
            for h in self._pull_in(parsed, papers, {h.sentence.paper_id for h in hits}, filters):
                if h.sentence.id not in bm25:
                    hits.append(h)
                    bm25[h.sentence.id] = 0.0  # as a bag-of-words hit: outside the aspect-BM25 pool
            sents = [h.sentence for h in hits]
            titles = {h.sentence.paper_id: h.title for h in hits}
            full = self._fully_embedded()  # once a search: the dense pool and the cached vectors both ask
            if full:
                sents, titles = self._add_dense(parsed, sents, titles, filters)
            sizes = lib.store.sentence_counts(list({s.paper_id for s in sents}))
            context = sents
        # Across the library, cached vectors count only once every sentence has one: a partly embedded library
        # (the sentences a dense or hybrid search, a paper-scoped search or an unfinished `embed` stored) would
        # give a dense feature to some candidates and none to others, so the same query would rank differently
        # after unrelated searches. Within a paper every sentence has its vector by now (or none does: a note).
        vecs = {**_load_vectors(lib, sents), **fresh} if paper is not None or full else {}
        qv = self._query_vector(dense_text(parsed)) if vecs else None
        dense = {sid: float(v @ qv) for sid, v in vecs.items()} if qv is not None else {}
        runs = _section_runs(context) if paper is not None else {}
        cands = [Candidate(s, matcher.spans(s.text), bm25.get(s.id, 0.0), dense.get(s.id, float("nan")),
                           *runs.get(s.id, (-1, 0)))
                 for s in sents]
        neighbours = {(s.paper_id, s.position): (bm25.get(s.id, 0.0), dense.get(s.id, float("nan")))
                      for s in context}
        df: Counter[str] = Counter()
        for s in context:
            df.update({stem(w) for w in PART_RE.findall(s.text)})
        df["\x00n"] = len(context)  # the pool size, so IDF has a denominator even for unseen stems
        vectors = None
        aspect_sims = None
        if vecs:
            vectors = np.zeros((len(cands), len(next(iter(vecs.values())))), dtype=np.float32)
            for i, c in enumerate(cands):
                v = vecs.get(c.sentence.id)
                if v is not None:
                    vectors[i] = v
            av = self._aspect_vectors(parsed)
            if av is not None and len(vecs) == len(cands):
                aspect_sims = vectors @ av.T
        # Across the library a paper is about "statins" when it is a trial of pravastatin (featurize, aspect_forms).
        title_aspects = ({pid: {sp.aspect for sp in matcher.spans(t)} for pid, t in titles.items() if t}
                         if paper is None else None)
        x = featurize(parsed, cands, paper_sizes=sizes, neighbours=neighbours, doc_freq=df, aspect_sims=aspect_sims,
                      titles=titles, title_aspects=title_aspects, aspect_forms=paper is None)
        pool = Pool(cands, titles, vectors, x, notes, scoped=paper is not None, papers=papers)
        if key is not None:
            if len(self._pools) >= 512:
                self._pools.pop(next(iter(self._pools)))
            self._pools[key] = pool
        return pool

    @staticmethod
    def _words(parsed: ParsedQuery) -> list[str]:
        return list(dict.fromkeys(w.lower() for w in PART_RE.findall(claim_text(parsed))
                                  if w.lower() not in STOPWORDS and w.lower() not in FILLER and len(w) > 1))

    def _paper_channel(self, parsed: ParsedQuery, filters: Filters) -> list[tuple[str, float]]:
        """The top papers by title + abstract BM25 for the query's words ([] for an old read-only library)."""
        if not self._words(parsed) or self.paper_weight <= 0 and self.paper_pull <= 0:
            return []
        papers = paper_bm25(self.library, parsed, PAPER_POOL, filters)
        if self.paper_dense_weight > 0:
            from evtui.paper_vectors import complete_matrix

            matrix = complete_matrix(self.library)
            qv = self._query_vector(dense_text(parsed)) if matrix is not None else None
            if matrix is not None and qv is not None:
                wide = filters.library_wide()
                dense = matrix.search(qv, PAPER_POOL, year_from=wide.year_from, year_to=wide.year_to)
                papers = fuse_papers(papers, dense, self.paper_dense_weight)
        return papers

    @staticmethod
    def _alternatives(parsed: ParsedQuery, words: Sequence[str]) -> dict[str, list[str]]:
        """A one-word concept's other forms (a drug class's members, an abbreviation's expansion), by the word:
        the paper channel reads "statins" in a pravastatin trial as the sentence highlighter does."""
        out: dict[str, list[str]] = {}
        wanted = set(words)
        for a in parsed.aspects:
            word = a.label.lower()
            if a.role != "relation" and word in wanted and len(a.terms) > 1:
                out.setdefault(word, []).extend(t for t in a.terms if t.lower() != word)
        return out

    def _pull_in(self, parsed: ParsedQuery, papers: Sequence[tuple[str, float]], have: set[str],
                 filters: Filters) -> list[Hit]:
        """Sentences of the top papers that no sentence query reached: a claim spread over an abstract
        matches no single sentence well enough for the sentence pools, yet its paper may be the answer."""
        missing = [pid for pid, _s in papers[:self.paper_pull] if pid not in have]
        words = self._words(parsed)
        if not missing or not words:
            return []
        index = self.library.index
        bow = any_of([index.phrase_query([w])[0] for w in words[:64]])
        clauses = index.filter_query(filters.library_wide(), papers=missing)
        return index.search(must(bow, clauses), PULL_PER_PAPER * len(missing))

    def _bag_of_words(self, parsed: ParsedQuery, filters: Filters) -> list[Hit]:
        index = self.library.index
        words = self._words(parsed)
        if not words:
            return []
        bow = any_of([index.phrase_query([w])[0] for w in words[:64]])
        return index.search(must(bow, index.filter_query(filters.library_wide())), CROSS_POOL)

    def _aspect_vectors(self, parsed: ParsedQuery) -> np.ndarray | None:
        """One embedding per concept aspect (a triplet's head and tail, a hypothesis's key concepts)."""
        labels = [a.label for a in parsed.aspects if a.role != "relation"]
        if len(labels) < 2:
            return None
        rows = [self._query_vector(label) for label in labels]
        if any(r is None for r in rows):
            return None
        return np.vstack(rows)  # type: ignore[arg-type]

    def _missing(self, sents: Sequence[Sentence]) -> list[str]:
        from evtui.embed import missing_sentences

        if not sents:
            return []
        return [sid for sid, _t, _h in missing_sentences(self.library, [s.id for s in sents])]

    def _embed_unstored(self, sents: Sequence[Sentence], missing: set[str]) -> dict[str, np.ndarray]:
        todo = [s for s in sents if s.id in missing]
        if not todo or self._embedder is None:
            return {}
        mat = self._embedder.embed([s.text for s in todo])
        return {s.id: np.asarray(v, dtype=np.float32) for s, v in zip(todo, mat, strict=True)}

    def _fully_embedded(self) -> bool:
        """Whether every sentence of the library has its current vector."""
        from evtui.embed import cached_coverage, has_rows

        # Cheap test first: most libraries have no embeddings at all. The coverage join itself (~20 ms on the demo
        # library, seconds at 10M sentences) runs once per library state, not once per search.
        if not has_rows(self.library.store.con):
            return False
        done, total = cached_coverage(self.library)
        return 0 < total == done

    def _add_dense(self, parsed: ParsedQuery, sents: list[Sentence], titles: dict[str, str],
                   filters: Filters) -> tuple[list[Sentence], dict[str, str]]:
        """Add the dense pool (asked only when the whole library is embedded: a partial one would bias the pool)."""
        if self._embedder_or_none() is None:
            return sents, titles
        from evtui.dense import DenseRetriever, titled_sentences

        retriever = DenseRetriever(self.library, embedder=self._embedder, auto_embed_limit=0)
        hits = retriever.search(dense_text(parsed), k=DENSE_POOL, filters=filters.library_wide())
        have = {s.id for s in sents}
        extra = titled_sentences(self.library, [sid for sid, _ in hits if sid not in have])
        for sid, _ in hits:
            if sid in extra:
                s, title = extra[sid]
                sents.append(s)
                titles.setdefault(s.paper_id, title)
        return sents, titles

    # -- ranking ---------------------------------------------------------------------------------
    def rank(self, parsed: ParsedQuery, pool: Pool, k: int, *, results: bool = False) -> list[tuple[int, float]]:
        """(candidate index, model score) of the K chosen sentences, in order."""
        head = "results" if results else "evidence"
        scores = self.model.score(pool.x, head)
        params = self.model.selection.get(head, {})
        weights = {a.id: (0.5 if a.role == "relation" else 1.0) for a in parsed.aspects}
        # The abstract is a paper's own summary of its evidence; how much to favour it is learned
        # (scripts/train_ranker.py picks it by cross-validation), not assumed.
        # It was learned within papers (which of a paper's sentences to pick); across the library it would only
        # favour abstracts over full texts, so it is not applied there.
        bonus = float(params.get("abstract_bonus", 0.0)) if pool.scoped else 0.0
        is_abstract = np.array([c.sentence.section_kind == "abstract" for c in pool.candidates], dtype=np.float64)
        relevance = normalise(scores) + bonus * is_abstract
        spread = (float(np.max(scores)) - float(np.min(scores)) or 1.0) if len(scores) else 1.0
        if pool.scoped and self.relation_bonus > 0 and len(scores):
            states = np.array([self._states_relation(parsed, c) for c in pool.candidates], dtype=np.float64)
            relevance = relevance + self.relation_bonus * states
            scores = scores + self.relation_bonus * states * spread
        if pool.papers and self.paper_weight > 0 and len(scores):
            # Across the library a sentence is better evidence when its paper as a whole is about the query.
            prior = paper_prior(pool.papers, self.paper_form)
            boost = self.paper_weight * np.array([prior.get(c.sentence.paper_id, 0.0) for c in pool.candidates])
            relevance = relevance + boost
            # Reported scores stay on the model's scale, and agree with the order.
            scores = scores + boost * spread
        labels = np.array([caption_title(c.sentence.text, c.sentence.section_kind, c.sentence.section_title,
                                         c.section_index) or c.sentence.section_kind == METADATA_KIND
                           for c in pool.candidates], dtype=np.float64)
        if labels.any():  # a caption's title line, a keywords or registration line: after every other candidate
            relevance = relevance - CAPTION_TITLE_PENALTY * labels
            scores = scores - CAPTION_TITLE_PENALTY * labels * spread
        picked = select(
            relevance, k,
            covered=[{sp.aspect for sp in c.spans} for c in pool.candidates], aspect_weights=weights,
            vectors=pool.vectors, texts=[c.sentence.text for c in pool.candidates],
            aspect_weight=float(params.get("aspect_weight", 0.0)), redundancy=float(params.get("redundancy", 0.0)),
        )
        lifted: set[int] = set()
        if not pool.scoped:
            full = sorted(self._full_cover(parsed, pool), key=lambda i: -scores[i])
            picked, lifted = self._floor(pool, picked, k, skip=labels, full=full)
        out = [(i, float(scores[i])) for i in picked]
        for n in range(len(out) - 1, 0, -1):  # a sentence the floor lifted is reported between its neighbours
            i, score = out[n]
            if i in lifted:
                after = out[n + 1][1] if n + 1 < len(out) else score
                before = next((sc for j, sc in reversed(out[:n]) if j not in lifted), max(score, after))
                out[n] = (i, min(before, max(score, after)))
        return out

    @staticmethod
    def _states_relation(parsed: ParsedQuery, c: Candidate) -> bool:
        """A finding that names the query's subject and outcome and says how they relate (or that they do not)."""
        s = c.sentence
        finding = s.section_kind in _FINDING_KINDS or (s.section_kind == "abstract" and _FINDING_LABEL.match(s.text))
        if not finding or plans(s.text) or background_label(s.text, s.section_kind):
            return False
        core = core_of(s.text, parsed.aspects, {sp.aspect for sp in c.spans},
                       claim=parsed.text if parsed.mode == "claim" else "")
        return core.both and core.relation

    def _full_cover(self, parsed: ParsedQuery, pool: Pool) -> set[int]:
        """The candidates that name every concept of the query, when they are few (else the prior ranks them)."""
        if self.full_cover_few <= 0:
            return set()
        wanted = {a.id for a in parsed.aspects if a.role != "relation"}
        if len(wanted) < 2:
            return set()
        found = {i for i, c in enumerate(pool.candidates)
                 if wanted <= named(c.sentence.text, parsed.aspects, {sp.aspect for sp in c.spans})}
        return found if len(found) <= self.full_cover_few else set()

    def _floor(self, pool: Pool, picked: list[int], k: int, skip: np.ndarray,
               full: Sequence[int] = ()) -> tuple[list[int], set[int]]:
        """The few sentences that name every concept (`full`) in the first FULL_COVER_RANK places (one more for each
        more); plain BM25's top sentences (the aspect query's own order) in the list when it has room for twice as
        many, in its last places; and the candidates moved to be there. Caption titles and metadata lines (`skip`)
        keep their place last."""
        out = list(picked)
        moved: set[int] = set()
        for n, i in enumerate(i for i in full if not skip[i]):
            limit = FULL_COVER_RANK + n
            if i in out[:limit] or limit > k:
                continue
            if i in out:
                out.remove(i)
            out.insert(min(limit, len(out) + 1) - 1, i)
            moved.add(i)
        out = out[:k]
        if self.recall_floor <= 0 or k < 2 * self.recall_floor:
            return out, moved
        order = sorted((i for i, c in enumerate(pool.candidates) if c.bm25 > 0 and not skip[i]),
                       key=lambda i: -pool.candidates[i].bm25)[:self.recall_floor]
        missing = [i for i in order if i not in out]
        if missing:
            keep = set(order) | moved
            # the list's last places that the floor may take: the lowest-ranked ones it does not itself hold
            excess = max(0, len(out) + len(missing) - k)
            free = set([n for n in reversed(range(len(out))) if out[n] not in keep][:excess])
            out = [i for n, i in enumerate(out) if n not in free]
            tail = len(out)
            while tail and skip[out[tail - 1]]:  # captions and metadata lines stay last
                tail -= 1
            out = out[:tail] + missing + out[tail:]
            moved.update(missing)
        return out[:k], moved


def paper_bm25(library: Library, parsed: ParsedQuery, limit: int, filters: Filters) -> list[tuple[str, float]]:
    """(paper id, BM25 over title + abstract) of the top `limit` papers for a query's words: `best`'s paper channel
    without its dense half, and doc-level `bm25` in the benchmarks (whole-abstract BM25 is what a document ranking
    wants; pooling sentence hits misses a claim spread over two sentences). [] for an old read-only library."""
    words = BestRanker._words(parsed)
    if not words:
        return []
    return library.index.paper_search(words, limit, filters=filters.library_wide(),
                                      alternatives=BestRanker._alternatives(parsed, words))
