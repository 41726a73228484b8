#!/usr/bin/env bash
# CPU milliseconds and wall milliseconds per var8 batch (8 sequences, lengths 16..128 padded to the longest), for
# glassbox padded, glassbox unpadded with sequences in parallel (one thread each), glassbox unpadded one sequence at a
# time (intra-op threads), and onnxruntime-node (padded). CPU = perf stat task-clock of (1 + N) runs minus 1 run, / N:
# load-insensitive, but blind to waiting (and ORT's worker threads spin while waiting, which inflates its CPU time).
# Wall = p50 of the same N runs: only meaningful on a quiet machine (the load average is printed).
# Inputs: the .npy files bench/vs_ort.sh wrote (build/vs_ort/MODEL.var8/); run vs_ort.sh once first.
# Usage: bench/engine/var8_cpu.sh [GLASSBOX] [MODEL_NAME (default bert_base_op14)] [N (default 10)] [THREADS (default 2)]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="${1:-$root/build/src/cli/glassbox}"; name="${2:-bert_base_op14}"; n="${3:-10}"; threads="${4:-2}"
model="$root/tests/data/generated/$name.onnx"; d="$root/build/vs_ort/$name.var8"
[[ -f "$d/var8.input_ids.npy" ]] || { echo "var8_cpu.sh: no inputs in $d; run bench/vs_ort.sh first" >&2; exit 2; }
ins=(); for f in "$d"/var8.*.npy; do k="$(basename "$f" .npy)"; ins+=(--input "${k#var8.}=$f"); done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $name, $threads threads, $n runs"
task_ms() { perf stat -x, -e task-clock "$@" 2>&1 >/dev/null | grep task-clock | cut -d, -f1; }
measure() {  # label, command with --repeat R appended
  local label="$1"; shift
  local one many wall
  one=$(task_ms "$@" --repeat 1)
  many=$(task_ms "$@" --repeat $((n + 1)))
  wall=$("$@" --repeat "$n" | python3 -c "import json,sys; t=sys.stdin.read(); print(round(json.loads(t[t.index('{'):])['latency_ms']['p50'], 1))")
  python3 -c "print(f'{\"$label\":34s} CPU {($many - $one) / $n:7.1f} ms/batch   wall p50 $wall ms')"
}
gb=("$bin" bench "$model" "${ins[@]}" --threads "$threads" --warmup 1 --json)
measure "glassbox padded" "${gb[@]}"
measure "glassbox unpadded, parallel seqs" "${gb[@]}" --unpad-mask attention_mask
measure "glassbox unpadded, serial seqs" "${gb[@]}" --unpad-mask attention_mask --unpad-serial
measure "onnxruntime-node padded" node "$root/bench/engine/ort_bench.js" "$model" "${ins[@]}" --threads "$threads" --warmup 1
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
