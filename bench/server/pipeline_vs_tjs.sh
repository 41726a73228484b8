#!/usr/bin/env bash
# Per-text classification without HTTP (issue #16): `glassbox classify --timing` vs transformers.js
# pipeline('text-classification') on the same BERT-base directory and the same N texts (8-200 words
# from tests/data/tokenizer/corpus, the serving benchmark's), one text at a time, 2 threads each.
# Usage: bench/server/pipeline_vs_tjs.sh [GLASSBOX_BINARY] [N_TEXTS]   (model dir: see run.sh)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="${1:-$root/build/src/cli/glassbox}"
n="${2:-100}"
work="${GLASSBOX_BENCH_DIR:-/tmp/glassbox-bench-server}"
[[ -f "$work/bench_cls/tokenizer.json" ]] || { echo "run bench/server/run.sh once first (it makes $work/bench_cls)" >&2; exit 2; }
/usr/bin/python3 -c "
import json, sys; sys.path.insert(0, '$root/bench/server'); import load
for t in load.texts(7, $n): print(json.dumps({'text': t}))" > "$work/texts.jsonl"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $n texts"
"$bin" classify "$work/bench_cls" --timing --threads 2 < "$work/texts.jsonl" 2>&1 >"$work/glassbox_labels.jsonl" | grep timing
node "$root/bench/server/tjs_classify.js" "$work/bench_cls" "$work/texts.jsonl" 2 2>&1 >"$work/tjs_labels.jsonl" | grep timing
/usr/bin/python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
g = [json.loads(l) for l in open(w + "/glassbox_labels.jsonl")]
t = [json.loads(l) for l in open(w + "/tjs_labels.jsonl")]
agree = sum(a["label"] == b["label"] for a, b in zip(g, t))
diff = max(abs(a["labels"][0]["score"] - b["score"]) for a, b in zip(g, t) if a["label"] == b["label"])
print(f"labels agree on {agree}/{len(g)} texts; max |score diff| {diff:.2e}")
PY
