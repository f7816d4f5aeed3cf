"""What an EvidenceBench sweep will cost before it runs, and which stored figures are in-sample.

The Bench screen shows the estimate for the current selection and asks before anything slow or paid. Time comes
from facts where there are any: a stored run of the same (dataset, task, method) gives seconds per item (its
fastest, since a first run also paid for embedding and model loading); otherwise a rough per-method figure
measured on a 2-core machine (BENCHMARKS.md, "Bench sweep estimates"), and the estimate says it is rough.
Papers to embed come from the benchmark library itself: the dataset's papers whose sentences lack a current
embedding, counted only when a selected method ranks with embeddings (evtui.methods registry flags).

A figure is in-sample when the method ranks with the shipped learned model (`Method.trained`) and that model's
training files (evtui/resources/ranker/model.json, `training_data.files`) include the run's dataset file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evtui import methods as registry
from evtui.bench.driver import bench_home
from evtui.bench.evidencebench import dataset_name, task_k
from evtui.bench.provenance import (
    IN_SAMPLE_NOTE as IN_SAMPLE_NOTE,  # re-exported: the faces import them from here
)
from evtui.bench.provenance import IN_SAMPLE_STYLE as IN_SAMPLE_STYLE
from evtui.bench.provenance import in_sample as in_sample
from evtui.bench.provenance import training_files as training_files
from evtui.config import Config
from evtui.embed import MODEL_ID

if TYPE_CHECKING:
    import duckdb

# Rough figures, measured with benchmarks/bench_sweep_estimate.py on the EvidenceBench dev set (2 shared cores,
# load 3-6, papers already embedded; BENCHMARKS.md "Bench sweep estimates"): seconds to rank one item, per method,
# the higher of the runs' medians.
ROUGH_ITEM_SECONDS: dict[str, float] = {
    "bm25": 0.01, "random": 0.01, "bm25-coverage": 0.05, "best": 0.2, "dense": 0.05, "hybrid": 0.05,
    "evidential": 1.8, "llm-rerank": 3.2,  # llm-rerank with the local judge: it judges best's top 30
}
ROUGH_LLM_ITEM_SECONDS = 10.0  # an item judged by a hosted LLM: round trips dominate (not measured here: a guess)
ROUGH_OTHER_ITEM_SECONDS = 0.1  # a method registered after these figures were taken
# MiniLM: 46-63 sentences/s in a foreground process, 18/s in the app's sweep process (nice 10) at load 5-6
# (5,907 sentences of the dev set in ~330 s): the rough figure sits between the two.
EMBED_SENTENCES_PER_SECOND = 30.0
MODEL_LOAD_SECONDS = 4.0  # the learned ranker's first item in a process (loading the LightGBM heads)
RUN_SECONDS = 0.2  # opening the benchmark library and scoring, per run
INGEST_SECONDS_PER_PAPER = 0.02  # building the benchmark library on first use (37 papers: 0.6 s)
# The app stores finished items in batches (evtui.bench.sweep.ItemBatches, one a second: resumable sweeps), each
# store switching its shared library to read-write and back (0.09 s on the demo library); per run that is the run's
# row, its last batch and its result (a stored run's seconds, timed in the sweep's process, leave them out).
STORE_RUN_SECONDS = 0.3
SWEEP_START_SECONDS = 1.0  # the sweep's own process: starting Python and importing evtui (0.9-1.1 s)
SLOW_SECONDS = 60.0  # a sweep estimated longer than this asks first


@dataclass(frozen=True)
class RunCost:
    task: str
    method: str
    items: int  # items the run ranks (a results task skips those without results labels)
    seconds: float
    source: str  # "stored": from a stored run's seconds per item; "rough": a per-method rough figure
    setup: float = 0.0  # what this run pays first for the sweep (rough): building the library, embedding, a model

    @property
    def total(self) -> float:
        return self.seconds + self.setup


@dataclass(frozen=True)
class SweepCost:
    runs: tuple[RunCost, ...]
    papers: int  # the dataset's papers
    papers_to_embed: int | None  # None: the benchmark library could not be read (a sweep holds it)
    sentences_to_embed: int
    built: bool  # the benchmark library exists (else the first run builds it)
    llm_methods: tuple[str, ...]  # methods that make LLM calls with the chosen judge
    embed_seconds: float
    seconds: float  # the whole sweep, embedding included
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def rough(self) -> bool:
        return self.embed_seconds > 0 or any(r.source == "rough" for r in self.runs)

    @property
    def slow(self) -> bool:
        """Worth a confirm step: long, or it embeds papers first."""
        return self.seconds > SLOW_SECONDS or bool(self.papers_to_embed)

    def line(self) -> str:
        """One line for the Sweep tab: "3 runs · 0 papers to embed · no LLM calls · ~2 s"."""
        embed = ("papers to embed: unknown" if self.papers_to_embed is None
                 else f"{self.papers_to_embed} paper{'s' if self.papers_to_embed != 1 else ''} to embed")
        llm = f"LLM calls: {', '.join(self.llm_methods)}" if self.llm_methods else "no LLM calls"
        rough = " (rough)" if self.rough else ""
        return (f"{len(self.runs)} run{'s' if len(self.runs) != 1 else ''} · {embed} · {llm} · "
                f"~{duration(self.seconds)}{rough}")

    def details(self) -> list[str]:
        """What the line adds up, one line each: the confirm step's body."""
        out = [f"{r.task} · {r.method}: {r.items} item(s) · ~{duration(r.seconds)} ({r.source})" for r in self.runs]
        if self.papers_to_embed:
            out.append(f"embedding {self.papers_to_embed} of {self.papers} paper(s), {self.sentences_to_embed:,} "
                       f"sentences: ~{duration(self.embed_seconds)} (rough: {EMBED_SENTENCES_PER_SECOND:.0f} "
                       "sentences/s)")
        return out + list(self.notes)


def quick_methods() -> list[str]:
    """The benchmark methods that neither embed papers nor call an LLM (registry flags): the Bench screen's
    preselection, a sweep that finishes in seconds on the EvidenceBench dev set (BENCHMARKS.md)."""
    return [m for m in registry.bench_methods()
            if (x := registry.lookup(m)) is not None and x.embeddings == "none" and x.llm == "never"]


def eta(done: int, total: int, elapsed: float) -> float | None:
    """Seconds left at the pace of the items finished so far in this sweep (None before the first one)."""
    if done <= 0 or elapsed <= 0:
        return None
    return max(0.0, (total - done) * elapsed / done)


class SweepClock:
    """Time left in a running sweep, from the items done so far: the current run's items left at the pace of its
    own items (so cheap runs before an expensive one do not promise an early end), the runs after it by their
    estimates scaled by how the finished runs compared with theirs. Without estimates, the sweep's pace.

    A run's pace is timed from its first item (what comes before it is the run's setup: opening the library,
    loading a model) and leans on the run's estimate until a few items are in (PACE_ITEMS), so one slow or fast
    item does not swing the figure. Fed with the Bench screen's progress; times are `time.monotonic()`."""

    PACE_ITEMS = 5  # items after which the observed pace outweighs the estimate

    def __init__(self, estimates: Sequence[float] | None, start: float) -> None:
        self.estimates = list(estimates) if estimates else None
        self.start = start
        self.run, self.runs, self.done, self.total = 0, 1, 0, 0
        self.run_start = start
        self.first: tuple[float, int] | None = None  # (when, items done) at the run's first report
        self.actual = self.expected = 0.0  # the finished runs: how long they took, how long they were estimated

    def progress(self, run: int, runs: int, done: int, total: int, now: float) -> None:
        self.runs, self.total = runs, total
        while self.run < run:  # a run that ended without its last report (it failed): it ended by now
            self._finish(now)
        self.done = done
        if self.first is None and done > 0:
            self.first = (now, done)
        if done >= total:
            self._finish(now)

    def _finish(self, now: float) -> None:
        if self.estimates is not None and self.run < len(self.estimates):
            self.actual += now - self.run_start
            self.expected += self.estimates[self.run]
        self.run, self.done, self.run_start, self.first = self.run + 1, 0, now, None

    def left(self, now: float) -> float | None:
        """Seconds left; None when there is nothing to go on yet."""
        if self.estimates is None or len(self.estimates) < self.runs:
            return eta(self.run * self.total + self.done, self.runs * self.total, now - self.start)
        if self.run >= len(self.estimates):
            return 0.0
        scale = min(5.0, max(0.2, self.actual / self.expected)) if self.expected > 0 else 1.0
        later = sum(self.estimates[self.run + 1:]) * scale
        estimate = self.estimates[self.run] * scale
        if self.first is None:  # no item of this run yet: its estimate, less the time it has had
            return max(0.0, estimate - (now - self.run_start)) + later
        pace = estimate / max(1, self.total)
        when, at = self.first
        n = self.done - at
        if n > 0:
            w = n / (n + self.PACE_ITEMS)
            pace = w * (now - when) / n + (1 - w) * pace
        return (self.total - self.done) * pace + later


def duration(seconds: float) -> str:
    if seconds < 1:
        return "1 s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def paper_sentences(items: Mapping[str, Mapping[str, Any]]) -> dict[str, int]:
    """paper id -> its searchable (non-heading) sentences, from the dataset file itself (before any ingest)."""
    out: dict[str, int] = {}
    for item_id, item in items.items():
        paper = str(item.get("paper_id") or item_id)
        kinds = item.get("sentence_types_in_candidate_pool") or []
        pool = item.get("paper_as_candidate_pool") or []
        out[paper] = sum(1 for k in kinds if k != "section_name") if kinds else len(pool)
    return out


def missing_embeddings(con: duckdb.DuckDBPyConnection, papers: Iterable[str]) -> dict[str, int]:
    """paper id -> its searchable sentences without a current embedding, for the given papers the library holds
    (a paper it does not hold is absent: not ingested yet). Reads only."""
    wanted = list(papers)
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    if "sentences" not in tables:
        return {}
    if "embeddings" not in tables:
        rows = con.execute("SELECT paper_id, count(*) FILTER (WHERE NOT is_heading) FROM sentences"
                           " WHERE paper_id IN (SELECT unnest(?)) GROUP BY 1", [wanted]).fetchall()
    else:
        rows = con.execute(
            "SELECT s.paper_id, count(*) FILTER (WHERE NOT s.is_heading AND e.sentence_id IS NULL) FROM sentences s"
            " LEFT JOIN embeddings e ON e.sentence_id = s.id AND e.model = ? AND e.text_hash = md5(s.text)"
            " WHERE s.paper_id IN (SELECT unnest(?)) GROUP BY 1", [MODEL_ID, wanted]).fetchall()
    return {str(p): int(n) for p, n in rows}


def bench_db(data: Path, home: Path) -> Path:
    """The DuckDB file of the EvidenceBench dataset's benchmark library (built by its first run)."""
    return Config(home=bench_home("evidencebench", data, home), demo=False).db_path


def read_missing_embeddings(db_path: Path, papers: Iterable[str]) -> dict[str, int] | None:
    """`missing_embeddings` of a benchmark library on disk, opened read-only for the look; {} when it is not
    built yet, None when it cannot be read now (a running sweep holds it)."""
    import duckdb

    if not db_path.exists():
        return {}
    try:
        con = duckdb.connect(str(db_path), read_only=True)
    except duckdb.Error:
        return None
    try:
        return missing_embeddings(con, papers)
    except duckdb.Error:
        return None
    finally:
        con.close()


def _done(r: Mapping[str, Any]) -> bool:
    return r.get("status", "done") == "done" and bool(r.get("seconds"))


def embedded_since(runs: Sequence[Mapping[str, Any]], dataset: str, n_items: int) -> str | None:
    """When the dataset's papers were all embedded, as far as the stored runs tell: the creation time of the first
    finished run of an embedding method that ranked every item (it embedded each item's paper as it went); None
    when no stored run did."""
    full = [str(r.get("created_at") or "") for r in runs
            if r.get("dataset") == dataset and _done(r) and registry.uses_embeddings(str(r.get("method")))
            and int(r.get("n_skipped") or 0) == 0 and int(r.get("n_items") or 0) == n_items]
    return min(full) if full else None


def stored_seconds_per_item(runs: Sequence[Mapping[str, Any]], dataset: str, task: str, method: str,
                            n_items: int | None = None) -> float | None:
    """Seconds per item of the fastest finished stored run of (dataset, task, method); None when there is none.

    A method that ranks with embeddings embeds each item's paper the first time: its runs count only once the
    stored runs show every paper embedded before they started (`embedded_since`), so the estimate's separate
    embedding figure is not paid twice (a first run of `best` on the dev set: 335 s; the next: seconds)."""
    since = None
    if registry.uses_embeddings(method):
        since = embedded_since(runs, dataset, n_items) if n_items else None
        if since is None:
            return None
    best: float | None = None
    for r in runs:
        if (r.get("dataset"), r.get("task"), r.get("method")) != (dataset, task, method) or not _done(r):
            continue
        if since is not None and str(r.get("created_at") or "") <= since:
            continue
        n = int(r.get("n_items") or 0) + int(r.get("n_skipped") or 0)
        if n <= 0:
            continue
        per = float(r["seconds"]) / n
        best = per if best is None else min(best, per)
    return best


def rough_seconds_per_item(method: str, judge: str | None) -> float:
    m = registry.lookup(method)
    if m is not None and m.calls_llm(judge):
        return ROUGH_LLM_ITEM_SECONDS
    return ROUGH_ITEM_SECONDS.get(method, ROUGH_OTHER_ITEM_SECONDS)


def estimate_cost(data: Path, items: Mapping[str, Mapping[str, Any]], tasks: Sequence[str], methods: Sequence[str],
                  judge: str | None, runs: Sequence[Mapping[str, Any]],
                  missing: Mapping[str, int] | None) -> SweepCost:
    """The cost of running every (task, method) of a sweep on `items` (the dataset at `data`).

    `runs`: the stored runs (evtui.bench.runs.list_runs); `missing`: `missing_embeddings` of the benchmark
    library ({} when it is not built yet, None when it could not be read)."""
    dataset = dataset_name(data)
    sentences = paper_sentences(items)
    built = bool(missing)  # a built library holds every paper of its dataset, so it always answers something
    embeds = any(registry.uses_embeddings(m) for m in methods)
    to_embed: int | None
    if missing is None:
        to_embed, n_sentences = (None, 0)
    elif not embeds:
        to_embed, n_sentences = (0, 0)
    else:
        todo = {p: (missing[p] if p in missing else n) for p, n in sentences.items()}
        to_embed = sum(1 for n in todo.values() if n > 0)
        n_sentences = sum(todo.values())
    embed_seconds = n_sentences / EMBED_SENTENCES_PER_SECOND
    notes: list[str] = []
    # The sweep's one-off costs fall on the run that pays them (the ETA spreads the estimate over the runs):
    # the process start and the library's first build on the first run, embedding on the first run that ranks
    # with embeddings (each item embeds its paper), the learned ranker's loading on the first run that uses it.
    first = SWEEP_START_SECONDS
    if not built and missing is not None:
        first += INGEST_SECONDS_PER_PAPER * len(sentences)
        notes.append(f"the first run builds the benchmark library from {data.name} ({len(sentences)} papers)")
    embed_left, load_left = embed_seconds, True
    costs: list[RunCost] = []
    for task in tasks:
        ranked = sum(1 for item in items.values() if task_k(dict(item), task) is not None)
        for method in methods:
            m = registry.lookup(method)
            setup, first = first, 0.0
            if embed_left and registry.uses_embeddings(method):
                setup, embed_left = setup + embed_left, 0.0
            per = stored_seconds_per_item(runs, dataset, task, method, len(items))
            if per is not None:
                costs.append(RunCost(task, method, ranked, per * len(items) + STORE_RUN_SECONDS,
                                     "stored", setup))
                continue
            if load_left and m is not None and m.trained:  # a stored run's time includes its loading
                setup, load_left = setup + MODEL_LOAD_SECONDS, False
                notes.append(f"loading the learned ranker: ~{duration(MODEL_LOAD_SECONDS)} (rough)")
            per = rough_seconds_per_item(method, judge)
            costs.append(RunCost(task, method, ranked, RUN_SECONDS + STORE_RUN_SECONDS + ranked * per, "rough",
                                 setup))
    seconds = sum(c.total for c in costs)
    if missing is None and embeds:
        notes.append("papers to embed unknown: the benchmark library is busy")
    llm = tuple(m for m in methods if (x := registry.lookup(m)) is not None and x.calls_llm(judge))
    return SweepCost(tuple(costs), len(sentences), to_embed, n_sentences, built, llm, embed_seconds, seconds,
                     tuple(notes))
