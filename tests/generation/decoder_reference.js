#!/usr/bin/env node
// The peer side of generation parity: onnxruntime-node 1.30 runs a decoder model.onnx (Optimum's
// current or legacy merged layout, or onnxruntime-genai's, whose prompts of a batch run one at a time) with a plain greedy loop that feeds present -> past, from token-id prompts, and
// writes every step's logits and chosen tokens. glassbox_generation_tests (parity_test.cpp) then
// runs the same prompts through glassbox's GenerationSession and compares step by step.
//
// Batches are left-padded, as Hugging Face does for decoder-only generation: attention_mask 0 on
// padding, position_ids = cumsum(mask) - 1 (1 at padded positions), the cache keeps the padded
// slots. The first step feeds a zero-length past [B, kv_heads, 0, head_dim].
// Optimum's legacy merged layout (an input use_cache_branch): use_cache_branch false on the first
// step, whose zero-length pasts are dummies (transformers.js feeds these); the step is also run with
// old Optimum's length-1 zero dummies and must give the same logits (the no-cache branch ignores them).
//
// Usage: node decoder_reference.js OUT_DIR MODEL_DIR...
// Writes OUT_DIR/<model>/cases.json ([{name, prompts, steps}]) and per case <name>.logits.npy
// (float32 [steps, batch, vocab], step 0 = the prefill's last position) and <name>.tokens.npy
// (int64 [steps, batch]).
'use strict';
const fs = require('fs');
const path = require('path');

const ROOT = path.resolve(__dirname, '..', '..');
const { writeNpy } = require(path.join(ROOT, 'scripts', 'parity', 'npy.js'));
const ort = require(path.join(ROOT, '.peers', 'node_modules', 'onnxruntime-node'));

// Prompts are token ids (tokenization has its own parity tests); lengths differ from the export's
// dummy sizes (batch 2, sequence 3, past 5) so a baked-in length would show.
function casesFor(vocab, steps) {
  const ids = (seed, n) => Array.from({ length: n }, (_, i) => (seed * 7919 + i * 104729) % Math.min(vocab, 20000) + 3);
  return [
    { name: 'b1_short', prompts: [ids(1, 1)], steps },
    { name: 'b1_long', prompts: [ids(2, 11)], steps },
    { name: 'b2_mixed', prompts: [ids(3, 4), ids(4, 9)], steps },
  ];
}

async function runCase(session, layers, kvHeads, headDim, c) {
  const B = c.prompts.length;
  const S = Math.max(...c.prompts.map((p) => p.length));
  const tensor = (type, dims, data) => new ort.Tensor(type, data, dims);
  let ids = new BigInt64Array(B * S), mask = [], pos = new BigInt64Array(B * S);
  for (let b = 0; b < B; ++b) {
    const p = c.prompts[b], pad = S - p.length;
    const row = [];
    for (let s = 0; s < S; ++s) {
      const real = s >= pad;
      ids[b * S + s] = BigInt(real ? p[s - pad] : 0);
      row.push(real ? 1 : 0);
      pos[b * S + s] = BigInt(real ? s - pad : 1);
    }
    mask.push(row);
  }
  let past = [];
  for (let i = 0; i < 2 * layers; ++i) past.push(tensor('float32', [B, kvHeads, 0, headDim], new Float32Array(0)));
  let seq = S;
  const nextPos = c.prompts.map((p) => p.length);
  const logitsAll = [], tokensAll = [];
  let vocab = 0;
  for (let step = 0; step < c.steps; ++step) {
    const T = mask[0].length;
    const maskData = new BigInt64Array(B * T);
    for (let b = 0; b < B; ++b) for (let t = 0; t < T; ++t) maskData[b * T + t] = BigInt(mask[b][t]);
    const feeds = {
      input_ids: tensor('int64', [B, seq], ids),
      attention_mask: tensor('int64', [B, T], maskData),
    };
    if (session.inputNames.includes('position_ids')) feeds.position_ids = tensor('int64', [B, seq], pos);
    for (let i = 0; i < layers; ++i) {
      feeds[`past_key_values.${i}.key`] = past[2 * i];
      feeds[`past_key_values.${i}.value`] = past[2 * i + 1];
    }
    const merged = session.inputNames.includes('use_cache_branch');
    if (merged) feeds.use_cache_branch = tensor('bool', [1], Uint8Array.from([step > 0 ? 1 : 0]));
    const out = await session.run(feeds);
    const logits = out.logits;
    if (merged && step === 0) await checkDummyPastIgnored(session, feeds, layers, logits);
    vocab = Number(logits.dims[2]);
    const tokens = [];
    for (let b = 0; b < B; ++b) {
      const row = logits.data.subarray((b * seq + seq - 1) * vocab, (b * seq + seq) * vocab);
      logitsAll.push(Float32Array.from(row));
      let best = 0;
      for (let v = 1; v < vocab; ++v) if (row[v] > row[best]) best = v;  // first maximum, as argmax
      tokens.push(best);
    }
    tokensAll.push(tokens);
    past = [];
    for (let i = 0; i < layers; ++i) past.push(out[`present.${i}.key`], out[`present.${i}.value`]);
    ids = BigInt64Array.from(tokens.map(BigInt));
    pos = BigInt64Array.from(nextPos.map(BigInt));
    for (let b = 0; b < B; ++b) { mask[b].push(1); nextPos[b] += 1; }
    seq = 1;
  }
  const logits = new Float32Array(c.steps * B * vocab);
  logitsAll.forEach((row, i) => logits.set(row, i * vocab));
  return { logits, tokens: BigInt64Array.from(tokensAll.flat().map(BigInt)), vocab };
}

async function checkDummyPastIgnored(session, feeds, layers, logits) {
  const alt = { ...feeds };
  for (let i = 0; i < layers; ++i) {
    for (const kv of ['key', 'value']) {
      const d = feeds[`past_key_values.${i}.${kv}`].dims;
      const dims = [d[0], d[1], 1, d[3]];
      alt[`past_key_values.${i}.${kv}`] = new ort.Tensor('float32', new Float32Array(dims[0] * dims[1] * dims[3]), dims);
    }
  }
  const other = (await session.run(alt)).logits.data;
  for (let i = 0; i < other.length; ++i)
    if (other[i] !== logits.data[i]) throw new Error('the no-cache branch depends on the dummy past length');
}

// A model without position_ids (onnxruntime-genai's GroupQueryAttention derives positions from the
// mask's sum, so left padding would shift them): each prompt runs alone, as glassbox runs it, and the
// rows are put back together as one [steps, batch, vocab] case.
async function runCaseRows(session, layers, kvHeads, headDim, c) {
  if (session.inputNames.includes('position_ids') || c.prompts.length === 1) return runCase(session, layers, kvHeads, headDim, c);
  const rows = [];
  for (const p of c.prompts) rows.push(await runCase(session, layers, kvHeads, headDim, { ...c, prompts: [p] }));
  const B = c.prompts.length, vocab = rows[0].vocab;
  const logits = new Float32Array(c.steps * B * vocab), tokens = new BigInt64Array(c.steps * B);
  for (let t = 0; t < c.steps; ++t)
    rows.forEach((r, b) => {
      logits.set(r.logits.subarray(t * vocab, (t + 1) * vocab), (t * B + b) * vocab);
      tokens[t * B + b] = r.tokens[t];
    });
  return { logits, tokens, vocab };
}

// The decoder's sizes: config.json, or onnxruntime-genai's genai_config.json (model.decoder).
function decoderSizes(dir) {
  const genai = path.join(dir, 'genai_config.json');
  if (fs.existsSync(genai)) {
    const m = JSON.parse(fs.readFileSync(genai, 'utf8')).model;
    return { layers: m.decoder.num_hidden_layers, kvHeads: m.decoder.num_key_value_heads, headDim: m.decoder.head_size,
             vocab: m.vocab_size, file: path.join(dir, m.decoder.filename) };
  }
  const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
  const heads = config.num_attention_heads ?? config.n_head;
  return { layers: config.num_hidden_layers ?? config.n_layer, kvHeads: config.num_key_value_heads ?? heads,
           headDim: config.head_dim ?? (config.hidden_size ?? config.n_embd) / heads, vocab: config.vocab_size,
           file: modelFile(dir) };
}

// The decoder file glassbox picks, in the same order (src/generation/policy.cpp read_model_files).
function modelFile(dir) {
  for (const rel of ['model.onnx', 'onnx/model.onnx', 'decoder_model_merged.onnx', 'onnx/decoder_model_merged.onnx'])
    if (fs.existsSync(path.join(dir, rel))) return path.join(dir, rel);
  throw new Error(`${dir}: no decoder model file`);
}

async function main() {
  const [outDir, ...modelDirs] = process.argv.slice(2);
  if (!outDir || !modelDirs.length) {
    console.error('usage: decoder_reference.js OUT_DIR MODEL_DIR...');
    process.exit(2);
  }
  for (const dir of modelDirs) {
    const { layers, kvHeads, headDim, vocab: vocabSize, file } = decoderSizes(dir);
    // 151k-token vocabularies: 16 steps keep the reference files small; small vocabularies: 64.
    const steps = vocabSize > 100000 ? 16 : 64;
    const session = await ort.InferenceSession.create(file, {
      graphOptimizationLevel: 'disabled', intraOpNumThreads: 1, interOpNumThreads: 1,
    });
    const name = path.basename(path.resolve(dir));
    const out = path.join(outDir, name);
    fs.mkdirSync(out, { recursive: true });
    const cases = casesFor(vocabSize, steps);
    for (const c of cases) {
      const r = await runCaseRows(session, layers, kvHeads, headDim, c);
      writeNpy(path.join(out, `${c.name}.logits.npy`), 'float32', [c.steps, c.prompts.length, r.vocab], r.logits);
      writeNpy(path.join(out, `${c.name}.tokens.npy`), 'int64', [c.steps, c.prompts.length], r.tokens);
      console.log(`${name} ${c.name}: ${c.steps} steps, tokens ${Array.from(r.tokens.slice(0, 8)).join(' ')} ...`);
    }
    fs.writeFileSync(path.join(out, 'cases.json'), JSON.stringify(cases));
    await session.release();
  }
}

module.exports = { runCase };  // tests/server/generation_peer_test.js runs the same greedy loop

if (require.main === module) main().catch((e) => { console.error(e.stack || e); process.exit(1); });
