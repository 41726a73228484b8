"""Sparse (SPLADE) embedding models over HTTP: TEI POST /embed_sparse and the OIP "indices" + "values"
outputs, against the reference vectors scripts/make_sparse_models.py computes with torch + numpy following
sentence-transformers' SpladePooling semantics (indices exact, values <= 1e-5 relative); the dense routes
refuse a sparse model by name and /embed_sparse refuses a dense one."""
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np
import pytest
import requests

from conftest import ROOT

REL = 1e-5


@pytest.fixture(scope="module")
def sparse_models():
    out = tempfile.mkdtemp(prefix="glassbox-sparse-models-")
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "make_sparse_models.py"), "--out", out],
                   check=True, capture_output=True)
    dense = os.path.join(out, "dense_logits")  # the same MLM without a sparse declaration: a dense (mean) embedder
    shutil.copytree(os.path.join(out, "splade_declared"), dense)
    os.remove(os.path.join(dense, "glassbox.json"))
    refs = {n: json.load(open(os.path.join(out, n + ".reference.json"))) for n in ("splade_max", "splade_declared")}
    yield out, refs
    shutil.rmtree(out, ignore_errors=True)


@pytest.fixture(scope="module")
def sparse_server(sparse_models, request):
    from conftest import Server
    out, _ = sparse_models
    s = Server([os.path.join(out, n) for n in ("splade_max", "splade_declared", "dense_logits")])
    yield s
    s.stop()


def same_sparse(got, case):
    """got: [{index, value}] in the order served."""
    idx = [e["index"] for e in got]
    val = np.array([e["value"] for e in got], dtype=np.float64)
    ref = np.array(case["values"], dtype=np.float64)
    if idx != case["indices"]:
        return False, f"indices {idx} != {case['indices']}"
    # the project's parity criterion (tests/common/peer_helpers.js maxRelDiff): largest absolute difference over
    # max(largest reference magnitude, 1)
    err = float(np.max(np.abs(val - ref)) / max(float(np.max(np.abs(ref))), 1.0)) if len(ref) else 0.0
    return err <= REL, f"max relative difference {err:.2e}"


def test_embed_sparse_equals_reference(sparse_server, sparse_models):
    _, refs = sparse_models
    for name, ref in refs.items():
        plain = [c for c in ref["cases"] if "prompt_name" not in c]
        r = requests.post(sparse_server.url("/embed_sparse"), json={"inputs": [c["text"] for c in plain], "model": name},
                          timeout=60)
        assert r.status_code == 200, r.text
        got = r.json()
        assert len(got) == len(plain)
        for g, c in zip(got, plain):
            ok, why = same_sparse(g, c)
            assert ok, f"{name} {c['text']!r}: {why}"
        if ref["spec"].get("top_k"):
            assert all(len(g) <= ref["spec"]["top_k"] for g in got)
    # a single string is one input; a named prompt is put before the text
    ref = refs["splade_max"]
    case = next(c for c in ref["cases"] if c.get("prompt_name") == "query")
    r = requests.post(sparse_server.url("/embed_sparse"),
                      json={"inputs": case["text"], "model": "splade_max", "prompt_name": "query"}, timeout=60)
    assert r.status_code == 200, r.text
    ok, why = same_sparse(r.json()[0], case)
    assert ok, why


def test_embed_sparse_truncation_is_never_silent(sparse_server):
    long = "the quick brown fox " * 40  # over max_seq_length 64
    r = requests.post(sparse_server.url("/embed_sparse"), json={"inputs": long, "model": "splade_max"}, timeout=60)
    assert r.status_code == 413, r.text
    r = requests.post(sparse_server.url("/embed_sparse"), json={"inputs": long, "model": "splade_max", "truncate": True},
                      timeout=60)
    assert r.status_code == 200 and int(r.headers["X-Glassbox-Tokens-Dropped"]) > 0


def test_info_names_the_splade_pooling(start_server, sparse_models):
    out, _ = sparse_models
    s = start_server([os.path.join(out, "splade_max")])
    info = requests.get(s.url("/info"), timeout=30).json()
    assert info["model_type"] == {"embedding": {"pooling": "splade"}}, info


def test_dense_and_sparse_routes_refuse_the_other_kind(sparse_server):
    r = requests.post(sparse_server.url("/embed"), json={"inputs": "hello", "model": "splade_max"}, timeout=30)
    assert r.status_code == 400 and "/embed_sparse" in r.json()["error"]
    r = requests.post(sparse_server.url("/v1/embeddings"), json={"input": "hello", "model": "splade_max"}, timeout=30)
    assert r.status_code == 400 and "/embed_sparse" in r.text
    r = requests.post(sparse_server.url("/embed_sparse"), json={"inputs": "hello", "model": "dense_logits"}, timeout=30)
    assert r.status_code == 400 and "sparse" in r.json()["error"] and "/embed" in r.json()["error"]
    r = requests.post(sparse_server.url("/embed"), json={"inputs": "hello", "model": "dense_logits"}, timeout=30)
    assert r.status_code == 200


def test_oip_sparse_outputs_are_coo_tensors(sparse_server, sparse_models):
    _, refs = sparse_models
    ref = refs["splade_max"]
    plain = [c for c in ref["cases"] if "prompt_name" not in c][:3]
    meta = requests.get(sparse_server.url("/v2/models/splade_max"), timeout=30).json()
    assert [(o["name"], o["datatype"], o["shape"]) for o in meta["outputs"]] == [("indices", "INT64", [-1, 2]),
                                                                              ("values", "FP32", [-1])]
    body = {"inputs": [{"name": "text", "datatype": "BYTES", "shape": [len(plain)], "data": [c["text"] for c in plain]}]}
    r = requests.post(sparse_server.url("/v2/models/splade_max/infer"), json=body, timeout=60)
    assert r.status_code == 200, r.text
    outs = {o["name"]: o for o in r.json()["outputs"]}
    nnz = sum(len(c["indices"]) for c in plain)
    assert outs["indices"]["datatype"] == "INT64" and outs["indices"]["shape"] == [nnz, 2]
    assert outs["values"]["datatype"] == "FP32" and outs["values"]["shape"] == [nnz]
    pairs = np.array(outs["indices"]["data"]).reshape(nnz, 2)
    values = outs["values"]["data"]
    for i, c in enumerate(plain):
        rows = [k for k in range(nnz) if pairs[k, 0] == i]
        got = [{"index": int(pairs[k, 1]), "value": values[k]} for k in rows]
        ok, why = same_sparse(got, c)
        assert ok, f"OIP text {i}: {why}"
