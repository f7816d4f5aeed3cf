"""The ranking methods: one `Method` record each, read by the Searcher, the harnesses, the Ray engine, the TUI and
the CLI help, so adding a method is one entry here (plus its ranker, registered by the layer that makes it).

This module sits low in the layers (it imports only base modules): the layers that make rankers register their
factories with `register_ranker` instead of being imported from here. Order matters: every listing keeps the
order of the registry (the CLI help, the Bench screen and the harnesses show methods in it).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from evtui.errors import EvtuiError

if TYPE_CHECKING:
    from evtui.library import Library

T = TypeVar("T")
Embeddings = Literal["none", "uses", "needs"]
LlmUse = Literal["never", "judge", "always"]


@dataclass(frozen=True)
class Task:
    """All a benchmark ranker may see of an item (EvidenceBench): never its labels."""

    item_id: str
    hypothesis: str
    paper_id: str
    k: int
    results: bool = False  # a results task asks for results evidence (part of the task, not a label)


Ranker = Callable[[Task], list[int]]
# (library, method name, seed, judge options) -> a ranker of benchmark items.
RankerFactory = Callable[["Library", str, int, "Mapping[str, Any] | None"], Ranker]


@dataclass(frozen=True)
class Method:
    name: str
    description: str  # one line: what the method does
    help: str = ""  # what `--method` help says about it in brackets ("": the name alone)
    search: bool = True  # `Searcher.search` runs it (`evtui search --method`); else a benchmark strategy only
    judge: bool = False  # a judge strategy of the EvidenceBench harness (takes the judge options)
    # "needs": ranks by embeddings, so a whole-corpus benchmark embeds the corpus first; "uses": uses them where
    # they exist or computes them for one paper (a read-only Ray worker cannot, so the Ray engine embeds first).
    embeddings: Embeddings = "none"
    llm: LlmUse = "never"  # "judge": LLM calls with the llm judge only (not with the local one)
    ray: bool = True  # `--engine ray` can rank with it
    semantic: bool = False  # its rows may rightly share no word with the query (honest lists keep them)
    # Which registered factory makes its benchmark ranker: "search" (the Searcher within the item's paper), "draw"
    # (the seeded draw), "judge" (evtui.judge.strategies), or a kind a new method registers.
    ranker: str = "search"
    # ranks with the shipped learned model (evtui/resources/ranker): its benchmark figures on that model's training
    # files (model.json `training_data.files`) are in-sample (evtui.bench.estimate.in_sample)
    trained: bool = False

    def calls_llm(self, judge: str | None = "llm") -> bool:
        """Does it make LLM calls (which cost money) with this judge kind?"""
        return self.llm == "always" or (self.llm == "judge" and (judge or "llm") == "llm")

    def ranker_kind(self, judge_opts: Mapping[str, Any] | None = None) -> str:
        """A judge strategy that is also a search method (`evidential`) judges only when given an LLM model;
        without one it is the search method."""
        if self.judge and (not self.search or (judge_opts or {}).get("model")):
            return "judge"
        return self.ranker


DEFAULT_METHOD = "best"

_REGISTRY: dict[str, Method] = {}
_FACTORIES: dict[str, RankerFactory] = {}


def register(method: Method) -> Method:
    if method.name in _REGISTRY:
        raise ValueError(f"method {method.name!r} is registered already")
    _REGISTRY[method.name] = method
    return method


def unregister(name: str) -> None:
    _REGISTRY.pop(name, None)


def lookup(name: str) -> Method | None:
    return _REGISTRY.get(name)


def get(name: str) -> Method:
    """The method called `name`, or an EvtuiError that lists the benchmark's methods."""
    m = _REGISTRY.get(name)
    if m is None:
        raise EvtuiError(f"unknown method {name!r}; choose one of: {', '.join(bench_methods())}")
    return m


def all_methods() -> tuple[Method, ...]:
    return tuple(_REGISTRY.values())


def search_methods() -> tuple[str, ...]:
    """What `Searcher.search` accepts, in order."""
    return tuple(m.name for m in _REGISTRY.values() if m.search)


def judge_methods() -> tuple[str, ...]:
    """The judge strategies: those that only judge, then those that are also search methods."""
    judged = [m for m in _REGISTRY.values() if m.judge]
    return tuple(m.name for m in sorted(judged, key=lambda m: m.search))


def bench_methods() -> tuple[str, ...]:
    """What the EvidenceBench harness (CLI, Bench screen) runs: the search methods, then the others (the judge
    strategies that are not search methods)."""
    return (*search_methods(), *(m.name for m in _REGISTRY.values() if not m.search))


def needs_embeddings(name: str) -> bool:
    m = _REGISTRY.get(name)
    return m is not None and m.embeddings == "needs"


def uses_embeddings(name: str) -> bool:
    m = _REGISTRY.get(name)
    return m is not None and m.embeddings != "none"


def is_semantic(name: str) -> bool:
    m = _REGISTRY.get(name)
    return m is not None and m.semantic


def draw(pool: Sequence[T], k: int, seed: int, key: str) -> list[T]:
    """The seeded random baseline, the one implementation of `random`: k of `pool` (all when fewer), the same
    for the same (seed, key), so an item's draw does not depend on the others or their order."""
    return random.Random(f"{seed}:{key}").sample(pool, min(k, len(pool)))


def register_ranker(kind: str, factory: RankerFactory) -> None:
    """Called by the layer that makes that kind of benchmark ranker (bench: search and draw; judge strategies)."""
    _FACTORIES[kind] = factory


def unregister_ranker(kind: str) -> None:
    _FACTORIES.pop(kind, None)


def make_ranker(library: Library, name: str, seed: int, judge_opts: Mapping[str, Any] | None = None) -> Ranker:
    kind = get(name).ranker_kind(judge_opts)
    factory = _FACTORIES.get(kind)
    if factory is None:
        raise EvtuiError(f"no {kind} ranker is registered for method {name!r}")
    return factory(library, name, seed, judge_opts)


for _method in (
    Method("best", "learned reranker (LightGBM) over BM25, dense, aspect-coverage, structure and results features, "
           "then coverage-aware selection",
           help="learned reranker over BM25, embeddings, aspect coverage, section and results cues, then "
                "coverage-aware selection", embeddings="uses", trained=True),
    Method("evidential", "best's top 30 re-ordered by relevance + α·(P(support) + P(refute)) from the trained "
           "verifier; in a benchmark with --model, from the judge's verdicts",
           judge=True, embeddings="uses", llm="judge", trained=True),
    Method("bm25-coverage", "BM25 over one dis-max query per aspect, the top 200 re-ranked by aspects covered",
           help="BM25 re-ranked by aspects covered"),
    Method("bm25", "the plain BM25 order"),
    Method("dense", "cosine similarity of MiniLM sentence embeddings", help="MiniLM embeddings, computed lazily",
           embeddings="needs", semantic=True),
    Method("hybrid", "BM25 and dense fused by reciprocal rank", help="reciprocal-rank fusion of both",
           embeddings="needs", semantic=True),
    Method("random", "a seeded random draw (of the paper's sentences within a paper): every benchmark's floor",
           help="seeded", semantic=True, ranker="draw"),
    Method("llm-rerank", "the judge scores the default method's top 30 in the paper; its order, then coverage-aware "
           "selection", search=False, judge=True, embeddings="uses", llm="judge", ranker="judge", trained=True),
    Method("llm-sbs", "EvidenceBench's section-by-section LLM strategy", search=False, judge=True, llm="always",
           ranker="judge"),
):
    register(_method)
