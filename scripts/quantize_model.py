#!/usr/bin/python3
"""Rewrites an fp32 ONNX model's MatMuls with constant weights into int8 the way
onnxruntime's quantizer writes them (there is no onnxruntime Python tooling here;
python3-onnx + numpy only). These models are the int8 comparison against
onnxruntime-node (tests/quant, bench/int8); large ones are never committed.

Modes:
  dynamic  (onnxruntime.quantization.quantize_dynamic, MatMulInteger form)
      x -> DynamicQuantizeLinear -> (x_q uint8, x_scale, x_zp)      one per activation tensor
      MatMulInteger(x_q, W_q int8, x_zp, W_zp) -> Cast(float) -> Mul(., Mul(x_scale, W_scale))
  qdq      (static QDQ format)
      x -> QuantizeLinear(s_a, zp_a uint8) -> DequantizeLinear -> MatMul(., DequantizeLinear(W_q, W_scale, W_zp))
      activation ranges: --act-range LO HI for every activation (no calibration data here),
      or --ranges FILE.json ({"tensor": [lo, hi], ...}; tensors not listed use --act-range).

Weights: symmetric int8 in [-127, 127] (zero point 0), scale = max|W| / 127 per tensor, or
with --per-channel one scale per output column (W is [K, N]: axis 1; W_zp is then [N] zeros,
which onnxruntime's MatMulInteger accepts as a per-column b_zero_point).
Rounding: numpy's round (half to even) of W / scale in float32, as onnxruntime's quantizer.

Usage: scripts/quantize_model.py IN.onnx OUT.onnx [--mode dynamic|qdq] [--per-channel]
                                 [--act-range LO HI] [--ranges FILE.json]
"""
import argparse
import json
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def quantize_weight(w, per_channel):
    """Symmetric int8: returns (w_q int8 [K, N], scale float32 scalar or [N], zp int8 like scale)."""
    w = w.astype(np.float32)
    absmax = np.abs(w).max(axis=0) if per_channel else np.abs(w).max()
    scale = (np.asarray(absmax, dtype=np.float32) / np.float32(127.0)).astype(np.float32)
    scale = np.where(scale == 0, np.float32(1.0), scale).astype(np.float32)
    q = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
    return q, scale, np.zeros(scale.shape, dtype=np.int8)


def activation_params(lo, hi):
    """uint8 asymmetric, range widened to include 0 (as DynamicQuantizeLinear / the ORT calibrator)."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    scale = np.float32((hi - lo) / 255.0) if hi > lo else np.float32(1.0)
    zp = np.uint8(np.clip(np.round(np.float32(-lo) / scale), 0, 255))
    return scale, zp


class Rewriter:
    def __init__(self, model, args):
        self.model, self.args = model, args
        self.graph = model.graph
        self.inits = {t.name: t for t in self.graph.initializer}
        self.new_inits, self.counter = [], 0
        self.ranges = json.load(open(args.ranges)) if args.ranges else {}

    def name(self, base):
        self.counter += 1
        return f"{base}_q{self.counter}"

    def add_init(self, name, arr):
        self.new_inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def weight_nodes_dynamic(self, w_name):
        q, scale, zp = quantize_weight(numpy_helper.to_array(self.inits[w_name]), self.args.per_channel)
        return (self.add_init(w_name + "_quantized", q), self.add_init(w_name + "_scale", scale),
                self.add_init(w_name + "_zero_point", zp))

    def run(self):
        consumers = {}
        for n in self.graph.node:
            for i in n.input:
                consumers[i] = consumers.get(i, 0) + 1
        targets = [n for n in self.graph.node if n.op_type == "MatMul" and n.input[1] in self.inits
                   and len(self.inits[n.input[1]].dims) == 2 and self.inits[n.input[1]].data_type == TensorProto.FLOAT]
        act_q = {}  # activation name -> node outputs (dynamic: q, scale, zp; qdq: dequantized)
        out_nodes, done_weights = [], set()
        target_ids = {id(n) for n in targets}
        for n in self.graph.node:
            if id(n) not in target_ids:
                out_nodes.append(n)
                continue
            x, w, y = n.input[0], n.input[1], n.output[0]
            if self.args.mode == "dynamic":
                out_nodes += self.dynamic(n, x, w, y, act_q)
            else:
                out_nodes += self.qdq(n, x, w, y, act_q)
            done_weights.add(w)
            consumers[w] -= 1
        del self.graph.node[:]
        self.graph.node.extend(out_nodes)
        keep = [t for t in self.graph.initializer if not (t.name in done_weights and consumers.get(t.name, 0) == 0)]
        del self.graph.initializer[:]
        self.graph.initializer.extend(keep + self.new_inits)
        return len(targets)

    def dynamic(self, n, x, w, y, act_q):
        nodes = []
        if x not in act_q:
            outs = [x + "_quantized", x + "_scale", x + "_zero_point"]
            nodes.append(helper.make_node("DynamicQuantizeLinear", [x], outs, name=x + "_QuantizeLinear"))
            act_q[x] = outs
        xq, xs, xz = act_q[x]
        wq, ws, wz = self.weight_nodes_dynamic(w)
        base = n.name or self.name("MatMul")
        i32, f32, sc = base + "_output_quantized", base + "_output_quantized_cast", base + "_scales_mul"
        nodes.append(helper.make_node("MatMulInteger", [xq, wq, xz, wz], [i32], name=base + "_quant"))
        nodes.append(helper.make_node("Cast", [i32], [f32], name=base + "_cast", to=TensorProto.FLOAT))
        nodes.append(helper.make_node("Mul", [xs, ws], [sc], name=base + "_scales_mul"))
        nodes.append(helper.make_node("Mul", [f32, sc], [y], name=base + "_output_scale_mul"))
        return nodes

    def qdq(self, n, x, w, y, act_q):
        nodes = []
        if x not in act_q:
            lo, hi = self.ranges.get(x, self.args.act_range)
            s, z = activation_params(lo, hi)
            sn, zn = self.add_init(x + "_scale", s), self.add_init(x + "_zero_point", z)
            q, dq = x + "_QuantizeLinear_Output", x + "_DequantizeLinear_Output"
            nodes.append(helper.make_node("QuantizeLinear", [x, sn, zn], [q], name=x + "_QuantizeLinear"))
            nodes.append(helper.make_node("DequantizeLinear", [q, sn, zn], [dq], name=x + "_DequantizeLinear"))
            act_q[x] = dq
        wq, ws, wz = self.weight_nodes_dynamic(w)
        wdq = w + "_DequantizeLinear_Output_" + str(self.counter)
        self.counter += 1
        attrs = {"axis": 1} if self.args.per_channel else {}
        nodes.append(helper.make_node("DequantizeLinear", [wq, ws, wz], [wdq], name=wdq + "_node", **attrs))
        nodes.append(helper.make_node("MatMul", [act_q[x], wdq], [y], name=n.name))
        return nodes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--mode", choices=["dynamic", "qdq"], default="dynamic")
    ap.add_argument("--per-channel", action="store_true")
    ap.add_argument("--act-range", nargs=2, type=float, default=[-8.0, 8.0], metavar=("LO", "HI"))
    ap.add_argument("--ranges")
    a = ap.parse_args()
    model = onnx.load(a.input)
    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0)
    need = 13 if (a.per_channel and a.mode == "qdq") else 11
    if opset < need:
        sys.exit(f"{a.input}: opset {opset} is below {need}, which this rewrite needs")
    count = Rewriter(model, a).run()
    if count == 0:
        sys.exit(f"{a.input}: no MatMul with a constant 2-D float weight to quantize")
    onnx.checker.check_model(model)
    onnx.save(model, a.output)
    print(f"wrote {a.output}: {count} MatMuls quantized ({a.mode}{', per-channel' if a.per_channel else ''})")


if __name__ == "__main__":
    main()
