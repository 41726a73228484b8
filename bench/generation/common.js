// Shared by the generation benchmarks (bench/generation/decode_bench.js, bench/server/gen_bench.js): prompts of an
// exact token length, the plain onnxruntime-node greedy loop (the peer a user writes by hand), and starting /
// stopping a `glassbox serve` process. Never used by CI.
'use strict';
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');

const ROOT = path.resolve(__dirname, '..', '..');
const PEERS = path.join(ROOT, '.peers', 'node_modules');
const ort = require(path.join(PEERS, 'onnxruntime-node'));

// Distinct prompts of exactly n tokens: consecutive corpus words until the count is reached, re-tokenized as text
// so that glassbox (which takes text) sees the same ids.
async function makePrompts(tokenizer, n, count) {
  const corpusDir = path.join(ROOT, 'tests', 'data', 'tokenizer', 'corpus');
  const words = fs.readdirSync(corpusDir).sort().map((f) => fs.readFileSync(path.join(corpusDir, f), 'utf8'))
    .join(' ').split(/\s+/).filter((w) => /^[A-Za-z][A-Za-z,.;:'-]*$/.test(w));
  const out = [];
  let start = 0;
  while (out.length < count) {
    let text = '';
    let ids = [];
    for (let i = start; ids.length < n && i < words.length; i++) {
      const next = text ? `${text} ${words[i]}` : words[i];
      const e = await tokenizer.encode(next, null, { addSpecialTokens: false });
      if (e.getIds().length > n) break;
      text = next;
      ids = e.getIds();
    }
    if (ids.length === n) out.push({ text, ids: Array.from(ids) });
    start += n + 1;  // the next row starts past this one's words (n tokens take at most n words): distinct rows
    if (start > words.length) throw new Error(`cannot cut ${count} prompts of ${n} tokens from the corpus`);
  }
  return out;
}

function startGlassbox(o, extraArgs = []) {
  return new Promise((resolve, reject) => {
    const proc = spawn(o.glassbox, ['serve', o.dir, '--host', '127.0.0.1', '--port', '0', '--threads', String(o.threads), ...extraArgs],
      { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`glassbox did not start:\n${log}`)); }, 600000);
    proc.stderr.on('data', (d) => {
      log += d.toString();
      const m = log.match(/listening on 127\.0\.0\.1:(\d+)/);
      if (m && log.includes('server ready')) {
        clearTimeout(timer);
        resolve({ proc, base: `http://127.0.0.1:${m[1]}`, log: () => log });
      }
    });
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`glassbox exited (${code}):\n${log}`)); });
  });
}

async function stopProcess(server) {
  // peak RSS (VmHWM) of the server over every case, read before it is stopped
  const status = fs.readFileSync(`/proc/${server.proc.pid}/status`, 'utf8');
  const hwm = Number((status.match(/VmHWM:\s+(\d+) kB/) || [])[1]) / 1024;
  const done = new Promise((resolve) => server.proc.on('close', resolve));
  server.proc.kill('SIGTERM');
  await done;
  return hwm;
}

function modelShape(dir) {
  const c = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
  return { layers: c.num_hidden_layers, kvHeads: c.num_key_value_heads, headDim: c.head_dim || c.hidden_size / c.num_attention_heads };
}

// The plain greedy loop: prefill with a zero-length past, then one token per run feeding present -> past. Rows of a
// batch have the same prompt length (no padding). onToken(step, ids) is called as each step's tokens are chosen;
// with eos (a Set of ids, batch 1) the loop ends after an EOS token, as a server would.
async function ortGreedy(session, shape, prompts, newTokens, { onToken = null, eos = null } = {}) {
  const B = prompts.length;
  const S = prompts[0].ids.length;
  const i64 = (dims, arr) => new ort.Tensor('int64', BigInt64Array.from(arr.map(BigInt)), dims);
  let feeds = { input_ids: i64([B, S], prompts.flatMap((p) => p.ids)), attention_mask: i64([B, S], new Array(B * S).fill(1)),
    position_ids: i64([B, S], prompts.flatMap(() => [...Array(S).keys()])) };
  for (let l = 0; l < shape.layers; l++) for (const kv of ['key', 'value']) {
    feeds[`past_key_values.${l}.${kv}`] = new ort.Tensor('float32', new Float32Array(0), [B, shape.kvHeads, 0, shape.headDim]);
  }
  const tokens = prompts.map(() => []);
  const t0 = performance.now();
  let ttft = 0;
  let total = S;
  for (let step = 0; step < newTokens; step++) {
    const out = await session.run(feeds);
    const logits = out.logits;
    const [, seq, vocab] = logits.dims;
    const next = [];
    for (let b = 0; b < B; b++) {
      const base = (b * seq + seq - 1) * vocab;
      let best = 0;
      for (let v = 1; v < vocab; v++) if (logits.data[base + v] > logits.data[base + best]) best = v;
      next.push(best);
      tokens[b].push(best);
    }
    if (step === 0) ttft = performance.now() - t0;
    if (onToken) onToken(step, next);
    if (eos && B === 1 && eos.has(next[0])) break;
    total += 1;
    const nf = { input_ids: i64([B, 1], next), attention_mask: i64([B, total], new Array(B * total).fill(1)),
      position_ids: i64([B, 1], new Array(B).fill(total - 1)) };
    for (let l = 0; l < shape.layers; l++) for (const kv of ['key', 'value']) {
      nf[`past_key_values.${l}.${kv}`] = out[`present.${l}.${kv}`];
    }
    feeds = nf;
  }
  const elapsed = performance.now() - t0;
  return { tokens, ttft_ms: ttft, per_token_ms: (elapsed - ttft) / Math.max(1, tokens[0].length - 1) };
}

module.exports = { ROOT, PEERS, ort, makePrompts, startGlassbox, stopProcess, modelShape, ortGreedy };
