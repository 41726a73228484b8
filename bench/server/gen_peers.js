#!/usr/bin/env node
// The two peer servers of the serving-generation benchmark (issue 29, never CI), each what a JS team would deploy:
//   ort           onnxruntime-node 1.30 with a plain greedy loop per request (bench/generation/common.js ortGreedy),
//                 concurrent requests run their loops concurrently on one session
//   transformers  @huggingface/transformers 4.3.2, the text-generation pipeline's model.generate per request
//                 (do_sample false), tokens streamed from its streamer
// Both answer POST /v1/completions {prompt: [token ids], max_tokens, stream: true} with OpenAI-shaped SSE chunks
// (one per token, the token's text decoded by the model's tokenizer), a final chunk with finish_reason, a usage
// chunk, then [DONE] — the subset bench/server/gen_bench.js reads. Greedy, stopping at generation_config.json's EOS.
// Usage: node bench/server/gen_peers.js ort|transformers MODEL_DIR THREADS
// Prints "listening on 127.0.0.1:PORT" on stderr once the model is loaded.
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');
const { PEERS, ort, modelShape, ortGreedy } = require('../generation/common');

const [KIND, DIR, THREADS = '2'] = process.argv.slice(2);

function eosIds(dir) {
  const g = JSON.parse(fs.readFileSync(path.join(dir, 'generation_config.json'), 'utf8'));
  return new Set([].concat(g.eos_token_id ?? []));
}

async function makeOrt(dir) {
  const tk = require(path.join(PEERS, 'tokenizers'));
  const tokenizer = tk.Tokenizer.fromFile(path.join(dir, 'tokenizer.json'));
  const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'),
    { intraOpNumThreads: Number(THREADS), interOpNumThreads: 1, graphOptimizationLevel: 'all' });
  const shape = modelShape(dir);
  const eos = eosIds(dir);
  return async (ids, maxTokens, emit) => {
    const pending = [];
    const r = await ortGreedy(session, shape, [{ ids }], maxTokens, {
      eos, onToken: (step, next) => { pending.push(tokenizer.decode(next, true).then((t) => emit(next[0], t))); } });
    await Promise.all(pending);
    return r.tokens[0];
  };
}

async function makeTransformers(dir) {
  const T = await import(path.join(PEERS, '@huggingface', 'transformers', 'dist', 'transformers.node.mjs'));
  T.env.allowRemoteModels = false;
  T.env.localModelPath = path.dirname(path.resolve(dir));
  const generator = await T.pipeline('text-generation', path.basename(path.resolve(dir)), {
    dtype: 'fp32', session_options: { intraOpNumThreads: Number(THREADS), interOpNumThreads: 1 } });
  return async (ids, maxTokens, emit) => {
    const input = new T.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, ids.length]);
    const mask = new T.Tensor('int64', new BigInt64Array(ids.length).fill(1n), [1, ids.length]);
    const streamer = new T.TextStreamer(generator.tokenizer, { skip_prompt: true, callback_function: () => {},
      token_callback_function: (t) => emit(Number(t[0]), generator.tokenizer.decode(t.map(Number), { skip_special_tokens: true })) });
    const out = await generator.model.generate({ input_ids: input, attention_mask: mask, max_new_tokens: maxTokens,
      do_sample: false, streamer });
    return out.tolist()[0].map(Number).slice(ids.length);
  };
}

async function main() {
  if (!['ort', 'transformers'].includes(KIND) || !DIR) throw new Error('usage: gen_peers.js ort|transformers MODEL_DIR THREADS');
  const generate = KIND === 'ort' ? await makeOrt(DIR) : await makeTransformers(DIR);
  const eos = eosIds(DIR);
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', async () => {
      try {
        const q = JSON.parse(body);
        if (req.url !== '/v1/completions' || !Array.isArray(q.prompt)) throw new Error('POST /v1/completions {prompt: [ids]} only');
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        const send = (o) => res.write(`data: ${JSON.stringify(o)}\n\n`);
        const ids = await generate(q.prompt, q.max_tokens, (id, text) => send({ choices: [{ index: 0, text, finish_reason: null }] }));
        const reason = ids.length && eos.has(ids[ids.length - 1]) ? 'stop' : 'length';
        send({ choices: [{ index: 0, text: '', finish_reason: reason }], ids });
        send({ choices: [], usage: { prompt_tokens: q.prompt.length, completion_tokens: ids.length } });
        res.end('data: [DONE]\n\n');
      } catch (e) {
        res.writeHead(400, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { message: String(e.message || e) } }));
      }
    });
  });
  server.listen(0, '127.0.0.1', () => console.error(`${KIND} peer listening on 127.0.0.1:${server.address().port}`));
}

main().catch((e) => { console.error(e.stack || e); process.exit(1); });
