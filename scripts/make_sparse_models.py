#!/usr/bin/python3
"""Small SPLADE (sentence-transformers SparseEncoder) model directories, laid out as the library publishes
them, with reference sparse vectors computed here (torch forward + numpy) following SpladePooling's
documented semantics. Used by tests/pipeline/sparse_test.js and tests/server/test_sparse.py.

Every directory holds:
  onnx/model.onnx        a BERT-shaped encoder with a BERT MLM head (dense -> gelu -> LayerNorm -> decoder to the
                         vocabulary), output `logits` [batch, sequence, vocabulary], exported with torch.onnx
  tokenizer.json, tokenizer_config.json, config.json (BertForMaskedLM)   as scripts/make_st_models.py writes them
  modules.json           [MLMTransformer (path ""), SpladePooling (path "1_SpladePooling")] with
                         sentence-transformers' type names (sentence_transformers.sparse_encoder.models.*)
  1_SpladePooling/config.json   pooling_strategy, activation_function, word_embedding_dimension
  config_sentence_transformers.json   model_type SparseEncoder, prompts, similarity_fn_name dot
  sentence_bert_config.json           max_seq_length, do_lower_case
except splade_declared: no sentence-transformers files, model.onnx at the root and glassbox.json
{"sparse": {"pooling": "max", "activation": "relu", "top_k": 5}}.

Semantics (SpladePooling.forward): w[t, v] = log1p(relu(logits[t, v] * mask[t])) (log1p_relu: log1p again),
then max (or sum) over t; SparseEncoder keeps the nonzero entries; max_active_dims / top_k keeps the k largest.
OUT/<name>.reference.json: {"spec", "cases": [{"text", "prompt"?, "full_text", "ids", "indices", "values"}]},
each from a batch of one text.
Usage: scripts/make_sparse_models.py [--out DIR]   (default tests/data/generated/sparse)
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
from make_test_models import Config, Encoder  # noqa: E402
from make_st_models import ST_VERSION, TEXTS, build_vocab, encode, tokenizer_json  # noqa: E402

HIDDEN = 32
PROMPTS = {"query": "query: "}


class MaskedLM(nn.Module):
    """Encoder + BERT's MLM head (BertLMPredictionHead: transform dense, gelu, LayerNorm, decoder + bias)."""

    def __init__(self, c):
        super().__init__()
        self.encoder = Encoder(c)
        self.transform = nn.Linear(c.hidden, c.hidden)
        self.norm = nn.LayerNorm(c.hidden, eps=1e-12)
        self.decoder = nn.Linear(c.hidden, c.vocab)

    def forward(self, input_ids, attention_mask, token_type_ids):
        x = self.encoder(input_ids, attention_mask, token_type_ids)
        return self.decoder(self.norm(nn.functional.gelu(self.transform(x))))


def make_model(seed, cfg):
    torch.manual_seed(seed)
    model = MaskedLM(cfg).eval()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.08)
        model.decoder.weight.normal_(0.0, 0.25)
        model.decoder.bias.fill_(-3.0)  # most logits negative: the vectors are sparse, as a trained SPLADE's
    return model


def export(model, cfg, path):
    ids = torch.randint(0, cfg.vocab, (2, 16), dtype=torch.long)
    mask = torch.ones(2, 16, dtype=torch.long)
    types = torch.zeros(2, 16, dtype=torch.long)
    axes = {n: {0: "batch", 1: "sequence"} for n in ("input_ids", "attention_mask", "token_type_ids", "logits")}
    torch.onnx.export(model, (ids, mask, types), path, input_names=["input_ids", "attention_mask", "token_type_ids"],
                      output_names=["logits"], dynamic_axes=axes, opset_version=14, do_constant_folding=True)


# ---- SpladePooling + SparseEncoder semantics, written from their documentation ----
def splade(logits, mask, pooling, activation, top_k):
    """logits [n, V] float32, mask [n]: the nonzero (index, value) pairs, indices ascending."""
    w = np.log1p(np.maximum(logits.astype(np.float64) * mask[:, None], 0.0))
    if activation == "log1p_relu":
        w = np.log1p(w)
    v = w.max(axis=0) if pooling == "max" else w.sum(axis=0)
    v = v.astype(np.float32)
    idx = np.nonzero(v > 0)[0]
    if top_k and len(idx) > top_k:
        order = sorted(idx, key=lambda i: (-float(v[i]), i))
        idx = np.array(sorted(order[:top_k]))
    return [int(i) for i in idx], [float(v[i]) for i in idx]


def reference(model, vocab, spec, text, prompt):
    full = (prompt or "") + text
    ids = encode(vocab, full.lower())
    with torch.no_grad():
        logits = model(torch.tensor([ids]), torch.ones(1, len(ids), dtype=torch.long),
                       torch.zeros(1, len(ids), dtype=torch.long))[0].numpy()
    indices, values = splade(logits, np.ones(len(ids)), spec["pooling"], spec["activation"], spec.get("top_k", 0))
    return ids, indices, values


def write_common(d, vocab, architecture="BertForMaskedLM"):
    """tokenizer.json, tokenizer_config.json and config.json of the small BERT-shaped test encoders."""
    with open(os.path.join(d, "tokenizer.json"), "w") as f:
        json.dump(tokenizer_json(vocab, True), f, indent=2)
    with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "BertTokenizer", "do_lower_case": True, "model_max_length": 128,
                   "cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "unk_token": "[UNK]",
                   "mask_token": "[MASK]"}, f, indent=2)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump({"architectures": [architecture], "model_type": "bert", "vocab_size": len(vocab),
                   "hidden_size": HIDDEN, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64,
                   "max_position_embeddings": 128, "type_vocab_size": 2, "pad_token_id": 0}, f, indent=2)


def write_dir(out, name, spec, onnx_file, vocab):
    d = os.path.join(out, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    write_common(d, vocab)
    if spec.get("declared"):
        shutil.copyfile(onnx_file, os.path.join(d, "model.onnx"))
        with open(os.path.join(d, "glassbox.json"), "w") as f:
            json.dump({"sparse": {"pooling": spec["pooling"], "activation": spec["activation"],
                                  "top_k": spec["top_k"]}}, f, indent=2)
        return d
    os.makedirs(os.path.join(d, "onnx"))
    shutil.copyfile(onnx_file, os.path.join(d, "onnx", "model.onnx"))
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.sparse_encoder.models.MLMTransformer"},
               {"idx": 1, "name": "1", "path": "1_SpladePooling",
                "type": "sentence_transformers.sparse_encoder.models.SpladePooling"}]
    with open(os.path.join(d, "modules.json"), "w") as f:
        json.dump(modules, f, indent=2)
    os.makedirs(os.path.join(d, "1_SpladePooling"))
    with open(os.path.join(d, "1_SpladePooling", "config.json"), "w") as f:
        json.dump({"pooling_strategy": spec["pooling"], "activation_function": spec["activation"],
                   "word_embedding_dimension": len(vocab)}, f, indent=2)
    with open(os.path.join(d, "config_sentence_transformers.json"), "w") as f:
        json.dump({"model_type": "SparseEncoder", "__version__": dict(ST_VERSION, sentence_transformers="5.0.0"),
                   "prompts": spec.get("prompts", {}), "default_prompt_name": None,
                   "similarity_fn_name": "dot"}, f, indent=2)
    with open(os.path.join(d, "sentence_bert_config.json"), "w") as f:
        json.dump({"max_seq_length": 64, "do_lower_case": False}, f, indent=2)
    return d


SPECS = {
    "splade_max": {"pooling": "max", "activation": "relu", "prompts": PROMPTS},
    "splade_sum_log1p": {"pooling": "sum", "activation": "log1p_relu"},
    "splade_declared": {"pooling": "max", "activation": "relu", "top_k": 5, "declared": True},
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                                   "tests", "data", "generated", "sparse")))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    vocab = build_vocab()
    cfg = Config(vocab=len(vocab), hidden=HIDDEN, layers=2, heads=4, intermediate=64, max_pos=128, pooler=False)
    model = make_model(40, cfg)
    onnx_file = os.path.join(a.out, "splade_mlm.onnx")
    export(model, cfg, onnx_file)
    for name, spec in SPECS.items():
        write_dir(a.out, name, spec, onnx_file, vocab)
        cases = []
        for prompt in [None] + list(spec.get("prompts", {}).values()):
            for t in TEXTS:
                ids, indices, values = reference(model, vocab, spec, t, prompt)
                case = {"text": t, "full_text": (prompt or "") + t, "ids": ids, "indices": indices, "values": values}
                if prompt:
                    case["prompt_name"] = next(k for k, v in spec["prompts"].items() if v == prompt)
                cases.append(case)
        with open(os.path.join(a.out, name + ".reference.json"), "w") as f:
            json.dump({"spec": {k: v for k, v in spec.items()}, "vocab_size": len(vocab), "cases": cases}, f)
        print(f"wrote {os.path.join(a.out, name)} ({len(cases)} reference vectors)")


if __name__ == "__main__":
    main()
