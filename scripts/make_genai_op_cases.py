#!/usr/bin/python3
"""Single-node cases of the ops onnxruntime-genai's builder writes for decoders, for the peer test
tests/generation/genai_ops_peer_test.js (glassbox run vs onnxruntime-node on the same files):
com.microsoft SkipSimplifiedLayerNormalization and RotaryEmbedding, with fixed-seed random inputs on
awkward shapes. (SimplifiedLayerNormalization is open: ORT registers it in the ai.onnx domain, which
the ONNX checker glassbox runs at load refuses.)
Writes DIR/<case>.onnx, DIR/<case>.<input>.npy and DIR/cases.json ([{name, inputs: [names]}]).
Usage: scripts/make_genai_op_cases.py DIR
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(28)


def case(out, listing, name, op, domain, inputs, outputs, attrs, const=()):
    """inputs: [(name, array)]; names in const become initializers; outputs: [(name, shape)] ('' skips)."""
    graph_inputs, inits, feeds = [], [], []
    for n, a in inputs:
        if n in const:
            inits.append(numpy_helper.from_array(a, n))
        else:
            elem = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype]
            graph_inputs.append(helper.make_tensor_value_info(n, elem, list(a.shape)))
            np.save(os.path.join(out, f"{name}.{n}.npy"), a)
            feeds.append(n)
    node = helper.make_node(op, [n for n, _ in inputs], [n for n, _ in outputs], name=name, domain=domain, **attrs)
    rank = inputs[0][1].ndim  # every output has the first input's rank; dims are left symbolic
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [f"{n}_{d}" for d in range(rank)]) for n, _ in outputs if n]
    graph = helper.make_graph([node], name, graph_inputs, outs, initializer=inits)
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    onnx.save(model, os.path.join(out, name + ".onnx"))
    listing.append({"name": name, "inputs": feeds})


def f32(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def rotary_cases(out, cases):
    """RotaryEmbedding: 3-D (num_heads given or not) and 4-D input, halves and interleaved pairs, a partial
    rotary_embedding_dim, position_ids [batch, seq] (left-padding style) and [1] (a start offset)."""
    max_pos = 40
    for name, shape, half, attrs, pos in [
            ("rope_3d_heads", (2, 5, 4 * 16), 8, {"num_heads": 4}, "bs"),
            ("rope_3d_interleaved", (1, 3, 2 * 8), 4, {"interleaved": 1}, "bs"),
            ("rope_4d_start_offset", (2, 3, 4, 8), 4, {}, "start"),
            ("rope_3d_partial_dim", (2, 4, 2 * 16), 4, {"num_heads": 2, "rotary_embedding_dim": 8}, "bs")]:
        angle = np.outer(np.arange(max_pos), 1.0 / 10000 ** (np.arange(half) / half))
        seq = shape[2] if len(shape) == 4 else shape[1]
        if pos == "start":
            p = np.array([7], dtype=np.int64)
        else:
            p = np.stack([RNG.permutation(max_pos)[:seq] for _ in range(shape[0])]).astype(np.int64)
        case(out, cases, name, "RotaryEmbedding", "com.microsoft",
             [("input", f32(*shape)), ("position_ids", p), ("cos_cache", np.cos(angle).astype(np.float32)),
              ("sin_cache", np.sin(angle).astype(np.float32))], [("output", None)], attrs, const={"cos_cache", "sin_cache"})


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    cases = []
    for name, shape, skip_shape, bias, outs in [
            ("ssln_3d_bias_sum", (2, 5, 48), (2, 5, 48), True, ["output", "", "inv_std_var", "input_skip_bias_sum"]),
            ("ssln_3d_nobias", (1, 7, 32), (1, 7, 32), False, ["output", "", "", "input_skip_bias_sum"]),
            ("ssln_2d_only_output", (9, 24), (9, 24), True, ["output"]),
            ("ssln_skip_2d_broadcast", (3, 4, 16), (4, 16), False, ["output", "", "", "input_skip_bias_sum"])]:
        h = shape[-1]
        ins = [("input", f32(*shape)), ("skip", f32(*skip_shape)), ("gamma", f32(h))]
        if bias:
            ins.append(("bias", f32(h)))
        case(out, cases, name, "SkipSimplifiedLayerNormalization", "com.microsoft", ins, [(o, None) for o in outs],
             {"epsilon": 1e-6}, const={"gamma", "bias"})
    rotary_cases(out, cases)
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(cases, f)


if __name__ == "__main__":
    sys.exit(main())
