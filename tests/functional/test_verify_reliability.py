"""Beside its verdicts, `evtui verify` and the app's claim screen say what a side is worth, measured on claims the
verifier never saw (the shipped model.json's cross-fitted SciFact and Check-COVID dev figures, not in-sample ones)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evtui.cli import main
from evtui.verify.model import Verifier, default_verifier


def _with(metrics: dict) -> Verifier:
    v = Verifier.__new__(Verifier)  # the manifest alone: no weights needed to word it
    v.manifest = {"metrics": metrics}
    return v


def _set(sup: float, ref: float, side: float) -> dict:
    return {"stance_on_gold": {"supports": {"precision": sup}, "refutes": {"precision": ref}, "side_taken": side}}


def test_held_out_figures_only() -> None:
    v = _with({"scifact_cal_crossfit": _set(0.933, 0.70, 0.226), "checkcovid_dev": _set(0.675, 0.875, 0.29),
               "scifact_cal_insample_thresholds": _set(0.99, 0.99, 0.99)})
    line = v.reliability()
    assert "68–93%" in line and "70–88%" in line and "23–29%" in line and "99" not in line
    assert _with({"checkcovid_dev": _set(0.7, 0.8, 0.3)}).reliability() == ""  # one set is not a range to show


def test_shipped_model_says_it(papers_ingested: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert default_verifier().reliability().startswith("on held-out claims")
    assert main(["verify", "Aspirin reduces the risk of colorectal cancer"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "on held-out claims a 'supports' was right" in out
