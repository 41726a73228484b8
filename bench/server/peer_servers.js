#!/usr/bin/env node
// The serving benchmark's peers, built the way people deploy them, answering POST /predict
// {"inputs": text} with [{"label", "score"}] like glassbox's TEI route:
//   transformers  a Node `http` server around transformers.js pipeline('text-classification')
//   ort           a Node `http` server around onnxruntime-node + the HF `tokenizers` binding,
//                 one session.run per request (intra-op threads = THREADS)
// Usage: node bench/server/peer_servers.js transformers|ort MODEL_DIR PORT THREADS
// Prints "listening on 127.0.0.1:PORT" once the model is loaded. Loopback only.
'use strict';
const http = require('http');
const path = require('path');

const ROOT = path.resolve(__dirname, '..', '..');
const PEERS = path.join(ROOT, '.peers', 'node_modules');
const [kind, dir, port, threads] = process.argv.slice(2);

function softmax(v) {
  const m = Math.max(...v);
  const e = v.map((x) => Math.exp(x - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
}

async function makeHandler() {
  const labels = ['NEGATIVE', 'POSITIVE'];
  if (kind === 'transformers') {
    const { pipeline, env } = await import(path.join(PEERS, '@huggingface', 'transformers', 'dist', 'transformers.node.mjs'));
    env.allowRemoteModels = false;
    env.localModelPath = path.dirname(path.resolve(dir));
    const classify = await pipeline('text-classification', path.basename(path.resolve(dir)), {
      dtype: 'fp32', session_options: { intraOpNumThreads: Number(threads), interOpNumThreads: 1 },
    });
    return async (text) => classify(text);
  }
  const ort = require(path.join(PEERS, 'onnxruntime-node'));
  const tk = require(path.join(PEERS, 'tokenizers'));
  const tok = tk.Tokenizer.fromFile(path.join(dir, 'tokenizer.json'));
  const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), {
    intraOpNumThreads: Number(threads), interOpNumThreads: 1,
  });
  return async (text) => {
    const e = await tok.encode(text, null);
    const n = e.getIds().length;
    const t = (a) => new ort.Tensor('int64', BigInt64Array.from(a.map(BigInt)), [1, n]);
    const out = await session.run({ input_ids: t(e.getIds()), attention_mask: t(e.getAttentionMask()), token_type_ids: t(e.getTypeIds()) });
    const p = softmax(Array.from(out.logits.data));
    const best = p[0] >= p[1] ? 0 : 1;
    return [{ label: labels[best], score: p[best] }];
  };
}

makeHandler().then((handle) => {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', async () => {
      try {
        const r = await handle(JSON.parse(body).inputs);
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(r));
      } catch (e) {
        res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: String(e.message || e) }));
      }
    });
  });
  server.keepAliveTimeout = 60000;
  server.listen(Number(port), '127.0.0.1', () => console.error(`listening on 127.0.0.1:${server.address().port}`));
}).catch((e) => { console.error(e.stack || e); process.exit(1); });
