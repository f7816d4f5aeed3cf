"""Ctrl-C in `evtui judge --judge llm` keeps (caches and counts) every verdict that had come back, not only
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
