#!/usr/bin/env node
// The rerank benchmark's peers, written the way their documentation shows a cross-encoder being run, answering
// TEI's POST /rerank {"query", "texts"} with [{"index", "score"}] best first (score = sigmoid of the logit, the
// activation the model's config.json records):
//   transformers  a Node `http` server around transformers.js: AutoTokenizer(query × n, {text_pair: texts,
//                 padding, truncation}) and AutoModelForSequenceClassification on the whole request as one batch
//   ort           a Node `http` server around onnxruntime-node + the HF `tokenizers` binding: the (query, text)
//                 pairs encoded and padded to the longest, one session.run per request
// Both use intra-op threads = THREADS. Usage: node bench/server/rerank_peers.js transformers|ort MODEL_DIR PORT THREADS
// Prints "listening on 127.0.0.1:PORT" once the model is loaded. Loopback only.
'use strict';
const http = require('http');
const path = require('path');

const ROOT = path.resolve(__dirname, '..', '..');
const PEERS = path.join(ROOT, '.peers', 'node_modules');
const [kind, dir, port, threads] = process.argv.slice(2);
const sigmoid = (x) => 1 / (1 + Math.exp(-x));
const ranked = (logits) => logits.map((l, index) => ({ index, score: sigmoid(l) })).sort((a, b) => b.score - a.score || a.index - b.index);

async function makeHandler() {
  const sessionOptions = { intraOpNumThreads: Number(threads), interOpNumThreads: 1 };
  if (kind === 'transformers') {
    const { AutoTokenizer, AutoModelForSequenceClassification, env } =
      await import(path.join(PEERS, '@huggingface', 'transformers', 'dist', 'transformers.node.mjs'));
    env.allowRemoteModels = false;
    env.localModelPath = path.dirname(path.resolve(dir)) + path.sep;
    const name = path.basename(path.resolve(dir));
    const tokenizer = await AutoTokenizer.from_pretrained(name);
    const model = await AutoModelForSequenceClassification.from_pretrained(name, { dtype: 'fp32', session_options: sessionOptions });
    return async (query, texts) => {
      const inputs = tokenizer(new Array(texts.length).fill(query), { text_pair: texts, padding: true, truncation: true });
      const { logits } = await model(inputs);
      return ranked(Array.from(logits.data));
    };
  }
  const ort = require(path.join(PEERS, 'onnxruntime-node'));
  const tk = require(path.join(PEERS, 'tokenizers'));
  const tok = tk.Tokenizer.fromFile(path.join(dir, 'tokenizer.json'));
  tok.setTruncation(512, { strategy: 'OnlySecond' });
  const session = await ort.InferenceSession.create(path.join(dir, 'onnx', 'model.onnx'), sessionOptions);
  return async (query, texts) => {
    const enc = await Promise.all(texts.map((t) => tok.encode(query, t)));
    const n = Math.max(...enc.map((e) => e.getIds().length));  // padded to the longest pair (pad id 0, mask 0)
    const feed = (get) => {
      const a = new BigInt64Array(enc.length * n);
      enc.forEach((e, r) => get(e).forEach((v, c) => { a[r * n + c] = BigInt(v); }));
      return new ort.Tensor('int64', a, [enc.length, n]);
    };
    const out = await session.run({ input_ids: feed((e) => e.getIds()), attention_mask: feed((e) => e.getAttentionMask()),
                                     token_type_ids: feed((e) => e.getTypeIds()) });
    return ranked(Array.from(out.logits.data));
  };
}

makeHandler().then((handle) => {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', async () => {
      try {
        const { query, texts } = JSON.parse(body);
        const r = await handle(query, texts);
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(r));
      } catch (e) {
        res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: String(e) }));
      }
    });
  });
  server.keepAliveTimeout = 60000;
  server.listen(Number(port), '127.0.0.1', () => console.error(`listening on 127.0.0.1:${server.address().port}`));
}).catch((e) => { console.error(e.stack || e); process.exit(1); });
