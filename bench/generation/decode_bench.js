#!/usr/bin/env node
// Generation benchmark (issue 28, never CI): greedy decode of the same prompt token ids in three engines,
//   glassbox      `glassbox serve MODEL_DIR --threads T`, warmed up, the prompts as token ids to /v1/completions
//                 (its own timings: ttft_ms = admission to first token, per_token_ms = the decode steps after it),
//                 peak RSS of the server (VmHWM)
//   ort           onnxruntime-node 1.30 on the same model.onnx, a plain greedy loop feeding present -> past
//                 (what a user writes by hand), in this process after one warm-up generation
//   transformers  @huggingface/transformers 4.3.2 pipeline('text-generation')'s model.generate (do_sample false, same
//                 max_new_tokens; batch 1 only), TTFT from its streamer's first token
// Prompts: tests/data/tokenizer/corpus text cut to exactly P tokens with the HF `tokenizers` peer (the model's own
// tokenizer.json), distinct per batch row, all rows the same length (no padding in any engine). Before timing,
// every engine's greedy tokens are compared with glassbox's (the same work is being timed); a difference is printed
// and the case is marked.
// Usage: node bench/generation/decode_bench.js GLASSBOX_BINARY MODEL_DIR [--threads 2] [--new-tokens 64]
//        [--cases 1x32,1x512,8x32] [--peers ort,transformers] [--reps 3]
// Prints one JSON line per engine and case, then a Markdown table (decode tokens/s per sequence and aggregate,
// TTFT, peak RSS) with ratios glassbox / peer.
'use strict';
const path = require('path');
const { PEERS, ort, makePrompts, startGlassbox, stopProcess, modelShape, ortGreedy } = require('./common');

const tk = require(path.join(PEERS, 'tokenizers'));

function parseArgs(argv) {
  const [glassbox, dir, ...rest] = argv;
  if (!glassbox || !dir) throw new Error('usage: decode_bench.js GLASSBOX_BINARY MODEL_DIR [--threads T] ...');
  const o = { glassbox, dir: path.resolve(dir), threads: 2, newTokens: 64, cases: '1x32,1x512,8x32',
    peers: 'ort,transformers', reps: 3 };
  for (let i = 0; i < rest.length; i += 2) {
    const k = rest[i].replace(/^--/, '').replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    if (!(k in o)) throw new Error(`unknown option ${rest[i]}`);
    o[k] = typeof o[k] === 'number' ? Number(rest[i + 1]) : rest[i + 1];
  }
  o.cases = o.cases.split(',').map((c) => { const [b, p] = c.split('x').map(Number); return { batch: b, prompt: p }; });
  o.peers = o.peers.split(',').filter(Boolean);
  return o;
}

// glassbox as deployed: `glassbox serve MODEL_DIR --threads T`, warmed up with one request, then the case's B
// prompts sent at once as token ids to POST /v1/completions (temperature 0: greedy; continuous batching decodes
// them together). Timings are the server's own (`glassbox.timings`: ttft_ms from admission, per_token_ms).
async function completion(server, ids, newTokens) {
  const r = await fetch(`${server.base}/v1/completions`, { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ model: server.model, prompt: ids, max_tokens: newTokens, temperature: 0 }) });
  const j = await r.json();
  if (r.status !== 200) throw new Error(`glassbox ${r.status}: ${JSON.stringify(j).slice(0, 500)}`);
  return j.glassbox;
}

async function runGlassbox(server, prompts, newTokens) {
  const res = await Promise.all(prompts.map((p) => completion(server, p.ids, newTokens)));
  return { tokens: res.map((g) => g.ids), prompt_tokens: res.map((g) => g.usage.prompt_tokens),
    ttft_ms: Math.max(...res.map((g) => g.timings.ttft_ms)), per_token_ms: Math.max(...res.map((g) => g.timings.per_token_ms)) };
}

async function transformersGreedy(generator, TextStreamer, prompt, newTokens) {
  // The pipeline's own model.generate on the pipeline's tokenization (ids compared as ids, not re-tokenized text);
  // TTFT = the streamer's first generated token (token_callback_function fires per token, before any decoding).
  const inputs = await generator.tokenizer(prompt.text, { add_special_tokens: false });
  let first = 0;
  const t0 = performance.now();
  const streamer = new TextStreamer(generator.tokenizer, { skip_prompt: true, callback_function: () => {}, token_callback_function: () => {
    if (!first) first = performance.now() - t0;
  } });
  const out = await generator.model.generate({ ...inputs, max_new_tokens: newTokens, do_sample: false, streamer });
  const elapsed = performance.now() - t0;
  const ids = out.tolist()[0].map(Number).slice(prompt.ids.length);
  return { tokens: [ids], ttft_ms: first, per_token_ms: (elapsed - first) / Math.max(1, ids.length - 1) };
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };

function summarize(engine, c, runs, o) {
  const ttft = median(runs.map((r) => r.ttft_ms));
  const per = median(runs.map((r) => r.per_token_ms));
  return { engine, batch: c.batch, prompt: c.prompt, new_tokens: o.newTokens, threads: o.threads, reps: runs.length,
    ttft_ms: ttft, per_token_ms: per, tokens_per_s_per_seq: 1000 / per, tokens_per_s_aggregate: c.batch * 1000 / per,
    peak_rss_mb: runs[0].peak_rss_mb, same_tokens_as_glassbox: runs[0].same };
}

function sameTokens(a, b) {
  return a.length === b.length && a.every((row, i) => row.length === b[i].length && row.every((t, j) => t === b[i][j]));
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const tokenizer = tk.Tokenizer.fromFile(path.join(o.dir, 'tokenizer.json'));
  const shape = modelShape(o.dir);
  const results = [];
  const gbTokens = new Map();  // each case's glassbox tokens, the peers' reference
  let session = null;
  let tjs = null;
  const server = await startGlassbox(o);
  server.model = (await (await fetch(`${server.base}/v1/models`)).json()).data[0].id;
  const warm = await makePrompts(tokenizer, 8, 1);
  await runGlassbox(server, warm, 2);
  for (const c of o.cases) {
    const prompts = await makePrompts(tokenizer, c.prompt, c.batch);
    const gb = [];
    for (let r = 0; r < o.reps; r++) gb.push(await runGlassbox(server, prompts, o.newTokens));
    gb.forEach((g) => { g.same = true; });
    if (gb[0].prompt_tokens.some((n) => n !== c.prompt)) throw new Error(`glassbox saw ${gb[0].prompt_tokens} prompt tokens, the peer ${c.prompt}`);
    results.push(summarize('glassbox', c, gb, o));
    gbTokens.set(`${c.batch}x${c.prompt}`, gb[0].tokens);
    if (o.peers.includes('ort')) {
      if (!session) {
        session = await ort.InferenceSession.create(path.join(o.dir, 'model.onnx'),
          { intraOpNumThreads: o.threads, interOpNumThreads: 1, graphOptimizationLevel: 'all' });
        await ortGreedy(session, shape, prompts.slice(0, 1), 2);  // warm-up
      }
      const runs = [];
      for (let r = 0; r < o.reps; r++) runs.push(await ortGreedy(session, shape, prompts, o.newTokens));
      runs.forEach((x) => { x.same = sameTokens(x.tokens, gb[0].tokens); x.peak_rss_mb = process.resourceUsage().maxRSS / 1024; });
      results.push(summarize('ort', c, runs, o));
    }
  }
  // transformers.js last: once its pipeline has run, this Node process keeps burning ~1.2 cores while idle (measured:
  // 4.9 CPU-seconds in 4 idle seconds, also after dispose()), which halved the glassbox and ORT figures measured
  // after it on this 2-core machine. Plain onnxruntime-node sessions idle at 0.
  for (const c of o.cases) {
    const prompts = await makePrompts(tokenizer, c.prompt, c.batch);
    if (o.peers.includes('transformers') && c.batch === 1) {
      if (!tjs) {
        const T = await import(path.join(PEERS, '@huggingface', 'transformers', 'dist', 'transformers.node.mjs'));
        T.env.allowRemoteModels = false;
        T.env.localModelPath = path.dirname(o.dir);
        const generator = await T.pipeline('text-generation', path.basename(o.dir), {
          dtype: 'fp32', session_options: { intraOpNumThreads: o.threads, interOpNumThreads: 1 } });
        tjs = { generator, TextStreamer: T.TextStreamer };
        await transformersGreedy(generator, T.TextStreamer, prompts[0], 2);  // warm-up
      }
      const runs = [];
      for (let r = 0; r < o.reps; r++) runs.push(await transformersGreedy(tjs.generator, tjs.TextStreamer, prompts[0], o.newTokens));
      runs.forEach((x) => { x.same = sameTokens(x.tokens, gbTokens.get(`${c.batch}x${c.prompt}`)); x.peak_rss_mb = process.resourceUsage().maxRSS / 1024; });
      results.push(summarize('transformers', c, runs, o));
    }
  }
  const rss = await stopProcess(server);
  results.filter((r) => r.engine === 'glassbox').forEach((r) => { r.peak_rss_mb = rss; });
  for (const r of results) console.log(JSON.stringify(r));
  console.log('\n| case | engine | decode tok/s per seq | aggregate tok/s | TTFT ms | peak RSS MB | same tokens | glassbox decode ratio | glassbox TTFT ratio |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    const g = results.find((x) => x.engine === 'glassbox' && x.batch === r.batch && x.prompt === r.prompt);
    const dec = r.engine === 'glassbox' ? '' : (g.tokens_per_s_per_seq / r.tokens_per_s_per_seq).toFixed(2) + '×';
    const tt = r.engine === 'glassbox' ? '' : (g.ttft_ms / r.ttft_ms).toFixed(2) + '×';
    console.log(`| ${r.batch}×${r.prompt} → ${r.new_tokens} | ${r.engine} | ${r.tokens_per_s_per_seq.toFixed(2)} | ` +
      `${r.tokens_per_s_aggregate.toFixed(2)} | ${r.ttft_ms.toFixed(0)} | ${r.peak_rss_mb.toFixed(0)} | ${r.same_tokens_as_glassbox} | ${dec} | ${tt} |`);
  }
  console.log('(peak RSS: glassbox = the server process over all cases; peers = this Node process, all peers so far)');
}

main().catch((e) => { console.error(e.stack || e); process.exit(1); });
