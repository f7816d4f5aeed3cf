"""A question asserts nothing: `judge`, `verify`, `search --method evidential` and the app's claim verdicts take no
side on it and say why, through the real library, verifier and CLI. A question a paper asks is no finding."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from evtui.cli import main
from evtui.config import load_config
from evtui.judge.claims import verify_claim
from evtui.judge.local import LocalJudge
from evtui.library import Library
from evtui.search import Searcher

FINDING = "Metformin lowered HbA1c by 0.8 percentage points compared with placebo (p < 0.001)."
ASKED = "Does aspirin increase gastrointestinal bleeding or hemorrhagic strokes?"
BLEED = "Aspirin use increases the risk for serious bleeding events (p < 0.01)."
QUESTION = "What is the effect of metformin on HbA1c?"


@pytest.fixture
def lib(papers_dir: Path) -> Iterator[Library]:
    (papers_dir / "metformin.md").write_text(
        "# Metformin in type 2 diabetes\n\n## Results\n\n" + FINDING + " "
        "Metformin was well tolerated in adults with type 2 diabetes.\n", encoding="utf-8")
    (papers_dir / "bleeding.md").write_text(
        "# Aspirin and bleeding\n\n## Abstract\n\n" + ASKED + " " + BLEED + "\n", encoding="utf-8")
    with Library(load_config()) as library:
        library.ingest([papers_dir])
        yield library


def _judged(lib: Library, query: str, text: str):  # noqa: ANN202 - Judgment
    s = Searcher(lib)
    parsed = s.parse(query)
    e = next(e for e in s.search(parsed, k=20, method="bm25").evidence if e.sentence.text == text)
    return LocalJudge(lib).judge(parsed, [e])[0]


def test_the_claim_gets_a_side_and_the_open_question_none(lib: Library) -> None:
    read = _judged(lib, "Metformin lowers HbA1c", FINDING)  # the verifier reads the finding: a side, or a lean
    assert "supports" in (read.stance, read.lean) and "no claim to verify" not in read.rationale
    j = _judged(lib, QUESTION, FINDING)
    assert j.stance == "neutral" and "no claim to verify" in j.rationale and "open question" in j.rationale
    assert j.level >= 2  # still shown as relevant: the finding answers the question


def test_verify_lists_the_papers_of_a_question_with_no_side(lib: Library) -> None:
    claim = verify_claim(lib, "Metformin lowers HbA1c", keep_probs=True)
    assert claim.summary["refutes"] == 0 and not claim.unasserted
    assert any(r.p_support > r.p_refute and r.text == FINDING for p in claim.papers for r in p.scored)
    v = verify_claim(lib, QUESTION)
    assert v.papers and all(p.label == "NEI" and not p.rationales for p in v.papers)
    assert v.summary_line().startswith("no claim to verify")  # what the CLI and the app's `c` print first


def test_cli_verify_json_carries_the_note(lib: Library, capsys: pytest.CaptureFixture[str]) -> None:
    lib.close()
    assert main(["verify", QUESTION, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verdict"]["supports"] == 0 and data["verdict"]["refutes"] == 0
    assert any(n.startswith("no claim to verify") for n in data["notes"])
    assert {"query", "verdict", "papers"} <= set(data)  # the documented keys stay


def test_cli_judge_takes_no_side_on_a_question(lib: Library, capsys: pytest.CaptureFixture[str]) -> None:
    lib.close()
    assert main(["judge", QUESTION, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    results = doc["results"]
    assert results and all(r["stance"] == "neutral" for r in results)
    assert any("no claim to verify" in r["rationale"] for r in results)
    assert any(n.startswith("no claim to verify") for n in doc["notes"])  # said once, as `verify --json` does
    assert main(["judge", "Metformin lowers HbA1c", "--json"]) == 0
    assert "notes" not in json.loads(capsys.readouterr().out)  # a claim: the documented shape, unchanged


def test_evidential_keeps_bests_order_for_a_question(lib: Library) -> None:
    s = Searcher(lib)
    best = s.search(QUESTION, k=5, method="best")
    ev = s.search(QUESTION, k=5, method="evidential")
    assert [e.sentence.id for e in ev.evidence] == [e.sentence.id for e in best.evidence]
    assert any("no claim" in n for n in ev.notes)


def test_a_question_in_a_paper_takes_no_side(lib: Library) -> None:
    j = _judged(lib, "Aspirin does not increase bleeding", ASKED)
    assert j.stance == "neutral" and j.level <= 2 and "a question the paper asks" in j.rationale
    v = verify_claim(lib, "Aspirin does not increase bleeding")
    assert all(r.text != ASKED for p in v.papers for r in p.rationales)
    flipped = _judged(lib, "Aspirin does not increase bleeding", BLEED)  # the finding flips: a side or a lean
    assert "refutes" in (flipped.stance, flipped.lean)
