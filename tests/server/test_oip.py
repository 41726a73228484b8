"""Open Inference Protocol (KServe v2) over raw HTTP with Python requests, per the spec."""
import json
import struct

import numpy as np
import requests

from conftest import cli_json_lines

TEXTS = ["Guten Morgen, wie geht es dir?", "The weather is lovely today, let's go for a walk.",
         "Je voudrais un café et un croissant, s'il vous plaît."]


def test_server_metadata_and_health(text_server):
    r = requests.get(text_server.url("/v2"), timeout=10)
    assert r.status_code == 200
    j = r.json()
    assert j["name"] == "glassbox" and "binary_tensor_data" in j["extensions"] and "model_repository" in j["extensions"]
    assert requests.get(text_server.url("/v2/health/live"), timeout=10).status_code == 200
    assert requests.get(text_server.url("/v2/health/ready"), timeout=10).status_code == 200
    for path in ("/v2/models/langid/ready", "/v2/models/langid/versions/1/ready"):
        assert requests.get(text_server.url(path), timeout=10).status_code == 200


def test_text_model_metadata(text_server):
    j = requests.get(text_server.url("/v2/models/langid"), timeout=10).json()
    assert j["name"] == "langid" and j["versions"] == ["1"] and j["platform"] == "onnx_onnxv1"
    assert {"name": "text", "datatype": "BYTES", "shape": [-1]} in j["inputs"]
    assert {"name": "logits", "datatype": "FP32", "shape": [-1, 24]} in j["outputs"]
    assert {"name": "label", "datatype": "BYTES", "shape": [-1]} in j["outputs"]
    e = requests.get(text_server.url("/v2/models/langid_embed"), timeout=10).json()
    assert e["outputs"] == [{"name": "embedding", "datatype": "FP32", "shape": [-1, 24]}]


def test_tensor_model_metadata_has_variable_dims(tensor_server):
    j = requests.get(tensor_server.url("/v2/models/dtypes"), timeout=10).json()
    spec = {i["name"]: i for i in j["inputs"]}
    assert spec["in_fp32"] == {"name": "in_fp32", "datatype": "FP32", "shape": [-1, 4]}
    assert spec["in_fp16"]["datatype"] == "FP16" and spec["in_bool"]["datatype"] == "BOOL"
    assert spec["in_uint64"]["shape"] == [-1]


def test_text_infer_matches_cli(text_server):
    body = {"id": "req-7", "inputs": [{"name": "text", "datatype": "BYTES", "shape": [len(TEXTS)], "data": TEXTS}]}
    r = requests.post(text_server.url("/v2/models/langid/infer"), json=body, timeout=30)
    assert r.status_code == 200, r.text
    j = r.json()
    assert j["id"] == "req-7" and j["model_name"] == "langid" and j["model_version"] == "1"
    outs = {o["name"]: o for o in j["outputs"]}
    cli = cli_json_lines(["classify", "--top-k", "24"] + TEXTS)
    assert outs["label"]["data"] == [c["label"] for c in cli]
    assert outs["label"]["data"][0] == "de"
    for i, c in enumerate(cli):
        assert abs(outs["score"]["data"][i] - c["labels"][0]["score"]) <= 1e-6
    logits = np.array(outs["logits"]["data"], dtype=np.float64).reshape(outs["logits"]["shape"])
    soft = np.exp(logits - logits.max(axis=1, keepdims=True))
    soft /= soft.sum(axis=1, keepdims=True)
    for i, c in enumerate(cli):
        by_label = {l["label"]: l["score"] for l in c["labels"]}
        assert abs(soft[i].max() - by_label[c["label"]]) <= 1e-5


def test_requested_outputs_subset_and_nested_shape(text_server):
    body = {"inputs": [{"name": "text", "datatype": "BYTES", "shape": [2, 1], "data": [[TEXTS[0]], [TEXTS[1]]]}],
            "outputs": [{"name": "label"}]}
    j = requests.post(text_server.url("/v2/models/langid/infer"), json=body, timeout=30).json()
    assert [o["name"] for o in j["outputs"]] == ["label"]
    assert j["outputs"][0]["data"] == ["de", "en"]


def test_binary_text_in_and_binary_outputs(text_server):
    texts = [t.encode() for t in TEXTS[:2]]
    blob = b"".join(struct.pack("<I", len(t)) + t for t in texts)
    header = json.dumps({"inputs": [{"name": "text", "datatype": "BYTES", "shape": [2],
                                     "parameters": {"binary_data_size": len(blob)}}],
                         "outputs": [{"name": "score", "parameters": {"binary_data": True}},
                                     {"name": "label", "parameters": {"binary_data": True}}]}).encode()
    r = requests.post(text_server.url("/v2/models/langid/infer"), data=header + blob, timeout=30,
                      headers={"Inference-Header-Content-Length": str(len(header)), "Content-Type": "application/octet-stream"})
    assert r.status_code == 200, r.text
    n = int(r.headers["Inference-Header-Content-Length"])
    j = json.loads(r.content[:n])
    rest = r.content[n:]
    score_size = j["outputs"][0]["parameters"]["binary_data_size"]
    scores = np.frombuffer(rest[:score_size], dtype="<f4")
    labels, pos, raw = [], 0, rest[score_size:]
    while pos < len(raw):
        (ln,) = struct.unpack_from("<I", raw, pos)
        labels.append(raw[pos + 4:pos + 4 + ln].decode())
        pos += 4 + ln
    assert labels == ["de", "en"]
    cli = cli_json_lines(["classify"] + TEXTS[:2])
    assert np.allclose(scores, [c["labels"][0]["score"] for c in cli], atol=1e-6)


def dtype_body(n=2):
    rng = np.random.default_rng(3)
    vals = {
        "fp32": ("FP32", rng.standard_normal((n, 4)).astype(np.float32)),
        "fp64": ("FP64", rng.standard_normal(n)),
        "int8": ("INT8", np.array([-128, 127][:n], dtype=np.int8)),
        "int16": ("INT16", np.array([-32768, 32767][:n], dtype=np.int16)),
        "int32": ("INT32", np.array([-2**31, 2**31 - 1][:n], dtype=np.int32)),
        "int64": ("INT64", np.array([-2**63, 2**63 - 1][:n], dtype=np.int64)),
        "uint8": ("UINT8", np.array([0, 255][:n], dtype=np.uint8)),
        "uint16": ("UINT16", np.array([0, 65535][:n], dtype=np.uint16)),
        "uint32": ("UINT32", np.array([0, 2**32 - 1][:n], dtype=np.uint32)),
        "uint64": ("UINT64", np.array([0, 2**64 - 1][:n], dtype=np.uint64)),
        "bool": ("BOOL", np.array([True, False][:n])),
    }
    return vals


def test_every_json_datatype_round_trips(tensor_server):
    vals = dtype_body()
    inputs = [{"name": "in_" + k, "datatype": t, "shape": list(v.shape), "data": v.tolist()} for k, (t, v) in vals.items()]
    f16 = np.array([1.5, -2.25], dtype="<f2")
    inputs.append({"name": "in_fp16", "datatype": "FP16", "shape": [2], "parameters": {"binary_data_size": 4}})
    outputs = [{"name": "out_" + k} for k in vals] + [{"name": "out_fp16", "parameters": {"binary_data": True}}]
    header = json.dumps({"inputs": inputs, "outputs": outputs}).encode()
    r = requests.post(tensor_server.url("/v2/models/dtypes/infer"), data=header + f16.tobytes(), timeout=30,
                      headers={"Inference-Header-Content-Length": str(len(header))})
    assert r.status_code == 200, r.text
    n = int(r.headers["Inference-Header-Content-Length"])
    outs = {o["name"]: o for o in json.loads(r.content[:n])["outputs"]}
    assert np.allclose(np.array(outs["out_fp32"]["data"]).reshape(2, 4), vals["fp32"][1] + 1, atol=1e-6)
    assert outs["out_bool"]["data"] == [False, True]
    for k in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
        assert outs["out_" + k]["data"] == vals[k][1].tolist(), k
    assert outs["out_fp64"]["data"] == vals["fp64"][1].tolist()  # doubles round-trip exactly through JSON
    assert outs["out_fp16"]["parameters"]["binary_data_size"] == 4
    assert np.array_equal(np.frombuffer(r.content[n:], dtype="<f2"), f16)


def test_fp16_output_in_json_is_refused_naming_binary(tensor_server):
    vals = dtype_body()
    inputs = [{"name": "in_" + k, "datatype": t, "shape": list(v.shape), "data": v.tolist()} for k, (t, v) in vals.items()]
    f16 = np.array([1.5, -2.25], dtype="<f2")
    inputs.append({"name": "in_fp16", "datatype": "FP16", "shape": [2], "parameters": {"binary_data_size": 4}})
    header = json.dumps({"inputs": inputs, "outputs": [{"name": "out_fp16"}]}).encode()
    r = requests.post(tensor_server.url("/v2/models/dtypes/infer"), data=header + f16.tobytes(), timeout=30,
                      headers={"Inference-Header-Content-Length": str(len(header))})
    assert r.status_code == 400 and "binary_data" in r.json()["error"]
    header = json.dumps({"inputs": inputs, "outputs": [{"name": "out_fp16", "parameters": {"binary_data": True}}]}).encode()
    r = requests.post(tensor_server.url("/v2/models/dtypes/infer"), data=header + f16.tobytes(), timeout=30,
                      headers={"Inference-Header-Content-Length": str(len(header))})
    assert r.status_code == 200
    n = int(r.headers["Inference-Header-Content-Length"])
    assert np.array_equal(np.frombuffer(r.content[n:], dtype="<f2"), f16)


def test_explain_route(text_server):
    j = requests.get(text_server.url("/v2/models/langid/explain"), timeout=10).json()
    assert j["name"] == "langid" and j["model"]["schema"] == "glassbox.explain/1"
    options = {(o["component"], o["name"]): o for o in j["model"]["options"]}
    assert options[("session", "threads")]["reason"]
    fields = {d["field"]: d for d in j["model"]["pipeline"]}
    assert fields["truncation"]["source"] and fields["max_length"]["value"] == "256"
    server = {row["name"]: row for row in j["server"]}
    assert server["max_body_bytes"]["reason"] and server["host"]["value"] == "127.0.0.1"
    assert server["port"]["source"] == "flag"
    heap = options[("process", "heap_policy")]
    # "retain", or "retain (not in effect: ...)" where a sanitizer's allocator refuses mallopt (the ASan build)
    assert heap["value"].startswith("retain") and heap["source"] == "default" and heap["reason"] and heap["risk"]


def test_heap_policy_flag():
    """The CLI process's heap policy: shown by explain with its source, a bad value refused by name."""
    import subprocess
    from conftest import GLASSBOX
    r = subprocess.run([GLASSBOX, "--heap-policy", "system", "explain", "--json"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rows = {(o["component"], o["name"]): o for o in json.loads(r.stdout)["options"]}
    assert rows[("process", "heap_policy")]["value"] == "system" and rows[("process", "heap_policy")]["source"] == "flag"
    r = subprocess.run([GLASSBOX, "explain", "--json"], capture_output=True, text=True, timeout=60)
    rows = {(o["component"], o["name"]): o for o in json.loads(r.stdout)["options"]}
    assert rows[("process", "heap_policy")]["value"].startswith("retain") and rows[("process", "heap_policy")]["source"] == "default"
    r = subprocess.run([GLASSBOX, "--heap-policy", "huge", "explain"], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "heap-policy" in r.stderr


def test_explain_serve_and_config_file(tmp_path):
    import subprocess
    from conftest import GLASSBOX
    cfg = tmp_path / "serve.json"
    cfg.write_text(json.dumps({"server": {"port": 9123, "max_queue": 5}, "session": {"opt_level": 1}}))
    r = subprocess.run([GLASSBOX, "explain", "--serve", "--json", "--config", str(cfg)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rows = {(o["component"], o["name"]): o for o in json.loads(r.stdout)["options"]}
    assert rows[("server", "port")]["value"] == "9123" and rows[("server", "port")]["source"] == "file"
    assert rows[("server", "max_queue")]["value"] == "5" and rows[("server", "max_batch_tokens")]["source"] == "default"
    assert rows[("session", "opt_level")]["value"] == "1"
    for row in rows.values():
        assert row["reason"], row
    cfg.write_text(json.dumps({"server": {"prot": 1}}))
    r = subprocess.run([GLASSBOX, "explain", "--serve", "--config", str(cfg)], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "unknown key \"prot\"" in r.stderr


def test_serve_precision_flag_wins_over_glassbox_json(models, start_server, tmp_path):
    """precision: serve --precision > the --config file's session.precision > the model's glassbox.json
    > fp32, even when the flag says fp32; the model's explain names where it came from."""
    d = tmp_path / "langid_bf16"
    d.mkdir()
    for f in ("model.onnx", "tokenizer.json", "config.json", "tokenizer_config.json"):
        (d / f).symlink_to(f"{models['langid']}/{f}")
    declared = json.loads(open(f"{models['langid']}/glassbox.json").read())
    declared["precision"] = "bf16"
    (d / "glassbox.json").write_text(json.dumps(declared))
    cfg = tmp_path / "serve.json"
    cfg.write_text(json.dumps({"session": {"precision": "int8-dynamic"}}))

    def precision_of(args):
        s = start_server([str(d)] + args)
        try:
            j = requests.get(s.url("/v2/models/langid_bf16/explain"), timeout=10).json()
            row = {x["field"]: x for x in j["model"]["pipeline"]}["precision"]
            opt = {(o["component"], o["name"]): o for o in j["model"]["options"]}[("session", "precision")]
            assert opt["value"] == row["value"], (opt, row)
            return row["value"], row["source"]
        finally:
            s.stop()

    assert precision_of([]) == ("bf16", "glassbox.json")
    assert precision_of(["--precision", "fp32"]) == ("fp32", "flag --precision")
    assert precision_of(["--config", str(cfg)]) == ("int8-dynamic", "serve --config file")
    assert precision_of(["--config", str(cfg), "--precision", "fp32"]) == ("fp32", "flag --precision")
