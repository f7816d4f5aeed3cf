from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evtui.config import load_config
from evtui.library import Library


def _lib() -> Library:
    return Library(load_config())


def test_ingest_then_consistent(papers_dir: Path) -> None:
    with _lib() as lib:
        report = lib.ingest([papers_dir])
        assert report.added == 3 and not report.errors
        stats = lib.stats()
        assert stats["papers"] == 3
        assert stats["sentences"] == stats["index_docs"] == report.sentences
        check = lib.check_consistency()
        assert check["consistent"], check


def test_reingest_is_idempotent_and_replaces_changed(papers_dir: Path) -> None:
    with _lib() as lib:
        lib.ingest([papers_dir])
        ids_before = lib.store.all_sentence_ids()
        again = lib.ingest([papers_dir])
        assert (again.added, again.replaced, again.unchanged) == (0, 0, 3)
        assert lib.store.all_sentence_ids() == ids_before  # stable sentence ids
    # Changing a file's content changes its id for text files only when the text changes; markdown ids carry a
    # content hash, so edit a structured paper instead: rewrite a paper with the same id via corpus JSONL.
    corpus = papers_dir.parent / "c.jsonl"
    corpus.write_text('{"doc_id": 7, "title": "T", "abstract": ["One sentence.", "Two sentences."]}\n')
    with _lib() as lib:
        assert lib.ingest([corpus]).added == 1
        corpus.write_text('{"doc_id": 7, "title": "T", "abstract": ["One sentence only."]}\n')
        r = lib.ingest([corpus])
        assert r.replaced == 1
        sents = lib.store.sentences("scifact:7")
        assert [s.text for s in sents][-1] == "One sentence only."
        assert lib.check_consistency()["consistent"]


def test_remove_paper(papers_dir: Path) -> None:
    with _lib() as lib:
        lib.ingest([papers_dir])
        pid = lib.store.papers()[0].id
        assert lib.remove([pid]) == 1
        assert lib.store.paper(pid) is None
        assert lib.check_consistency()["consistent"]


def test_bad_file_reported_rest_loaded(papers_dir: Path) -> None:
    (papers_dir / "broken.xml").write_text("<article><front><article-meta>", encoding="utf-8")
    (papers_dir / "empty.json").write_bytes(b"")
    with _lib() as lib:
        report = lib.ingest([papers_dir])
        assert report.added == 3
        bad = {Path(e.path).name for e in report.errors}
        assert {"broken.xml", "empty.json"} <= bad
        assert all(e.reason for e in report.errors)


def test_failed_ingest_loses_nothing(papers_dir: Path, tmp_path: Path) -> None:
    with _lib() as lib:
        lib.ingest([papers_dir])
        before = lib.store.all_sentence_ids()
        bad = tmp_path / "bad.json"
        bad.write_bytes(b"\x00\x01\xff garbage {")
        report = lib.ingest([bad])
        assert report.errors and lib.store.all_sentence_ids() == before


CRASH = textwrap.dedent("""
    import os, sys
    from evtui.config import load_config
    from evtui.library import Library
    from evtui.index import SentenceIndex
    from evtui.store import Store
    where = sys.argv[2]
    target = {"index_commit": (SentenceIndex, "commit"), "mark_ready": (Store, "mark_ready")}[where]
    def die(*a, **k):
        os._exit(9)   # like SIGKILL: no cleanup, no flush
    setattr(target[0], target[1], die)
    Library(load_config()).ingest([sys.argv[1]])
""")


@pytest.mark.parametrize("where", ["index_commit", "mark_ready"])
def test_killed_ingest_is_repaired(papers_dir: Path, where: str) -> None:
    proc = subprocess.run([sys.executable, "-c", CRASH, str(papers_dir), where], capture_output=True, text=True)
    assert proc.returncode == 9, proc.stderr
    with _lib() as lib:
        assert lib.recovered  # the pending papers were finished on open
        check = lib.check_consistency()
        assert check["consistent"], check
        assert check["db_sentences"] > 0
        again = lib.ingest([papers_dir])
        assert again.added == 0 and again.unchanged == 3
        assert lib.check_consistency()["consistent"]


def test_second_process_is_told_who_holds_the_library(papers_dir: Path) -> None:
    with _lib():
        code = "from evtui.config import load_config; from evtui.library import Library; Library(load_config())"
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert proc.returncode != 0
        assert "LibraryLockedError" in proc.stderr and "in use by" in proc.stderr


def test_abbreviations_come_back_in_one_order(tmp_path: Path) -> None:
    """Most frequent long form per short form, ties broken alphabetically, sorted by short form: the order a query's
    variants are listed in, so the same query gives the same JSON on every run."""
    from evtui.config import Config

    with Library(Config(home=tmp_path / "h", demo=False)) as lib:
        rows = [("p1", "TF", "Transcription Factor"), ("p2", "TF", "TAT factor"), ("p3", "TF", "tat factor"),
                ("p1", "CRC", "colorectal cancer"), ("p2", "AA", "arachidonic acid"), ("p3", "AA", "amino acid")]
        lib.store.con.executemany("INSERT INTO abbreviations VALUES (?, ?, ?)", rows)
        got = lib.store.abbreviations()
    assert list(got.items()) == [("AA", "amino acid"), ("CRC", "colorectal cancer"), ("TF", "tat factor")]
