"""Rewrites of the verifier's ONNX graph at load (evtui/verify/adapter.py merges the adapter first): GELU as one
node, the softmaxes' NaN guards dropped, and every product by a stored int8 matrix made an int8 product. Each
returns how many places it changed; each leaves the function the same or (int8) moves it by activation
quantisation only, which the shipped calibration is made on."""

from __future__ import annotations

from typing import Any

import numpy as np


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
