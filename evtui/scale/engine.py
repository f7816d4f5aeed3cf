"""The benchmark driver's Ray engine: what `--engine ray` hands to evtui.bench (which never imports this package).

Both harness kinds go through it: EvidenceBench Tasks (evtui/scale/bench.py) and SciFact / Check-COVID claims
(evtui/scale/beir.py). The driver scores and stores each answer exactly as with its local ranker.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evtui.bench.driver import Engine, Query, Task
from evtui.scale.beir import ray_claims
from evtui.scale.bench import ray_ranker

if TYPE_CHECKING:
    from evtui.library import Library


class RayEngine:
    """Ranks a run's outstanding requests on Ray actors (`address`: a cluster, else a local Ray; `parquet_dir`:
    where the work is exchanged, on shared storage for a cluster)."""

    def __init__(self, address: str | None = None, parquet_dir: Path | None = None, progress: bool = False) -> None:
        self.address, self.parquet_dir, self.progress = address, parquet_dir, progress

    def rank_tasks(self, library: Library, tasks: Sequence[Task], method: str, seed: int,
                   judge_opts: Mapping[str, Any] | None) -> Callable[[Task], list[int]]:
        return ray_ranker(library, list(tasks), method, seed, judge_opts=judge_opts, address=self.address,
                          parquet_dir=self.parquet_dir, progress=self.progress)

    def rank_claims(self, library: Library, queries: Sequence[tuple[Query, bool]], method: str, seed: int,
                    depth: int, sentence_k: int) -> Callable[[str], dict[str, Any]]:
        return ray_claims(library, queries, method, seed, depth=depth, sentence_k=sentence_k, address=self.address,
                          parquet_dir=self.parquet_dir, progress=self.progress)


def bench_engine(name: str, address: str | None = None, parquet_dir: Path | None = None) -> Engine | None:
    """The engine for `--engine NAME`: None ranks in this process (the harness's own ranker)."""
    return RayEngine(address, parquet_dir) if name == "ray" else None
