"""EvidenceBench's four evidence-retrieval tasks, run through the same Searcher as `evtui search`.

Per item, the system sees only (hypothesis, paper id, K) — a `Task` — and returns at most K sentence indices
from that item's own paper; labels are read afterwards, by the scorer alone.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evtui.bench.metrics import aspect_recall
from evtui.bench.runs import ItemResult
from evtui.config import Config, load_config
from evtui.errors import EvtuiError
from evtui.library import Library

_POOLS: dict[str, dict] = {}  # bench library home -> BestRanker pool cache, for the length of a process
TASKS: tuple[str, ...] = ("er-optimal", "er-10", "results-er-optimal", "results-er-5")
ProgressFn = Callable[[int, int], None]


@dataclass(frozen=True)
class Task:
    """All a ranker may see of a benchmark item."""

    item_id: str
    hypothesis: str
    paper_id: str
    k: int
    results: bool = False  # a results task asks for results evidence (part of the task, not a label)


def load_items(path: Path) -> dict[str, dict[str, Any]]:
    if not path.exists():
        raise EvtuiError(f"no such file: {path}")
    if path.is_dir():
        raise EvtuiError(f"{path} is a folder: give the EvidenceBench JSON file")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EvtuiError(f"cannot read EvidenceBench data {path}: {exc}") from exc
    if not isinstance(data, dict) or not all(
            isinstance(v, dict) and "paper_as_candidate_pool" in v for v in data.values()):
        raise EvtuiError(f"{path} is not an EvidenceBench JSON file (items with paper_as_candidate_pool)")
    return data


def task_k(item: dict[str, Any], task: str) -> int | None:
    """K for this item and task; None when the item has no results labels (results tasks skip it)."""
    if task == "er-optimal":
        return int(item["evidence_retrieval_at_optimal_evaluation"]["optimal"])
    if task == "er-10":
        return 10
    if item.get("results_aspect_list_ids") is None or item.get("results_evidence_retrieval_at_optimal_evaluation") is None:
        return None
    if task == "results-er-optimal":
        return int(item["results_evidence_retrieval_at_optimal_evaluation"]["optimal"])
    if task == "results-er-5":
        return 5
    raise EvtuiError(f"unknown task {task!r}; choose one of: {', '.join(TASKS)}, all")


def score_item(item: dict[str, Any], task: str, picked: list[int]) -> float | None:
    sentence_aspects = {int(i): a for i, a in item["sentence_index2aspects"].items()}
    wanted = item["results_aspect_list_ids"] if task.startswith("results") else item["aspect_list_ids"]
    return aspect_recall(picked, sentence_aspects, wanted)


def dataset_name(data: Path) -> str:
    return f"evidencebench:{data.name}"


def bench_library(data: Path, home: Path) -> Library:
    """A library of the benchmark's papers only, kept apart from the user's (ingest is idempotent)."""
    digest = hashlib.sha1(data.read_bytes(), usedforsecurity=False).hexdigest()[:10]
    lib = Library(Config(home=home / "bench" / f"evidencebench-{digest}", demo=False))
    report = lib.ingest([data])
    if report.errors:
        lib.close()
        raise EvtuiError(f"cannot load {data}: {report.errors[0].reason}")
    return lib


def make_ranker(library: Library, method: str, seed: int,
                judge_opts: dict[str, Any] | None = None) -> Callable[[Task], list[int]]:
    # Judge strategies (evtui.judge.strategies); `evidential` without an LLM model is the offline search method.
    if method in ("llm-rerank", "llm-sbs") or (method == "evidential" and (judge_opts or {}).get("model")):
        from evtui.judge.strategies import make_judge_ranker

        return make_judge_ranker(library, method, **(judge_opts or {}))
    if method == "random":
        def rank_random(task: Task) -> list[int]:
            rng = random.Random(f"{seed}:{task.item_id}")  # per item, so items are independent of order
            pool = [s.position for s in library.store.sentences(task.paper_id) if not s.is_heading]
            return rng.sample(pool, min(task.k, len(pool)))
        return rank_random

    from evtui.search import Searcher

    searcher = Searcher(library)
    if method in ("best", "evidential"):
        from evtui.rank.pipeline import BestRanker

        # `--task all` runs the four tasks one after another on the same items: share the candidate pools
        # (keyed by query and paper content, so never stale) instead of rebuilding them per task.
        searcher._best = BestRanker(library)
        searcher._best._pools = _POOLS.setdefault(str(library.config.home), {})

    def rank(task: Task) -> list[int]:
        res = searcher.search(task.hypothesis, k=task.k, paper=task.paper_id, mode="hypothesis", method=method,
                              results=task.results)
        return [e.sentence.position for e in res.evidence][: task.k]

    return rank


def rank_item(ranker: Callable[[Task], list[int]], method: str, task: str, item_id: str,
              item: dict[str, Any]) -> ItemResult | None:
    """Rank and score one item; None when this task skips it (an item without results labels)."""
    k = task_k(item, task)
    if k is None:
        return None
    t0 = time.perf_counter()
    visible = Task(item_id, item["hypothesis"], str(item.get("paper_id") or item_id), k,
                   results=task.startswith("results"))
    picked = [int(i) for i in ranker(visible)]
    if len(picked) > k:
        raise EvtuiError(f"{method} returned {len(picked)} sentences for K={k} on {item_id}")
    score = score_item(item, task, picked)
    return ItemResult(item_id, None if score is None else round(100 * score, 4), picked,
                      round(time.perf_counter() - t0, 4))


def run_evidencebench(
    data: Path,
    task: str,
    method: str,
    *,
    seed: int = 0,
    on_progress: ProgressFn | None = None,
    home: Path | None = None,
    judge_opts: dict[str, Any] | None = None,
    done: Mapping[str, ItemResult] | None = None,
    on_item: Callable[[ItemResult], None] | None = None,
    engine: str = "local",
    engine_opts: Mapping[str, Any] | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """Score every item of `data` on `task`. Items in `done` (a killed run's, see `evtui.bench.runs`) are taken
    as they are; `on_item` gets each newly finished one, so a caller can store it before the next starts.
    `engine="ray"` ranks the items on Ray (evtui/scale/bench.py; `engine_opts`: address, parquet_dir, progress)."""
    if task not in TASKS:
        raise EvtuiError(f"unknown task {task!r}; choose one of: {', '.join(TASKS)}, all")
    if engine not in ("local", "ray"):
        raise EvtuiError(f"unknown engine {engine!r}; choose local or ray")
    items = load_items(data)
    if limit is not None:  # the first N items (quick runs), as `bench scifact --limit`
        items = dict(list(items.items())[:limit])
    t0 = time.perf_counter()
    reused_seconds = 0.0
    library = bench_library(data, home or load_config().home)
    try:
        if engine == "ray":  # --- Ray engine: only where the rankings come from changes; scoring stays below
            from evtui.scale.bench import ray_ranker

            ranker: Callable[[Task], list[int]] = ray_ranker(library, items, task, method, seed, done=done or {},
                                                             judge_opts=judge_opts, **(engine_opts or {}))
        else:
            ranker = make_ranker(library, method, seed, **({"judge_opts": judge_opts} if judge_opts else {}))
        per_item: dict[str, float] = {}
        skipped = 0
        for n, (item_id, item) in enumerate(items.items(), 1):
            res = (done or {}).get(item_id)
            if res is not None:
                reused_seconds += res.seconds
            else:
                res = rank_item(ranker, method, task, item_id, item)
                if res is not None and on_item:
                    on_item(res)
            if res is None or res.score is None:
                skipped += 1
            else:
                per_item[item_id] = res.score
            if on_progress:
                on_progress(n, len(items))
    finally:
        library.close()
    mean = sum(per_item.values()) / len(per_item) if per_item else 0.0
    return {
        "dataset": dataset_name(data), "task": task, "method": method, "n_items": len(per_item),
        "n_skipped": skipped, "aspect_recall": round(mean, 2), "per_item": per_item,
        "seconds": round(time.perf_counter() - t0 + reused_seconds, 2),
    }
