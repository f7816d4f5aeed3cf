"""The paper-level channel (issue 13.5): one title+abstract document per paper, kept in step with the sentences,
rebuilt for old libraries, repaired after a kill, and used by library-wide `best` only."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from evtui.config import Config, load_config
from evtui.library import Library, audit
from evtui.papers import MARKER, paper_index_path
from evtui.rank import pipeline
from evtui.rank.pipeline import paper_prior
from evtui.request import Filters
from evtui.search import Searcher

CORE = Path(__file__).parents[1] / "fixtures" / "core"


def channel_ids(lib: Library) -> list[str]:
    return sorted(lib.index.paper_ids())


def ready_ids(lib: Library) -> list[str]:
    return sorted(r[0] for r in lib.store.con.execute("SELECT id FROM papers WHERE state = 'ready'").fetchall())


def top_paper(lib: Library, *words: str) -> str | None:
    hits = lib.index.paper_search(list(words), 5)
    return hits[0][0] if hits else None


def test_one_document_per_paper_follows_ingest_and_remove(papers_library: Library) -> None:
    lib = papers_library
    assert channel_ids(lib) == ready_ids(lib) and len(ready_ids(lib)) == 3
    aspirin = top_paper(lib, "aspirin")
    assert aspirin is not None and "aspirin" in aspirin
    # Title + abstract only: the aspirin paper's results section ("adenoma") is not in its paper document.
    assert top_paper(lib, "adenoma") is None
    # A paper without an abstract is represented by its title and lead sentences.
    assert top_paper(lib, "cough") == next(p for p in ready_ids(lib) if "ace" in p)
    assert lib.remove([aspirin]) == 1
    assert aspirin not in channel_ids(lib) and channel_ids(lib) == ready_ids(lib)
    assert top_paper(lib, "aspirin") is None


def _corpus(path: Path, first_abstract: str) -> Path:
    rows = [{"doc_id": 1, "title": "Aspirin and colorectal cancer", "abstract": [first_abstract]},
            {"doc_id": 2, "title": "Cough with ACE inhibitors", "abstract": ["ACE inhibitors caused a dry cough."],
             "structured": False}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_a_replaced_paper_replaces_its_document(tmp_path: Path) -> None:
    with Library(load_config()) as lib:
        lib.ingest([_corpus(tmp_path / "c.jsonl", "Regular aspirin use reduced the incidence of cancer.")])
        assert top_paper(lib, "incidence") == "scifact:1"
        report = lib.ingest([_corpus(tmp_path / "c.jsonl", "Regular statin use reduced myopathy in a cohort.")])
        assert report.replaced == 1
        assert channel_ids(lib) == ready_ids(lib) == ["scifact:1", "scifact:2"]  # replaced, not duplicated
        assert top_paper(lib, "myopathy") == "scifact:1"
        assert top_paper(lib, "incidence") is None  # the old abstract is gone
        assert top_paper(lib, "aspirin") == "scifact:1"  # the title stays


def test_a_library_from_before_the_channel_is_rebuilt_on_open(tmp_path: Path) -> None:
    cfg = Config(home=tmp_path / "h", demo=False)
    with Library(cfg) as lib:
        lib.ingest([CORE])
        expected = ready_ids(lib)
    channel = paper_index_path(cfg.index_path)
    shutil.rmtree(channel)  # as a library written by an older evtui
    with Library(cfg) as lib:
        assert channel_ids(lib) == expected
        assert lib.check_consistency()["consistent"]
        # Years come along (PMC2852030 is from 2008; the other papers have none, so a year filter drops them).
        assert top_paper(lib, "pancreatic", "imaging") == "PMC2852030"
        assert [p for p, _s in lib.index.paper_search(["pancreatic", "imaging"], 5, filters=Filters(year_from=2008))] == ["PMC2852030"]
        assert lib.index.paper_search(["pancreatic", "imaging"], 5, filters=Filters(year_to=2007)) == []
    (channel / MARKER).unlink()  # a rebuild killed before its first commit: built again, not trusted
    with Library(cfg) as lib:
        assert channel_ids(lib) == expected


def test_read_only_open_without_the_channel_still_searches(tmp_path: Path) -> None:
    cfg = Config(home=tmp_path / "h", demo=False)
    with Library(cfg) as lib:
        lib.ingest([CORE])
    shutil.rmtree(paper_index_path(cfg.index_path))
    with Library(cfg, read_only=True) as lib:
        assert lib.index.paper_search(["aspirin"], 5) == []
        res = Searcher(lib).search("COVID-19 patients", k=3)
        assert res.evidence
    assert not paper_index_path(cfg.index_path).exists()  # a reader never writes


def test_kill_between_the_paper_and_sentence_commits_is_repaired(tmp_path: Path) -> None:
    home = tmp_path / "h"
    env = dict(os.environ, EVTUI_BATCH_SENTENCES="40", EVTUI_CRASH_AT="paper_commit:3", EVTUI_HOME=str(home))
    proc = subprocess.run([sys.executable, "-m", "evtui.cli", "ingest", str(CORE), "--json"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    with Library(Config(home=home, demo=False)) as lib:
        assert lib.recovered  # the batch the kill interrupted was re-indexed in both
        assert lib.check_consistency()["consistent"]
        assert channel_ids(lib) == ready_ids(lib)
        assert audit(lib)["ok"], audit(lib)
        lib.ingest([CORE])
        assert channel_ids(lib) == ready_ids(lib) and len(ready_ids(lib)) >= 5


def test_paper_prior_forms() -> None:
    papers = [("a", 10.0), ("b", 6.0), ("c", 2.0)]
    assert paper_prior(papers, "minmax") == {"a": 1.0, "b": 0.5, "c": 0.0}
    assert paper_prior(papers, "ratio") == {"a": 1.0, "b": 0.6, "c": 0.2}
    assert paper_prior(papers, "rrf") == pytest.approx({"a": 1.0, "b": 61 / 62, "c": 61 / 63})
    assert paper_prior([], "minmax") == {}


@pytest.fixture
def spread_library(tmp_path: Path) -> Library:
    """Two papers: one says the claim in one sentence of its results, the other is about the claim as a whole
    (title and abstract), its words spread over sentences."""
    d = tmp_path / "spread"
    d.mkdir()
    (d / "one.md").write_text(
        "# Gastric ulcers in farm workers\n\n## Abstract\n\nWe surveyed farm workers.\n\n## Results\n\n"
        "Statin therapy lowered myopathy risk in elderly patients with diabetes, a side note.\n", encoding="utf-8")
    (d / "two.md").write_text(
        "# Statin therapy and myopathy in diabetes\n\n## Abstract\n\n"
        "We followed elderly patients with diabetes. Statin therapy was started in half. "
        "Myopathy was less frequent with treatment.\n", encoding="utf-8")
    lib = Library(load_config())
    lib.ingest([d])
    return lib


def test_library_wide_best_uses_the_channel_and_paper_search_does_not(spread_library: Library,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    lib = spread_library
    try:
        two = top_paper(lib, "statin", "myopathy", "diabetes")
        assert two is not None and "two" in two
        claim = "statin therapy lowers myopathy risk in diabetes"
        searcher = Searcher(lib)
        before = searcher.search(claim, k=5, mode="claim")
        assert searcher._best is not None
        searcher._best.paper_weight = 0.0
        without = searcher.search(claim, k=5, mode="claim")
        searcher._best.paper_weight = 100.0  # the channel decides: its top paper's sentences come first
        dominated = searcher.search(claim, k=5, mode="claim")
        assert dominated.evidence[0].sentence.paper_id == two
        assert without.evidence[0].sentence.paper_id != two or before.evidence[0].sentence.paper_id == two
        # Within one paper the channel plays no part: the same ranking whatever its weight.
        one = next(p for p in ready_ids(lib) if p != two)
        scoped = [(e.sentence.id, e.score) for e in searcher.search(claim, k=5, paper=one, mode="claim").evidence]
        searcher._best.paper_weight = 0.0
        assert scoped == [(e.sentence.id, e.score) for e in searcher.search(claim, k=5, paper=one,
                                                                           mode="claim").evidence]

        # With the sentence pools cut to one sentence (the best-matching one, in the other paper), the pull-in
        # brings the channel's top paper into the results.
        monkeypatch.setattr(pipeline, "CROSS_POOL", 1)
        fresh = Searcher(lib)
        alone = fresh.search(claim, k=10, mode="claim").evidence
        assert {e.sentence.paper_id for e in alone} == {one}
        assert fresh._best is not None
        fresh._best.paper_pull = 20
        pulled = fresh.search(claim, k=10, mode="claim").evidence
        assert two in {e.sentence.paper_id for e in pulled} and len(pulled) <= 1 + pipeline.PULL_PER_PAPER
    finally:
        lib.close()
