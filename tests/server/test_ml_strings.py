"""String tensors over OIP v2 (KServe): a scikit-learn pipeline with string categories and string
class labels (OneHotEncoder(cats_strings) + LogisticRegression(classlabels_strings), converted by
scripts/ml/convert.py at test time) served by a real `glassbox serve`; BYTES inputs in JSON and in
the binary extension, BYTES label and FP32 probabilities out, checked against scikit-learn.
A model whose output is a sequence of maps (ZipMap) is refused at load, naming the alternative.
"""
import http.client
import json
import os
import struct
import sys
import time

import numpy as np
import onnx
import pytest
import requests

from conftest import ROOT, SLOW

sys.path.insert(0, os.path.join(ROOT, "scripts", "ml"))
import convert  # noqa: E402
import string_models  # noqa: E402


@pytest.fixture(scope="module")
def pipeline_models(tmp_path_factory):
    """(model dir, zipmap model dir, sklearn pipeline, held-out rows) of a 3-class string-label pipeline."""
    from sklearn import linear_model, preprocessing
    from sklearn.pipeline import make_pipeline

    x, y = string_models.categorical(50, 400, 3)
    xt, _ = string_models.categorical(51, 40, 3)
    xt = string_models.with_unknowns(xt)
    enc = preprocessing.OneHotEncoder(handle_unknown="ignore")
    clf = linear_model.LogisticRegression(max_iter=2000)
    pipe = make_pipeline(enc, clf).fit(x, y)
    model = convert.one_hot_linear(enc, clf)
    root = tmp_path_factory.mktemp("ml-strings")
    (root / "animals").mkdir()
    onnx.save(model, str(root / "animals" / "model.onnx"))
    (root / "animals_zipmap").mkdir()
    onnx.save(convert.with_zipmap(model, clf.classes_), str(root / "animals_zipmap" / "model.onnx"))
    return root / "animals", root / "animals_zipmap", pipe, xt


def test_bytes_in_label_and_probabilities_out(start_server, pipeline_models):
    model_dir, _, pipe, xt = pipeline_models
    s = start_server([str(model_dir)])
    meta = requests.get(s.url("/v2/models/animals"), timeout=30 * SLOW).json()
    assert meta["inputs"] == [{"name": "X", "datatype": "BYTES", "shape": [-1, 3]}]
    assert {o["name"]: o["datatype"] for o in meta["outputs"]} == {"label": "BYTES", "probabilities": "FP32"}
    body = {"inputs": [{"name": "X", "datatype": "BYTES", "shape": list(xt.shape), "data": xt.ravel().tolist()}]}
    r = requests.post(s.url("/v2/models/animals/infer"), json=body, timeout=60 * SLOW)
    assert r.status_code == 200, r.text
    outs = {o["name"]: o for o in r.json()["outputs"]}
    assert outs["label"]["datatype"] == "BYTES" and outs["label"]["shape"] == [len(xt)]
    assert outs["label"]["data"] == pipe.predict(xt).tolist()  # string labels, exactly
    proba = np.array(outs["probabilities"]["data"], np.float64).reshape(outs["probabilities"]["shape"])
    ref = pipe.predict_proba(xt)
    assert np.max(np.abs(proba - ref) / np.maximum(np.abs(ref), 1)) <= 1e-5


def test_binary_bytes_in_and_out_over_http_client(start_server, pipeline_models):
    """The binary tensor extension: BYTES elements as 4-byte little-endian length + bytes, both ways."""
    model_dir, _, pipe, xt = pipeline_models
    s = start_server([str(model_dir)])
    rows = xt[:5]
    raw = b"".join(struct.pack("<I", len(v.encode())) + v.encode() for v in rows.ravel())
    header = json.dumps({"inputs": [{"name": "X", "datatype": "BYTES", "shape": list(rows.shape),
                                     "parameters": {"binary_data_size": len(raw)}}],
                         "outputs": [{"name": "label", "parameters": {"binary_data": True}}]}).encode()
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=60 * SLOW)
    try:
        conn.request("POST", "/v2/models/animals/infer", body=header + raw,
                     headers={"Inference-Header-Content-Length": str(len(header)),
                              "Content-Type": "application/octet-stream"})
        resp = conn.getresponse()
        data = resp.read()
        assert resp.status == 200, data
        n = int(resp.getheader("Inference-Header-Content-Length"))
    finally:
        conn.close()
    out = json.loads(data[:n])["outputs"][0]
    assert out["name"] == "label" and out["datatype"] == "BYTES"
    labels, pos, blob = [], 0, data[n:]
    assert out["parameters"]["binary_data_size"] == len(blob)
    while pos < len(blob):
        (size,) = struct.unpack_from("<I", blob, pos)
        labels.append(blob[pos + 4:pos + 4 + size].decode())
        pos += 4 + size
    assert labels == pipe.predict(rows).tolist()


def test_bytes_sent_to_a_numeric_input_is_refused(start_server, pipeline_models):
    model_dir, _, _, _ = pipeline_models
    s = start_server([str(model_dir)])
    body = {"inputs": [{"name": "X", "datatype": "FP32", "shape": [1, 3], "data": [1, 2, 3]}]}
    r = requests.post(s.url("/v2/models/animals/infer"), json=body, timeout=30 * SLOW)
    assert r.status_code == 400 and "BYTES" in r.json()["error"]


def test_zipmap_model_is_refused_naming_the_alternative(start_server, pipeline_models):
    model_dir, zipmap_dir, _, _ = pipeline_models
    s = start_server([str(model_dir), str(zipmap_dir)], wait_ready=False)
    deadline = time.time() + 60 * SLOW
    while time.time() < deadline and "models ready" not in s.log:
        time.sleep(0.05)
    assert "1 of 2 models ready" in s.log, s.log
    idx = {e["name"]: e for e in requests.post(s.url("/v2/repository/index"), json={}, timeout=30).json()}
    assert idx["animals"]["state"] == "READY"
    assert idx["animals_zipmap"]["state"] == "UNAVAILABLE"
    reason = idx["animals_zipmap"]["reason"]
    assert "sequence<map<string, float32>>" in reason and "zipmap" in reason.lower() and "tensors only" in reason
    assert requests.get(s.url("/v2/models/animals_zipmap/ready"), timeout=10).status_code in (404, 503)
