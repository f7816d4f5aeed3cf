"""The verifier's release gate (benchmarks/bench_verifier.py `gate`): which rule stops which candidate."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_verifier as bv  # noqa: E402 - the harness lives in benchmarks/, which is no package


def report(f1: float = 0.60, refutes_p: float = 0.86, side: float = 0.05, pipeline: float = 0.48) -> dict:
    stance = {"macro_f1": f1, "refutes": {"precision": refutes_p}, "supports": {"precision": 0.9}}
    offtopic = {"model": "m", **{f"{s}_{k}": {"pairs": 200, "given_a_side": side}
                                for s in ("scifact_cal", "checkcovid_dev") for k in ("random", "nearest")}}
    return {"stance": {"scifact_cal": copy.deepcopy(stance), "checkcovid_dev": copy.deepcopy(stance)},
            "offtopic": offtopic,
            "pipeline": {"cv_f1": {"abstract_label_only": pipeline}}}


def failed(result: dict) -> list[str]:
    return [c["check"] for c in result["checks"] if not c["ok"]]


def test_the_same_model_is_not_a_release() -> None:
    res = bv.release_checks(report(), report())
    assert not res["ship"]
    assert failed(res) == ["improves a target's figure"]


def test_a_better_reader_that_gives_sides_to_other_papers_findings_is_stopped() -> None:
    # the distilled candidate (docs/experiments/verifier.md) in miniature: stance and pipeline up, more sides on another paper's findings
    cand = report(f1=0.65, pipeline=0.55)
    cand["offtopic"]["checkcovid_dev_nearest"]["given_a_side"] = 0.176
    res = bv.release_checks(report(side=0.094), cand)
    assert not res["ship"]
    assert failed(res) == ["sides given to other papers' findings, checkcovid_dev_nearest"]


def test_a_candidate_better_somewhere_and_no_worse_elsewhere_ships() -> None:
    cand = report(f1=0.63)
    cand["offtopic"]["scifact_cal_random"]["given_a_side"] = 0.055  # within the tolerance
    cand["pipeline"]["cv_f1"]["abstract_label_only"] = 0.475
    res = bv.release_checks(report(), cand)
    assert res["ship"], failed(res)


def test_refutes_precision_holds_the_issue_floor_or_the_shipped_figure_below_it() -> None:
    cand = report(f1=0.65, refutes_p=0.84)
    assert "refutes precision, scifact_cal" in failed(bv.release_checks(report(refutes_p=0.88), cand))
    # a shipped model already under the floor: the candidate must not fall below it
    weak = report(refutes_p=0.80)
    assert bv.release_checks(weak, report(f1=0.65, refutes_p=0.80))["ship"]
    worse = report(f1=0.65, refutes_p=0.80)
    worse["stance"]["checkcovid_dev"]["refutes"]["precision"] = 0.79
    assert failed(bv.release_checks(weak, worse)) == ["refutes precision, checkcovid_dev"]


def test_a_stance_drop_on_one_dataset_is_not_bought_by_a_gain_on_the_other() -> None:
    cand = report(f1=0.70)
    cand["stance"]["checkcovid_dev"]["macro_f1"] = 0.55
    assert failed(bv.release_checks(report(), cand)) == ["stance macro-F1, checkcovid_dev"]


def test_more_wrong_sides_on_plain_wording_stops_a_candidate() -> None:
    # the near-topic teacher's two-student candidate in miniature: every held-out figure up, plain sentences misread
    shipped, cand = report(side=0.094), report(f1=0.66, side=0.03, pipeline=0.51)
    shipped["probes"], cand["probes"] = {"wrong_sides": 2}, {"wrong_sides": 10}
    res = bv.release_checks(shipped, cand)
    assert failed(res) == ["wrong sides on the direction probes"]
    cand["probes"]["wrong_sides"] = 2
    assert bv.release_checks(shipped, cand)["ship"]


def test_direction_probes_are_counted_against_their_labels() -> None:
    import json

    from evtui.verify.model import StanceProbs

    rows = [json.loads(x) for x in bv.PROBES.open()]
    assert len(rows) == 50 and {r["label"] for r in rows} == {"supports", "refutes"}

    class AlwaysSupports:  # a verifier that reads every sentence as support, confidently
        manifest = {"version": "always-supports"}

        def verify(self, claim: str, sentences: list[str]) -> list[StanceProbs]:
            return [StanceProbs(0.9, 0.05, 0.05, "supports") for _ in sentences]

    out = bv.probes_report(AlwaysSupports())
    refuting = sum(r["label"] == "refutes" for r in rows)
    assert out["sides"] == 50 and out["wrong_sides"] == refuting == len(out["wrong"])
    assert out["leans_right"] == 50 - refuting
