"""Claim-level verdicts: which papers of the library support a claim, which refute it, which only mention it.

The claim is searched library-wide with `best`; the papers of the top hits are verified one by one: every sentence
of a short paper (an abstract; back matter such as a funding line left out), the paper's best-ranked sentences for a
long one (outside its introduction, which recounts other studies). A paper SUPPORTs (CONTRADICTs) the
claim when one of its sentences clears the verifier's precision threshold for that side; otherwise it is NEI (it
mentions the topic without evidence either way). Rationales are its sentences that took the paper's side, most
probable first (SciFact's scorer reads the first three), those that cite other work after its own findings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from evtui.ingest.sections import back_matter
from evtui.verify.cues import BACKGROUND_KINDS, asks, non_significant, null_claim, plans, second_hand
from evtui.verify.model import Verifier, default_verifier

if TYPE_CHECKING:
    from evtui.library import Library
    from evtui.search import Searcher

LABEL_OF = {"supports": "SUPPORT", "refutes": "CONTRADICT"}
SEARCH_K = 60  # sentences searched library-wide to find the papers
SHORT_PAPER = 40  # a paper with at most this many sentences is verified whole (abstracts are ~10)
PER_PAPER = 12  # sentences verified in a longer paper: its best-ranked ones for the claim
MAX_RATIONALES = 3


@dataclass
class Rationale:
    sentence_id: str
    position: int
    text: str
    stance: str
    p_support: float
    p_refute: float


@dataclass
class PaperVerdict:
    paper_id: str
    title: str
    label: str  # SUPPORT | CONTRADICT | NEI
    confidence: float
    rationales: list[Rationale] = field(default_factory=list)
    # Every verified sentence with its probabilities (for benchmarks that re-label at other thresholds).
    scored: list[Rationale] = field(default_factory=list, repr=False)

    def to_json(self) -> dict[str, object]:
        d = asdict(self)
        d.pop("scored")
        d["confidence"] = round(self.confidence, 3)
        for r in d["rationales"]:
            r["p_support"], r["p_refute"] = round(r["p_support"], 3), round(r["p_refute"], 3)
        return d


@dataclass
class ClaimVerdict:
    query: str
    papers: list[PaperVerdict]
    model: str = ""
    notes: list[str] = field(default_factory=list)
    # Why the query asserts nothing to verify (an open question, a PICO frame): its papers are listed, none sided.
    unasserted: str = ""

    @property
    def summary(self) -> dict[str, int]:
        labels = [p.label for p in self.papers]
        return {"supports": labels.count("SUPPORT"), "refutes": labels.count("CONTRADICT"),
                "no_evidence": labels.count("NEI")}

    def summary_line(self) -> str:
        s = self.summary
        if self.unasserted:  # "0 support · 0 refute" would read as a verdict on a question
            n = len(self.papers)
            return (f"no claim to verify in {self.unasserted} · {n} paper{'s' * (n != 1)} on its topic, none taken "
                    "as support or refutation")
        return (f"{s['supports']} paper{'s' * (s['supports'] != 1)} support{'s' * (s['supports'] == 1)} · "
                f"{s['refutes']} refute"
                f"{'s' * (s['refutes'] == 1)} · {s['no_evidence']} mention it without evidence")

    def to_json(self) -> dict[str, object]:
        # "notes" only when the query asserts nothing, so a claim's document keeps its three keys
        # (tests/functional/test_verify.py pins them) while a question's says why no paper took a side.
        return {"query": self.query, "verdict": self.summary, "papers": [p.to_json() for p in self.papers],
                **({"notes": list(self.notes)} if self.unasserted else {})}


def paper_label(probs: np.ndarray, th_support: float, th_refute: float) -> tuple[str, float]:
    """SUPPORT / CONTRADICT when some sentence clears that side's threshold (the more probable side wins)."""
    if not len(probs):
        return "NEI", 0.0
    s, r = float(probs[:, 0].max()), float(probs[:, 1].max())
    if r >= th_refute and r > s:
        return "CONTRADICT", r
    if s >= th_support:
        return "SUPPORT", s
    return "NEI", float(1.0 - max(s, r))


def _rationales(label: str, sents: list[Rationale], th_support: float, th_refute: float,
                second_hand: frozenset[int] = frozenset()) -> list[Rationale]:
    """The paper's sentences on its side that clear that side's threshold, most probable first — after those of
    its own findings when some (`second_hand` positions) cite other work."""
    if label == "NEI":
        return []
    if label == "SUPPORT":
        keep = [r for r in sents if r.p_support >= th_support and r.p_support >= r.p_refute]
        keep.sort(key=lambda r: (r.position in second_hand, -r.p_support))
        stance = "supports"
    else:
        keep = [r for r in sents if r.p_refute >= th_refute and r.p_refute > r.p_support]
        keep.sort(key=lambda r: (r.position in second_hand, -r.p_refute))
        stance = "refutes"
    return [Rationale(r.sentence_id, r.position, r.text, stance, r.p_support, r.p_refute)
            for r in keep[:MAX_RATIONALES]]


def relabel(p: PaperVerdict, th_support: float, th_refute: float) -> PaperVerdict:
    """The same paper's verdict at other thresholds (needs `scored`, kept with `keep_probs=True`)."""
    probs = np.array([[r.p_support, r.p_refute] for r in p.scored]).reshape(-1, 2)
    label, conf = paper_label(probs, th_support, th_refute)
    return PaperVerdict(p.paper_id, p.title, label, conf, _rationales(label, p.scored, th_support, th_refute),
                        p.scored)


def _verifier_text(searcher: Searcher, claim: str) -> tuple[str, str]:
    """What the verifier reads for `claim`, as the local judge and `evidential` read it (so one sentence gets one
    stance in `search`, `judge` and `verify`): a triplet's parts in order, a question as its statement; and why
    the query asserts nothing ("" when it asserts something: `no_claim`)."""
    from evtui.errors import QueryError
    from evtui.query import verifier_claim
    from evtui.query.parse import no_claim

    try:
        parsed = searcher.parse(claim)
    except QueryError:
        return claim, ""
    return verifier_claim(parsed), no_claim(parsed)


# How many best-matching papers a claim is verified against, by default: the CLI and the app ask the same, so one
# claim gets one summary wherever it is asked.
CLAIM_PAPERS = 5


def verify_claim(library: Library, claim: str, *, papers: int = CLAIM_PAPERS, searcher: Searcher | None = None,
                 verifier: Verifier | None = None, paper_ids: Sequence[str] | None = None,
                 keep_probs: bool = False, thresholds: tuple[float, float] | None = None) -> ClaimVerdict:
    """Verdicts for the `papers` best-matching papers (or exactly `paper_ids`), in retrieval order. `thresholds`
    (supports, refutes) for a paper's side default to the verifier's sentence thresholds."""
    from evtui.search import Searcher

    searcher = searcher or Searcher(library)
    verifier = verifier or default_verifier()
    notes: list[str] = []
    hits_by_paper: dict[str, list[int]] = {}
    if paper_ids is None:
        res = searcher.search(claim, k=SEARCH_K, method="best")
        notes.extend(res.notes)
        for e in res.evidence:
            hits_by_paper.setdefault(e.sentence.paper_id, []).append(e.sentence.position)
        chosen = list(hits_by_paper)[:papers]
    else:
        chosen = list(paper_ids)
    said, unasserted = _verifier_text(searcher, claim)  # a triplet as the claim the local judge reads too
    out: list[PaperVerdict] = []
    for pid in chosen:
        sents = [s for s in library.store.sentences(pid) if not s.is_heading]
        if not sents:
            continue
        by_pos = {s.position: s for s in sents}
        # A funding line or trial registration is no finding (the verifier read "FUNDING European Union; Cancer
        # Research UK; Bayer …" as supporting an aspirin claim at P 0.70, first of the paper's rationales).
        body = [s for s in sents if s.section_kind != "title" and not back_matter(s.text, s.section_title)]
        if len(body) > SHORT_PAPER:
            # A full-text paper's verdict rests on its own findings: its introduction recounts other studies
            # ("curcumin failed to reduce amyloid in the clinical trial [18]" in a paper whose own mice improved), so
            # it never decides the label. A search filter takes one section kind, so over-fetch and drop them.
            within = searcher.search(claim, k=PER_PAPER + 8, paper=pid, method="best")
            own = [e.sentence.position for e in within.evidence if e.sentence.section_kind not in BACKGROUND_KINDS]
            keep = set(own[:PER_PAPER]) | set(hits_by_paper.get(pid, []))
            body = [s for s in body if s.position in keep and s.section_kind not in BACKGROUND_KINDS]
        title = (p.title if (p := library.store.paper(pid)) else "")
        if unasserted:  # a question: the paper is on its topic, and no sentence can take a side on it
            out.append(PaperVerdict(pid, title, "NEI", 0.0))
            continue
        prevs = [by_pos[s.position - 1].text if s.position - 1 in by_pos else "" for s in body]
        probs = verifier.probabilities(said, [s.text for s in body], prevs)
        if not null_claim(said):
            # As the local judge has it: a non-significant result does not show an effect, so it supports no claim
            # of one (its P(support) is capped at its P(refute): on neither side, never a rationale).
            unshown = [i for i, s in enumerate(body) if non_significant(s.text) and probs[i, 0] > probs[i, 1]]
            probs[unshown, 0] = probs[unshown, 1]
        # A question the paper asks ("Does aspirin increase bleeding?"), or its aims, design or outcome measures
        # ("MAIN OUTCOME MEASURES Remission of …"), states no finding: on neither side.
        asked = [i for i, s in enumerate(body) if asks(s.text) or plans(s.text)]
        probs[asked, :2] = 0.0
        # a side the verifier never gives (no threshold made it right often enough) labels no paper either
        th_s, th_r = thresholds or tuple(verifier.thresholds[k] if verifier.takes(k) else 2.0
                                         for k in ("supports", "refutes"))
        label, conf = paper_label(probs, th_s, th_r)
        scored = [Rationale(s.id, s.position, s.text, verifier.decide(pr), float(pr[0]), float(pr[1]))
                  for s, pr in zip(body, probs, strict=True)]
        cited = frozenset(x.position for x in body if second_hand(x.text, x.section_kind))
        out.append(PaperVerdict(pid, title, label, conf, _rationales(label, scored, th_s, th_r, cited),
                                scored if keep_probs else []))
    return ClaimVerdict(query=claim, papers=out, model=verifier.version, notes=notes, unasserted=unasserted)
