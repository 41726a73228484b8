#!/usr/bin/env bash
# Per-text classification without HTTP (issue #16): `glassbox classify --timing` vs transformers.js
# pipeline('text-classification') on the same BERT-base directory and the same N texts (8-200 words
# from tests/data/tokenizer/corpus, the serving benchmark's), one text at a time, 2 threads each.
# Usage: bench/server/pipeline_vs_tjs.sh [GLASSBOX_BINARY] [N_TEXTS] [MODEL_DIR]   (model dir: see run.sh)
#   GLASSBOX_ARGS="--precision bf16" adds flags to `glassbox classify` (issue #17: declared precisions);
#   TJS_DTYPE=q8 makes transformers.js load MODEL_DIR/onnx/model_quantized.onnx (its quantized models).
# A directory holding a quantized model for both: bench/server/make_quantized_dir.sh.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="${1:-$root/build/src/cli/glassbox}"
n="${2:-100}"
work="${GLASSBOX_BENCH_DIR:-/tmp/glassbox-bench-server}"
dir="${3:-$work/bench_cls}"
[[ -f "$dir/tokenizer.json" ]] || { echo "run bench/server/run.sh once first (it makes $work/bench_cls)" >&2; exit 2; }
/usr/bin/python3 -c "
import json, sys; sys.path.insert(0, '$root/bench/server'); import load
for t in load.texts(7, $n): print(json.dumps({'text': t}))" > "$work/texts.jsonl"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $n texts; $dir; glassbox ${GLASSBOX_ARGS:-}; transformers.js dtype ${TJS_DTYPE:-fp32}"
# shellcheck disable=SC2086  # GLASSBOX_ARGS is a list of flags
"$bin" classify "$dir" --timing --threads 2 ${GLASSBOX_ARGS:-} < "$work/texts.jsonl" 2>&1 >"$work/glassbox_labels.jsonl" | grep timing
node "$root/bench/server/tjs_classify.js" "$dir" "$work/texts.jsonl" 2 "${TJS_DTYPE:-fp32}" 2>&1 >"$work/tjs_labels.jsonl" | grep timing
/usr/bin/python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
g = [json.loads(l) for l in open(w + "/glassbox_labels.jsonl")]
t = [json.loads(l) for l in open(w + "/tjs_labels.jsonl")]
agree = sum(a["label"] == b["label"] for a, b in zip(g, t))
diff = max(abs(a["labels"][0]["score"] - b["score"]) for a, b in zip(g, t) if a["label"] == b["label"])
print(f"labels agree on {agree}/{len(g)} texts; max |score diff| {diff:.2e}")
PY
