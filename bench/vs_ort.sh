#!/usr/bin/env bash
# glassbox vs onnxruntime-node 1.30 on BERT-base, DistilBERT and MiniLM-L6 (issue #5), one invocation:
#   1. exports the models with scripts/make_test_models.py --bench if they are missing (~1 min, ~800 MB),
#   2. writes identical .npy inputs, runs ORT (bench/engine/ort_bench.js) and `glassbox bench --json`
#      interleaved per case, compares outputs, measures cold start in fresh processes,
#   3. prints every ratio with its inputs and appends the table to docs/benchmarks-history.md (date, commit, load).
# Usage: bench/vs_ort.sh [GLASSBOX_BINARY] [-- extra flags for bench/engine/vs_ort.py, e.g. --no-record
#        --models minilm_l6_op14 --repeat 40 --glassbox-args "--opt-level 0"
#        --precision bf16|int8-dynamic (glassbox in bf16 / int8 vs ORT fp32; issue #17) --cases b1x128 --cold-runs 0]
# Default binary: build/src/cli/glassbox (cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build glassbox).
# Needs: node + .peers/node_modules (scripts/install_peers.sh), /usr/bin/python3 with torch, onnx, numpy.
# Takes ~3-5 min on the 2-core machine. Run it on a quiet machine: note the load average it prints.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/build/src/cli/glassbox"
if [[ $# -gt 0 && "$1" != "--" ]]; then bin="$1"; shift; fi
if [[ "${1:-}" == "--" ]]; then shift; fi
[[ -x "$bin" ]] || { echo "vs_ort.sh: no glassbox binary at $bin (build it first, see the header of this script)" >&2; exit 2; }
[[ -d "$root/.peers/node_modules/onnxruntime-node" ]] || { echo "vs_ort.sh: onnxruntime-node missing; run scripts/install_peers.sh" >&2; exit 2; }
models="$root/tests/data/generated"
need=()
for m in bert_base_op14 distilbert_base_op14 minilm_l6_op14; do [[ -f "$models/$m.onnx" ]] || need+=("$m"); done
if (( ${#need[@]} )); then
  echo "exporting ${need[*]} (torch.onnx, once)..."
  /usr/bin/python3 "$root/scripts/make_test_models.py" --only "${need[@]}"
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)  (ratios from one interleaved run are what counts)"
exec /usr/bin/python3 "$root/bench/engine/vs_ort.py" --glassbox "$bin" "$@"
