#!/usr/bin/env node
// Refusals through the `openai` npm client (the peer that parses OpenAI's error shape): each
// refusal of /v1/embeddings must surface as the client's typed exception with OpenAI's fields
// (status, error.type, error.code, error.param), as docs/serving.md "Errors" declares:
//   400 BadRequestError, 404 NotFoundError, 429 RateLimitError (+ Retry-After), 413 APIError,
//   503/504 InternalServerError.
// Usage: node tests/server/refusal_peer_test.js GLASSBOX_BINARY
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn, spawnSync } = require('child_process');

const ROOT = path.resolve(__dirname, '..', '..');
const peer = require(path.join(ROOT, 'tests', 'common', 'peer_helpers.js'));
const openai = require(path.join(ROOT, '.peers', 'node_modules', 'openai'));
const OpenAI = openai.default;
const GLASSBOX = process.argv[2];
const checker = peer.checker();
const check = checker.check;

async function expectRefusal(what, promise, Cls, status, type, code, param) {
  try {
    await promise;
    check(false, `${what}: no exception`);
    return null;
  } catch (e) {
    const ok = e instanceof Cls && e.status === status && e.type === type && e.code === code &&
      (param === undefined || e.param === param) && typeof e.error?.message === 'string' && e.error.message.length > 0;
    check(ok, `${what}: ${Cls.name} ${status} type=${type} code=${code}` +
      (ok ? '' : ` (got ${e.constructor.name} ${e.status} ${JSON.stringify(e.error)})`));
    return e;
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const slowBody = (n) => JSON.stringify({ inputs: [{ name: 'n', datatype: 'INT64', shape: [], data: [n] }] });

async function main() {
  if (!GLASSBOX) throw new Error('usage: refusal_peer_test.js GLASSBOX_BINARY');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox_refusal_peer_'));
  let server;
  try {
    const made = spawnSync('/usr/bin/python3', [path.join(__dirname, 'make_server_models.py'), tmp, ROOT], { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(made.stderr);
    server = await peer.startServer(GLASSBOX, [path.join(tmp, 'slow'), path.join(tmp, 'langid_embed'), '--max-queue', '1',
      '--max-texts-per-request', '4', '--max-body-bytes', '8192']);
    const client = new OpenAI({ baseURL: `${server.base}/v1`, apiKey: 'not-needed', maxRetries: 0, timeout: 120000 });
    const model = 'langid_embed';
    const ok = await client.embeddings.create({ model, input: 'hello', encoding_format: 'float' });
    check(ok.data.length === 1, 'a valid request succeeds');
    await expectRefusal('5 texts over max_texts_per_request', client.embeddings.create({ model, input: ['a', 'b', 'c', 'd', 'e'] }),
      openai.BadRequestError, 400, 'invalid_request_error', 'invalid_request', 'input');
    await expectRefusal('dimensions over the vector size', client.embeddings.create({ model, input: 'a', dimensions: 100000 }),
      openai.BadRequestError, 400, 'invalid_request_error', 'invalid_request', 'dimensions');
    await expectRefusal('dimensions 0', client.embeddings.create({ model, input: 'a', dimensions: 0 }),
      openai.BadRequestError, 400, 'invalid_request_error', 'invalid_request', 'dimensions');
    await expectRefusal('unknown model', client.embeddings.create({ model: 'nope', input: 'a' }),
      openai.NotFoundError, 404, 'invalid_request_error', 'model_not_found', 'model');
    await expectRefusal('body over max_body_bytes (the HTTP layer)', client.embeddings.create({ model, input: 'x'.repeat(10000) }),
      openai.APIError, 413, 'invalid_request_error', 'too_large');

    // The slow model holds the one dispatcher; one queued embedding (1 ms deadline) fills the
    // model's queue (max_queue 1): the next is a 429, the queued one a 504 once the slow run ends.
    const url = `${server.base}/v2/models/slow/infer`;
    let t0 = Date.now();
    await fetch(url, { method: 'POST', body: slowBody(20000) });
    const perStep = Math.max((Date.now() - t0) / 20000, 1e-7);
    const n = Math.round(Math.min(Math.max(2000 / perStep, 1000), 5e6));
    const slow = fetch(url, { method: 'POST', body: slowBody(n) });
    await sleep(300);
    const queued = expectRefusal('deadline passed in the queue',
      client.embeddings.create({ model, input: 'a' }, { headers: { 'X-Request-Timeout-Ms': '1' } }),
      openai.InternalServerError, 504, 'server_error', 'deadline_exceeded');
    await sleep(300);
    const e = await expectRefusal('queue full', client.embeddings.create({ model, input: 'a' }),
      openai.RateLimitError, 429, 'rate_limit_error', 'queue_full');
    check(e && Number(e.headers?.get('retry-after')) >= 1, 'queue full: Retry-After >= 1');
    await queued;
    await slow;

    const unload = await fetch(`${server.base}/v2/repository/models/${model}/unload`, { method: 'POST' });
    check(unload.status === 200, 'unload');
    await expectRefusal('unloaded model', client.embeddings.create({ model, input: 'a' }),
      openai.InternalServerError, 503, 'server_error', 'model_unavailable', 'model');
  } finally {
    if (server) await peer.stopServer(server);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  checker.finish();
}

main().catch((e) => { console.error(e.stack || e); process.exit(1); });
