"""Dense-retrieval routes over raw HTTP against references computed without glassbox.

The model directories and their reference vectors come from scripts/make_st_models.py (torch forward +
numpy pooling following sentence-transformers' documented semantics, one text at a time). Checked:
  POST /similarity    TEI's body {inputs: {source_sentence, sentences}, parameters}; the scores are the
                      model's declared similarity_fn_name (cosine for st_cls_normalize, dot for st_mean)
                      of the reference vectors, prompt_name applied through "parameters";
  POST /embed_all     per text, per token, the encoder's last hidden state (the reference token vectors);
  POST /embed         prompt_name, dimensions (Matryoshka: truncate, then normalize), truncation_direction
                      Left/Right (which tokens are kept), the long-input policy (error names the input and
                      its length; truncate reports per input; split is refused for embeddings);
  POST /v1/embeddings dimensions (raw HTTP here; the openai npm client in retrieval_peer_test.js).
"""
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np
import pytest
import requests

from conftest import ROOT, Server

MODELS = ["st_cls_normalize", "st_mean", "st_dense_normalize", "st_lasttoken_normalize"]


@pytest.fixture(scope="module")
def st():
    out = tempfile.mkdtemp(prefix="glassbox-st-")
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "make_st_models.py"), "--out", out], check=True,
                   capture_output=True)
    refs = {}
    for name in MODELS:
        with open(os.path.join(out, name + ".reference.json")) as f:
            refs[name] = json.load(f)["cases"]
    server = Server([os.path.join(out, name) for name in MODELS])
    yield server, refs
    server.stop()
    shutil.rmtree(out, ignore_errors=True)


def cases(refs, name, **opts):
    """The reference cases of `name` with exactly these options (prompt_name, prompt, dimensions, model_file)."""
    keys = ("prompt_name", "prompt", "dimensions", "model_file")
    return [c for c in refs[name] if all(c.get(k) == opts.get(k) for k in keys)]


def post(server, route, body):
    return requests.post(server.base + route, json=body, timeout=60)


def close(got, want, tol=1e-4):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    return got.shape == want.shape and np.allclose(got, want, rtol=tol, atol=tol)


def st_similarity(fn, a, b):
    """sentence-transformers' similarity functions (SimilarityFunction): cos_sim, dot_score, -L2, -L1."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if fn == "cosine":
        return float(a @ b / (max(np.linalg.norm(a), 1e-12) * max(np.linalg.norm(b), 1e-12)))
    if fn == "dot":
        return float(a @ b)
    raise ValueError(fn)


@pytest.mark.parametrize("name,fn", [("st_cls_normalize", "cosine"), ("st_mean", "dot")])
def test_similarity_uses_the_declared_function(st, name, fn):
    server, refs = st
    ref = cases(refs, name)
    r = post(server, "/similarity", {"model": name, "inputs": {"source_sentence": ref[0]["text"],
                                                                "sentences": [c["text"] for c in ref[1:]]}})
    assert r.status_code == 200, r.text
    want = [st_similarity(fn, ref[0]["vector"], c["vector"]) for c in ref[1:]]
    assert close(r.json(), want), (r.json(), want)
    assert r.headers["X-Glassbox-Similarity"] == fn
    if fn == "dot":  # the declared function, not cosine: unnormalized vectors give other numbers
        assert not close(r.json(), [st_similarity("cosine", ref[0]["vector"], c["vector"]) for c in ref[1:]])


def test_similarity_prompt_name_in_parameters(st):
    server, refs = st
    ref = cases(refs, "st_cls_normalize", prompt_name="query")
    r = post(server, "/similarity", {"model": "st_cls_normalize", "parameters": {"prompt_name": "query"},
                                     "inputs": {"source_sentence": ref[0]["text"], "sentences": [c["text"] for c in ref[1:]]}})
    assert r.status_code == 200, r.text
    assert close(r.json(), [st_similarity("cosine", ref[0]["vector"], c["vector"]) for c in ref[1:]])


@pytest.mark.parametrize("body,why", [
    ({"inputs": {"source_sentence": "a fox"}}, "no sentences"),
    ({"inputs": {"source_sentence": "a fox", "sentences": []}}, "empty sentences"),
    ({"inputs": ["a fox", "a dog"]}, "inputs not an object"),
    ({"inputs": {"source_sentence": 3, "sentences": ["a"]}}, "source not a string"),
    ({"inputs": {"source_sentence": "a", "sentences": ["b"]}, "parameters": {"prompt_name": "nope"}}, "unknown prompt"),
])
def test_similarity_bad_bodies(st, body, why):
    server, _ = st
    r = post(server, "/similarity", dict(body, model="st_cls_normalize"))
    assert r.status_code == 400, (why, r.text)
    assert r.json()["error_type"] == "validation", r.text


@pytest.mark.parametrize("name", ["st_cls_normalize", "st_lasttoken_normalize"])
def test_embed_all_gives_the_token_vectors(st, name):
    server, refs = st
    ref = cases(refs, name)
    r = post(server, "/embed_all", {"model": name, "inputs": [c["text"] for c in ref]})
    assert r.status_code == 200, r.text
    got = r.json()
    assert len(got) == len(ref)
    for g, c in zip(got, ref):
        assert len(g) == len(c["ids"]), "one vector per token, special and prompt tokens included"
        assert close(g, c["token_vectors"]), c["text"]
    r = post(server, "/embed_all", {"model": name, "inputs": ref[0]["text"], "normalize": True})
    assert r.status_code == 400 and "normalize" in r.text


def test_embed_prompt_name_and_dimensions(st):
    server, refs = st
    ref = cases(refs, "st_cls_normalize", prompt_name="query")
    r = post(server, "/embed", {"model": "st_cls_normalize", "inputs": [c["text"] for c in ref], "prompt_name": "query"})
    assert r.status_code == 200, r.text
    assert all(close(g, c["vector"]) for g, c in zip(r.json(), ref))
    for name, n in [("st_cls_normalize", 8), ("st_dense_normalize", 6)]:
        ref = cases(refs, name, dimensions=n)
        r = post(server, "/embed", {"model": name, "inputs": [c["text"] for c in ref], "dimensions": n})
        assert r.status_code == 200, r.text
        got = r.json()
        assert all(len(g) == n and close(g, c["vector"]) for g, c in zip(got, ref)), name
        assert all(abs(np.linalg.norm(g) - 1) < 1e-5 for g in got), "truncated, then normalized"
    r = post(server, "/embed", {"model": "st_cls_normalize", "inputs": "a fox", "prompt_name": "nope"})
    assert r.status_code == 400 and "query" in r.json()["error"], r.text


@pytest.mark.parametrize("dims,param", [(0, "dimensions"), (33, "dimensions"), ("8", "dimensions")])
def test_dimensions_out_of_range(st, dims, param):
    server, _ = st
    r = post(server, "/v1/embeddings", {"model": "st_cls_normalize", "input": "a fox", "dimensions": dims})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] == param, r.text
    r = post(server, "/embed", {"model": "st_cls_normalize", "inputs": "a fox", "dimensions": dims})
    assert r.status_code == 400, r.text


def test_openai_dimensions_over_raw_http(st):
    server, refs = st
    ref = cases(refs, "st_cls_normalize", dimensions=8)
    r = post(server, "/v1/embeddings", {"model": "st_cls_normalize", "input": [c["text"] for c in ref], "dimensions": 8,
                                        "encoding_format": "float"})
    assert r.status_code == 200, r.text
    data = r.json()["data"]
    assert [d["index"] for d in data] == list(range(len(ref)))
    assert all(close(d["embedding"], c["vector"]) for d, c in zip(data, ref))


# A text of 70 words from the model's vocabulary: 72 tokens with [CLS] and [SEP], over max_seq_length 64.
WORDS = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen".split()
LONG = " ".join((WORDS * 5)[:70])


def test_long_input_policy_on_embed(st):
    server, _ = st
    m = "st_cls_normalize"
    r = post(server, "/embed", {"model": m, "inputs": ["a fox", LONG]})
    assert r.status_code == 413, r.text
    assert "input 1" in r.json()["error"] and "72 tokens" in r.json()["error"] and "64" in r.json()["error"], r.text
    r = post(server, "/v1/embeddings", {"model": m, "input": ["a fox", LONG]})
    assert r.status_code == 413 and r.json()["error"]["param"] == "input", r.text
    for body in ({"truncate": True}, {"overflow": "truncate"}):
        r = post(server, "/embed", dict(body, model=m, inputs=["a fox", LONG]))
        assert r.status_code == 200, r.text
        assert r.headers["X-Glassbox-Tokens-Dropped-Per-Input"] == "0,8", r.headers
        assert r.headers["X-Glassbox-Tokens-Dropped"] == "8"
    r = post(server, "/embed", {"model": m, "inputs": LONG, "overflow": "split"})
    assert r.status_code == 400 and "split" in r.json()["error"], r.text
    r = post(server, "/embed", {"model": m, "inputs": LONG, "overflow": "truncate", "truncate": False})
    assert r.status_code == 400, r.text


@pytest.mark.parametrize("direction,kept", [("Right", slice(0, 62)), ("Left", slice(8, 70)), ("left", slice(8, 70))])
def test_truncation_direction_keeps_that_end(st, direction, kept):
    """Right keeps the first 62 words ([CLS] + 62 + [SEP] = 64), Left the last 62: the vector equals the
    embedding of exactly those words, which fit."""
    server, _ = st
    m = "st_dense_normalize"
    words = LONG.split()
    r = post(server, "/embed", {"model": m, "inputs": LONG, "truncate": True, "truncation_direction": direction})
    assert r.status_code == 200, r.text
    want = post(server, "/embed", {"model": m, "inputs": " ".join(words[kept])})
    other = post(server, "/embed", {"model": m, "inputs": " ".join(words[slice(8, 70) if kept.start == 0 else slice(0, 62)])})
    assert close(r.json(), want.json(), 1e-5)
    assert not close(r.json(), other.json(), 1e-3)
    r = post(server, "/embed", {"model": m, "inputs": LONG, "truncate": True, "truncation_direction": "Up"})
    assert r.status_code == 400
