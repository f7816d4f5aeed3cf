"""The LLM judge's cost limit, a silent server's message and cached runs' notes, against the loopback
fault-injecting server.

A server that stops answering leaves every sentence unjudged: that is a judge that got nothing done (exit 1,
`--json` keeps the results with an "error"), as the README says, not a usage error (exit 2, no results)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llm_fault_server import FaultServer

from evtui.cli import main
from evtui.judge.base import Judgment
from evtui.judge.llm import LLMJudge
from evtui.judge.service import summarize
from evtui.models import Evidence, Sentence
from evtui.query import parse_query

QUERY = parse_query("(aspirin, reduce, colorectal cancer)")


def _evidence(n: int) -> list[Evidence]:
    # one text for all: every call's worst-case estimate is the same
    return [Evidence(rank=i + 1, sentence=Sentence(f"p:{i}", "p", i, "Results", "results", False,
                                                   "Regular aspirin use reduced the incidence of colorectal cancer."),
                     title="Aspirin and colorectal cancer", score=10.0 - i, highlights=[]) for i in range(n)]


def test_max_cost_is_not_cut_short_by_calls_in_flight(server: FaultServer) -> None:
    """Four calls at once each reserve their worst case; a call that fits the limit once those settle at their real
    (lower) cost must be made, not skipped: `--max-cost 0.0008` judged 2 of 8 for $0.0004 ("spent $0.0000")."""
    server.hang_seconds = 0.3
    server.default = "hang"  # each reply takes a while, so the calls overlap
    judge = LLMJudge("openai/gpt-4o-mini", api_base=server.api_base, timeout=5.0, max_retries=0, concurrency=4)
    worst = judge.call_estimate(judge.messages(QUERY, _evidence(1))[0], worst=True)[2]
    real = 1000 * 1.5e-7 + 50 * 6e-7  # gpt-4o-mini's price on the server's reported usage
    assert real < worst / 1.5  # the premise: a call costs well under its worst case
    limit = 3.2 * worst
    out = judge.judge(QUERY, _evidence(8), max_cost=limit)
    ok = [j for j in out if j.status == "ok"]
    skipped = [j for j in out if j.status == "skipped"]
    # As many calls as fit one after another: n real calls plus one worst case at most the limit.
    expected = next(n for n in range(9) if n == 8 or n * real + worst > limit)
    assert len(ok) == expected > 3
    assert out[: len(ok)] == ok and len(ok) + len(skipped) == 8  # best-ranked first, the rest skipped
    assert sum(j.cost for j in out) <= limit
    reason = skipped[0].error or ""
    assert "would take the cost past the limit" in reason
    assert f"spent ${len(ok) * real:.4f}" in reason  # what was spent, not $0.0000 while calls were in flight


def test_a_silent_server_is_named_with_its_timeout(server: FaultServer) -> None:
    server.default, server.hang_seconds = "hang", 3.0
    judge = LLMJudge("openai/fault", api_base=server.api_base, timeout=0.3, max_retries=3, backoff=0.01,
                     concurrency=1)
    out = judge.judge(QUERY, _evidence(5))
    reasons = {j.error for j in out[1:]}
    assert len(reasons) == 1 and all(j.status == "skipped" for j in out[1:])
    reason = reasons.pop() or ""
    assert "server not answering" in reason and server.api_base in reason and "0.3 s" in reason
    assert "judge_timeout" in reason  # the setting that gives a slow server longer


def test_a_cached_run_makes_no_unpriced_calls() -> None:
    """A run served from the cache made no call: it must not say "its calls are counted as costing $0"."""
    note = "no price known for openai/x: its calls are counted as costing $0"
    fresh = Judgment(sentence_id="p:0", score=80, level=4, confidence=7, stance="supports", aspects=[],
                     rationale="r", judge="llm", model="openai/x", prompt_version="v", notes=[note])
    cached = Judgment(sentence_id="p:1", score=80, level=4, confidence=7, stance="supports", aspects=[],
                      rationale="r", judge="llm", model="openai/x", prompt_version="v", cached=True,
                      notes=[note, "cached (first judged at $0.000000)"])
    assert summarize([cached])["notes"] == []
    assert summarize([fresh, cached])["notes"] == [note]


@pytest.fixture
def ingested(papers_dir: Path) -> Path:
    assert main(["ingest", str(papers_dir)]) == 0
    return papers_dir


def test_a_silent_server_is_a_judge_that_got_nothing_done(server: FaultServer, ingested: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    server.default, server.hang_seconds = "hang", 8.0
    monkeypatch.setenv("EVTUI_JUDGE_TIMEOUT", "1")
    capsys.readouterr()
    rc = main(["judge", "(aspirin, reduce, colorectal cancer)", "--k", "2", "--judge", "llm", "--model",
               "openai/fault", "--api-base", server.api_base, "--method", "bm25-coverage", "--json"])
    out = capsys.readouterr()
    assert rc == 1
    doc = json.loads(out.out)
    assert len(doc["results"]) == 2 and all(r["status"] == "skipped" for r in doc["results"])
    assert "server not answering" in doc["error"] and "local judge's verdicts are unchanged" in doc["error"]
    assert len(out.err.strip().splitlines()) == 1
