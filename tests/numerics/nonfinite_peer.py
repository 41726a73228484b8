#!/usr/bin/python3
"""NaN and +-Inf propagate exactly as ONNX Runtime propagates them (issue 32 section 1).

For each op of src/ops/ops.inc that computes on floats (and each attribute variant whose
arithmetic differs), a tiny model takes inputs holding NaN, +Inf and -Inf among ordinary
values: [6, 37] (222 elements, odd rows, so the AVX2/AVX-512 bodies and their tails both
see non-finite values; row 0 is clean, rows 1-5 hold NaN / +Inf / -Inf / both infinities /
all three). Fusion patterns (MatMul + Add + Gelu + residual -> FusedMatMul, the scaled
masked softmax, self-attention, LayerNorm) are cases of their own, so the fused kernels see
the same values.

All cases of one opset form one model (one node per case, its own inputs and outputs), run by
onnxruntime-node 1.30 (scripts/parity/run_ort.js: optimizations disabled, one thread) and by
`glassbox run` at --opt-level 0 (one thread) and 2 (two threads). For every output:
  - the non-finite pattern must be equal: the same elements NaN, +Inf and -Inf;
  - finite elements close: |glassbox - ort| <= 1e-4 * max(max|ort finite|, 1);
  - integer and bool outputs exactly equal.
Where ONNX Runtime's own rule is surprising, the case's `note` says what it does; glassbox
follows it.

Usage: tests/numerics/nonfinite_peer.py GLASSBOX [CASE_PREFIX ...]   (exit 1 on any mismatch)
"""
import json
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

ROOT = Path(__file__).resolve().parents[2]
TOLERANCE = 1e-4
F32, F16, F64 = onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE
BOOL, I64, U8, I8 = onnx.TensorProto.BOOL, onnx.TensorProto.INT64, onnx.TensorProto.UINT8, onnx.TensorProto.INT8
NAN, INF = np.float32(np.nan), np.float32(np.inf)
ROWS, COLS = 6, 37
# (row, col, value): row 0 stays finite.
SPECIALS = [(1, 20, NAN), (2, 3, INF), (3, 35, -INF), (4, 8, INF), (4, 30, -INF),
            (5, 1, NAN), (5, 33, INF), (5, 17, -INF)]


def x_values(name, shape=(ROWS, COLS), scale=3.0, roll=0):
    """Uniform(-scale, scale) with the SPECIALS placed on the [ROWS, COLS] view (rolled by `roll`
    along columns for a second operand whose specials fall elsewhere), reshaped to `shape`."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    x = rng.uniform(-scale, scale, size=(ROWS, COLS)).astype(np.float32)
    for r, c, v in SPECIALS:
        x[r, (c + roll) % COLS] = v
    return x.reshape(shape)


def no_nan(x):
    x = x.copy()
    x[np.isnan(x)] = 0.25
    return x


def weights(name, *shape, scale=1.0):
    rng = np.random.default_rng(zlib.crc32(("w" + name).encode()))
    return rng.uniform(-scale, scale, size=shape).astype(np.float32)


def case(name, op, inputs, attrs=None, opset=13, outs=1, out_types=None, inits=None, note=None):
    """inputs: [(name, array or None for an absent optional input)]; inits: {name: array} constant
    inputs (initializers), following `inputs` in the node's input list. out_types default to the
    first float input's dtype."""
    names = [n if v is not None else "" for n, v in inputs] + list(inits or {})
    return dict(name=name, nodes=[(op, names,
                                   [f"y{i}" for i in range(outs)], attrs or {})],
                feeds={n: v for n, v in inputs if v is not None}, inits=inits or {}, opset=opset,
                outputs=[f"y{i}" for i in range(outs)], out_types=out_types, note=note)


def graph_case(name, nodes, feeds, outputs, inits=None, opset=13, out_types=None, note=None):
    """A small subgraph: nodes [(op, inputs, outputs, attrs)]."""
    return dict(name=name, nodes=nodes, feeds=feeds, inits=inits or {}, opset=opset, outputs=outputs,
                out_types=out_types, note=note)


# float16: only the ops glassbox computes in float16 (Max, Min, Cast); Relu, Exp, ReduceMax and Softmax
# refuse float16 by name (ONNX Runtime runs them), so they are not cases here; Softmax refuses float64 too.
UNARY = ["Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil", "Cos", "Cosh", "Erf", "Exp", "Floor",
         "Log", "Neg", "Reciprocal", "Relu", "Round", "Sigmoid", "Sign", "Sin", "Sinh", "Softplus", "Softsign",
         "Sqrt", "Tan", "Tanh", "Identity"]


def elementwise_cases():
    out = []
    for op in UNARY:
        out.append(case(op.lower(), op, [("x", x_values(op))]))
    out += [
        case("relu_f64", "Relu", [("x", x_values("relu64").astype(np.float64))]),
        case("sigmoid_f64", "Sigmoid", [("x", x_values("sig64").astype(np.float64))]),
        case("tanh_f64", "Tanh", [("x", x_values("tanh64").astype(np.float64))]),
        case("leakyrelu", "LeakyRelu", [("x", x_values("leaky"))], {"alpha": 0.1}),
        case("elu", "Elu", [("x", x_values("elu"))], {"alpha": 0.7}),
        case("selu", "Selu", [("x", x_values("selu"))]),
        case("celu", "Celu", [("x", x_values("celu"))], {"alpha": 1.5}),
        case("hardsigmoid", "HardSigmoid", [("x", x_values("hsig"))], {"alpha": 0.3, "beta": 0.4}),
        case("hardswish", "HardSwish", [("x", x_values("hswish"))], opset=14),
        case("thresholdedrelu", "ThresholdedRelu", [("x", x_values("trelu"))], {"alpha": 0.5}),
        case("shrink", "Shrink", [("x", x_values("shrink"))], {"bias": 0.3, "lambd": 0.6}),
        case("isnan", "IsNaN", [("x", x_values("isnan"))], out_types=[BOOL]),
        case("isinf", "IsInf", [("x", x_values("isinf"))], out_types=[BOOL]),
        case("isinf_negative_only", "IsInf", [("x", x_values("isinfn"))], {"detect_positive": 0}, out_types=[BOOL]),
        case("cast_f16", "Cast", [("x", x_values("cast16"))], {"to": F16}, out_types=[F16]),
        case("cast_f64", "Cast", [("x", x_values("cast64"))], {"to": F64}, out_types=[F64]),
        # Not compared: Cast float -> integer of NaN/Inf. ONNX leaves it undefined; ONNX Runtime's is x86's
        # cvttss2si (NaN, +Inf and -Inf all -> INT_MIN; uint8 takes the low byte, so -2.5 -> 254), glassbox
        # saturates as docs/kernels.md declares (NaN -> 0).
        case("cast_bool", "Cast", [("x", x_values("castb"))], {"to": BOOL}, out_types=[BOOL]),
        case("cast_f16_f32", "Cast", [("x", x_values("cast1632").astype(np.float16))], {"to": F32}, out_types=[F32]),
    ]
    # Binary: the second operand has its specials elsewhere (and NaN meeting NaN / Inf meeting -Inf
    # at a few places); also scalar broadcasts from either side.
    for op in ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "PRelu", "Equal", "Less",
               "Greater", "LessOrEqual", "GreaterOrEqual"]:
        a, b = x_values(op + "a"), x_values(op + "b", roll=2)
        b[1, 20], b[4, 8] = NAN, -INF  # NaN meets NaN; +Inf meets -Inf
        types = [BOOL] if op in ("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual") else None
        out.append(case(op.lower(), op, [("a", a), ("b", b)], out_types=types))
        if op != "PRelu":
            out.append(case(op.lower() + "_scalar_right", op, [("a", a), ("b", np.array([0.0], np.float32))],
                            out_types=types))
            out.append(case(op.lower() + "_scalar_left", op, [("b", np.array([0.0], np.float32)), ("a", a)],
                            out_types=types))
    m = x_values("max3c", roll=5)
    out += [
        case("max_three", "Max", [("a", x_values("max3a")), ("b", x_values("max3b", roll=1)), ("c", m)]),
        case("min_three", "Min", [("a", x_values("min3a")), ("b", x_values("min3b", roll=1)), ("c", m)]),
        case("max_f64", "Max", [("a", x_values("mx64a").astype(np.float64)), ("b", x_values("mx64b", roll=2).astype(np.float64))]),
        case("max_f16", "Max", [("a", x_values("mx16a").astype(np.float16)), ("b", x_values("mx16b", roll=2).astype(np.float16))]),
        case("min_f16_scalar", "Min", [("a", x_values("mn16a").astype(np.float16)), ("b", np.array([0.5], np.float16))]),
        case("prelu_channel_slope", "PRelu", [("x", x_values("prelu_c"))], inits={"s": weights("prelu_c", COLS)},
             note="slope broadcast along the last axis (per channel of [6, 37])"),
        case("mod_fmod", "Mod", [("a", x_values("moda")), ("b", x_values("modb", roll=3))], {"fmod": 1}),
        case("where", "Where", [("c", x_values("wherec") > 0), ("a", x_values("wherea")), ("b", x_values("whereb", roll=4))]),
    ]
    # Clip: bounds as attributes (opset 6) and as inputs (opset 13), one bound absent.
    out += [
        case("clip_opset6", "Clip", [("x", x_values("clip6"))], {"min": -1.0, "max": 1.5}, opset=6),
        case("clip_min_max", "Clip", [("x", x_values("clip13")), ("lo", np.array(-1.0, np.float32)),
                                      ("hi", np.array(1.5, np.float32))]),
        case("clip_min_only", "Clip", [("x", x_values("clipmin")), ("lo", np.array(0.0, np.float32))]),
        case("clip_max_only", "Clip", [("x", x_values("clipmax")), ("lo", None), ("hi", np.array(0.0, np.float32))]),
        case("clip_f64", "Clip", [("x", x_values("clip64").astype(np.float64)), ("lo", np.array(-1.0)),
                                  ("hi", np.array(1.0))]),
    ]
    return out


def reduction_cases():
    out = []
    for op in ["ReduceMax", "ReduceMin", "ReduceSum", "ReduceMean", "ReduceProd", "ReduceL1", "ReduceL2",
               "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]:
        lo = op.lower()
        x = x_values(lo)
        if op == "ReduceSum":  # axes became an input in opset 13
            out.append(case(lo + "_rows", op, [("x", x), ("axes", np.array([1], np.int64))]))
            out.append(case(lo + "_cols", op, [("x", x), ("axes", np.array([0], np.int64))], {"keepdims": 0}))
            out.append(case(lo + "_all", op, [("x", x)]))
            continue
        out.append(case(lo + "_rows", op, [("x", x)], {"axes": [1]}))
        out.append(case(lo + "_cols", op, [("x", x)], {"axes": [0], "keepdims": 0}))
        out.append(case(lo + "_all", op, [("x", x)]))
    out += [
        # roll 5: ONNX Runtime's float64 ReduceMax keeps a NaN at row position 0 or 1 (its 2-lane
        # vector order), skipping it elsewhere; glassbox skips it everywhere (docs/kernels.md).
        case("reducemax_f64_rows", "ReduceMax", [("x", x_values("rmax64", roll=5).astype(np.float64))], {"axes": [1]}),
        case("reducemin_mid_axis", "ReduceMin", [("x", x_values("rmin3", (3, 2, 37)))], {"axes": [1]}),
        case("argmax_rows", "ArgMax", [("x", x_values("argmax"))], {"axis": 1}, out_types=[I64]),
        case("argmin_cols", "ArgMin", [("x", x_values("argmin"))], {"axis": 0}, out_types=[I64]),
        case("cumsum_rows", "CumSum", [("x", x_values("cumsum")), ("axis", np.array(1, np.int64))]),
        # TopK with infinities only: ONNX Runtime's order with a NaN is undefined (its comparator is no strict
        # weak order then: a NaN lands mid-list); glassbox sorts NaN as the largest, as numpy does.
        case("topk_rows", "TopK", [("x", no_nan(x_values("topk"))), ("k", np.array([5], np.int64))], {"axis": 1},
             outs=2, out_types=[F32, I64]),
        case("topk_smallest_rows", "TopK", [("x", no_nan(x_values("topks"))), ("k", np.array([4], np.int64))],
             {"axis": 1, "largest": 0}, outs=2, out_types=[F32, I64]),
    ]
    return out


def softmax_cases():
    return [
        case("softmax_rows", "Softmax", [("x", x_values("softmax"))], {"axis": -1}),
        case("softmax_cols", "Softmax", [("x", x_values("softmaxc"))], {"axis": 0}),
        case("logsoftmax_rows", "LogSoftmax", [("x", x_values("logsoftmax"))], {"axis": -1}),
        case("hardmax_rows", "Hardmax", [("x", x_values("hardmax"))], {"axis": -1}),
        case("softmax_opset11_flatten", "Softmax", [("x", x_values("softmax11", (2, 3, 37)))], {"axis": 1}, opset=11),
    ]


def global_planes():
    """[1, 6, 2, 5]: a plane of -Inf, one of NaN, one of -Inf with a NaN, and NaN at lane ends and in the tail."""
    x = x_values("gplanes").ravel()[:60].reshape(1, 6, 2, 5).copy()
    x[0, 0] = -INF
    x[0, 1] = NAN
    x[0, 2] = -INF
    x[0, 2, 0, 1] = NAN
    x[0, 3, 0, 3] = NAN  # lane 3's first element, followed by 7
    x[0, 4, 1, 2] = NAN  # lane 3's last element (7)
    x[0, 5, 1, 4] = NAN  # the tail
    return x


def pool_norm_cases():
    x4 = np.stack([x_values("pool"), x_values("pool2", roll=7)])[None]  # [1, 2, 6, 37]
    x3 = x_values("pool1d", (1, ROWS, COLS))  # [1, 6, 37]: one channel per row
    return [
        case("maxpool_2d", "MaxPool", [("x", x4)], {"kernel_shape": [2, 3], "strides": [1, 2]}),
        case("maxpool_2d_pads_ceil", "MaxPool", [("x", x4)],
             {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2], "ceil_mode": 1}),
        case("maxpool_1d_indices", "MaxPool", [("x", x3)], {"kernel_shape": [4], "strides": [3]}, outs=2,
             out_types=[F32, I64]),
        case("maxpool_3x3_s1_pad1", "MaxPool", [("x", x4)], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
        case("maxpool_3x3_s2_pad1", "MaxPool", [("x", x4)], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]}),
        case("maxpool_dilated", "MaxPool", [("x", x4)], {"kernel_shape": [2, 2], "dilations": [2, 3]}),
        # ONNX Runtime picks one of three MLAS kernels by shape, each with its own NaN order: the vector
        # kernel (2D/3D, last stride <= 2, kernels <= 32: the cases above), the generic one (1D, a last
        # stride of 3, a kernel over 32) and the global one (the kernel covers the input, no pads).
        case("maxpool_1d", "MaxPool", [("x", x3)], {"kernel_shape": [4], "strides": [3]}),
        case("maxpool_2d_stride3", "MaxPool", [("x", x4)], {"kernel_shape": [2, 3], "strides": [1, 3]}),
        case("maxpool_2d_kernel33", "MaxPool", [("x", x4)], {"kernel_shape": [2, 33], "pads": [0, 1, 0, 1]}),
        case("maxpool_2d_whole", "MaxPool", [("x", x4)], {"kernel_shape": [6, 37]}),
        case("maxpool_3d", "MaxPool", [("x", x4.reshape(1, 1, 2, 6, 37))],
             {"kernel_shape": [2, 2, 3], "strides": [1, 1, 2], "pads": [0, 1, 1, 0, 1, 1]}),
        case("averagepool_2d", "AveragePool", [("x", x4)], {"kernel_shape": [2, 3], "strides": [1, 2]}),
        case("averagepool_pads_exclude", "AveragePool", [("x", x4)],
             {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 0}),
        case("globalmaxpool", "GlobalMaxPool", [("x", x3)]),
        case("globalmaxpool_4d", "GlobalMaxPool", [("x", x4)]),
        # MLAS's global kernel: four lanes from the lowest float (a plane of -Inf gives -3.4e38), a NaN kept
        # only as its lane's last element, the tail by std::max (a NaN there skipped); planes of 10 elements.
        case("globalmaxpool_planes", "GlobalMaxPool", [("x", global_planes())]),
        case("globalaveragepool", "GlobalAveragePool", [("x", x3)]),
        case("layernormalization", "LayerNormalization", [("x", x_values("ln")), ("g", weights("lng", COLS)),
                                                          ("b", weights("lnb", COLS))], {"axis": -1}, opset=17),
        case("batchnormalization", "BatchNormalization",
             [("x", x3), ("s", weights("bns", ROWS)), ("b", weights("bnb", ROWS)), ("m", weights("bnm", ROWS)),
              ("v", np.abs(weights("bnv", ROWS)) + 0.5)], opset=15),
        case("instancenormalization", "InstanceNormalization",
             [("x", x3), ("s", weights("ins", ROWS)), ("b", weights("inb", ROWS))]),
        case("lpnormalization_l2", "LpNormalization", [("x", x_values("lp2"))], {"axis": -1, "p": 2}),
        case("lpnormalization_l1", "LpNormalization", [("x", x_values("lp1"))], {"axis": -1, "p": 1}),
        case("meanvariancenormalization", "MeanVarianceNormalization", [("x", x_values("mvn", (1, ROWS, 1, COLS)))],
             {"axes": [0, 2, 3]}),
        case("lrn", "LRN", [("x", x_values("lrn", (1, ROWS, 1, COLS)))], {"size": 3}),
    ]


def linear_cases():
    a = x_values("mm")
    return [
        case("matmul", "MatMul", [("a", a), ("w", weights("mm", COLS, 5))]),
        case("matmul_const_weights", "MatMul", [("a", x_values("mmc"))], inits={"w": weights("mmc", COLS, 9)}),
        case("gemm_transb_bias", "Gemm", [("a", x_values("gemm"))],
             {"transB": 1, "alpha": 0.5, "beta": 2.0}, inits={"w": weights("gemm", 7, COLS), "c": weights("gemmc", 7)}),
        case("gemm_nonfinite_weights", "Gemm", [("a", weights("gemma", 3, ROWS)), ("b", x_values("gemmb"))]),
        case("conv_1x3", "Conv", [("x", x_values("conv", (1, ROWS, 1, COLS)))], {"pads": [0, 1, 0, 1]},
             inits={"w": weights("conv", 4, ROWS, 1, 3), "b": weights("convb", 4)}),
        case("conv_depthwise", "Conv", [("x", x_values("convdw", (1, ROWS, 1, COLS)))], {"group": ROWS},
             inits={"w": weights("convdw", ROWS, 1, 1, 3)}),
        case("convtranspose", "ConvTranspose", [("x", x_values("convt", (1, ROWS, 1, COLS)))],
             {"strides": [1, 2]}, inits={"w": weights("convt", ROWS, 2, 1, 3)}),
        case("einsum_ij_jk", "Einsum", [("a", x_values("ein")), ("b", weights("ein", COLS, 4))],
             {"equation": "ij,jk->ik"}),
        case("resize_linear", "Resize", [("x", x_values("resize", (1, 1, ROWS, COLS))), ("roi", None),
                                         ("scales", np.array([1, 1, 1.5, 0.7], np.float32))], {"mode": "linear"}),
        case("resize_nearest", "Resize", [("x", x_values("resizen", (1, 1, ROWS, COLS))), ("roi", None),
                                          ("scales", np.array([1, 1, 2, 0.5], np.float32))], {"mode": "nearest"}),
    ]


def fusion_cases():
    """Patterns the opt-level-2 passes fuse; the same cases also run unfused at level 0."""
    C = COLS
    gelu = [("Div", ["g_x", "g_sqrt2"], ["g_d"], {}), ("Erf", ["g_d"], ["g_e"], {}),
            ("Add", ["g_e", "g_one"], ["g_p"], {}), ("Mul", ["g_x", "g_p"], ["g_m"], {}),
            ("Mul", ["g_m", "g_half"], ["g_y"], {})]
    gelu_inits = {"g_sqrt2": np.array(np.sqrt(2), np.float32), "g_one": np.array(1, np.float32),
                  "g_half": np.array(0.5, np.float32)}
    lin = [("MatMul", ["l_a", "l_w"], ["l_mm"], {}), ("Add", ["l_mm", "l_b"], ["l_x"], {})]
    lin_gelu = lin + [(op, [i.replace("g_x", "l_x") for i in ins], outs, at) for op, ins, outs, at in gelu]
    lin_gelu.append(("Add", ["g_y", "l_r"], ["l_y"], {}))
    N = 40
    ln_nodes = [("ReduceMean", ["n_x"], ["n_m"], {"axes": [-1]}), ("Sub", ["n_x", "n_m"], ["n_d"], {}),
                ("Pow", ["n_d", "n_two"], ["n_p"], {}), ("ReduceMean", ["n_p"], ["n_v"], {"axes": [-1]}),
                ("Add", ["n_v", "n_eps"], ["n_ve"], {}), ("Sqrt", ["n_ve"], ["n_s"], {}),
                ("Div", ["n_d", "n_s"], ["n_q"], {}), ("Mul", ["n_q", "n_g"], ["n_qg"], {}),
                ("Add", ["n_qg", "n_b"], ["n_y"], {})]
    mask = np.zeros((1, 1, 1, C), np.float32)
    mask[..., -3:] = -10000.0
    return [
        graph_case("fused_gelu", gelu, {"g_x": x_values("gelu")}, ["g_y"], gelu_inits),
        graph_case("fused_matmul_bias", lin, {"l_a": x_values("fmm")}, ["l_x"],
                   {"l_w": weights("fmm", C, N), "l_b": weights("fmmb", N)}),
        graph_case("fused_matmul_bias_gelu_residual", lin_gelu,
                   {"l_a": x_values("fmmg"), "l_r": np.concatenate([x_values("fmmr"), x_values("fmmr2")[:, :N - C]], 1)},
                   ["l_y"], dict(gelu_inits, l_w=weights("fmmg", C, N), l_b=weights("fmmgb", N))),
        graph_case("fused_matmul_bias_relu", lin + [("Relu", ["l_x"], ["l_y"], {})], {"l_a": x_values("fmmrelu")},
                   ["l_y"], {"l_w": weights("fmmrelu", C, N), "l_b": weights("fmmrelub", N)}),
        graph_case("fused_scaled_masked_softmax",
                   [("Div", ["s_s", "s_c"], ["s_d"], {}), ("Add", ["s_d", "s_mask"], ["s_a"], {}),
                    ("Softmax", ["s_a"], ["s_y"], {"axis": -1})],
                   {"s_s": x_values("sms", (1, 2, 3, C)), "s_mask": mask}, ["s_y"], {"s_c": np.array(8, np.float32)}),
        graph_case("fused_layernorm", ln_nodes, {"n_x": x_values("fln")}, ["n_y"],
                   {"n_two": np.array(2, np.float32), "n_eps": np.array(1e-5, np.float32),
                    "n_g": weights("flng", C), "n_b": weights("flnb", C)}),
        attention_case("fused_attention", masked_nan=False),
        attention_case("fused_attention_nan_in_masked_key", masked_nan=True),
    ]


def attention_case(name, masked_nan):
    """masked_nan: the NaN value sits in the key the mask removes (-10000): its softmax weight is 0,
    and 0 * NaN is NaN, so ONNX Runtime's output holds it; skipping masked keys must not hide it."""
    B, S, H, D = 1, 6, 2, 8
    rng_q = x_values("attq", (ROWS * COLS,))[: B * S * H * D].reshape(B, S, H * D)
    k = weights("attk", B, S, H * D, scale=2.0)
    v = weights("attv", B, S, H * D, scale=2.0)
    if not masked_nan:
        k[0, 4, 3] = INF   # +Inf key: scores of that key become +-Inf (NaN through softmax)
    v[0, 5 if masked_nan else 2, 9] = NAN   # NaN value: reaches every query's output of head 1
    shape = np.array([B, S, H, D], np.int64)
    nodes = [("Reshape", ["t_q", "t_shape"], ["t_q4"], {}), ("Transpose", ["t_q4"], ["t_qt"], {"perm": [0, 2, 1, 3]}),
             ("Reshape", ["t_k", "t_shape"], ["t_k4"], {}), ("Transpose", ["t_k4"], ["t_kt"], {"perm": [0, 2, 3, 1]}),
             ("Reshape", ["t_v", "t_shape"], ["t_v4"], {}), ("Transpose", ["t_v4"], ["t_vt"], {"perm": [0, 2, 1, 3]}),
             ("MatMul", ["t_qt", "t_kt"], ["t_s"], {}), ("Div", ["t_s", "t_c"], ["t_sd"], {}),
             ("Add", ["t_sd", "t_mask"], ["t_sm"], {}), ("Softmax", ["t_sm"], ["t_p"], {"axis": -1}),
             ("MatMul", ["t_p", "t_vt"], ["t_o"], {}), ("Transpose", ["t_o"], ["t_y"], {"perm": [0, 2, 1, 3]})]
    mask = np.zeros((B, 1, 1, S), np.float32)
    mask[..., -1] = -10000.0
    return graph_case(name, nodes, {"t_q": rng_q, "t_k": k, "t_v": v, "t_mask": mask}, ["t_y"],
                      {"t_shape": shape, "t_c": np.array(np.sqrt(D), np.float32)})


def quant_cases():
    nan_only = x_values("dqlnan")
    nan_only[np.isinf(nan_only)] = 0.5  # NaN among finite values: the range skips it
    return [
        case("dynamicquantizelinear_nan", "DynamicQuantizeLinear", [("x", nan_only)], opset=11, outs=3,
             out_types=[U8, F32, U8]),
        case("quantizelinear_u8", "QuantizeLinear", [("x", x_values("ql")), ("s", np.array(0.05, np.float32)),
                                                     ("z", np.array(128, np.uint8))], out_types=[U8]),
        case("quantizelinear_s8", "QuantizeLinear", [("x", x_values("qls")), ("s", np.array(0.05, np.float32)),
                                                     ("z", np.array(-3, np.int8))], out_types=[I8]),
    ]


def cases():
    return elementwise_cases() + reduction_cases() + softmax_cases() + pool_norm_cases() + linear_cases() + \
        fusion_cases() + quant_cases()


def dtype_of(arr):
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[arr.dtype]


def build_group(group, opset, d):
    """One model holding every case of `group` (same opset); names prefixed by the case index."""
    nodes, ins, outs, inits, feeds, out_map = [], [], [], [], {}, []
    for ci, c in enumerate(group):
        p = f"c{ci}_"
        ren = lambda n: p + n if n else ""
        for op, i_names, o_names, attrs in c["nodes"]:
            nodes.append(helper.make_node(op, [ren(n) for n in i_names], [ren(n) for n in o_names],
                                          name=f"{p}{op}_{len(nodes)}", **attrs))
        for n, v in c["feeds"].items():
            ins.append(helper.make_tensor_value_info(ren(n), dtype_of(v), v.shape))
            feeds[ren(n)] = v
        for n, v in c["inits"].items():
            inits.append(numpy_helper.from_array(v, ren(n)))
        first = next(v for v in c["feeds"].values() if v.dtype.kind == "f")
        types = c["out_types"] or [dtype_of(first)] * len(c["outputs"])
        for k, (n, t) in enumerate(zip(c["outputs"], types)):
            outs.append(helper.make_tensor_value_info(ren(n), t, None))
            out_map.append((c["name"], k))
    graph = helper.make_graph(nodes, f"nonfinite_opset{opset}", ins, outs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    for o in model.graph.output:  # the checker wants a shape on every graph output
        if not o.type.tensor_type.HasField("shape"):
            o.CopyFrom(helper.make_tensor_value_info(o.name, o.type.tensor_type.elem_type, [f"{o.name}_n"]))
    onnx.checker.check_model(model)
    path = d / f"opset{opset}.onnx"
    onnx.save(model, path)
    specs = []
    for n, v in feeds.items():
        np.save(d / f"{n}.npy", v)
        specs.append(f"{n}={d / (n + '.npy')}")
    return path, specs, out_map


def pattern(a):
    return np.where(np.isnan(a), 1, 0) + np.where(np.isposinf(a), 2, 0) + np.where(np.isneginf(a), 3, 0)


def compare(got, ref):
    if got.dtype != ref.dtype or got.shape != ref.shape:
        return f"{got.dtype}{list(got.shape)} vs ort {ref.dtype}{list(ref.shape)}"
    if not np.issubdtype(ref.dtype, np.floating):
        bad = np.flatnonzero(got != ref)
        return None if bad.size == 0 else f"{bad.size} elements differ, first at {bad[0]}: {got.flat[bad[0]]} vs ort {ref.flat[bad[0]]}"
    g, r = got.astype(np.float64), ref.astype(np.float64)
    pg, pr = pattern(g), pattern(r)
    bad = np.flatnonzero(pg != pr)
    if bad.size:
        i = bad[0]
        return f"non-finite pattern differs at {bad.size} elements, first at {i}: {g.flat[i]} vs ort {r.flat[i]}"
    fin = np.isfinite(r)
    diff = float(np.max(np.abs(g[fin] - r[fin]), initial=0.0))
    scale = max(float(np.max(np.abs(r[fin]), initial=0.0)), 1.0)
    return None if diff <= TOLERANCE * scale else f"max|diff| {diff:.3g} on finite elements (scale {scale:.3g})"


# Declared differences, each with its reason: reported as KNOWN, not failed; a case listed here that
# passes fails the test (XPASS), so the list only shrinks. The one left is deliberate: following ONNX
# Runtime there would hide a NaN, the trap issue 32 exists to close.
KNOWN = {
    "reducelogsumexp_all": "ReduceLogSumExp over every element: ONNX Runtime 1.30's reduce-all path answers +Inf for "
                           "an input holding NaN and +Inf (measured on 64 and 222 elements; NaN as the first element or "
                           "NaN with only -Inf: NaN), so a NaN is hidden; its per-axis path answers NaN for the same rows "
                           "(reducelogsumexp_rows), and glassbox answers NaN on both (docs/kernels.md)",
}

RUNS = [("opt0", ["--opt-level", "0", "--threads", "1"]), ("opt2", ["--opt-level", "2", "--threads", "2"])]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    glassbox, prefixes = sys.argv[1], sys.argv[2:]
    selected = [c for c in cases() if not prefixes or any(c["name"].startswith(p) for p in prefixes)]
    groups = {}
    for c in selected:
        groups.setdefault(c["opset"], []).append(c)
    failed, checked = 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for opset, group in sorted(groups.items()):
            d = Path(tmp) / f"opset{opset}"
            (d / "ort").mkdir(parents=True)
            model, specs, out_map = build_group(group, opset, d)
            ort = subprocess.run(["node", str(ROOT / "scripts/parity/run_ort.js"), str(model), str(d / "ort")] + specs,
                                 capture_output=True, text=True)
            if ort.returncode:
                print(f"FAIL opset {opset}: onnxruntime failed: {ort.stderr.strip()[-600:]}")
                failed += 1
                continue
            for label, flags in RUNS:
                (d / label).mkdir()
                gb = subprocess.run([glassbox, "run", str(model), "--output-dir", str(d / label)] + flags +
                                    sum([["--input", s] for s in specs], []), capture_output=True, text=True)
                if gb.returncode:
                    print(f"FAIL opset {opset} {label}: glassbox failed: {(gb.stderr or gb.stdout).strip()[-600:]}")
                    failed += 1
                    continue
                for i, (name, k) in enumerate(out_map):
                    why = compare(np.load(d / label / f"output_{i}.npy"), np.load(d / "ort" / f"output_{i}.npy"))
                    checked += 1
                    if why and name in KNOWN:
                        print(f"KNOWN {name} output {k} {label}: {why} ({KNOWN[name]})")
                    elif name in KNOWN and k == 0:
                        failed += 1
                        print(f"XPASS {name} {label}: equal to ONNX Runtime now: remove it from KNOWN")
                    elif why:
                        failed += 1
                        print(f"FAIL {name} output {k} {label}: {why}")
            print(f"opset {opset}: {len(group)} cases x {len(RUNS)} runs")
    print(f"{checked} outputs checked, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
