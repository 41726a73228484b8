// The peer's side of bench/tokenizer: npm tokenizers@0.23.2 encodeBatch on the same lines.
// Usage: RAYON_NUM_THREADS=1 node bench_peer.js TOKENIZER.json REPEAT CORPUS.txt...
const fs = require('fs');
const path = require('path');
const tk = require(path.resolve(__dirname, '../../.peers/node_modules/tokenizers'));
(async () => {
  const [file, repeatStr, ...corpus] = process.argv.slice(2);
  const lines = [];
  let bytes = 0;
  for (let r = 0; r < Number(repeatStr); ++r)
    for (const f of corpus)
      for (const l of fs.readFileSync(f, 'utf8').split('\n'))
        if (l.length) { lines.push(l); bytes += Buffer.byteLength(l); }
  let t0 = process.hrtime.bigint();
  const t = tk.Tokenizer.fromFile(file);
  const loadS = Number(process.hrtime.bigint() - t0) / 1e9;
  await t.encodeBatch(lines.slice(0, 200));
  let best = 1e30, tokens = 0;
  for (let rep = 0; rep < 3; ++rep) {
    t0 = process.hrtime.bigint();
    const encs = await t.encodeBatch(lines);
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    tokens = encs.reduce((a, e) => a + e.getIds().length, 0);
    best = Math.min(best, s);
  }
  console.log(JSON.stringify({ impl: 'tokenizers@0.23.2', threads: Number(process.env.RAYON_NUM_THREADS || 0),
    load_s: +loadS.toFixed(3), encode_s: +best.toFixed(3), mb_per_s: +(bytes / best / 1e6).toFixed(2),
    tokens_per_s: Math.round(tokens / best), tokens, bytes }));
})();
