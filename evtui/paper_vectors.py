"""Dense paper vectors: one MiniLM embedding per paper (its title and abstract), the paper channel's second opinion.

Whole-abstract BM25 matches a claim's exact words; MiniLM matches its meaning. Fused, they find SciFact's papers
better than either alone (BENCHMARKS.md "Dense paper vectors"), so `best` adds them to its paper prior
(evtui/rank/pipeline.py) — only when every ready paper has a current vector, since a partial set would favour
the embedded papers. They are computed by `evtui embed` (papers first: one vector per paper, ~0.1-0.2 s each on
2 cores), the Library screen's `m`, and a benchmark of a method that uses embeddings.

Table `paper_embeddings(paper_id, model, content_hash, vec FLOAT[384])`: a row is current while its content hash
is the paper's, so a replaced paper is embedded again and a removed one is never joined.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any

import numpy as np

from evtui.embed import DIM, MODEL_ID, Embedder, Library, StopFn, Windows, get_embedder
from evtui.faults import crash_point
from evtui.papers import PaperText

if TYPE_CHECKING:
    import duckdb

CHUNK = 64  # papers per committed insert: a crash or a cancel loses at most this much work

ProgressFn = Callable[[int, int], None]

_CURRENT = ("FROM papers p JOIN paper_embeddings e ON e.paper_id = p.id AND e.model = ?"
            " AND e.content_hash = p.content_hash WHERE p.state = 'ready'")


def has_table(con: duckdb.DuckDBPyConnection) -> bool:
    row = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'paper_embeddings'"
                      ).fetchone()
    return bool(row and row[0])


def ensure_table(con: duckdb.DuckDBPyConnection) -> None:
    if not has_table(con):  # looks before it writes, so a read-only connection passes through
        con.execute(f"CREATE TABLE IF NOT EXISTS paper_embeddings (paper_id VARCHAR, model VARCHAR,"
                    f" content_hash VARCHAR, vec FLOAT[{DIM}])")


def has_rows(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether any paper vector is stored (the library's owner has run `evtui embed`)."""
    return has_table(con) and con.execute("SELECT 1 FROM paper_embeddings LIMIT 1").fetchone() is not None


def duplicate_rows(con: duckdb.DuckDBPyConnection) -> int:
    """Rows beyond one per (paper, model): a crash must never leave any."""
    if not has_table(con):
        return 0
    row = con.execute("SELECT count(*) - count(DISTINCT (paper_id, model)) FROM paper_embeddings").fetchone()
    return int(row[0]) if row else 0


def missing_papers(con: duckdb.DuckDBPyConnection, model: str = MODEL_ID) -> list[tuple[str, str]]:
    """(paper id, content hash) of the ready papers without a current vector."""
    if not has_table(con):
        return [(r[0], r[1]) for r in con.execute(
            "SELECT id, content_hash FROM papers WHERE state = 'ready' ORDER BY id").fetchall()]
    return [(r[0], r[1]) for r in con.execute(
        "SELECT p.id, p.content_hash FROM papers p LEFT JOIN paper_embeddings e ON e.paper_id = p.id"
        " AND e.model = ? AND e.content_hash = p.content_hash WHERE p.state = 'ready' AND e.paper_id IS NULL"
        " ORDER BY p.id", [model]).fetchall()]


def paper_texts(library: Library, paper_ids: Sequence[str],
                con: duckdb.DuckDBPyConnection | None = None) -> dict[str, str]:
    """Each paper's title + abstract (or lead), as the paper channel's BM25 index reads it (on `con`, default the
    library's)."""
    titles = dict((con or library.store.con).execute(
        "SELECT id, coalesce(title, '') FROM papers WHERE id IN (SELECT unnest(?))", [list(paper_ids)]).fetchall())
    texts = {pid: PaperText(titles.get(pid, ""), None) for pid in paper_ids}
    for s in library.store.sentences_of(list(paper_ids)):
        texts[s.paper_id].add(s)
    return {pid: t.text() for pid, t in texts.items()}


def ensure_paper_vectors(library: Library, *, on_progress: ProgressFn | None = None, embedder: Embedder | None = None,
                         con: duckdb.DuckDBPyConnection | None = None, chunk: int = CHUNK,
                         papers: Collection[str] | None = None, share: bool = False,
                         windows: Windows | None = None, stop: StopFn | None = None) -> int:
    """Embed every ready paper (of `papers`, if given) that lacks a current vector, `chunk` papers per committed
    transaction.

    `on_progress(done, total)` and `share` (read-write only while a chunk is stored, so other processes read the
    library meanwhile; `con` is then ignored) as in evtui.embed.ensure_embeddings (an exception it raises stops
    the run keeping the finished chunks; `windows` too). Returns how many papers were embedded."""
    if windows is not None:
        return _embed_papers(library, *windows, on_progress, embedder, chunk, papers, stop)
    if share:
        from evtui.sharing import batch_write, sharing_reads, writer_con

        with sharing_reads(library):
            return _embed_papers(library, lambda: nullcontext(writer_con(library)),
                                 lambda: batch_write(library, writer=True), on_progress, embedder, chunk, papers,
                                 stop)
    one = con or library.store.con
    return _embed_papers(library, lambda: nullcontext(one), lambda: nullcontext(one), on_progress, embedder, chunk,
                         papers, stop)


def _embed_papers(library: Library, reading: Callable[[], AbstractContextManager[duckdb.DuckDBPyConnection]],
                  writing: Callable[[], AbstractContextManager[duckdb.DuckDBPyConnection]],
                  on_progress: ProgressFn | None, embedder: Embedder | None, chunk: int,
                  papers: Collection[str] | None, stop: StopFn | None = None) -> int:
    """ensure_paper_vectors' run: each read inside `reading()`, each write inside `writing()` (connections taken
    anew each time: a switch re-makes them)."""
    with reading() as rcon:
        present = has_table(rcon)
    if not present:
        with writing() as wcon:
            ensure_table(wcon)
    with reading() as rcon:
        todo = missing_papers(rcon)
    if papers is not None:
        wanted = set(papers)
        todo = [(pid, h) for pid, h in todo if pid in wanted]
    if on_progress:
        on_progress(0, len(todo))
    if not todo:
        return 0
    emb = embedder or get_embedder(library.config.cache_dir)
    done = 0
    for i in range(0, len(todo), chunk):
        part = todo[i:i + chunk]
        with reading() as rcon:
            texts = paper_texts(library, [pid for pid, _h in part], rcon)
        mat = np.asarray(emb.embed([texts[pid] for pid, _h in part], batch_size=16, stop=stop), dtype=np.float32)
        with writing() as wcon:
            store_vectors(wcon, part, mat, emb.model_id)
        done += len(part)
        if on_progress:
            on_progress(done, len(todo))
    return done


def store_vectors(con: duckdb.DuckDBPyConnection, part: Sequence[tuple[str, str]], mat: np.ndarray,
                  model: str) -> None:
    """(paper id, content hash) rows with their vectors, in one transaction (a stale vector of the same paper goes)."""
    import pyarrow as pa

    flat = pa.array(np.ascontiguousarray(mat, dtype=np.float32).ravel(), type=pa.float32())
    table = pa.table({"paper_id": pa.array([pid for pid, _h in part], pa.string()),
                      "model": pa.array([model] * len(part), pa.string()),
                      "content_hash": pa.array([h for _pid, h in part], pa.string()),
                      "vec": pa.FixedSizeListArray.from_arrays(flat, DIM)})
    con.execute("BEGIN TRANSACTION")
    try:
        con.register("_new_paper_vectors", table)
        # One row per (paper, model): a replaced paper's stale vector goes in the same transaction.
        con.execute("DELETE FROM paper_embeddings WHERE model = ? AND paper_id IN"
                    " (SELECT paper_id FROM _new_paper_vectors)", [model])
        con.execute("INSERT INTO paper_embeddings SELECT paper_id, model, content_hash, vec FROM _new_paper_vectors")
        crash_point("paper_vectors")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    finally:
        con.unregister("_new_paper_vectors")


def coverage(library: Library, model: str = MODEL_ID) -> tuple[int, int]:
    """(ready papers with a current vector, ready papers)."""
    con = library.store.con
    total = con.execute("SELECT count(*) FROM papers WHERE state = 'ready'").fetchone()
    if not has_table(con):
        return 0, int(total[0]) if total else 0
    done = con.execute("SELECT count(*) " + _CURRENT, [model]).fetchone()
    return (int(done[0]) if done else 0), (int(total[0]) if total else 0)


class PaperMatrix:
    """The current vectors of every ready paper, in memory: (ids, years (-1: none), unit rows)."""

    def __init__(self, ids: list[str], years: np.ndarray, mat: np.ndarray) -> None:
        self.ids, self.years, self.mat = ids, years, mat

    def search(self, query: np.ndarray, limit: int, *, year_from: int | None = None,
               year_to: int | None = None) -> list[tuple[str, float]]:
        """(paper id, cosine) of the `limit` nearest papers within the years."""
        if not self.ids:
            return []
        sims = self.mat @ np.asarray(query, dtype=np.float32)
        keep = np.ones(len(self.ids), dtype=bool)
        if year_from is not None:
            keep &= self.years >= year_from
        if year_to is not None:
            keep &= (self.years <= year_to) & (self.years >= 0)
        sims = np.where(keep, sims, -np.inf)
        n = min(limit, int(keep.sum()))
        if n <= 0:
            return []
        top = np.argpartition(-sims, n - 1)[:n]
        top = top[np.argsort(-sims[top], kind="stable")]
        return [(self.ids[i], float(sims[i])) for i in top]


_MATRICES: weakref.WeakKeyDictionary[Any, tuple[tuple[object, ...], PaperMatrix | None]] = (
    weakref.WeakKeyDictionary())


def complete_matrix(library: Library, model: str = MODEL_ID) -> PaperMatrix | None:
    """Every ready paper's vector, or None unless each one has a current vector (cached per library state)."""
    con = library.store.con
    if not has_table(con):
        return None
    # The coverage join is over papers, not sentences (milliseconds); with the newest ready paper's time it tells
    # whether the cached matrix still holds (a replaced paper re-embedded leaves the counts as they were).
    done, total = coverage(library, model)
    newest = con.execute("SELECT max(added_at) FROM papers WHERE state = 'ready'").fetchone()
    key = (model, done, total, newest[0] if newest else None)
    hit = _MATRICES.get(library)
    if hit is not None and hit[0] == key:
        return hit[1]
    matrix: PaperMatrix | None = None
    if total and done == total:
        res = con.execute("SELECT p.id, coalesce(p.year, -1) AS year, e.vec " + _CURRENT + " ORDER BY p.id",
                          [model])
        with warnings.catch_warnings():  # duckdb 2 warns that a DB-API result copies once: fine here
            warnings.simplefilter("ignore")
            tbl = res.to_arrow_table() if hasattr(res, "to_arrow_table") else res.fetch_arrow_table()
        assert tbl is not None
        flat = tbl.column("vec").combine_chunks().flatten().to_numpy(zero_copy_only=False)
        mat = np.asarray(flat, dtype=np.float32).reshape(tbl.num_rows, DIM)
        mat = mat / np.maximum(np.linalg.norm(mat, axis=1, keepdims=True), 1e-12)
        matrix = PaperMatrix(tbl.column("id").to_pylist(), np.asarray(tbl.column("year").to_pylist()), mat)
    _MATRICES[library] = (key, matrix)
    return matrix


# What `evtui embed` / the Library's `m` takes, roughly: the demo library (6,695 papers, 67,002 sentences) embedded
# in ~13 min on two cores; a paper's title + abstract is a few sentences' work.
EMBED_SENTENCES_PER_SECOND = 100.0
EMBED_PAPERS_PER_SECOND = 30.0


def pending(con: duckdb.DuckDBPyConnection) -> tuple[int, int, float]:
    """(papers without a current vector, sentences without a current embedding, rough seconds to embed them)."""
    from evtui.embed import missing_query, table_current

    papers = len(missing_papers(con))
    if table_current(con):
        sql, params = missing_query()
        row = con.execute(f"SELECT count(*) FROM ({sql})", params).fetchone()
        sentences = int(row[0]) if row else 0
    else:
        row = con.execute("SELECT count(*) FROM sentences s JOIN papers p ON p.id = s.paper_id"
                          " WHERE p.state = 'ready' AND NOT s.is_heading").fetchone()
        sentences = int(row[0]) if row else 0
    return papers, sentences, sentences / EMBED_SENTENCES_PER_SECOND + papers / EMBED_PAPERS_PER_SECOND
