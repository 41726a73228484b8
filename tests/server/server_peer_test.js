#!/usr/bin/env node
// The server against real clients and the peers, on a real `glassbox serve` on 127.0.0.1:
//   1. the `openai` npm client (6.10.0, baseURL pointed at the server) on /v1/embeddings, with its
//      default encoding_format "base64" and with "float": vectors equal ORT run on the ids of the HF
//      `tokenizers` peer (langid_embed: langid's logits as a 24-d vector, pooling none).
//   2. OIP JSON and binary tensors on bert_tiny_op17 (torch.onnx export, 3 int64 inputs): every
//      output within 1e-4 of onnxruntime-node on the same inputs.
//   3. OIP text inference on langid: logits within 1e-4 of ORT on the peer tokenizer's ids.
// Usage: node tests/server/server_peer_test.js GLASSBOX_BINARY
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn, spawnSync } = require('child_process');

const ROOT = path.resolve(__dirname, '..', '..');
const peer = require(path.join(ROOT, 'tests', 'common', 'peer_helpers.js'));
const PEERS = path.join(ROOT, '.peers', 'node_modules');
const OpenAI = require(path.join(PEERS, 'openai')).default;
const tk = require(path.join(PEERS, 'tokenizers'));
const { runOrt } = require(path.join(ROOT, 'scripts', 'parity', 'run_ort.js'));

const TOLERANCE = 1e-4;
const GLASSBOX = process.argv[2];
const checker = peer.checker();
const { maxRelDiff } = peer;
const check = checker.check;

async function peerIds(tokenizerFile, text) {
  const t = tk.Tokenizer.fromFile(tokenizerFile);
  const e = await t.encode(text, null);
  return e.getIds();
}

async function ortLogits(model, ids) {
  const n = ids.length;
  const outs = await runOrt(model, {
    input_ids: { type: 'int64', dims: [1, n], data: BigInt64Array.from(ids.map(BigInt)) },
    attention_mask: { type: 'int64', dims: [1, n], data: BigInt64Array.from(ids.map(() => 1n)) },
  });
  return Array.from(outs.find((o) => o.name === 'logits').data);
}

async function openaiCase(base, langid) {
  const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'not-needed', maxRetries: 0, timeout: 60000 });
  const texts = ['The weather is lovely today.', 'Dziękuję bardzo, to był wspaniały wieczór.', '今日はとても暑いですね。'];
  const b64 = await client.embeddings.create({ model: 'langid_embed', input: texts });
  const flt = await client.embeddings.create({ model: 'langid_embed', input: texts, encoding_format: 'float' });
  check(b64.data.length === 3 && flt.data.length === 3, 'openai client: 3 embeddings back (base64 default and float)');
  check(b64.model === 'langid_embed' && b64.usage.prompt_tokens > 0, 'openai client: model and usage fields');
  let worst = 0;
  for (let i = 0; i < texts.length; ++i) {
    const ref = await ortLogits(path.join(langid, 'model.onnx'), await peerIds(path.join(langid, 'tokenizer.json'), texts[i]));
    worst = Math.max(worst, maxRelDiff(b64.data[i].embedding, ref), maxRelDiff(flt.data[i].embedding, ref));
    check(b64.data[i].index === i, `openai client: index ${i}`);
  }
  check(worst <= TOLERANCE, `openai client: vectors within ${TOLERANCE} of ORT on peer ids (max rel ${worst.toExponential(2)})`);
  let refused = false;
  try {
    await client.embeddings.create({ model: 'langid_embed', input: 'a '.repeat(400) });
  } catch (e) {
    refused = e.status === 413 && /max_length 256/.test(e.message) && /truncate/.test(e.message);
  }
  check(refused, 'openai client: an overlong input is a 413 naming the limit and "truncate"');
}

function bertInputs(n) {
  let seed = 7;
  const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed; };
  const ids = Array.from({ length: n }, () => rnd() % 1000);
  return {
    input_ids: ids,
    attention_mask: Array.from({ length: n }, (_, i) => (i < n - 2 ? 1 : 0)),
    token_type_ids: Array.from({ length: n }, (_, i) => (i < n / 2 ? 0 : 1)),
  };
}

async function oipTensorCase(base, model) {
  const n = 12;
  const inp = bertInputs(n);
  const meta = await (await fetch(`${base}/v2/models/bert`)).json();
  const names = meta.inputs.map((i) => i.name);
  const ortIn = {};
  for (const name of names) ortIn[name] = { type: 'int64', dims: [1, n], data: BigInt64Array.from(inp[name].map(BigInt)) };
  const ref = await runOrt(model, ortIn);
  // JSON tensors
  const body = { id: 'bert-1', inputs: names.map((name) => ({ name, datatype: 'INT64', shape: [1, n], data: inp[name] })) };
  const r = await fetch(`${base}/v2/models/bert/infer`, { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
  const j = await r.json();
  check(r.status === 200 && j.id === 'bert-1', `OIP JSON: 200 and id echoed (${r.status})`);
  for (const o of ref) {
    const got = (j.outputs || []).find((x) => x.name === o.name);
    const diff = got ? maxRelDiff(got.data, o.data) : Infinity;
    check(got && JSON.stringify(got.shape) === JSON.stringify(o.dims) && diff <= TOLERANCE,
          `OIP JSON: output ${o.name} ${JSON.stringify(o.dims)} within ${TOLERANCE} of ORT (${diff.toExponential(2)})`);
  }
  // Binary tensors in and out
  const blobs = names.map((name) => Buffer.from(BigInt64Array.from(inp[name].map(BigInt)).buffer));
  const header = Buffer.from(JSON.stringify({
    inputs: names.map((name, k) => ({ name, datatype: 'INT64', shape: [1, n], parameters: { binary_data_size: blobs[k].length } })),
    outputs: ref.map((o) => ({ name: o.name, parameters: { binary_data: true } })),
  }));
  const rb = await fetch(`${base}/v2/models/bert/infer`, {
    method: 'POST', body: Buffer.concat([header, ...blobs]),
    headers: { 'Inference-Header-Content-Length': String(header.length), 'Content-Type': 'application/octet-stream' },
  });
  const raw = Buffer.from(await rb.arrayBuffer());
  const hl = Number(rb.headers.get('inference-header-content-length'));
  const hj = JSON.parse(raw.subarray(0, hl).toString());
  let at = hl;
  for (const o of hj.outputs) {
    const size = o.parameters.binary_data_size;
    const bytes = raw.subarray(at, at + size);
    at += size;
    const vals = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + size));
    const diff = maxRelDiff(vals, ref.find((x) => x.name === o.name).data);
    check(diff <= TOLERANCE, `OIP binary: output ${o.name} within ${TOLERANCE} of ORT (${diff.toExponential(2)})`);
  }
}

async function oipTextCase(base, langid) {
  const texts = ['Guten Morgen, wie geht es dir?', 'Obrigado pela ajuda, até amanhã!'];
  const body = { inputs: [{ name: 'text', datatype: 'BYTES', shape: [2], data: texts }], outputs: [{ name: 'logits' }] };
  const j = await (await fetch(`${base}/v2/models/langid/infer`, { method: 'POST', body: JSON.stringify(body) })).json();
  const logits = j.outputs[0].data;
  let worst = 0;
  for (let i = 0; i < texts.length; ++i) {
    const ref = await ortLogits(path.join(langid, 'model.onnx'), await peerIds(path.join(langid, 'tokenizer.json'), texts[i]));
    worst = Math.max(worst, maxRelDiff(logits.slice(i * 24, (i + 1) * 24), ref));
  }
  check(worst <= TOLERANCE, `OIP text: langid logits within ${TOLERANCE} of ORT on peer ids (max rel ${worst.toExponential(2)})`);
}

async function main() {
  if (!GLASSBOX) throw new Error('usage: server_peer_test.js GLASSBOX_BINARY');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox_server_peer_'));
  let server;
  try {
    const made = spawnSync('/usr/bin/python3', [path.join(__dirname, 'make_server_models.py'), tmp, ROOT], { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(made.stderr);
    const bertModel = path.join(ROOT, 'tests', 'data', 'generated', 'bert_tiny_op17.onnx');
    fs.mkdirSync(path.join(tmp, 'bert'));
    fs.copyFileSync(bertModel, path.join(tmp, 'bert', 'model.onnx'));
    const langid = path.join(ROOT, 'models', 'langid');
    server = await peer.startServer(GLASSBOX, [langid, path.join(tmp, 'langid_embed'), path.join(tmp, 'bert')]);
    await openaiCase(server.base, langid);
    await oipTensorCase(server.base, bertModel);
    await oipTextCase(server.base, langid);
  } finally {
    if (server) await peer.stopServer(server);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  checker.finish();
}

main().catch((e) => { console.error(e.stack || e); process.exit(1); });
