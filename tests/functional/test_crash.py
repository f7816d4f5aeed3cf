"""Real SIGKILLs of real `evtui` processes at named phases (evtui.faults), then repair, re-run and resume.

test_library.py covers os._exit at two points in-process; here the kill is a SIGKILL of a CLI subprocess at
every phase of a batch, also while papers are being replaced, during the repair itself, inside an embedding
chunk and in the middle of a benchmark sweep. The long version is benchmarks/crash_kill.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from evtui.bench import TASKS, list_runs
from evtui.cli import main
from evtui.config import Config, load_config
from evtui.library import Library, audit
from evtui.request import Filters

CORE = Path(__file__).parents[1] / "fixtures" / "core"
EB2 = CORE / "evidencebench2.json"
BATCH = "40"  # sentences per batch: the fixtures make 6 batches, so a kill lands between committed ones


def evtui(*args: str, crash: str | None = None, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, EVTUI_BATCH_SENTENCES=BATCH)
    if crash:
        env["EVTUI_CRASH_AT"] = crash
    if home:
        env["EVTUI_HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "evtui.cli", *args], env=env, capture_output=True, text=True,
                          timeout=120)


def content(lib: Library) -> tuple[dict[str, str], set[str]]:
    return lib.store.paper_hashes(), lib.store.all_sentence_ids()


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], set[str]]:
    """What a clean ingest of the core fixtures stores."""
    with Library(Config(home=tmp_path_factory.mktemp("ref"), demo=False)) as lib:
        lib.ingest([CORE])
        return content(lib)


@pytest.mark.parametrize(("phase", "repaired"), [
    ("parse", False), ("db_write", False), ("index_commit", True), ("mark_ready", True)])
def test_sigkill_at_each_phase_is_repaired_and_reingest_completes(
        phase: str, repaired: bool, reference: tuple[dict[str, str], set[str]],
        capsys: pytest.CaptureFixture[str]) -> None:
    proc = evtui("ingest", str(CORE), "--json", crash=f"{phase}:3")
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    with Library(load_config()) as lib:
        assert bool(lib.recovered) == repaired  # pending papers exist only between the DuckDB and index commits
        report = audit(lib)
        assert report["ok"], report
        assert 0 < report["db_sentences"] < len(reference[1])  # killed midway: some batches, not all
    assert main(["stats", "--check", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["consistency"]["consistent"]
    assert evtui("ingest", str(CORE), "--json").returncode == 0
    with Library(load_config()) as lib:
        assert audit(lib)["ok"]
        assert content(lib) == reference  # nothing lost, nothing twice


def _edited_copy(src: Path, dest: Path) -> Path:
    """The fixtures with every 'the' upper-cased: same papers, new content (same length keeps offsets)."""
    dest.mkdir()
    for f in src.iterdir():
        (dest / f.name).write_bytes(f.read_bytes().replace(b" the ", b" THE "))
    return dest


@pytest.mark.parametrize("phase", ["db_write", "index_commit"])
def test_sigkill_while_replacing_keeps_one_whole_version(phase: str, tmp_path: Path) -> None:
    with Library(load_config()) as lib:
        lib.ingest([CORE])
        before = content(lib)
    edited = _edited_copy(CORE, tmp_path / "edited")
    proc = evtui("ingest", str(edited), "--json", crash=f"{phase}:1")
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    with Library(load_config()) as lib:
        assert audit(lib)["ok"]
        hashes, ids = content(lib)
        assert ids == before[1]  # same sentence ids, old or new text: never both, never neither
        changed = {pid for pid, h in hashes.items() if h != before[0][pid]}
        if phase == "db_write":  # the transaction never committed: every paper is still the old version
            assert not changed
        else:  # rows were durable as pending: the repair indexed the new version of the first batch
            assert changed and set(lib.recovered) == changed
        for pid in changed:  # DuckDB and the index hold the same (new) text
            stored = {s.id: s.text for s in lib.store.sentences(pid)}
            assert any(" THE " in t for t in stored.values())
            hits = lib.index.search(
                lib.index.filter_query(Filters(paper=pid), include_headings=True)[0][1], limit=10_000)
            assert {h.sentence.id: h.sentence.text for h in hits} == stored
    assert evtui("ingest", str(edited), "--json").returncode == 0
    with Library(Config(home=tmp_path / "clean", demo=False)) as clean:
        clean.ingest([CORE])
        clean.ingest([edited])
        expected = content(clean)
    with Library(load_config()) as lib:
        assert audit(lib)["ok"]
        assert content(lib) == expected


def test_sigkill_during_the_repair_itself(reference: tuple[dict[str, str], set[str]]) -> None:
    assert evtui("ingest", str(CORE), "--json", crash="index_commit:2").returncode == -signal.SIGKILL
    # The next open repairs the pending papers; kill it in the middle of that repair too.
    assert evtui("stats", "--json", crash="recover:1").returncode == -signal.SIGKILL
    with Library(load_config()) as lib:
        assert lib.recovered and audit(lib)["ok"]
    assert evtui("ingest", str(CORE), "--json").returncode == 0
    with Library(load_config()) as lib:
        assert content(lib) == reference


EMBED = ("import functools, sys, evtui.embed as e; from evtui.cli import main;"
         " e.ensure_embeddings = functools.partial(e.ensure_embeddings, chunk=8);"
         " sys.exit(main(['embed', '--json']))")


def test_sigkill_inside_an_embedding_chunk_keeps_whole_chunks() -> None:
    from evtui.embed import coverage, model_available

    if not model_available():
        pytest.skip("the offline embedding model is not installed")
    with Library(load_config()) as lib:
        lib.ingest([CORE / "scifact5.jsonl"])
    env = dict(os.environ, EVTUI_CRASH_AT="embed_batch:3")
    proc = subprocess.run([sys.executable, "-c", EMBED], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    with Library(load_config()) as lib:
        assert audit(lib)["ok"]
        assert coverage(lib)[0] == 16  # two chunks of 8 committed; the third was inside its transaction
    env.pop("EVTUI_CRASH_AT")
    assert subprocess.run([sys.executable, "-c", EMBED], env=env, capture_output=True, timeout=120).returncode == 0
    with Library(load_config()) as lib:
        done, total = coverage(lib)
        assert done == total > 16 and audit(lib)["duplicate_embeddings"] == 0


PAPERS = ("import functools, sys, evtui.paper_vectors as pv; from evtui.cli import main;"
          " pv.ensure_paper_vectors = functools.partial(pv.ensure_paper_vectors, chunk=2);"
          " sys.exit(main(['embed', '--json']))")


def test_sigkill_inside_a_paper_vector_chunk_keeps_whole_chunks() -> None:
    from evtui import paper_vectors
    from evtui.embed import model_available

    if not model_available():
        pytest.skip("the offline embedding model is not installed")
    with Library(load_config()) as lib:
        lib.ingest([CORE / "scifact5.jsonl"])
    env = dict(os.environ, EVTUI_CRASH_AT="paper_vectors:2")
    proc = subprocess.run([sys.executable, "-c", PAPERS], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    with Library(load_config()) as lib:
        assert audit(lib)["ok"]
        assert paper_vectors.coverage(lib) == (2, 5)  # the first chunk of 2 committed; the second was inside its own
        assert paper_vectors.complete_matrix(lib) is None
    env.pop("EVTUI_CRASH_AT")
    assert subprocess.run([sys.executable, "-c", PAPERS], env=env, capture_output=True, timeout=120).returncode == 0
    with Library(load_config()) as lib:
        assert paper_vectors.coverage(lib) == (5, 5) and audit(lib)["duplicate_paper_vectors"] == 0
        assert paper_vectors.complete_matrix(lib) is not None


def _metrics(runs: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return [(r["task"], r["n_items"], r["n_skipped"], r["aspect_recall"], r["per_item"]) for r in runs]


def test_killed_sweep_keeps_finished_items_and_resume_finishes_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["bench", "evidencebench", "--data", str(EB2), "--task", "all", "--method", "bm25", "--json"]
    assert main([*args, "--home", str(tmp_path / "clean")]) == 0
    clean = json.loads(capsys.readouterr().out)
    # 6 items in all (er-optimal 2, er-10 2, each results task 1): the kill follows the 3rd stored item
    assert evtui(*args, crash="bench_item:3").returncode == -signal.SIGKILL
    with Library(load_config()) as lib:
        runs = {r["task"]: r for r in list_runs(lib)}
    assert runs["er-optimal"]["status"] == "done"
    # the killed process owned them: interrupted, and --resume finishes them
    assert runs["er-10"]["status"] == "interrupted" and runs["er-10"]["n_items"] == 1  # the finished item is kept
    assert {runs[t]["status"] for t in TASKS[2:]} == {"interrupted"}
    assert main([*args, "--resume"]) == 0
    resumed = json.loads(capsys.readouterr().out)
    assert _metrics(resumed) == _metrics(clean)
    assert [r["run_id"] for r in resumed] == [runs[t]["id"] for t in TASKS]  # the same runs, finished
    assert main(["bench", "runs", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert len(listed) == 4 and {r["status"] for r in listed} == {"done"}
    assert {"id", "created_at", "dataset", "task", "method", "parameters", "code_version", "n_items", "n_skipped",
            "metrics", "seconds", "status", "in_sample"} == set(listed[0])
    # nothing left to resume: --resume starts (and finishes) a new run
    assert main([*args, "--resume"]) == 0
    assert _metrics(json.loads(capsys.readouterr().out)) == _metrics(clean)
    with Library(load_config()) as lib:
        assert len(list_runs(lib)) == 8


BENCH = Path(__file__).parents[1] / "fixtures" / "bench"


@pytest.mark.parametrize("verb", ["scifact", "checkcovid"])
def test_killed_claim_benchmark_resumes_to_the_same_scores(
        verb: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus, claims = ((BENCH / "scifact_corpus30.jsonl", BENCH / "scifact_claims6.jsonl") if verb == "scifact" else
                      (BENCH / "checkcovid_corpus6.json", BENCH / "checkcovid_claims.json"))
    args = ["bench", verb, "--corpus", str(corpus), "--claims", str(claims), "--method", "bm25", "--json"]
    assert main([*args, "--home", str(tmp_path / "clean")]) == 0
    clean = json.loads(capsys.readouterr().out)
    assert evtui(*args, crash="bench_item:2").returncode == -signal.SIGKILL
    with Library(load_config()) as lib:
        (killed,) = list_runs(lib)
    assert killed["status"] == "interrupted" and killed["n_items"] == 2
    assert main([*args, "--resume"]) == 0
    resumed = json.loads(capsys.readouterr().out)
    assert {k: v for k, v in resumed.items() if k != "seconds"} == {k: v for k, v in clean.items() if k != "seconds"}
    with Library(load_config()) as lib:
        (done,) = list_runs(lib)
    assert done["id"] == killed["id"] and done["status"] == "done" and "timings" in done["parameters"]


def test_resume_needs_the_same_parameters(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["bench", "evidencebench", "--data", str(EB2), "--task", "er-10", "--method", "random", "--json"]
    assert evtui(*args, "--seed", "1", crash="bench_item:1").returncode == -signal.SIGKILL
    assert main([*args, "--seed", "2", "--resume"]) == 0  # another seed is another run
    capsys.readouterr()
    with Library(load_config()) as lib:
        status = sorted((r["parameters"]["seed"], r["status"]) for r in list_runs(lib))
    assert status == [(1, "interrupted"), (2, "done")]


def test_a_run_that_fails_before_any_item_leaves_nothing_to_resume(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "evidencebench", "--data", str(EB2), "--task", "all", "--method", "no-such"]) == 2
    assert "no-such" in capsys.readouterr().err
    with Library(load_config()) as lib:
        assert list_runs(lib) == []


def test_runs_table_of_an_older_library_is_migrated() -> None:
    home = load_config().home
    home.mkdir(parents=True)
    con = duckdb.connect(str(home / "library.duckdb"))
    con.execute("CREATE TABLE runs (id VARCHAR PRIMARY KEY, created_at TIMESTAMP DEFAULT current_timestamp,"
                " dataset VARCHAR, task VARCHAR, method VARCHAR, parameters VARCHAR, code_version VARCHAR,"
                " n_items INTEGER, n_skipped INTEGER, metrics VARCHAR, per_item VARCHAR, seconds DOUBLE)")
    con.execute("INSERT INTO runs (id, dataset, task, method, parameters, n_items, n_skipped, metrics, per_item,"
                " seconds) VALUES ('old', 'evidencebench:x.json', 'er-10', 'bm25', '{}', 3, 0,"
                " '{\"aspect_recall\": 40.0}', '{}', 1.5)")
    con.close()
    with Library(load_config()) as lib:
        (run,) = list_runs(lib)
    assert run["status"] == "done" and run["metrics"] == {"aspect_recall": 40.0} and run["n_items"] == 3
