"""The one benchmark driver: library builder, engines passed in, the stored side of a run (RunBook), reports."""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from evtui.bench import evidencebench as eb
from evtui.bench import scifact
from evtui.bench.driver import Query, RunBook, Task, bench_library, stored_params
from evtui.bench.report import chart, compare, primary_metric
from evtui.bench.runs import ItemResult, list_runs, record_item, run_per_item, save_run
from evtui.config import Config
from evtui.errors import EvtuiError
from evtui.library import Library

FIX = Path(__file__).parents[1] / "fixtures" / "bench"
EB3 = FIX / "eb3.json"
PKG = Path(__file__).parents[2] / "evtui"


class LocalEngine:
    """An Engine that ranks with the harnesses' own local rankers, and notes what it was given."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def rank_tasks(self, library: Library, tasks: Sequence[Task], method: str, seed: int,
                   judge_opts: Mapping[str, Any] | None) -> Callable[[Task], list[int]]:
        self.asked = [t.item_id for t in tasks]
        return eb.make_ranker(library, method, seed)

    def rank_claims(self, library: Library, queries: Sequence[tuple[Query, bool]], method: str, seed: int,
                    depth: int, sentence_k: int) -> Callable[[str], dict[str, Any]]:
        from evtui.bench.beir import make_doc_ranker

        self.asked = [q.query_id for q, _s in queries]
        rank, texts = make_doc_ranker(library, method, seed, depth), {q.query_id: q.text for q, _s in queries}
        return lambda qid: {"docs": rank(Query(qid, texts[qid]))}


def test_an_engine_passed_in_gets_only_the_unfinished_work_and_gives_the_same_run(tmp_path: Path) -> None:
    local_items: list[ItemResult] = []
    local = eb.run_evidencebench(EB3, "results-er-5", "bm25", home=tmp_path, on_item=local_items.append)
    assert len(local_items) == 2  # dev_id_16 has no results labels: skipped, never ranked nor stored
    engine = LocalEngine()
    done = {local_items[0].item_id: local_items[0]}
    resumed = eb.run_evidencebench(EB3, "results-er-5", "bm25", home=tmp_path, engine=engine, done=done)
    assert engine.asked == [local_items[1].item_id]
    assert {k: v for k, v in resumed.items() if k != "seconds"} == {k: v for k, v in local.items() if k != "seconds"}

    claims = FIX / "scifact_claims6.jsonl"
    corpus = FIX / "scifact_corpus30.jsonl"
    first: list[ItemResult] = []
    full, params = scifact.run_scifact(corpus, claims, "bm25", home=tmp_path, on_item=first.append)
    on_engine, _ = scifact.run_scifact(corpus, claims, "bm25", home=tmp_path, engine=engine,
                                       done={first[0].item_id: first[0]})
    assert engine.asked == [i.item_id for i in first[1:]]
    assert {k: v for k, v in on_engine.items() if k != "seconds"} == {k: v for k, v in full.items() if k != "seconds"}
    assert set(params["timings"]) == {"ingest", "embed", "search", "embedded_sentences"}


def test_one_library_builder(tmp_path: Path) -> None:
    lib = bench_library("evidencebench", EB3, tmp_path, empty_ok=True)
    try:
        assert lib.config.home.parent == tmp_path / "bench" and lib.config.home.name.startswith("evidencebench-")
        assert len(list(lib.store.papers())) == 3
    finally:
        lib.close()
    with pytest.raises(EvtuiError, match="cannot read the corpus"):
        bench_library("scifact", tmp_path / "missing.jsonl", tmp_path)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(EvtuiError, match="cannot load .*empty file"):
        bench_library("scifact", empty, tmp_path)


def test_runbook_records_resumes_and_keeps_secrets_out(tmp_path: Path) -> None:
    assert stored_params({"data": "x", "judge": "llm", "api_base": "http://user:key@host/v1"}) == \
        {"data": "x", "judge": "llm"}
    assert eb.run_params("d.json", 0, {"model": "m", "api_base": "http://k@h"}, 5) == \
        {"data": "d.json", "seed": 0, "model": "m", "limit": 5}
    with pytest.raises(EvtuiError, match="cannot go with --no-save"):
        RunBook.check(resume=True, save=False)
    with Library(Config(home=tmp_path / "lib", demo=False)) as lib:
        params = {"data": "d.json", "seed": 0, "api_base": "http://k@h"}
        book = RunBook(lib, "evidencebench:d.json", ["er-10", "er-optimal"], "bm25", params)
        assert book.params == {"data": "d.json", "seed": 0}
        assert book.done("er-10") == {}
        record = book.recorder("er-10")
        assert record is not None
        record(ItemResult("a", 50.0, [1, 2], 0.1))
        said: list[str] = []
        again = RunBook(lib, "evidencebench:d.json", ["er-10", "er-optimal"], "bm25", params, resume=True,
                        say=said.append)
        assert again.run_ids == book.run_ids and not said  # the unfinished sweep, both of its tasks
        assert again.done("er-10") == {"a": ItemResult("a", 50.0, [1, 2], 0.1)}
        again.discard_empty()  # er-optimal stored no item: forgotten; er-10 keeps its item
        assert {r["task"] for r in list_runs(lib)} == {"er-10"}
        other = RunBook(lib, "evidencebench:d.json", ["er-10"], "bm25", {**params, "seed": 1}, resume=True,
                        say=said.append)
        assert other.run_id("er-10") != book.run_id("er-10") and said  # other parameters: a new run
        unsaved = RunBook(lib, "evidencebench:d.json", ["er-10"], "bm25", params, save=False)
        assert unsaved.run_id("er-10") is None and unsaved.recorder("er-10") is None
        run_id = book.run_id("er-10")
        assert run_id is not None
        record_item(lib, run_id, ItemResult("b", 25.0, [3], 0.1))
        save_run(lib, {"dataset": "evidencebench:d.json", "task": "er-10", "method": "bm25", "n_items": 2,
                       "aspect_recall": 37.5, "per_item": {"a": 50.0, "b": 25.0}}, book.params, run_id=run_id)
        assert run_per_item(lib, run_id) == {"a": 50.0, "b": 25.0}
        assert run_per_item(lib, "nope") == {}


def test_reports_chart_and_compare() -> None:
    runs = [
        {"id": "r1", "dataset": "evidencebench:d.json", "task": "er-10", "method": "bm25", "status": "done",
         "metrics": {"aspect_recall": 40.0}, "n_items": 2, "n_skipped": 0, "seconds": 1.0},
        {"id": "r2", "dataset": "evidencebench:d.json", "task": "er-10", "method": "random", "status": "done",
         "metrics": {"aspect_recall": 20.0}, "n_items": 2, "n_skipped": 0, "seconds": 1.0},
        {"id": "r3", "dataset": "evidencebench:d.json", "task": "er-10", "method": "dense", "status": "running",
         "metrics": {}, "n_items": 1, "n_skipped": 0, "seconds": 0.0},
    ]
    assert primary_metric(runs[0]) == ("aspect_recall", 40.0) and primary_metric(runs[2]) == ("", None)
    text = chart(runs).plain
    assert "bm25" in text and "random" in text and "dense" not in text  # an unfinished run is not a bar
    table = compare(runs[:2], {"r1": {"a": 50.0, "b": 30.0}, "r2": {"a": 10.0, "b": 30.0}})
    from rich.console import Console

    console = Console(width=100, record=True)
    console.print(table)
    out = console.export_text()
    assert "head to head" in out and "better on 1" in out and "1 tie(s)" in out


def test_the_chart_draws_each_metric_on_its_own_scale() -> None:
    def run(dataset: str, task: str, metrics: dict[str, float]) -> dict[str, object]:
        return {"id": task, "dataset": dataset, "task": task, "method": "best", "status": "done", "metrics": metrics,
                "n_items": 1, "n_skipped": 0, "seconds": 1.0}

    runs = [run("scifact:c.jsonl", "verify", {"abstract_label_only_f1": 0.5, "abstract_label_only_precision": 0.5}),
            run("scifact:c.jsonl", "retrieval", {"ndcg@10": 0.5, "recall@1": 50.0}),
            run("checkcovid:dev.json", "retrieval", {"sentence_recall@1": 50.0}),
            run("evidencebench:d.json", "er-10", {"aspect_recall": 50.0})]
    width = 40
    for r in runs:
        bars = [x for x in chart([r], width=width).plain.splitlines() if "best" in x]
        assert len(bars) == 1
        filled = sum(x in "█▉▊▋▌▍▎▏" for x in bars[0])
        assert abs(filled - width / 2) <= 1, (r["task"], bars[0])  # half the bar: SciFact's F1 0.5 was drawn as 0.5%


def test_bench_never_imports_the_layers_above_it() -> None:
    """The engine is passed in: evtui.bench imports neither evtui.scale nor the faces."""
    offenders = []
    for path in (PKG / "bench").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            offenders += [f"{path.name}: {n}" for n in names
                          if n.startswith(("evtui.scale", "evtui.tui", "evtui.cli"))]
    assert offenders == []
