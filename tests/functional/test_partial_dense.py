"""Dense and hybrid search when embeddings cover only part of the library (as at 10M sentences)."""

from __future__ import annotations

from pathlib import Path

from evtui.config import load_config
from evtui.dense import LAZY_CANDIDATES
from evtui.embed import coverage
from evtui.library import Library
from evtui.search import Searcher
from tests.functional.test_concurrency import _corpus


def test_hybrid_embeds_its_bm25_candidates_on_the_fly(tmp_path: Path) -> None:
    with Library(load_config()) as lib:
        lib.ingest([_corpus(tmp_path / "c.jsonl", 150)])  # 750 searchable sentences: above auto-embedding
        s = Searcher(lib)
        assert coverage(lib)[0] == 0
        res = s.search("lithium is associated with lower memory", k=10, method="hybrid")
        done, total = coverage(lib)
        assert 0 < done <= LAZY_CANDIDATES < total
        assert any("embedded on the fly" in n for n in res.notes)
        assert res.evidence and all("lithium" in e.sentence.text.lower() or "memory" in e.sentence.text.lower()
                                    for e in res.evidence)
        # the second search reuses them: nothing new to embed for the same candidates
        s.search("lithium is associated with lower memory", k=10, method="hybrid")
        assert coverage(lib)[0] == done
        # dense alone searches what is embedded and says how much that is
        dense = s.search("lithium and memory", k=5, method="dense")
        assert any(f"covers {done:,} of {total:,}" in n for n in dense.notes)
        assert len(dense.evidence) == 5


def test_best_across_the_library_ranks_alike_before_and_after_a_partial_embedding(tmp_path: Path) -> None:
    """Vectors stored by a hybrid search (or a paper-scoped one, or an unfinished `embed`) cover some candidates
    and not others: `best` uses cached vectors across the library only once all of it is embedded, so the same
    query ranks the same whatever was searched before."""
    query = "lithium is associated with lower memory"
    with Library(load_config()) as lib:
        lib.ingest([_corpus(tmp_path / "c.jsonl", 150)])

        def ranking() -> list[tuple[str, float]]:
            res = Searcher(lib).search(query, k=10, method="best")
            return [(e.sentence.id, round(e.score, 6)) for e in res.evidence]

        before = ranking()
        Searcher(lib).search(query, k=10, method="hybrid")
        done, total = coverage(lib)
        assert 0 < done < total
        assert ranking() == before
