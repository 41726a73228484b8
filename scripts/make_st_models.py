#!/usr/bin/python3
"""Small sentence-transformers model directories, laid out as the library and Optimum publish them,
with reference vectors computed here (torch forward + numpy pooling) following sentence-transformers'
documented semantics. Used by tests/pipeline/st_layout_test.js (glassbox embed/explain against these
references and against transformers.js).

Every directory holds, as published:
  onnx/model.onnx                  a BERT-shaped encoder (scripts/make_test_models.py's Encoder, no pooler,
                                   output last_hidden_state), exported with torch.onnx (Optimum's place)
  tokenizer.json                   a WordPiece tokenizer (BertNormalizer, BertPreTokenizer, [CLS] $A [SEP])
  tokenizer_config.json, config.json
  modules.json                     [Transformer, Pooling, Dense*, Normalize?] with sentence-transformers' type names
  1_Pooling/config.json            word_embedding_dimension, the six pooling_mode_* flags, include_prompt
  2_Dense/config.json + model.safetensors (written here: 8-byte LE header length, JSON header, raw data)
  config_sentence_transformers.json  __version__, prompts, default_prompt_name, similarity_fn_name
  sentence_bert_config.json        max_seq_length, do_lower_case
and no glassbox.json: every decision must come from these files.

OUT/<name>.reference.json: {"cases": [{"text", "prompt_name"?, "prompt"?, "dimensions"?, "model_file"?,
"ids", "vector", "token_vectors"?}]}: each vector from a batch of one text (no padding); token_vectors (the
encoder's last hidden state per token, [ids, hidden]) on the cases without options.
Usage: scripts/make_st_models.py [--out DIR]   (default tests/data/generated/st)
"""
import argparse
import json
import os
import re
import shutil
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_test_models import Config, Encoder, export_module  # noqa: E402

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "A fox is an animal.",
    "Where is the train station?",
    "Hello world",
    "Search for the best coffee near the station, please!",
    "Dogs and cats are friends; birds are not.",
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen",
]
PROMPTS = {"query": "query: ", "passage": "passage: ",
           "instruct": "Instruct: find the animal in this text. Query: "}
ST_VERSION = {"sentence_transformers": "3.0.1", "transformers": "4.41.2", "pytorch": "2.3.0"}
HIDDEN = 32


def words(text):
    """BERT's basic tokenizer on ASCII text: runs of word characters, and each punctuation mark alone."""
    return re.findall(r"\w+|[^\w\s]", text)


def build_vocab():
    seen = []
    for t in TEXTS + list(PROMPTS.values()):
        for w in words(t.lower()):
            if w not in seen:
                seen.append(w)
    return {w: i for i, w in enumerate(SPECIALS + seen)}


def encode(vocab, text):
    """[CLS] pieces [SEP]; every word of TEXTS/PROMPTS is a whole vocabulary entry, others are [UNK]."""
    return [vocab["[CLS]"]] + [vocab.get(w, vocab["[UNK]"]) for w in words(text)] + [vocab["[SEP]"]]


def tokenizer_json(vocab, lowercase):
    added = [{"id": vocab[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for t in SPECIALS]
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": lowercase},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
            "special_tokens": {t: {"id": t, "ids": [vocab[t]], "tokens": [t]} for t in ("[CLS]", "[SEP]")}},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": vocab},
    }


def write_safetensors(path, tensors):
    """tensors: {name: np.ndarray (float32 or float16)}; the format as its specification states it."""
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        dtype = {np.dtype("float32"): "F32", np.dtype("float16"): "F16"}[a.dtype]
        data = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def make_encoder(seed, cfg):
    torch.manual_seed(seed)
    model = Encoder(cfg).eval()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.08)
    return model


# ---- sentence-transformers semantics (Pooling / Dense / Normalize), written from its documentation ----
def pool(tokens, mask, modes):
    """tokens [n, H] float32, mask [n] (0 for prompt positions left out); modes in concatenation order."""
    tokens = tokens.astype(np.float64)
    m = mask.astype(np.float64)[:, None]
    out = []
    for mode in modes:
        if mode == "cls":
            out.append(tokens[0])
        elif mode == "max":
            out.append(np.where(m > 0, tokens, -1e9).max(axis=0))
        elif mode in ("mean", "mean_sqrt_len_tokens"):
            count = max(m.sum(), 1e-9)
            out.append((tokens * m).sum(axis=0) / (count if mode == "mean" else np.sqrt(count)))
        elif mode == "weightedmean":
            w = m * np.arange(1, len(mask) + 1, dtype=np.float64)[:, None]
            out.append((tokens * w).sum(axis=0) / max(w.sum(), 1e-9))
        elif mode == "lasttoken":
            idx = np.nonzero(mask)[0]
            out.append(tokens[idx[-1]] * 1.0 if len(idx) else np.zeros(tokens.shape[1]))
        else:
            raise ValueError(mode)
    return np.concatenate(out)


ACTIVATIONS = {"torch.nn.modules.activation.Tanh": np.tanh, "torch.nn.modules.linear.Identity": lambda x: x}
FLAGS = [("cls", "pooling_mode_cls_token"), ("max", "pooling_mode_max_tokens"), ("mean", "pooling_mode_mean_tokens"),
         ("mean_sqrt_len_tokens", "pooling_mode_mean_sqrt_len_tokens"),
         ("weightedmean", "pooling_mode_weightedmean_tokens"), ("lasttoken", "pooling_mode_lasttoken")]


def reference(model, vocab, spec, text, prompt, dimensions):
    # Lowercased either way: by sentence_bert_config's do_lower_case before a cased tokenizer, or by
    # the tokenizer's own BertNormalizer (lowercase: true) otherwise.
    full = (prompt or "") + text
    ids = encode(vocab, full.lower())
    with torch.no_grad():
        hs = model(torch.tensor([ids]), torch.ones(1, len(ids), dtype=torch.long),
                   torch.zeros(1, len(ids), dtype=torch.long))[0].numpy()
    mask = np.ones(len(ids))
    if prompt and not spec.get("include_prompt", True):
        plen = len(encode(vocab, prompt.lower())) - 1  # prompt_length: less the closing [SEP] (a special token)
        mask[:plen] = 0
    v = pool(hs, mask, [m for m, _ in FLAGS if m in spec["pooling"]])
    for d in spec.get("dense", []):
        w = d["weight"].astype(np.float64)
        v = w @ v + (d["bias"].astype(np.float64) if d["bias"] is not None else 0.0)
        v = ACTIVATIONS[d["activation"]](v)
    if dimensions:
        v = v[:dimensions]
    if spec.get("normalize"):
        v = v / max(np.linalg.norm(v), 1e-12)
    return ids, [float(x) for x in v.astype(np.float32)], hs


def write_dir(out, name, spec, onnx_files, vocab):
    d = os.path.join(out, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "onnx"))
    for rel, src in onnx_files.items():
        shutil.copyfile(src, os.path.join(d, rel))
    lower_tok = not spec.get("do_lower_case", False)  # a cased tokenizer when the ST config lowercases
    with open(os.path.join(d, "tokenizer.json"), "w") as f:
        json.dump(tokenizer_json(vocab, lower_tok), f, indent=2)
    with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "BertTokenizer", "do_lower_case": lower_tok, "model_max_length": 128,
                   "cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "unk_token": "[UNK]",
                   "mask_token": "[MASK]", "clean_up_tokenization_spaces": True}, f, indent=2)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump({"architectures": ["BertModel"], "model_type": "bert", "vocab_size": len(vocab),
                   "hidden_size": HIDDEN, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64,
                   "max_position_embeddings": 128, "type_vocab_size": 2, "pad_token_id": 0}, f, indent=2)
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    os.makedirs(os.path.join(d, "1_Pooling"))
    pooling = {"word_embedding_dimension": HIDDEN}
    for mode, key in FLAGS:
        pooling[key] = mode in spec["pooling"]
    pooling["include_prompt"] = spec.get("include_prompt", True)
    with open(os.path.join(d, "1_Pooling", "config.json"), "w") as f:
        json.dump(pooling, f, indent=2)
    for i, dense in enumerate(spec.get("dense", [])):
        path = f"{len(modules)}_Dense"
        modules.append({"idx": len(modules), "name": str(len(modules)), "path": path,
                        "type": "sentence_transformers.models.Dense"})
        os.makedirs(os.path.join(d, path))
        with open(os.path.join(d, path, "config.json"), "w") as f:
            json.dump({"in_features": dense["weight"].shape[1], "out_features": dense["weight"].shape[0],
                       "bias": dense["bias"] is not None, "activation_function": dense["activation"]}, f, indent=2)
        tensors = {"linear.weight": dense["weight"]}
        if dense["bias"] is not None:
            tensors["linear.bias"] = dense["bias"]
        write_safetensors(os.path.join(d, path, "model.safetensors"), tensors)
    if spec.get("normalize"):
        path = f"{len(modules)}_Normalize"
        modules.append({"idx": len(modules), "name": str(len(modules)), "path": path,
                        "type": "sentence_transformers.models.Normalize"})
        os.makedirs(os.path.join(d, path))
    with open(os.path.join(d, "modules.json"), "w") as f:
        json.dump(modules, f, indent=2)
    with open(os.path.join(d, "config_sentence_transformers.json"), "w") as f:
        json.dump({"__version__": ST_VERSION, "prompts": spec.get("prompts", {}),
                   "default_prompt_name": spec.get("default_prompt_name"),
                   "similarity_fn_name": spec.get("similarity", "cosine")}, f, indent=2)
    with open(os.path.join(d, "sentence_bert_config.json"), "w") as f:
        json.dump({"max_seq_length": 64, "do_lower_case": spec.get("do_lower_case", False)}, f, indent=2)
    return d


def dense_layer(seed, n_in, n_out, bias, activation, dtype):
    g = np.random.default_rng(seed)
    w = (g.standard_normal((n_out, n_in)) * 0.2).astype(dtype)
    b = (g.standard_normal(n_out) * 0.1).astype(dtype) if bias else None
    return {"weight": w, "bias": b, "activation": activation}


SPECS = {
    # BGE-style: CLS + Normalize, a query prompt declared but not default (as bge-*-en-v1.5 publish it)
    "st_cls_normalize": {"pooling": ["cls"], "normalize": True,
                         "prompts": {"query": PROMPTS["query"]}, "matryoshka": [8]},
    "st_mean": {"pooling": ["mean"], "variants": True, "similarity": "dot"},
    "st_max_lowercase": {"pooling": ["max"], "do_lower_case": True},
    # Qwen3-Embedding-style: last token + Normalize, an instruction prompt by default
    "st_lasttoken_normalize": {"pooling": ["lasttoken"], "normalize": True,
                               "prompts": {"query": PROMPTS["instruct"], "document": ""}, "default_prompt_name": "query"},
    "st_weightedmean": {"pooling": ["weightedmean"]},
    "st_mean_sqrt_len": {"pooling": ["mean_sqrt_len_tokens"]},
    "st_dense_normalize": {"pooling": ["mean"], "normalize": True, "dense": [
        dense_layer(1, HIDDEN, 16, True, "torch.nn.modules.activation.Tanh", np.float32),
        dense_layer(2, 16, 12, False, "torch.nn.modules.linear.Identity", np.float16)], "matryoshka": [6]},
    # INSTRUCTOR-style: prompt tokens left out of the mean
    "st_mean_exclude_prompt": {"pooling": ["mean"], "include_prompt": False,
                               "prompts": {"query": PROMPTS["query"], "passage": PROMPTS["passage"]}},
    "st_cls_mean_max_concat": {"pooling": ["cls", "max", "mean"], "normalize": True},
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                                   "tests", "data", "generated", "st")))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    vocab = build_vocab()
    cfg = Config(vocab=len(vocab), hidden=HIDDEN, layers=2, heads=4, intermediate=64, max_pos=128, pooler=False)
    models = {"fp32": make_encoder(30, cfg), "variant": make_encoder(31, cfg)}
    files = {}
    for k, m in models.items():
        files[k] = os.path.join(a.out, f"encoder_{k}.onnx")
        export_module(m, cfg, 14, files[k])
    for name, spec in SPECS.items():
        onnx = {"onnx/model.onnx": files["fp32"]}
        if spec.get("variants"):  # Optimum / sentence-transformers export names beside the fp32 file
            onnx.update({"onnx/model_quantized.onnx": files["variant"],
                         "onnx/model_qint8_avx512_vnni.onnx": files["variant"]})
        write_dir(a.out, name, spec, onnx, vocab)
        cases = []
        runs = [({}, models["fp32"])]
        for p in spec.get("prompts", {}):
            runs.append(({"prompt_name": p}, models["fp32"]))
        if spec.get("prompts"):
            runs.append(({"prompt": "passage: "}, models["fp32"]))
        for n in spec.get("matryoshka", []):
            runs.append(({"dimensions": n}, models["fp32"]))
        if spec.get("variants"):
            runs.append(({"model_file": "onnx/model_quantized.onnx"}, models["variant"]))
        for opts, model in runs:
            prompt = opts.get("prompt")
            if "prompt_name" in opts:
                prompt = spec["prompts"][opts["prompt_name"]]
            elif prompt is None and spec.get("default_prompt_name"):
                prompt = spec["prompts"][spec["default_prompt_name"]]
            for t in TEXTS:
                ids, vec, hs = reference(model, vocab, spec, t, prompt, opts.get("dimensions"))
                cases.append(dict(opts, text=t, full_text=(prompt or "") + t, ids=ids, vector=vec))
                if not opts and model is models["fp32"]:  # the model's own token vectors (TEI /embed_all)
                    cases[-1]["token_vectors"] = [[float(x) for x in row] for row in hs.astype(np.float32)]
        with open(os.path.join(a.out, name + ".reference.json"), "w") as f:
            json.dump({"spec": {k: v for k, v in spec.items() if k != "dense"}, "cases": cases}, f)
        print(f"wrote {os.path.join(a.out, name)} ({len(cases)} reference vectors)")


if __name__ == "__main__":
    main()
