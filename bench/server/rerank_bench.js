#!/usr/bin/env node
// Rerank benchmark (issue #30, not CI): 1 query x 100 documents of 64-256 tokens (seeded, cut from
// tests/data/tokenizer/corpus, lengths measured with the HF `tokenizers` peer) through TEI's POST /rerank of
//   glassbox      `glassbox serve MODEL_DIR --threads THREADS`
//   transformers  bench/server/rerank_peers.js transformers (transformers.js, one padded batch per request)
//   ort           bench/server/rerank_peers.js ort (onnxruntime-node + tokenizers, one padded batch per request)
// one server at a time, same model directory (bench/server/make_rerank_model.py), closed loop with C clients for
// S seconds after a warm-up. Before timing, every peer's scores are compared with glassbox's (max |diff|, same
// order). Prints one JSON line per case, then a Markdown table with the ratios to the better peer.
// Usage: node bench/server/rerank_bench.js GLASSBOX_BINARY MODEL_DIR [SECONDS] [CLIENTS,...] [THREADS]
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');

const ROOT = path.resolve(__dirname, '..', '..');
const tk = require(path.join(ROOT, '.peers', 'node_modules', 'tokenizers'));
const [GLASSBOX, DIR, SECS = '20', CLIENTS = '1,4', THREADS = '2'] = process.argv.slice(2);
const QUERY = 'Which documents explain how the weather changes in the mountains during the winter?';

function rng(seed) {  // mulberry32
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function documents(n) {
  const tok = tk.Tokenizer.fromFile(path.join(DIR, 'tokenizer.json'));
  const corpus = path.join(ROOT, 'tests', 'data', 'tokenizer', 'corpus');
  const words = ['en.txt', 'de.txt', 'fr.txt'].flatMap((f) => fs.readFileSync(path.join(corpus, f), 'utf8').split(/\s+/).filter(Boolean));
  const r = rng(30);
  const count = async (t) => (await tok.encode(t, null, { addSpecialTokens: false })).getIds().length;
  const docs = [];
  while (docs.length < n) {
    const target = 64 + Math.floor(r() * 193);  // 64..256 tokens
    const start = Math.floor(r() * (words.length - 400));
    let lo = 1, hi = 300;  // fewest words reaching the target
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((await count(words.slice(start, start + mid).join(' '))) >= target) hi = mid; else lo = mid + 1;
    }
    const text = words.slice(start, start + lo).join(' ');
    const len = await count(text);
    if (len >= 64 && len <= 256) docs.push({ text, len });
  }
  return docs;
}

function start(name, cmd, args) {
  return new Promise((resolve, reject) => {
    const proc = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`${name} did not start:\n${log}`)); }, 300000);
    proc.stderr.on('data', (d) => {
      log += d.toString();
      const m = log.match(/listening on 127\.0\.0\.1:(\d+)/);
      if (m && (name !== 'glassbox' || log.includes('server ready'))) {
        clearTimeout(timer);
        resolve({ proc, url: `http://127.0.0.1:${m[1]}/rerank` });
      }
    });
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`${name} exited (${code}):\n${log}`)); });
  });
}

async function rerank(url, body) {
  const t0 = process.hrtime.bigint();
  const r = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
  const j = await r.json();
  if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(j).slice(0, 300)}`);
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, j };
}

async function closedLoop(url, body, clients, seconds) {
  const lat = [];
  const end = Date.now() + seconds * 1000;
  const t0 = Date.now();
  await Promise.all(Array.from({ length: clients }, async () => {
    while (Date.now() < end) lat.push((await rerank(url, body)).ms);
  }));
  const wall = (Date.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  const q = (p) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))];
  return { requests: lat.length, rps: lat.length / wall, p50_ms: q(0.5), p95_ms: q(0.95) };
}

async function main() {
  if (!GLASSBOX || !DIR) throw new Error('usage: rerank_bench.js GLASSBOX_BINARY MODEL_DIR [SECONDS] [CLIENTS,...] [THREADS]');
  const docs = await documents(100);
  const tokens = docs.map((d) => d.len);
  const body = JSON.stringify({ query: QUERY, texts: docs.map((d) => d.text) });
  console.log(`# ${docs.length} documents, ${Math.min(...tokens)}-${Math.max(...tokens)} tokens (mean ${(tokens.reduce((a, b) => a + b) / tokens.length).toFixed(0)}); ` +
              `load average before: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; ${SECS} s per case, threads ${THREADS}`);
  const servers = {
    glassbox: [GLASSBOX, ['serve', DIR, '--host', '127.0.0.1', '--port', '0', '--threads', THREADS]],
    transformers: [process.execPath, [path.join(__dirname, 'rerank_peers.js'), 'transformers', DIR, '0', THREADS]],
    ort: [process.execPath, [path.join(__dirname, 'rerank_peers.js'), 'ort', DIR, '0', THREADS]],
  };
  const results = {};
  let reference = null;
  for (const [name, [cmd, args]] of Object.entries(servers)) {
    const s = await start(name, cmd, args);
    try {
      const first = await rerank(s.url, body);
      for (let i = 0; i < 2; i++) await rerank(s.url, body);  // warm-up
      const byIndex = new Map(first.j.map((x) => [x.index, x.score]));
      if (!reference) reference = byIndex;
      let diff = 0;
      for (const [i, v] of reference) diff = Math.max(diff, Math.abs(v - byIndex.get(i)));
      const sameOrder = JSON.stringify(first.j.map((x) => x.index)) === JSON.stringify([...reference.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map((x) => x[0]));
      results[name] = {};
      for (const c of CLIENTS.split(',').map(Number)) {
        const r = await closedLoop(s.url, body, c, Number(SECS));
        results[name][c] = r;
        console.log(JSON.stringify({ server: name, clients: c, ...r, docs_per_s: r.rps * docs.length, max_score_diff_vs_glassbox: diff, same_order: sameOrder,
                                     load: os.loadavg()[0] }));
      }
    } finally {
      s.proc.kill('SIGTERM');
      await new Promise((r) => { const t = setTimeout(() => { s.proc.kill('SIGKILL'); r(); }, 20000); s.proc.on('exit', () => { clearTimeout(t); r(); }); });
    }
  }
  console.log(`\nload average after: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}\n`);
  console.log('| clients | glassbox req/s | transformers.js req/s | ORT+tokenizers req/s | glassbox p95 ms | transformers.js p95 | ORT p95 | throughput / better peer | p95 / better peer |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const c of Object.keys(results.glassbox)) {
    const g = results.glassbox[c], t = results.transformers[c], o = results.ort[c];
    const better = t.rps >= o.rps ? t : o;
    const p95 = Math.min(t.p95_ms, o.p95_ms);
    console.log(`| ${c} | ${g.rps.toFixed(2)} | ${t.rps.toFixed(2)} | ${o.rps.toFixed(2)} | ${g.p95_ms.toFixed(0)} | ${t.p95_ms.toFixed(0)} | ` +
                `${o.p95_ms.toFixed(0)} | ${(g.rps / better.rps).toFixed(2)}x | ${(g.p95_ms / p95).toFixed(2)}x |`);
  }
}

main().catch((e) => { console.error(e.stack || e); process.exit(1); });
