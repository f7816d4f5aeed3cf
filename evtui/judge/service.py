"""Judging as a service for the CLI, the TUI and the benchmarks: estimate, cache lookup, judge, store.

`judge_evidence` serves cached verdicts first (free), runs the chosen judge on the rest, stores each verdict
as it arrives (a crash mid-sweep keeps what was paid for) and reports it through `on_result`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evtui.errors import EvtuiError
from evtui.judge.base import Judge, Judgment
from evtui.judge.cache import JudgmentCache
from evtui.models import Evidence, ParsedQuery

if TYPE_CHECKING:
    from evtui.library import Library
    from evtui.search import Searcher

JUDGES: tuple[str, ...] = ("local", "llm")


@dataclass
class Estimate:
    """What judging the uncached pairs would take. `cost` is 0 for the local judge and for unpriced models."""

    calls: int
    tokens_in: int
    tokens_out: int
    cost: float
    notes: list[str] = field(default_factory=list)
    cached: int = 0
    judge: str = ""
    model: str = ""

    def to_json(self) -> dict[str, object]:
        return {"judge": self.judge, "model": self.model, "calls": self.calls, "cached": self.cached,
                "tokens_in": self.tokens_in, "tokens_out": self.tokens_out, "cost": round(self.cost, 6),
                "notes": self.notes}


def make_judge(library: Library | None, judge: str | None = None, model: str | None = None,
               api_base: str | None = None, *, searcher: Searcher | None = None, **opts: Any) -> Judge:
    """A judge by name, with defaults from the library's config (judge, judge_model, judge_api_base, ...).
    `searcher`: the local judge shares its `best` ranker (the model and the pools it built)."""
    cfg = library.config if library is not None else None
    name = (judge or (cfg.judge if cfg else None) or "local").strip().lower()
    if name == "local":
        if library is None:
            raise EvtuiError("the local judge needs a library (it reads the ranking model's features)")
        try:
            from evtui.judge.local import LocalJudge
        except ImportError as exc:
            raise EvtuiError(f"the local judge is not available in this install ({exc}); use --judge llm") from exc
        return LocalJudge(library, ranker=searcher.ranker if searcher is not None else None)  # type: ignore[no-any-return]
    if name == "llm":
        from evtui.judge.llm import LLMJudge

        if cfg is not None:
            opts.setdefault("concurrency", cfg.judge_concurrency)
            opts.setdefault("timeout", cfg.judge_timeout)
        return LLMJudge(model or (cfg.judge_model if cfg else None) or "",
                        api_base=api_base or (cfg.judge_api_base if cfg else None), library=library, **opts)
    where = "--judge" if judge else f"judge in {cfg.source}" if cfg is not None else "judge"
    raise EvtuiError(f"{where} must be {' or '.join(JUDGES)}, got {name!r}")


def _resolve(library: Library | None, judge: str | Judge | None, model: str | None, api_base: str | None,
             opts: dict[str, Any]) -> Judge:
    if judge is None or isinstance(judge, str):
        return make_judge(library, judge, model, api_base, **opts)
    return judge


def _unique_uncached(library: Library | None, j: Judge, parsed: ParsedQuery,
                     evidence: Sequence[Evidence]) -> tuple[list[Evidence], dict[str, Judgment]]:
    hits = (JudgmentCache(library.store.con, writable=not getattr(library, "read_only", False))
            .lookup(j.name, j.model, j.prompt_version, parsed, evidence)
            if library is not None else {})
    todo: dict[str, Evidence] = {}
    for e in evidence:
        if e.sentence.id not in hits:
            todo.setdefault(e.sentence.id, e)
    return list(todo.values()), hits


def estimate(parsed: ParsedQuery, evidence: Sequence[Evidence], judge: str | Judge | None = "local",
             model: str | None = None, *, library: Library | None = None, api_base: str | None = None,
             **opts: Any) -> Estimate:
    """Calls, tokens and USD that judging `evidence` would take; cached pairs (given a library) count nothing."""
    j = _resolve(library, judge, model, api_base, opts)
    todo, hits = _unique_uncached(library, j, parsed, evidence)
    if j.name != "llm":
        return Estimate(calls=len(todo), tokens_in=0, tokens_out=0, cost=0.0, cached=len(hits), judge=j.name,
                        model=j.model, notes=[f"{j.name} judge ({j.model}): runs offline, no LLM calls, no cost"])
    from evtui.judge.llm import LLMJudge

    assert isinstance(j, LLMJudge)
    tin = tout = 0
    cost = 0.0
    for msgs in j.messages(parsed, todo):
        a, b, c = j.call_estimate(msgs)
        tin, tout, cost = tin + a, tout + b, cost + c
    notes = ["tokens estimated from prompt length (~4 characters a token); output ~80 tokens a verdict"]
    if todo and j.client.price() is None:
        notes.append(j.client.price_note())
    return Estimate(calls=len(todo), tokens_in=tin, tokens_out=tout, cost=cost, cached=len(hits), judge=j.name,
                    model=j.model, notes=notes)


def judge_evidence(library: Library, parsed: ParsedQuery, evidence: Sequence[Evidence], *,
                   judge: str | Judge | None = "local", model: str | None = None, api_base: str | None = None,
                   max_cost: float | None = None, on_result: Callable[[Judgment], None] | None = None,
                   sink: Callable[[str, list[list[Any]]], None] | None = None,
                   cancelled: Callable[[], bool] | None = None, **opts: Any) -> list[Judgment]:
    """One Judgment per Evidence, in order: cached ones first (cost 0, cached=True), then the judge's.

    With `max_cost` (USD) no LLM call starts whose worst-case cost would take this sweep past it; the items
    left over come back with status 'skipped' and the reason. Items never raise; setup errors do (EvtuiError).
    `sink(table, rows)`, when given, receives the cache rows instead of the library (a read-only Ray worker's
    driver writes them back: evtui/scale/bench.py).
    `cancelled`, when given, is asked every 0.1 s during an LLM sweep (the app passes its worker's is_cancelled):
    once it is true no new call starts, the calls in flight are cancelled, the verdicts already back are stored,
    and the items never judged come back 'skipped' (not cached: the next run judges them). A KeyboardInterrupt
    does the same, then goes on (`evtui judge` says what was kept).
    """
    if max_cost is not None and max_cost < 0:
        raise EvtuiError("--max-cost must be zero or more (USD)")
    j = _resolve(library, judge, model, api_base, opts)
    cache = JudgmentCache(library.store.con, writable=sink is None)
    todo, hits = _unique_uncached(library, j, parsed, evidence)
    results: dict[str, Judgment] = {}
    for e in evidence:
        hit = hits.get(e.sentence.id)
        if hit is not None and e.sentence.id not in results:
            results[e.sentence.id] = hit
            if on_result is not None:
                on_result(hit)
    texts = {e.sentence.id: e.sentence.text for e in todo}

    def arrived(verdict: Judgment) -> None:
        rows = cache.rows(parsed, [verdict], texts)
        if sink is not None:
            sink("judgments", rows)
        else:
            cache.insert_rows(rows)
        results[verdict.sentence_id] = verdict
        if on_result is not None:
            on_result(verdict)

    if todo:
        from evtui.judge.llm import CANCELLED, LLMJudge

        if isinstance(j, LLMJudge):
            for verdict in j.judge(parsed, todo, on_result=arrived, max_cost=max_cost, cancelled=cancelled):
                if verdict.error == CANCELLED:  # never judged, so it never arrived: returned, not stored
                    results.setdefault(verdict.sentence_id, verdict)
        else:
            for verdict in j.judge(parsed, todo):
                arrived(verdict)
    missing = [e.sentence.id for e in evidence if e.sentence.id not in results]
    if missing:
        raise EvtuiError(f"the {j.name} judge returned no verdict for {len(missing)} sentence(s), e.g. {missing[0]}")
    return [results[e.sentence.id] for e in evidence]


NOT_ATTEMPTED = "not attempted: "  # the prefix of the rows a sweep did not call after a fatal error (llm.py)


def failure_line(judge: str, judgments: Sequence[Judgment]) -> str | None:
    """One line saying why the rows without a verdict have none, when they all share one reason (a server that
    cannot be reached, a refused key): said once rather than on every row. None when every row has a verdict or
    the reasons differ (each row then says its own)."""
    failed = [j for j in judgments if j.status == "failed"]
    reasons = {failure_root(j) for j in failed}
    if len(reasons) != 1:
        return None
    reason = reasons.pop()
    who = "the LLM judge" if judge == "llm" else f"the {judge} judge"
    what = f"{who} {reason}" if reason.startswith("could not reach") else f"{who} failed: {reason}"
    ok = sum(1 for j in judgments if j.status == "ok")
    tail = ("no verdicts" if not ok else f"{len(failed)} of {len(judgments)} sentence(s) without a verdict")
    keep = "; the local judge's verdicts are unchanged" if judge == "llm" else ""
    return f"{what}: {tail}{keep}"


def failure_root(judgment: Judgment) -> str:
    """A failed row's reason without the 'not attempted: ' prefix (what failure_line reports once)."""
    return (judgment.error or "no verdict").removeprefix(NOT_ATTEMPTED)


def summarize(judgments: Sequence[Judgment]) -> dict[str, Any]:
    """Totals for a footer or a run record: this run's cost, and how many were cached, failed or skipped."""
    return {
        "judged": sum(1 for j in judgments if j.status == "ok" and not j.cached),
        "cached": sum(1 for j in judgments if j.cached),
        "failed": sum(1 for j in judgments if j.status == "failed"),
        "skipped": sum(1 for j in judgments if j.status == "skipped"),
        "cost": round(sum(j.cost for j in judgments), 6),
        "tokens_in": sum(j.tokens_in for j in judgments),
        "tokens_out": sum(j.tokens_out for j in judgments),
        # a cached verdict keeps its first run's notes, but this run made no call for it: no "calls … cost $0"
        "notes": sorted({n for j in judgments if not j.cached for n in j.notes if n.startswith("no price known")}),
    }
