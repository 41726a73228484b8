#!/usr/bin/python3
"""Small BGE-M3-shaped model directories: ONE ONNX graph computes the three heads FlagEmbedding's BGEM3 model
defines, named as the community ONNX exports of BGE-M3 name them (dense_vecs, sparse_vecs, colbert_vecs), with
reference values computed here (torch forward + numpy) following FlagEmbedding's semantics. Used by
tests/pipeline/m3_test.js and python/tests/test_pipeline.py.

The graph (inputs input_ids, attention_mask, token_type_ids; h = the encoder's last hidden state [B, S, H]):
  dense_vecs   [B, H]       h[:, 0] (CLS), L2-normalized in the graph ("m3") or not ("m3_raw")
  sparse_vecs  [B, S, 1]    relu(sparse_linear(h)), sparse_linear = Linear(H -> 1)
  colbert_vecs [B, S-1, H]  colbert_linear(h[:, 1:]) * attention_mask[:, 1:], colbert_linear = Linear(H -> H),
                            each row L2-normalized in the graph ("m3") or not ("m3_raw")
glassbox.json declares which output is which head and what glassbox still does to it ("heads";
docs/retrieval.md "Several heads from one run").

Semantics (FlagEmbedding BGEM3FlagModel.encode, _process_token_weights, _process_colbert_vecs):
  dense: normalize(h[0]);
  lexical weights: per token id, the max of relu(w . h_i + b) over its positions i, the special tokens
  (cls, eos/sep, pad, unk) left out, and only weights > 0 kept;
  colbert: normalize(W h_i + b) for positions 1 .. n-1 (after the first token; the last [SEP] included).
OUT/<name>.reference.json: {"texts": [{"text", "ids", "dense", "sparse": {"indices", "values"}, "colbert"}]},
each text encoded alone (a batch of one).
Usage: scripts/make_m3_model.py [--out DIR]   (default tests/data/generated/m3)
"""
import argparse
import json
import os
import shutil
import sys

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_test_models import Config  # noqa: E402
from make_sparse_models import write_common  # noqa: E402
from make_st_models import HIDDEN, TEXTS, build_vocab, encode, make_encoder  # noqa: E402

# Repeated words (the max per token id), a word outside the vocabulary ([UNK], left out), a very short text.
M3_TEXTS = TEXTS + ["the fox and the dog and the fox saw a zebra", "fox"]
SPECIAL = ["[CLS]", "[SEP]", "[PAD]", "[UNK]"]  # FlagEmbedding's unused_tokens: cls, eos (BERT: sep), pad, unk


class M3(nn.Module):
    def __init__(self, encoder, normalize):
        super().__init__()
        self.encoder, self.normalize = encoder, normalize
        self.sparse_linear = nn.Linear(HIDDEN, 1)
        self.colbert_linear = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, input_ids, attention_mask, token_type_ids):
        h = self.encoder(input_ids, attention_mask, token_type_ids)  # [B, S, H]
        dense = h[:, 0]
        sparse = torch.relu(self.sparse_linear(h))
        colbert = self.colbert_linear(h[:, 1:]) * attention_mask[:, 1:][:, :, None].to(h.dtype)
        if self.normalize:
            dense = nn.functional.normalize(dense, dim=-1)
            colbert = nn.functional.normalize(colbert, dim=-1)
        return dense, sparse, colbert


def make_model(normalize):
    cfg = Config(vocab=len(build_vocab()), hidden=HIDDEN, layers=2, heads=4, intermediate=64, max_pos=128, pooler=False)
    model = M3(make_encoder(60, cfg), normalize).eval()
    torch.manual_seed(61)
    with torch.no_grad():
        model.sparse_linear.weight.normal_(0.0, 0.3)
        model.sparse_linear.bias.fill_(-0.1)  # some tokens weigh 0: the vectors are sparse
        model.colbert_linear.weight.normal_(0.0, 0.2)
        model.colbert_linear.bias.normal_(0.0, 0.05)
    return model


def export(model, path):
    ids = torch.randint(0, 20, (2, 9), dtype=torch.long)
    mask = torch.ones(2, 9, dtype=torch.long)
    axes = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
            "token_type_ids": {0: "batch", 1: "sequence"}, "dense_vecs": {0: "batch"},
            "sparse_vecs": {0: "batch", 1: "sequence"}, "colbert_vecs": {0: "batch", 1: "sequence_minus_1"}}
    torch.onnx.export(model, (ids, mask, torch.zeros_like(ids)), path,
                      input_names=["input_ids", "attention_mask", "token_type_ids"],
                      output_names=["dense_vecs", "sparse_vecs", "colbert_vecs"], dynamic_axes=axes, opset_version=14,
                      do_constant_folding=True)


def glassbox_json(normalize_in_graph):
    return {"task": "embed", "max_length": 64, "heads": {
        "dense": {"output": "dense_vecs", "normalize": not normalize_in_graph},
        "sparse": {"output": "sparse_vecs", "pooling": "max", "skip_tokens": SPECIAL},
        "multi_vector": {"output": "colbert_vecs", "first_position": 1, "normalize": not normalize_in_graph}}}


def write_dir(out, name, onnx_file, vocab, normalize_in_graph):
    d = os.path.join(out, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    shutil.copyfile(onnx_file, os.path.join(d, "model.onnx"))
    write_common(d, vocab, "BertModel")
    with open(os.path.join(d, "glassbox.json"), "w") as f:
        json.dump(glassbox_json(normalize_in_graph), f, indent=2)


# ---- FlagEmbedding's semantics, written from its source's documented behaviour ----
def normalize(x):
    return x / max(np.linalg.norm(x), 1e-12)


def reference(model, vocab, text):
    ids = encode(vocab, text.lower())
    n = len(ids)
    with torch.no_grad():
        h = model.encoder(torch.tensor([ids]), torch.ones(1, n, dtype=torch.long), torch.zeros(1, n, dtype=torch.long))
    h = h[0].numpy().astype(np.float64)
    w = model.sparse_linear.weight.detach().numpy().astype(np.float64)[0]
    b = float(model.sparse_linear.bias.detach().numpy()[0])
    special = {vocab[t] for t in SPECIAL}
    weights = {}
    for i, tok in enumerate(ids):
        x = max(float(h[i] @ w + b), 0.0)
        if tok not in special and x > 0 and x > weights.get(tok, 0.0):
            weights[tok] = x
    cw = model.colbert_linear.weight.detach().numpy().astype(np.float64)
    cb = model.colbert_linear.bias.detach().numpy().astype(np.float64)
    colbert = [normalize(cw @ h[i] + cb).tolist() for i in range(1, n)]
    keys = sorted(weights)
    return {"text": text, "ids": ids, "dense": normalize(h[0]).tolist(),
            "sparse": {"indices": keys, "values": [weights[k] for k in keys]}, "colbert": colbert}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                                   "tests", "data", "generated", "m3")))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    vocab = build_vocab()
    for name, in_graph in (("m3", True), ("m3_raw", False)):
        model = make_model(in_graph)
        onnx_file = os.path.join(a.out, name + ".onnx")
        export(model, onnx_file)
        write_dir(a.out, name, onnx_file, vocab, in_graph)
        refs = [reference(model, vocab, t) for t in M3_TEXTS]
        with open(os.path.join(a.out, name + ".reference.json"), "w") as f:
            json.dump({"glassbox_json": glassbox_json(in_graph), "texts": refs}, f)


if __name__ == "__main__":
    main()
