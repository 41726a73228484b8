#!/usr/bin/python3
"""Single-node cases of the ops onnxruntime-genai's builder writes for decoders, for the peer test
tests/generation/genai_ops_peer_test.js (glassbox run vs onnxruntime-node on the same files):
com.microsoft SkipSimplifiedLayerNormalization, RotaryEmbedding and GroupQueryAttention, and
SimplifiedLayerNormalization in the default (ai.onnx) domain where ORT registers it, with fixed-seed
random inputs on awkward shapes.
Writes DIR/<case>.onnx, DIR/<case>.<input>.npy and DIR/cases.json ([{name, inputs: [names], valid}]):
valid {output index: [rows per batch row]} limits the comparison of a [batch, seq, ...] output to its
first rows per batch row (GQA's right-padded query rows, whose values ORT leaves undefined).
Usage: scripts/make_genai_op_cases.py DIR
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(28)


def case(out, listing, name, op, domain, inputs, outputs, attrs, const=(), valid=None):
    """inputs: [(name, array)] (array None: the input is left empty); names in const become initializers;
    outputs: [(name, rank)] ('' skips; rank None: the first input's)."""
    graph_inputs, inits, feeds = [], [], []
    for n, a in inputs:
        if a is None:
            continue
        if n in const:
            inits.append(numpy_helper.from_array(a, n))
        else:
            elem = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype]
            graph_inputs.append(helper.make_tensor_value_info(n, elem, list(a.shape)))
            np.save(os.path.join(out, f"{name}.{n}.npy"), a)
            feeds.append(n)
    node = helper.make_node(op, [n if a is not None else "" for n, a in inputs], [n for n, _ in outputs], name=name,
                            domain=domain, **attrs)
    rank = inputs[0][1].ndim  # an output has the first input's rank unless given; dims are left symbolic
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [f"{n}_{d}" for d in range(r or rank)])
            for n, r in outputs if n]
    graph = helper.make_graph([node], name, graph_inputs, outs, initializer=inits)
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    onnx.save(model, os.path.join(out, name + ".onnx"))
    listing.append({"name": name, "inputs": feeds, "valid": valid or {}})


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


def gqa_cases(out, cases):
    """GroupQueryAttention: a first prompt (no past, or an empty one) and decode steps with past, packed and
    separate QKV (head sizes multiples of 16, as ORT's CPU kernel requires), with and without rotary (halves, interleaved, partial rotary_dim), kv_heads < heads (and
    1), batch 2 with different seqlens_k (right-padded prompt; different cached lengths), a chunk after a
    past (batch 1), and the scoring options (scale, softcap, local_window_size, smooth_softmax). Past
    rows past a row's cached length hold random values that must be ignored."""
    max_pos = 32
    for (name, b, s, past, seqlens, total, heads, kv, head, packed, rot, attrs) in [
            ("gqa_prefill_packed_rotary", 1, 5, None, [4], 5, 4, 2, 16, True, "halves", {}),
            ("gqa_prefill_b2_padded", 2, 6, 0, [5, 3], 6, 4, 2, 16, False, None, {}),
            ("gqa_prefill_b2_padded_rotary", 2, 6, 0, [2, 5], 6, 6, 3, 16, True, "halves", {}),
            ("gqa_decode_b2_packed_rotary", 2, 1, 7, [7, 4], 8, 4, 2, 16, True, "halves", {}),
            ("gqa_decode_mqa_interleaved_partial", 1, 1, 5, [5], 6, 4, 1, 32, False, "interleaved_partial", {}),
            ("gqa_decode_b2_unpacked_norotary", 2, 1, 6, [3, 6], 7, 2, 2, 16, False, None, {}),
            ("gqa_chunk_after_past", 1, 3, 4, [6], 7, 4, 2, 16, True, "halves", {}),
            ("gqa_decode_scale_softcap", 1, 1, 6, [6], 7, 4, 2, 16, True, "halves", {"scale": 0.3, "softcap": 2.0}),
            ("gqa_decode_smooth_softmax", 2, 1, 5, [5, 2], 6, 4, 2, 16, False, None, {"smooth_softmax": 1}),
            ("gqa_prefill_local_window", 1, 7, None, [6], 7, 2, 1, 16, True, "halves", {"local_window_size": 2}),
            ("gqa_decode_local_window", 1, 1, 8, [8], 9, 2, 1, 16, False, None, {"local_window_size": 3})]:
        d_q, d_kv = heads * head, kv * head
        ins = []
        if packed:
            ins += [("query", f32(b, s, d_q + 2 * d_kv)), ("key", None), ("value", None)]
        else:
            ins += [("query", f32(b, s, d_q)), ("key", f32(b, s, d_kv)), ("value", f32(b, s, d_kv))]
        if past is None:
            ins += [("past_key", None), ("past_value", None)]
        else:
            ins += [("past_key", f32(b, kv, past, head)), ("past_value", f32(b, kv, past, head))]
        ins += [("seqlens_k", np.array(seqlens, dtype=np.int32)), ("total_sequence_length", np.array(total, dtype=np.int32))]
        a = {"num_heads": heads, "kv_num_heads": kv, **attrs}
        if rot:
            half = head // 4 if rot.endswith("partial") else head // 2
            angle = np.outer(np.arange(max_pos), 1.0 / 10000 ** (np.arange(half) / half))
            ins += [("cos_cache", np.cos(angle).astype(np.float32)), ("sin_cache", np.sin(angle).astype(np.float32))]
            a.update(do_rotary=1, rotary_interleaved=1 if rot.startswith("interleaved") else 0)
        valid = {"0": [k + 1 for k in seqlens]} if s == total and min(seqlens) + 1 < s else None
        case(out, cases, name, "GroupQueryAttention", "com.microsoft", ins,
             [("output", 3), ("present_key", 4), ("present_value", 4)], a, const={"cos_cache", "sin_cache"}, valid=valid)


def simplified_norm_cases(out, cases):
    """SimplifiedLayerNormalization in the ai.onnx domain: last-dim and two-dim normalization, the
    schema's default epsilon, the optional inv_std_var output."""
    for name, shape, axis, eps, outs in [("sln_3d_last", (2, 5, 48), -1, 1e-6, ["Y"]),
                                         ("sln_axis1_inv_std", (3, 4, 8), 1, 1e-5, ["Y", "inv_std_var"]),
                                         ("sln_default_eps", (7, 32), None, None, ["Y"])]:
        attrs = {k: v for k, v in (("axis", axis), ("epsilon", eps)) if v is not None}
        norm = int(np.prod(shape[(axis if axis is not None and axis >= 0 else len(shape) - 1):]))
        scale_shape = shape[(axis if axis is not None and axis >= 0 else len(shape) - 1):]
        assert int(np.prod(scale_shape)) == norm
        case(out, cases, name, "SimplifiedLayerNormalization", "", [("X", f32(*shape)), ("scale", f32(*scale_shape))],
             [(o, None) for o in outs], attrs, const={"scale"})


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
    gqa_cases(out, cases)
    simplified_norm_cases(out, cases)
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(cases, f)


if __name__ == "__main__":
    sys.exit(main())
