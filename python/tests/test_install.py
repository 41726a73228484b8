"""`cmake --install BUILD --component python` installs an importable package (module, pure-Python
layer, stubs, the default model as package data); `pip install ./python` is checked by
scripts/check_python_install.sh (scripts/test.sh runs it after ctest)."""

import os
import subprocess
import sys
import sysconfig

from conftest import ROOT, child_env


def test_cmake_install_component(tmp_path):
    build = os.environ.get("GLASSBOX_BUILD_DIR", os.path.join(ROOT, "build-dev"))
    env = dict(os.environ, DESTDIR=str(tmp_path))
    r = subprocess.run(["cmake", "--install", build, "--component", "python"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    cache = open(os.path.join(build, "CMakeCache.txt"), encoding="utf-8").read()
    install_dir = next(line.split("=", 1)[1] for line in cache.splitlines()
                       if line.startswith("GLASSBOX_PYTHON_INSTALL_DIR:"))
    assert install_dir == sysconfig.get_paths()["platlib"] or "dist-packages" in install_dir, install_dir
    site = str(tmp_path) + install_dir
    pkg = os.path.join(site, "glassbox")
    for f in ("__init__.py", "errors.py", "_pipeline.py", "_glassbox.pyi", "py.typed", "models/langid/model.onnx",
              "models/langid/tokenizer.json", "models/langid/glassbox.json"):
        assert os.path.isfile(os.path.join(pkg, f)), f
    code = ("import glassbox, sys; assert glassbox.__file__.startswith(sys.argv[1]), glassbox.__file__; "
            "assert glassbox.default_model_dir().startswith(sys.argv[1]); "
            "print(glassbox.pipeline('text-classification', threads=1)('Guten Morgen')[0]['label'])")
    env = child_env()
    env["PYTHONPATH"] = site
    if "LD_PRELOAD" in os.environ:  # the installed module is the sanitized one: same runtime preload
        env["LD_PRELOAD"] = os.environ["LD_PRELOAD"]
    r = subprocess.run([sys.executable, "-c", code, site], capture_output=True, text=True, env=env, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "de"
