"""The offline judge: rubric levels from the calibrated model, stance cues, always labelled as local."""

from __future__ import annotations

import pytest

from evtui.judge.base import LEVELS
from evtui.judge.local import LocalJudge, stance
from evtui.query import parse_query
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


def test_stance_needs_relevance_and_an_explicit_cue() -> None:
    q = parse_query("(aspirin, reduce, colorectal cancer)")
    assert stance(q, "Aspirin reduced colorectal cancer incidence.", 4)[0] == "supports"
    assert stance(q, "Aspirin did not reduce colorectal cancer incidence.", 4)[0] == "refutes"
    assert stance(q, "Aspirin increased colorectal cancer incidence.", 4)[0] == "refutes"
    assert stance(q, "Aspirin was given to colorectal cancer patients.", 4)[0] == "neutral"
    assert stance(q, "Aspirin reduced colorectal cancer incidence.", 2)[0] == "neutral"  # not relevant enough
