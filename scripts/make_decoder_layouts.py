#!/usr/bin/python3
"""The tiny decoders of make_decoder_models.py in the other layouts users download (issue #28).

  <base>_merged/          Optimum's legacy merged layout: decoder_model_merged.onnx = one If
                          (`optimum::if`) on the bool input use_cache_branch [1];
                          then_branch = the with-past decoder, else_branch = the no-cache decoder
                          (exported without past inputs, as Optimum's decoder_model.onnx).
                          Initializers are de-duplicated across the branches and hoisted to the
                          outer graph, except small 0-d/1-d integer ones, which stay in their
                          branch (optimum/onnx/graph_transformations.py::merge_decoders does both).
                          Every past_key_values.* input stays required: the first step feeds dummies
                          (zero-length, as transformers.js and current Optimum; old Optimum fed
                          length 1) with use_cache_branch false.
  <base>_int8/            Optimum's current layout (model.onnx), MatMuls quantized as
                          onnxruntime.quantization.quantize_dynamic writes them (scripts/quantize_model.py
                          --mode dynamic: DynamicQuantizeLinear + MatMulInteger, per-tensor int8 weights).
  <base>_q4/              Optimum's current layout with every MatMul on a constant weight (lm_head included)
                          as com.microsoft MatMulNBits, 4 bits, block 32, symmetric, no accuracy_level: what
                          MatMulNBitsQuantizer's defaults write (transformers.js `_q4`; scripts/quantize_n_bits.py).
  <base>_merged_q4/       the legacy merged layout with both branches so quantized.
  <base>_merged_int8/     the legacy merged layout with both branches quantized so (transformers.js
                          `_quantized`), written as onnx/decoder_model_merged_quantized.onnx AND
                          onnx/model.onnx (transformers.js v3 renamed the merged file to model.onnx).

<base> is llama_tiny (151k vocabulary, GQA, RoPE) and gpt2_tiny (21k vocabulary). The tokenizer
and config files are those of make_decoder_models.py. Weights are the same seeded random ones.
Usage: scripts/make_decoder_layouts.py [--out DIR] [--only NAME ...]
"""
import argparse
import hashlib
import importlib.util
import os
import shutil
import sys

import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_decoder_models as mdm  # noqa: E402

_spec = importlib.util.spec_from_file_location("quantize_model", os.path.join(HERE, "quantize_model.py"))
quantize_model = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(quantize_model)
_spec = importlib.util.spec_from_file_location("quantize_n_bits", os.path.join(HERE, "quantize_n_bits.py"))
quantize_n_bits = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(quantize_n_bits)

BASES = {"llama_tiny": (mdm.build_llama, mdm.LLAMA, mdm.make_llama),
         "gpt2_tiny": (mdm.build_gpt2, mdm.GPT2, mdm.make_gpt2)}


def export_no_past(model, c, path):
    """Optimum's decoder_model.onnx: no past inputs, present.* outputs; dummies batch 2, sequence 3."""
    model.eval()
    b, s = 2, 3
    ids = torch.randint(0, c["vocab"], (b, s))
    mask = torch.ones(b, s, dtype=torch.int64)
    pos = torch.arange(0, s).unsqueeze(0).expand(b, s).contiguous()
    names_in = ["input_ids", "attention_mask", "position_ids"]
    names_out = ["logits"]
    axes = {n: {0: "batch_size", 1: "sequence_length"} for n in names_in + names_out}
    for i in range(c["layers"]):
        for kv in ("key", "value"):
            names_out.append(f"present.{i}.{kv}")
            axes[f"present.{i}.{kv}"] = {0: "batch_size", 2: "sequence_length"}
    with torch.no_grad():
        torch.onnx.export(model, (ids, mask, pos), path, input_names=names_in, output_names=names_out,
                          dynamic_axes=axes, opset_version=14, do_constant_folding=True)


def quantize(model):
    """quantize_model.py's dynamic rewrite (ORT quantize_dynamic's MatMul form) on one graph."""
    args = argparse.Namespace(mode="dynamic", per_channel=False, act_range=[-8.0, 8.0], ranges=None)
    count = quantize_model.Rewriter(model, args).run()
    assert count > 0, "no MatMul quantized"
    return model


def quantize_q4(model):
    """MatMulNBitsQuantizer's defaults: 4 bits, block 32, symmetric, accuracy_level unset."""
    args = argparse.Namespace(bits=4, block_size=32, asymmetric=False, accuracy_level=None)
    assert quantize_n_bits.quantize_model(model, args) > 0, "no MatMul quantized"
    return model


def stays_in_branch(t):
    """Optimum keeps small integer constants (shapes, axes) in the subgraph that uses them."""
    ints = (TensorProto.INT64, TensorProto.INT32)
    return t.data_type in ints and len(t.dims) <= 1


def hoist(branch, outer_inits, by_content, tag):
    """Moves branch initializers to the outer graph, sharing identical ones; renames references."""
    rename, keep = {}, []
    for t in branch.initializer:
        if stays_in_branch(t):
            keep.append(t)
            continue
        key = hashlib.sha256(numpy_helper.to_array(t).tobytes()).hexdigest() + str(t.data_type) + str(list(t.dims))
        if key in by_content:
            rename[t.name] = by_content[key]
            continue
        name = t.name if t.name not in outer_inits else f"{t.name}_{tag}"
        t2 = onnx.TensorProto()
        t2.CopyFrom(t)
        t2.name = name
        outer_inits[name] = t2
        by_content[key] = name
        rename[t.name] = name
    del branch.initializer[:]
    branch.initializer.extend(keep)
    for n in branch.node:
        for i, x in enumerate(n.input):
            if x in rename:
                n.input[i] = rename[x]
    for o in branch.output:
        assert o.name not in rename, "a branch output is an initializer"
    return branch


def merge(no_past, with_past):
    """Optimum's merge_decoders: If(use_cache_branch) then with_past else no_past."""
    outer_inits, by_content = {}, {}
    then_g, else_g = onnx.GraphProto(), onnx.GraphProto()
    then_g.CopyFrom(with_past.graph)
    else_g.CopyFrom(no_past.graph)
    for g, name in ((then_g, "with_past"), (else_g, "no_past")):
        hoist(g, outer_inits, by_content, name)
        del g.input[:]
        g.name = name
    assert [o.name for o in then_g.output] == [o.name for o in else_g.output]
    node = helper.make_node("If", ["use_cache_branch"], [o.name for o in with_past.graph.output], name="optimum::if",
                            then_branch=then_g, else_branch=else_g)
    inputs = list(with_past.graph.input) + [helper.make_tensor_value_info("use_cache_branch", TensorProto.BOOL, [1])]
    graph = helper.make_graph([node], "merged_decoder", inputs, list(with_past.graph.output),
                              initializer=list(outer_inits.values()))
    model = helper.make_model(graph, opset_imports=list(with_past.opset_import), producer_name="make_decoder_layouts.py")
    model.ir_version = with_past.ir_version
    onnx.checker.check_model(model)
    return model


def base_dir(out, base):
    """The base model directory (tokenizer, config): made by make_decoder_models.py if absent."""
    d = os.path.join(out, base)
    if not os.path.exists(os.path.join(d, "model.onnx")):
        BASES[base][2](out)
    return d


def copy_files(src, dst):
    os.makedirs(dst, exist_ok=True)
    for f in os.listdir(src):
        if f.endswith(".json"):
            shutil.copyfile(os.path.join(src, f), os.path.join(dst, f))


def make(out, base, variant):
    src = base_dir(out, base)
    build, c, _ = BASES[base]
    d = os.path.join(out, f"{base}_{variant}")
    shutil.rmtree(d, ignore_errors=True)
    copy_files(src, d)
    with_past = onnx.load(os.path.join(src, "model.onnx"))
    if variant in ("int8", "q4"):
        onnx.save((quantize if variant == "int8" else quantize_q4)(with_past), os.path.join(d, "model.onnx"))
        return d
    tmp = os.path.join(d, "decoder_model.onnx")
    export_no_past(build(), c, tmp)
    no_past = onnx.load(tmp)
    os.remove(tmp)
    if variant == "merged":
        onnx.save(merge(no_past, with_past), os.path.join(d, "decoder_model_merged.onnx"))
    elif variant == "merged_q4":
        onnx.save(merge(quantize_q4(no_past), quantize_q4(with_past)), os.path.join(d, "decoder_model_merged.onnx"))
    else:  # merged_int8
        merged = merge(quantize(no_past), quantize(with_past))
        os.makedirs(os.path.join(d, "onnx"))
        onnx.save(merged, os.path.join(d, "onnx", "decoder_model_merged_quantized.onnx"))
        onnx.save(merged, os.path.join(d, "onnx", "model.onnx"))
    return d


VARIANTS = ("merged", "int8", "merged_int8", "q4", "merged_q4")
MODELS = {f"{b}_{v}": (b, v) for b in BASES for v in VARIANTS}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(mdm.ROOT, "tests", "data", "generated"))
    ap.add_argument("--only", nargs="*", choices=sorted(MODELS))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.only or sorted(MODELS):
        print(make(args.out, *MODELS[name]))


if __name__ == "__main__":
    sys.exit(main())
