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


def test_a_side_below_its_threshold_is_only_a_lean(library, tmp_path) -> None:
    """The shipped model with its thresholds raised out of reach: what it would have sided with becomes a lean
    (stance neutral, `lean` the side), shown dim and never counted as a verdict."""
    import json
    import shutil

    from rich.console import Console

    from evtui.judge.local import LocalJudge
    from evtui.tui.data import judge_cell
    from evtui.verify.model import MODEL_DIR, Verifier

    strict_dir = tmp_path / "strict"
    shutil.copytree(MODEL_DIR, strict_dir)
    manifest = json.loads((strict_dir / "model.json").read_text())
    manifest["thresholds"] = {"supports": 1.01, "refutes": 1.01}
    (strict_dir / "model.json").write_text(json.dumps(manifest))
    s = Searcher(library)
    parsed = s.parse("(aspirin, reduce, colorectal cancer)")
    res = s.search(parsed, k=8, method="bm25")
    shipped = {j.sentence_id: j for j in LocalJudge(library).judge(parsed, res.evidence)}
    strict = LocalJudge(library, verifier=Verifier(strict_dir)).judge(parsed, res.evidence)
    assert all(j.stance == "neutral" for j in strict)
    leaned = [j for j in strict if j.lean]
    assert leaned, "the shipped model takes a side on the aspirin finding; raised thresholds make it a lean"
    for j in leaned:
        assert j.lean in ("supports", "refutes") and j.level > 0
        assert "too unsure to take a side" in j.rationale
        if shipped[j.sentence_id].stance != "neutral":
            assert shipped[j.sentence_id].stance == j.lean
        cell = Console(width=20, color_system=None)
        with cell.capture() as cap:
            cell.print(judge_cell(j))
        assert cap.get().startswith("△" if j.lean == "supports" else "▽")
