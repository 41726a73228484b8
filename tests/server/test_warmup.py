"""Warm-up: declared (glassbox.json, serve config server.model_warmup) or derived by the declared rule,
the warmup_failure policy for derived shapes (ready | unavailable), declared failures kept out, and the
plan with its source in the repository index, the explain route and `glassbox explain`.

The graph under test is Reshape(x[N] -> [2, -1]) (make_server_models.py "reshape"): it computes for even N
and fails for odd N, so the derived warm-up (N = 1) fails while the model serves correct answers; the
reference output is numpy's reshape of the same input."""
import json
import os
import shutil
import subprocess
import time

import numpy as np
import onnx
import requests
from onnx import TensorProto, helper

from conftest import GLASSBOX, SLOW


def index(s):
    r = requests.post(s.url("/v2/repository/index"), json={}, timeout=30)
    assert r.status_code == 200, r.text
    return {e["name"]: e for e in r.json()}


def wait_loaded(s):
    deadline = time.time() + 60 * SLOW
    while time.time() < deadline and "models ready" not in s.log:
        time.sleep(0.05)
    assert "models ready" in s.log, s.log


def reshape_infer(s, name, x):
    body = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [len(x)], "data": x}]}
    return requests.post(s.url("/v2/models/%s/infer" % name), json=body, timeout=30)


def model_folder(repo, name, models, glassbox=None, files=()):
    d = repo / name
    d.mkdir(parents=True)
    shutil.copy(os.path.join(models["reshape"], "model.onnx"), d / "model.onnx")
    if glassbox is not None:
        (d / "glassbox.json").write_text(json.dumps(glassbox))
    for fname, array in files:
        np.save(d / fname, array)
    return d


def declared(inputs):
    return {"warmup": {"inputs": inputs}}


def test_derived_failure_serves_under_policy_ready(start_server, models, tmp_path):
    repo = tmp_path / "repo"
    model_folder(repo, "reshape", models)
    s = start_server(["--model-repository", str(repo)])  # warmup_failure defaults to "ready"
    e = index(s)["reshape"]
    assert e["state"] == "READY"
    assert e["reason"].startswith("ready without warm-up: ") and "derived shapes" in e["reason"], e["reason"]
    assert "x FP32[1] zeros" in e["reason"] and str(repo) not in e["reason"]
    w = e["warmup"]
    assert w["source"] == "derived" and w["declared"] is False and w["policy"] == "ready"
    assert w["outcome"].startswith("failed: ready without warm-up") and "derived shapes" in w["error"], w
    assert w["inputs"] == [{"name": "x", "datatype": "FP32", "shape": [1], "fill": "zeros",
                            "shape_source": "dim 0 'n' batch = 1"}]
    assert "warmup_batch_size 1" in w["rule"]
    x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    r = reshape_infer(s, "reshape", x)
    assert r.status_code == 200, r.text
    out = r.json()["outputs"][0]
    ref = np.reshape(np.array(x, np.float32), (2, -1))
    assert out["shape"] == list(ref.shape) and out["data"] == ref.ravel().tolist()
    ex = requests.get(s.url("/v2/models/reshape/explain"), timeout=30).json()
    assert ex["model"]["warmup"]["outcome"] == w["outcome"] and ex["model"]["warmup"]["error"] == w["error"]
    assert "NOT warmed" in s.log


def test_derived_failure_keeps_model_out_under_policy_unavailable(start_server, models, tmp_path):
    repo = tmp_path / "repo"
    model_folder(repo, "reshape", models)
    s = start_server(["--model-repository", str(repo), "--warmup-failure", "unavailable"], wait_ready=False)
    wait_loaded(s)
    e = index(s)["reshape"]
    assert e["state"] == "UNAVAILABLE" and "warmup" not in e
    assert "warm-up run failed under derived shapes (x FP32[1] zeros)" in e["reason"], e["reason"]
    assert "declare the warm-up" in e["reason"]
    assert requests.get(s.url("/v2/health/ready"), timeout=10).status_code == 503
    assert reshape_infer(s, "reshape", [1.0, 2.0]).status_code == 503


def test_declared_warmups(start_server, models, tmp_path):
    """One repository of declarations: good ones serve warmed, bad or failing ones stay out with the reason,
    whatever the policy for derived shapes says."""
    repo = tmp_path / "repo"
    (tmp_path / "outside.npy").write_bytes(b"")
    model_folder(repo, "odd", models, declared({"x": {"dims": [3], "fill": "zeros"}}))
    model_folder(repo, "rand", models, declared({"x": {"dims": [4], "fill": "random", "seed": 7, "low": -1, "high": 1}}))
    model_folder(repo, "data", models, declared({"x": {"dims": [2], "data": [0.5, -0.5]}}))
    model_folder(repo, "file", models, declared({"x": {"file": "sample.npy"}}),
                 files=[("sample.npy", np.arange(6, dtype=np.float32))])
    model_folder(repo, "wrongtype", models, declared({"x": {"file": "sample.npy"}}),
                 files=[("sample.npy", np.arange(6, dtype=np.int64))])
    model_folder(repo, "escape", models, declared({"x": {"file": "../../outside.npy"}}))
    model_folder(repo, "unknown", models, declared({"x": {"dims": [2], "fill": "zeros"}, "y": {"dims": [1], "fill": "zeros"}}))
    model_folder(repo, "missing", models, declared({}))
    model_folder(repo, "rank", models, declared({"x": {"dims": [2, 1], "fill": "zeros"}}))
    model_folder(repo, "badfill", models, declared({"x": {"dims": [2], "fill": "ones"}}))
    s = start_server(["--model-repository", str(repo)])
    idx = index(s)
    for name in ("rand", "data", "file"):
        e = idx[name]
        assert e["state"] == "READY" and e["reason"] == "", (name, e)
        w = e["warmup"]
        assert w["source"] == "glassbox.json" and w["declared"] is True and w["outcome"] == "done", w
        assert "rule" not in w
    assert idx["rand"]["warmup"]["inputs"][0]["fill"] == "random (seed 7, uniform in [-1, 1))"
    assert idx["data"]["warmup"]["inputs"][0]["fill"] == "data (2 values)"
    assert idx["file"]["warmup"]["inputs"][0] == {"name": "x", "datatype": "FP32", "shape": [6], "fill": "file sample.npy",
                                                  "shape_source": "file"}
    reasons = {
        "odd": "warm-up run failed under declared shapes (x FP32[3] zeros)",
        "wrongtype": "file holds int64",
        "escape": "is not inside the model directory",
        "unknown": "names input 'y', which the model does not have",
        "missing": "does not declare the model's input x",
        "rank": "declares rank 2",
        "badfill": "\"fill\" must be \"zeros\" or \"random\"",
    }
    for name, why in reasons.items():
        e = idx[name]
        assert e["state"] == "UNAVAILABLE" and why in e["reason"], (name, e)
        assert str(repo) not in e["reason"] and str(tmp_path) not in e["reason"]
    r = reshape_infer(s, "file", [1.0, 2.0, 3.0, 4.0])
    assert r.status_code == 200 and r.json()["outputs"][0]["data"] == [1.0, 2.0, 3.0, 4.0]


def test_serve_config_declaration_wins_over_glassbox_json(start_server, models, tmp_path):
    repo = tmp_path / "repo"
    model_folder(repo, "reshape", models, declared({"x": {"dims": [3], "fill": "zeros"}}))  # would fail
    cfg = tmp_path / "serve.json"
    cfg.write_text(json.dumps({"server": {"model_repository": str(repo), "warmup_failure": "unavailable",
                                          "model_warmup": {"reshape": {"inputs": {"x": {"dims": [8], "fill": "zeros"}}}}}}))
    s = start_server(["--config", str(cfg)])
    e = index(s)["reshape"]
    assert e["state"] == "READY" and e["reason"] == ""
    assert e["warmup"]["source"] == "serve config (server.model_warmup)" and e["warmup"]["inputs"][0]["shape"] == [8]
    ex = requests.get(s.url("/v2/models/reshape/explain"), timeout=30).json()
    rows = {r["name"]: r for r in ex["server"]}
    assert rows["warmup_failure"]["value"] == "unavailable" and rows["warmup_failure"]["source"] == "file"
    assert rows["warmup_failure"]["default"] == "ready" and rows["warmup_failure"]["risk"]


def test_serve_refuses_bad_warmup_options(models, tmp_path):
    cfg = tmp_path / "serve.json"
    cfg.write_text(json.dumps({"server": {"model_warmup": {"nosuchmodel": {"inputs": {}}}}}))
    cases = [
        (["--config", str(cfg), models["reshape"]], "model_warmup declares a warm-up for 'nosuchmodel'"),
        (["--warmup-failure", "maybe", models["reshape"]], "warmup_failure 'maybe' is unknown"),
        (["--warmup-image-size", "0", models["reshape"]], "warm-up sizes must be between 1 and 2^20"),
    ]
    for args, why in cases:
        r = subprocess.run([GLASSBOX, "serve", "--host", "127.0.0.1", "--port", "0"] + args, capture_output=True, text=True,
                           timeout=60 * SLOW)
        assert r.returncode != 0 and why in r.stderr, (args, r.stderr)


def rule_model(path):
    """Inputs that exercise every role of the rule: an NCHW image with symbolic H/W, an NHWC image, token ids,
    and a state whose dim 1 shares the batch's name."""
    ins = [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, "H", "W"]),
           helper.make_tensor_value_info("nhwc", TensorProto.FLOAT, ["N", "h2", "w2", 1]),
           helper.make_tensor_value_info("ids", TensorProto.INT64, ["N", "seq"]),
           helper.make_tensor_value_info("state", TensorProto.FLOAT, [2, "N", 8])]
    outs = [helper.make_tensor_value_info(i.name + "_out", i.type.tensor_type.elem_type,
                                          [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim]) for i in ins]
    nodes = [helper.make_node("Identity", [i.name], [i.name + "_out"]) for i in ins]
    m = helper.make_model(helper.make_graph(nodes, "rule", ins, outs), opset_imports=[helper.make_opsetid("", 17)])
    os.makedirs(path, exist_ok=True)
    onnx.save(m, os.path.join(path, "model.onnx"))


def explain_json(args):
    r = subprocess.run([GLASSBOX, "explain", "--json"] + args, capture_output=True, text=True, timeout=120 * SLOW)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_derivation_rule_in_explain_and_served(start_server, tmp_path):
    d = tmp_path / "rule"
    rule_model(str(d))
    w = explain_json([str(d)])["warmup"]
    assert w["source"] == "derived"
    shapes = {i["name"]: i["shape"] for i in w["inputs"]}
    assert shapes == {"image": [1, 3, 224, 224], "nhwc": [1, 224, 224, 1], "ids": [1, 16], "state": [2, 1, 8]}
    src = {i["name"]: i["shape_source"] for i in w["inputs"]}
    assert src["image"] == "dim 0 'N' batch = 1, dim 2 'H' image = 224, dim 3 'W' image = 224"
    assert src["ids"] == "dim 0 'N' batch = 1, dim 1 'seq' sequence = 16"
    assert src["state"] == "dim 1 'N' batch = 1"
    # The rule's values are options: a --config file (explain --serve) or serve flags change them.
    cfg = tmp_path / "serve.json"
    cfg.write_text(json.dumps({"server": {"warmup_image_size": 32, "warmup_sequence_length": 5, "warmup_batch_size": 2}}))
    w = explain_json([str(d), "--serve", "--config", str(cfg)])["warmup"]
    assert {i["name"]: i["shape"] for i in w["inputs"]} == {"image": [2, 3, 32, 32], "nhwc": [2, 32, 32, 1], "ids": [2, 5],
                                                           "state": [2, 2, 8]}
    s = start_server([str(d), "--warmup-image-size", "40"])
    e = index(s)["rule"]
    assert e["state"] == "READY" and e["reason"] == "" and e["warmup"]["outcome"] == "done"
    assert {i["name"]: i["shape"] for i in e["warmup"]["inputs"]}["image"] == [1, 3, 40, 40]
    # explain on a declared model shows the declaration; on text models the one-text rule
    (d / "glassbox.json").write_text(json.dumps(declared({"image": {"dims": [1, 3, 8, 8], "fill": "zeros"},
                                                          "nhwc": {"dims": [1, 4, 4, 1], "fill": "zeros"},
                                                          "ids": {"dims": [1, 3], "data": [1, 2, 3]},
                                                          "state": {"dims": [2, 1, 8], "fill": "random", "seed": 1}})))
    w = explain_json([str(d)])["warmup"]
    assert w["source"] == "glassbox.json" and w["declared"] is True
    assert [i["shape_source"] for i in w["inputs"]] == ["declared"] * 4
    text = subprocess.run([GLASSBOX, "explain", str(d)], capture_output=True, text=True, timeout=120 * SLOW)
    assert "warm-up (as `glassbox serve` runs it): glassbox.json" in text.stdout
    assert "ids INT64[1,3] data (3 values)  [declared]" in text.stdout


def test_serve_options_table_has_the_warmup_rows():
    rows = {r["name"]: r for r in explain_json(["--serve"])["options"] if r.get("component") == "server"}
    assert rows["warmup_failure"]["value"] == "ready"
    for name, value in (("warmup_batch_size", "1"), ("warmup_sequence_length", "16"), ("warmup_image_size", "224"),
                        ("model_warmup", "{}")):
        assert rows[name]["value"] == value and rows[name]["reason"] and rows[name]["risk"], rows[name]
