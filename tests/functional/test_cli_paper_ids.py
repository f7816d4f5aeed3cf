"""Small CLI rough edges: pasted paper ids with stray spaces, ids quoted where bare they would hide a
space, and what a Ctrl-C during `evtui judge --judge llm` kept. Each test is one problem met using the verbs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from llm_fault_server import FaultServer

import evtui.judge as judge_pkg
from evtui.cli import main
from evtui.query.parse import detect_mode, no_claim, parse_query


def _ids(capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["papers", "--json"]) == 0
    return [p["id"] for p in json.loads(capsys.readouterr().out)]


def test_a_pasted_id_with_spaces_at_its_ends_finds_its_paper(
        tmp_path: Path, papers_ingested: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `evtui show "PMID:7671401 "` (copied from a table with the space after it) said "no paper 'PMID:7671401 '",
    # `search --paper " X"` "unknown paper", `remove " X"` "no paper  X": the paper was there all along.
    spaced = tmp_path / "spaced"
    spaced.mkdir()
    (spaced / "my paper.md").write_text("# Statins and myopathy\n\n## Results\n\nStatins caused myopathy in 2% of "
                                        "patients.\n", encoding="utf-8")
    assert main(["ingest", str(spaced)]) == 0
    capsys.readouterr()
    ids = _ids(capsys)
    inner = next(pid for pid in ids if " " in pid)  # an id may hold inner spaces: only the ends are dropped
    plain = next(pid for pid in ids if " " not in pid)
    assert main(["show", f" {inner}\n", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["paper"]["id"] == inner
    assert main(["show", f"{plain} ", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["paper"]["id"] == plain
    assert main(["search", "statins myopathy", "--paper", f"{inner} ", "--json"]) == 0
    assert {r["paper_id"] for r in json.loads(capsys.readouterr().out)["results"]} == {inner}
    assert main(["remove", f" {plain}", f"{inner} ", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"removed": 2}
    assert plain not in _ids(capsys) and inner not in _ids(capsys)


def test_a_missing_id_is_quoted_where_bare_it_would_hide_a_space(
        papers_ingested: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `evtui remove "nope id" x1` said "no paper nope id, x1": two ids or three? and `remove " nope "` showed
    # "no paper  nope " with its spaces invisible. An id that reads the same bare stays bare.
    assert main(["remove", "nope id", "x1"]) == 2
    assert capsys.readouterr().err.strip() == "error: no paper 'nope id', x1 (`evtui papers` lists the ids)"
    assert main(["remove", " nope ", "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["error"] == "no paper ' nope ' (`evtui papers` lists the ids)"
    assert main(["remove", ""]) == 2  # an unset $VAR
    assert "no paper '' " in capsys.readouterr().err
    keep = _ids(capsys)
    assert main(["remove", keep[0], "a,b", "--json"]) == 1  # one removed, one missing: exit 1, as before
    doc = json.loads(capsys.readouterr().out)
    assert doc["removed"] == 1 and doc["missing"] == ["a,b"]
    assert doc["error"].startswith("no paper 'a,b' (")


def test_ctrl_c_during_an_llm_judge_says_how_many_verdicts_were_kept(
        server: FaultServer, papers_ingested: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Ctrl-C in `evtui judge --judge llm` against a slow server said only "interrupted": nothing about the
    # verdicts already stored (the next run serves them without a call) nor the sentences left unjudged.
    real = judge_pkg.judge_evidence
    stop_after = {"n": 1}

    def interrupted(*args: Any, on_result: Any = None, **kwargs: Any) -> Any:
        seen: list[Any] = []

        def arrived(j: Any) -> None:
            if on_result is not None:
                on_result(j)
            seen.append(j)
            if len(seen) == stop_after["n"]:
                raise KeyboardInterrupt  # as a Ctrl-C lands while the judge waits for the next verdict

        return real(*args, on_result=arrived, **kwargs)

    monkeypatch.setattr(judge_pkg, "judge_evidence", interrupted)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    # one call answers, the others hang until the interrupt drops them (the verdicts back by then are all kept)
    server.script, server.default, server.hang_seconds = ["ok"], "hang", 5.0
    argv = ["judge", "aspirin colorectal cancer", "-k", "3", "--judge", "llm", "--model", "openai/fault",
            "--api-base", server.api_base, "--method", "bm25-coverage"]
    assert main(argv) == 130
    err = " ".join(capsys.readouterr().err.split())
    assert "interrupted: 1 of 3 verdict(s) are kept (0 cached before, 1 new); the other 2 sentence(s) were not " \
           "judged (the same `evtui judge` again judges only those)" in err
    # the kept ones are served from the cache the next time; a second interrupt says so
    stop_after["n"] = 2
    server.script = ["ok"]
    assert main([*argv, "--json"]) == 130
    captured = capsys.readouterr()
    assert json.loads(captured.out)["error"].startswith(
        "interrupted: 2 of 3 verdict(s) are kept (1 cached before, 1 new); the other 1 sentence(s)")
    monkeypatch.setattr(judge_pkg, "judge_evidence", real)
    server.default = "ok"
    calls = len(server.chat_requests())  # the interrupted runs' calls in flight went out too (then were dropped)
    assert main([*argv, "--json"]) == 0  # finishing: only the one not judged is called
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["results"]) == 3 and sum(r["cached"] for r in doc["results"]) == 2
    assert len(server.chat_requests()) == calls + 1


@pytest.mark.parametrize("verb", ["judge", "verify"])
def test_judge_and_verify_help_show_each_kind_of_query_and_the_exit_status(
        verb: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # `evtui judge --help` / `evtui verify --help` listed the flags only: how to write a triplet, what a question
    # gets and what the exit status means to a script were nowhere (only in the top-level help, in brief).
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit) as exc:
        main([verb, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    epilog = out.split("\nexamples:\n", 1)[1]
    assert all(len(line) <= 80 for line in epilog.splitlines()), "printed as written: it must fit 80 columns"
    queries = [line.split('"')[1] for line in epilog.splitlines() if line.startswith(f"  evtui {verb} \"")]
    modes = {q: detect_mode(q) for q in queries}
    assert "triplet" in modes.values() and any(q.endswith("?") for q in modes)  # a triplet and a question
    assert any(m != "triplet" and not q.endswith("?") for q, m in modes.items())  # and a plain claim
    assert no_claim(parse_query(next(q for q in queries if q.endswith("?")))) == ""  # yes/no: read as its claim
    status = " ".join(epilog.split("exit status:", 1)[1].split())
    assert status.startswith("0 done") and " 2 a usage or input error" in status and "130 Ctrl-C" in status
    assert (" 1 no sentence got a verdict" in status) == (verb == "judge")  # verify has no exit 1
