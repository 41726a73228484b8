"""The version is declared once (CMakeLists.txt's project()); every surface reports that one."""

import os
import re

import glassbox
from conftest import ROOT, run_cli


def declared_version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        return re.search(r"project\(glassbox VERSION (\S+)", f.read()).group(1)


def test_python_version_is_the_cmake_version():
    assert glassbox.__version__ == declared_version()


def test_cli_version_is_the_cmake_version():
    assert run_cli(["--version"]).strip() == "glassbox " + declared_version()


def test_no_surface_hard_codes_the_version():
    pattern = re.compile(re.escape(declared_version()))
    offenders = []
    for folder in ("src", "include", "python/glassbox", "python/src"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
            for name in files:
                if name.endswith((".cpp", ".h", ".py", ".toml")):
                    path = os.path.join(dirpath, name)
                    with open(path, encoding="utf-8", errors="replace") as f:
                        for lineno, line in enumerate(f, 1):
                            if pattern.search(line) and "e.g." not in line:
                                offenders.append(f"{os.path.relpath(path, ROOT)}:{lineno}")
    assert not offenders, f"version written outside CMakeLists.txt: {offenders}"
