#!/usr/bin/env bash
# A model directory holding an int8 model for both engines (issue #17: "on a directory holding a quantized
# model, glassbox vs transformers.js running that same quantized model"): the serving benchmark's BERT-base
# classifier (bench_cls, made by bench/server/run.sh) rewritten by scripts/quantize_model.py into
# onnxruntime's quantize_dynamic form (DynamicQuantizeLinear + MatMulInteger, per-channel weight scales),
# stored where glassbox reads it (DIR/model.onnx) and where transformers.js's dtype 'q8' does
# (DIR/onnx/model_quantized.onnx, a hard link). Tokenizer and config are bench_cls's.
# Usage: bench/server/make_quantized_dir.sh [OUT_DIR]   then
#        TJS_DTYPE=q8 bench/server/pipeline_vs_tjs.sh GLASSBOX 100 OUT_DIR
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="${GLASSBOX_BENCH_DIR:-/tmp/glassbox-bench-server}"
out="${1:-$work/bench_cls_q8}"
src="$work/bench_cls"
[[ -f "$src/tokenizer.json" ]] || { echo "run bench/server/run.sh once first (it makes $src)" >&2; exit 2; }
mkdir -p "$out/onnx"
cp "$src"/tokenizer.json "$src"/config.json "$src"/tokenizer_config.json "$out/"
/usr/bin/python3 "$root/scripts/quantize_model.py" "$src/model.onnx" "$out/model.onnx" --mode dynamic --per-channel
ln -f "$out/model.onnx" "$out/onnx/model_quantized.onnx"
echo "wrote $out"
