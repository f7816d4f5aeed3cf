"""A long ingest shares reads: `Library.ingest(share=True)` (what `evtui ingest` and the app's ingest pass) holds
DuckDB read-write only while a batch is stored, so a real `evtui stats` in another process reads the library in the
middle of the run, where it used to be refused ("in use by process N") until the last file. Crash safety is the
same as an exclusive ingest's: a SIGKILL in a window or between windows is repaired at the next open."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from evtui.config import Config, load_config
from evtui.library import IngestProgress, Library, audit
from evtui.library import ingesting as library_ingesting
from evtui.lockinfo import shares_reads

CORE = Path(__file__).parents[1] / "fixtures" / "core"


def _stats() -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evtui.cli", "stats", "--json"], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "COLUMNS": "200"})


def _content(lib: Library) -> tuple[dict[str, str], set[str]]:
    return lib.store.paper_hashes(), lib.store.all_sentence_ids()


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], set[str]]:
    """What an exclusive (unshared) ingest of the core fixtures stores."""
    with Library(Config(home=tmp_path_factory.mktemp("ref"), demo=False)) as lib:
        lib.ingest([CORE])
        return _content(lib)


def _ingest_reading_beside(lib: Library, seen: list[tuple[int, subprocess.CompletedProcess[str]]]) -> None:
    def beside(p: IngestProgress) -> None:
        # once, half way through the files: some batches stored, more to come
        if not seen and p.files_total and p.files_done == p.files_total // 2:
            seen.append((len(lib.store.paper_hashes()), _stats()))

    lib.ingest([CORE], on_progress=beside, share=True)


def test_stats_reads_between_the_batches_of_a_cli_ingest(
        monkeypatch: pytest.MonkeyPatch, reference: tuple[dict[str, str], set[str]]) -> None:
    monkeypatch.setattr(library_ingesting, "BATCH_SENTENCES", 40)  # many batches, as a big folder makes
    seen: list[tuple[int, subprocess.CompletedProcess[str]]] = []
    with Library(load_config()) as lib:  # as `evtui ingest` opens it: the writer, exclusive
        _ingest_reading_beside(lib, seen)
        assert not lib.shared and not shares_reads(lib.config.home)  # exclusive again once the run is over
        lib.store.set_meta("after_ingest", "1")  # writes outside a window still work afterwards
        assert audit(lib)["ok"]
        assert _content(lib) == reference  # the same rows as an exclusive ingest
    (stored, proc), = seen
    assert proc.returncode == 0, proc.stderr  # was: "in use by process N", exit 2
    assert 0 < json.loads(proc.stdout)["papers"] == stored < len(reference[0])  # the batches stored so far


def test_the_apps_ingest_lets_a_cli_reader_in_between_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(library_ingesting, "BATCH_SENTENCES", 40)
    seen: list[tuple[int, subprocess.CompletedProcess[str]]] = []
    with Library(load_config(), shared=True) as lib:  # as the app holds it
        _ingest_reading_beside(lib, seen)
        assert lib.shared and lib.store.read_only  # the app's library stays shared, read-only between writes
    (stored, proc), = seen
    assert proc.returncode == 0, proc.stderr  # was: read-write for the whole ingest, the reader gave up
    assert json.loads(proc.stdout)["papers"] == stored > 0


_RUN = ("import sys; from pathlib import Path; from evtui.config import load_config; from evtui.library import Library\n"
        "with Library(load_config()) as lib: lib.ingest([Path(sys.argv[1])], share=True)")


@pytest.mark.parametrize("phase", ["parse", "db_write", "index_commit", "mark_ready"])
def test_a_shared_ingest_killed_is_repaired_and_completes(
        phase: str, reference: tuple[dict[str, str], set[str]]) -> None:
    env = dict(os.environ, EVTUI_BATCH_SENTENCES="40", EVTUI_CRASH_AT=f"{phase}:3")
    proc = subprocess.run([sys.executable, "-c", _RUN, str(CORE)], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    with Library(load_config()) as lib:
        assert bool(lib.recovered) == (phase in {"index_commit", "mark_ready"})
        report = audit(lib)
        assert report["ok"], report
        assert 0 < report["db_sentences"] < len(reference[1])
        lib.ingest([CORE], share=True)
        assert audit(lib)["ok"]
        assert _content(lib) == reference


def test_the_apps_writes_during_a_shared_ingest_lose_nothing(
        monkeypatch: pytest.MonkeyPatch, reference: tuple[dict[str, str], set[str]]) -> None:
    """The app writes (a basket change, a cached verdict) in other threads while its ingest runs; each switches the
    library between the ingest's windows, re-making the connection the ingest reads on."""
    import threading

    monkeypatch.setattr(library_ingesting, "BATCH_SENTENCES", 40)
    done = threading.Event()
    writes: list[int] = []
    failed: list[BaseException] = []
    with Library(load_config(), shared=True) as lib:

        def app_writes() -> None:
            try:
                while not done.is_set():
                    with lib.rw(wait=30.0):
                        lib.store.set_meta("app_write", len(writes))
                    writes.append(1)
            except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
                failed.append(exc)

        writer = threading.Thread(target=app_writes)
        writer.start()
        try:
            report = lib.ingest([CORE], share=True)
        finally:
            done.set()
            writer.join()
        assert not failed and writes
        assert not report.errors, report.errors
        assert audit(lib)["ok"]
        assert _content(lib) == reference
