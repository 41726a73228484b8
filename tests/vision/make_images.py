"""Renders the test images at test time (nothing binary is committed): ImageMagick (/usr/bin/convert,
DejaVu fonts) for photo-like gradients with text, Pillow for the modes ImageMagick does not write
directly. make_images(dir) returns {name: path}."""
import os
import subprocess

import numpy as np
from PIL import Image

CONVERT = "/usr/bin/convert"
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _convert(args, out):
    subprocess.run([CONVERT, *args, out], check=True)
    return out


def _photo(size, seed=7):
    # plasma gives a photo-like smooth random texture (seeded); text adds sharp edges.
    return ["-seed", str(seed), "-size", size, "plasma:fractal", "-font", FONT, "-pointsize", "24",
            "-fill", "white", "-annotate", "+8+40", "glassbox Ag 31", "-fill", "black", "-annotate", "+20+90", "pixels",
            "-alpha", "off"]


def _exif(orientation):
    # A minimal little-endian TIFF IFD0 holding Orientation (Pillow writes it into JPEG APP1 / PNG eXIf).
    ex = Image.Exif()
    ex[0x0112] = orientation
    return ex.tobytes()


def make_images(d):
    os.makedirs(d, exist_ok=True)
    p = {}
    p["photo.jpg"] = _convert(_photo("317x211") + ["-quality", "90"], os.path.join(d, "photo.jpg"))
    p["photo444.jpg"] = _convert(_photo("123x77") + ["-quality", "95", "-sampling-factor", "1x1"], os.path.join(d, "photo444.jpg"))
    p["progressive.jpg"] = _convert(_photo("401x299") + ["-interlace", "Plane"], os.path.join(d, "progressive.jpg"))
    p["grey.jpg"] = _convert(_photo("150x200") + ["-colorspace", "Gray"], os.path.join(d, "grey.jpg"))
    p["photo.png"] = _convert(_photo("333x250"), os.path.join(d, "photo.png"))
    p["photo.webp"] = _convert(_photo("257x199") + ["-quality", "80"], os.path.join(d, "photo.webp"))
    p["tall.png"] = _convert(_photo("37x500"), os.path.join(d, "tall.png"))
    p["wide.jpg"] = _convert(_photo("1000x17"), os.path.join(d, "wide.jpg"))
    p["tiny.png"] = _convert(["-size", "1x1", "xc:#3a7fc1"], os.path.join(d, "tiny.png"))
    base = np.array(Image.open(p["photo.png"]).convert("RGB"))
    alpha = np.tile(np.linspace(0, 255, base.shape[1]).astype(np.uint8), (base.shape[0], 1))
    Image.fromarray(np.dstack([base, alpha]), "RGBA").save(os.path.join(d, "rgba.png"))
    p["rgba.png"] = os.path.join(d, "rgba.png")
    Image.fromarray(np.dstack([base, alpha]), "RGBA").save(os.path.join(d, "rgba.webp"), lossless=True)
    p["rgba.webp"] = os.path.join(d, "rgba.webp")
    Image.fromarray(np.dstack([base, alpha]), "RGBA").save(os.path.join(d, "rgba_lossy.webp"), quality=70)
    p["rgba_lossy.webp"] = os.path.join(d, "rgba_lossy.webp")
    p["interlaced.png"] = _convert(_photo("101x67") + ["-interlace", "PNG"], os.path.join(d, "interlaced.png"))
    Image.fromarray(base).convert("L").save(os.path.join(d, "grey.png"))
    p["grey.png"] = os.path.join(d, "grey.png")
    Image.fromarray(base).convert("LA").save(os.path.join(d, "grey_alpha.png"))
    p["grey_alpha.png"] = os.path.join(d, "grey_alpha.png")
    Image.fromarray(base).quantize(64).save(os.path.join(d, "palette.png"))
    p["palette.png"] = os.path.join(d, "palette.png")
    Image.fromarray(base).convert("1").save(os.path.join(d, "bilevel.png"))
    p["bilevel.png"] = os.path.join(d, "bilevel.png")
    p["rgb16.png"] = os.path.join(d, "rgb16.png")
    _convert(_photo("97x61") + ["-depth", "16"], "PNG48:" + p["rgb16.png"])
    p["rgba16.png"] = os.path.join(d, "rgba16.png")
    _convert(_photo("97x61") + ["-alpha", "set", "-channel", "A", "-fx", "i/w", "+channel", "-depth", "16"],
             "PNG64:" + p["rgba16.png"])
    p["grey16.png"] = os.path.join(d, "grey16.png")
    _convert(["-size", "64x48", "gradient:black-white", "-depth", "16", "-define", "png:color-type=0"], p["grey16.png"])
    for o in range(2, 9):  # EXIF orientations, pixels stored unrotated
        name = f"orient{o}.jpg"
        Image.open(p["photo444.jpg"]).save(os.path.join(d, name), quality=95, subsampling=0, exif=_exif(o))
        p[name] = os.path.join(d, name)
    Image.fromarray(base[:40, :90]).save(os.path.join(d, "orient6.png"), exif=_exif(6))
    p["orient6.png"] = os.path.join(d, "orient6.png")
    return p


def make_fuzz_seeds(src_dir, out_dir):
    """Tiny copies (at most 24 px a side, same format, mode and EXIF) of make_images' files: seeds
    for tests/fuzz fuzz_image_decode. Usage: python3 make_images.py --seeds OUT_DIR"""
    os.makedirs(out_dir, exist_ok=True)
    for name, path in make_images(src_dir).items():
        im = Image.open(path)
        exif = im.info.get("exif")
        small = im.copy()
        small.thumbnail((24, 24))
        kw = {"exif": exif} if exif else {}
        if name.endswith(".webp"):
            kw["lossless"] = "lossless" in name or name == "rgba.webp"
        try:
            small.save(os.path.join(out_dir, name), **kw)
        except OSError:  # a mode the format's writer refuses (16-bit): keep the original
            open(os.path.join(out_dir, name), "wb").write(open(path, "rb").read())


if __name__ == "__main__":
    import sys
    import tempfile
    if len(sys.argv) == 3 and sys.argv[1] == "--seeds":
        with tempfile.TemporaryDirectory() as tmp:
            make_fuzz_seeds(tmp, sys.argv[2])
