#!/usr/bin/python3
"""A MiniLM-L6-shaped sentence-embedding model directory for the memory-budget evidence (docs/memory.md,
bench/memory/rss_vs_estimate.sh): scripts/make_test_models.py's Encoder with all-MiniLM-L6-v2's shape (6 layers,
hidden 384, 12 heads, FFN 1536, vocab 30522, max_pos 512, no pooler; 22.7 M parameters, 90.9 MB fp32), BERT
init (untrained: memory does not depend on the values), exported with torch.onnx (opset 14), plus the WordPiece
tokenizer of bench/server/make_model_dir.js and glassbox.json {task: embed, pooling: mean, normalize: true}.
scripts/train_embedder.py trains the same shape on real text; this one only needs seconds.

Usage: /usr/bin/python3 scripts/memory/make_minilm_dir.py [--out DIR]   (default tests/data/generated/minilm_l6_mem)
"""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import make_test_models as mtm  # noqa: E402
import train_classifier as tc  # noqa: E402
import train_embedder as te  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(tc.ROOT, "tests", "data", "generated", "minilm_l6_mem"))
    a = ap.parse_args()
    c = mtm.Config(vocab=30522, hidden=384, layers=6, heads=12, intermediate=1536, max_pos=512, pooler=False)
    os.makedirs(a.out, exist_ok=True)
    tc.make_tokenizer_dir(a.out)
    model = mtm.Encoder(c)
    tc.bert_init(model, 33)
    model.eval()
    te.write_embedder_dir(model, c, a.out, {"task": "embed", "pooling": "mean", "normalize": True, "max_length": 256,
                                            "batch_size": 8})
    print(f"wrote {a.out} ({sum(p.numel() for p in model.parameters())} parameters)")


if __name__ == "__main__":
    main()
