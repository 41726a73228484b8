// The peer's side of bench/tokenizer/encode_e2e.sh: what a user of the npm `tokenizers` binding writes to
// do `glassbox encode`'s job: read JSONL {"text","pair"?} from stdin, encode all lines as one batch,
// write one JSON line per input with the same fields in the same order (keys sorted, as glassbox writes).
// Usage: RAYON_NUM_THREADS=1 node encode_peer.js TOKENIZER.json < in.jsonl > out.jsonl
const fs = require('fs');
const path = require('path');
const tk = require(path.resolve(__dirname, '../../.peers/node_modules/tokenizers'));

function record(e, withOverflow) {
  const offsets = e.getOffsets();
  const r = { attention_mask: e.getAttentionMask(), ids: e.getIds(), offsets };
  if (withOverflow) r.overflowing = e.getOverflowing().map((o) => record(o, false));
  r.special_tokens_mask = e.getSpecialTokensMask();
  r.tokens = e.getTokens();
  r.type_ids = e.getTypeIds();
  return r;
}

(async () => {
  const tok = tk.Tokenizer.fromFile(process.argv[2]);
  const inputs = [];
  for (const line of fs.readFileSync(0, 'utf8').split('\n')) {
    if (!line.length) continue;
    const j = JSON.parse(line);
    inputs.push(typeof j.pair === 'string' ? [j.text, j.pair] : j.text);
  }
  const encs = await tok.encodeBatch(inputs, { addSpecialTokens: true });
  const chunk = [];
  let size = 0;
  for (const e of encs) {
    const s = JSON.stringify(record(e, true));
    chunk.push(s);
    size += s.length;
    if (size > (1 << 20)) { fs.writeSync(1, chunk.join('\n') + '\n'); chunk.length = 0; size = 0; }
  }
  if (chunk.length) fs.writeSync(1, chunk.join('\n') + '\n');
})().catch((err) => { console.error(err); process.exit(1); });
