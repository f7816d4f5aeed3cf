"""A hosted model with no API key in the environment fails at once, naming the variable to set (it went through
the whole backoff ladder as a 500 "Missing credentials" and told the user nothing they could act on)."""

from __future__ import annotations

import asyncio

import pytest

import evtui.judge.llm as llm


def test_a_missing_openai_key_fails_at_once_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "OPENAI_ADMIN_KEY", "EVTUI_JUDGE_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(var, raising=False)
    litellm = llm.litellm_module()
    calls: list[str] = []
    real = litellm.acompletion

    async def counted(**kw: object) -> object:  # the real litellm call, counted
        calls.append(str(kw["model"]))
        return await real(**kw)

    monkeypatch.setattr(litellm, "acompletion", counted)
    client = llm.LLMClient("openai/gpt-4o-mini", backoff=5.0)  # a retry would wait seconds
    with pytest.raises(llm.CallError) as err:
        asyncio.run(client.acomplete([{"role": "user", "content": "hi"}]))
    assert len(calls) == 1 and err.value.fatal
    assert "no API key for openai/gpt-4o-mini" in str(err.value) and "OPENAI_API_KEY" in str(err.value)
    assert client.unreachable == str(err.value)  # the sweep's other calls fail with the same line, uncalled


def test_other_server_errors_are_not_read_as_a_missing_key() -> None:
    assert llm.missing_key(RuntimeError("Internal Server Error: upstream timed out"), "openai/gpt-4o-mini") is None
    assert llm.missing_key(RuntimeError("OpenAIException - Missing credentials. Please pass an `api_key`"),
                           "openai/gpt-4o-mini") is not None


def test_a_missing_anthropic_key_is_named_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Anthropic's client says so as an AuthenticationError (fatal at once already), in a paragraph about workload
    identity federation: the user gets the one line that names the variable instead."""
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "EVTUI_JUDGE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    client = llm.LLMClient("anthropic/claude-3-5-haiku-latest")
    with pytest.raises(llm.CallError) as err:
        asyncio.run(client.acomplete([{"role": "user", "content": "hi"}]))
    assert str(err.value).startswith("no API key for anthropic/claude-3-5-haiku-latest: set ANTHROPIC_API_KEY")
    assert len(str(err.value)) < 160
