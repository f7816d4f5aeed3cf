"""`evtui bench scifact|checkcovid --engine ray`: the claims' rankings computed by Ray actors.

The same pattern as `evtui bench evidencebench --engine ray` (evtui/scale/bench.py): the driver ingests and embeds
the bench library as the local engine does, then lets go of it; the claims — query id, text and (for a
within-paper task) the paper id, never the labels — go to Parquet; Ray Data `map_batches` runs an actor class that
opens the bench library read-only once and ranks with the very `make_doc_ranker` / `make_sentence_ranker` of the
local engine. Answers stream back as JSON rows (floats survive JSON exactly), and the harness scores them exactly
as it scores local ones, so both engines give identical runs.
"""

from __future__ import annotations

import json
import shutil
import time
import uuid
import weakref
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evtui.bench.beir import Query, make_doc_ranker, make_sentence_ranker
from evtui.errors import EvtuiError
from evtui.scale import cluster_cpus, init_ray
from evtui.scale.bench import next_row, release_library

if TYPE_CHECKING:
    import pyarrow as pa

    from evtui.library import Library


class _ClaimBatch:
    """Ray Data callable class: one read-only bench library and its rankers per actor."""

    def __init__(self, home: str, method: str, seed: int, depth: int, sentence_k: int) -> None:
        from evtui.config import Config
        from evtui.library import Library

        library = Library(Config(home=Path(home), demo=False), read_only=True)
        self.docs = make_doc_ranker(library, method, seed, depth)
        self.sentences = make_sentence_ranker(library, method, seed, sentence_k) if sentence_k else None

    def __call__(self, batch: pa.Table) -> pa.Table:
        import pyarrow as pa

        answers: list[str] = []
        for row in batch.to_pylist():
            answer: dict[str, Any] = {"docs": self.docs(Query(row["query_id"], row["text"]))}
            if row["sentences"] and self.sentences is not None:
                answer["sentences"] = self.sentences(Query(row["query_id"], row["text"], row["paper_id"]))
            answers.append(json.dumps(answer))
        return pa.table({"query_id": batch.column("query_id"), "answer": pa.array(answers, pa.string())})


class RayClaims:
    """Answers (`{"docs": {paper: score}, "sentences": [ids]}`) per query id, streamed from the Ray job as they
    finish and handed out in any order."""

    def __init__(self, rows: Iterator[dict[str, Any]], expected: Sequence[str], work: Path, db_path: Path) -> None:
        self._rows = rows
        self._expected = set(expected)
        self._got: dict[str, dict[str, Any]] = {}
        self._left = len(self._expected)
        self._work, self._db_path = work, db_path
        self._cleanup = weakref.finalize(self, shutil.rmtree, work, True)  # dropped early: still tidy up

    def __call__(self, query_id: str) -> dict[str, Any]:
        if query_id not in self._expected:
            raise EvtuiError(f"the Ray engine was not given claim {query_id} to rank")
        while query_id not in self._got:
            row = next_row(self._rows, f"claim {query_id}")
            self._got[str(row["query_id"])] = json.loads(row["answer"])
        self._expected.discard(query_id)
        self._left -= 1
        if self._left == 0:
            self._cleanup.detach()
            release_library(self._rows, self._work, self._db_path)
        return self._got.pop(query_id)


def ray_claims(
    library: Library,
    queries: Sequence[tuple[Query, bool]],
    method: str,
    seed: int,
    *,
    depth: int,
    sentence_k: int = 0,
    address: str | None = None,
    parquet_dir: Path | None = None,
    progress: bool = False,
) -> RayClaims:
    """Start ranking `queries` ((query, also rank its paper's sentences?)) on Ray; return the answers' source.

    Closes `library` (the driver's writable bench library, already embedded where the method needs it): the
    actors open it read-only. With a cluster, the bench library and `parquet_dir` must be on shared storage."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    init_ray(address, progress=progress)
    home = library.config.home
    library.close()
    base = Path(parquet_dir).expanduser() if parquet_dir else home / "cache" / "ray"
    work = base / f"claims-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    ids = [q.query_id for q, _s in queries]
    if not queries:
        return RayClaims(iter(()), [], work, library.config.db_path)
    (work / "claims").mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({
        "query_id": pa.array(ids, pa.string()),
        "text": pa.array([q.text for q, _s in queries], pa.string()),
        "paper_id": pa.array([q.paper_id for q, _s in queries], pa.string()),
        "sentences": pa.array([s for _q, s in queries], pa.bool_()),
    }), work / "claims" / "part-00000.parquet")
    import ray

    ds = ray.data.read_parquet(str(work / "claims"))
    ds = ds.map_batches(_ClaimBatch, fn_constructor_kwargs={"home": str(home), "method": method, "seed": seed,
                                                           "depth": depth, "sentence_k": sentence_k},
                        batch_size=8, batch_format="pyarrow",
                        compute=ray.data.ActorPoolStrategy(min_size=1, max_size=min(len(ids), cluster_cpus())))
    return RayClaims(iter(ds.iter_rows()), ids, work, library.config.db_path)
