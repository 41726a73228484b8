#!/usr/bin/python3
"""glassbox's decoding, resize and preprocessing against Pillow (python3-pil), the library Python
transformers preprocesses with. Usage: pillow_parity_test.py VISION_TOOL
  decode:     tool's RGB == ImageOps.exif_transpose(Image.open(f)).convert("RGB") (transformers'
              load_image + convert_rgb), exactly, for JPEG (4:2:0, 4:4:4, progressive, grey), PNG (RGB,
              RGBA, grey, grey+alpha, palette, 1-bit, 16-bit RGB/RGBA), WebP (lossy, lossless+alpha) and
              EXIF orientations 2..8 (JPEG APP1, PNG eXIf).
  resize:     tool's resize == Image.resize((w, h), resample) for all six PIL filters, down and up, exactly.
  preprocess: tool's pixel tensor == a numpy transcription of transformers' steps (Pillow resize,
              center_crop, rescale in float64 -> float32, normalize in float32, pad) for each case of
              preprocess_cases.py (ViT, CLIP, ConvNeXt, SigLIP, DeiT, ResNet-style, letterbox, pad).
Images are rendered at test time (make_images.py)."""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image, ImageOps

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_images import make_images  # noqa: E402
from preprocess_cases import CASES  # noqa: E402

TOOL = sys.argv[1] if __name__ == "__main__" else None
failures = []


def tool(*args):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=120)


def load(path):
    return ImageOps.exif_transpose(Image.open(path)).convert("RGB")


def check(name, ok, detail=""):
    print(("PASS " if ok else "FAIL ") + name + (" " + detail if detail else ""))
    if not ok:
        failures.append(name)


def resize_ref(im, cfg):
    kind = cfg["resize"][0]
    w, h = im.size
    if kind == "hw":
        return im.resize((cfg["resize"][2], cfg["resize"][1]), resample=cfg["resample"]), None
    if kind == "short":
        edge = cfg["resize"][1]
        short, long = (w, h) if w <= h else (h, w)
        new_long = int(edge * long / short)
        size = (edge, new_long) if w <= h else (new_long, edge)
        return im.resize(size, resample=cfg["resample"]), None
    edge, crop_pct = cfg["resize"][1], cfg["resize"][2]  # convnext
    r_edge = int(edge / crop_pct)
    short, long = (w, h) if w <= h else (h, w)
    new_long = int(r_edge * long / short)
    size = (r_edge, new_long) if w <= h else (new_long, r_edge)
    return im.resize(size, resample=cfg["resample"]), (edge, edge)


def center_crop(a, ch, cw):  # transformers.image_transforms.center_crop on HWC
    oh, ow = a.shape[:2]
    top, left = (oh - ch) // 2, (ow - cw) // 2
    bottom, right = top + ch, left + cw
    if top >= 0 and bottom <= oh and left >= 0 and right <= ow:
        return a[top:bottom, left:right]
    nh, nw = max(ch, oh), max(cw, ow)
    new = np.zeros((nh, nw, 3), dtype=a.dtype)
    tp, lp = math.ceil((nh - oh) / 2), math.ceil((nw - ow) / 2)
    new[tp:tp + oh, lp:lp + ow] = a
    top, bottom, left, right = top + tp, bottom + tp, left + lp, right + lp
    return new[max(0, top):min(nh, bottom), max(0, left):min(nw, right)]


def letterbox_ref(im, lb, resample):
    H, W, fill = lb
    w, h = im.size
    r = min(H / h, W / w)
    nw, nh = max(1, int(round(w * r))), max(1, int(round(h * r)))
    scaled = np.array(im.resize((nw, nh), resample=resample))
    left, top = int(round((W - nw) / 2 - 0.1)), int(round((H - nh) / 2 - 0.1))
    out = np.full((H, W, 3), fill, dtype=np.uint8)
    out[top:top + nh, left:left + nw] = scaled
    return out


def reference(path, cfg):
    im = load(path)
    if cfg["letterbox"]:
        a = letterbox_ref(im, cfg["letterbox"], cfg["resample"])
    else:
        im, crop = resize_ref(im, cfg) if cfg["resize"] else (im, None)
        a = np.array(im)
        if crop:
            a = center_crop(a, *crop)
        if cfg["crop"]:
            a = center_crop(a, *cfg["crop"])
    x = (a.astype(np.float64) * cfg["rescale"]).astype(np.float32)
    if cfg["normalize"]:
        x = (x - np.array(cfg["mean"], dtype=np.float32)) / np.array(cfg["std"], dtype=np.float32)
    if cfg["pad"]:
        ph, pw = cfg["pad"]
        x = np.pad(x, ((0, ph - x.shape[0]), (0, pw - x.shape[1]), (0, 0)))
    return x.transpose(2, 0, 1)[None]


def main():
    with tempfile.TemporaryDirectory() as d:
        imgs = make_images(os.path.join(d, "img"))
        for name, path in sorted(imgs.items()):
            out = os.path.join(d, "dec.npy")
            r = tool("decode", path, out)
            if name == "grey16.png":
                check("decode " + name + " refused by name", r.returncode == 2 and "16-bit greyscale" in r.stderr,
                      r.stderr.strip()[:120])
                continue
            if r.returncode != 0:
                check("decode " + name, False, r.stderr.strip())
                continue
            mine, ref = np.load(out), np.array(load(path))
            same = mine.shape == ref.shape and np.array_equal(mine, ref)
            diff = int(np.abs(mine.astype(int) - ref.astype(int)).max()) if mine.shape == ref.shape else -1
            check("decode " + name, same, f"shape {mine.shape} vs {ref.shape}, max diff {diff}, {r.stdout.strip()}")

        for name in ["photo.jpg", "tall.png", "wide.jpg", "tiny.png"]:
            src = load(imgs[name])
            for f in range(6):
                for (w, h) in [(224, 224), (100, 37), (640, 480), (57, 311), (src.size[0], 3)]:
                    out = os.path.join(d, "rs.npy")
                    r = tool("resize", imgs[name], str(w), str(h), str(f), out)
                    ok = r.returncode == 0 and np.array_equal(np.load(out), np.array(src.resize((w, h), resample=f)))
                    check(f"resize {name} -> {w}x{h} filter {f}", ok, r.stderr.strip())

        for case, (pc, gj, cfg) in sorted(CASES.items()):
            mdir = os.path.join(d, "m_" + case)
            os.makedirs(mdir)
            if pc is not None:
                json.dump(pc, open(os.path.join(mdir, "preprocessor_config.json"), "w"))
            if gj is not None:
                json.dump(gj, open(os.path.join(mdir, "glassbox.json"), "w"))
            for name in ["photo.jpg", "tall.png", "orient6.jpg", "palette.png"]:
                out = os.path.join(d, "pp.npy")
                r = tool("preprocess", mdir, imgs[name], out)
                if r.returncode != 0:
                    check(f"preprocess {case} {name}", False, r.stderr.strip())
                    continue
                mine, ref = np.load(out), reference(imgs[name], cfg)
                ok = mine.shape == ref.shape and float(np.abs(mine - ref).max()) <= 1e-6
                diff = float(np.abs(mine - ref).max()) if mine.shape == ref.shape else -1
                check(f"preprocess {case} {name}", ok, f"shape {mine.shape} vs {ref.shape}, max |diff| {diff:.3g}")
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
