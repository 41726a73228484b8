#!/usr/bin/python3
"""Bytes of weights one decode step reads per sequence (issue 28's bandwidth bound), from the model file itself.

Every constant initializer is read whole once per decode step (batch 1), except the table of a Gather (the token
embedding): one row per token. KV cache reads are excluded (reported separately as bytes per cached token).
Usage: bench/generation/weight_bytes.py MODEL_DIR [--read-gb-per-s X]
Prints JSON: total initializer bytes, bytes read per token, and with --read-gb-per-s the tokens/s bound.
"""
import argparse
import json
import os
import sys

import numpy as np
import onnx
from onnx import mapping

def tensor_bytes(t):
    n = int(np.prod(t.dims)) if len(t.dims) else 1
    return n * np.dtype(mapping.TENSOR_TYPE_TO_NP_TYPE[t.data_type]).itemsize


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir")
    ap.add_argument("--read-gb-per-s", type=float)
    a = ap.parse_args()
    path = os.path.join(a.model_dir, "model.onnx")
    m = onnx.load(path, load_external_data=False)
    inits = {t.name: t for t in m.graph.initializer}
    gather_tables = {n.input[0] for n in m.graph.node if n.op_type == "Gather" and n.input[0] in inits}
    total = sum(tensor_bytes(t) for t in inits.values())
    per_token = 0
    for name, t in inits.items():
        b = tensor_bytes(t)
        per_token += b // t.dims[0] if name in gather_tables and len(t.dims) else b
    cfg = json.load(open(os.path.join(a.model_dir, "config.json")))
    hd = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    kv_per_token = 2 * cfg["num_hidden_layers"] * cfg["num_key_value_heads"] * hd * 4
    out = {"model": path, "initializer_bytes": total, "weight_bytes_read_per_token": per_token,
           "gather_tables": sorted(gather_tables), "kv_bytes_per_cached_token": kv_per_token}
    if a.read_gb_per_s:
        out["read_gb_per_s"] = a.read_gb_per_s
        out["bound_tokens_per_s_batch1"] = a.read_gb_per_s * 1e9 / per_token
    print(json.dumps(out))


if __name__ == "__main__":
    sys.exit(main())
