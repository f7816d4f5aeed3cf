"""The headless CLI as a scripting researcher meets it: every bench verb's --json says whether its figure is
in-sample, a search that had to rebuild a missing index says so on stderr, and re-exporting an unchanged
selection leaves the file byte for byte as it was."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evtui.bench import scifact_verify as sv
from evtui.cli import main
from evtui.config import load_config
from evtui.library import Library

FIX = Path(__file__).parents[1] / "fixtures" / "bench"
SF_CORPUS, SF_CLAIMS = FIX / "scifact_corpus30.jsonl", FIX / "scifact_claims6.jsonl"
EB3 = FIX / "eb3.json"


def _no_evidence(library: Library, claims: list[dict[str, Any]], papers: int) -> Iterator[dict[str, Any]]:
    """Test double for the verifier: every claim answered with no evidence (the figures do not matter here)."""
    for claim in claims:
        yield {"id": claim["id"], "evidence": {}}


def test_bench_scifact_verify_json_says_in_sample(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixture's claims are claims_train.jsonl's, which the verifier was trained on: the human output said
    "in-sample" and the --json had no key for it; a user's own claims are not in-sample."""
    monkeypatch.setattr(sv, "default_predictor", lambda: _no_evidence)
    base = ["bench", "scifact", "--corpus", str(SF_CORPUS), "--task", "verify", "--papers", "1", "--no-save"]
    assert main([*base, "--claims", str(SF_CLAIMS), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["in_sample"] is True and res["claims"] == 6
    assert main([*base, "--claims", str(SF_CLAIMS)]) == 0
    assert "in-sample" in capsys.readouterr().err  # the human face says the same
    mine = tmp_path / "mine.jsonl"
    mine.write_text(json.dumps({"id": 1, "claim": "A claim of the user's own, in no training set.", "evidence": {},
                                "cited_doc_ids": [24341590]}) + "\n", encoding="utf-8")
    assert main([*base, "--claims", str(mine), "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["in_sample"] is False and "in-sample" not in out.err


def test_bench_retrieval_and_evidencebench_json_say_in_sample(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "scifact", "--corpus", str(SF_CORPUS), "--claims", str(SF_CLAIMS), "--method", "bm25",
                 "--limit", "2", "--no-save", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["in_sample"] is False  # bm25 has no learned model
    same_name = tmp_path / "evidencebench_dev_set.json"  # a file the shipped ranker was trained on, by name
    shutil.copy(EB3, same_name)
    for data, method, expected in ((EB3, "bm25", False), (same_name, "best", True)):
        assert main(["bench", "evidencebench", "--data", str(data), "--task", "er-10", "--method", method,
                     "--limit", "1", "--no-save", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["in_sample"] is expected, method


def test_search_says_when_it_rebuilt_a_missing_index(papers_ingested: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The index folder deleted (or never copied beside library.duckdb): the search rebuilt it silently, taking
    seconds to minutes. One stderr line says so and how long; --json stays one document; the next search is quiet."""
    index = load_config().index_path
    shutil.rmtree(index)
    assert main(["search", "ACE inhibitors cause cough", "--k", "2", "--json"]) == 0
    out = capsys.readouterr()
    assert len(json.loads(out.out)["results"]) == 2  # one valid document, the rebuilt index found the sentences
    lines = out.err.strip().splitlines()
    assert len(lines) == 1 and "rebuilt the search index from the database" in lines[0]
    assert " sentences, " in lines[0] and "s):" in lines[0]  # how many, and how long it took
    assert main(["search", "ACE inhibitors cause cough", "--k", "2", "--json"]) == 0
    assert "rebuilt" not in capsys.readouterr().err


def test_a_damaged_index_note_says_how_long_its_rebuild_took(papers_ingested: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    (load_config().index_path / "meta.json").write_text("garbage", encoding="utf-8")
    assert main(["stats", "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["index_docs"] > 0
    (line,) = out.err.strip().splitlines()  # the library's own note, not a second line about the same rebuild
    assert "damaged" in line and "rebuilt it from the database (" in line and " sentences, " in line


def test_re_export_of_an_unchanged_selection_is_byte_identical(papers_ingested: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The Markdown footer's "Exported ... on <minute>" made every re-export differ (a diff in notes kept in git,
    a rebuild for make); now the file is left as it was until the selection (or anything else in it) changes."""
    assert main(["select", "ACE inhibitors cause cough", "--k", "2", "--no-judge"]) == 0
    notes = tmp_path / "notes.md"
    assert main(["export", "--out", str(notes)]) == 0
    # as if written minutes ago: the stamp of an older minute, the file's time long past
    old = notes.read_text(encoding="utf-8")
    footer = next(line for line in old.splitlines() if line.startswith("Exported by evtui"))
    minute = footer.split(" on ", 1)[1][:16]
    earlier = old.replace(f" on {minute} UTC", " on 2001-02-03 04:05 UTC")
    assert earlier != old
    notes.write_text(earlier, encoding="utf-8")
    os.utime(notes, (1_000_000_000, 1_000_000_000))
    capsys.readouterr()
    assert main(["export", "--out", str(notes)]) == 0
    assert notes.read_text(encoding="utf-8") == earlier and notes.stat().st_mtime == 1_000_000_000
    assert "left as it was" in capsys.readouterr().err
    assert main(["export", "--out", str(notes), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"out": str(notes), "format": "md", "sentences": 2}
    assert notes.read_text(encoding="utf-8") == earlier
    # the selection changes: the file is written again, with this minute's footer
    assert main(["select", "aspirin colorectal cancer", "--k", "1", "--no-judge"]) == 0
    capsys.readouterr()
    assert main(["export", "--out", str(notes)]) == 0
    assert "wrote 3 sentence(s)" in capsys.readouterr().err
    text = notes.read_text(encoding="utf-8")
    assert "2001-02-03" not in text and text.count("### ") == 3
    # a symlink in its place is replaced by the file, never read through
    target = tmp_path / "elsewhere.md"
    target.write_text(text, encoding="utf-8")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    assert main(["export", "--out", str(link)]) == 0
    assert not link.is_symlink() and "wrote 3" in capsys.readouterr().err


def test_select_with_a_refused_query_keeps_the_selection(papers_ingested: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """`select --clear "$Q"` with a query the search refuses emptied the selection before failing (exit 2, the
    researcher's picks gone); `select ""` (an unset $Q) added nothing and exited 0 as if all went well."""
    assert main(["select", "ACE inhibitors cause cough", "--k", "2", "--no-judge", "--json"]) == 0
    kept = json.loads(capsys.readouterr().out)["selection"]
    assert len(kept) == 2
    for query in ("???", "", "   "):
        assert main(["select", "--clear", query, "--no-judge", "--json"]) == 2, repr(query)
        out = capsys.readouterr()
        assert "empty query" in json.loads(out.out)["error"] and len(out.err.strip().splitlines()) == 1
        assert main(["select", query, "--json"]) == 2, repr(query)
        capsys.readouterr()
        assert main(["select", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["selection"] == kept, repr(query)  # not emptied by --clear
    assert main(["select", "--clear", "aspirin", "--paper", "nope:1", "--json"]) == 2
    capsys.readouterr()
    assert main(["select", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["selection"] == kept  # nothing lost
    # a good query with --clear still replaces the selection with its hits
    assert main(["select", "--clear", "IL-6 COVID-19", "--k", "1", "--no-judge", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["selection"] == doc["added"] and len(doc["added"]) == 1 and doc["added"][0] not in kept
    assert main(["select", "--clear", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["selection"] == []


def test_export_to_an_empty_out_says_so(papers_ingested: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["select", "ACE inhibitors cause cough", "--k", "1", "--no-judge"]) == 0
    capsys.readouterr()
    assert main(["export", "--out", "", "--json"]) == 2  # `--out "$OUT"` with $OUT unset
    out = capsys.readouterr()
    assert json.loads(out.out)["error"].startswith("--out is empty: give a file name")
    assert "is a folder" not in out.err
