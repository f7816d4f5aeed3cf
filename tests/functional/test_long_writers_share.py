"""Long CLI writers share reads: `evtui embed` and a bench sweep hold the library read-write only while they store a
batch, so `evtui stats` and `evtui bench runs` in another process read it meanwhile instead of "in use by process N".
Each check runs the real reader in a second process from inside the writer's run (its progress callback, a recorded
item), where the library used to be held read-write throughout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evtui import paper_vectors
from evtui.bench import runs
from evtui.bench.driver import RunBook
from evtui.bench.runs import ItemResult, list_runs, record_item, save_run
from evtui.config import load_config
from evtui.embed import coverage, ensure_embeddings, model_available
from evtui.library import Library, audit
from evtui.lockinfo import shares_reads


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evtui.cli", *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "200"})


def _stats() -> dict[str, object]:
    proc = _cli("stats", "--json")
    assert proc.returncode == 0, proc.stderr  # was: "in use by process N (`python`)", exit 2
    return json.loads(proc.stdout)


needs_model = pytest.mark.skipif(not model_available(), reason="the offline embedding model is not installed")


@needs_model
def test_stats_reads_between_the_batches_of_an_embed_run(papers_ingested: Path) -> None:
    seen: list[tuple[int, list[int]]] = []
    with Library(load_config()) as lib:  # as `evtui embed` opens it: the writer, exclusive

        def beside(done: int, total: int) -> None:
            if 0 < done < total:
                seen.append((done, _stats()["embedded"]["sentences"]))  # type: ignore[index]

        n = ensure_embeddings(lib, chunk=3, on_progress=beside, share=True)
        assert n and coverage(lib) == (n, n)
        assert not lib.shared  # exclusive again once the run is over (no reader left)
        # writes outside a window still work after the run (what a caller may do next)
        lib.store.set_meta("after_embed", "1")
        assert audit(lib)["duplicate_embeddings"] == 0
    assert seen and all(embedded[0] == done for done, embedded in seen)  # each reader saw the batches stored so far


@needs_model
def test_stats_reads_while_paper_vectors_are_computed(papers_ingested: Path) -> None:
    seen: list[int] = []
    with Library(load_config()) as lib:
        n = paper_vectors.ensure_paper_vectors(
            lib, chunk=1, share=True,
            on_progress=lambda done, total: seen.append(_stats()["papers"]) if 0 < done < total else None)
        assert n == 3 and paper_vectors.coverage(lib) == (3, 3)
    assert seen == [3, 3]


def test_bench_runs_lists_a_sweep_while_it_runs(papers_ingested: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runs, "STORE_EVERY", 0.0)  # each item stored at once: what a reader sees is then certain
    with Library(load_config()) as lib:  # as `evtui bench …` opens the user's library
        book = RunBook(lib, "eb:test.json", ["er-10"], "bm25", {"seed": 0}, share=True)
        assert shares_reads(lib.config.home)
        record = book.recorder("er-10")
        assert record is not None
        record(ItemResult("item-1", 0.5, [1, 2], 0.1))
        proc = _cli("bench", "runs", "--json")
        assert proc.returncode == 0, proc.stderr  # was refused for the whole sweep
        (run,) = json.loads(proc.stdout)
        assert run["status"] == "running" and run["n_items"] == 1
        record_item(lib, book.run_id("er-10") or "", ItemResult("item-2", 1.0, [3], 0.1))
        save_run(lib, {"dataset": "eb:test.json", "task": "er-10", "method": "bm25", "n_items": 2, "n_skipped": 0,
                       "aspect_recall": 75.0, "seconds": 0.2}, book.params, run_id=book.run_id("er-10"))
        assert [(r["status"], r["n_items"]) for r in list_runs(lib)] == [("done", 2)]
    proc = _cli("bench", "runs", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)[0]["status"] == "done"


def test_a_cli_sweep_stores_its_items_in_batches(papers_ingested: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each store switches the library to read-write and back: a quick method's items are stored together, and
    every one of them before the run is read or completed."""
    monkeypatch.setattr(runs, "STORE_EVERY", 3600.0)
    with Library(load_config()) as lib:
        book = RunBook(lib, "eb:test.json", ["er-10"], "bm25", {"seed": 0}, share=True)
        run_id = book.run_id("er-10") or ""
        for i in range(5):
            record_item(lib, run_id, ItemResult(f"item-{i}", 0.5, [i], 0.01))
        assert lib.store.con.execute("SELECT count(*) FROM run_items").fetchone() == (0,)  # held back
        assert set(book.done("er-10")) == {f"item-{i}" for i in range(5)}  # a reader of the run flushes them
        record_item(lib, run_id, ItemResult("item-5", 1.0, [5], 0.01))
        save_run(lib, {"dataset": "eb:test.json", "task": "er-10", "method": "bm25", "n_items": 6, "n_skipped": 0,
                       "seconds": 0.1}, book.params, run_id=run_id)
        assert lib.store.con.execute("SELECT count(*) FROM run_items").fetchone() == (6,)
