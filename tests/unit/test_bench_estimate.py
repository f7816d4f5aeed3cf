"""What a Bench sweep will cost (evtui.bench.estimate) and which stored figures are in-sample."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evtui.bench import estimate as est
from evtui.bench.evidencebench import load_items

EB3 = Path(__file__).parents[1] / "fixtures" / "bench" / "eb3.json"
DEV = "evidencebench:evidencebench_dev_set.json"


def _run(task: str, method: str, seconds: float, n_items: int = 2, n_skipped: int = 1, status: str = "done",
         dataset: str = "evidencebench:eb3.json") -> dict[str, Any]:
    return {"dataset": dataset, "task": task, "method": method, "seconds": seconds, "n_items": n_items,
            "n_skipped": n_skipped, "status": status}


def test_a_sweep_with_no_stored_run_is_a_rough_estimate_without_embedding_or_llm() -> None:
    items = load_items(EB3)
    cost = est.estimate_cost(EB3, items, ["er-optimal", "results-er-5"], ["bm25", "random"], "local", [], {})
    assert [(r.task, r.method, r.source) for r in cost.runs] == [
        ("er-optimal", "bm25", "rough"), ("er-optimal", "random", "rough"),
        ("results-er-5", "bm25", "rough"), ("results-er-5", "random", "rough")]
    assert [r.items for r in cost.runs] == [3, 3, 2, 2]  # one item has no results labels: results tasks skip it
    assert cost.papers_to_embed == 0 and cost.llm_methods == () and cost.rough and not cost.slow
    assert re.fullmatch(r"4 runs · 0 papers to embed · no LLM calls · ~\d s \(rough\)", cost.line()), cost.line()
    # ranking at the rough rate, plus the app's stores of the run (its row, its last batch, its result)
    assert cost.runs[0].seconds == pytest.approx(est.RUN_SECONDS + est.STORE_RUN_SECONDS
                                                 + 3 * est.rough_seconds_per_item("bm25", "local"))
    assert any("builds the benchmark library" in n for n in cost.notes)  # {}: not built yet


def test_stored_runs_of_the_same_dataset_task_and_method_give_seconds_per_item() -> None:
    items = load_items(EB3)
    runs = [_run("er-10", "bm25", 30.0), _run("er-10", "bm25", 6.0),  # the fastest: 2 s per item
            _run("er-10", "bm25", 0.3, status="running"), _run("er-10", "bm25", 0.3, dataset=DEV),
            _run("er-optimal", "bm25", 0.3)]
    cost = est.estimate_cost(EB3, items, ["er-10"], ["bm25"], None, runs, {"p": 0})
    (run,) = cost.runs
    assert run.source == "stored" and run.seconds == pytest.approx(6.0 + est.STORE_RUN_SECONDS)
    assert not cost.rough and cost.seconds == pytest.approx(6.0 + est.STORE_RUN_SECONDS + est.SWEEP_START_SECONDS)
    assert cost.line() == "1 run · 0 papers to embed · no LLM calls · ~7 s"


def test_embedding_methods_count_the_papers_the_benchmark_library_has_not_embedded() -> None:
    items = load_items(EB3)
    papers = est.paper_sentences(items)
    assert len(papers) == 3 and all(n > 0 for n in papers.values())
    not_built = est.estimate_cost(EB3, items, ["er-10"], ["best"], "local", [], {})
    assert not_built.papers_to_embed == 3 and not_built.sentences_to_embed == sum(papers.values())
    assert not_built.slow and "3 papers to embed" in not_built.line() and "(rough)" in not_built.line()
    first, *rest = papers
    part = est.estimate_cost(EB3, items, ["er-10"], ["bm25", "dense"], "local", [],
                             {first: 0, **{p: 5 for p in rest}})
    assert part.papers_to_embed == 2 and part.sentences_to_embed == 10
    done = est.estimate_cost(EB3, items, ["er-10"], ["dense"], "local", [], dict.fromkeys(papers, 0))
    assert done.papers_to_embed == 0 and done.embed_seconds == 0
    busy = est.estimate_cost(EB3, items, ["er-10"], ["dense"], "local", [], None)
    assert "papers to embed: unknown" in busy.line()


def test_llm_calls_follow_the_judge_and_the_registry() -> None:
    items = load_items(EB3)
    local = est.estimate_cost(EB3, items, ["er-10"], ["llm-rerank", "llm-sbs"], "local", [], {})
    assert local.llm_methods == ("llm-sbs",)  # llm-sbs always prompts; llm-rerank judges locally
    llm = est.estimate_cost(EB3, items, ["er-10"], ["llm-rerank", "llm-sbs"], "llm", [], {})
    assert llm.llm_methods == ("llm-rerank", "llm-sbs")
    assert "LLM calls: llm-rerank, llm-sbs" in llm.line()
    assert llm.runs[0].seconds > local.runs[0].seconds  # an LLM round trip per item, roughly


def test_duration_reads_as_a_person_would_say_it() -> None:
    assert [est.duration(s) for s in (0.2, 40, 150, 7200)] == ["1 s", "40 s", "2 min", "2.0 h"]


def test_in_sample_matches_the_trained_methods_and_the_training_files() -> None:
    files = est.training_files()
    assert "evidencebench_dev_set.json" in files and "evidencebench_train_public.json" in files
    assert est.in_sample({"method": "best", "dataset": DEV})
    assert est.in_sample({"method": "llm-rerank", "dataset": "evidencebench:x.json",
                          "parameters": {"data": "/data/evidencebench/evidencebench_dev_set.json"}})
    assert not est.in_sample({"method": "bm25", "dataset": DEV})  # no learned model
    assert not est.in_sample({"method": "best", "dataset": "evidencebench:eb3.json"})
    assert not est.in_sample({"method": "best", "dataset": DEV}, frozenset({"other.json"}))


def test_training_files_of_an_unreadable_model_are_none(tmp_path: Path) -> None:
    bad = tmp_path / "model.json"
    bad.write_text("{", encoding="utf-8")
    assert est.training_files(bad) == frozenset()


def test_missing_embeddings_reads_the_benchmark_library(tmp_path: Path) -> None:
    from evtui.bench.driver import bench_library
    from evtui.embed import MODEL_ID, _insert_chunk, ensure_table, text_hash

    items = load_items(EB3)
    papers = list(est.paper_sentences(items))
    db = est.bench_db(EB3, tmp_path)
    assert est.read_missing_embeddings(db, papers) == {}  # not built yet
    lib = bench_library("evidencebench", EB3, tmp_path)
    try:
        con = lib.store.con
        before = est.missing_embeddings(con, papers)  # no embeddings table yet
        assert set(before) == set(papers) and all(n > 0 for n in before.values())
        ensure_table(con)
        rows = [s for s in lib.store.sentences(papers[0]) if not s.is_heading]
        _insert_chunk(con, [s.id for s in rows], [text_hash(s.text) for s in rows],
                      np.zeros((len(rows), 384), dtype=np.float32), MODEL_ID)
        after = est.missing_embeddings(con, papers)
        assert after[papers[0]] == 0 and after[papers[1]] == before[papers[1]]
    finally:
        lib.close()
    assert db.exists()
    assert est.read_missing_embeddings(db, papers) == after


def test_the_quick_methods_embed_nothing_and_call_no_llm() -> None:
    from evtui import methods

    quick = est.quick_methods()
    assert quick == ["bm25-coverage", "bm25", "random"]  # registry order
    assert all(not methods.uses_embeddings(m) and not methods.get(m).calls_llm("llm") for m in quick)


def test_eta_comes_from_the_pace_of_the_items_done() -> None:
    assert est.eta(0, 10, 5.0) is None
    assert est.eta(5, 20, 10.0) == pytest.approx(30.0)  # 2 s an item, 15 to go
    assert est.eta(20, 20, 10.0) == 0.0


def test_a_stored_run_that_embedded_the_papers_does_not_time_the_next_one() -> None:
    """best's first run on a dataset embeds every paper (335 s on the dev set); later runs take seconds."""
    items = load_items(EB3)
    first = {**_run("er-10", "best", 300.0, 3, 0), "created_at": "2026-01-01T10:00:00"}
    cost = est.estimate_cost(EB3, items, ["er-10"], ["best"], "local", [first], {"p": 0})
    assert cost.runs[0].source == "rough"  # that run's time was mostly embedding: not a fact about ranking
    later = {**_run("er-10", "best", 3.0, 3, 0), "created_at": "2026-01-01T11:00:00"}
    cost = est.estimate_cost(EB3, items, ["er-10"], ["best"], "local", [later, first], {"p": 0})
    assert cost.runs[0].source == "stored" and cost.runs[0].seconds == pytest.approx(3.0 + est.STORE_RUN_SECONDS)
    # a results task skips items, so its run did not embed every paper: it proves nothing about the others
    partial = {**_run("results-er-5", "dense", 9.0, 2, 1), "created_at": "2026-01-01T09:00:00"}
    assert est.embedded_since([partial], "evidencebench:eb3.json", 3) is None
    assert est.embedded_since([later, first, partial], "evidencebench:eb3.json", 3) == "2026-01-01T10:00:00"


def test_the_sweeps_one_off_costs_fall_on_the_run_that_pays_them() -> None:
    items = load_items(EB3)
    cost = est.estimate_cost(EB3, items, ["er-10"], ["bm25", "best", "dense"], "local", [], {})
    bm25, best, dense = cost.runs
    assert bm25.setup == pytest.approx(est.SWEEP_START_SECONDS + 3 * est.INGEST_SECONDS_PER_PAPER)
    assert best.setup == pytest.approx(cost.embed_seconds + est.MODEL_LOAD_SECONDS)
    assert dense.setup == 0
    assert cost.seconds == pytest.approx(sum(r.total for r in cost.runs))


def test_the_sweep_clock_paces_the_current_run_and_scales_the_rest() -> None:
    clock = est.SweepClock([10.0, 100.0], start=0.0)
    assert clock.left(0.0) == pytest.approx(110.0)  # nothing done: the estimate
    clock.progress(0, 2, 5, 10, now=2.0)  # the run's first report: its pace is timed from here
    assert clock.left(2.0) == pytest.approx(5 * 1.0 + 100.0)  # the estimate's pace, 1 s an item
    clock.progress(0, 2, 7, 10, now=3.0)  # 2 items in 1 s: the observed pace weighs 2/7
    assert clock.left(3.0) == pytest.approx(3 * (2 / 7 * 0.5 + 5 / 7 * 1.0) + 100.0)
    clock.progress(0, 2, 10, 10, now=5.0)  # the first run took 5 s for an estimated 10: scale 0.5
    assert clock.left(5.0) == pytest.approx(50.0)
    assert clock.left(25.0) == pytest.approx(30.0)  # no item of the second run yet: its estimate runs down
    clock.progress(1, 2, 1, 10, now=25.0)
    assert clock.left(25.0) == pytest.approx(9 * 5.0)  # its scaled estimate: 5 s an item
    clock.progress(1, 2, 6, 10, now=75.0)  # 5 items in 50 s: half observed (10 s), half estimate (5 s)
    assert clock.left(75.0) == pytest.approx(4 * 7.5)
    clock.progress(1, 2, 10, 10, now=90.0)
    assert clock.left(90.0) == 0.0
    plain = est.SweepClock(None, start=0.0)
    assert plain.left(1.0) is None
    plain.progress(0, 2, 5, 10, now=10.0)
    assert plain.left(10.0) == pytest.approx(30.0)  # the sweep's pace: 2 s an item, 15 to go


def test_the_time_left_does_not_swing_with_cheap_runs_before_a_slow_one() -> None:
    """bm25 (fast) then best (embeds every paper): the old ETA said ~6 s left for minutes."""
    clock = est.SweepClock([4.0, 200.0], start=0.0)
    for i in range(1, 38):
        clock.progress(0, 2, i, 37, now=i * 0.1)
    left = clock.left(3.7)
    assert left is not None and left > 150  # the slow run still to come, at its estimate (bm25 was on time)
