#!/usr/bin/python3
"""Exports BERT-like encoders with the real torch.onnx exporter (Debian python3-torch 1.13).

Small models (committed-size, < 5 MB, used by tests and CI):
  bert_tiny_op13.onnx, bert_tiny_op14.onnx, bert_tiny_op17.onnx
      BERT-shaped: word+position+token_type embeddings, LayerNorm, 2 layers,
      4 heads, hidden 64, GELU(erf) FFN, tanh pooler. Inputs input_ids,
      attention_mask, token_type_ids (int64, dynamic batch x sequence).
  distilbert_tiny_op14.onnx  no token_type_ids, no pooler (DistilBERT-shaped)
  bert_tiny_cls_op14.onnx    bert_tiny + classification head (logits [batch, 3])

Benchmark models (produced on demand with --bench, never committed):
  bert_base_op14.onnx   12 layers, hidden 768, 12 heads, vocab 30522 (~438 MB)
  distilbert_base_op14.onnx  6 layers, hidden 768
  bert_base_cls_op14.onnx    BERT-base with a 2-label classifier head (bench/server)
  minilm_l6_op14.onnx   6 layers, hidden 384, 12 heads (MiniLM-L6-shaped)

Weights are random (seeded): these models test the engine, not language.
Usage: scripts/make_test_models.py [--out DIR] [--bench] [--only NAME ...]
"""
import argparse
import math
import os
import sys
import zlib

import torch
from torch import nn


class Config:
    def __init__(self, vocab=1000, hidden=64, layers=2, heads=4, intermediate=128, max_pos=128,
                 type_vocab=2, token_types=True, pooler=True, num_labels=0):
        self.vocab, self.hidden, self.layers, self.heads = vocab, hidden, layers, heads
        self.intermediate, self.max_pos, self.type_vocab = intermediate, max_pos, type_vocab
        self.token_types, self.pooler, self.num_labels = token_types, pooler, num_labels


class SelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads, self.head_dim = c.heads, c.hidden // c.heads
        self.query = nn.Linear(c.hidden, c.hidden)
        self.key = nn.Linear(c.hidden, c.hidden)
        self.value = nn.Linear(c.hidden, c.hidden)
        self.out = nn.Linear(c.hidden, c.hidden)
        self.norm = nn.LayerNorm(c.hidden, eps=1e-12)

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, mask_bias):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = torch.softmax(scores + mask_bias, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(ctx.shape[0], ctx.shape[1], -1)
        return self.norm(x + self.out(ctx))


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = SelfAttention(c)
        self.up = nn.Linear(c.hidden, c.intermediate)
        self.down = nn.Linear(c.intermediate, c.hidden)
        self.norm = nn.LayerNorm(c.hidden, eps=1e-12)

    def forward(self, x, mask_bias):
        x = self.attention(x, mask_bias)
        return self.norm(x + self.down(nn.functional.gelu(self.up(x))))


class Encoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.word = nn.Embedding(c.vocab, c.hidden)
        self.position = nn.Embedding(c.max_pos, c.hidden)
        if c.token_types:
            self.token_type = nn.Embedding(c.type_vocab, c.hidden)
        self.norm = nn.LayerNorm(c.hidden, eps=1e-12)
        self.layers = nn.ModuleList([Layer(c) for _ in range(c.layers)])
        if c.pooler:
            self.pool = nn.Linear(c.hidden, c.hidden)
        if c.num_labels:
            self.classifier = nn.Linear(c.hidden, c.num_labels)

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        seq = input_ids.shape[1]
        positions = torch.arange(seq, dtype=torch.long, device=input_ids.device).unsqueeze(0)
        x = self.word(input_ids) + self.position(positions)
        if self.c.token_types:
            x = x + self.token_type(token_type_ids)
        x = self.norm(x)
        # HF-style additive mask: 0 for real tokens, a large negative for padding.
        mask_bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask_bias)
        if not self.c.pooler:
            return x
        pooled = torch.tanh(self.pool(x[:, 0]))
        if self.c.num_labels:
            return self.classifier(pooled)
        return x, pooled


def export(name, c, opset, out_dir, seed):
    torch.manual_seed(seed)
    model = Encoder(c).eval()
    with torch.no_grad():  # wider weights than the default init so errors show up in outputs
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.08)
    path = os.path.join(out_dir, name + ".onnx")
    export_module(model, c, opset, path)
    print(f"wrote {path} ({os.path.getsize(path)} bytes, opset {opset})")


def export_module(model, c, opset, path):
    """torch.onnx.export of an Encoder with the inputs/outputs/dynamic axes the tests and pipelines expect
    (also used by scripts/train_classifier.py for its trained model)."""
    ids = torch.randint(0, c.vocab, (2, 16), dtype=torch.long)
    mask = torch.ones(2, 16, dtype=torch.long)
    args = [ids, mask]
    inputs = ["input_ids", "attention_mask"]
    axes = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"}}
    if c.token_types:
        args.append(torch.zeros(2, 16, dtype=torch.long))
        inputs.append("token_type_ids")
        axes["token_type_ids"] = {0: "batch", 1: "sequence"}
    if c.num_labels:
        outputs = ["logits"]
        axes["logits"] = {0: "batch"}
    elif c.pooler:
        outputs = ["last_hidden_state", "pooler_output"]
        axes["last_hidden_state"] = {0: "batch", 1: "sequence"}
        axes["pooler_output"] = {0: "batch"}
    else:
        outputs = ["last_hidden_state"]
        axes["last_hidden_state"] = {0: "batch", 1: "sequence"}
    torch.onnx.export(model, tuple(args), path, input_names=inputs, output_names=outputs,
                      dynamic_axes=axes, opset_version=opset, do_constant_folding=True)


SMALL = {
    "bert_tiny_op13": (Config(), 13),
    "bert_tiny_op14": (Config(), 14),
    "bert_tiny_op17": (Config(), 17),
    "distilbert_tiny_op14": (Config(token_types=False, pooler=False), 14),
    "bert_tiny_cls_op14": (Config(num_labels=3), 14),
}
BENCH = {
    "bert_base_op14": (Config(vocab=30522, hidden=768, layers=12, heads=12, intermediate=3072, max_pos=512), 14),
    "distilbert_base_op14": (Config(vocab=30522, hidden=768, layers=6, heads=12, intermediate=3072, max_pos=512,
                                    token_types=False, pooler=False), 14),
    "minilm_l6_op14": (Config(vocab=30522, hidden=384, layers=6, heads=12, intermediate=1536, max_pos=512), 14),
    # BERT-base with a 2-label classification head: the serving benchmark's model (bench/server).
    "bert_base_cls_op14": (Config(vocab=30522, hidden=768, layers=12, heads=12, intermediate=3072, max_pos=512,
                                  num_labels=2), 14),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                                   "tests", "data", "generated")))
    ap.add_argument("--bench", action="store_true", help="also export the large benchmark models")
    ap.add_argument("--only", nargs="*", help="export only these model names")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    todo = dict(SMALL)
    if a.bench or a.only:
        todo.update(BENCH)
    if a.only:
        todo = {k: v for k, v in todo.items() if k in a.only}
        if not todo:
            sys.exit("no such model; choose from " + ", ".join(list(SMALL) + list(BENCH)))
    for name, (c, opset) in sorted(todo.items()):
        path = os.path.join(a.out, name + ".onnx")
        if os.path.exists(path) and os.path.getmtime(path) >= os.path.getmtime(__file__):
            print(f"up to date: {path}")
            continue
        export(name, c, opset, a.out, seed=zlib.crc32(name.encode()))


if __name__ == "__main__":
    main()
