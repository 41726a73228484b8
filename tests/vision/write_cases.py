#!/usr/bin/python3
"""Writes the test images (make_images.py) and one model directory per preprocess_cases.py case
under DIR/models (and under DIR/explicit the same settings with every value written out), and prints {"images": {name: path}, "cases": {name: dir}} as JSON (for
transformers_js_test.js)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_images import make_images  # noqa: E402
from preprocess_cases import CASES, explicit_config  # noqa: E402

d = sys.argv[1]
images = make_images(os.path.join(d, "img"))
cases = {}
for case, (pc, gj, cfg) in CASES.items():
    mdir = os.path.join(d, "models", case)
    os.makedirs(mdir, exist_ok=True)
    if pc is not None:
        json.dump(pc, open(os.path.join(mdir, "preprocessor_config.json"), "w"))
    if gj is not None:
        json.dump(gj, open(os.path.join(mdir, "glassbox.json"), "w"))
    cases[case] = mdir
    if pc is not None:  # the same settings spelled out, for transformers.js
        edir = os.path.join(d, "explicit", case)
        os.makedirs(edir, exist_ok=True)
        json.dump(explicit_config(pc, cfg), open(os.path.join(edir, "preprocessor_config.json"), "w"))
print(json.dumps({"images": images, "cases": cases}))
