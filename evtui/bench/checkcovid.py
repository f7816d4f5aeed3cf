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

import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from evtui.bench.beir import (
    ProgressFn,
    Qrels,
    Query,
    check_method,
    corpus_library,
    embed_if_needed,
    evaluate,
    make_doc_ranker,
    make_sentence_ranker,
    ranked,
    resumed_or_ranked,
)
from evtui.bench.runs import ItemResult
from evtui.config import load_config
from evtui.errors import EvtuiError
from evtui.library import Library

SENTENCE_KS: tuple[int, ...] = (1, 3, 5)
DOC_KS: tuple[int, ...] = (1, 5, 10, 20)
DEPTH = 100


def paper_id(cord_id: object) -> str:
    """Our paper id for a Check-COVID cord_id (what the corpus loader names it)."""
    return f"cord:{cord_id}"


def _json_lines(path: Path, what: str) -> list[dict[str, Any]]:
    """Check-COVID's .json files are JSON Lines."""
    rows: list[dict[str, Any]] = []
    try:
        with path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                obj = json.loads(line)
                if not isinstance(obj, dict):
                    raise EvtuiError(f"{path} line {lineno}: expected a JSON object")
                rows.append(obj)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EvtuiError(f"cannot read Check-COVID {what} {path}: {exc}") from exc
    if not rows:
        raise EvtuiError(f"no {what} in {path}")
    return rows


def load_claims(path: Path) -> list[dict[str, Any]]:
    claims = _json_lines(path, "claims")
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
    engine: str = "local",
    engine_opts: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Score each claim's evidence sentences and its abstract: (result, parameters and timings for `save_run`).

    `engine="ray"` ranks the claims on Ray actors (evtui/scale/beir.py; `engine_opts`: address, parquet_dir).

    Recalls are 0-100; `per_item` is each claim's sentence recall@3 (claims with evidence). Claims in `done`
    (a killed run's rankings) are not searched again; `on_item` gets each new claim's rankings.
    """
    check_method(method)
    claims = load_claims(claims_path)
    claims = claims[:limit] if limit else claims
    t0 = time.perf_counter()
    library = corpus_library("checkcovid", corpus, home or load_config().home)
    try:
        sentence_qrels, doc_qrels = build_qrels(claims, gold_sentence_ids(corpus, library,
                                                                          {str(c["cord_id"]) for c in claims}))
        t_ingest = time.perf_counter() - t0
        embedded = embed_if_needed(library, method, on_progress)
        t_embed = time.perf_counter() - t0 - t_ingest
        k = max(SENTENCE_KS)
        sentence_run: dict[str, dict[str, float]] = {}
        doc_run: dict[str, dict[str, float]] = {}
        queries = [Query(str(c["id"]), str(c["claim"]), paper_id(c["cord_id"])) for c in claims]
        answer: Callable[[Query], tuple[list[str] | None, dict[str, float]]]
        if engine == "ray":
            from evtui.scale.beir import ray_claims

            answers = ray_claims(library, [(q, q.query_id in sentence_qrels) for q in queries
                                           if q.query_id not in (done or {})],
                                 method, seed, depth=DEPTH, sentence_k=k, **(engine_opts or {}))

            def answer(q: Query) -> tuple[list[str] | None, dict[str, float]]:
                a = answers(q.query_id)
                return (a.get("sentences") if q.query_id in sentence_qrels else None), a["docs"]
        elif engine == "local":
            rank_sentences = make_sentence_ranker(library, method, seed, k)
            rank_docs = make_doc_ranker(library, method, seed, DEPTH)

            def answer(q: Query) -> tuple[list[str] | None, dict[str, float]]:
                return (rank_sentences(q) if q.query_id in sentence_qrels else None,
                        rank_docs(Query(q.query_id, q.text)))
        else:
            raise EvtuiError(f"unknown engine {engine!r}; choose local or ray")

        def rank_claim(q: Query) -> dict[str, dict[str, float] | None]:
            """The claim's sentences within its paper (when it has evidence) and its documents."""
            picked, docs = answer(q)
            if picked is not None and len(picked) > k:
                raise EvtuiError(f"{method} returned {len(picked)} sentences for k={k} on {q.query_id}")
            return {"sentences": None if picked is None else ranked(picked), "docs": docs}

        for n, q in enumerate(queries, 1):
            qid = q.query_id
            both = resumed_or_ranked(q, rank_claim, done, on_item)
            if both["sentences"] is not None:
                sentence_run[qid] = both["sentences"]
            doc_run[qid] = both["docs"] or {}
            if on_progress:
                on_progress("claims", n, len(claims))
    finally:
        library.close()
    t_search = time.perf_counter() - t0 - t_ingest - t_embed
    s_means, s_per = evaluate(sentence_qrels, sentence_run, [f"R@{k}" for k in SENTENCE_KS])
    d_means, _ = evaluate(doc_qrels, doc_run, [f"R@{k}" for k in DOC_KS])
    result: dict[str, Any] = {
        "dataset": f"check-covid:{claims_path.name}", "method": method, "n_queries": len(doc_qrels),
        **{f"sentence_recall@{k}": round(100 * s_means[f"R@{k}"], 2) for k in SENTENCE_KS},
        **{f"doc_recall@{k}": round(100 * d_means[f"R@{k}"], 2) for k in DOC_KS},
        "per_item": {q: round(100 * v["R@3"], 2) for q, v in s_per.items()},
        "seconds": round(time.perf_counter() - t0, 2),
    }
    params = {
        "corpus": str(corpus), "claims": str(claims_path), "seed": seed, "limit": limit, "depth": DEPTH,
        "n_sentence_queries": len(s_per), "per_item": "sentence_recall@3",
        "timings": {"ingest": round(t_ingest, 2), "embed": round(t_embed, 2), "search": round(t_search, 2),
                    "embedded_sentences": embedded},
    }
    return result, params
