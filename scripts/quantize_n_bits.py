#!/usr/bin/python3
"""Block quantization into com.microsoft MatMulNBits, written the way onnxruntime's
MatMulNBitsQuantizer (onnxruntime.quantization.matmul_nbits_quantizer, the `_q4` files of
transformers.js repos) writes it; there is no onnxruntime Python here: python3-onnx + numpy only.

Each MatMul whose B is a constant float [K, N] initializer becomes
  MatMulNBits(A, B_Q<bits> uint8 [N, k_blocks, blob], B_scales float [N * k_blocks]
              [, B_zero_points uint8 [N * ceil(k_blocks * bits / 8)]])
  attributes K, N, bits, block_size (accuracy_level only when given), domain com.microsoft v1.
k_blocks = ceil(K / block_size); blob = block_size * bits / 8; codes packed along K, low bits first;
the last block is padded with code = zero point.
Per block of W's column n (rounding: numpy's half-to-even, as the quantizer's C++ uses nearbyint):
  symmetric (default, no zero_points input): m = the value of largest |x| (with its sign);
      scale = m / -2^(bits-1), zero point 2^(bits-1) (not stored), q = clamp(round(x / scale) + zp, 0, 2^bits - 1)
  asymmetric: lo = min(0, min x), hi = max(0, max x); scale = (hi - lo) / (2^bits - 1);
      zp = clamp(round(-lo / scale), 0, 2^bits - 1); q = clamp(round(x / scale) + zp, 0, 2^bits - 1)
Subgraphs (If branches) are rewritten too.

Usage: scripts/quantize_n_bits.py IN.onnx OUT.onnx [--bits 4|8] [--block-size 32] [--asymmetric]
                                  [--accuracy-level N]
       scripts/quantize_n_bits.py --op-cases DIR   (single-node MatMulNBits cases for the peer test)
"""
import argparse
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def quantize_blockwise(w, bits, block_size, symmetric):
    """w float32 [K, N] -> (packed uint8 [N, k_blocks, blob], scales float32 [N * k_blocks],
    zero points uint8 codes [N, k_blocks])."""
    k, n = w.shape
    k_blocks = (k + block_size - 1) // block_size
    qmax = (1 << bits) - 1
    mid = 1 << (bits - 1)
    wt = np.zeros((n, k_blocks * block_size), dtype=np.float32)
    wt[:, :k] = w.T
    blocks = wt.reshape(n, k_blocks, block_size)
    valid = (np.arange(k_blocks * block_size) < k).reshape(k_blocks, block_size)[None, :, :]
    if symmetric:
        absx = np.where(valid, np.abs(blocks), -1.0)
        idx = absx.argmax(axis=2)
        m = np.take_along_axis(blocks, idx[:, :, None], axis=2)[:, :, 0]
        scale = (m / np.float32(-mid)).astype(np.float32)
        zp = np.full((n, k_blocks), mid, dtype=np.int32)
    else:
        lo = np.minimum(0, np.where(valid, blocks, np.inf).min(axis=2))
        hi = np.maximum(0, np.where(valid, blocks, -np.inf).max(axis=2))
        scale = ((hi - lo) / np.float32(qmax)).astype(np.float32)
        safe = np.where(scale == 0, np.float32(1), scale)
        zp = np.clip(np.round(-lo / safe), 0, qmax).astype(np.int32)
    safe = np.where(scale == 0, np.float32(1), scale).astype(np.float32)
    q = np.clip(np.round(blocks / safe[:, :, None]) + zp[:, :, None], 0, qmax).astype(np.int32)
    q = np.where(valid, q, zp[:, :, None])
    if bits == 8:
        packed = q.astype(np.uint8)
    else:
        packed = (q[:, :, 0::2] | (q[:, :, 1::2] << 4)).astype(np.uint8)
    return packed, scale.reshape(-1).astype(np.float32), zp.astype(np.uint8)


def pack_zero_points(zp, bits):
    """[N, k_blocks] codes -> uint8 [N * ceil(k_blocks * bits / 8)], low bits first."""
    if bits == 8:
        return zp.reshape(-1)
    n, kb = zp.shape
    padded = np.zeros((n, kb + (kb % 2)), dtype=np.uint8)
    padded[:, :kb] = zp
    return (padded[:, 0::2] | (padded[:, 1::2] << 4)).reshape(-1).astype(np.uint8)


def make_node(a_name, y_name, w, name, inits, bits, block_size, symmetric, accuracy_level):
    k, n = w.shape
    packed, scales, zp = quantize_blockwise(w, bits, block_size, symmetric)
    b_name, s_name = f"{name}_Q{bits}", f"{name}_scales"
    inits += [numpy_helper.from_array(packed, b_name), numpy_helper.from_array(scales, s_name)]
    inputs = [a_name, b_name, s_name]
    if not symmetric:
        inits.append(numpy_helper.from_array(pack_zero_points(zp, bits), f"{name}_zero_points"))
        inputs.append(f"{name}_zero_points")
    attrs = dict(K=k, N=n, bits=bits, block_size=block_size)
    if accuracy_level is not None:
        attrs["accuracy_level"] = accuracy_level
    return helper.make_node("MatMulNBits", inputs, [y_name], name=f"{name}_Q{bits}", domain="com.microsoft", **attrs)


def rewrite_graph(g, outer_inits, args, counter):
    inits = {t.name: t for t in g.initializer}
    every = dict(outer_inits, **inits)
    uses = {}
    for node in g.node:
        for x in node.input:
            uses[x] = uses.get(x, 0) + 1
    out, new_inits, dropped = [], [], set()
    for node in g.node:
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                rewrite_graph(a.g, every, args, counter)
        w = every.get(node.input[1]) if node.op_type == "MatMul" else None
        if w is None or len(w.dims) != 2 or w.data_type != TensorProto.FLOAT:
            out.append(node)
            continue
        counter[0] += 1
        name = node.name or f"MatMul_{counter[0]}"
        out.append(make_node(node.input[0], node.output[0], numpy_helper.to_array(w), name, new_inits, args.bits,
                             args.block_size, not args.asymmetric, args.accuracy_level))
        uses[w.name] -= 1
        if w.name in inits and uses[w.name] == 0:
            dropped.add(w.name)
    del g.node[:]
    g.node.extend(out)
    keep = [t for t in g.initializer if t.name not in dropped]
    del g.initializer[:]
    g.initializer.extend(keep + new_inits)


def quantize_model(model, args):
    counter = [0]
    rewrite_graph(model.graph, {}, args, counter)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return counter[0]


def op_cases(out_dir):
    """Single-node MatMulNBits models with random inputs (fixed seed): symmetric and with zero
    points (packed uint8 and float), bits 4 and 8, K not a multiple of block_size, 2-D/3-D A, bias."""
    rng = np.random.default_rng(28)
    cases = [  # name, M-shape, K, N, bits, block, zero points, bias, accuracy_level
        ("sym4_k64_b32", [3], 64, 17, 4, 32, None, False, None),
        ("sym4_k50_b16_3d", [2, 5], 50, 33, 4, 16, None, False, None),
        ("zp4_k100_b32", [4], 100, 24, 4, 32, "uint8", False, None),
        ("zp4_k100_b32_m40", [40], 100, 70, 4, 32, "uint8", True, None),  # > 16 rows: decoded tiles + GEMM
        ("zp4_k37_b16_oddblocks", [1], 37, 9, 4, 16, "uint8", True, None),
        ("zpf4_k72_b64", [2, 3], 72, 11, 4, 64, "float", False, None),
        ("sym8_k48_b32", [5], 48, 13, 8, 32, None, False, None),
        ("zp8_k130_b128", [3], 130, 21, 8, 128, "uint8", True, None),
        ("sym4_k64_b32_acc1", [3], 64, 16, 4, 32, None, False, 1),
        ("sym4_k256_b32_acc4", [4], 256, 48, 4, 32, None, False, 4),
        # accuracy_level 4: glassbox quantizes A to int8 per block as ORT's CPU kernel does (VNNI or scalar)
        ("zp4_k100_b32_acc4", [2, 3], 100, 37, 4, 32, "uint8", True, 4),
        ("zp4_k50_b16_acc4", [1], 50, 19, 4, 16, "uint8", False, 4),
        ("sym4_k300_b128_acc4", [5], 300, 23, 4, 128, None, False, 4),
        ("zp8_k130_b32_acc4", [3], 130, 21, 8, 32, "uint8", False, 4),
        ("sym8_k64_b16_acc4", [2], 64, 9, 8, 16, None, True, 4),
        ("zp4_k96_b32_m40_acc4", [40], 96, 33, 4, 32, "uint8", False, 4),  # > 16 rows: int8 values through the GEMM
    ]
    listing = []
    os.makedirs(out_dir, exist_ok=True)
    for name, mshape, k, n, bits, block, zp_kind, bias, acc in cases:
        w = rng.standard_normal((k, n)).astype(np.float32)
        a = rng.standard_normal(mshape + [k]).astype(np.float32)
        packed, scales, zp = quantize_blockwise(w, bits, block, zp_kind is None)
        inits = [numpy_helper.from_array(packed, "B"), numpy_helper.from_array(scales, "scales")]
        inputs = ["A", "B", "scales"]
        if zp_kind == "uint8":
            inits.append(numpy_helper.from_array(pack_zero_points(zp, bits), "zero_points"))
        elif zp_kind == "float":
            inits.append(numpy_helper.from_array(zp.astype(np.float32).reshape(-1), "zero_points"))
        inputs.append("zero_points" if zp_kind else "")
        if bias:
            inits.append(numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "bias"))
            inputs += ["", "bias"]
        while inputs and inputs[-1] == "":
            inputs.pop()
        attrs = dict(K=k, N=n, bits=bits, block_size=block)
        if acc is not None:
            attrs["accuracy_level"] = acc
        node = helper.make_node("MatMulNBits", inputs, ["Y"], name=name, domain="com.microsoft", **attrs)
        graph = helper.make_graph([node], name, [helper.make_tensor_value_info("A", TensorProto.FLOAT, mshape + [k])],
                                  [helper.make_tensor_value_info("Y", TensorProto.FLOAT, mshape + [n])], initializer=inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
        model.ir_version = 8
        onnx.save(model, os.path.join(out_dir, name + ".onnx"))
        np.save(os.path.join(out_dir, name + ".A.npy"), a)
        listing.append(name)
    with open(os.path.join(out_dir, "cases.json"), "w") as f:
        json.dump(listing, f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input", nargs="?")
    ap.add_argument("output", nargs="?")
    ap.add_argument("--bits", type=int, choices=[4, 8], default=4)
    ap.add_argument("--block-size", type=int, default=32)
    ap.add_argument("--asymmetric", action="store_true")
    ap.add_argument("--accuracy-level", type=int)
    ap.add_argument("--op-cases", metavar="DIR")
    a = ap.parse_args()
    if a.op_cases:
        return op_cases(a.op_cases)
    if not a.input or not a.output:
        ap.error("IN.onnx OUT.onnx are required")
    model = onnx.load(a.input)
    count = quantize_model(model, a)
    if count == 0:
        sys.exit(f"{a.input}: no MatMul with a constant 2-D float weight")
    onnx.checker.check_model(model)
    onnx.save(model, a.output)
    print(f"wrote {a.output}: {count} MatMuls as MatMulNBits (bits {a.bits}, block {a.block_size})")


if __name__ == "__main__":
    sys.exit(main())
