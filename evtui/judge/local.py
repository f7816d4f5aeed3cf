"""The offline judge: the ranking features mapped to the 0–100 rubric through a calibrated model.

A LightGBM classifier ("is this sentence evidence for the query?") trained on the public labelled data, with an
isotonic calibration fitted on cross-validated predictions (scripts/train_ranker.py), gives P(evidence); rubric
levels are fixed probability bands. It is always reported as judge "local", model "evtui-local-…": a feature model,
never passed off as an LLM. Stance comes from explicit direction and negation cues and stays neutral without them.
"""

from __future__ import annotations

import re
from collections import defaultdict

import numpy as np
import tantivy

from evtui.judge.base import LEVELS, Judgment
from evtui.library import Library
from evtui.models import Evidence, ParsedQuery
from evtui.query import compile_matcher, relation_family
from evtui.rank.features import FEATURES
from evtui.rank.pipeline import BestRanker
from evtui.search import build_query

PROMPT_VERSION = "local-1"  # no prompt: the version of the feature/level mapping
_UP = {"increase", "cause", "activate"}
_DOWN = {"inhibit", "decrease", "protect"}
_UP_WORDS = re.compile(r"\b(?:increas\w*|higher|elevat\w*|rais\w*|greater|promot\w*|induc\w*|enhanc\w*|"
                       r"upregulat\w*|up-regulat\w*|stimulat\w*|more)\b", re.I)
_DOWN_WORDS = re.compile(r"\b(?:decreas\w*|lower\w*|reduc\w*|declin\w*|inhibit\w*|suppress\w*|attenuat\w*|"
                         r"downregulat\w*|down-regulat\w*|diminish\w*|prevent\w*|protect\w*|less|fewer)\b", re.I)
# Negation of a finding, not any "no"/"without" (which mostly describe methods or groups).
_NEGATED = re.compile(r"\b(?:did not|does not|do not|was not|were not|is not|are not|has not|have not|cannot|"
                      r"failed to|no significant|not significantly|no (?:association|effect|difference|evidence|"
                      r"change|increase|decrease|reduction|benefit|correlation)|not associated|unrelated to|"
                      r"independent of)\b", re.I)


def _direction(parsed: ParsedQuery) -> int:
    """+1 if the query asserts an increase/causation, -1 a decrease/protection, 0 if it names no direction."""
    for a in parsed.aspects:
        if a.role != "relation":
            continue
        for w in a.label.lower().split():
            fam = relation_family(w)
            if fam in _UP:
                return 1
            if fam in _DOWN:
                return -1
    text = parsed.text
    up, down = len(_UP_WORDS.findall(text)), len(_DOWN_WORDS.findall(text))
    return 1 if up > down else -1 if down > up else 0


def stance(parsed: ParsedQuery, text: str, level: int) -> tuple[str, str]:
    """(stance, reason). Only a relevant sentence (level ≥ 3) takes a side, and only on an explicit cue."""
    if level < 3:
        return "neutral", ""
    negated = bool(_NEGATED.search(text))
    q_negated = bool(_NEGATED.search(parsed.text))
    qd = _direction(parsed)
    up, down = len(_UP_WORDS.findall(text)), len(_DOWN_WORDS.findall(text))
    sd = 1 if up > down else -1 if down > up else 0
    if negated != q_negated and (sd == 0 or sd == qd):
        return "refutes", "the sentence negates what the query asserts"
    if qd and sd:
        if (sd == qd) != (negated != q_negated):
            return "supports", "same direction of effect as the query"
        return "refutes", "opposite direction of effect to the query"
    return "neutral", ""


class LocalJudge:
    name = "local"
    prompt_version = PROMPT_VERSION

    def __init__(self, library: Library, ranker: BestRanker | None = None) -> None:
        self.library = library
        self.ranker = ranker or BestRanker(library, embed=False)
        self.model = f"evtui-local-{self.ranker.model.version}"

    def judge(self, query: ParsedQuery, evidence: list[Evidence]) -> list[Judgment]:
        """Each sentence is scored inside its own paper, as the model was trained (features are paper-relative)."""
        index = self.library.index
        text_query, _ = build_query(index, query)
        matcher = compile_matcher(query.aspects)
        by_paper: dict[str, list[int]] = defaultdict(list)
        for i, e in enumerate(evidence):
            by_paper[e.sentence.paper_id].append(i)
        out: list[Judgment | None] = [None] * len(evidence)
        labels = {a.id: a.label for a in query.aspects}
        for paper, idxs in by_paper.items():
            full = tantivy.Query.boolean_query([(tantivy.Occur.Must, text_query),
                                                *index.filter_query(paper=paper)])
            pool = self.ranker.pool(query, full, matcher, paper=paper, section=None, year_from=None, year_to=None)
            row = {c.sentence.id: n for n, c in enumerate(pool.candidates)}
            probs = self.ranker.model.probability(pool.x) if len(pool.x) else np.zeros(0)
            for i in idxs:
                e = evidence[i]
                n = row.get(e.sentence.id)
                if n is None:  # a heading or a sentence no longer in the library
                    out[i] = self._failed(e, "sentence is not a searchable sentence of its paper")
                    continue
                out[i] = self._verdict(query, e, float(probs[n]), pool.x[n], labels)
        return [j for j in out if j is not None]

    def _verdict(self, query: ParsedQuery, e: Evidence, p: float, x: np.ndarray,
                 labels: dict[str, str]) -> Judgment:
        bands = self.ranker.model.levels or [0.02, 0.10, 0.25, 0.50, 0.75]
        level = int(np.searchsorted(bands, p, side="right"))
        covered = sorted({h.aspect for h in e.highlights})
        side, why = stance(query, e.sentence.text, level)
        f = dict(zip(FEATURES, x, strict=True))
        cues = []
        if covered:
            cues.append("covers " + ", ".join(labels.get(a, a) for a in covered))
        else:
            cues.append("matches none of the query's aspects")
        if f.get("sec_results") == 1.0:
            cues.append("in the results")
        elif f.get("sec_abstract") == 1.0:
            cues.append("in the abstract")
        if f.get("has_pvalue") == 1.0 or f.get("has_stat") == 1.0:
            cues.append("reports statistics")
        if why:
            cues.append(why)
        rationale = f"{LEVELS[level].capitalize()}: " + "; ".join(cues) + f" (P(evidence) = {p:.2f})."
        return Judgment(
            sentence_id=e.sentence.id, score=20 * level, level=level, confidence=int(round(10 * abs(2 * p - 1))),
            stance=side, aspects=covered, rationale=rationale, judge=self.name, model=self.model,
            prompt_version=self.prompt_version,
        )

    def _failed(self, e: Evidence, reason: str) -> Judgment:
        return Judgment(sentence_id=e.sentence.id, score=0, level=0, confidence=0, stance="neutral", aspects=[],
                        rationale="", judge=self.name, model=self.model, prompt_version=self.prompt_version,
                        status="failed", error=reason)
