#!/usr/bin/env node
// transformers.js pipeline('text-classification') on the texts of a JSONL file ({"text": ...} per
// line), one text at a time, as `glassbox classify --timing` does: prints the same JSON summary
// (load_ms, p50/p95/p99 per text, peak RSS) on stderr.
// Usage: node bench/server/tjs_classify.js MODEL_DIR TEXTS.jsonl THREADS [DTYPE]
// DTYPE: fp32 (MODEL_DIR/onnx/model.onnx, default) or q8 (MODEL_DIR/onnx/model_quantized.onnx).
'use strict';
const fs = require('fs');
const path = require('path');

const PEERS = path.resolve(__dirname, '..', '..', '.peers', 'node_modules');
const [dir, file, threads, dtype = 'fp32'] = process.argv.slice(2);

(async () => {
  const texts = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l).text);
  const t0 = performance.now();
  const { pipeline, env } = await import(path.join(PEERS, '@huggingface', 'transformers', 'dist', 'transformers.node.mjs'));
  env.allowRemoteModels = false;
  env.localModelPath = path.dirname(path.resolve(dir));
  const classify = await pipeline('text-classification', path.basename(path.resolve(dir)), {
    dtype, session_options: { intraOpNumThreads: Number(threads), interOpNumThreads: 1 },
  });
  const load = performance.now() - t0;
  const per = [];
  for (const t of texts) {
    const c0 = performance.now();
    const r = await classify(t);
    per.push(performance.now() - c0);
    process.stdout.write(JSON.stringify({ label: r[0].label, score: r[0].score }) + '\n');
  }
  per.sort((a, b) => a - b);
  const q = (p) => per[Math.min(per.length - 1, Math.floor(p * per.length))];
  console.error('transformers.js timing: ' + JSON.stringify({
    texts: per.length, load_ms: load, p50_ms: q(0.5), p95_ms: q(0.95), p99_ms: q(0.99),
    mean_ms: per.reduce((a, b) => a + b, 0) / per.length, peak_rss_mb: process.resourceUsage().maxRSS / 1024,
  }));
})().catch((e) => { console.error(e.stack || e); process.exit(1); });
