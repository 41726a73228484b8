#!/usr/bin/env bash
# Installs the Python package with pip into a fresh virtualenv, offline (--no-index: nothing may
# be downloaded), from an already built build directory, then runs the README's "From Python"
# example with the installed package (not the build tree). Called by scripts/test.sh.
# Usage: scripts/check_python_install.sh BUILD_DIR
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "$root/${1:?usage: check_python_install.sh BUILD_DIR}" && pwd)"
venv="$(mktemp -d)"
trap 'rm -rf "$venv"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$venv"
"$venv/bin/pip" install --quiet --no-index --config-settings "build-dir=$build" "$root/python"
preload=""
if grep -q '^GLASSBOX_SANITIZE:STRING=.*address' "$build/CMakeCache.txt"; then
  # the module is built with ASan: its runtime first, and libstdc++ for its __cxa_throw interceptor
  preload="$(g++ -print-file-name=libasan.so) $(g++ -print-file-name=libstdc++.so)"
fi
# The README's example, extracted from README.md so that the two cannot drift apart.
example="$(awk '/^## From Python/{s=1} s&&/^```python/{c=1;next} c&&/^```/{exit} c' "$root/README.md")"
[ -n "$example" ] || { echo "check_python_install: no python example under '## From Python' in README.md" >&2; exit 1; }
printf '%s\n' "$example" > "$venv/example.py"
cd "$venv"  # away from the checkout: the import must come from the virtualenv
LD_PRELOAD="$preload" ASAN_OPTIONS=detect_leaks=0 VENV="$venv" "$venv/bin/python" -c '
import os, glassbox
venv = os.environ["VENV"]
assert glassbox.__file__.startswith(venv), glassbox.__file__
assert glassbox.default_model_dir().startswith(venv), glassbox.default_model_dir()
exec(open(os.path.join(venv, "example.py")).read())'

echo "check_python_install: pip install --no-index ./python and the README example: ok" >&2
