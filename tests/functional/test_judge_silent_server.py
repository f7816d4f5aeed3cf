"""A server that stops answering leaves every sentence unjudged: that is a judge that got nothing done (exit 1,
`--json` keeps the results with an "error"), as the README says, not a usage error (exit 2, no results)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llm_fault_server import FaultServer

from evtui.cli import main


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
