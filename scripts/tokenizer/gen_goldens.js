// Writes golden encodings produced by the peers (npm tokenizers@0.23.2; @anush008/tokenizers@0.6.0
// for overflow windows, see huggingface/tokenizers#2091) for every tokenizer file and mode.
// Usage: node scripts/tokenizer/gen_goldens.js [OUT_DIR [NAME...]]   (default tests/data/generated/tokenizer, all)
const path = require('path');
const fs = require('fs');
const root = path.resolve(__dirname, '../..');
const peer = require(path.join(root, '.peers/node_modules/tokenizers'));
const peerOverflow = require(path.join(root, '.peers/node_modules/@anush008/tokenizers'));
const outDir = path.resolve(process.argv[2] || path.join(root, 'tests/data/generated/tokenizer'));
fs.mkdirSync(outDir, { recursive: true });
const { TOKENIZERS, loadCorpus, MODES, EXTRA } = require('./goldens_config.js');

function encJson(e) {
  return { ids: e.getIds(), type_ids: e.getTypeIds(), tokens: e.getTokens(), offsets: e.getOffsets(),
    attention_mask: e.getAttentionMask(), special_tokens_mask: e.getSpecialTokensMask() };
}
function full(e) {
  const j = encJson(e);
  j.overflowing = e.getOverflowing().map(encJson);
  return j;
}

async function run() {
  const corpus = loadCorpus(root);
  const only = process.argv.slice(3);
  for (const [name, rel] of Object.entries(TOKENIZERS)) {
    if (only.length && !only.includes(name)) continue;
    const file = path.join(root, rel);
    const lines = [];
    const t0 = Date.now();
    const loaded = new Map();  // each peer loads the file once (gemma3's is 33 MB)
    for (const mode of MODES) {
      const lib = mode.overflow ? peerOverflow : peer;
      if (!loaded.has(lib)) loaded.set(lib, lib.Tokenizer.fromFile(file));
      const tok = loaded.get(lib);
      tok.disableTruncation();
      tok.disablePadding();
      if (mode.truncation) tok.setTruncation(mode.truncation.maxLength, mode.truncation.options);
      if (mode.padding) {
        const p = Object.assign({}, mode.padding);
        const padTok = ['[PAD]', '<pad>'].find((s) => tok.tokenToId(s) !== null && tok.tokenToId(s) !== undefined);
        if (padTok) { p.padToken = padTok; p.padId = tok.tokenToId(padTok); }
        tok.setPadding(p);
      }
      const inputs = mode.select(corpus);
      const opts = { addSpecialTokens: mode.addSpecialTokens };
      if (mode.batch) {
        for (let b = 0; b < inputs.length; b += mode.batch) {
          const group = inputs.slice(b, b + mode.batch);
          const encs = await tok.encodeBatch(group.map((x) => (x.pair !== undefined ? [x.text, x.pair] : x.text)), opts);
          encs.forEach((e, k) => lines.push(Object.assign({ mode: mode.name, batch: b / mode.batch }, group[k], full(e))));
        }
      } else {
        for (const x of inputs) {
          let rec;
          try {
            const e = await tok.encode(x.text, x.pair === undefined ? null : x.pair, opts);
            rec = Object.assign({ mode: mode.name }, x, full(e));
            if (mode.decode) {
              rec.decoded = await tok.decode(rec.ids, false);
              rec.decoded_skip = await tok.decode(rec.ids, true);
            }
          } catch (err) {
            rec = Object.assign({ mode: mode.name }, x, { error: String(err).slice(0, 200) });
          }
          lines.push(rec);
        }
      }
    }
    for (const [mode, inputs] of Object.entries(EXTRA[name] || {})) {
      const tok = loaded.get(peer);
      tok.disableTruncation();
      tok.disablePadding();
      for (const x of inputs()) {
        const e = await tok.encode(x.text, null, { addSpecialTokens: true });
        lines.push(Object.assign({ mode }, x, full(e)));
      }
    }
    const out = path.join(outDir, name + '.jsonl');
    fs.writeFileSync(out, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    console.error(`gen_goldens: ${name}: ${lines.length} records in ${Date.now() - t0} ms -> ${out}`);
  }
}
run().catch((e) => { console.error(e); process.exit(1); });
