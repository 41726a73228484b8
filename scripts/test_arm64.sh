#!/usr/bin/env bash
# glassbox for Debian 12 arm64 (issue 33 §2): cross-compile on this x86-64 machine with Debian's
# multiarch packages, then run the key tests under qemu-aarch64 against the x86-64 build.
# Not part of CI (.ci/run): the cross build alone takes tens of minutes on two cores; each run's
# phase timings and results are recorded in docs/benchmarks.md ("arm64 under qemu-aarch64").
#
# Usage: scripts/test_arm64.sh [--full-conformance]
#   GLASSBOX_X86=PATH   the x86-64 glassbox to compare with (default build-test/src/cli/glassbox,
#                       scripts/test.sh's build; built with ninja if missing)
#   ARM_BUILD=DIR       the cross build directory (default build-arm64)
#   JOBS=N              ninja -j (default 2)
#
# Phases (each timed): deps (apt: crossbuild-essential-arm64 and the :arm64 dev packages; the two
# that multiarch cannot co-install are unpacked into build-arm64-deps/, see
# cmake/toolchain-aarch64.cmake), configure, build (glassbox + glassbox_tokenizer_tests, Release
# -O1, -Werror, no sanitizers: AddressSanitizer's shadow reservation makes qemu-user 7.2 grow past
# the machine's memory, tests/portability/portability_test.py), then under qemu-aarch64: the
# tokenizer golden tests, an op conformance subset of the ONNX backend node tests (all of them with
# --full-conformance), and tests/portability/arm64_test.py (explain, classify, run fp32/int8 vs x86,
# bf16 refusal, serve + one request; qemu CPU models max and cortex-a72), concurrently.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
ARM_BUILD="${ARM_BUILD:-build-arm64}"
DEPS_DIR="$ROOT/build-arm64-deps"
JOBS="${JOBS:-2}"
GLASSBOX_X86="${GLASSBOX_X86:-build-test/src/cli/glassbox}"
FULL_CONFORMANCE=0
[ "${1:-}" = "--full-conformance" ] && FULL_CONFORMANCE=1

declare -a PHASES=()
phase_start() { PHASE="$1"; T0=$(date +%s); echo "=== arm64: $1" >&2; }
phase_end() { PHASES+=("$PHASE $(($(date +%s) - T0)) s ${1:-ok}"); }
summary() {
  echo "=== arm64 summary ($(date -u +%FT%TZ), commit $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD || echo ' + uncommitted changes'))"
  for p in "${PHASES[@]}"; do echo "  $p"; done
}
trap summary EXIT

# ---- deps ----
phase_start deps
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  $SUDO dpkg --add-architecture arm64
  $SUDO apt-get update -qq
fi
PKGS=(crossbuild-essential-arm64 qemu-user libprotobuf-dev:arm64 libdnnl2:arm64 libonnx1:arm64 libssl-dev:arm64
      libpcre2-dev:arm64 libicu-dev:arm64 libgtest-dev:arm64 libgmock-dev:arm64 libboost-dev:arm64
      libturbojpeg0-dev:arm64 libspng-dev:arm64 libwebp-dev:arm64 nlohmann-json3-dev libcli11-dev protobuf-compiler)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "arm64: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# libdnnl-dev:arm64 and libonnx-dev:arm64 conflict with their amd64 twins (dnnl_config.h differs;
# libonnxifi ships /usr/lib/libonnxifi.so): unpack them here instead, dev links pointing at the
# installed arm64 runtime libraries.
if [ ! -e "$DEPS_DIR/usr/include/oneapi/dnnl/dnnl_config.h" ] || [ ! -e "$DEPS_DIR/usr/lib/aarch64-linux-gnu/libonnx.so" ]; then
  rm -rf "$DEPS_DIR"
  mkdir -p "$DEPS_DIR/debs"
  (cd "$DEPS_DIR/debs" && apt-get download libdnnl-dev:arm64 libonnx-dev:arm64 2>/dev/null)
  for d in "$DEPS_DIR"/debs/*.deb; do dpkg-deb -x "$d" "$DEPS_DIR"; done
  for l in "$DEPS_DIR"/usr/lib/aarch64-linux-gnu/*.so; do
    [ -L "$l" ] && ln -sfn "/usr/lib/aarch64-linux-gnu/$(basename "$(readlink "$l")")" "$l"
  done
fi
phase_end

# ---- configure + build ----
phase_start configure
cmake -S . -B "$ARM_BUILD" -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" \
  -DGLASSBOX_WERROR=ON -DGLASSBOX_SANITIZE= -DGLASSBOX_PYTHON=OFF >/dev/null
phase_end

phase_start build
ninja -C "$ARM_BUILD" -j"$JOBS" glassbox glassbox_tokenizer_tests
ARM_CLI="$ARM_BUILD/src/cli/glassbox"
file "$ARM_CLI" | grep -q "ARM aarch64" || { echo "arm64: $ARM_CLI is not an aarch64 executable" >&2; exit 1; }
phase_end
if [ ! -x "$GLASSBOX_X86" ]; then
  phase_start "build x86 reference"
  ninja -C "$(dirname "$(dirname "$(dirname "$GLASSBOX_X86")")")" -j"$JOBS" glassbox
  phase_end
fi

# The test phases under qemu-aarch64 run concurrently (each is one emulated process at a
# time, mostly single-threaded); each one's log is printed after all end, its time and verdict in
# the summary.
LOGS="$(mktemp -d /tmp/glassbox-arm64-XXXXXX)"
declare -a BG=()
run_bg() {  # name command...: runs in the background, timed, output to $LOGS/<n>.log
  local n=${#BG[@]}
  BG+=("$1"); shift
  ( t0=$(date +%s); if "$@" >"$LOGS/$n.log" 2>&1; then r=ok; else r=FAILED; fi
    echo "$(( $(date +%s) - t0 )) s $r" >"$LOGS/$n.result" ) &
}

# ---- under qemu-aarch64 ----
[ -e tests/data/generated/bert_tiny_cls_op14.onnx ] || /usr/bin/python3 scripts/make_test_models.py --only bert_tiny_cls_op14 >/dev/null
bash scripts/tokenizer/ensure_goldens.sh >/dev/null
T_TESTS=$(date +%s)
run_bg "tokenizer goldens (qemu)" qemu-aarch64 "$ARM_BUILD/tests/tokenizer/glassbox_tokenizer_tests" --gtest_brief=1

# The op classes whose kernels dispatch on the CPU (GEMM, conv, elementwise math, row kernels,
# quantization) plus the common shape ops: the conformance subset.
NODE=/usr/share/libonnx-testdata/data/node
if [ "$FULL_CONFORMANCE" = 1 ]; then
  CASES=("$NODE")
else
  mapfile -t CASES < <(find "$NODE" -mindepth 1 -maxdepth 1 -type d -regextype posix-extended -regex \
    '.*/test_(matmul|gemm|conv|convtranspose|einsum|softmax|logsoftmax|layer_normalization|gelu|erf|exp|tanh|sigmoid|relu|add|mul|div|sub|pow|sqrt|reduce_mean|reduce_sum|gather|reshape|transpose|concat|slice|cast|quantizelinear|dequantizelinear|dynamicquantizelinear|matmulinteger|qlinearmatmul|qlinearconv|maxpool|averagepool|batchnorm|instancenorm|lrn|resize|where|expand)(_.*)?$' | sort)
fi
echo "arm64: conformance on ${#CASES[@]} case dirs" >&2
run_bg "op conformance subset (qemu, ${#CASES[@]} dirs)" qemu-aarch64 "$ARM_CLI" conformance "${CASES[@]}" --strict \
  --exclude tests/conformance/excluded.txt

for cpu in max cortex-a72; do  # Neoverse-V1-class (SVE, BF16, I8MM) and Raspberry Pi 4-class (NEON only)
  run_bg "explain/classify/run/serve vs x86 (qemu -cpu $cpu; tests/portability/arm64_test.py)" \
    env ASAN_OPTIONS=detect_leaks=0 ARM64_CPUS=$cpu /usr/bin/python3 tests/portability/arm64_test.py "$GLASSBOX_X86" "$ARM_CLI"
done
wait
status=0
for i in "${!BG[@]}"; do
  echo "=== arm64: ${BG[$i]} (last lines of its log)" >&2
  tail -n 40 "$LOGS/$i.log" >&2
  result="$(cat "$LOGS/$i.result" 2>/dev/null || echo "? s FAILED")"
  PHASES+=("${BG[$i]} $result")
  case "$result" in *FAILED) status=1 ;; esac
done
PHASES+=("tests under qemu, wall time of all $(( $(date +%s) - T_TESTS )) s")
rm -rf "$LOGS"
exit $status
