"""The method registry: one record per method, read by the Searcher, the harnesses, the Ray engine, the TUI and the
CLI; adding a method is one entry."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from evtui import methods
from evtui.bench import evidencebench as eb
from evtui.bench.beir import harness_methods
from evtui.cli import main
from evtui.cli.flags import method_help
from evtui.errors import EvtuiError, QueryError
from evtui.honest import honest
from evtui.library import Library
from evtui.methods import Method, Task
from evtui.models import Evidence, Sentence, Span
from evtui.query import parse_query
from evtui.scale.bench import ray_methods
from evtui.search import Searcher
from evtui.tui.screens.bench import bench_methods, calls_llm

EB3 = Path(__file__).parents[1] / "fixtures" / "bench" / "eb3.json"
SEARCH = ("best", "evidential", "bm25-coverage", "bm25", "dense", "hybrid", "random")


def test_the_lists_keep_their_orders() -> None:
    assert methods.search_methods() == SEARCH
    assert methods.judge_methods() == ("llm-rerank", "llm-sbs", "evidential")
    assert methods.bench_methods() == (*SEARCH, "llm-rerank", "llm-sbs")
    assert bench_methods() == list(methods.bench_methods())
    assert harness_methods() == ["random", "best", "evidential", "bm25-coverage", "bm25", "dense", "hybrid"]
    assert set(ray_methods()) == set(methods.bench_methods())
    assert methods.DEFAULT_METHOD == "best" and all(m.description for m in methods.all_methods())


def test_the_flags() -> None:
    # embeddings: dense/hybrid rank by them; best and what searches with it use them where they can
    assert [n for n in methods.bench_methods() if methods.needs_embeddings(n)] == ["dense", "hybrid"]
    assert [n for n in methods.bench_methods() if methods.uses_embeddings(n)] == [
        "best", "evidential", "dense", "hybrid", "llm-rerank"]
    # LLM calls: llm-sbs always; llm-rerank and evidential only with the llm judge; the rest never
    assert [n for n in methods.bench_methods() if calls_llm(n, "llm")] == ["evidential", "llm-rerank", "llm-sbs"]
    assert [n for n in methods.bench_methods() if calls_llm(n, "local")] == ["llm-sbs"]
    assert not calls_llm("no-such-method", "llm")
    # evidential is the offline search method unless the benchmark gives it an LLM model
    ev = methods.get("evidential")
    assert ev.ranker_kind(None) == "search" and ev.ranker_kind({"judge": "local"}) == "search"
    assert ev.ranker_kind({"model": "openai/x"}) == "judge"
    assert methods.get("llm-rerank").ranker_kind(None) == "judge"
    assert methods.get("random").ranker_kind({"model": "m"}) == "draw"
    assert [n for n in methods.bench_methods() if methods.is_semantic(n)] == ["dense", "hybrid", "random"]
    with pytest.raises(EvtuiError, match="unknown method 'nope'; choose one of: best, evidential"):
        methods.get("nope")
    with pytest.raises(ValueError, match="registered already"):
        methods.register(Method("bm25", "again"))


def test_honest_reads_the_semantic_flag() -> None:
    q = parse_query("ACE inhibitors cause cough")
    cause = next(a.id for a in q.aspects if a.role == "relation")
    rows = [Evidence(rank=1, sentence=Sentence("p:1", "p", 1, "", "abstract", False, "x"), title="t", score=1.0,
                     highlights=[Span(cause, 0, 1)])]
    assert honest(rows, q.aspects, "random").evidence == rows  # kept: random shares words by chance only
    assert honest(rows, q.aspects, "bm25-coverage").evidence == []


def test_draw_is_seeded_per_key() -> None:
    pool = list(range(50))
    assert methods.draw(pool, 5, 1, "a") == methods.draw(pool, 5, 1, "a")
    assert methods.draw(pool, 5, 1, "a") != methods.draw(pool, 5, 2, "a")
    assert methods.draw(pool, 5, 1, "a") != methods.draw(pool, 5, 1, "b")
    assert sorted(methods.draw(pool[:3], 5, 1, "a")) == [0, 1, 2]


@pytest.fixture
def toy_search_method() -> Iterator[str]:
    methods.register(Method("toy-search", "a throwaway search method", help="test only"))
    try:
        yield "toy-search"
    finally:
        methods.unregister("toy-search")


def test_a_registered_search_method_is_in_every_list(toy_search_method: str, papers_library: Library) -> None:
    from evtui.tui.screens.search import _methods

    assert methods.search_methods()[-1] == toy_search_method
    assert toy_search_method in _methods()[0]  # the Search screen's methods
    assert toy_search_method in harness_methods()  # SciFact / Check-COVID
    assert toy_search_method in bench_methods() and toy_search_method in ray_methods()  # EvidenceBench, Ray
    assert method_help().endswith(" or toy-search (test only)")
    # registered but not implemented by the Searcher: a clear error, never another method's results
    with pytest.raises(QueryError, match="no implementation of method 'toy-search'"):
        Searcher(papers_library).search("aspirin", method=toy_search_method)
    methods.unregister(toy_search_method)
    assert toy_search_method not in methods.search_methods() and toy_search_method not in harness_methods()
    with pytest.raises(QueryError, match="unknown method 'toy-search'"):
        Searcher(papers_library).search("aspirin", method=toy_search_method)


def _first_k(library: Library, method: str, seed: int,
             judge_opts: Mapping[str, Any] | None) -> methods.Ranker:
    def rank(task: Task) -> list[int]:
        return [s.position for s in library.store.sentences(task.paper_id) if not s.is_heading][: task.k]
    return rank


@pytest.fixture
def toy_bench_method() -> Iterator[str]:
    methods.register(Method("toy-first-k", "the paper's first K sentences", search=False, ranker="toy"))
    methods.register_ranker("toy", _first_k)
    try:
        yield "toy-first-k"
    finally:
        methods.unregister("toy-first-k")
        methods.unregister_ranker("toy")


def test_a_registered_benchmark_method_runs_in_the_harness(toy_bench_method: str, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_methods()[-1] == toy_bench_method and toy_bench_method not in methods.search_methods()
    assert toy_bench_method not in harness_methods()  # not a Searcher method: the BEIR harnesses cannot run it
    res = eb.run_evidencebench(EB3, "er-10", toy_bench_method, home=tmp_path)
    assert res["method"] == toy_bench_method and res["n_items"] == 3
    items = json.loads(EB3.read_text())
    lib = eb.bench_library(EB3, tmp_path)
    try:
        for item_id, score in res["per_item"].items():
            first = _first_k(lib, toy_bench_method, 0, None)(Task(item_id, "", items[item_id].get("paper_id") or item_id,
                                                                 10))
            assert score == pytest.approx(100 * eb.score_item(items[item_id], "er-10", first), abs=1e-4)
    finally:
        lib.close()
    # the CLI takes it as it takes any registered method
    assert main(["bench", "evidencebench", "--data", str(EB3), "--task", "er-10", "--method", toy_bench_method,
                 "--no-save", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["per_item"] == res["per_item"]
