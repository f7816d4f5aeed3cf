"""A verifier of several students (model.json `members`): evtui serves the mean of their logits, and
`train_verifier.py --ensemble` calibrates exactly that mean from the members' own served logits."""

from __future__ import annotations

import gzip
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from evtui.checksum import sha256_file as sha256
from evtui.errors import EvtuiError
from evtui.verify.model import MODEL_DIR, Verifier

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import train_verifier as tv  # noqa: E402

CLAIM = "Vitamin D supplementation reduces fracture risk."
SENTENCES = ["Vitamin D supplementation lowered the risk of hip fracture (RR 0.74).",
             "Vitamin D had no effect on fracture incidence.", "Patients were recruited in 2004."]


def _single() -> dict:
    manifest = json.loads((MODEL_DIR / "model.json").read_text())
    if "adapter" not in manifest:  # the shipped model is itself an ensemble: take its first member alone
        manifest = {**manifest, "adapter": manifest["members"][0]}
        manifest.pop("members")
    return manifest


def _ensemble(tmp_path: Path, scales: list[float]) -> Path:
    """An ensemble of the shipped adapter with its head scaled per member: member logits k * z (the pooler is
    untouched), so the mean is mean(k) * z."""
    from safetensors.numpy import load_file, save_file

    single = _single()
    folder = tmp_path / "ens"
    folder.mkdir(parents=True)
    tensors = load_file(str(MODEL_DIR / single["adapter"]["file"]))
    specs = []
    for i, k in enumerate(scales):
        path = folder / f"adapter-{i}.safetensors"
        save_file({**tensors, "classifier.weight": tensors["classifier.weight"] * k,
                   "classifier.bias": tensors["classifier.bias"] * k}, str(path))
        specs.append({**single["adapter"], "file": path.name, "sha256": sha256(path)})
    manifest = {**single, "members": specs, "version": "ensemble-test"}
    manifest.pop("adapter")
    (folder / "model.json").write_text(json.dumps(manifest))
    return folder


def test_an_ensemble_serves_the_mean_of_its_members_logits(tmp_path: Path) -> None:
    one = Verifier(_ensemble(tmp_path / "a", [1.0]))
    two = Verifier(_ensemble(tmp_path / "b", [0.5, 1.5]))  # mean head = the single head
    three = Verifier(_ensemble(tmp_path / "c", [2.0, 2.0, 2.0]))
    z = np.concatenate([one._logits(*one._encode([CLAIM], [s])) for s in SENTENCES])
    np.testing.assert_allclose(np.concatenate([two._logits(*two._encode([CLAIM], [s])) for s in SENTENCES]), z,
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.concatenate([three._logits(*three._encode([CLAIM], [s])) for s in SENTENCES]),
                               2 * z, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(two.probabilities(CLAIM, SENTENCES), one.probabilities(CLAIM, SENTENCES), atol=1e-5)


def test_a_damaged_member_is_refused_in_one_line(tmp_path: Path) -> None:
    folder = _ensemble(tmp_path, [1.0, 1.0])
    (folder / "adapter-1.safetensors").write_bytes(b"not a model")
    with pytest.raises(EvtuiError) as err:
        Verifier(folder)
    assert "\n" not in str(err.value)
    manifest = json.loads((folder / "model.json").read_text())
    (folder / "model.json").write_text(json.dumps({**manifest, "members": []}))
    with pytest.raises(EvtuiError, match="no members"):
        Verifier(folder)


def _member(folder: Path, seed: int, cal_z: np.ndarray, cc_z: np.ndarray, exs: list[dict]) -> Path:
    folder.mkdir(parents=True)
    (folder / "adapter.safetensors").write_bytes(f"weights of seed {seed}".encode())
    single = _single()
    (folder / "model.json").write_text(json.dumps({
        **single, "adapter": {**single["adapter"], "file": "adapter.safetensors"},
        "hyperparameters": {"seed": seed, "epochs": 3}, "metrics": {"seed": seed}, "command": f"train {seed}"}))
    np.save(folder / "cal_logits.npy", cal_z)
    np.save(folder / "ccdev_logits.npy", cc_z)
    with gzip.open(folder / "examples.jsonl.gz", "wt") as fh:
        for e in exs:
            fh.write(json.dumps(e) + "\n")
    return folder


def test_train_verifier_ensemble_calibrates_the_mean(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    labels = ["supports"] * 40 + ["refutes"] * 40 + ["neutral"] * 80
    exs = [{"split": split, "label": lab, "claim": f"c{i}", "claim_id": f"c{i}", "sentence": f"s{i}", "prev": "",
            "paper": f"p{i}", "source": "scifact", "kind": "gold" if lab != "neutral" else "non-rationale"}
           for split in ("cal", "ccdev") for i, lab in enumerate(labels)]
    y = np.array([tv.LABELS.index(lab) for lab in labels])
    truth = np.eye(3)[y] * 4.0
    noise = [rng.normal(scale=3.0, size=truth.shape) for _ in range(2)]
    members = [_member(tmp_path / f"m{i}", i, truth + n, truth + n[::-1], exs) for i, n in enumerate(noise)]
    out = tmp_path / "ens"
    manifest = tv.ensemble(members, out, "evtui-verifier-test", "python scripts/train_verifier.py --ensemble ...")
    assert [m["file"] for m in manifest["members"]] == ["adapter-0.safetensors", "adapter-1.safetensors"]
    assert (out / "adapter-1.safetensors").read_bytes() == b"weights of seed 1"
    assert [r["seed"] for r in manifest["member_training"]] == [0, 1]
    mean = (2 * truth + noise[0] + noise[1]) / 2
    np.testing.assert_allclose(np.load(out / "cal_logits.npy"), mean)
    assert manifest["temperature"] == pytest.approx(tv.fit_temperature(mean, y))
    # the mean errs less than either member: its in-sample macro-F1 is at least the better member's
    f1 = manifest["metrics"]["scifact_cal_insample_thresholds"]["stance_on_gold"]["macro_f1"]
    for z in (truth + n for n in noise):
        t = tv.fit_temperature(z, y)
        th = tv.choose_thresholds(tv.softmax(z, t), y)
        assert f1 >= tv.evaluate(z, exs[:160], t, th)["stance_on_gold"]["macro_f1"]
    assert set(manifest) >= {"members", "base", "temperature", "thresholds", "labels", "max_len"}


def test_install_replaces_the_model_files_and_nothing_else(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    resource = tmp_path / "resources"
    shutil.copytree(MODEL_DIR, resource)
    (resource / "README.txt").write_text("kept")
    monkeypatch.setattr(tv, "RESOURCE", resource)
    folder = tmp_path / "new"
    folder.mkdir()
    for name in ("adapter-0.safetensors", "adapter-1.safetensors"):
        (folder / name).write_bytes(name.encode())
    (folder / "model.json").write_text(json.dumps({"members": [{"file": "adapter-0.safetensors"},
                                                               {"file": "adapter-1.safetensors"}]}))
    tv.install(folder)
    # the training claims' keys (scripts/training_items.py) are not a model file: kept, as the README is
    assert sorted(p.name for p in resource.iterdir()) == ["README.txt", "adapter-0.safetensors",
                                                          "adapter-1.safetensors", "model.json", "training_items.txt"]
