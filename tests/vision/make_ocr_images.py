#!/usr/bin/python3
"""Renders the OCR test images with ImageMagick (/usr/bin/convert) and Debian's DejaVu fonts: text of known
ground truth in several fonts and sizes, two lines, a line rotated by 5 degrees, an upside-down line, and an
empty page. Writes OUT_DIR/<name>.png and OUT_DIR/truth.json ({name: [line, ...]}).

Usage: tests/vision/make_ocr_images.py OUT_DIR
"""
import json
import subprocess
import sys
from pathlib import Path

FONTS = "/usr/share/fonts/truetype/dejavu/"
# name: (font, point size, [lines], extra convert arguments applied after drawing)
IMAGES = {
    "sans_28": ("DejaVuSans.ttf", 28, ["Hello World 2026"], []),
    "serif_22": ("DejaVuSerif.ttf", 22, ["Invoice number 48213"], []),
    "mono_18": ("DejaVuSansMono.ttf", 18, ["glassbox reads text"], []),
    "bold_36_two_lines": ("DejaVuSans-Bold.ttf", 36, ["TOTAL 99.50", "Thank you"], []),
    "rotated_5": ("DejaVuSans.ttf", 28, ["Rotated line of text"], ["-background", "white", "-rotate", "5"]),
    "upside_down": ("DejaVuSans.ttf", 30, ["Upside down words"], ["-rotate", "180"]),
    "empty": (None, 0, [], []),
}


def render(out, name, font, size, lines, extra):
    width = max([int(len(t) * size * 0.72) + 60 for t in lines] + [200])
    height = max(len(lines) * int(size * 1.9) + 40, 100)
    cmd = ["/usr/bin/convert", "-size", f"{width}x{height}", "xc:white"]
    for i, t in enumerate(lines):
        cmd += ["-font", FONTS + font, "-pointsize", str(size), "-fill", "black",
                "-annotate", f"+30+{30 + int(size * 1.1) + i * int(size * 1.9)}", t]
    cmd += extra + [str(out / f"{name}.png")]
    subprocess.run(cmd, check=True)


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    truth = {}
    for name, (font, size, lines, extra) in IMAGES.items():
        render(out, name, font, size, lines, extra)
        truth[name] = lines
    (out / "truth.json").write_text(json.dumps(truth, indent=1) + "\n")


if __name__ == "__main__":
    main()
