#!/usr/bin/python3
"""Small cross-encoder (reranker) model directories, laid out as sentence-transformers' CrossEncoder
saves them and its ONNX backend exports them, for tests/pipeline/rerank_test.js:

  onnx/model.onnx          a BERT-shaped encoder with a one-logit classifier head (scripts/make_test_models.py's
                           Encoder, tanh pooler, num_labels 1), exported with torch.onnx: inputs input_ids,
                           attention_mask, token_type_ids; output logits [batch, 1]
  tokenizer.json           WordPiece, with the pair template [CLS] $A [SEP] $B:1 [SEP]:1 (make_st_models.py's)
  tokenizer_config.json, special_tokens_map.json
  config.json              BertForSequenceClassification, id2label {"0": "LABEL_0"}, and the activation the way
                           each sentence-transformers version records it:
    ce_sigmoid/            v4+: "sentence_transformers": {"activation_fn": "torch.nn.modules.activation.Sigmoid"}
    ce_identity/           v2/v3: "sbert_ce_default_activation_function": "torch.nn.modules.linear.Identity"
                           (as the MS MARCO cross-encoders publish it: scores are raw logits)
    ce_undeclared/         neither (transformers' rule for one label applies: sigmoid)
No glassbox.json: every decision must come from these files.
Usage: scripts/make_cross_encoder.py [--out DIR]   (default tests/data/generated/cross_encoder)
"""
import argparse
import json
import os
import shutil
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_test_models import Config, Encoder, export_module  # noqa: E402
from make_st_models import build_vocab, tokenizer_json  # noqa: E402

ACTIVATIONS = {
    "ce_sigmoid": {"sentence_transformers": {"activation_fn": "torch.nn.modules.activation.Sigmoid", "version": "4.1.0"}},
    "ce_identity": {"sbert_ce_default_activation_function": "torch.nn.modules.linear.Identity"},
    "ce_undeclared": {},
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                                   "tests", "data", "generated", "cross_encoder")))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    vocab = build_vocab()
    cfg = Config(vocab=len(vocab), hidden=32, layers=2, heads=4, intermediate=64, max_pos=128, num_labels=1)
    torch.manual_seed(40)
    model = Encoder(cfg).eval()
    with torch.no_grad():  # wide weights: scores of different documents must differ clearly
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.3)
    onnx_file = os.path.join(a.out, "cross_encoder.onnx")
    export_module(model, cfg, 14, onnx_file)
    for name, extra in ACTIVATIONS.items():
        d = os.path.join(a.out, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, "onnx"))
        shutil.copyfile(onnx_file, os.path.join(d, "onnx", "model.onnx"))
        with open(os.path.join(d, "tokenizer.json"), "w") as f:
            json.dump(tokenizer_json(vocab, True), f, indent=2)
        with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
            json.dump({"tokenizer_class": "BertTokenizer", "do_lower_case": True, "model_max_length": 32,
                       "cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "unk_token": "[UNK]",
                       "mask_token": "[MASK]"}, f, indent=2)
        with open(os.path.join(d, "special_tokens_map.json"), "w") as f:
            json.dump({"cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "unk_token": "[UNK]",
                       "mask_token": "[MASK]"}, f, indent=2)
        config = {"architectures": ["BertForSequenceClassification"], "model_type": "bert", "vocab_size": len(vocab),
                  "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64,
                  "max_position_embeddings": 128, "type_vocab_size": 2, "pad_token_id": 0,
                  "id2label": {"0": "LABEL_0"}, "label2id": {"LABEL_0": 0}}
        config.update(extra)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(config, f, indent=2)
        print(f"wrote {d}")


if __name__ == "__main__":
    main()
