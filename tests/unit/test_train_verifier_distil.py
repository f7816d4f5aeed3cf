"""Distilling a teacher into the verifier (scripts/train_verifier.py): the unlabelled pool comes from training papers
only, the weights' change travels back from a GPU machine in small files and is rebuilt exactly, and the thresholds
take the side a model can read well even when the other side never reaches its precision floor."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import train_verifier as tv  # noqa: E402
from test_train_verifier_examples import shared  # noqa: E402, F401 - the tiny SciFact + Check-COVID layout


def test_pool_holds_training_papers_only_and_no_labelled_pair(shared: Path) -> None:  # noqa: F811
    exs = tv.build_examples(shared, aug=True)
    pool = tv.build_pool(shared, exs)
    assert pool and all(e["split"] == "pool" and e["label"] == "pool" for e in pool)
    held_out = {e["paper"] for e in exs if e["split"] == "cal"}
    assert held_out and not held_out & {e["paper"] for e in pool}  # the calibration fold is never distilled on
    train_claims = {e["claim"] for e in exs if e["split"] == "train"}
    labelled = {(e["claim"], e["sentence"]) for e in exs}
    assert not labelled & {(e["claim"], e["sentence"]) for e in pool}
    for e in pool:
        if e["kind"] == "pool-all":
            assert e["claim"] in train_claims
    flips = [e for e in pool if e["kind"] == "pool-flip"]  # a refuting claim flipped, with its rationale
    assert flips and all(e["claim_id"].endswith("-flip") and e["position"] == 0 for e in flips)
    assert {e["source"] for e in pool} == {"scifact", "checkcovid"}
    assert tv.build_pool(shared, exs) == pool  # deterministic: the teacher's logits are matched to it by row


def test_deltas_round_trip_in_small_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from safetensors.numpy import load_file, save_file

    rng = np.random.default_rng(0)
    base = {"encoder.layer.0.w": rng.normal(size=(64, 64)).astype(np.float32),
            "encoder.layer.1.w": rng.normal(size=(64, 64)).astype(np.float32),
            "embeddings.word": rng.normal(size=(100, 64)).astype(np.float32)}
    folder = tmp_path / "base"
    folder.mkdir()
    save_file(base, str(folder / "model.safetensors"))
    monkeypatch.setattr(tv, "BASE_DIR", folder)
    tuned = {"bert." + k: v.copy() for k, v in base.items()}
    tuned["bert.encoder.layer.1.w"] += 0.01 * rng.normal(size=(64, 64)).astype(np.float32)
    tuned["bert.encoder.layer.0.w"] -= 0.02
    tuned["classifier.weight"] = rng.normal(size=(3, 64)).astype(np.float32)  # new: not in the base
    out = tmp_path / "run"
    out.mkdir()
    tv.write_deltas(tuned, out, limit=20_000)  # one 64x64 float32 matrix is 16 KB: two never share a file
    files = sorted(out.glob("delta-*.safetensors"))
    assert len(files) == 2
    assert all(sum(v.nbytes for v in load_file(str(f)).values()) <= 20_000 for f in files)
    sent = {k for f in files for k in load_file(str(f))}
    assert "bert.embeddings.word" not in sent  # frozen: nothing to send
    tv.write_from_deltas(out)
    rebuilt = load_file(str(out / "model.safetensors"))
    assert set(rebuilt) == set(tuned)
    for k, v in tuned.items():
        np.testing.assert_allclose(rebuilt[k], v, atol=1e-6)


def test_a_side_below_its_floor_is_never_taken_while_the_other_still_is() -> None:
    rng = np.random.default_rng(0)
    n = 200
    y = np.array([0] * 80 + [1] * 40 + [2] * 80)
    p = np.full((n, 3), 0.1)
    p[:80, 0] = rng.uniform(0.6, 0.95, 80)  # supporting rationales read confidently and correctly
    p[80:120, 0] = rng.uniform(0.5, 0.7, 40)  # refuting ones read as supports, weaker
    p[80:100, 1] = 0.9  # half of them confidently refuted ...
    p[100:120, 1] = 0.3
    p[:40, 1] = 0.92  # ... but as many supporting ones "refuted" as confidently: no refutes threshold is safe
    p[:40, 0] = 0.05
    p[120:, 2] = 0.9
    p = p / p.sum(1, keepdims=True)
    th = tv.choose_thresholds(p, y)
    assert th["refutes"] == 0.99  # never taken: its precision floor is out of reach
    assert th["supports"] < 0.99  # the side the model reads well is still taken
    pred = tv.decide(p, th)
    gold = y != 2
    taken = pred[gold] == 0
    assert taken.sum() >= 10 and np.mean(y[gold][taken] == 0) >= 0.9


def test_near_negatives_pair_training_claims_with_other_papers_findings() -> None:
    def gold(claim: str, paper: str, sentence: str, split: str = "train") -> dict:
        return {"claim": claim, "sentence": sentence, "prev": "", "title": "", "label": "supports", "paper": paper,
                "source": "scifact", "split": split, "kind": "gold", "claim_id": claim, "position": 0}

    exs = [gold("Aspirin reduces colorectal cancer", "p1", "Aspirin lowered colorectal cancer incidence."),
           gold("Statins lower cholesterol", "p2", "Statins lowered cholesterol in adults."),
           gold("Aspirin improves cancer survival", "p3", "Aspirin lowered colorectal cancer incidence."),
           gold("Masks reduce transmission", "p4", "Masks lowered transmission.", split="cal")]
    out = tv.add_near_negatives(exs, 1)
    assert out[: len(exs)] == exs
    near = out[len(exs):]
    assert all(e["kind"] == "near" and e["label"] == "neutral" and e["split"] == "train" for e in near)
    assert {(e["claim"], e["sentence"]) for e in near} == {
        ("Aspirin reduces colorectal cancer", "Statins lowered cholesterol in adults."),  # p3's text is its own
        ("Statins lower cholesterol", "Aspirin lowered colorectal cancer incidence."),
        ("Aspirin improves cancer survival", "Statins lowered cholesterol in adults.")}
    assert all(e["sentence"] != "Masks lowered transmission." for e in near)  # the held-out split is never used


def test_nearest_findings_rank_by_shared_words() -> None:
    gold = [{"claim": "c1", "paper": "p1", "sentence": "Aspirin lowered colorectal cancer incidence."},
            {"claim": "c2", "paper": "p2", "sentence": "Statins lowered cholesterol in adults."},
            {"claim": "c3", "paper": "p3", "sentence": "Aspirin use and colorectal cancer survival improved."},
            {"claim": "c4", "paper": "p4", "sentence": "Aspirin use and colorectal cancer survival improved."}]
    got = tv.nearest_findings("Aspirin improves colorectal cancer survival", "p9", gold, k=2)
    assert [g["paper"] for g in got] == ["p3", "p1"]  # the repeated finding once, then the next nearest


def test_low_rank_deltas_keep_what_the_adapter_keeps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from safetensors.numpy import load_file, save_file

    rng = np.random.default_rng(1)
    key = "encoder.layer.2.attention.self.query.weight"
    base = {key: rng.normal(size=(48, 48)).astype(np.float32), "encoder.layer.2.output.LayerNorm.weight":
            np.ones(48, dtype=np.float32)}
    folder = tmp_path / "base"
    folder.mkdir()
    save_file(base, str(folder / "model.safetensors"))
    monkeypatch.setattr(tv, "BASE_DIR", folder)
    low = rng.normal(size=(48, 4)) @ rng.normal(size=(4, 48)) * 0.01  # a rank-4 change
    tuned = {"bert." + key: (base[key] + low).astype(np.float32),
             "bert.encoder.layer.2.output.LayerNorm.weight": np.full(48, 1.1, dtype=np.float32)}
    out = tmp_path / "run"
    out.mkdir()
    tv.write_deltas(tuned, out, rank=8)
    sent = load_file(str(out / "delta-0.safetensors"))
    assert sent[f"bert.{key}.U"].shape == (48, 8) and sent[f"bert.{key}.U"].dtype == np.float16
    assert f"bert.{key}" not in sent  # only the factors travel
    tv.write_from_deltas(out)
    rebuilt = load_file(str(out / "model.safetensors"))
    np.testing.assert_allclose(rebuilt[f"bert.{key}"], tuned[f"bert.{key}"], atol=2e-4)  # float16 factors
    np.testing.assert_allclose(rebuilt["bert.encoder.layer.2.output.LayerNorm.weight"], 1.1, atol=1e-6)


def test_pool_near_adds_the_near_negatives_unlabelled(shared: Path) -> None:  # noqa: F811
    import json

    drugs = ["aspirin", "statins", "metformin", "warfarin", "insulin"]  # each paper its own finding
    with (shared / "scifact" / "corpus.jsonl").open("w") as fh:
        for d in range(1, 41):
            fh.write(json.dumps({"doc_id": d, "title": f"Paper {d}", "abstract": [
                f"{drugs[d % 5].title()} lowered the incidence of colorectal cancer in cohort {d}.",
                "Patients were followed for ten years.", "Adverse events were rare."]}) + "\n")
    exs = tv.build_examples(shared, aug=True)
    plain = tv.build_pool(shared, exs)
    pool = tv.build_pool(shared, exs, near=2)
    assert pool[: len(plain)] == plain  # the pool a teacher labelled before is a prefix: its rows still match
    near = pool[len(plain):]
    mined = {(e["claim"], e["sentence"]) for e in tv.add_near_negatives(exs, 2)[len(exs):]}
    assert near and all(e["kind"] == "pool-near" and e["label"] == "pool" and e["split"] == "pool" for e in near)
    assert {(e["claim"], e["sentence"]) for e in near} <= mined
    held_out = {e["paper"] for e in exs if e["split"] != "train"}
    assert not held_out & {e["paper"] for e in near}
