"""Every bad input from Python raises the typed glassbox exception (never a crash, never a bare
TypeError from the binding layer), with the C++ message's what / where / fix."""

import numpy as np
import pytest

import glassbox
from conftest import generated_model, text_feeds


@pytest.fixture(scope="module")
def bert():
    return glassbox.Session(generated_model("bert_tiny_op14"), threads=1)


@pytest.fixture(scope="module")
def feeds(bert):
    return text_feeds(bert, 2, 8, 7)


def replace(feeds, name, value):
    f = dict(feeds)
    f[name] = value
    return f


BAD_FEEDS = {
    "none_value": lambda f: replace(f, "input_ids", None),
    "list_value": lambda f: replace(f, "input_ids", f["input_ids"].tolist()),
    "wrong_dtype_int32": lambda f: replace(f, "input_ids", f["input_ids"].astype(np.int32)),
    "wrong_dtype_float": lambda f: replace(f, "attention_mask", f["attention_mask"].astype(np.float32)),
    "wrong_rank_1d": lambda f: replace(f, "input_ids", f["input_ids"].reshape(-1)),
    "wrong_rank_3d": lambda f: replace(f, "input_ids", f["input_ids"][None]),
    "scalar": lambda f: replace(f, "input_ids", np.int64(3)),
    "missing_feed": lambda f: {k: v for k, v in f.items() if k != "token_type_ids"},
    "unknown_feed": lambda f: replace(f, "no_such_input", f["input_ids"]),
    "non_str_key": lambda f: {**f, 3: f["input_ids"]},
    "object_array": lambda f: replace(f, "input_ids", np.array([["a", 1]], dtype=object)),
    "string_array": lambda f: replace(f, "input_ids", np.array([["a", "b"]])),
    "feeds_not_dict": lambda f: list(f.values()),
    "feeds_none": lambda f: None,
    "mismatched_batch": lambda f: replace(f, "attention_mask", np.ones((3, 8), np.int64)),
    "id_out_of_range": lambda f: replace(f, "input_ids", np.full((2, 8), 10**6, np.int64)),
}


@pytest.mark.parametrize("case", sorted(BAD_FEEDS))
def test_bad_feeds_raise_typed(bert, feeds, case):
    with pytest.raises(glassbox.GlassboxError) as e:
        bert.run(BAD_FEEDS[case](feeds))
    err = e.value
    assert isinstance(err, (glassbox.InvalidInput, glassbox.Unsupported)), type(err)
    assert err.what and err.code and str(err)


def test_messages_say_what_where_fix(bert, feeds):
    with pytest.raises(glassbox.InvalidInput) as e:
        bert.run(replace(feeds, "input_ids", feeds["input_ids"].astype(np.int32)))
    assert "input_ids" in e.value.what and "int32" in e.value.what and "int64" in e.value.what
    assert "input_ids: int64[batch, sequence]" in e.value.fix
    assert isinstance(e.value, ValueError) and isinstance(e.value, TypeError)
    with pytest.raises(glassbox.InvalidInput, match="missing input 'token_type_ids'"):
        bert.run({k: v for k, v in feeds.items() if k != "token_type_ids"})
    with pytest.raises(glassbox.NotFound, match="not an output"):
        bert.run(feeds, ["nope"])
    with pytest.raises(glassbox.InvalidInput):
        bert.run(feeds, "pooler_output")  # a str, not a list of names
    with pytest.raises(glassbox.InvalidInput):
        bert.run(feeds, check_numerics=1)
    with pytest.raises(glassbox.InvalidInput):
        bert.run(feeds, observer=42)


def test_run_unpadded_bad_masks(bert, feeds):
    holes = replace(feeds, "attention_mask", np.array([[1, 0, 1, 1, 1, 1, 1, 1], [1] * 8], np.int64))
    with pytest.raises(glassbox.InvalidInput):
        bert.run_unpadded(holes)
    with pytest.raises(glassbox.GlassboxError):
        bert.run_unpadded(feeds, mask_input="no_such_mask")
    with pytest.raises(glassbox.InvalidInput):
        bert.run_unpadded(feeds, length_multiple=0)


TOKENIZER_CASES = {
    "encode_none": lambda t: t.encode(None),
    "encode_bytes": lambda t: t.encode(b"bytes"),
    "encode_int": lambda t: t.encode(5),
    "encode_pair_int": lambda t: t.encode("a", 5),
    "encode_surrogate": lambda t: t.encode("bad \ud800 surrogate"),
    "encode_special_not_bool": lambda t: t.encode("a", add_special_tokens="yes"),
    "batch_none": lambda t: t.encode_batch(None),
    "batch_str": lambda t: t.encode_batch("not a list"),
    "batch_item_none": lambda t: t.encode_batch(["a", None]),
    "batch_triple": lambda t: t.encode_batch([("a", "b", "c")]),
    "batch_threads_zero": lambda t: t.encode_batch(["a"], threads=0),
    "decode_none": lambda t: t.decode(None),
    "decode_str": lambda t: t.decode("123"),
    "decode_negative": lambda t: t.decode([1, -1]),
    "decode_float": lambda t: t.decode([1.5]),
    "decode_unknown_id": lambda t: t.decode([10**8]),
    "truncation_negative": lambda t: t.enable_truncation(-3),
    "truncation_direction": lambda t: t.enable_truncation(8, direction="up"),
    "padding_length_zero": lambda t: t.enable_padding(length=0),
    "padding_direction": lambda t: t.enable_padding(direction=None),
    "from_file_missing": lambda t: glassbox.Tokenizer.from_file("/no/such/tokenizer.json"),
    "from_file_none": lambda t: glassbox.Tokenizer.from_file(None),
    "from_str_garbage": lambda t: glassbox.Tokenizer.from_str("{not json"),
    "from_str_unknown_model": lambda t: glassbox.Tokenizer.from_str('{"model": {"type": "Foo"}}'),
}


@pytest.mark.parametrize("case", sorted(TOKENIZER_CASES))
def test_bad_tokenizer_calls_raise_typed(case):
    import os
    from conftest import ROOT
    tk = glassbox.Tokenizer.from_file(os.path.join(ROOT, "tests/data/tokenizer/models/bert-uncased.json"))
    with pytest.raises(glassbox.GlassboxError) as e:
        TOKENIZER_CASES[case](tk)
    assert str(e.value)


PIPELINE_CASES = {
    "call_none": lambda p: p(None),
    "call_int": lambda p: p(3),
    "call_list_with_none": lambda p: p(["ok", None]),
    "empty_text": lambda p: p(""),
    "top_k_zero": lambda p: p("hello", top_k=0),
    "top_k_str": lambda p: p("hello", top_k="2"),
    "unknown_task": lambda p: glassbox.pipeline("translation"),
    "wrong_task": lambda p: glassbox.pipeline("feature-extraction"),
    "missing_dir": lambda p: glassbox.pipeline("text-classification", "/no/such/dir"),
    "bad_truncation": lambda p: glassbox.pipeline("text-classification", truncation="sometimes"),
    "bad_threads": lambda p: glassbox.pipeline("text-classification", threads=-1),
}


@pytest.mark.parametrize("case", sorted(PIPELINE_CASES))
def test_bad_pipeline_calls_raise_typed(case, langid):
    with pytest.raises(glassbox.GlassboxError) as e:
        PIPELINE_CASES[case](langid)
    assert str(e.value)


@pytest.fixture(scope="module")
def langid():
    return glassbox.pipeline("text-classification", threads=1)
