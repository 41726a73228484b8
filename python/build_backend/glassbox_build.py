"""PEP 517 backend for `pip install ./python`: builds glassbox's CMake project with
-DGLASSBOX_PYTHON=ON (the system CMake, compiler and Debian packages; nothing is downloaded)
and packs python/glassbox/, the built module and the embedded default model into a wheel.

config settings (pip install --config-settings KEY=VALUE ./python):
  build-dir   CMake build directory (default: <checkout>/build-python); an existing one that was
              configured with GLASSBOX_PYTHON=ON is built as it is (e.g. scripts/test.sh's build-test)
  build-type  CMAKE_BUILD_TYPE of a new build directory (default: Release)
  jobs        parallel compile jobs (default: os.cpu_count())
"""

import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)
ROOT = os.path.dirname(PYTHON_DIR)
MODEL_FILES = ["model.onnx", "tokenizer.json", "config.json", "glassbox.json", "tokenizer_config.json"]


def _log(msg):
    print(f"glassbox_build: {msg}", file=sys.stderr, flush=True)


def _metadata():
    text = open(os.path.join(PYTHON_DIR, "pyproject.toml"), encoding="utf-8").read()
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:  # the version is declared once, there
        version = re.search(r"project\(glassbox VERSION (\S+)", f.read()).group(1)
    summary = re.search(r'^description = "([^"]+)"', text, re.M).group(1)
    return version, summary


def _tag():
    impl = f"cp{sys.version_info.major}{sys.version_info.minor}"
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{impl}-{impl}-{plat}"


def _setting(config_settings, key, default):
    value = (config_settings or {}).get(key)
    return default if value in (None, "") else value


def _configured_with_python(build_dir):
    cache = os.path.join(build_dir, "CMakeCache.txt")
    if not os.path.isfile(cache):
        return False
    return re.search(r"^GLASSBOX_PYTHON:BOOL=ON$", open(cache, encoding="utf-8").read(), re.M) is not None


def _build(config_settings):
    if not os.path.isfile(os.path.join(ROOT, "CMakeLists.txt")):
        raise RuntimeError(f"{ROOT} is not a glassbox checkout: build from the repository's python/ directory")
    build_dir = os.path.abspath(_setting(config_settings, "build-dir", os.path.join(ROOT, "build-python")))
    jobs = str(_setting(config_settings, "jobs", os.cpu_count() or 1))
    if _configured_with_python(build_dir):
        _log(f"using the configured build directory {build_dir}")
    else:
        cmd = ["cmake", "-S", ROOT, "-B", build_dir, "-DGLASSBOX_PYTHON=ON", "-DGLASSBOX_BUILD_TESTS=OFF",
               f"-DCMAKE_BUILD_TYPE={_setting(config_settings, 'build-type', 'Release')}",
               f"-DPython_EXECUTABLE={sys.executable}"]
        if shutil.which("ninja"):
            cmd += ["-G", "Ninja"]
        _log(" ".join(cmd))
        subprocess.run(cmd, check=True, stdout=sys.stderr)
    cmd = ["cmake", "--build", build_dir, "--target", "glassbox_python", "-j", jobs]
    _log(" ".join(cmd))
    subprocess.run(cmd, check=True, stdout=sys.stderr)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    module = os.path.join(build_dir, "python", "glassbox", "_glassbox" + suffix)
    if not os.path.isfile(module):
        raise RuntimeError(f"{module} was not built: the build directory's Python differs from {sys.executable} "
                           f"(its extension suffix is {suffix}); use another build-dir")
    return module


def _files(module):
    """(path in the wheel, path on disk) of every file the package installs."""
    out = []
    pkg = os.path.join(PYTHON_DIR, "glassbox")
    for name in sorted(os.listdir(pkg)):
        if name.endswith((".py", ".pyi")) or name == "py.typed":
            out.append((f"glassbox/{name}", os.path.join(pkg, name)))
    out.append((f"glassbox/{os.path.basename(module)}", module))
    for name in MODEL_FILES:
        out.append((f"glassbox/models/langid/{name}", os.path.join(ROOT, "models", "langid", name)))
    return out


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def _dist_info(version, summary):
    metadata = (f"Metadata-Version: 2.1\nName: glassbox\nVersion: {version}\nSummary: {summary}\n"
                "Requires-Python: >=3.9\nRequires-Dist: numpy\n")
    wheel = f"Wheel-Version: 1.0\nGenerator: glassbox_build\nRoot-Is-Purelib: false\nTag: {_tag()}\n"
    return {"METADATA": metadata, "WHEEL": wheel, "top_level.txt": "glassbox\n"}


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    version, summary = _metadata()
    name = f"glassbox-{version}.dist-info"
    os.makedirs(os.path.join(metadata_directory, name), exist_ok=True)
    for fname, text in _dist_info(version, summary).items():
        with open(os.path.join(metadata_directory, name, fname), "w", encoding="utf-8") as f:
            f.write(text)
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version, summary = _metadata()
    module = _build(config_settings)
    wheel_name = f"glassbox-{version}-{_tag()}.whl"
    dist_info = f"glassbox-{version}.dist-info"
    records = []
    path = os.path.join(wheel_directory, wheel_name)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as whl:
        for arcname, src in _files(module):
            data = open(src, "rb").read()
            info = zipfile.ZipInfo(arcname, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            whl.writestr(info, data)
            records.append(_record_line(arcname, data))
        for fname, text in _dist_info(version, summary).items():
            data = text.encode()
            whl.writestr(f"{dist_info}/{fname}", data)
            records.append(_record_line(f"{dist_info}/{fname}", data))
        records.append(f"{dist_info}/RECORD,,")
        whl.writestr(f"{dist_info}/RECORD", "\n".join(records) + "\n")
    _log(f"wrote {path}")
    return wheel_name
