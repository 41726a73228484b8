#!/usr/bin/env bash
# Serving benchmark (issue #16): glassbox serve vs (a) a Node http server around transformers.js
# pipeline('text-classification') and (b) a Node http server around onnxruntime-node + tokenizers,
# on the same BERT-base classification directory, same machine, same run, 2 compute threads each.
# Closed loop at 1, 4, 16 and 64 clients (bench/server/load.py), then glassbox under 10x overload
# (160 clients, --max-queue 8). Prints one JSON line per case and a Markdown table.
# Usage: bench/server/run.sh [GLASSBOX_BINARY] [SECONDS_PER_CASE]
#   GLASSBOX_ARGS="--precision bf16" adds flags to `glassbox serve` (issue #17: the bf16 row; the peers stay fp32);
#   BENCH_OVERLOAD=0 skips the two overload cases.
# Needs: scripts/install_peers.sh (tokenizers, onnxruntime-node, @huggingface/transformers), /usr/bin/python3 with torch.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="${1:-$root/build/src/cli/glassbox}"
secs="${2:-20}"
threads=2
work="${GLASSBOX_BENCH_DIR:-/tmp/glassbox-bench-server}"
model="$root/tests/data/generated/bert_base_cls_op14.onnx"
[[ -f "$model" ]] || /usr/bin/python3 "$root/scripts/make_test_models.py" --only bert_base_cls_op14
[[ -f "$work/bench_cls/tokenizer.json" ]] || node "$root/bench/server/make_model_dir.js" "$work/bench_cls"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); commit $(git -C "$root" rev-parse --short HEAD); $secs s per case; glassbox serve ${GLASSBOX_ARGS:-}"

start() {  # start NAME CMD... -> sets PID, PORT (waits for "listening on 127.0.0.1:PORT"; glassbox: "server ready")
  local name=$1 log="$work/$1.log"; shift
  "$@" 2>"$log" >/dev/null &
  PID=$!
  for _ in $(seq 1 600); do
    PORT=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$log" | head -1 | cut -d: -f2 || true)
    if [[ -n "$PORT" ]] && { [[ "$name" != glassbox* ]] || grep -q "server ready" "$log"; }; then return 0; fi
    sleep 0.5
  done
  echo "server $log did not start" >&2; kill -9 $PID; exit 1
}

for_server() {  # for_server NAME: warm up, then each client count
  local name=$1
  /usr/bin/python3 "$root/bench/server/load.py" --port "$PORT" --pid "$PID" --clients 2 --seconds 3 >/dev/null
  for c in 1 4 16 64; do
    echo "{\"server\": \"$name\", $(/usr/bin/python3 "$root/bench/server/load.py" --port "$PORT" --pid "$PID" --clients $c --seconds "$secs" | cut -c2-)"
  done
}

{
  # shellcheck disable=SC2086  # GLASSBOX_ARGS is a list of flags
  start glassbox "$bin" serve "$work/bench_cls" --host 127.0.0.1 --port 0 --threads $threads ${GLASSBOX_ARGS:-}
  for_server glassbox
  kill $PID; wait $PID || true
  for q in $([[ "${BENCH_OVERLOAD:-1}" == 0 ]] || echo 8 2); do  # 10x overload (160 clients) against a queue of q requests
    # shellcheck disable=SC2086
    start glassbox_overload "$bin" serve "$work/bench_cls" --host 127.0.0.1 --port 0 --threads $threads --max-queue $q ${GLASSBOX_ARGS:-}
    /usr/bin/python3 "$root/bench/server/load.py" --port "$PORT" --pid "$PID" --clients 2 --seconds 3 >/dev/null
    echo "{\"server\": \"glassbox_overload_q$q\", $(/usr/bin/python3 "$root/bench/server/load.py" --port "$PORT" --pid "$PID" --clients 160 --seconds "$secs" | cut -c2-)"
    kill $PID; wait $PID || true
  done
  start ort node "$root/bench/server/peer_servers.js" ort "$work/bench_cls" 0 $threads
  for_server ort
  kill $PID; wait $PID || true
  start transformers node "$root/bench/server/peer_servers.js" transformers "$work/bench_cls" 0 $threads
  for_server transformers
  kill $PID; wait $PID || true
} | tee "$work/results.jsonl"
/usr/bin/python3 - "$work/results.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
print("| server | clients | req/s | p50 ms | p95 ms | p99 ms | errors | 429 | peak RSS MB |")
print("|---|---|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r['server']} | {r['clients']} | {r['rps']} | {r['p50_ms']} | {r['p95_ms']} | {r['p99_ms']} | {r['errors']} | {r['refused_429']} | {r['peak_rss_mb']} |")
by = {(r["server"], r["clients"]): r for r in rows}
for c in (1, 4, 16, 64):
    g, o, t = by.get(("glassbox", c)), by.get(("ort", c)), by.get(("transformers", c))
    if g and o and t:
        best = max(o["rps"], t["rps"])
        print(f"clients {c}: throughput {g['rps'] / best:.2f}x the better peer; p95 {g['p95_ms'] / t['p95_ms']:.2f}x transformers.js, "
              f"p99 {g['p99_ms'] / min(o['p99_ms'], t['p99_ms']):.2f}x the better peer; peak RSS {g['peak_rss_mb'] / min(o['peak_rss_mb'], t['peak_rss_mb']):.2f}x")
un = by.get(("glassbox", 1))
for q in (8, 2):
    ov = by.get((f"glassbox_overload_q{q}", 160))
    if ov and un:
        print(f"overload (160 clients, max_queue {q}): admitted p99 {ov['p99_ms']} ms = {ov['p99_ms'] / un['p99_ms']:.2f}x the 1-client p99; "
              f"{ov['refused_429']} refused with 429, {ov['errors']} errors; RSS {ov['rss_first_mb']} -> {ov['rss_last_mb']} MB")
PY
