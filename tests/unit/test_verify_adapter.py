"""The verifier ships as a small adapter over the base MiniLM: the merge is exact where it should be, files are
checked, and a different base is refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from evtui.checksum import sha256_file as sha256
from evtui.errors import EvtuiError
from evtui.verify.adapter import AdapterModel, base_model_path, merged_model_bytes, requantize
from evtui.verify.graph import drop_nan_guards, fuse_gelu
from evtui.verify.model import MODEL_DIR, Verifier


def _shipped() -> dict:
    return json.loads((MODEL_DIR / "model.json").read_text())


def _manifest() -> dict:
    """The shipped model as one adapter: itself, or an ensemble's first member (tests/unit/test_verify_ensemble.py
    covers the mean)."""
    manifest = _shipped()
    if "members" in manifest:
        manifest = {**manifest, "adapter": manifest["members"][0]}
        manifest.pop("members")
    return manifest


ADAPTER = MODEL_DIR / _manifest()["adapter"]["file"]


def _copy(tmp_path: Path) -> Path:
    """A folder holding the shipped adapter (an ensemble's first member) as a one-adapter verifier."""
    folder = tmp_path / "verifier"
    folder.mkdir()
    shutil.copy(ADAPTER, folder / "adapter.safetensors")
    manifest = _manifest()
    manifest["adapter"] = {**manifest["adapter"], "file": "adapter.safetensors"}
    (folder / "model.json").write_text(json.dumps(manifest))
    return folder


def _rewrite(folder: Path, tensors: dict[str, np.ndarray]) -> None:
    """Save tensors as the folder's adapter and record its sha256, as training does."""
    path = folder / "adapter.safetensors"
    save_file(tensors, str(path))
    manifest = json.loads((folder / "model.json").read_text())
    manifest["adapter"]["sha256"] = sha256(path)
    (folder / "model.json").write_text(json.dumps(manifest))


def test_the_shipped_model_is_small_adapters() -> None:
    manifest = _shipped()
    files = [MODEL_DIR / m["file"] for m in manifest.get("members", [manifest.get("adapter")])]
    assert sum(f.stat().st_size for f in files) < 1_000_000  # a retrain rewrites under 1 MB in git
    # beside them only the manifest and the training claims' keys (evtui.bench.provenance.TRAINING_ITEMS, 26 kB)
    assert sorted(p.name for p in MODEL_DIR.iterdir()) == sorted([f.name for f in files] + ["model.json",
                                                                                             "training_items.txt"])
    assert manifest["base"]["sha256"] == sha256(base_model_path())


def test_requantize_round_trips_within_half_a_step() -> None:
    w = np.random.default_rng(0).normal(size=(64, 8)).astype(np.float32)
    q, scale = requantize(w)
    assert q.dtype == np.int8 and scale.shape == (1, 8)
    assert np.abs(q * scale - w).max() <= scale.max() / 2 + 1e-6
    assert np.abs(q).max() == 127


def test_a_zero_adapter_leaves_the_base_encoder_unchanged(tmp_path: Path) -> None:
    """With the low-rank factors zeroed and the base's own biases and LayerNorms, the merged encoder is the base."""
    import onnx
    import onnxruntime as ort
    from onnx import numpy_helper

    folder = _copy(tmp_path)
    manifest = _manifest()
    tensors = load_file(str(folder / "adapter.safetensors"))
    base = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(base_model_path())).graph.initializer}
    prefix = manifest["base"]["prefix"]
    zeroed = {}
    for k, v in tensors.items():
        if k.endswith((".lora_A", ".lora_B", ".delta")):  # the low-rank changes and the position rows' change
            zeroed[k] = np.zeros_like(v)
        elif k.startswith(("encoder.", "embeddings.")) and not k.endswith(".scale"):
            zeroed[k] = base[prefix + k].astype(v.dtype)  # biases, LayerNorms, token types: the base's own
        else:
            zeroed[k] = v
    _rewrite(folder, zeroed)
    # float products here: with int8 activations (how it ships) the comparison would measure quantisation, not the merge
    merged = AdapterModel(folder, json.loads((folder / "model.json").read_text()), int8_activations=False)
    plain = ort.InferenceSession(str(base_model_path()), providers=["CPUExecutionProvider"])
    ids = np.array([[101, 2023, 3231, 1996, 4319, 102, 2009, 2515, 102]], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    got = merged.session.run(None, feeds)[0]
    want = plain.run(None, feeds)[0]
    # re-quantising already-quantised columns moves a weight by at most a rounding step: tiny in the output
    assert np.abs(got - want).max() < 0.05


def _feeds() -> dict[str, np.ndarray]:
    ids = np.array([[101, 2023, 3231, 1996, 4319, 102, 2009, 2515, 102],
                    [101, 9385, 1040, 2089, 5547, 102, 2009, 0, 0]], dtype=np.int64)
    return {"input_ids": ids, "attention_mask": (ids > 0).astype(np.int64), "token_type_ids": np.zeros_like(ids)}


def test_gelu_fusion_and_dropped_nan_guards_are_the_same_function() -> None:
    import onnx
    import onnxruntime as ort

    model = onnx.load(str(base_model_path()))
    assert fuse_gelu(model) == 6  # one per layer
    assert drop_nan_guards(model) == 6  # one per attention softmax
    assert not [n for n in model.graph.node if n.op_type in ("Erf", "IsNaN")]
    plain = ort.InferenceSession(str(base_model_path()), providers=["CPUExecutionProvider"])
    fused = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    assert np.abs(fused.run(None, _feeds())[0] - plain.run(None, _feeds())[0]).max() < 1e-4


def test_every_stored_matrix_is_multiplied_in_int8() -> None:
    """The shipped form: no float copy of a weight matrix is left, each product reads the int8 columns, and the
    activations are quantised once per tensor (query, key and value share theirs)."""
    import onnx
    from safetensors.numpy import load_file

    manifest = _manifest()
    model = onnx.ModelProto()
    model.ParseFromString(merged_model_bytes(base_model_path(), load_file(str(ADAPTER)), manifest["base"]))
    ops = [n.op_type for n in model.graph.node]
    assert ops.count("MatMulIntegerToFloat") == 36  # 6 layers x (query, key, value, attention out, up, down)
    assert ops.count("DynamicQuantizeLinear") == 24  # 4 distinct inputs per layer
    assert ops.count("MatMul") == 12  # only the attention products (q·k, weights·v), which have no stored matrix
    inits = {t.name for t in model.graph.initializer}
    assert not [n for n in model.graph.node if n.op_type == "Cast" and n.input[0] in inits
                and n.input[0].startswith("val_")]  # no int8 matrix expanded to float32 any more


# Real claim / sentence pairs (SciFact train claims 76 and 69 and their abstracts; as in tests/functional/test_verify.py):
# a supporting, a refuting and a neutral one, each read with a clear margin by the float model.
REAL_PAIRS = (
    ("Active Ly49Q induces neutrophil polarization.",
     "Here, we show that an inhibitory MHC I receptor, Ly49Q, was crucial for the swift polarization of and "
     "tissue infiltration by neutrophils."),
    ("Activation of PPM1D enhances p53 function.",
     "PPM1D mutations were mutually exclusive with TP53 mutations in BSG and attenuated p53 activation in vitro."),
    ("Active Ly49Q induces neutrophil polarization.",
     "Neutrophils rapidly undergo polarization and directional movement to infiltrate the sites of infection "
     "and inflammation."),
)


def test_int8_products_stay_close_to_float_ones(tmp_path: Path) -> None:
    """On real pairs the int8 products read what the float ones read. (Not on arbitrary token ids: where the float
    model is near a tie, the exact int8 result depends on the CPU's kernels — with or without VNNI — and may flip.)"""
    from evtui.verify.model import pair_text

    manifest = _manifest()
    q8 = AdapterModel(MODEL_DIR, manifest)
    fp = AdapterModel(MODEL_DIR, manifest, int8_activations=False)
    args = Verifier()._encode([c for c, _ in REAL_PAIRS], [pair_text(t, "") for _, t in REAL_PAIRS])
    a, b = q8.logits(*args), fp.logits(*args)
    assert list(b.argmax(1)) == [0, 1, 2]  # supports, refutes, neutral
    assert (a.argmax(1) == b.argmax(1)).all()
    assert np.abs(a - b).max() > 0  # the activations are quantised ...

    def probs(z: np.ndarray) -> np.ndarray:
        e = np.exp(z / manifest["temperature"])
        return e / e.sum(1, keepdims=True)

    assert np.abs(probs(a) - probs(b)).max() < 0.15  # ... which moves the calibrated probabilities a little, never far


def test_the_adapter_changes_the_encoder(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    manifest = _manifest()
    import onnxruntime as ort

    merged = AdapterModel(folder, manifest)
    plain = ort.InferenceSession(str(base_model_path()), providers=["CPUExecutionProvider"])
    ids = np.array([[101, 2023, 3231, 1996, 4319, 102, 2009, 2515, 102]], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    assert np.abs(merged.session.run(None, feeds)[0] - plain.run(None, feeds)[0]).max() > 0.1


def test_a_tampered_adapter_is_refused(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    with (folder / "adapter.safetensors").open("r+b") as fh:
        fh.seek(5000)
        fh.write(b"\x00\x01\x02\x03")
    with pytest.raises(EvtuiError, match="sha256"):
        Verifier(folder)


def test_another_base_model_is_refused(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    manifest = json.loads((folder / "model.json").read_text())
    manifest["base"]["sha256"] = "0" * 64
    (folder / "model.json").write_text(json.dumps(manifest))
    with pytest.raises(EvtuiError, match="not the one it was trained over"):
        Verifier(folder)


def test_a_missing_adapter_is_one_line(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / "adapter.safetensors").unlink()
    with pytest.raises(EvtuiError, match="missing; reinstall"):
        Verifier(folder)


def test_an_adapter_that_does_not_fit_its_base_is_refused(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    tensors = load_file(str(folder / "adapter.safetensors"))
    key = next(k for k in tensors if k.endswith(".attention.output.LayerNorm.weight"))
    tensors[key] = np.ones(10, dtype=np.float32)
    _rewrite(folder, tensors)
    with pytest.raises(EvtuiError, match="does not fit"):
        Verifier(folder)
