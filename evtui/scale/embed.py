"""`evtui embed --engine ray`: the library's missing embeddings computed by Ray Data over Parquet shards.

    DuckDB ──(missing sentences: id, text, text_hash)──► <work>/in/part-00000.parquet ...
    Ray Data read_parquet ► map_batches(_EmbedBatch: one Embedder per actor) ► write_parquet <work>/out/
    <work>/out/*.parquet ──(chunk by chunk, through evtui.embed.insert_table)──► DuckDB `embeddings`

The actors run the same Embedder (the same int8 MiniLM from the same PyPI package, no downloads) on the same
text, and the rows go through the local engine's own insert, so the cache cannot tell the engines apart.
With `address` (a cluster), `parquet_dir` must be storage every node reads and writes at the same path.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evtui.embed import CHUNK, DIM, MODEL_ID, ensure_table, insert_table, missing_query
from evtui.errors import EvtuiError
from evtui.scale import cluster_cpus, init_ray, require_ray

if TYPE_CHECKING:
    import pyarrow as pa

    from evtui.library import Library

# (stage, done, total): stages are "export", "embed" (done = 0 until Ray has finished) and "store".
StageFn = Callable[[str, int, int], None]
SHARD_ROWS = 16 * CHUNK  # sentences per input shard: a unit of work a node can pick up (~30 s on one core)


class _EmbedBatch:
    """Ray Data callable class: loads the embedding model once per actor, then embeds batch after batch."""

    def __init__(self, threads: int) -> None:
        from evtui.embed import Embedder

        # A node-local cache: the driver's data home need not exist on a worker; the folder only holds links
        # to the installed packages' files.
        self.embedder = Embedder(Path(tempfile.gettempdir()) / f"evtui-ray-{os.getuid()}", threads=threads)

    def __call__(self, batch: pa.Table) -> pa.Table:
        import numpy as np
        import pyarrow as pa

        texts = batch.column("text").to_pylist()
        mat = self.embedder.embed(texts)
        flat = pa.array(np.ascontiguousarray(mat, dtype=np.float32).ravel(), type=pa.float32())
        return pa.table({"sentence_id": batch.column("id"), "text_hash": batch.column("text_hash"),
                         "vec": pa.FixedSizeListArray.from_arrays(flat, DIM)})


def export_missing(library: Library, folder: Path, *, shard_rows: int = SHARD_ROWS,
                   paper: str | None = None, model: str = MODEL_ID) -> int:
    """Stream the sentences lacking a current embedding to `folder/part-NNNNN.parquet`. Returns the count."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    con = library.store.con.cursor()  # its own cursor: a long streaming read must not hold the shared one
    try:
        ensure_table(con)
        sql, params = missing_query(paper=paper, model=model)
        with warnings.catch_warnings():  # duckdb 2 warns that a DB-API result copies once: fine here
            warnings.simplefilter("ignore")
            res = con.execute(sql, params)
            # duckdb 2 renamed fetch_record_batch to to_arrow_reader
            rows = min(CHUNK, shard_rows)
            reader: Any = (res.to_arrow_reader(rows) if hasattr(res, "to_arrow_reader")
                           else res.fetch_record_batch(rows))  # type: ignore[attr-defined]
        schema = pa.schema([("id", pa.string()), ("text", pa.string()), ("text_hash", pa.string())])
        folder.mkdir(parents=True, exist_ok=True)
        n = shard = in_shard = 0
        writer: pq.ParquetWriter | None = None
        for rb in reader:
            if rb.num_rows == 0:
                continue
            if writer is None or in_shard >= shard_rows:
                if writer is not None:
                    writer.close()
                writer = pq.ParquetWriter(folder / f"part-{shard:05d}.parquet", schema)
                shard, in_shard = shard + 1, 0
            table = pa.Table.from_batches([rb]).rename_columns(["id", "text", "text_hash"]).cast(schema)
            writer.write_table(table, row_group_size=CHUNK)
            n += rb.num_rows
            in_shard += rb.num_rows
        if writer is not None:
            writer.close()
        return n
    finally:
        con.close()


def store_results(library: Library, folder: Path, *, model: str = MODEL_ID,
                  on_stage: StageFn | None = None, total: int = 0) -> int:
    """Load the result shards into the embeddings table, one committed chunk at a time. Returns rows stored."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = sorted(folder.rglob("*.parquet"))
    vec_type = pa.list_(pa.float32(), DIM)
    con = library.store.con
    done = 0
    for f in files:
        for rb in pq.ParquetFile(f).iter_batches(batch_size=CHUNK):
            t = pa.Table.from_batches([rb])
            table = pa.table({
                "sentence_id": t.column("sentence_id").cast(pa.string()),
                "model": pa.array([model] * t.num_rows, pa.string()),
                "text_hash": t.column("text_hash").cast(pa.string()),
                "vec": t.column("vec").cast(vec_type),
            })
            insert_table(con, table, model)
            done += t.num_rows
            if on_stage:
                on_stage("store", done, total)
    return done


def embed_with_ray(
    library: Library,
    *,
    address: str | None = None,
    parquet_dir: Path | None = None,
    paper: str | None = None,
    num_cpus: int | None = None,
    actors: int | None = None,
    threads: int = 1,
    progress: bool = False,
    on_stage: StageFn | None = None,
    keep: bool = False,
    shard_rows: int = SHARD_ROWS,
) -> int:
    """Compute the missing embeddings (of `paper`, or of the whole library) on Ray. Returns how many.

    `parquet_dir` holds this run's work folder (default: the library's cache); it is removed afterwards unless
    `keep`. `actors` embedders of `threads` threads each (default: one per CPU of the Ray instance)."""
    require_ray()  # before any work: a missing extra is an install hint, even when nothing is left to embed
    base = Path(parquet_dir).expanduser() if parquet_dir else library.config.cache_dir / "ray"
    work = base / f"embed-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    try:
        total = export_missing(library, work / "in", paper=paper, shard_rows=shard_rows)
        if on_stage:
            on_stage("export", total, total)
        if total == 0:
            return 0
        ray = init_ray(address, num_cpus=num_cpus, progress=progress)
        n_actors = actors or max(1, cluster_cpus() // max(1, threads))
        if on_stage:
            on_stage("embed", 0, total)
        ds = ray.data.read_parquet(str(work / "in"))
        ds = ds.map_batches(_EmbedBatch, fn_constructor_kwargs={"threads": threads}, batch_size=CHUNK,
                            batch_format="pyarrow", num_cpus=threads,
                            compute=ray.data.ActorPoolStrategy(min_size=1, max_size=n_actors))
        try:
            ds.write_parquet(str(work / "out"))
        except Exception as exc:  # noqa: BLE001 - Ray wraps worker errors in its own types
            raise EvtuiError(f"the Ray embedding job failed: {exc}") from exc
        if on_stage:
            on_stage("embed", total, total)
        stored = store_results(library, work / "out", on_stage=on_stage, total=total)
        if stored != total:
            hint = (" (with a cluster, --parquet-dir must be storage every node shares at the same path)"
                    if address else "")
            raise EvtuiError(f"the Ray job returned {stored:,} embeddings for {total:,} sentences{hint}; "
                             "what came back is stored, run it again for the rest")
        return stored
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


def engine_summary(address: str | None) -> dict[str, Any]:
    """What the Ray instance in use looks like, for the CLI's JSON."""
    import ray

    return {"engine": "ray", "address": address or "local", "cpus": cluster_cpus(),
            "nodes": len([n for n in ray.nodes() if n.get("Alive")])}
