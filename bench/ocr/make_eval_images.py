#!/usr/bin/python3
"""Renders the OCR evaluation set (bench/ocr/evaluate.js) with ImageMagick (/usr/bin/convert) and Debian's
fonts: Latin text in DejaVu Sans/Serif/Mono and Chinese text in WenQuanYi Micro Hei, at several sizes, in
classes that stress different stages: clean, rotated +-5 degrees, upside down (the angle classifier), and
noisy (Gaussian noise with a fixed seed, blur, then JPEG quality 25). Ground truth is the text drawn. Writes
OUT_DIR/<name>.<png|jpg> and OUT_DIR/truth.json ({name: {"file", "class", "lines"}}).
Lines are listed top to bottom as they stand on the image: on an upside-down page the last line drawn is on
top (a line-level pipeline turns each line upright but has no page-orientation model to reorder them).

Usage: bench/ocr/make_eval_images.py OUT_DIR
"""
import json
import subprocess
import sys
from pathlib import Path

DEJAVU = "/usr/share/fonts/truetype/dejavu/"
WQY = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"
LATIN = [("DejaVuSans.ttf", 16, ["Invoice 48213 due 2026-12-05"]),
         ("DejaVuSerif.ttf", 22, ["The quick brown fox jumps"]),
         ("DejaVuSansMono.ttf", 20, ["order_id = 7731", "status: shipped"]),
         ("DejaVuSans-Bold.ttf", 30, ["TOTAL 99.50 EUR"]),
         ("DejaVuSans.ttf", 24, ["Meeting room B, floor 3"])]
CJK = [(WQY, 22, ["今天天气很好"]),
       (WQY, 28, ["我喜欢喝茶", "北京欢迎你"]),
       (WQY, 18, ["发票号码 48213"]),
       (WQY, 32, ["深度学习模型"])]
# class: (extra convert arguments after drawing, output extension)
CLASSES = {
    "clean": ([], "png"),
    "rot+5": (["-background", "white", "-rotate", "5"], "png"),
    "rot-5": (["-background", "white", "-rotate", "-5"], "png"),
    "upside_down": (["-rotate", "180"], "png"),
    "noisy_jpeg": (["-seed", "31", "-attenuate", "1.0", "+noise", "Gaussian", "-blur", "0x0.6", "-quality", "25"], "jpg"),
}


def render(path, font, size, lines, extra, wide):
    width = max(int(max(len(t) for t in lines) * size * (1.15 if wide else 0.72)) + 60, 200)
    height = len(lines) * int(size * 1.9) + 40
    cmd = ["/usr/bin/convert", "-size", f"{width}x{height}", "xc:white"]
    for i, t in enumerate(lines):
        cmd += ["-font", font, "-pointsize", str(size), "-fill", "black",
                "-annotate", f"+30+{30 + int(size * 1.1) + i * int(size * 1.9)}", t]
    subprocess.run(cmd + extra + [str(path)], check=True)


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    truth = {}
    for script, items in (("latin", [(DEJAVU + f, s, l) for f, s, l in LATIN]), ("cjk", CJK)):
        for cls, (extra, ext) in CLASSES.items():
            for i, (font, size, lines) in enumerate(items):
                name = f"{script}_{cls}_{i}"
                render(out / f"{name}.{ext}", font, size, lines, extra, script == "cjk")
                on_page = lines[::-1] if cls == "upside_down" else lines
                truth[name] = {"file": f"{name}.{ext}", "class": f"{script} {cls}", "lines": on_page}
    (out / "truth.json").write_text(json.dumps(truth, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
