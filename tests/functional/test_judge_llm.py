"""The rubric parser and the llm judge's fault handling, against a loopback fault-injecting server."""

from __future__ import annotations

import json
import socket

import pytest
from llm_fault_server import VALID, FaultServer

from evtui.judge.base import Judgment
from evtui.judge.llm import LLMJudge, redact
from evtui.judge.rubric import (
    PROMPT_VERSION,
    Context,
    RubricError,
    build_messages,
    extract_json,
    parse_output,
    repair_messages,
)
from evtui.models import Evidence, ParsedQuery, Sentence
from evtui.query import parse_query

IDS = ["head", "relation", "tail"]


@pytest.fixture
def query() -> ParsedQuery:
    return parse_query("(aspirin, reduce, colorectal cancer)")


def _evidence(n: int) -> list[Evidence]:
    texts = ["Regular aspirin use reduced the incidence of colorectal cancer in a large cohort.",
             "Aspirin at 75 mg daily lowered colorectal adenoma recurrence by 21%.",
             "No effect on gastric cancer was seen.",
             "The effect was seen after 10 years (HR 0.74, 95% CI 0.56-0.97).",
             "Participants were recruited from 12 centres.",
             "Serum TNF-α was measured by ELISA."]
    return [Evidence(rank=i + 1, sentence=Sentence(f"p:{i}", "p", i, "Results", "results", False, texts[i % len(texts)]),
                     title="Aspirin and colorectal cancer", score=10.0 - i, highlights=[]) for i in range(n)]


def _judge(srv: FaultServer, **kw: object) -> LLMJudge:
    opts: dict[str, object] = {"timeout": 1.0, "max_retries": 2, "backoff": 0.01, "concurrency": 2}
    opts.update(kw)
    model = str(opts.pop("model", "openai/fault-model"))
    return LLMJudge(model, api_base=srv.api_base, **opts)  # type: ignore[arg-type]


# -- rubric ----------------------------------------------------------------------------------------
def test_parse_good_json() -> None:
    out = parse_output(json.dumps(VALID), IDS)
    assert (out.level, out.confidence, out.stance, out.aspects) == (4, 7, "supports", IDS)
    assert out.rationale.startswith("The sentence reports")


def test_parse_chatty_output_and_fences() -> None:
    text = "Sure, here you go:\n```json\n" + json.dumps({**VALID, "level": 5}) + "\n```\nAnything else? {not json}"
    assert parse_output(text, IDS).level == 5
    assert extract_json('noise {"a": {"b": 1}} tail {"c": 2}') == {"a": {"b": 1}}


def test_parse_lenient_forms() -> None:
    # Paper Lantern's own field names, a nested verdict, strings for numbers, a capitalised stance
    nested = {"paper_query_relevance": {"relevanceScore": "3", "confidenceLevel": 8, "summaryStatement": "  Partly. ",
                                        "stance": "Refutes", "aspects": "head, tail, made-up"}}
    out = parse_output(json.dumps(nested), IDS)
    assert (out.level, out.confidence, out.stance, out.rationale) == (3, 8, "refutes", "Partly.")
    assert out.aspects == ["head", "tail"]  # an id the query does not have is dropped
    assert parse_output('{"level": 2, "confidence": 5}', IDS).stance == "neutral"


@pytest.mark.parametrize(("payload", "reason"), [
    ({**VALID, "level": 6}, "level"),
    ({**VALID, "level": -1}, "level"),
    ({**VALID, "confidence": 11}, "confidence"),
    ({**VALID, "level": 3.5}, "level"),
    ({**VALID, "stance": "maybe"}, "stance"),
    ({"confidence": 5, "stance": "neutral"}, "no \"level\""),
])
def test_parse_rejects_invalid_fields(payload: dict[str, object], reason: str) -> None:
    with pytest.raises(RubricError, match=reason):
        parse_output(json.dumps(payload), IDS)


@pytest.mark.parametrize("text", ["", "   ", "level four", "[1, 2, 3]", "{broken: json"])
def test_parse_rejects_non_json(text: str) -> None:
    with pytest.raises(RubricError):
        parse_output(text, IDS)


def test_prompt_carries_aspects_context_title_and_section(query: ParsedQuery) -> None:
    ev = _evidence(1)[0]
    msgs = build_messages(query, ev, Context(before="Before it.", after="After it."))
    user = msgs[1]["content"]
    for part in ("- head: aspirin", "- relation: reduce", "- tail: colorectal cancer", "Before it.", "After it.",
                 "Aspirin and colorectal cancer", "SECTION: Results", ev.sentence.text, "QUERY (triplet)"):
        assert part in user
    assert "0-5 integer" in msgs[0]["content"] and PROMPT_VERSION.startswith("evtui-rubric-v")
    repair = repair_messages(msgs, "garbage", "the reply contains no JSON object", IDS)
    assert repair[-2] == {"role": "assistant", "content": "garbage"}
    assert "no JSON object" in repair[-1]["content"] and '"head", "relation", "tail"' in repair[-1]["content"]


# -- the full path against the loopback server -----------------------------------------------------
def test_valid_reply_full_path(server: FaultServer, query: ParsedQuery, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET-0123456789abcdef")
    seen: list[Judgment] = []
    judgments = _judge(server).judge(query, _evidence(3), on_result=seen.append)
    assert [j.sentence_id for j in judgments] == ["p:0", "p:1", "p:2"]
    assert len(seen) == 3 and all(j.status == "ok" for j in judgments)
    j = judgments[0]
    assert (j.score, j.level, j.confidence, j.stance, j.aspects) == (80, 4, 7, "supports", IDS)
    assert (j.judge, j.model, j.prompt_version) == ("llm", "openai/fault-model", PROMPT_VERSION)
    assert (j.tokens_in, j.tokens_out) == (1000, 50)
    assert j.cost == 0.0 and any("no price known" in n for n in j.notes)
    reqs = server.chat_requests()
    assert len(reqs) == 3
    body = reqs[0]["body"]
    assert body["temperature"] == 0 and body["model"] == "fault-model"
    assert body["response_format"]["type"] == "json_object" and "schema" in body["response_format"]
    # a loopback server gets a placeholder key, never the user's hosted one
    assert all(r["headers"].get("authorization") == "Bearer sk-local" for r in reqs)


def test_chatty_reply_is_accepted_without_repair(server: FaultServer, query: ParsedQuery) -> None:
    server.default = "chatty"
    [j] = _judge(server).judge(query, _evidence(1))
    assert j.status == "ok" and j.level == 4 and len(server.chat_requests()) == 1


@pytest.mark.parametrize("fault", ["429", "500", "503", "hang"])
def test_transient_faults_are_retried(server: FaultServer, query: ParsedQuery, fault: str) -> None:
    server.script = [fault, fault]
    [j] = _judge(server, timeout=0.5, concurrency=1).judge(query, _evidence(1))
    assert j.status == "ok", j.error
    assert len(server.chat_requests()) == 3


def test_persistent_fault_fails_the_item_not_the_sweep(server: FaultServer, query: ParsedQuery) -> None:
    server.script = ["500", "500", "500"]  # the first item exhausts its 1 + 2 retries
    judgments = _judge(server, concurrency=1).judge(query, _evidence(3))
    first, *rest = judgments
    assert first.status == "failed" and first.score == 0
    assert "gave up after 3 attempt(s)" in (first.error or "") and "InternalServerError" in (first.error or "")
    assert [j.status for j in rest] == ["ok", "ok"]


def test_timeout_is_per_attempt(server: FaultServer, query: ParsedQuery) -> None:
    server.default = "hang"
    server.hang_seconds = 2.0
    [j] = _judge(server, timeout=0.3, max_retries=1).judge(query, _evidence(1))
    assert j.status == "failed" and "Timeout" in (j.error or "")
    assert len(server.chat_requests()) == 2


def test_malformed_reply_gets_one_repair(server: FaultServer, query: ParsedQuery) -> None:
    server.script = ["garbage"]
    [j] = _judge(server).judge(query, _evidence(1))
    assert j.status == "ok" and "valid after one repair prompt" in j.notes
    reqs = server.chat_requests()
    assert len(reqs) == 2
    repair = reqs[1]["body"]["messages"]
    assert repair[-2]["role"] == "assistant" and "no JSON object" in repair[-1]["content"]
    assert (j.tokens_in, j.tokens_out) == (2000, 100)  # both calls are counted


@pytest.mark.parametrize("fault", ["garbage", "bad"])
def test_malformed_twice_is_a_failed_judgment_with_the_reason(server: FaultServer, query: ParsedQuery,
                                                             fault: str) -> None:
    server.script = [fault, fault]
    judgments = _judge(server, concurrency=1).judge(query, _evidence(2))
    assert judgments[0].status == "failed"
    assert "malformed output after one repair attempt" in (judgments[0].error or "")
    assert judgments[1].status == "ok"


def test_fatal_auth_error_stops_calling(server: FaultServer, query: ParsedQuery) -> None:
    server.default = "401"
    judgments = _judge(server, concurrency=1).judge(query, _evidence(4))
    assert all(j.status == "failed" for j in judgments)
    assert "AuthenticationError" in (judgments[0].error or "")
    assert all((j.error or "").startswith("not attempted") for j in judgments[1:])
    assert len(server.chat_requests()) == 1


def test_unreachable_server_fails_fast(query: ParsedQuery) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    judge = LLMJudge("openai/x", api_base=f"http://127.0.0.1:{port}/v1", timeout=1, max_retries=1, backoff=0.01)
    judgments = judge.judge(query, _evidence(3))
    assert all(j.status == "failed" for j in judgments)
    assert "gave up after 2 attempt(s)" in (judgments[0].error or "")


def test_mixed_sweep_keeps_order(server: FaultServer, query: ParsedQuery) -> None:
    levels = {"p:0": 5, "p:1": 3, "p:2": 0, "p:3": 2, "p:4": 1, "p:5": 4}

    def verdict(body: dict[str, object]) -> dict[str, object]:
        user = str(body["messages"][1]["content"])  # type: ignore[index]
        sid = next(k for k, e in zip(levels, _evidence(6), strict=True) if f"SENTENCE: {e.sentence.text}" in user)
        return {**VALID, "level": levels[sid]}

    server.verdict = verdict
    server.script = ["429", "garbage"]
    judgments = _judge(server, concurrency=3).judge(query, _evidence(6))
    assert [j.sentence_id for j in judgments] == list(levels)
    assert [j.level for j in judgments] == list(levels.values())
    assert [j.score for j in judgments] == [20 * v for v in levels.values()]


def test_price_known_cost_and_max_cost(server: FaultServer, query: ParsedQuery) -> None:
    judge = _judge(server, model="openai/gpt-4o-mini", concurrency=1)
    assert judge.client.price() is not None
    worst = judge.call_estimate(judge.messages(query, _evidence(1))[0], worst=True)[2]
    limit = 2.5 * worst
    judgments = judge.judge(query, _evidence(6), max_cost=limit)
    ok = [j for j in judgments if j.status == "ok"]
    skipped = [j for j in judgments if j.status == "skipped"]
    assert ok and skipped and len(ok) + len(skipped) == 6
    assert judgments[: len(ok)] == ok  # the best-ranked are judged first, the rest skipped
    expected = 1000 * 1.5e-7 + 50 * 6e-7  # gpt-4o-mini's price on the server's reported usage
    assert ok[0].cost == pytest.approx(expected)
    assert sum(j.cost for j in judgments) <= limit
    assert "would take the cost past the limit" in (skipped[0].error or "")
    assert len(server.chat_requests()) == len(ok)


def test_redact_scrubs_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "an-unusual-key-value-42")
    text = redact("auth with an-unusual-key-value-42 and sk-proj-abcdef123456 and Bearer sk-local failed")
    assert "an-unusual-key-value-42" not in text and "abcdef123456" not in text
    assert "sk-local" in text  # the placeholder is no secret


def _closed_port() -> int:
    with socket.socket() as s:  # a port nobody listens on: connecting is refused at once
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_dead_server_is_retried_by_one_call_not_by_every_row(query: ParsedQuery,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A refused connection: one call spends the retries, the calls beside it wait for its outcome, the rest are
    not attempted; every row says why in the same words, and failure_line says it once."""
    from evtui.judge import failure_line
    from evtui.judge.llm import litellm_module

    litellm = litellm_module()
    real = litellm.acompletion
    calls: list[int] = []

    async def counted(**params: object) -> object:
        calls.append(1)
        return await real(**params)

    monkeypatch.setattr(litellm, "acompletion", counted)
    base = f"http://127.0.0.1:{_closed_port()}/v1"
    judge = LLMJudge("openai/x", api_base=base, timeout=2, max_retries=3, backoff=0.01, concurrency=4)
    judgments = judge.judge(query, _evidence(8))
    assert all(j.status == "failed" for j in judgments)
    reason = f"could not reach {base} (connection refused, gave up after 4 attempt(s))"
    assert all((j.error or "").removeprefix("not attempted: ") == reason for j in judgments), judgments[0].error
    # 4 first attempts side by side, then only one call's 3 retries (every row retrying made 4 x 4 = 16)
    assert len(calls) <= 4 + 3, len(calls)
    assert failure_line("llm", judgments) == (f"the LLM judge {reason}: no verdicts; the local judge's verdicts "
                                              "are unchanged")
    # the next sweep asks the server again (it may be up by now)
    before = len(calls)
    judge.judge(query, _evidence(1))
    assert len(calls) == before + 4


def test_failure_line_only_for_a_shared_reason() -> None:
    from evtui.judge import failure_line

    ok = Judgment("a", 80, 4, 7, "supports", [], "r", "llm", "m", "v")
    bad = [Judgment(s, 0, 0, 0, "neutral", [], "", "llm", "m", "v", status="failed", error=e)
           for s, e in (("b", "malformed output"), ("c", "TimeoutError: slow"))]
    assert failure_line("llm", [ok]) is None
    assert failure_line("llm", [ok, *bad]) is None  # two reasons: each row says its own
    assert failure_line("llm", [ok, bad[0]]) == ("the LLM judge failed: malformed output: 1 of 2 sentence(s) without "
                                                "a verdict; the local judge's verdicts are unchanged")
