"""The DuckDB judgment cache, cost estimates and --max-cost through the judge service, and key hygiene."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from llm_fault_server import FaultServer

from evtui.config import load_config
from evtui.errors import EvtuiError
from evtui.judge import Judgment, estimate, judge_evidence, summarize
from evtui.judge.cache import JudgmentCache
from evtui.judge.llm import LLMJudge
from evtui.library import Library
from evtui.search import Searcher, SearchResult

QUERY = "(aspirin, reduce, colorectal cancer)"


@pytest.fixture
def lib(papers_library: Library) -> Library:
    return papers_library


def _search(lib: Library, k: int = 5) -> SearchResult:
    res = Searcher(lib).search(QUERY, k=k, method="bm25-coverage")
    assert len(res.evidence) >= min(k, 3)
    return res


def _judge(srv: FaultServer, lib: Library, model: str = "openai/fault-model", concurrency: int = 4) -> LLMJudge:
    return LLMJudge(model, api_base=srv.api_base, timeout=1, max_retries=1, backoff=0.01, library=lib,
                    concurrency=concurrency)


def test_second_run_is_served_from_the_cache(server: FaultServer, lib: Library) -> None:
    res = _search(lib)
    n = len(res.evidence)
    first = judge_evidence(lib, res.query, res.evidence, judge=_judge(server, lib))
    assert len(server.chat_requests()) == n and all(j.status == "ok" and not j.cached for j in first)
    # the prompt carried the sentence's neighbours, read from the library
    assert any("CONTEXT BEFORE: (none)" not in r["body"]["messages"][1]["content"] for r in server.chat_requests())
    seen: list[Judgment] = []
    second = judge_evidence(lib, res.query, res.evidence, judge=_judge(server, lib), on_result=seen.append)
    assert len(server.chat_requests()) == n  # zero new calls
    assert len(seen) == n and all(j.cached and j.cost == 0.0 for j in second)
    assert [(j.sentence_id, j.score, j.stance, j.aspects) for j in second] == \
           [(j.sentence_id, j.score, j.stance, j.aspects) for j in first]
    assert estimate(res.query, res.evidence, _judge(server, lib), library=lib).calls == 0
    assert summarize(second)["cached"] == n and summarize(second)["cost"] == 0
    # another model, or another mode of the same words, is another key
    judge_evidence(lib, res.query, res.evidence[:1], judge=_judge(server, lib, "openai/other-model"))
    assert len(server.chat_requests()) == n + 1
    claim = Searcher(lib).parse(QUERY, mode="claim")
    judge_evidence(lib, claim, res.evidence[:1], judge=_judge(server, lib))
    assert len(server.chat_requests()) == n + 2


def test_failed_judgments_are_stored_and_retried(server: FaultServer, lib: Library) -> None:
    res = _search(lib, k=3)
    server.script = ["garbage", "garbage"]  # the first item fails after its repair attempt
    first = judge_evidence(lib, res.query, res.evidence, judge=_judge(server, lib, concurrency=1))
    failed = [j for j in first if j.status == "failed"]
    assert len(failed) == 1 and "malformed output" in (failed[0].error or "")
    cache = JudgmentCache(lib.store.con)
    assert cache.count(status="failed") == 1
    stored = lib.store.con.execute("SELECT error FROM judgments WHERE status = 'failed'").fetchone()
    assert stored is not None and "malformed output" in stored[0]
    calls = len(server.chat_requests())
    second = judge_evidence(lib, res.query, res.evidence, judge=_judge(server, lib))
    assert len(server.chat_requests()) == calls + 1  # only the failed one is asked again
    assert all(j.status == "ok" for j in second)
    assert cache.count(status="failed") == 0


def test_changed_sentence_text_is_a_miss(server: FaultServer, lib: Library) -> None:
    res = _search(lib, k=3)
    judge = _judge(server, lib)
    judge_evidence(lib, res.query, res.evidence, judge=judge)
    calls = len(server.chat_requests())
    # the same sentence id with other text (a paper whose content changed under the same id)
    top = res.evidence[0]
    edited = replace(top, sentence=replace(top.sentence, text=top.sentence.text + " Not in women."))
    assert JudgmentCache(lib.store.con).lookup(judge.name, judge.model, judge.prompt_version, res.query,
                                               [edited]) == {}
    out = judge_evidence(lib, res.query, [edited, *res.evidence[1:]], judge=judge)
    assert len(server.chat_requests()) == calls + 1
    assert [j.cached for j in out] == [False, True, True]


def test_estimate_and_max_cost(server: FaultServer, lib: Library) -> None:
    res = _search(lib)
    n = len(res.evidence)
    judge = _judge(server, lib, "openai/gpt-4o-mini")
    est = estimate(res.query, res.evidence, judge, library=lib)
    assert est.calls == n and est.cached == 0 and est.tokens_in > 200 * n and est.tokens_out == 80 * n
    assert est.cost == pytest.approx(est.tokens_in * 1.5e-7 + est.tokens_out * 6e-7)
    unpriced = estimate(res.query, res.evidence, _judge(server, lib), library=lib)
    assert unpriced.cost == 0 and any("no price known" in note for note in unpriced.notes)

    worst = judge.call_estimate(judge.messages(res.query, res.evidence[:1])[0], worst=True)[2]
    limit = 1.5 * worst
    out = judge_evidence(lib, res.query, res.evidence, judge=judge, max_cost=limit)
    summary = summarize(out)
    assert summary["judged"] >= 1 and summary["skipped"] >= 1
    assert summary["cost"] <= limit
    assert len(server.chat_requests()) == summary["judged"]
    # skipped pairs are not cached: the next estimate still counts them
    assert estimate(res.query, res.evidence, judge, library=lib).calls == summary["skipped"]
    nothing = judge_evidence(lib, res.query, res.evidence, judge=judge, max_cost=0.0)
    assert all(j.status in ("skipped",) or j.cached for j in nothing)
    with pytest.raises(EvtuiError, match="max-cost"):
        judge_evidence(lib, res.query, res.evidence, judge=judge, max_cost=-1)


def test_the_llm_judge_needs_a_model(lib: Library) -> None:
    res = _search(lib, k=1)
    with pytest.raises(EvtuiError, match="no judge model"):
        judge_evidence(lib, res.query, res.evidence, judge="llm")
    with pytest.raises(EvtuiError, match="--judge must be local or llm, got 'oracle'"):
        judge_evidence(lib, res.query, res.evidence, judge="oracle")


def test_config_supplies_the_judge(server: FaultServer, papers_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVTUI_JUDGE", "llm")
    monkeypatch.setenv("EVTUI_JUDGE_MODEL", "openai/fault-model")
    monkeypatch.setenv("EVTUI_JUDGE_API_BASE", server.api_base)
    monkeypatch.setenv("EVTUI_JUDGE_CONCURRENCY", "2")
    cfg = load_config()
    assert (cfg.judge, cfg.judge_concurrency, cfg.judge_timeout) == ("llm", 2, 60)
    with Library(cfg) as library:
        library.ingest([papers_dir])
        res = _search(library, k=2)
        out = judge_evidence(library, res.query, res.evidence, judge=None)
    assert [j.judge for j in out] == ["llm", "llm"] and all(j.status == "ok" for j in out)


def _old_table(con) -> None:  # type: ignore[no-untyped-def]
    """The judgments table as evtui made it before leans were kept (no `lean` column)."""
    from evtui.judge.cache import SCHEMA

    con.execute(SCHEMA.replace("    lean VARCHAR,\n", ""))


def test_a_lean_is_kept_and_an_old_cache_gains_its_column(lib: Library) -> None:
    import duckdb

    res = _search(lib, k=3)
    con = duckdb.connect()
    _old_table(con)
    cache = JudgmentCache(con)  # writable: the column is added, the rows kept
    assert con.execute("SELECT count(*) FROM information_schema.columns WHERE table_name = 'judgments'"
                       " AND column_name = 'lean'").fetchone()[0] == 1
    e = res.evidence[0]
    j = Judgment(sentence_id=e.sentence.id, score=60, level=3, confidence=6, stance="neutral", aspects=[],
                 rationale="r", judge="local", model="m", prompt_version="p", lean="refutes")
    cache.store(res.query, [j], {e.sentence.id: e.sentence.text})
    hit = cache.lookup("local", "m", "p", res.query, [e])[e.sentence.id]
    assert hit.lean == "refutes" and hit.stance == "neutral"


def test_an_old_cache_read_without_the_column(lib: Library) -> None:
    import duckdb

    res = _search(lib, k=3)
    con = duckdb.connect()
    _old_table(con)
    cache = JudgmentCache(con, writable=False)  # a library opened read-only beside its owner
    e = res.evidence[0]
    j = Judgment(sentence_id=e.sentence.id, score=60, level=3, confidence=6, stance="neutral", aspects=[],
                 rationale="r", judge="local", model="m", prompt_version="p", lean="supports")
    assert cache.store(res.query, [j], {e.sentence.id: e.sentence.text}) == 1
    assert cache.lookup("local", "m", "p", res.query, [e])[e.sentence.id].lean == ""
