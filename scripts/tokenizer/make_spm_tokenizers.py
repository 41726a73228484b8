#!/usr/bin/env python3
"""Trains a small SentencePiece Unigram model with Debian's python3-sentencepiece and writes it as
HF tokenizer.json files the golden tests use (the HF peer produces the expected output from them):

  tests/data/tokenizer/models/spm-unigram.json   Precompiled (SentencePiece nmt_nfkc charsmap) +
                                                 Replace(" {2,}"), Metaspace, Unigram, T5-style template
  tests/data/tokenizer/models/scripts-wordlevel.json
                                                 UnicodeScripts pre-tokenizer + a WordLevel model that maps
                                                 every piece to <unk>: exposes the script split of each char

The layout follows what HF's SentencePiece converters emit for ALBERT/T5-style models.
Deterministic: fixed corpus (tests/data/tokenizer/corpus/*.txt), fixed trainer options, one thread.
Usage: /usr/bin/python3 scripts/tokenizer/make_spm_tokenizers.py     (apt-get install python3-sentencepiece)
"""
import base64
import glob
import json
import os
import tempfile

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "tests", "data", "tokenizer", "models")


def train(tmp):
    corpus = os.path.join(tmp, "corpus.txt")
    with open(corpus, "w", encoding="utf-8") as f:
        for p in sorted(glob.glob(os.path.join(ROOT, "tests", "data", "tokenizer", "corpus", "*.txt"))):
            f.write(open(p, encoding="utf-8").read())
    prefix = os.path.join(tmp, "spm")
    spm.SentencePieceTrainer.train(
        input=corpus, model_prefix=prefix, model_type="unigram", vocab_size=2000,
        normalization_rule_name="nmt_nfkc", character_coverage=0.9995, num_threads=1,
        unk_id=0, bos_id=-1, eos_id=1, pad_id=2, unk_piece="<unk>", eos_piece="</s>", pad_piece="<pad>",
        minloglevel=2)
    m = pb.ModelProto()
    m.ParseFromString(open(prefix + ".model", "rb").read())
    return m


def added(id_, content):
    return {"id": id_, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": True}


def main():
    with tempfile.TemporaryDirectory() as tmp:
        m = train(tmp)
    charsmap = base64.b64encode(m.normalizer_spec.precompiled_charsmap).decode("ascii")
    vocab = [[p.piece, p.score] for p in m.pieces]
    metaspace = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
    spm_tok = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [added(0, "<unk>"), added(1, "</s>"), added(2, "<pad>")],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap": charsmap},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
        "pre_tokenizer": metaspace,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "special_tokens": {"</s>": {"id": "</s>", "ids": [1], "tokens": ["</s>"]}}},
        "decoder": metaspace,
        "model": {"type": "Unigram", "unk_id": 0, "vocab": vocab, "byte_fallback": False},
    }
    scripts_tok = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [added(0, "<unk>")],
        "normalizer": None,
        "pre_tokenizer": {"type": "UnicodeScripts"},
        "post_processor": None,
        "decoder": None,
        "model": {"type": "WordLevel", "vocab": {"<unk>": 0}, "unk_token": "<unk>"},
    }
    for name, tok in (("spm-unigram.json", spm_tok), ("scripts-wordlevel.json", scripts_tok)):
        path = os.path.join(OUT, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(tok, f, ensure_ascii=False, indent=1)
            f.write("\n")
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
