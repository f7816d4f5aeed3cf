"""Stopping the LLM judge (Ctrl-C in `evtui judge --judge llm`, the app cancelling its judge worker)
cancels the calls in flight, sends no new one, and keeps every verdict that had come back, against the loopback
fault-injecting server (tests/llm_fault_server.py).

Ctrl-C in `evtui judge --judge llm` keeps (caches and counts) every verdict that had come back, not only
those the CLI had handled, and the next run calls only for the rest (loopback fault server)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from llm_fault_server import FaultServer

import evtui.judge as judge_pkg
from evtui.cli import main
from evtui.judge.base import Judgment
from evtui.judge.cache import JudgmentCache
from evtui.judge.llm import CANCELLED, LLMJudge, litellm_module
from evtui.judge.service import judge_evidence
from evtui.library import Library
from evtui.models import Evidence, Sentence
from evtui.query import parse_query

QUERY = parse_query("(aspirin, reduce, colorectal cancer)")
CONCURRENCY = 4


def _evidence(n: int) -> list[Evidence]:
    return [Evidence(rank=i + 1, sentence=Sentence(f"p:{i}", "p", i, "Results", "results", False,
                                                   f"Regular aspirin use reduced colorectal cancer (cohort {i})."),
                     title="Aspirin and colorectal cancer", score=10.0 - i, highlights=[]) for i in range(n)]


def _judge(server: FaultServer, concurrency: int = CONCURRENCY) -> LLMJudge:
    return LLMJudge("openai/fault", api_base=server.api_base, timeout=10.0, max_retries=0, backoff=0.01,
                    concurrency=concurrency)


def _wait_for(cond: object, seconds: float = 20.0) -> None:
    end = time.monotonic() + seconds
    while not cond() and time.monotonic() < end:  # type: ignore[operator]
        time.sleep(0.01)


def test_ctrl_c_keeps_the_verdicts_that_came_back_and_sends_no_new_call(server: FaultServer) -> None:
    """Ctrl-C while the caller stored the 3rd verdict: the sweep had meanwhile been paid for a dozen more, which
    were thrown away (only 3 reached on_result, so only 3 were cached), and calls went on after the interrupt."""
    seen: list[Judgment] = []

    def on_result(j: Judgment) -> None:
        seen.append(j)
        if len(seen) == 3:  # the user presses Ctrl-C while the caller stores this one (a slow disk)
            _wait_for(lambda: len(server.chat_requests()) >= 16)
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _judge(server).judge(QUERY, _evidence(40), on_result=on_result)
    sent = len(server.chat_requests())
    assert sent >= 16
    kept = {j.sentence_id for j in seen if j.status == "ok"}
    # Every answered call reached on_result (only the calls in flight when it stopped were dropped), each once.
    assert len(kept) >= sent - CONCURRENCY, (len(kept), sent)
    assert len(seen) == len({j.sentence_id for j in seen})
    time.sleep(1.0)
    assert len(server.chat_requests()) == sent  # not one call after the interrupt


def test_cancelling_drops_the_calls_in_flight_and_returns_at_once(server: FaultServer) -> None:
    """The app's hook: `cancelled()` turning true ends the sweep within moments, not after the slow calls in
    flight (and those queued behind them) had all run; the items not judged come back 'skipped', with why."""
    litellm_module()
    server.script = ["ok"]
    server.default, server.hang_seconds = "hang", 4.0
    seen: list[Judgment] = []
    t0 = time.monotonic()
    out = _judge(server, concurrency=3).judge(QUERY, _evidence(8), on_result=seen.append,
                                              cancelled=lambda: bool(seen))
    took = time.monotonic() - t0
    assert took < 3.0, took  # the hanging calls were cancelled, not waited for
    assert [j.status for j in out].count("ok") == 1 and len(seen) == 1
    rest = [j for j in out if j.status != "ok"]
    assert len(rest) == 7 and all(j.status == "skipped" and j.error == CANCELLED for j in rest)
    # the verdict and the calls in flight beside it, and none after: counted once the calls already on the wire
    # have reached the server (counted at once, a loaded machine saw 2 and then 3 arrive, none of them new)
    time.sleep(1.0)
    assert len(server.chat_requests()) <= 1 + 3


def test_cancelled_before_the_first_call_makes_none(server: FaultServer) -> None:
    out = _judge(server).judge(QUERY, _evidence(5), cancelled=lambda: True)
    assert [j.status for j in out] == ["skipped"] * 5 and {j.error for j in out} == {CANCELLED}
    time.sleep(0.5)
    assert server.chat_requests() == []


def test_a_cancelled_service_sweep_stores_what_came_back_and_the_next_run_judges_only_the_rest(
        server: FaultServer, papers_library: Library) -> None:
    """judge_evidence(..., cancelled=...) (what the app's judge worker calls): the verdicts back are cached, the
    skipped ones are not, and judging again calls only for those."""
    server.script = ["ok", "ok"]
    server.default, server.hang_seconds = "hang", 4.0
    evidence = _evidence(6)
    arrived: list[Judgment] = []
    out = judge_evidence(papers_library, QUERY, evidence, judge=_judge(server, concurrency=2), on_result=arrived.append,
                         cancelled=lambda: len(arrived) >= 2)
    ok = [j for j in out if j.status == "ok"]
    assert len(ok) == 2 and [j.status for j in out].count("skipped") == 4
    assert JudgmentCache(papers_library.store.con).count() == 2  # the skipped ones are not stored
    before = len(server.chat_requests())
    server.default = "ok"
    again = judge_evidence(papers_library, QUERY, evidence, judge=_judge(server, concurrency=2))
    assert all(j.status == "ok" for j in again) and sum(j.cached for j in again) == 2
    assert len(server.chat_requests()) - before == 4


def test_ctrl_c_keeps_the_verdicts_already_back_and_says_so(
        server: FaultServer, papers_ingested: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Two of three calls had been answered (and paid for) when Ctrl-C landed while the CLI handled the first
    # verdict: the second was thrown away ("1 of 3 verdict(s) are kept") and paid for again by the next run.
    real = judge_pkg.judge_evidence

    def interrupted(*args: Any, on_result: Any = None, **kwargs: Any) -> Any:
        def arrived(j: Any) -> None:
            on_result(j)
            end = time.monotonic() + 20
            while len(server.chat_requests()) < 3 and time.monotonic() < end:
                time.sleep(0.01)
            time.sleep(0.5)  # the second "ok" is back meanwhile; the third call hangs
            raise KeyboardInterrupt

        return real(*args, on_result=arrived, **kwargs)

    monkeypatch.setattr(judge_pkg, "judge_evidence", interrupted)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server.script = ["ok", "ok"]
    server.default, server.hang_seconds = "hang", 5.0
    argv = ["judge", "aspirin colorectal cancer", "-k", "3", "--judge", "llm", "--model", "openai/fault",
            "--api-base", server.api_base, "--method", "bm25-coverage", "--json"]
    assert main(argv) == 130
    captured = capsys.readouterr()
    assert json.loads(captured.out)["error"].startswith(
        "interrupted: 2 of 3 verdict(s) are kept (0 cached before, 2 new); the other 1 sentence(s) were not judged")
    calls = len(server.chat_requests())
    assert calls == 3
    time.sleep(0.5)
    assert len(server.chat_requests()) == calls  # the hanging call was dropped, none sent after it
    monkeypatch.setattr(judge_pkg, "judge_evidence", real)
    server.default = "ok"
    assert main(argv) == 0  # finishing: only the one not judged is called
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["results"]) == 3 and sum(r["cached"] for r in doc["results"]) == 2
    assert len(server.chat_requests()) == calls + 1
