"""EvidenceBench's four evidence-retrieval tasks, run through the same Searcher as `evtui search`.

Per item, the system sees only (hypothesis, paper id, K) — a `Task` — and returns at most K sentence indices
from that item's own paper; labels are read afterwards, by the scorer alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from evtui import methods
from evtui.bench import driver
from evtui.bench.driver import Benchmark, Engine, RunResult, Task, Timings, run_benchmark
from evtui.bench.jsonl import NESTING_HINT
from evtui.bench.metrics import aspect_recall
from evtui.bench.runs import ItemResult
from evtui.config import load_config
from evtui.errors import EvtuiError
from evtui.library import Library

_POOLS: dict[str, dict] = {}  # bench library home -> BestRanker pool cache, for the length of a process
TASKS: tuple[str, ...] = ("er-optimal", "er-10", "results-er-optimal", "results-er-5")
ProgressFn = Callable[[int, int], None]


def load_items(path: Path) -> dict[str, dict[str, Any]]:
    if not path.exists():
        raise EvtuiError(f"no such file: {path}")
    if path.is_dir():
        raise EvtuiError(f"{path} is a folder: give the EvidenceBench JSON file")
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark (a Windows editor's) is not part of the JSON
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data" and text.lstrip().startswith("{"):  # one object per line: claims, a corpus
            raise EvtuiError(f"{path} is JSON Lines (one object per line), not an EvidenceBench JSON file (one "
                             "object of items): SciFact and Check-COVID files go to `evtui bench scifact` and "
                             "`evtui bench checkcovid`") from exc
        raise EvtuiError(f"cannot read EvidenceBench data {path}: {exc}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise EvtuiError(f"cannot read EvidenceBench data {path}: {exc}") from exc
    except RecursionError:
        raise EvtuiError(f"cannot read EvidenceBench data {path}: nested too deeply ({NESTING_HINT})") from None
    if not isinstance(data, dict) or not data or not all(
            isinstance(v, dict) and "paper_as_candidate_pool" in v for v in data.values()):
        raise EvtuiError(f"{path} is not an EvidenceBench JSON file (items with paper_as_candidate_pool)")
    for item_id, item in data.items():
        _check_item(path, item_id, item)
    return data


def _check_item(path: Path, item_id: str, item: dict[str, Any]) -> None:
    """What the harness reads of an item, checked before any run is recorded: a file missing one of them failed
    with a KeyError traceback mid-sweep and left its runs listed as interrupted."""
    def bad(field: str, what: str) -> EvtuiError:
        return EvtuiError(f"{path}: item {item_id} is not an EvidenceBench item: {field} {what}")

    def optimal(field: str) -> bool:
        ev = item.get(field)
        return isinstance(ev, dict) and isinstance(ev.get("optimal"), int) and not isinstance(ev["optimal"], bool) \
            and ev["optimal"] >= 1

    if not isinstance(item.get("hypothesis"), str) or not item["hypothesis"].strip():
        raise bad("hypothesis", "is missing or empty")
    if not isinstance(item.get("paper_as_candidate_pool"), list):
        raise bad("paper_as_candidate_pool", "is not a list of sentences")
    if not isinstance(item.get("aspect_list_ids"), list):
        raise bad("aspect_list_ids", "is not a list")
    by_sentence = item.get("sentence_index2aspects")
    if not isinstance(by_sentence, dict) or not all(str(k).isdigit() and isinstance(v, list)
                                                    for k, v in by_sentence.items()):
        raise bad("sentence_index2aspects", "is not an object of sentence index -> aspect ids")
    if not optimal("evidence_retrieval_at_optimal_evaluation"):
        raise bad("evidence_retrieval_at_optimal_evaluation", "has no optimal K (a positive integer)")
    if item.get("results_aspect_list_ids") is not None and not isinstance(item["results_aspect_list_ids"], list):
        raise bad("results_aspect_list_ids", "is neither a list nor null")
    if item.get("results_aspect_list_ids") is not None and \
            item.get("results_evidence_retrieval_at_optimal_evaluation") is not None and \
            not optimal("results_evidence_retrieval_at_optimal_evaluation"):
        raise bad("results_evidence_retrieval_at_optimal_evaluation", "has no optimal K (a positive integer)")


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
    """The EvidenceBench file's papers, as the driver builds them for a run (the Bench screen's drill-down)."""
    return driver.bench_library("evidencebench", data, home, empty_ok=True)


def run_params(data: Path | str, seed: int, judge_opts: Mapping[str, Any] | None = None,
               limit: int | None = None) -> dict[str, Any]:
    """A run's stored parameters (its resume key), as the CLI and the Bench screen record them."""
    return driver.stored_params({"data": str(data), "seed": seed, **(judge_opts or {}),
                                 **({"limit": limit} if limit is not None else {})})


def make_ranker(library: Library, method: str, seed: int,
                judge_opts: Mapping[str, Any] | None = None) -> Callable[[Task], list[int]]:
    """The method's ranker of benchmark items, as its registry entry says it is made (evtui.methods)."""
    return methods.make_ranker(library, method, seed, judge_opts)


def _search_ranker(library: Library, method: str, seed: int,
                   judge_opts: Mapping[str, Any] | None) -> Callable[[Task], list[int]]:
    """The search method within the item's paper. `--task all` runs the four tasks one after another on the same
    items: `best` shares its candidate pools (keyed by query and paper content, so never stale) across them."""
    from evtui.search import Searcher

    searcher = Searcher(library, pool_cache=_POOLS.setdefault(str(library.config.home), {}))

    def rank(task: Task) -> list[int]:
        res = searcher.search(task.hypothesis, k=task.k, paper=task.paper_id, mode="hypothesis", method=method,
                              results=task.results, seed=seed)
        return [e.sentence.position for e in res.evidence][: task.k]

    return rank


def _draw_ranker(library: Library, method: str, seed: int,
                 judge_opts: Mapping[str, Any] | None) -> Callable[[Task], list[int]]:
    def rank(task: Task) -> list[int]:  # keyed by item, so items are independent of order
        pool = [s.position for s in library.store.sentences(task.paper_id) if not s.is_heading]
        return methods.draw(pool, task.k, seed, task.item_id)

    return rank


def _judge_ranker(library: Library, method: str, seed: int,
                  judge_opts: Mapping[str, Any] | None) -> Callable[[Task], list[int]]:
    from evtui.judge.strategies import make_judge_ranker

    return make_judge_ranker(library, method, **(judge_opts or {}))


methods.register_ranker("search", _search_ranker)
methods.register_ranker("draw", _draw_ranker)
methods.register_ranker("judge", _judge_ranker)


def visible_task(item_id: str, item: dict[str, Any], task: str) -> Task | None:
    """What the ranker sees of one item on `task`; None when the task skips it (no results labels)."""
    k = task_k(item, task)
    if k is None:
        return None
    return Task(item_id, item["hypothesis"], str(item.get("paper_id") or item_id), k,
                results=task.startswith("results"))


class EvidenceBenchRun(Benchmark[Task]):
    """One task of EvidenceBench: each item's Task is ranked, then scored by its aspect recall (0-100)."""

    name = "evidencebench"
    stage = "items"
    empty_ok = True

    def __init__(self, data: Path, items: dict[str, dict[str, Any]], task: str, method: str, seed: int,
                 judge_opts: dict[str, Any] | None) -> None:
        self.corpus, self.items, self.task, self.method, self.seed = data, items, task, method, seed
        self.judge_opts = judge_opts

    def requests(self) -> list[tuple[str, Task | None]]:
        return [(item_id, visible_task(item_id, item, self.task)) for item_id, item in self.items.items()]

    def local_ranker(self, library: Library) -> Callable[[Task], list[int]]:
        return make_ranker(library, self.method, self.seed,
                           **({"judge_opts": self.judge_opts} if self.judge_opts else {}))

    def engine_ranker(self, engine: Engine, library: Library, todo: list[Task]) -> Callable[[Task], list[int]]:
        return engine.rank_tasks(library, todo, self.method, self.seed, self.judge_opts)

    def item(self, item_id: str, request: Task, answer: Sequence[int], seconds: float) -> ItemResult:
        picked = [int(i) for i in answer]
        if len(picked) > request.k:
            raise EvtuiError(f"{self.method} returned {len(picked)} sentences for K={request.k} on {item_id}")
        score = score_item(self.items[item_id], self.task, picked)
        return ItemResult(item_id, None if score is None else round(100 * score, 4), picked, seconds)

    def score(self, answers: Mapping[str, ItemResult | None], timings: Timings) -> RunResult:
        per_item = {i: r.score for i, r in answers.items() if r is not None and r.score is not None}
        mean = sum(per_item.values()) / len(per_item) if per_item else 0.0
        return RunResult({
            "dataset": dataset_name(self.corpus), "task": self.task, "method": self.method,
            "n_items": len(per_item), "n_skipped": len(answers) - len(per_item), "aspect_recall": round(mean, 2),
            "per_item": per_item, "seconds": round(timings.total + timings.reused, 2),
        })


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
    engine: Engine | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """Score every item of `data` on `task`. Items in `done` (a killed run's, see `evtui.bench.runs`) are taken
    as they are; `on_item` gets each newly finished one, so a caller can store it before the next starts.
    `engine` ranks the items elsewhere (evtui.scale.RayEngine); by default they are ranked here."""
    if task not in TASKS:
        raise EvtuiError(f"unknown task {task!r}; choose one of: {', '.join(TASKS)}, all")
    items = load_items(data)
    if limit is not None:  # the first N items (quick runs), as `bench scifact --limit`
        items = dict(list(items.items())[:limit])
    spec = EvidenceBenchRun(data, items, task, method, seed, judge_opts)
    return run_benchmark(spec, home or load_config().home, engine=engine, done=done, on_item=on_item,
                         on_progress=(lambda _stage, n, total: on_progress(n, total)) if on_progress else None).result
