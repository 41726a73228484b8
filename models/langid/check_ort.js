#!/usr/bin/env node
// Check the exported language-ID model with onnxruntime-node + the npm `tokenizers` binding.
//   node models/langid/check_ort.js ["some text" ...]
// Without arguments: classifies the hand-written sanity sentences (sanity.tsv), and,
// when models/langid/data/torch_ref.json exists (written by train.py), checks that the
// token ids, logits and predictions equal torch's. Also checks that a padded batch gives
// the same logits as one-at-a-time inference. Exit status 1 on any mismatch.
'use strict';
const fs = require('fs');
const path = require('path');
const PEERS = path.resolve(__dirname, '../../.peers/node_modules');
const tk = require(path.join(PEERS, 'tokenizers'));
const ort = require(path.join(PEERS, 'onnxruntime-node'));

const DIR = __dirname;
const cfg = JSON.parse(fs.readFileSync(path.join(DIR, 'config.json'), 'utf8'));
const gb = JSON.parse(fs.readFileSync(path.join(DIR, 'glassbox.json'), 'utf8'));
const labels = gb.labels;

function softmax(v) {
  const m = Math.max(...v);
  const e = v.map((x) => Math.exp(x - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
}

async function run(session, batchIds) {
  const T = Math.max(...batchIds.map((x) => x.length));
  const B = batchIds.length;
  const ids = new BigInt64Array(B * T);
  const mask = new BigInt64Array(B * T);
  batchIds.forEach((x, b) => x.forEach((id, t) => { ids[b * T + t] = BigInt(id); mask[b * T + t] = 1n; }));
  const out = await session.run({
    input_ids: new ort.Tensor('int64', ids, [B, T]),
    attention_mask: new ort.Tensor('int64', mask, [B, T]),
  });
  const lg = out.logits.data;
  const L = out.logits.dims[1];
  return batchIds.map((_, b) => Array.from(lg.slice(b * L, (b + 1) * L)));
}

(async () => {
  const tok = tk.Tokenizer.fromFile(path.join(DIR, 'tokenizer.json'));
  const session = await ort.InferenceSession.create(path.join(DIR, 'model.onnx'));
  const argv = process.argv.slice(2);
  let items;
  if (argv.length) {
    items = argv.map((t) => ({ lang: '?', text: t }));
  } else {
    items = fs.readFileSync(path.join(DIR, 'sanity.tsv'), 'utf8').split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => { const i = l.indexOf('\t'); return { lang: l.slice(0, i), text: l.slice(i + 1) }; });
  }
  let bad = 0;
  let correct = 0;
  const allIds = [];
  for (const it of items) {
    const enc = await tok.encode(it.text); // [CLS] ... [SEP], truncation from tokenizer.json
    const ids = enc.getIds();
    allIds.push(ids);
    const [lg] = await run(session, [ids]);
    it.ids = ids;
    it.logits = lg;
    const p = softmax(lg);
    const k = p.indexOf(Math.max(...p));
    it.pred = labels[k];
    if (it.pred === it.lang) correct++;
    console.log(`${it.lang}\t${it.pred}\t${p[k].toFixed(3)}\t${it.pred === it.lang || it.lang === '?' ? '' : 'WRONG\t'}${it.text}`);
  }
  if (!argv.length) {
    console.log(`sanity accuracy: ${correct}/${items.length}`);
    // padded batch == one-at-a-time
    const batch = await run(session, allIds);
    let maxd = 0;
    batch.forEach((lg, i) => lg.forEach((x, j) => { maxd = Math.max(maxd, Math.abs(x - items[i].logits[j])); }));
    console.log(`padded batch vs single: max |diff| ${maxd.toExponential(2)}`);
    if (maxd > 1e-3) { console.log('MISMATCH: padding changes logits'); bad++; }
    const refFile = path.join(DIR, 'data', 'torch_ref.json');
    if (fs.existsSync(refFile)) {
      const ref = JSON.parse(fs.readFileSync(refFile, 'utf8'));
      let idMis = 0; let predMis = 0; let maxl = 0;
      ref.forEach((r, i) => {
        const it = items[i];
        if (r.text !== it.text || r.ids.join(' ') !== it.ids.join(' ')) { idMis++; console.log('ids differ:', r.text, r.ids.join(' '), '|', it.ids.join(' ')); }
        if (r.pred !== it.pred) predMis++;
        r.logits.forEach((x, j) => { maxl = Math.max(maxl, Math.abs(x - it.logits[j])); });
      });
      console.log(`vs torch (${ref.length} sentences): token-id mismatches ${idMis}, prediction mismatches ${predMis}, max |logit diff| ${maxl.toExponential(2)}`);
      if (idMis || predMis || maxl > 1e-3) bad++;
    } else {
      console.log('(no data/torch_ref.json: run train.py first to compare with torch)');
    }
    console.log(`config: ${cfg.num_labels} labels, max_position_embeddings ${cfg.max_position_embeddings}`);
  }
  process.exit(bad ? 1 : 0);
})();
