"""The offline judge: the ranking features mapped to the 0–100 rubric through a calibrated model.

A LightGBM classifier ("is this sentence evidence for the query?") trained on the public labelled data, with an
isotonic calibration fitted on cross-validated predictions (scripts/train_ranker.py), gives P(evidence); rubric
levels are fixed probability bands. The stance comes from the trained verifier (evtui/verify): a side only when its
calibrated probability clears the threshold chosen for precision, else neutral. A non-significant result is never
above "substantial", and "direct" needs a side taken. It is always reported as judge "local", model
"evtui-local-…+evtui-verifier-…": trained models, never passed off as an LLM.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from evtui.honest import core_of, core_sides, in_part, names_somewhere
from evtui.ingest.sections import back_matter, metadata_line
from evtui.judge.base import LEVELS, Judgment
from evtui.library import Library
from evtui.models import Evidence, ParsedQuery
from evtui.query import verifier_claim
from evtui.query.parse import NO_CLAIM, hedged, no_claim
from evtui.rank.features import FEATURES
from evtui.rank.pipeline import BestRanker
from evtui.request import Filters
from evtui.verify.cues import asks, background_label, explain, non_significant, null_claim, plans, second_hand
from evtui.verify.model import StanceProbs, Verifier, default_verifier

PROMPT_VERSION = "local-13"  # no prompt: the version of the feature/level mapping and rationale (2: stance from the
# verifier; 3: the rationale says when a finding may be another study's; 4: p-values printed with a raised decimal
# dot, "p=0·12", are read as non-significant; 5: a cue that points the other way is not given as the reason, and
# concepts mentioned in part are named; 6: a non-significant result supports no claim of an effect, a significant
# result beside a non-significant one is not capped, and a triplet is read as one claim whichever way it is written;
# 7: a query that asserts nothing (an open question, a PICO frame, a topic) takes no side, nor does a sentence that
# asks a question; 8: funding, acknowledgement, conflict-of-interest and trial-registration statements are no
# evidence at all, a structured abstract's aims, design, participants or outcome measures take no side, and its
# background is at most "peripheral"; 9: the rationale's wording only, so that cached rationales are redone: an
# agent noun ("ACE inhibitors") is no direction cue, and a citation is shown once and named ("Smith et al."); 10:
# "primary" and "direct" need the query's core concepts named (subject and outcome), a sentence without its subject
# is at most "peripheral", a finding stated in the negative on both is a result (at least "substantial"), and a
# keywords line is no evidence at all; 11: a possessive names its word, "Aspirin's use" is named by "aspirin"; 12: a
# claim's frame ("Researchers … estimated that", "In November,") is not its subject, which runs on through "of"; 13:
# a verb or adverb the relation lists do not know is no part of a concept ("People naturally", "novel coronavirus
# fails"), "There is no association between X and Y" reads X as the subject, and a claim asked or hedged ("Does
# X reduce Y?", "X may reduce Y") is held to the same core as the claim)
NONSIG_MAX_LEVEL = 3  # a non-significant result is at most "substantial" evidence, never "primary"
QUESTION_MAX_LEVEL = 2  # a question the paper asks is on topic, and no evidence: at most "peripheral"
# An abstract's BACKGROUND / CONTEXT sentence recounts what was known: 10 of SciFact's 633 such sentences are gold
# rationales (1.6%, the rate of level 1) and none of EvidenceBench's 5; "Low vitamin D is associated with … risk of
# fractures" from one was "direct" (100) for "Vitamin D may reduce fracture risk". Its side stays.
BACKGROUND_MAX_LEVEL = 2
# The rubric's own definitions: "primary" (4) is evidence on the query's core relation, which a sentence that does
# not name both its subject and its outcome cannot give ("neither vitamin E nor C supplementation reduced the risk of
# prostate cancer" was 80 for "Vitamin D supplementation reduces fracture risk"): at most "substantial", evidence on
# one entity. Without the subject it matches only the relation or the outcome's words, and with the subject alone
# ("32 women (26%) were on VD supplementation") it says nothing of the relation: at most "peripheral".
NO_OUTCOME_MAX_LEVEL = 3
NO_SUBJECT_MAX_LEVEL = 2
# A finding on both, stated in the negative ("Metformin did not reduce the recurrence of colorectal adenomas"), is a
# result the query's relation is tested by: never below "substantial" for want of effect words.
NEGATED_MIN_LEVEL = 3
# A claim's or a triplet's subject and outcome are its concepts on either side of the relation; a hypothesis
# (EvidenceBench's, several clauses long) has no such two: with these rules its judged top 10's ROC-AUC fell from
# 0.743 to 0.627 (benchmarks/bench_judge_levels.py), its gold sentences naming other parts of it.
CORE_MODES = frozenset({"claim", "triplet"})


def core_ruled(query: ParsedQuery) -> bool:
    """The core rules hold for claims and triplets, and for a claim asked or hedged ("Does vitamin D supplementation
    reduce fracture risk?", "… may reduce …": "32 women (26%) were on VD supplementation" was 60 for the question, 40
    for the claim); not for a hypothesis stated without a hedge, as EvidenceBench's are (read that way by its bench)."""
    return query.mode in CORE_MODES or (query.mode == "hypothesis" and hedged(query.text))


def sentence_stance(claim: str, text: str, section_kind: str, sp: StanceProbs,
                    side: str | None = None) -> tuple[str, str]:
    """The side one sentence takes on a claim, and the reason when a rule overrode the verifier ("" otherwise): the
    verifier's thresholded stance (or `side`, the caller's), except that a question states no finding, a study's plan
    is no finding, and a non-significant result does not show an effect (it supports only a claim of no effect). The
    judge applies this to every sentence; `evtui bench stance` measures exactly this decision on sentences read
    without their context."""
    side = sp.stance if side is None else side
    if asks(text):
        return "neutral", "a question the paper asks, not a finding: no side taken"
    if planned := plans(text):  # the hearsay cue names the label and says why, outside a results section
        return "neutral", ("no side taken" if second_hand(text, section_kind)
                           else f"what the study set out to do ({planned}), not a finding: no side taken")
    if side == "supports" and non_significant(text) and not null_claim(claim):
        return "neutral", (f"the verifier leans to supporting (P {sp.p_support:.2f}), but a non-significant result "
                           "does not show the effect: no side taken")
    return side, ""


class LocalJudge:
    name = "local"
    prompt_version = PROMPT_VERSION

    def __init__(self, library: Library, ranker: BestRanker | None = None, verifier: Verifier | None = None) -> None:
        """`ranker`: a search's `best` ranker, so the judge shares its model and the pools it built (it never
        embeds itself: the judge must not stall on embedding)."""
        self.library = library
        self.ranker = ranker.sibling(embed=False) if ranker is not None else BestRanker(library, embed=False)
        self.verifier = verifier or default_verifier()
        self.model = f"evtui-local-{self.ranker.model.version}+{self.verifier.version}"

    def judge(self, query: ParsedQuery, evidence: list[Evidence]) -> list[Judgment]:
        """Each sentence is scored inside its own paper, as the model was trained (features are paper-relative)."""
        by_paper: dict[str, list[int]] = defaultdict(list)
        for i, e in enumerate(evidence):
            by_paper[e.sentence.paper_id].append(i)
        out: list[Judgment | None] = [None] * len(evidence)
        labels = {a.id: a.label for a in query.aspects}
        prevs = self.library.store.previous_texts([e.sentence.id for e in evidence]) if evidence else []
        stances = self._stances(query, evidence, prevs)
        subject = set(core_sides(query.aspects, query.text)[0]) if core_ruled(query) else set()
        for paper, idxs in by_paper.items():
            pool = self.ranker.pool_for(query, Filters(paper=paper))
            row = {c.sentence.id: n for n, c in enumerate(pool.candidates)}
            probs = self.ranker.model.probability(pool.x) if len(pool.x) else np.zeros(0)
            # whether the paper names the claim's subject elsewhere: only what the rationale says (see _verdict)
            elsewhere = bool(subject) and names_somewhere(
                ((c.sentence.text, {sp.aspect for sp in c.spans}) for c in pool.candidates), query.aspects, subject)
            for i in idxs:
                e = evidence[i]
                n = row.get(e.sentence.id)
                if n is None:  # a heading or a sentence no longer in the library
                    out[i] = self._failed(e, "sentence is not a searchable sentence of its paper")
                    continue
                out[i] = self._verdict(query, e, float(probs[n]), pool.x[n], labels, stances[i], prevs[i],
                                       elsewhere)
        return [j for j in out if j is not None]

    def _stances(self, query: ParsedQuery, evidence: list[Evidence], prevs: list[str]) -> list[StanceProbs]:
        """The verifier over every sentence (one pair per call), each with its previous sentence as context."""
        if no_claim(query):  # nothing asserted, nothing to read a side against (and no model call to wait for)
            return [StanceProbs(0.0, 0.0, 1.0, "neutral") for _ in evidence]
        return self.verifier.verify(verifier_claim(query), [e.sentence.text for e in evidence], prevs)

    def _verdict(self, query: ParsedQuery, e: Evidence, p: float, x: np.ndarray,
                 labels: dict[str, str], sp: StanceProbs, previous: str = "",
                 subject_elsewhere: bool = False) -> Judgment:
        """`subject_elsewhere`: the sentence's paper names the claim's subject in another sentence."""
        bands = self.ranker.model.levels or [0.02, 0.10, 0.25, 0.50, 0.75]
        level = int(np.searchsorted(bands, p, side="right"))
        covered = sorted({h.aspect for h in e.highlights})
        core = core_of(e.sentence.text, query.aspects, set(covered), previous, query.text)
        if core_ruled(query):
            if core.both and core.negated and level > 0:
                level = max(level, NEGATED_MIN_LEVEL)
            if not core.subject or not (core.outcome or core.relation):  # the subject alone says nothing of it
                level = min(level, NO_SUBJECT_MAX_LEVEL)
            elif not core.outcome:
                level = min(level, NO_OUTCOME_MAX_LEVEL)
        if kind := (back_matter(e.sentence.text, e.sentence.section_title) or metadata_line(e.sentence.text)):
            return Judgment(
                sentence_id=e.sentence.id, score=0, level=0, confidence=10, stance="neutral", aspects=covered,
                rationale=f"{LEVELS[0].capitalize()}: {kind}, not a finding: never evidence; P(evidence) {p:.2f}.",
                judge=self.name, model=self.model, prompt_version=self.prompt_version)
        claim = verifier_claim(query)
        # A non-significant result shows no effect, a question or a study's plan no finding: sentence_stance.
        # a sentence with no relevance at all takes no side
        side, overruled = sentence_stance(claim, e.sentence.text, e.sentence.section_kind, sp,
                                          sp.stance if level > 0 else "neutral")
        nonsig = non_significant(e.sentence.text)
        if nonsig:
            level = min(level, NONSIG_MAX_LEVEL)
        if asks(e.sentence.text):  # "Does aspirin increase bleeding?" in an abstract states no finding
            level = min(level, QUESTION_MAX_LEVEL)
        if background_label(e.sentence.text, e.sentence.section_kind):
            level = min(level, BACKGROUND_MAX_LEVEL)
        # A study's plan ("MAIN OUTCOME MEASURES Remission of type 2 diabetes …") keeps its level: it may well be
        # what a hypothesis asks about (the population, the design: 2 of EvidenceBench's 11 are gold).
        if level == 5 and side == "neutral":  # "direct": a result that tests the query takes a side
            level = 4
        hearsay = second_hand(e.sentence.text, e.sentence.section_kind)
        # Below its threshold a side is only a lean: shown dim ("leans ▼"), never as a verdict.
        lean = sp.lean[0] if side == "neutral" and sp.lean and level > 0 and not overruled else ""
        if reason := no_claim(query):
            why = f"{NO_CLAIM} in {reason}: no side taken"
            lean = ""
        elif overruled:
            why = overruled
        else:
            why = explain(claim, e.sentence.text, side, sp.confidence, sp.lean if side == sp.stance else None)
        f = dict(zip(FEATURES, x, strict=True))
        cues = []
        partly = in_part(e.sentence.text, query.aspects, set(covered))  # as the result filter counts them
        if covered:
            cues.append("covers " + ", ".join(labels.get(a, a) for a in covered))
        if partly:
            cues.append("mentions part of " + ", ".join(labels.get(a, a) for a in partly))
        if not covered and not partly:
            cues.append("matches none of the query's aspects")
        subject, outcome = core_sides(query.aspects, query.text)
        ruled = core_ruled(query)
        if ruled and not core.subject:
            cues.append(f"does not name {_either(subject, labels)}" + (
                # a paraphrase ("the virus" for "SARS-CoV-2") is not told from another subject by words: said so
                " itself, which its paper does (perhaps by another name here): read as no evidence on the query's "
                "relation" if subject_elsewhere else ": no evidence on the query's relation"))
        elif ruled and not core.outcome:
            cues.append(f"does not name {_either(outcome, labels)}: evidence on a part of the query at most"
                        if core.relation else f"names {_either(subject, labels)} alone: no evidence on the relation")
        elif ruled and core.negated and level >= NEGATED_MIN_LEVEL:
            cues.append("states the relation in the negative")
        if f.get("sec_results") == 1.0:
            cues.append("in the results")
        elif f.get("sec_abstract") == 1.0:
            cues.append("in the abstract")
        if nonsig:
            cues.append("reports a non-significant result")
        elif f.get("has_pvalue") == 1.0 or f.get("has_stat") == 1.0:
            cues.append("reports statistics")
        if hearsay:
            cues.append(hearsay)
        cues.append(why)
        rationale = f"{LEVELS[level].capitalize()}: " + "; ".join(cues) + f"; P(evidence) {p:.2f}."
        # Confidence in the verdict as a whole: the relevance model's certainty, and the stance's when it took one.
        conf = abs(2 * p - 1) if side == "neutral" else min(abs(2 * p - 1) + 0.5, sp.confidence)
        return Judgment(
            sentence_id=e.sentence.id, score=20 * level, level=level, confidence=int(round(10 * conf)),
            stance=side, aspects=covered, rationale=rationale, judge=self.name, model=self.model,
            prompt_version=self.prompt_version, lean=lean,
        )

    def _failed(self, e: Evidence, reason: str) -> Judgment:
        return Judgment(sentence_id=e.sentence.id, score=0, level=0, confidence=0, stance="neutral", aspects=[],
                        rationale="", judge=self.name, model=self.model, prompt_version=self.prompt_version,
                        status="failed", error=reason)


def _either(ids: list[str], labels: dict[str, str]) -> str:
    names = [f"“{labels.get(a, a)}”" for a in ids]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
