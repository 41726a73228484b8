#!/usr/bin/env bash
# Builds glassbox with ASan+UBSan (-Werror), the Python module included, and runs every test
# suite with ctest (the pytest suite python/tests is the ctest test python_pytest), then installs
# the Python package into a fresh virtualenv with pip and runs the README's Python example.
# Needs scripts/setup.sh --peers to have run once. Build dir: build-test/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
build="${GLASSBOX_TEST_BUILD_DIR:-build-test}"
sanitize="${GLASSBOX_TEST_SANITIZE-address,undefined}"
jobs="$(nproc)"

# -O1 -g1: what ASan recommends, and it compiles much faster than -O2 -g on 2 cores.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1 -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELEASE="-O1 -g1 -DNDEBUG" -DGLASSBOX_WERROR=ON -DGLASSBOX_SANITIZE="$sanitize" -DGLASSBOX_PYTHON=ON >/dev/null
ninja -C "$build" -j "$jobs"
# Test models are produced by the real torch.onnx exporter, never committed.
/usr/bin/python3 scripts/make_test_models.py >/dev/null 2>&1 || /usr/bin/python3 scripts/make_test_models.py
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
ctest --test-dir "$build" --output-on-failure -j "$jobs"
bash scripts/check_python_install.sh "$build"
