"""A structured abstract's aims, design, participants and outcome measures say what a study set out to do, not what
it found. "MAIN OUTCOME MEASURES Remission of type 2 diabetes (… HbA1c value < 6.2% …)" was shown as refuting
"Metformin lowers HbA1c in type 2 diabetes" (P 0.71) by `evtui verify` on the demo library. Real abstract: SciFact
corpus doc 7098463 (ODC-By 1.0), through the real CLI, the shipped verifier and the local judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evtui.cli import main
from evtui.verify.cues import plans

ABSTRACT = Path(__file__).parents[1] / "fixtures" / "verify" / "scifact_structured_abstract.jsonl"
BACKGROUND = ABSTRACT.with_name("scifact_background_abstract.jsonl")
CLAIM = "Metformin lowers HbA1c in type 2 diabetes"


def test_labels_of_plans_and_not_of_findings() -> None:
    assert plans("MAIN OUTCOME MEASURES Remission of type 2 diabetes.") == "MAIN OUTCOME MEASURES"
    assert plans("Objective: To determine whether aspirin lowers risk.") == "Objective"
    assert plans("DESIGN, SETTING, AND PARTICIPANTS Unblinded randomized controlled trial.") == "DESIGN"
    assert not plans("METHODS AND RESULTS Aspirin lowered risk.")
    assert not plans("MAIN OUTCOME MEASURES: 30-day complications RESULTS: We studied 133,589 patients.")
    assert not plans("Patients treated with aspirin had fewer events.")
    assert not plans("Interventions that reduce salt intake lowered blood pressure.")


def test_outcome_measures_take_no_side(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", str(ABSTRACT)]) == 0
    capsys.readouterr()
    assert main(["verify", CLAIM, "--json"]) == 0
    (paper,) = [p for p in json.loads(capsys.readouterr().out)["papers"] if p["paper_id"] == "scifact:7098463"]
    sided = [r for r in paper["rationales"] if r["stance"] != "neutral"]
    assert all(not plans(r["text"]) for r in sided), sided
    assert main(["judge", CLAIM, "--paper", "scifact:7098463", "--k", "20", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    (measures,) = [j for j in rows if j["text"].startswith("MAIN OUTCOME MEASURES")]
    assert measures["stance"] == "neutral" and measures["level"] <= 4, measures  # "direct" needs a side
    assert "not a finding" in measures["rationale"]


def test_an_abstracts_background_is_at_most_peripheral(capsys: pytest.CaptureFixture[str]) -> None:
    """A BACKGROUND / INTRODUCTION sentence of an abstract recounts what was known (1.6% of SciFact's are gold
    rationales): "INTRODUCTION Low vitamin D (VD) is associated with … risk of fractures" was scored "direct" (100)
    for "Vitamin D may reduce fracture risk" on the demo (SciFact doc 9555784, ODC-By 1.0). Its side stays."""
    assert main(["ingest", str(BACKGROUND)]) == 0
    capsys.readouterr()
    assert main(["judge", "Vitamin D may reduce fracture risk", "--paper", "scifact:9555784", "--k", "20",
                 "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    (intro,) = [j for j in rows if j["text"].startswith("INTRODUCTION")]
    assert intro["level"] <= 2 and "may recount earlier work" in intro["rationale"], intro
