#!/usr/bin/env python3
"""Small ONNX models for the server tests, written with python3-onnx into OUT_DIR:

  dtypes/model.onnx         one input per OIP datatype (FP32 gets +1, BOOL is negated, the rest pass through)
  dtypes_typed/model.onnx   the same without FP16: every input has a typed gRPC field (test_grpc.py)
  slow/model.onnx           input n (INT64 scalar): a Loop of n additions, so a request takes as long as asked
  warmup_fails/             Reshape of X[N] to [2, -1] with a declared warm-up of N = 3 (glassbox.json): the declared
                            warm-up fails, so the model never turns ready
  reshape/model.onnx        the same graph, no declaration: the derived warm-up (N = 1) fails, while even N compute
  nonfinite/model.onnx      Y = Log(X): negative inputs give NaN, zero gives -Inf
  hidden_nan/model.onnx     Y = Where(isfinite(Log(X)), Log(X), 0): node "log" makes NaN/-Inf that the output hides
  nonfinite_half/model.onnx Y16 = Cast<float16>(X), YBF16 = Cast<bfloat16>(X): overflow gives +Inf
  text models: langid copies with glassbox.json edited (strict = no truncation policy, embed = vectors)

Usage: make_server_models.py OUT_DIR SOURCE_ROOT
"""
import json
import os
import shutil
import sys

import onnx
from onnx import TensorProto, helper

OPSET = [helper.make_opsetid("", 17)]


def save(model, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    onnx.checker.check_model(model)
    onnx.save(model, path)


DTYPES = [
    ("fp32", TensorProto.FLOAT), ("fp64", TensorProto.DOUBLE), ("fp16", TensorProto.FLOAT16),
    ("int8", TensorProto.INT8), ("int16", TensorProto.INT16), ("int32", TensorProto.INT32), ("int64", TensorProto.INT64),
    ("uint8", TensorProto.UINT8), ("uint16", TensorProto.UINT16), ("uint32", TensorProto.UINT32),
    ("uint64", TensorProto.UINT64), ("bool", TensorProto.BOOL),
]


def dtypes_model(skip=()):
    nodes, inputs, outputs, inits = [], [], [], [helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])]
    for name, t in DTYPES:
        if name in skip:
            continue
        shape = ["n", 4] if name == "fp32" else ["n"]
        inputs.append(helper.make_tensor_value_info("in_" + name, t, shape))
        outputs.append(helper.make_tensor_value_info("out_" + name, t, shape))
        op = "Add" if name == "fp32" else "Not" if name == "bool" else "Identity"
        ins = ["in_" + name, "one"] if op == "Add" else ["in_" + name]
        nodes.append(helper.make_node(op, ins, ["out_" + name]))
    g = helper.make_graph(nodes, "dtypes", inputs, outputs, inits)
    return helper.make_model(g, opset_imports=OPSET)


def slow_model():
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]), helper.make_node("Add", ["x_in", "step"], ["x_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []), helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_in", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), helper.make_tensor_value_info("x_out", TensorProto.FLOAT, [1])],
        [helper.make_tensor("step", TensorProto.FLOAT, [1], [1.0])])
    g = helper.make_graph(
        [helper.make_node("Loop", ["n", "cond", "x0"], ["count"], body=body)], "slow",
        [helper.make_tensor_value_info("n", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("count", TensorProto.FLOAT, [1])],
        [helper.make_tensor("cond", TensorProto.BOOL, [], [True]), helper.make_tensor("x0", TensorProto.FLOAT, [1], [0.0])])
    return helper.make_model(g, opset_imports=OPSET)


def warmup_fails_model():
    g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])], "warmup_fails",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, None])],
        [helper.make_tensor("shape", TensorProto.INT64, [2], [2, -1])])
    return helper.make_model(g, opset_imports=OPSET)


def nonfinite_model():
    g = helper.make_graph(
        [helper.make_node("Log", ["x"], ["y"])], "nonfinite",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])])
    return helper.make_model(g, opset_imports=OPSET)


def hidden_nan_model():
    """A NaN the outputs never show: Log writes NaN for x < 0 (and -Inf for 0), a Where replaces it by 0.
    Only an observer of the nodes (serve --numerics-check) can count it."""
    g = helper.make_graph(
        [helper.make_node("Log", ["x"], ["l"], name="log"),
         helper.make_node("IsNaN", ["l"], ["is_nan"], name="is_nan"),
         helper.make_node("IsInf", ["l"], ["is_inf"], name="is_inf"),
         helper.make_node("Or", ["is_nan", "is_inf"], ["bad"], name="bad"),
         helper.make_node("Where", ["bad", "zero", "l"], ["y"], name="hide")], "hidden_nan",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])])
    return helper.make_model(g, opset_imports=OPSET)


def nonfinite_half_model():
    """float16 and bfloat16 outputs that overflow to +Inf (float16 above 65504, bfloat16 above ~3.39e38):
    the non-finite scan behind glassbox_nonfinite_outputs_total must see them too."""
    g = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["y16"], to=TensorProto.FLOAT16),
         helper.make_node("Cast", ["x"], ["ybf16"], to=TensorProto.BFLOAT16)], "nonfinite_half",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("y16", TensorProto.FLOAT16, ["n"]),
         helper.make_tensor_value_info("ybf16", TensorProto.BFLOAT16, ["n"])])
    return helper.make_model(g, opset_imports=OPSET)


def langid_copy(src, dst, edit):
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    for f in ("model.onnx", "tokenizer.json", "tokenizer_config.json", "config.json", "glassbox.json"):
        shutil.copy(os.path.join(src, f), os.path.join(dst, f))
    path = os.path.join(dst, "glassbox.json")
    with open(path) as fh:
        g = json.load(fh)
    edit(g)
    with open(path, "w") as fh:
        json.dump(g, fh, indent=1)


def main():
    out, root = sys.argv[1], sys.argv[2]
    save(dtypes_model(), os.path.join(out, "dtypes", "model.onnx"))
    save(dtypes_model(skip=("fp16",)), os.path.join(out, "dtypes_typed", "model.onnx"))
    save(slow_model(), os.path.join(out, "slow", "model.onnx"))
    save(warmup_fails_model(), os.path.join(out, "warmup_fails", "model.onnx"))
    with open(os.path.join(out, "warmup_fails", "glassbox.json"), "w") as fh:
        json.dump({"warmup": {"inputs": {"x": {"dims": [3], "fill": "zeros"}}}}, fh)
    save(warmup_fails_model(), os.path.join(out, "reshape", "model.onnx"))
    save(nonfinite_model(), os.path.join(out, "nonfinite", "model.onnx"))
    save(nonfinite_half_model(), os.path.join(out, "nonfinite_half", "model.onnx"))
    save(hidden_nan_model(), os.path.join(out, "hidden_nan", "model.onnx"))
    langid = os.path.join(root, "models", "langid")

    def strict(g):
        g["truncation"] = {"enabled": False}

    def embed(g):
        g.update({"task": "embed", "pooling": "none", "normalize": False})
        g.pop("abstain_below", None)  # a classifier's declaration: an embedding model refuses it
        g["truncation"] = {"enabled": False}

    langid_copy(langid, os.path.join(out, "langid_strict"), strict)
    langid_copy(langid, os.path.join(out, "langid_embed"), embed)


if __name__ == "__main__":
    main()
