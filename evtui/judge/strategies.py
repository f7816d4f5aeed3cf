"""Benchmark strategies that use a judge: rankers `(Task) -> list[int]` for `evtui bench evidencebench --method`.

- `llm-rerank`: judge the top 30 of the default search method within the task's paper, order by the judge's
  score (then the retrieval order), then pick K with `best`'s coverage-aware selection.
- `evidential`: the same pool ordered by +VeriRel's α·(P(support) + P(refute)) + (1 − α)·relevance, α = 0.5:
  a sentence that takes a side counts for more than one that is merely on topic.
- `llm-sbs`: EvidenceBench's section-by-section strategy (Wang et al., COLM 2025): each section is shown to
  the LLM as an indexed list with the authors' section prompt; when more than K indices come back, their
  aggregation prompt regenerates a choice of at most K from the pooled picks.

Judgments go through the judge service, so they are cached in the bench library; the sbs completions are
cached there too, keyed by model and prompt, so re-running a benchmark costs nothing.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from evtui.errors import EvtuiError
from evtui.judge.base import Judgment
from evtui.methods import Task, judge_methods, lookup
from evtui.models import Sentence

if TYPE_CHECKING:
    from evtui.judge.llm import LLMClient
    from evtui.library import Library

RERANK_POOL = 30
ALPHA = 0.5
SBS_CHUNK_CHARS = 6000  # a section longer than this is shown in parts (small local models have 2k contexts)
SBS_MAX_TOKENS = 1024

# Verbatim from EvidenceBench's Evaluation/prompt_template.json (MIT-licensed code; keys section_prompt_final
# and sbs_aggregation). Placeholders are filled with str.replace, as the text has no other braces.
SECTION_PROMPT = (
    "Given a hypothesis, and a section from biomedical paper in the format of an indexed list of text elements "
    "(including sentences and (sub)section titles), identify the experiment in the section that provide evidence "
    "relevant to the hypothesis. You must explain how this experiment would provide evidence relevant to the "
    "hypothesis. Determine what details (i.e. text elements) about the experiment would jointly provide the most "
    "effective evidence to support or refute the hypothesis. Your task is to find NO MORE than {text_ele_limit} "
    "text elements. Since you are only allowed to find a limited amount of text elements, you must only select "
    "text elements that together would cover the most amount of details of the experiment that you believe is "
    "relevant to the hypothesis. \n\nHypothesis:\n{hypothesis}\n\nPaper:\n\n{cand_pool}\n\nProvide an explanation "
    "of how the details you identified from the experiment would jointly provide the most effective set of "
    "evidence relevant to the hypothesis. Output your reasoning first, and based on your reasoning, make your "
    "final selections of text elements. You should only keep the most effective details. Make sure you do not "
    "find more than {text_ele_limit} text elements, if you do, you have to choose the most effective "
    "{text_ele_limit} elements from it that jointly would provide the best evidence relevant to the hypothesis."
    "\n\nFinally, output the list of indices of these text elements in a python list [index1, index2, ...] after "
    "the keyword \"DECISION:\"\n"
)
AGGREGATION_PROMPT = (
    "Given a hypothesis, and an indexed list of text elements (including sentences and (sub)section titles) "
    "retrieved by you from a biomedical paper, find NO MORE than {text_ele_limit} text elements that would "
    "jointly provide details of an experiment to support or refute the hypothesis. Hypothesis: {hypothesis} List "
    "of text elements: {cand_pool} Explain how the text elements would collectively describe an experiment to "
    "support or refute the hypothesis. Output your reasoning first, after the keyword \"REASON:\", then make your "
    "final selections of text elements. Make sure you do not find more than {text_ele_limit} text elements, if "
    "you do, you have to choose the most effective {text_ele_limit} elements from it that would most effectively "
    "support or refute the hypothesis. Finally, output the list of indices of these text elements in a python "
    "list [index1, index2, ...] after the key word \"DECISION:\""
)

_COMPLETIONS = """CREATE TABLE IF NOT EXISTS llm_completions (
    model VARCHAR, prompt_hash VARCHAR, text VARCHAR, tokens_in INTEGER, tokens_out INTEGER, cost DOUBLE,
    created_at TIMESTAMP DEFAULT current_timestamp, PRIMARY KEY (model, prompt_hash))"""


# -- scoring ---------------------------------------------------------------------------------------
def p_evidential(j: Judgment) -> float:
    """P(support) + P(refute) from a verdict: the judge's confidence goes to its stance, the rest is shared
    evenly by the other two stances."""
    c = max(0, min(10, j.confidence)) / 10
    if j.stance == "neutral":
        return 1.0 - c
    return c + (1.0 - c) / 2


def evidential_score(j: Judgment, alpha: float = ALPHA) -> float:
    if j.status != "ok":
        return -1.0
    return alpha * p_evidential(j) + (1 - alpha) * j.score / 100


def rerank_score(j: Judgment) -> float:
    return float(j.score) if j.status == "ok" else -1.0


# -- sbs helpers -----------------------------------------------------------------------------------
def fill(template: str, *, limit: int, hypothesis: str, pool: str) -> str:
    return (template.replace("{text_ele_limit}", str(limit)).replace("{hypothesis}", hypothesis)
            .replace("{cand_pool}", pool))


def indexed_pool(sentences: Sequence[Sentence]) -> str:
    return "\n".join(f"[{s.position}] {s.text}" for s in sentences)


def parse_decision(text: str) -> list[int]:
    """The indices in the python list after the last DECISION: (or, failing that, the last list in the text)."""
    at = text.rfind("DECISION:")
    tail = text[at + len("DECISION:"):] if at >= 0 else text
    lists = re.findall(r"\[([^\[\]]*)\]", tail)
    if not lists:
        return []
    chosen = lists[0] if at >= 0 else lists[-1]
    return list(dict.fromkeys(int(x) for x in re.findall(r"-?\d+", chosen)))


def sections(sentences: Sequence[Sentence], max_chars: int = SBS_CHUNK_CHARS) -> list[list[Sentence]]:
    """Consecutive sentences of one section (a heading opens a new one), long sections cut into parts."""
    groups: list[list[Sentence]] = []
    for s in sentences:
        if not groups or s.is_heading or s.section_title != groups[-1][-1].section_title:
            groups.append([s])
        else:
            groups[-1].append(s)
    out: list[list[Sentence]] = []
    for g in groups:
        part: list[Sentence] = []
        size = 0
        for s in g:
            if part and size + len(s.text) > max_chars:
                out.append(part)
                part, size = [], 0
            part.append(s)
            size += len(s.text) + 8
        if part:
            out.append(part)
    return out


class _CachedClient:
    """LLM completions remembered in the library's DuckDB by (model, prompt)."""

    def __init__(self, library: Library, client: LLMClient,
                 sink: Callable[[str, list[list[Any]]], None] | None = None) -> None:
        self.client = client
        self.con = library.store.con
        self.failures: list[str] = []
        self.sink = sink  # a read-only Ray worker hands its new completions to the driver instead
        if sink is None:
            ensure_completions(self.con)

    def ask(self, prompt: str, max_tokens: int = SBS_MAX_TOKENS) -> str:
        h = hashlib.sha256(prompt.encode("utf-8")).hexdigest()
        with self.con.cursor() as cur:
            row = cur.execute("SELECT text FROM llm_completions WHERE model = ? AND prompt_hash = ?",
                              [self.client.model, h]).fetchone()
        if row:
            return str(row[0])
        from evtui.judge.llm import CallError

        try:
            c = self.client.complete([{"role": "user", "content": prompt}], max_tokens=max_tokens)
        except CallError as exc:  # one failed section must not end the benchmark: it contributes nothing
            self.failures.append(exc.reason)
            return ""
        row = [self.client.model, h, c.text, c.tokens_in, c.tokens_out, c.cost]
        if self.sink is not None:
            self.sink("llm_completions", [row])
        else:
            insert_completions(self.con, [row])
        return c.text


def ensure_completions(con: Any) -> None:
    with con.cursor() as cur:
        cur.execute(_COMPLETIONS)


def insert_completions(con: Any, rows: Sequence[Sequence[Any]]) -> None:
    if not rows:
        return
    with con.cursor() as cur:
        cur.executemany("INSERT OR REPLACE INTO llm_completions (model, prompt_hash, text, tokens_in, tokens_out, cost)"
                        " VALUES (?, ?, ?, ?, ?, ?)", [list(r) for r in rows])


# -- rankers ---------------------------------------------------------------------------------------
def make_judge_ranker(library: Library, method: str, *, judge: str | None = None, model: str | None = None,
                      api_base: str | None = None, pool: int = RERANK_POOL, alpha: float = ALPHA,
                      search_method: str | None = None, **opts: Any) -> Callable[[Task], list[int]]:
    if (m := lookup(method)) is None or not m.judge:
        raise EvtuiError(f"unknown judge strategy {method!r}; choose one of: {', '.join(judge_methods())}")
    sink = opts.pop("sink", None)  # cache rows go there instead of the library (a read-only Ray worker)
    if method == "llm-sbs":
        if judge not in (None, "llm"):
            raise EvtuiError("llm-sbs prompts an LLM section by section: it needs --judge llm and --model")
        return _sbs_ranker(library, model, api_base, sink=sink, **opts)

    from evtui.judge.service import judge_evidence, make_judge
    from evtui.search import DEFAULT_METHOD, Searcher

    j = make_judge(library, judge or "llm", model, api_base, **opts)
    searcher = Searcher(library)
    key = rerank_score if method == "llm-rerank" else (lambda v: evidential_score(v, alpha))

    def rank(task: Task) -> list[int]:
        res = searcher.search(task.hypothesis, k=max(pool, task.k), paper=task.paper_id, mode="hypothesis",
                              method=search_method or DEFAULT_METHOD, results=getattr(task, "results", False))
        verdicts = judge_evidence(library, res.query, res.evidence, judge=j, sink=sink)
        if method == "llm-rerank":
            return [res.evidence[i].sentence.position for i in _select(res, verdicts, task.k)]
        order = sorted(range(len(res.evidence)), key=lambda i: (-key(verdicts[i]), i))
        return [res.evidence[i].sentence.position for i in order][: task.k]

    return rank


def _select(res: Any, verdicts: Sequence[Judgment], k: int) -> list[int]:
    """The judge's order, then the same coverage-aware selection as `best` (settings from the shipped model):
    K sentences that together cover the query's aspects rather than K restatements of one finding."""
    import numpy as np

    from evtui.rank.model import default_model
    from evtui.rank.select import select

    n = len(res.evidence)
    # judge score first; the retrieval order breaks ties (and orders failed verdicts, which score 0)
    rel = np.array([rerank_score(v) / 100.0 + 0.01 * (n - i) / max(1, n) for i, v in enumerate(verdicts)])
    params = default_model().selection.get("evidence", {})
    weights = {a.id: (0.5 if a.role == "relation" else 1.0) for a in res.query.aspects}
    covered = [set(v.aspects) | {h.aspect for h in e.highlights} for v, e in zip(verdicts, res.evidence, strict=True)]
    return select(rel, k, covered=covered, aspect_weights=weights, texts=[e.sentence.text for e in res.evidence],
                  aspect_weight=float(params.get("aspect_weight", 0.0)), redundancy=float(params.get("redundancy", 0.0)))


def _sbs_ranker(library: Library, model: str | None, api_base: str | None,
                sink: Callable[[str, list[list[Any]]], None] | None = None, **opts: Any) -> Callable[[Task], list[int]]:
    from evtui.judge.llm import LLMClient

    chunk_chars = int(opts.pop("chunk_chars", SBS_CHUNK_CHARS))
    client_opts = {k: v for k, v in opts.items() if k in ("api_key", "timeout", "max_retries", "backoff")}
    llm = _CachedClient(library, LLMClient(model or "", api_base, **client_opts), sink)

    def regenerate(task: Task, picked: list[int], by_pos: dict[int, Sentence]) -> list[int]:
        """Too many came back: the aggregation prompt chooses at most K of them; its answer is cut to K."""
        pool = [by_pos[i] for i in picked]
        again = parse_decision(llm.ask(fill(AGGREGATION_PROMPT, limit=task.k, hypothesis=task.hypothesis,
                                            pool=indexed_pool(pool))))
        again = [i for i in again if i in set(picked)]
        return (again or picked)[: task.k]

    def rank(task: Task) -> list[int]:
        sents = library.store.sentences(task.paper_id)
        by_pos = {s.position: s for s in sents}
        picked: list[int] = []
        for part in sections(sents, chunk_chars):
            allowed = {s.position for s in part}
            reply = llm.ask(fill(SECTION_PROMPT, limit=task.k, hypothesis=task.hypothesis, pool=indexed_pool(part)))
            got = [i for i in parse_decision(reply) if i in allowed]
            if len(got) > task.k:
                got = regenerate(task, got, by_pos)
            picked.extend(i for i in got if i not in picked)
        if len(picked) > task.k:
            picked = regenerate(task, picked, by_pos)
        return picked[: task.k]

    return rank
