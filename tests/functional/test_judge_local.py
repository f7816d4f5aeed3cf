"""The offline judge: rubric levels from the calibrated model, stance from the verifier, always labelled as local."""

from __future__ import annotations

import pytest

from evtui.judge.base import LEVELS
from evtui.judge.local import LocalJudge
from evtui.search import Searcher


@pytest.fixture()
def library(papers_library):
    return papers_library


def test_local_judge_scores_on_the_rubric(library) -> None:
    s = Searcher(library)
    parsed = s.parse("(aspirin, reduce, colorectal cancer)")
    res = s.search(parsed, k=8, method="bm25")
    judge = LocalJudge(library)
    out = judge.judge(parsed, res.evidence)
    assert [j.sentence_id for j in out] == [e.sentence.id for e in res.evidence]
    for j in out:
        assert j.judge == "local" and j.model.startswith("evtui-local-")
        assert j.score == 20 * j.level and 0 <= j.level <= 5 and 0 <= j.confidence <= 10
        assert j.stance in ("supports", "refutes", "neutral") and j.status == "ok"
        assert j.rationale.startswith(LEVELS[j.level].capitalize())
    by_id = {j.sentence_id: j for j in out}
    on_topic = next(e for e in res.evidence if "reduced the incidence of colorectal cancer" in e.sentence.text)
    off_topic = [e for e in res.evidence if "colorectal" not in e.sentence.text.lower()]
    assert by_id[on_topic.sentence.id].level >= 3
    assert set(by_id[on_topic.sentence.id].aspects) >= {"head", "tail"}
    for e in off_topic:
        assert by_id[e.sentence.id].level < by_id[on_topic.sentence.id].level


def test_stance_comes_from_the_verifier_and_needs_some_relevance(library) -> None:
    s = Searcher(library)
    parsed = s.parse("(aspirin, reduce, colorectal cancer)")
    res = s.search(parsed, k=8, method="bm25")
    out = LocalJudge(library).judge(parsed, res.evidence)
    assert len(out) == len(res.evidence)
    for j in out:
        if j.level == 0:
            assert j.stance == "neutral"  # no relevance at all: no side, whatever the verifier reads
        if j.stance != "neutral":
            assert j.stance[:6] in j.rationale and "P " in j.rationale  # "supports"/"supporting", "refutes"/...
