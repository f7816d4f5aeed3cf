"""One benchmark driver: build the benchmark's own library, rank every item (or take a killed run's answer for it),
then score. EvidenceBench, SciFact and Check-COVID are `Benchmark` specs over `run_benchmark`.

What a ranker may see is a `Task` (EvidenceBench) or a `Query` (SciFact, Check-COVID); labels are read by the
spec's scorer alone, after ranking. Where the rankings come from is the spec's local ranker, or an `Engine`
passed in by the caller (evtui.scale's Ray engine), so this package never imports the engines above it.

The stored side of a run (resume, record each item as it finishes, keep secrets out of stored parameters) is
`RunBook`: the CLI and the Bench screen both go through it.
"""

from __future__ import annotations

import hashlib
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from evtui.bench.runs import (
    ItemResult,
    batch_items,
    changed_since,
    claim_runs,
    discard_empty,
    find_resumable,
    flush_items,
    record_item,
    release_runs,
    start_runs,
    stored_items,
)
from evtui.config import Config
from evtui.errors import EvtuiError
from evtui.library import Library
from evtui.methods import Task  # all a ranker may see of an EvidenceBench item (below judge)
from evtui.sharing import share_reads

ProgressFn = Callable[[str, int, int], None]  # (stage, done, total)
R = TypeVar("R")  # what the ranker is asked (Task, Query)
SECRET_PARAMS = frozenset({"api_base"})  # a URL may carry credentials: never stored with a run


@dataclass(frozen=True)
class Query:
    """All a ranker may see of a SciFact / Check-COVID query."""

    query_id: str
    text: str
    paper_id: str | None = None  # set for within-paper (sentence) retrieval


class Engine(Protocol):
    """Rankings computed elsewhere than this process (evtui.scale.RayEngine). Each call may close `library` (its
    workers open it read-only) and returns the answer for each request, asked in the order given."""

    def rank_tasks(self, library: Library, tasks: Sequence[Task], method: str, seed: int,
                   judge_opts: Mapping[str, Any] | None) -> Callable[[Task], list[int]]: ...

    def rank_claims(self, library: Library, queries: Sequence[tuple[Query, bool]], method: str, seed: int,
                    depth: int, sentence_k: int) -> Callable[[str], dict[str, Any]]: ...


def bench_home(name: str, corpus: Path, home: Path) -> Path:
    """Where the benchmark library of this corpus file lives: `<home>/bench/<name>-<sha10 of the file>`."""
    try:
        digest = hashlib.sha1(corpus.read_bytes(), usedforsecurity=False).hexdigest()[:10]
    except OSError as exc:
        raise EvtuiError(f"cannot read the corpus {corpus}: {exc.strerror or exc}") from exc
    return home / "bench" / f"{name}-{digest}"


def bench_library(name: str, corpus: Path, home: Path, *, empty_ok: bool = False) -> Library:
    """The benchmark's papers alone, in `bench_home`, kept apart from the user's library (ingest is idempotent,
    so only the first run pays)."""
    lib = Library(Config(home=bench_home(name, corpus, home), demo=False))
    report = lib.ingest([corpus], one_copy=False)
    if report.errors:
        lib.close()
        raise EvtuiError(f"cannot load {corpus}: {report.errors[0].path}: {report.errors[0].reason}")
    if not empty_ok and lib.is_empty():
        lib.close()
        raise EvtuiError(f"no papers in {corpus}")
    return lib


@dataclass
class Timings:
    """Where a run's time went (seconds); `reused` is what a killed run's items took before it was resumed."""

    ingest: float = 0.0
    embed: float = 0.0
    search: float = 0.0
    total: float = 0.0
    reused: float = 0.0
    embedded_sentences: int = 0


@dataclass
class RunResult:
    """A finished run: `result` is what `--json` prints and `save_run` stores; `params` the stored parameters
    (the resume key, plus the timings where the harness records them)."""

    result: dict[str, Any]
    params: dict[str, Any] = field(default_factory=dict)


class Benchmark(ABC, Generic[R]):
    """One benchmark run's spec: its corpus, its requests, how they are ranked and how the answers are scored."""

    name: str  # the bench library's name (scifact, checkcovid, evidencebench)
    corpus: Path  # the file the bench library is built from
    method: str
    seed: int
    stage = "claims"  # the progress label while ranking
    empty_ok = False  # may the corpus hold no paper?

    def prepare(self, library: Library) -> None:  # noqa: B027 - optional hook
        """Read what scoring needs from the built library (before anything is ranked)."""

    def embed(self, library: Library, on_progress: ProgressFn | None) -> int:
        """Embed what the method searches; returns how many sentences were embedded."""
        return 0

    @abstractmethod
    def requests(self) -> list[tuple[str, R | None]]:
        """(item id, what the ranker sees), in run order; None for an item this run skips."""

    @abstractmethod
    def local_ranker(self, library: Library) -> Callable[[R], Any]: ...

    @abstractmethod
    def engine_ranker(self, engine: Engine, library: Library, todo: list[R]) -> Callable[[R], Any]: ...

    def item(self, item_id: str, request: R, answer: Any, seconds: float) -> ItemResult:
        """One ranked item as stored (and handed back on resume): by default the answer, scored later."""
        return ItemResult(item_id, None, answer, seconds)

    @abstractmethod
    def score(self, answers: Mapping[str, ItemResult | None], timings: Timings) -> RunResult: ...


def run_benchmark(spec: Benchmark[Any], home: Path, *, engine: Engine | None = None,
                  done: Mapping[str, ItemResult] | None = None, on_item: Callable[[ItemResult], None] | None = None,
                  on_progress: ProgressFn | None = None) -> RunResult:
    """Build the library, rank each request not in `done` (a killed run's items, taken as they are), hand each
    new item to `on_item` as it finishes (so a caller stores it before the next starts), and score."""
    done = done or {}
    requests = spec.requests()
    t = Timings()
    t0 = time.perf_counter()
    library = bench_library(spec.name, spec.corpus, home, empty_ok=spec.empty_ok)
    try:
        spec.prepare(library)
        t.ingest = time.perf_counter() - t0
        t.embedded_sentences = spec.embed(library, on_progress)
        t.embed = time.perf_counter() - t0 - t.ingest
        todo = [r for qid, r in requests if r is not None and qid not in done]
        rank = spec.local_ranker(library) if engine is None else spec.engine_ranker(engine, library, todo)
        answers: dict[str, ItemResult | None] = {}
        for n, (qid, request) in enumerate(requests, 1):
            res = done.get(qid)
            if res is not None:
                t.reused += res.seconds
            elif request is not None:
                t1 = time.perf_counter()
                answer = rank(request)
                res = spec.item(qid, request, answer, round(time.perf_counter() - t1, 4))
                if on_item:
                    on_item(res)
            answers[qid] = res
            if on_progress:
                on_progress(spec.stage, n, len(requests))
    finally:
        library.close()
    t.total = time.perf_counter() - t0
    t.search = t.total - t.ingest - t.embed
    return spec.score(answers, t)


def stored_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """A run's parameters as they may be stored: without the secrets (the API base)."""
    return {k: v for k, v in params.items() if k not in SECRET_PARAMS}


class RunBook:
    """The stored side of a sweep: one 'running' row per task before anything runs, each item committed as it
    finishes, a killed sweep picked up again with `resume`, and runs that failed before their first item
    forgotten. With `save=False` nothing is stored (and nothing can be resumed)."""

    def __init__(self, library: Library, dataset: str, tasks: Sequence[str], method: str,
                 params: Mapping[str, Any], *, save: bool = True, resume: bool = False,
                 say: Callable[[str], None] | None = None, share: bool = False) -> None:
        """`share` (a CLI sweep, which runs for minutes and writes a row now and then): from now on the library is
        read-only between those writes (each in its own short window, evtui.bench.runs), so `evtui bench runs`,
        `stats` and searches in another process work meanwhile, and finished items are stored in batches. The
        library's connections are then re-made at each write: write to it only through evtui.bench.runs or rw()."""
        self.check(resume=resume, save=save)
        if share and share_reads(library):  # the app's library is shared already and batches its own stores
            batch_items(library)
        self.library, self.method = library, method
        self.params = stored_params(params)
        self.run_ids: dict[str, str] = {}
        if resume:
            self.run_ids = find_resumable(library, dataset, tasks, method, self.params)
            if self.run_ids:
                claim_runs(library, list(self.run_ids.values()))  # running again: this process runs them
            elif say:
                stale = changed_since(library, dataset, tasks, method, self.params)
                say(f"unfinished run {stale[0]} was made from other contents of "
                    f"{', '.join(str(self.params[p]) for p in stale[1])} (edited since it started): starting a new "
                    "run rather than mixing the two" if stale else
                    "no unfinished run with these arguments: starting a new one")
        todo = [t for t in tasks if t not in self.run_ids]
        if save and todo:
            self.run_ids.update(zip(todo, start_runs(library, dataset, todo, method, self.params), strict=True))

    @staticmethod
    def check(*, resume: bool, save: bool) -> None:
        """Refuse a resume of a run that would not be stored (callers check before any other work)."""
        if resume and not save:
            raise EvtuiError("--resume continues a stored run: it cannot go with --no-save")

    def run_id(self, task: str) -> str | None:
        return self.run_ids.get(task)

    def done(self, task: str) -> dict[str, ItemResult]:
        """The items a killed run of this task finished ({} for a new run)."""
        run_id = self.run_ids.get(task)
        return stored_items(self.library, run_id) if run_id else {}

    def recorder(self, task: str) -> Callable[[ItemResult], None] | None:
        """Commits each finished item of this task (None when nothing is stored)."""
        run_id = self.run_ids.get(task)
        if run_id is None:
            return None
        return lambda item: record_item(self.library, run_id, item)

    def release(self) -> None:
        """This process stops its unfinished runs but goes on (an app sweep cancelled or failed): they are
        listed as interrupted, not running, and a resume finishes them."""
        if self.run_ids:
            release_runs(self.library, list(self.run_ids.values()))

    def keep(self) -> None:
        """After an interruption (Ctrl-C): store the finished items a shared sweep holds back (batch_items), so a
        `--resume` starts after them."""
        flush_items(self.library)

    def discard_empty(self) -> None:
        """After a failure: forget the runs that stored no item (nothing to resume)."""
        if self.run_ids:
            discard_empty(self.library, list(self.run_ids.values()))

    @contextmanager
    def settled_on_failure(self) -> Iterator[None]:
        """Around a run: a failure forgets runs that stored nothing (`discard_empty`), an interruption (Ctrl-C)
        stores what the run finished (`keep`), so `--resume` starts after it."""
        try:
            yield
        except EvtuiError:
            self.discard_empty()
            raise
        except BaseException:
            self.keep()
            raise
