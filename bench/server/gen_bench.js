#!/usr/bin/env node
// Serving-generation benchmark (issue 29, never CI): C concurrent streams against one server at a time, each stream a
// closed loop of R greedy requests (POST /v1/completions, prompt = P token ids cut from tests/data/tokenizer/corpus
// with the model's tokenizer, max_tokens N, stream: true with include_usage), for C in 1, 4, 16, 64, against
//   glassbox      `glassbox serve MODEL_DIR --threads T` (continuous batching)
//   ort           bench/server/gen_peers.js ort (onnxruntime-node, a plain greedy loop per request)
//   transformers  bench/server/gen_peers.js transformers (transformers.js text-generation model.generate per request)
// Per request, measured by this client from the SSE stream as the metrics define them: TTFT = send -> first chunk
// carrying a choice, TPOT = (e2e - TTFT) / (completion tokens - 1); per case the aggregate tokens/s (all completion
// tokens / wall time), TTFT and TPOT p50/p99; per server its peak RSS (VmHWM). Before timing, each server answers the
// same warm-up prompt and their greedy token ids are compared (the same work is timed).
// Usage: node bench/server/gen_bench.js GLASSBOX_BINARY MODEL_DIR [--threads 2] [--streams 1,4,16,64] [--prompt 64]
//        [--max-tokens 64] [--requests 2] [--servers glassbox,ort,transformers]
'use strict';
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');
const { PEERS, makePrompts, startGlassbox, stopProcess } = require('../generation/common');

const tk = require(path.join(PEERS, 'tokenizers'));

function parseArgs(argv) {
  const [glassbox, dir, ...rest] = argv;
  if (!glassbox || !dir) throw new Error('usage: gen_bench.js GLASSBOX_BINARY MODEL_DIR [--threads T] ...');
  const o = { glassbox, dir: path.resolve(dir), threads: 2, streams: '1,4,16,64', prompt: 64, maxTokens: 64, requests: 2,
    servers: 'glassbox,ort,transformers' };
  for (let i = 0; i < rest.length; i += 2) {
    const k = rest[i].replace(/^--/, '').replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    if (!(k in o)) throw new Error(`unknown option ${rest[i]}`);
    o[k] = typeof o[k] === 'number' ? Number(rest[i + 1]) : rest[i + 1];
  }
  o.streams = o.streams.split(',').map(Number);
  o.servers = o.servers.split(',').filter(Boolean);
  return o;
}

function startPeer(kind, o) {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [path.join(__dirname, 'gen_peers.js'), kind, o.dir, String(o.threads)],
      { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`${kind} did not start:\n${log}`)); }, 600000);
    proc.stderr.on('data', (d) => {
      log += d.toString();
      const m = log.match(/listening on 127\.0\.0\.1:(\d+)/);
      if (m) { clearTimeout(timer); resolve({ proc, base: `http://127.0.0.1:${m[1]}`, log: () => log }); }
    });
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`${kind} exited (${code}):\n${log}`)); });
  });
}

// One streamed request; returns its client-side timings, completion tokens and (when the server sends them) ids.
async function streamed(server, ids, maxTokens) {
  const t0 = performance.now();
  const r = await fetch(`${server.base}/v1/completions`, { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ model: server.model, prompt: ids, max_tokens: maxTokens, temperature: 0, stream: true,
      stream_options: { include_usage: true } }) });
  if (r.status !== 200) throw new Error(`${server.name} ${r.status}: ${(await r.text()).slice(0, 500)}`);
  let ttft = 0;
  let usage = null;
  let tokenIds = null;
  let buf = '';
  const decoder = new TextDecoder();
  for await (const chunk of r.body) {
    buf += decoder.decode(chunk, { stream: true });
    let k;
    while ((k = buf.indexOf('\n\n')) >= 0) {
      const ev = buf.slice(0, k).replace(/^data: /, '');
      buf = buf.slice(k + 2);
      if (ev === '[DONE]') continue;
      const j = JSON.parse(ev);
      if (j.error) throw new Error(`${server.name}: ${JSON.stringify(j.error)}`);
      if (j.choices && j.choices.length && !ttft) ttft = performance.now() - t0;
      if (j.usage) usage = j.usage;
      if (j.ids) tokenIds = j.ids;                       // the peers' final chunk
      if (j.glassbox && j.glassbox.ids) tokenIds = j.glassbox.ids;  // glassbox's final chunk
    }
  }
  const e2e = performance.now() - t0;
  const n = usage ? usage.completion_tokens : 0;
  return { ttft_ms: ttft, e2e_ms: e2e, tokens: n, tpot_ms: n >= 2 ? (e2e - ttft) / (n - 1) : null, ids: tokenIds };
}

const quantile = (xs, p) => { const s = xs.filter((x) => x !== null).sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };

async function runCase(server, prompts, o, streams) {
  const per = [];
  const t0 = performance.now();
  await Promise.all(Array.from({ length: streams }, async (_, s) => {
    for (let r = 0; r < o.requests; r++) per.push(await streamed(server, prompts[(s * o.requests + r) % prompts.length].ids, o.maxTokens));
  }));
  const wall = (performance.now() - t0) / 1000;
  const tokens = per.reduce((a, b) => a + b.tokens, 0);
  return { server: server.name, streams, requests: per.length, tokens, wall_s: wall, tokens_per_s: tokens / wall,
    ttft_p50_ms: quantile(per.map((p) => p.ttft_ms), 0.5), ttft_p99_ms: quantile(per.map((p) => p.ttft_ms), 0.99),
    tpot_p50_ms: quantile(per.map((p) => p.tpot_ms), 0.5), tpot_p99_ms: quantile(per.map((p) => p.tpot_ms), 0.99) };
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const tokenizer = tk.Tokenizer.fromFile(path.join(o.dir, 'tokenizer.json'));
  const prompts = await makePrompts(tokenizer, o.prompt, Math.min(64, Math.max(...o.streams) * o.requests));
  console.log(`# ${prompts.length} prompts of ${o.prompt} tokens, max_tokens ${o.maxTokens}, ${o.requests} requests per stream, ` +
              `threads ${o.threads}; load average before: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  const rows = [];
  const rss = {};
  let reference = null;
  for (const name of o.servers) {
    const server = name === 'glassbox' ? await startGlassbox(o) : await startPeer(name, o);
    server.name = name;
    try {  // a case that throws still stops the server it started
      server.model = name === 'glassbox' ? (await (await fetch(`${server.base}/v1/models`)).json()).data[0].id : 'peer';
      const warm = await streamed(server, prompts[0].ids, o.maxTokens);
      if (!reference) reference = warm.ids;
      const same = JSON.stringify(warm.ids) === JSON.stringify(reference);
      console.log(JSON.stringify({ server: name, warmup_tokens: warm.tokens, same_tokens_as_first_server: same }));
      for (const c of o.streams) {
        const row = await runCase(server, prompts, o, c);
        row.same_tokens = same;
        console.log(JSON.stringify(row));
        rows.push(row);
      }
    } finally {
      rss[name] = await stopProcess(server);
    }
  }
  console.log('\n| streams | server | aggregate tok/s | TTFT p50 / p99 ms | TPOT p50 / p99 ms | peak RSS MB | glassbox tok/s ratio | glassbox TPOT p99 ratio | glassbox TTFT p50 ratio |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const g = rows.find((x) => x.server === 'glassbox' && x.streams === r.streams);
    const ratio = (a, b) => (g && r.server !== 'glassbox' ? (a / b).toFixed(2) + '×' : '');
    console.log(`| ${r.streams} | ${r.server} | ${r.tokens_per_s.toFixed(2)} | ${r.ttft_p50_ms.toFixed(0)} / ${r.ttft_p99_ms.toFixed(0)} | ` +
      `${r.tpot_p50_ms.toFixed(1)} / ${r.tpot_p99_ms.toFixed(1)} | ${rss[r.server].toFixed(0)} | ` +
      `${g ? ratio(g.tokens_per_s, r.tokens_per_s) : ''} | ${g ? ratio(g.tpot_p99_ms, r.tpot_p99_ms) : ''} | ${g ? ratio(g.ttft_p50_ms, r.ttft_p50_ms) : ''} |`);
  }
}

main().catch((e) => { console.error(e.stack || e); process.exit(1); });
