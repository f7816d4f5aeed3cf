"""`evtui bench evidencebench --engine ray`: the per-item rankings computed by Ray actors, scored by the driver.

The driver builds (or refreshes) the bench library, embeds what the method needs (on Ray), and lets go of it;
the items' Tasks — all a ranker may see, never the labels — go to Parquet; Ray Data `map_batches` runs an actor
class that opens the bench library READ-ONLY once (DuckDB admits many readers once no writer holds the file;
Tantivy readers take no lock) and ranks with the very `make_ranker` of the local engine. Rows (item id, picked
sentence indices) stream back, and `run_evidencebench` scores and stores each item exactly as it does locally,
so deterministic methods give identical runs on either engine.
"""

from __future__ import annotations

import json
import shutil
import time
import uuid
import weakref
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evtui import methods
from evtui.bench.driver import Task
from evtui.bench.evidencebench import make_ranker
from evtui.errors import EvtuiError
from evtui.scale import cluster_cpus, init_ray

if TYPE_CHECKING:
    import pyarrow as pa

    from evtui.library import Library

# Search methods, and the judge strategies: an actor judges (LLM calls, concurrently within it) against a read-only
# library, reading the verdict cache, and sends the rows it would have cached to the driver, which writes them
# back once the actors are gone — a re-run then costs nothing, on either engine.
RELEASE_TIMEOUT = 60.0  # seconds Ray may take to stop the actors once the job is done


def ray_methods() -> tuple[str, ...]:
    """The benchmark's methods the Ray engine runs (every one today), in the harness's order."""
    return tuple(n for n in methods.bench_methods() if methods.get(n).ray)


class _RankBatch:
    """Ray Data callable class: one read-only bench library and one ranker per actor."""

    def __init__(self, home: str, method: str, seed: int, judge_opts: dict[str, Any] | None = None) -> None:
        from evtui.config import Config
        from evtui.library import Library

        self.library = Library(Config(home=Path(home), demo=False), read_only=True)
        self._rows: list[tuple[str, list[Any]]] = []
        opts = {**(judge_opts or {}), "sink": self._keep} if methods.get(method).judge else judge_opts
        self.rank = make_ranker(self.library, method, seed, opts)

    def _keep(self, table: str, rows: list[list[Any]]) -> None:
        self._rows.extend((table, r) for r in rows)

    def __call__(self, batch: pa.Table) -> pa.Table:
        import pyarrow as pa

        picked: list[list[int]] = []
        seconds: list[float] = []
        cached: list[str] = []
        for row in batch.to_pylist():
            t0 = time.perf_counter()
            task = Task(row["item_id"], row["hypothesis"], row["paper_id"], int(row["k"]), bool(row["results"]))
            picked.append([int(i) for i in self.rank(task)])
            seconds.append(time.perf_counter() - t0)
            cached.append(json.dumps(self._rows, default=str))
            self._rows = []
        return pa.table({"item_id": batch.column("item_id"), "picked": pa.array(picked, pa.list_(pa.int64())),
                         "seconds": pa.array(seconds, pa.float64()), "cache_rows": pa.array(cached, pa.string())})


def _write_tasks(tasks: list[Task], folder: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    table = pa.table({
        "item_id": pa.array([t.item_id for t in tasks], pa.string()),
        "hypothesis": pa.array([t.hypothesis for t in tasks], pa.string()),
        "paper_id": pa.array([t.paper_id for t in tasks], pa.string()),
        "k": pa.array([t.k for t in tasks], pa.int32()),
        "results": pa.array([t.results for t in tasks], pa.bool_()),
    })
    pq.write_table(table, folder / "part-00000.parquet")


class RayRanker:
    """A ranker (Task -> picked indices) whose answers come from Ray actors, streamed as they finish.

    Asked for items in any order; answers that arrive early wait in a buffer. The work folder goes when the
    last answer has arrived (or when the ranker is dropped)."""

    def __init__(self, rows: Iterator[dict[str, Any]], expected: list[Task], work: Path, db_path: Path) -> None:
        self._rows = rows
        self._db_path = db_path
        self._expected = set(expected)
        self._got: dict[str, list[int]] = {}
        self._left = len(expected)
        self._work = work
        self._cache_rows: list[tuple[str, list[Any]]] = []
        self._cleanup = weakref.finalize(self, shutil.rmtree, work, True)

    def __call__(self, task: Task) -> list[int]:
        if task not in self._expected:
            raise EvtuiError(f"the Ray engine was not given item {task.item_id} as {task} to rank")
        while task.item_id not in self._got:
            row = next_row(self._rows, task.item_id)
            self._got[str(row["item_id"])] = [int(i) for i in row["picked"]]
            self._cache_rows.extend((t, r) for t, r in json.loads(row.get("cache_rows") or "[]"))
        self._left -= 1
        if self._left == 0:
            self._finish()
        return self._got.pop(task.item_id)

    def _finish(self) -> None:
        self._cleanup.detach()
        release_library(self._rows, self._work, self._db_path)
        if self._cache_rows:
            write_back(self._db_path, self._cache_rows)


def write_back(db_path: Path, rows: list[tuple[str, list[Any]]]) -> None:
    """The verdicts and completions the actors made, into the bench library's caches (the actors are gone, so
    the file is free for a writer again)."""
    import duckdb

    from evtui.judge.cache import JudgmentCache
    from evtui.judge.strategies import insert_completions

    con = duckdb.connect(str(db_path))
    try:
        JudgmentCache(con).insert_rows([r for t, r in rows if t == "judgments"])
        insert_completions(con, [r for t, r in rows if t == "llm_completions"])
    finally:
        con.close()


def next_row(rows: Iterator[dict[str, Any]], waiting_for: str) -> dict[str, Any]:
    """The next answer row of a Ray job, or an EvtuiError that says what went wrong."""
    try:
        return next(rows)
    except StopIteration:
        raise EvtuiError(f"the Ray job ended without a ranking for {waiting_for}") from None
    except Exception as exc:  # noqa: BLE001 - Ray wraps worker errors in its own types
        raise EvtuiError(f"the Ray ranking job failed: {exc}") from exc


def release_library(rows: Iterator[Any], work: Path, db_path: Path) -> None:
    """Run a Ray job to its end, so Ray tears the actor pool down, drop its work folder, and wait until the
    actors' read-only connections are gone: the next writer of the bench library (the next task, a local run)
    needs it free."""
    for _row in rows:
        pass
    shutil.rmtree(work, ignore_errors=True)
    import duckdb

    deadline = time.monotonic() + RELEASE_TIMEOUT
    while True:
        try:
            duckdb.connect(str(db_path)).close()
            return
        except duckdb.IOException as exc:
            if "lock" not in str(exc).lower() or time.monotonic() > deadline:
                raise EvtuiError(f"Ray workers still hold {db_path} after the run: {exc}") from exc
            time.sleep(0.1)


def ray_ranker(
    library: Library,
    tasks: list[Task],
    method: str,
    seed: int,
    *,
    address: str | None = None,
    parquet_dir: Path | None = None,
    progress: bool = False,
    judge_opts: Mapping[str, Any] | None = None,
) -> RayRanker:
    """Start ranking `tasks` (what the driver will ask for, in its order) on Ray; return the ranker that hands
    out the answers.

    Closes `library` (the driver's writable bench library): the workers open it read-only, which DuckDB allows
    only once no writer holds it. With a cluster, the bench library and `parquet_dir` must be on shared storage."""
    if (m := methods.lookup(method)) is None or not m.ray:
        raise EvtuiError(f"--engine ray runs these methods: {', '.join(ray_methods())}; not {method!r}")
    init_ray(address, progress=progress)
    if m.judge:
        # The actors read the caches read-only: the tables must exist before the driver lets go of the file.
        from evtui.judge.cache import JudgmentCache
        from evtui.judge.strategies import ensure_completions

        JudgmentCache(library.store.con)
        ensure_completions(library.store.con)
    if methods.uses_embeddings(method):
        from evtui.embed import model_available, model_folder

        if model_available():
            from evtui.scale.embed import embed_with_ray

            # Readers cannot write the embedding cache: fill it first (on Ray), and lay the model out once
            # rather than letting every actor race to create the same links.
            embed_with_ray(library, address=address, parquet_dir=parquet_dir, progress=progress)
            model_folder(library.config.cache_dir)
    home = library.config.home
    library.close()
    base = Path(parquet_dir).expanduser() if parquet_dir else home / "cache" / "ray"
    work = base / f"bench-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    if not tasks:
        return RayRanker(iter(()), [], work, library.config.db_path)
    _write_tasks(tasks, work / "tasks")
    import ray

    ds = ray.data.read_parquet(str(work / "tasks"))
    ds = ds.map_batches(_RankBatch, fn_constructor_kwargs={"home": str(home), "method": method, "seed": seed,
                                                          "judge_opts": dict(judge_opts or {})},
                        batch_size=1, batch_format="pyarrow",
                        compute=ray.data.ActorPoolStrategy(min_size=1, max_size=min(len(tasks), cluster_cpus())))
    return RayRanker(iter(ds.iter_rows()), tasks, work, library.config.db_path)
