"""Check-COVID (Wang et al., Findings of ACL 2023): evidence sentences within a claim's abstract, and the abstract.

Two measures per claim, both through ir-measures:
- sentence recall@{1,3,5}: the claim is searched within its own abstract (`paper=` filter); recall is the
  share of its gold evidence sentences (PRIMARY and SUPPLEMENTARY) in the top k, averaged over the claims
  that have evidence (every claim in train and dev, NOTENOUGHINFO ones included);
- document recall@{1,5,10,20}: the claim is searched over the whole corpus; its abstract is the one
  relevant document. Every claim counts.

Gold `sent_index` values count abstract sentences from 0; in the library the title is sentence 0 of a paper,
so indices are mapped by walking the corpus file the way the loader does and checking each sentence's text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from evtui.bench.beir import (
    ProgressFn,
    Qrels,
    check_method,
    embed_if_needed,
    evaluate,
    make_doc_ranker,
    make_sentence_ranker,
    ranked,
)
from evtui.bench.driver import Benchmark, Engine, Query, RunResult, Timings, run_benchmark
from evtui.bench.jsonl import read_json_lines
from evtui.bench.runs import ItemResult
from evtui.bench.scifact import check_limit
from evtui.config import load_config
from evtui.errors import EvtuiError
from evtui.library import Library

SENTENCE_KS: tuple[int, ...] = (1, 3, 5)
DOC_KS: tuple[int, ...] = (1, 5, 10, 20)
DEPTH = 100


def paper_id(cord_id: object) -> str:
    """Our paper id for a Check-COVID cord_id (what the corpus loader names it)."""
    return f"cord:{cord_id}"


def _json_lines(path: Path, what: str, unique: str | None = None) -> list[dict[str, Any]]:
    """Check-COVID's .json files are JSON Lines (`unique`: a field no two rows may share)."""
    def check(obj: Any, where: str) -> None:
        if not isinstance(obj, dict):
            raise EvtuiError(f"{where}: expected a JSON object")

    rows = read_json_lines(path, f"Check-COVID {what}", check, unique=unique)
    if not rows:
        raise EvtuiError(f"no {what} in {path}")
    return rows


def load_claims(path: Path) -> list[dict[str, Any]]:
    claims = _json_lines(path, "claims", unique="id")
    for c in claims:
        if not {"id", "claim", "cord_id"} <= c.keys() or not isinstance(c.get("evidence_set", []), list):
            raise EvtuiError(f"{path}: claim {c.get('id')!r} is not a Check-COVID claim (id, claim, cord_id, "
                             "evidence_set)")
    return claims


def gold_sentence_ids(corpus: Path, library: Library, cord_ids: set[str]) -> dict[str, list[str | None]]:
    """cord_id -> the library sentence id of each abstract sentence index (None for a sentence the loader
    dropped as empty). Raises when a stored sentence's text differs from the corpus file's: a wrong mapping
    would silently score the wrong sentences."""
    out: dict[str, list[str | None]] = {}
    for doc in _json_lines(corpus, "corpus"):
        cid = str(doc.get("cord_id"))
        if cid not in cord_ids:
            continue
        stored = [s for s in library.store.sentences(paper_id(cid)) if s.section_kind != "title" and not s.is_heading]
        it = iter(stored)
        ids: list[str | None] = []
        for raw in doc.get("abstract") or []:
            text = " ".join(str(raw).split())
            if not text:
                ids.append(None)
                continue
            s = next(it, None)
            if s is None or s.text != text:
                raise EvtuiError(f"Check-COVID sentence {len(ids)} of {cid} does not match the library's sentence")
            ids.append(s.id)
        out[cid] = ids
    missing = cord_ids - out.keys()
    if missing:
        raise EvtuiError(f"{len(missing)} claim paper(s) not in the corpus, e.g. {sorted(missing)[0]}")
    return out


def build_qrels(claims: list[dict[str, Any]], gold: dict[str, list[str | None]]) -> tuple[Qrels, Qrels]:
    """(sentence qrels, document qrels). Claims without evidence sentences get document qrels only."""
    sentence: Qrels = {}
    doc: Qrels = {}
    for c in claims:
        cid, qid = str(c["cord_id"]), str(c["id"])
        doc[qid] = {paper_id(cid): 1}
        ids = gold[cid]
        wanted = sorted({int(e["sent_index"]) for e in c.get("evidence_set") or []})
        if any(not 0 <= i < len(ids) for i in wanted):
            raise EvtuiError(f"claim {qid}: an evidence sentence index is out of range for {cid}")
        sids = {sid for i in wanted if (sid := ids[i])}
        if sids:
            sentence[qid] = dict.fromkeys(sids, 1)
    return sentence, doc


class CheckCovidRun(Benchmark[Query]):
    """Each claim searched within its abstract (sentences, when it has evidence) and over the corpus (documents)."""

    name = "checkcovid"

    def __init__(self, corpus: Path, claims_path: Path, claims: list[dict[str, Any]], method: str, seed: int,
                 params: dict[str, Any]) -> None:
        self.corpus, self.claims_path, self.claims, self.method, self.seed = corpus, claims_path, claims, method, seed
        self.params = params
        self.sentence_qrels: Qrels = {}
        self.doc_qrels: Qrels = {}

    def prepare(self, library: Library) -> None:
        gold = gold_sentence_ids(self.corpus, library, {str(c["cord_id"]) for c in self.claims})
        self.sentence_qrels, self.doc_qrels = build_qrels(self.claims, gold)

    def embed(self, library: Library, on_progress: ProgressFn | None) -> int:
        return embed_if_needed(library, self.method, on_progress)

    def requests(self) -> list[tuple[str, Query | None]]:
        return [(str(c["id"]), Query(str(c["id"]), str(c["claim"]), paper_id(c["cord_id"]))) for c in self.claims]

    def _checked(self, q: Query, picked: list[str] | None, docs: dict[str, float]) -> dict[str, Any]:
        """The claim's sentences within its paper (when it has evidence) and its documents."""
        k = max(SENTENCE_KS)
        if picked is not None and len(picked) > k:
            raise EvtuiError(f"{self.method} returned {len(picked)} sentences for k={k} on {q.query_id}")
        return {"sentences": None if picked is None else ranked(picked), "docs": docs}

    def local_ranker(self, library: Library) -> Callable[[Query], dict[str, Any]]:
        rank_sentences = make_sentence_ranker(library, self.method, self.seed, max(SENTENCE_KS))
        rank_docs = make_doc_ranker(library, self.method, self.seed, DEPTH)

        def answer(q: Query) -> dict[str, Any]:
            return self._checked(q, rank_sentences(q) if q.query_id in self.sentence_qrels else None,
                                 rank_docs(Query(q.query_id, q.text)))
        return answer

    def engine_ranker(self, engine: Engine, library: Library, todo: list[Query]) -> Callable[[Query], dict[str, Any]]:
        answers = engine.rank_claims(library, [(q, q.query_id in self.sentence_qrels) for q in todo], self.method,
                                     self.seed, DEPTH, max(SENTENCE_KS))

        def answer(q: Query) -> dict[str, Any]:
            a = answers(q.query_id)
            return self._checked(q, a.get("sentences") if q.query_id in self.sentence_qrels else None, a["docs"])
        return answer

    def score(self, answers: Mapping[str, ItemResult | None], timings: Timings) -> RunResult:
        sentence_run: dict[str, dict[str, float]] = {}
        doc_run: dict[str, dict[str, float]] = {}
        for qid, a in answers.items():
            if a is None:
                continue
            if a.picked["sentences"] is not None:
                sentence_run[qid] = a.picked["sentences"]
            doc_run[qid] = a.picked["docs"] or {}
        s_means, s_per = evaluate(self.sentence_qrels, sentence_run, [f"R@{k}" for k in SENTENCE_KS])
        d_means, _ = evaluate(self.doc_qrels, doc_run, [f"R@{k}" for k in DOC_KS])
        result: dict[str, Any] = {
            "dataset": f"check-covid:{self.claims_path.name}", "method": self.method,
            "n_queries": len(self.doc_qrels),
            **{f"sentence_recall@{k}": round(100 * s_means[f"R@{k}"], 2) for k in SENTENCE_KS},
            **{f"doc_recall@{k}": round(100 * d_means[f"R@{k}"], 2) for k in DOC_KS},
            "per_item": {q: round(100 * v["R@3"], 2) for q, v in s_per.items()},
            "seconds": round(timings.total, 2),
        }
        return RunResult(result, {
            **self.params, "n_sentence_queries": len(s_per), "per_item": "sentence_recall@3",
            "timings": {"ingest": round(timings.ingest, 2), "embed": round(timings.embed, 2),
                        "search": round(timings.search, 2), "embedded_sentences": timings.embedded_sentences}})


def run_checkcovid(
    corpus: Path,
    claims_path: Path,
    method: str,
    *,
    seed: int = 0,
    limit: int | None = None,
    on_progress: ProgressFn | None = None,
    home: Path | None = None,
    done: Mapping[str, ItemResult] | None = None,
    on_item: Callable[[ItemResult], None] | None = None,
    engine: Engine | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Score each claim's evidence sentences and its abstract: (result, parameters and timings for `save_run`).

    `engine` ranks the claims elsewhere (evtui.scale.RayEngine); by default they are ranked here.

    Recalls are 0-100; `per_item` is each claim's sentence recall@3 (claims with evidence). Claims in `done`
    (a killed run's rankings) are not searched again; `on_item` gets each new claim's rankings.
    """
    check_method(method)
    check_limit(limit)
    claims = load_claims(claims_path)
    claims = claims[:limit] if limit else claims
    params = {"corpus": str(corpus), "claims": str(claims_path), "seed": seed, "limit": limit, "depth": DEPTH}
    spec = CheckCovidRun(corpus, claims_path, claims, method, seed, params)
    out = run_benchmark(spec, home or load_config().home, engine=engine, done=done, on_item=on_item,
                        on_progress=on_progress)
    return out.result, out.params
