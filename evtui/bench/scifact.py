"""SciFact (Wadden et al., EMNLP 2020) as BEIR scores it: claim -> abstracts of the 5,183-document corpus.

Qrels: a claim's evidence documents, or its cited documents when it has none, so every claim counts
(`qrels="cited"` takes the cited documents for every claim instead: 919 pairs over the 809 train claims, which
looks like how BEIR's SciFact qrels files were built). Each claim is searched as a claim over the whole corpus, sentence
hits are pooled into documents (top 100) — `bm25` ranks whole abstracts through the paper index instead
(evtui/bench/beir.py) — and nDCG@10 and Recall@{1,3,5,10,20,50} are computed by ir-measures.
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
)
from evtui.bench.driver import Benchmark, Engine, Query, RunResult, Timings, run_benchmark
from evtui.bench.jsonl import read_json_lines
from evtui.bench.runs import ItemResult
from evtui.config import load_config
from evtui.errors import EvtuiError
from evtui.library import Library

RECALL_KS: tuple[int, ...] = (1, 3, 5, 10, 20, 50)
DEPTH = 100  # documents kept per claim, as BEIR's top-100
QRELS_RULES: tuple[str, ...] = ("evidence", "cited")


def paper_id(doc_id: object) -> str:
    """Our paper id for a SciFact doc_id (what the corpus loader names it)."""
    return f"scifact:{doc_id}"


def check_limit(limit: int | None) -> None:
    """`--limit N` takes the first N claims: 0 or a negative N (which slicing would read as "all" or "all but the
    last N") is refused."""
    if limit is not None and limit < 1:
        raise EvtuiError(f"--limit must be at least 1, not {limit}")


def load_claims(path: Path) -> list[dict[str, Any]]:
    def check(obj: Any, where: str) -> None:
        if not isinstance(obj, dict) or "claim" not in obj or "id" not in obj:
            raise EvtuiError(f"{where}: not a SciFact claim (needs id and claim)")

    claims = read_json_lines(path, "SciFact claims", check, unique="id")
    if not claims:
        raise EvtuiError(f"no claims in {path}")
    return claims


def build_qrels(claims: list[dict[str, Any]], rule: str = "evidence") -> Qrels:
    """{claim id: {paper id: 1}}. Claims with neither evidence nor cited documents are left out (none in SciFact)."""
    if rule not in QRELS_RULES:
        raise EvtuiError(f"unknown qrels rule {rule!r}; choose one of: {', '.join(QRELS_RULES)}")
    qrels: Qrels = {}
    for c in claims:
        evidence = c.get("evidence") or {}
        docs = list(evidence) if evidence and rule == "evidence" else list(c.get("cited_doc_ids") or [])
        if docs:
            qrels[str(c["id"])] = {paper_id(d): 1 for d in docs}
    return qrels


def check_documents(library: Library, corpus: Path, wanted: set[str]) -> None:
    """Refuse a corpus that lacks the claims' judged documents (paper ids): Check-COVID's corpus or a subset
    scored every claim 0 without a word, measuring the files instead of the method."""
    found = {r[0] for r in library.store.con.execute(
        "SELECT id FROM papers WHERE state = 'ready' AND id IN (SELECT unnest(?))", [sorted(wanted)]).fetchall()}
    missing = sorted(wanted - found)
    if missing:
        what = "none" if len(missing) == len(wanted) else f"{len(missing)} of {len(wanted)}"
        raise EvtuiError(f"{what} of the claims' documents are in the corpus {corpus} (e.g. "
                         f"{missing[0].removeprefix('scifact:')}): is it the corpus of these claims?")


class SciFactRun(Benchmark[Query]):
    """Each claim searched over the whole corpus; its documents scored by nDCG@10 and Recall@k."""

    name = "scifact"

    def __init__(self, corpus: Path, claims_path: Path, claims: list[dict[str, Any]], qrels: Qrels, method: str,
                 seed: int, params: dict[str, Any]) -> None:
        self.corpus, self.claims_path, self.method, self.seed = corpus, claims_path, method, seed
        self.qrels, self.params = qrels, params
        self.queries = [Query(str(c["id"]), str(c["claim"])) for c in claims if str(c["id"]) in qrels]

    def prepare(self, library: Library) -> None:
        check_documents(library, self.corpus, {doc for docs in self.qrels.values() for doc in docs})

    def embed(self, library: Library, on_progress: ProgressFn | None) -> int:
        return embed_if_needed(library, self.method, on_progress)

    def requests(self) -> list[tuple[str, Query | None]]:
        return [(q.query_id, q) for q in self.queries]

    def local_ranker(self, library: Library) -> Callable[[Query], dict[str, float]]:
        return make_doc_ranker(library, self.method, self.seed, DEPTH)

    def engine_ranker(self, engine: Engine, library: Library, todo: list[Query]) -> Callable[[Query], Any]:
        answers = engine.rank_claims(library, [(q, False) for q in todo], self.method, self.seed, DEPTH, 0)
        return lambda q: answers(q.query_id)["docs"]

    def score(self, answers: Mapping[str, ItemResult | None], timings: Timings) -> RunResult:
        run = {qid: a.picked for qid, a in answers.items() if a is not None}
        measures = ["nDCG@10", *(f"R@{k}" for k in RECALL_KS)]
        means, per_query = evaluate(self.qrels, run, measures)
        result: dict[str, Any] = {
            "dataset": f"scifact:{self.claims_path.name}", "method": self.method, "n_queries": len(per_query),
            "ndcg@10": round(means["nDCG@10"], 4),
            **{f"recall@{k}": round(100 * means[f"R@{k}"], 2) for k in RECALL_KS},
            "per_item": {q: round(v["nDCG@10"], 4) for q, v in per_query.items()},
            "seconds": round(timings.total, 2),
        }
        return RunResult(result, {**self.params, "timings": {
            "ingest": round(timings.ingest, 2), "embed": round(timings.embed, 2), "search": round(timings.search, 2),
            "embedded_sentences": timings.embedded_sentences}})


def run_scifact(
    corpus: Path,
    claims_path: Path,
    method: str,
    *,
    seed: int = 0,
    limit: int | None = None,
    qrels_rule: str = "evidence",
    on_progress: ProgressFn | None = None,
    home: Path | None = None,
    done: Mapping[str, ItemResult] | None = None,
    on_item: Callable[[ItemResult], None] | None = None,
    engine: Engine | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Rank the corpus for each claim: (result, parameters and timings for `save_run`).

    `engine` ranks the claims elsewhere (evtui.scale.RayEngine); by default they are ranked here.

    The result holds nDCG@10 (0-1) and Recall@k (0-100), means over all judged claims, and nDCG@10 per claim.
    Claims in `done` (a killed run's rankings) are not searched again; `on_item` gets each new ranking.
    """
    check_method(method)
    check_limit(limit)
    claims = load_claims(claims_path)
    claims = claims[:limit] if limit else claims
    qrels = build_qrels(claims, qrels_rule)
    if not qrels:
        raise EvtuiError(f"no claim in {claims_path} has evidence or cited documents: not SciFact claims?")
    params = {"corpus": str(corpus), "claims": str(claims_path), "seed": seed, "limit": limit, "qrels": qrels_rule,
              "depth": DEPTH}
    spec = SciFactRun(corpus, claims_path, claims, qrels, method, seed, params)
    out = run_benchmark(spec, home or load_config().home, engine=engine, done=done, on_item=on_item,
                        on_progress=on_progress)
    return out.result, out.params
