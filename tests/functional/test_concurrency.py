"""One process owns a writable library; inside it, searches run while an ingest writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import evtui.library.ingesting as library_ingesting
from evtui.config import load_config
from evtui.library import Library
from evtui.lockinfo import OWNER_FILE
from evtui.search import Searcher

WORDS = ["aspirin", "cancer", "statin", "cholesterol", "cough", "insulin", "glucose", "lithium", "memory", "sleep"]


def _corpus(path: Path, docs: int, start: int = 0) -> Path:
    """SciFact-corpus JSONL: `docs` abstracts of 5 sentences, each naming two topic words."""
    with path.open("w", encoding="utf-8") as fh:
        for d in range(start, start + docs):
            a, b = WORDS[d % len(WORDS)], WORDS[(d * 7 + 3) % len(WORDS)]
            abstract = [f"In study {d}, {a} was associated with lower {b} in {20 + d % 50} patients.",
                        f"The {a} group had fewer events than controls (p = 0.0{d % 9 + 1}).",
                        f"Participants were followed for {d % 12 + 1} years.",
                        f"No effect of {b} on mortality was found in cohort {d}.",
                        "Further trials are needed."]
            fh.write(json.dumps({"doc_id": 100_000 + d, "title": f"{a.title()} and {b} {d}",
                                 "abstract": abstract}) + "\n")
    return path


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evtui.cli", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "200"})


def test_second_process_names_the_holder_and_its_command(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "c.jsonl", 5)
    with Library(load_config()) as lib:
        lib.ingest([corpus])
        note = json.loads((lib.config.home / OWNER_FILE).read_text())
        assert note["pid"] == os.getpid()
        for args in (["stats"], ["search", "aspirin", "--method", "bm25"]):
            proc = _cli(*args)
            assert proc.returncode == 2, proc.stderr
            assert f"in use by process {os.getpid()}" in proc.stderr and "since" in proc.stderr
            assert "Traceback" not in proc.stderr
        proc = _cli("search", "aspirin", "--json")
        assert proc.returncode == 2
        assert "in use by process" in json.loads(proc.stdout)["error"]
        home = lib.config.home
    assert not (home / OWNER_FILE).exists()  # released on close
    assert _cli("stats").returncode == 0  # and the next process gets the library


def test_a_stale_owner_note_is_not_believed(tmp_path: Path) -> None:
    home = load_config().home
    home.mkdir(parents=True)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    (home / OWNER_FILE).write_text(json.dumps({"pid": int(dead), "command": "evtui ingest", "since": "then"}))
    with Library(load_config()) as lib:  # a note from a dead process does not stop anyone
        assert json.loads((lib.config.home / OWNER_FILE).read_text())["pid"] == os.getpid()


def test_a_killed_holder_frees_the_library(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "c.jsonl", 5)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from evtui.config import load_config; from evtui.library import "
         "Library; lib = Library(load_config()); lib.ingest([sys.argv[1]]); print('ready', flush=True); "
         "time.sleep(60)", str(corpus)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        proc = _cli("stats")
        assert proc.returncode == 2 and f"process {holder.pid}" in proc.stderr
        holder.kill()
        holder.wait(timeout=10)
        proc = _cli("stats", "--json")
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["papers"] == 5
    finally:
        holder.kill()


@pytest.mark.parametrize("method", ["bm25-coverage", "best"])
def test_searches_run_while_an_ingest_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: str) -> None:
    monkeypatch.setattr(library_ingesting, "BATCH_SENTENCES", 400)  # many commits while the searches run
    first = _corpus(tmp_path / "first.jsonl", 40)
    more = _corpus(tmp_path / "more.jsonl", 600, start=40)
    with Library(load_config()) as lib:
        lib.ingest([first])
        searcher = Searcher(lib)
        searcher.search("(aspirin, reduce, cancer)", k=10, method=method)  # models loaded before the race
        failures: list[BaseException] = []
        seen: list[tuple[int, dict[str, str]]] = []

        def ingest() -> None:
            try:
                lib.ingest([more])
            except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
                failures.append(exc)

        writer = threading.Thread(target=ingest)
        writer.start()
        while writer.is_alive() or len(seen) < 3:
            result = searcher.search("(aspirin, reduce, cancer)", k=10, method=method)
            seen.append((lib.index.num_docs(), {e.sentence.id: e.sentence.text for e in result.evidence}))
        writer.join()
        assert not failures, failures
        assert all(hits for _n, hits in seen)
        # the searches saw the ingest progress (more than one committed state) ...
        assert len({n for n, _hits in seen}) > 1
        # ... and every sentence they returned is stored, with the same text, once the ingest is done
        for _n, hits in seen:
            for sid, text in hits.items():
                row = lib.store.con.execute("SELECT text FROM sentences WHERE id = ?", [sid]).fetchone()
                assert row is not None and row[0] == text, sid
        check = lib.check_consistency()
        assert check["consistent"], check
        assert check["db_sentences"] == 640 * 6  # a title and five abstract sentences


def test_a_failing_batch_write_is_reported_and_loses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store fault (simulated: disk full) mid-ingest: reported once, nothing stored is lost, the next run loads the
    rest."""
    from evtui.store import Store

    monkeypatch.setattr(library_ingesting, "BATCH_SENTENCES", 60)
    with Library(load_config()) as lib:
        lib.ingest([_corpus(tmp_path / "first.jsonl", 10)])
        before = lib.check_consistency()
        real = Store.write_pending
        calls = {"n": 0}

        def flaky(self: Store, *args: object) -> None:
            calls["n"] += 1
            if calls["n"] == 2:
                raise OSError(28, "No space left on device")
            real(self, *args)  # type: ignore[arg-type]

        monkeypatch.setattr(Store, "write_pending", flaky)
        report = lib.ingest([_corpus(tmp_path / "more.jsonl", 60, start=10)])
        monkeypatch.setattr(Store, "write_pending", real)
        # A full disk is reported once (every later batch would fail the same way) and the ingest stops there.
        (full,) = [e for e in report.errors if "disk is full" in e.reason]
        assert "not stored" in full.reason and "free some space" in full.reason
        assert 0 < report.added < 60
        check = lib.check_consistency()
        assert check["consistent"], check
        assert check["db_sentences"] == before["db_sentences"] + report.added * 6
        again = lib.ingest([tmp_path / "more.jsonl"])  # the rest load on the next try
        assert again.added == 60 - report.added and not again.errors
