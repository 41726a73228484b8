#!/usr/bin/python3
"""The rerank benchmark's cross-encoder: MiniLM-L6-shaped (6 layers, hidden 384, 12 heads, intermediate 1536,
512 positions, the shape of cross-encoder/ms-marco-MiniLM-L-6-v2) with a one-logit head and random weights,
exported by torch.onnx (scripts/make_test_models.py's Encoder) into OUT/onnx/model.onnx, where glassbox and
transformers.js read it. OUT must already hold the tokenizer and configs of
`node bench/server/make_model_dir.js OUT --no-model --labels LABEL_0` (its vocabulary has 30522 entries);
config.json gets sentence-transformers v4's activation record (Sigmoid), as a published CrossEncoder has it.
Usage: bench/server/make_rerank_model.py OUT
"""
import json
import os
import sys

import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from make_test_models import Config, Encoder, export_module  # noqa: E402


def main():
    out = sys.argv[1]
    cfg = Config(vocab=30522, hidden=384, layers=6, heads=12, intermediate=1536, max_pos=512, num_labels=1)
    torch.manual_seed(7)
    model = Encoder(cfg).eval()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.05)
    os.makedirs(os.path.join(out, "onnx"), exist_ok=True)
    export_module(model, cfg, 14, os.path.join(out, "onnx", "model.onnx"))
    path = os.path.join(out, "config.json")
    with open(path) as f:
        config = json.load(f)
    config.update({"hidden_size": 384, "num_hidden_layers": 6, "num_attention_heads": 12, "intermediate_size": 1536,
                   "sentence_transformers": {"activation_fn": "torch.nn.modules.activation.Sigmoid", "version": "4.1.0"}})
    with open(path, "w") as f:
        json.dump(config, f, indent=2)
    print(f"wrote {out}/onnx/model.onnx")


if __name__ == "__main__":
    main()
