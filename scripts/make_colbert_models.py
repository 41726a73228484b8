#!/usr/bin/python3
"""Small ColBERT (PyLate) model directories, laid out as PyLate saves them, with reference token vectors and
MaxSim scores computed here (torch forward + numpy) following PyLate's documented semantics. Used by
tests/pipeline/colbert_test.js.

Every directory holds:
  onnx/model.onnx        a BERT-shaped encoder (output last_hidden_state), exported with torch.onnx (torch 1.13)
  tokenizer.json         make_st_models.py's WordPiece tokenizer, plus the prefix tokens PyLate adds to it
                         (tokenizer.add_tokens: not special, normalized) when they are not in the vocabulary
  tokenizer_config.json, config.json (BertModel), sentence_bert_config.json
  modules.json           [Transformer (path ""), pylate.models.Dense.Dense (path "1_Dense"), ...]
  1_Dense/config.json + model.safetensors   in_features, out_features, bias, activation_function, use_residual
  config_sentence_transformers.json   model_type ColBERT, prompts, similarity_fn_name MaxSim, query_prefix,
                         document_prefix, query_length, document_length, attend_to_expansion_tokens,
                         skiplist_words, do_query_expansion (a field left out where the spec says so: the
                         constructor's default then applies)

Semantics (PyLate ColBERT.tokenize / encode, models/Dense, scores.colbert_scores):
  tokens = the tokenizer's encoding cut to length - 1 (length - 1 only with a prefix); a query with expansion is
  padded to that with the mask token (attention 0, or 1 with attend_to_expansion_tokens); the prefix id is inserted
  after the first token (attention 1, type 0); the encoder runs on that; each token vector goes through the Dense
  layers (activation(W x + b)); kept: a query with expansion every position, a query without attention 1, a
  document attention 1 and not a skiplist token; each kept vector L2-normalized.
  MaxSim(q, d) = sum over q's vectors of the max dot product with d's vectors.
OUT/<name>.reference.json: {"spec", "queries": [{"text", "ids", "vectors"}], "documents": [...],
"scores": [[MaxSim(query i, document j)]]}, each text encoded alone (a batch of one).
Usage: scripts/make_colbert_models.py [--out DIR]   (default tests/data/generated/colbert)
"""
import argparse
import json
import os
import shutil
import string
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_test_models import Config, export_module  # noqa: E402
from make_st_models import (HIDDEN, ST_VERSION, TEXTS, build_vocab, dense_layer, encode, make_encoder,  # noqa: E402
                            tokenizer_json, write_safetensors)

QUERIES = ["Where is the train station?", "a fox", "coffee near the station, please!"]
DOCUMENTS = TEXTS
PUNCTUATION = list(string.punctuation)

SPECS = {
    # As PyLate saves a fresh model: [Q] / [D] added to the tokenizer, expansion on, not attended.
    "colbert_pylate": {"query_prefix": "[Q] ", "document_prefix": "[D] ", "query_length": 16, "document_length": 24,
                       "do_query_expansion": True, "attend_to_expansion_tokens": False, "skiplist_words": PUNCTUATION,
                       "dense": [dense_layer(11, HIDDEN, 16, False, "torch.nn.modules.linear.Identity", np.float32)]},
    # ColBERTv2-style markers from the vocabulary, expansion attended, two Dense layers, a short skiplist.
    "colbert_attend": {"query_prefix": "[unused0]", "document_prefix": "[unused1]", "query_length": 12,
                       "document_length": 32, "do_query_expansion": True, "attend_to_expansion_tokens": True,
                       "skiplist_words": [",", "."],
                       "dense": [dense_layer(12, HIDDEN, 24, True, "torch.nn.modules.activation.Tanh", np.float32),
                                 dense_layer(13, 24, 8, False, "torch.nn.modules.linear.Identity", np.float16)]},
    # No expansion, no document prefix; query_length / skiplist left out (PyLate's defaults: 32, punctuation).
    "colbert_no_expansion": {"query_prefix": "[Q] ", "document_prefix": "", "document_length": 20,
                             "do_query_expansion": False,
                             "dense": [dense_layer(14, HIDDEN, 16, True, "torch.nn.modules.linear.Identity", np.float32)]},
}
DEFAULTS = {"query_length": 32, "document_length": 180, "do_query_expansion": True, "attend_to_expansion_tokens": False,
            "skiplist_words": PUNCTUATION}


def full_vocab(spec_names):
    """make_st_models.py's vocabulary, the [unusedN] markers, then the added prefix tokens (ids after the vocabulary)."""
    vocab = build_vocab()
    for t in ("[unused0]", "[unused1]"):
        vocab[t] = len(vocab)
    added = []
    for spec in SPECS.values():
        for key in ("query_prefix", "document_prefix"):
            p = spec.get(key, "")
            if p and p not in vocab and p not in added:
                added.append(p)
    return vocab, added


def write_tokenizer(d, vocab, added):
    tj = tokenizer_json(vocab, True)
    for i, t in enumerate(added):
        tj["added_tokens"].append({"id": len(vocab) + i, "content": t, "single_word": False, "lstrip": False,
                                   "rstrip": False, "normalized": True, "special": False})
    with open(os.path.join(d, "tokenizer.json"), "w") as f:
        json.dump(tj, f, indent=2)
    with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "BertTokenizer", "do_lower_case": True, "model_max_length": 128,
                   "cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "unk_token": "[UNK]",
                   "mask_token": "[MASK]"}, f, indent=2)


def write_dir(out, name, spec, onnx_file, vocab, added):
    d = os.path.join(out, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "onnx"))
    shutil.copyfile(onnx_file, os.path.join(d, "onnx", "model.onnx"))
    write_tokenizer(d, vocab, added)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump({"architectures": ["BertModel"], "model_type": "bert", "vocab_size": len(vocab) + len(added),
                   "hidden_size": HIDDEN, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64,
                   "max_position_embeddings": 128, "type_vocab_size": 2, "pad_token_id": 0}, f, indent=2)
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"}]
    for dense in spec["dense"]:
        path = f"{len(modules)}_Dense"
        modules.append({"idx": len(modules), "name": str(len(modules)), "path": path, "type": "pylate.models.Dense.Dense"})
        os.makedirs(os.path.join(d, path))
        with open(os.path.join(d, path, "config.json"), "w") as f:
            json.dump({"in_features": dense["weight"].shape[1], "out_features": dense["weight"].shape[0],
                       "bias": dense["bias"] is not None, "activation_function": dense["activation"],
                       "use_residual": False}, f, indent=2)
        tensors = {"linear.weight": dense["weight"]}
        if dense["bias"] is not None:
            tensors["linear.bias"] = dense["bias"]
        write_safetensors(os.path.join(d, path, "model.safetensors"), tensors)
    with open(os.path.join(d, "modules.json"), "w") as f:
        json.dump(modules, f, indent=2)
    cfg = {"model_type": "ColBERT", "__version__": dict(ST_VERSION, sentence_transformers="5.1.1"),
           "prompts": {"query": "", "document": ""}, "default_prompt_name": None, "similarity_fn_name": "MaxSim"}
    for key in ("query_prefix", "document_prefix", "query_length", "document_length", "attend_to_expansion_tokens",
                "skiplist_words", "do_query_expansion"):
        if key in spec:
            cfg[key] = spec[key]
    with open(os.path.join(d, "config_sentence_transformers.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    with open(os.path.join(d, "sentence_bert_config.json"), "w") as f:
        json.dump({"max_seq_length": 127, "do_lower_case": False}, f, indent=2)


# ---- PyLate's semantics, written from its documentation ----
def token_id(vocab, added, token):
    """transformers' convert_tokens_to_ids: the token's id, the unknown token's for a word not in the vocabulary."""
    if token in vocab:
        return vocab[token]
    if token in added:
        return len(vocab) + added.index(token)
    return vocab["[UNK]"]


def reference(model, vocab, added, spec, text, query):
    s = dict(DEFAULTS, **spec)
    prefix = s["query_prefix"] if query else s["document_prefix"]
    length = s["query_length"] if query else s["document_length"]
    limit = length - 1 if prefix else length
    ids = encode(vocab, text.lower())
    assert len(ids) <= limit, (text, len(ids), limit)  # the tests send texts that fit; overlong ones are refused
    text_ids = list(ids)
    mask = [1] * len(ids)
    if query and s["do_query_expansion"]:
        pad = limit - len(ids)
        ids += [vocab["[MASK]"]] * pad
        mask += [1 if s["attend_to_expansion_tokens"] else 0] * pad
    if prefix:
        ids.insert(1, token_id(vocab, added, prefix))
        mask.insert(1, 1)
    with torch.no_grad():
        tokens = model(torch.tensor([ids]), torch.tensor([mask]), torch.zeros(1, len(ids), dtype=torch.long))[0].numpy()
    x = tokens.astype(np.float64)
    for dense in s["dense"]:
        x = x @ dense["weight"].astype(np.float64).T
        if dense["bias"] is not None:
            x = x + dense["bias"].astype(np.float64)
        if dense["activation"].endswith("Tanh"):
            x = np.tanh(x)
    skip = {token_id(vocab, added, w) for w in s["skiplist_words"]}
    if query:
        keep = [True] * len(ids) if s["do_query_expansion"] else [m == 1 for m in mask]
    else:
        keep = [m == 1 and i not in skip for i, m in zip(ids, mask)]
    rows = x[np.array(keep)]
    rows = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    return {"text": text, "ids": text_ids, "model_ids": ids, "vectors": rows.astype(np.float32).tolist()}


def max_sim(q, d):
    return float((np.array(q, np.float64) @ np.array(d, np.float64).T).max(axis=1).sum())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                                   "tests", "data", "generated", "colbert")))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    vocab, added = full_vocab(SPECS)
    cfg = Config(vocab=len(vocab) + len(added), hidden=HIDDEN, layers=2, heads=4, intermediate=64, max_pos=128,
                 pooler=False)
    model = make_encoder(50, cfg)
    onnx_file = os.path.join(a.out, "colbert_encoder.onnx")
    export_module(model, cfg, 14, onnx_file)
    for name, spec in SPECS.items():
        write_dir(a.out, name, spec, onnx_file, vocab, added)
        queries = [reference(model, vocab, added, spec, t, True) for t in QUERIES]
        documents = [reference(model, vocab, added, spec, t, False) for t in DOCUMENTS]
        scores = [[max_sim(q["vectors"], d["vectors"]) for d in documents] for q in queries]
        public = {k: v for k, v in spec.items() if k != "dense"}
        with open(os.path.join(a.out, name + ".reference.json"), "w") as f:
            json.dump({"spec": public, "queries": queries, "documents": documents, "scores": scores}, f)
        print(f"wrote {os.path.join(a.out, name)} ({len(queries)} queries, {len(documents)} documents)")


if __name__ == "__main__":
    main()
