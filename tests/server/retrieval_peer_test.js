#!/usr/bin/env node
// OpenAI `dimensions` through the `openai` npm client (the peer that encodes the request and decodes
// the base64 answer): glassbox serves scripts/make_st_models.py's sentence-transformers directories and
// every vector the client returns must equal the reference (torch + numpy, sentence-transformers'
// semantics: keep the first N values, then normalize) within 1e-4; the client's default base64 and
// "float" give the same; an out-of-range dimensions is the client's BadRequestError on param "dimensions".
// Usage: node tests/server/retrieval_peer_test.js GLASSBOX_BINARY ST_DIR   (ST_DIR: make_st_models.py --out)
'use strict';
const fs = require('fs');
const path = require('path');

const ROOT = path.resolve(__dirname, '..', '..');
const peer = require(path.join(ROOT, 'tests', 'common', 'peer_helpers.js'));
const openai = require(path.join(ROOT, '.peers', 'node_modules', 'openai'));
const OpenAI = openai.default;
const [GLASSBOX, ST] = process.argv.slice(2);
const checker = peer.checker();
const check = checker.check;

const reference = (name) => JSON.parse(fs.readFileSync(path.join(ST, `${name}.reference.json`), 'utf8')).cases;

async function main() {
  if (!GLASSBOX || !ST) throw new Error('usage: retrieval_peer_test.js GLASSBOX_BINARY ST_DIR');
  const names = ['st_cls_normalize', 'st_dense_normalize'];
  const server = await peer.startServer(GLASSBOX, names.map((n) => path.join(ST, n)));
  try {
    const client = new OpenAI({ baseURL: `${server.base}/v1`, apiKey: 'not-needed', maxRetries: 0, timeout: 120000 });
    for (const [model, n] of [['st_cls_normalize', 8], ['st_dense_normalize', 6]]) {
      const ref = reference(model).filter((c) => c.dimensions === n);
      for (const encoding_format of [undefined, 'float']) {
        const r = await client.embeddings.create({ model, input: ref.map((c) => c.text), dimensions: n, encoding_format });
        const worst = Math.max(...r.data.map((d, i) => peer.maxRelDiff(Array.from(d.embedding), ref[i].vector)));
        check(r.data.length === ref.length && r.data.every((d, i) => d.index === i && d.embedding.length === n) && worst <= 1e-4,
              `${model} dimensions ${n} (${encoding_format || 'base64, the client default'}): ${ref.length} vectors = the ` +
              `reference (truncate, then normalize), max diff ${worst.toExponential(2)}`);
      }
      const whole = await client.embeddings.create({ model, input: ref[0].text, encoding_format: 'float' });
      check(whole.data[0].embedding.length > n, `${model} without dimensions: the whole vector (${whole.data[0].embedding.length})`);
    }
    try {
      await client.embeddings.create({ model: 'st_cls_normalize', input: 'a fox', dimensions: 33 });
      check(false, 'dimensions 33 of 32: no exception');
    } catch (e) {
      check(e instanceof openai.BadRequestError && e.status === 400 && e.param === 'dimensions' && /dimensions 33/.test(e.message),
            `dimensions 33 of 32: BadRequestError on param dimensions (${e.constructor.name} ${e.status} ${e.message})`);
    }
  } catch (e) {
    check(false, `retrieval peer: ${e.message.slice(0, 400)}`);
  } finally {
    await peer.stopServer(server);
  }
  checker.finish();
}

main().catch((e) => { console.error(e.stack || e); process.exit(1); });
