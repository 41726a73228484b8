#!/usr/bin/env node
// BGE-M3-shaped directories (scripts/make_m3_model.py: ONE ONNX graph with the outputs dense_vecs, sparse_vecs
// and colbert_vecs as the community BGE-M3 exports name them; glassbox.json "heads" declares which is which):
//   1. `glassbox embed DIR` (batches of 3: padding is exercised; every head from one engine run per batch) gives
//      the references the script computed with torch + numpy following FlagEmbedding's BGEM3 semantics (a batch
//      of one): dense cosine >= 0.99999, sparse indices exact and values <= 1e-5 relative (peer.maxRelDiff),
//      multi-vector the same number of rows, each with cosine >= 0.99999; token ids equal to the HF `tokenizers`
//      peer's. For "m3" the graph normalizes (declared normalize false), for "m3_raw" glassbox does (true).
//   2. --heads picks heads (the values equal to the full run's); explain shows each head with its source.
//   3. loud paths: an undeclared field, an unknown head or field, an output the model lacks or named twice, a
//      skip token the tokenizer lacks, "heads" beside "sparse", --heads naming an undeclared head, --heads on
//      a model without heads, --dimensions / --output / --sparse on a heads model.
//   4. served (one `glassbox serve` of m3, m3_raw and two copies declaring fewer heads): POST /embed gives the dense
//      head, /embed_sparse the sparse head, /embed_multi the multi_vector head (sent together: they may share a
//      batch), each against the same references and criteria; OIP metadata lists one set of tensors per head and
//      one infer gives every head from ONE engine run (glassbox_compute_duration_seconds_count + 1); a head the
//      model does not declare is refused by name (/embed_sparse without a sparse head, /embed without a dense one).
// Usage: node tests/pipeline/m3_test.js GLASSBOX_BINARY M3_DIR   (M3_DIR: make_m3_model.py --out)
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

const ROOT = path.resolve(__dirname, '..', '..');
const peer = require(path.join(ROOT, 'tests', 'common', 'peer_helpers.js'));
const tk = require(path.join(ROOT, '.peers', 'node_modules', 'tokenizers'));

const MAX_REL = 1e-5;
const MIN_COS = 0.99999;
const [GLASSBOX, DIR] = process.argv.slice(2);
const checker = peer.checker();
const check = checker.check;
const glassbox = (args) => peer.runCli(GLASSBOX, args);

function cosine(a, b) {
  let dot = 0, aa = 0, bb = 0;
  for (let i = 0; i < a.length; ++i) { dot += a[i] * b[i]; aa += a[i] * a[i]; bb += b[i] * b[i]; }
  return dot / Math.sqrt(aa * bb);
}

function editJson(file, fn) {
  const j = JSON.parse(fs.readFileSync(file, 'utf8'));
  fn(j);
  fs.writeFileSync(file, JSON.stringify(j, null, 2));
}

async function compareReferences(name) {
  const dir = path.join(DIR, name);
  const ref = JSON.parse(fs.readFileSync(path.join(DIR, `${name}.reference.json`), 'utf8'));
  const tok = tk.Tokenizer.fromFile(path.join(dir, 'tokenizer.json'));
  const r = glassbox(['embed', dir, '--batch', '3', ...ref.texts.map((c) => c.text)]);
  if (r.status !== 0) { check(false, `${name}: glassbox embed failed: ${r.stderr.trim()}`); return null; }
  const got = peer.jsonl(r.stdout);
  let dense = 1, multi = 1, sparse = got.length === ref.texts.length ? 0 : Infinity, rows = true, idsOk = true, nnz = 0;
  for (let i = 0; i < ref.texts.length && i < got.length; ++i) {
    const g = got[i], c = ref.texts[i];
    dense = Math.min(dense, cosine(g.dense, c.dense));
    const same = JSON.stringify(g.sparse.indices) === JSON.stringify(c.sparse.indices);
    sparse = Math.max(sparse, same ? peer.maxRelDiff(g.sparse.values, c.sparse.values) : Infinity);
    nnz += g.sparse.indices.length;
    rows = rows && g.multi_vector.length === c.colbert.length;
    for (let k = 0; k < Math.min(g.multi_vector.length, c.colbert.length); ++k) multi = Math.min(multi, cosine(g.multi_vector[k], c.colbert[k]));
    const ids = (await tok.encode(c.text)).getIds();
    idsOk = idsOk && JSON.stringify(ids) === JSON.stringify(c.ids) && g.tokens === ids.length;
  }
  check(idsOk, `${name}: token ids of the tokenizers peer are the reference's, token counts equal`);
  check(dense >= MIN_COS, `${name}: ${got.length} dense vectors, lowest cosine to the reference ${dense.toFixed(7)}`);
  check(sparse <= MAX_REL && nnz > 0, `${name}: lexical weights (${nnz} entries), indices exact, values maxRelDiff ${sparse.toExponential(2)}`);
  check(rows && multi >= MIN_COS, `${name}: multi-vector rows as many as the reference's, lowest cosine ${multi.toFixed(7)}`);
  return got;
}

function explainRows(dir) {
  const r = glassbox(['explain', dir, '--json']);
  if (r.status !== 0) return { error: r.stderr };
  return Object.fromEntries(JSON.parse(r.stdout).pipeline.map((row) => [row.field, row]));
}

function checkHeadsFlag(full) {
  const dir = path.join(DIR, 'm3');
  const ref = JSON.parse(fs.readFileSync(path.join(DIR, 'm3.reference.json'), 'utf8'));
  const r = glassbox(['embed', dir, '--batch', '3', '--heads', 'sparse,dense', ...ref.texts.map((c) => c.text)]);
  const got = r.status === 0 ? peer.jsonl(r.stdout) : [];
  check(got.length === ref.texts.length && got.every((g, i) => !('multi_vector' in g) &&
        JSON.stringify(g.sparse) === JSON.stringify(full[i].sparse) && JSON.stringify(g.dense) === JSON.stringify(full[i].dense)),
        `--heads sparse,dense: only those heads, equal to the full run's ${r.stderr.trim()}`);
  const rows = explainRows(dir);
  check(!rows.error && rows.output.value.startsWith('heads: dense+sparse+multi_vector') && rows.output.source === 'glassbox.json heads' &&
        rows.head_dense.value.includes("'dense_vecs'") && rows.head_dense.source === 'glassbox.json heads.dense.output' &&
        rows.head_sparse.value.includes("'sparse_vecs'") && rows.head_sparse_skip_tokens.value.includes('[UNK] (1)') &&
        rows.head_sparse_pooling.source === 'glassbox.json heads.sparse.pooling' &&
        rows.head_multi_vector.value.includes("'colbert_vecs'") && rows.head_multi_vector_first_position.value.startsWith('1 ') &&
        rows.head_multi_vector_normalize.source === 'glassbox.json heads.multi_vector.normalize' &&
        rows.unpadded_batches.value === 'false' && !rows.pooling,
        `explain m3: every head with its source ${JSON.stringify(rows).slice(0, 500)}`);
}

function checkRefusals() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox_m3_'));
  const refused = (what, args, needles) => {
    const r = glassbox(args);
    check(r.status !== 0 && r.stdout === '' && needles.every((n) => r.stderr.includes(n)), `${what}: ${r.stderr.trim()}`);
  };
  const m3 = path.join(DIR, 'm3');
  let n = 0;
  const mutated = (fn) => {
    const d = path.join(tmp, `d${n++}`);
    fs.cpSync(m3, d, { recursive: true });
    editJson(path.join(d, 'glassbox.json'), fn);
    return d;
  };
  try {
    refused('an undeclared field', ['embed', mutated((j) => { delete j.heads.multi_vector.normalize; }), 'hi'],
      ["'heads.multi_vector.normalize' is not declared"]);
    refused('an unknown head', ['embed', mutated((j) => { j.heads.reranker = { output: 'x' }; }), 'hi'], ["'heads.reranker' is unknown"]);
    refused('an unknown field', ['embed', mutated((j) => { j.heads.dense.pooling = 'cls'; }), 'hi'], ["'heads.dense.pooling' is unknown"]);
    refused('an output the model lacks', ['embed', mutated((j) => { j.heads.dense.output = 'sentence_embedding'; }), 'hi'],
      ["'sentence_embedding' is not an output", 'dense_vecs, sparse_vecs, colbert_vecs']);
    refused('one output for two heads', ['embed', mutated((j) => { j.heads.multi_vector.output = 'sparse_vecs'; }), 'hi'],
      ["'sparse_vecs' is declared for heads.sparse and heads.multi_vector"]);
    refused('a rank the head cannot read', ['embed', mutated((j) => { j.heads.dense.output = 'colbert_vecs'; delete j.heads.multi_vector; }), 'hi'],
      ["heads.dense.output 'colbert_vecs' has rank 3"]);
    refused('a skip token the tokenizer lacks', ['embed', mutated((j) => { j.heads.sparse.skip_tokens.push('</s>'); }), 'hi'],
      ["'</s>' is not a token"]);
    refused('a pooling not computed', ['embed', mutated((j) => { j.heads.sparse.pooling = 'sum'; }), 'hi'], ["heads.sparse.pooling 'sum'"]);
    refused('heads beside sparse', ['embed', mutated((j) => { j.sparse = { pooling: 'max' }; }), 'hi'], ['"heads" and "sparse"']);
    refused('--heads naming an undeclared head', ['embed', mutated((j) => { delete j.heads.sparse; }), '--heads', 'sparse', 'hi'],
      ["head 'sparse' is not one the model declares", 'dense,multi_vector']);
    refused('--dimensions on a heads model', ['embed', m3, '--dimensions', '4', 'hi'], ['--dimensions', '--heads']);
    refused('--output on a heads model', ['embed', m3, '--output', path.join(tmp, 'x.npy'), 'hi'], ['--output', '--heads']);
    refused('--sparse on a heads model', ['embed', m3, '--sparse', 'hi'], ['--sparse', '--heads']);
    const plain = mutated((j) => { delete j.heads; j.pooling = 'none'; });  // dense_vecs read as a pooled output
    refused('--heads on a model without heads', ['embed', plain, '--heads', 'dense', 'hi'], ['declares no heads']);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

async function post(base, route, body) {
  const r = await fetch(`${base}${route}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch (e) { /* checked by the caller */ }
  return { status: r.status, json, text };
}

function sparseOk(got, c) {  // got: {indices, values}
  const same = JSON.stringify(got.indices) === JSON.stringify(c.sparse.indices);
  return same ? peer.maxRelDiff(got.values, c.sparse.values) : Infinity;
}

function multiOk(rows, c) {  // rows: [[...] per kept token]; the lowest cosine, -Infinity when the counts differ
  if (!Array.isArray(rows) || rows.length !== c.colbert.length) return -Infinity;
  let worst = 1;
  for (let k = 0; k < rows.length; ++k) worst = Math.min(worst, cosine(rows[k], c.colbert[k]));
  return worst;
}

// Engine runs of `model` so far (the histogram of one engine run per batch, docs/metrics.md).
async function engineRuns(base, model) {
  const text = await (await fetch(`${base}/metrics`)).text();
  const m = text.match(new RegExp(`^glassbox_compute_duration_seconds_count\\{[^}]*model="${model}"[^}]*\\} (\\d+)`, 'm'));
  return m ? Number(m[1]) : NaN;
}

// /embed_sparse and /embed_multi answer the sparse and multi_vector heads, checked against the references.
async function serveHeadRoutes(base, name) {
  const ref = JSON.parse(fs.readFileSync(path.join(DIR, `${name}.reference.json`), 'utf8')).texts;
  const inputs = ref.map((c) => c.text);
  // Sent together: the two heads jobs may share one engine run (a batch of heads jobs gives every head).
  const [sp, mv] = await Promise.all([post(base, '/embed_sparse', { inputs, model: name }), post(base, '/embed_multi', { inputs, model: name })]);
  let worstSparse = sp.status === 200 && sp.json.length === ref.length ? 0 : Infinity, nnz = 0;
  for (let i = 0; worstSparse < Infinity && i < ref.length; ++i) {
    const got = { indices: sp.json[i].map((e) => e.index), values: sp.json[i].map((e) => e.value) };
    worstSparse = Math.max(worstSparse, sparseOk(got, ref[i]));
    nnz += got.indices.length;
  }
  check(worstSparse <= MAX_REL && nnz > 0, `${name}: POST /embed_sparse gives the sparse head (${nnz} entries), indices exact, ` +
        `values maxRelDiff ${worstSparse.toExponential(2)} ${sp.status === 200 ? '' : sp.text.slice(0, 200)}`);
  let worstMulti = mv.status === 200 && mv.json.length === ref.length ? 1 : -Infinity;
  for (let i = 0; worstMulti > -Infinity && i < ref.length; ++i) worstMulti = Math.min(worstMulti, multiOk(mv.json[i], ref[i]));
  check(worstMulti >= MIN_COS, `${name}: POST /embed_multi gives the multi_vector head, rows as the reference's, lowest cosine ` +
        `${worstMulti.toFixed(7)} ${mv.status === 200 ? '' : mv.text.slice(0, 200)}`);
}

// OIP: the metadata names one set of tensors per head; one infer (one engine run) gives every head.
async function serveOip(base) {
  const ref = JSON.parse(fs.readFileSync(path.join(DIR, 'm3.reference.json'), 'utf8')).texts;
  const meta = await (await fetch(`${base}/v2/models/m3`)).json();
  const listed = (meta.outputs || []).map((o) => `${o.name}:${o.datatype}:${o.shape.length}`).join(' ');
  check(listed === 'dense:FP32:2 sparse_indices:INT64:2 sparse_values:FP32:1 multi_vector:FP32:2 multi_vector_rows:INT64:1',
        `OIP metadata of a heads model: one set of outputs per head (${listed})`);
  const before = await engineRuns(base, 'm3');
  const body = { inputs: [{ name: 'text', datatype: 'BYTES', shape: [ref.length], data: ref.map((c) => c.text) }] };
  const r = await post(base, '/v2/models/m3/infer', body);
  const after = await engineRuns(base, 'm3');
  const outs = Object.fromEntries(((r.json && r.json.outputs) || []).map((o) => [o.name, o]));
  check(r.status === 200 && after - before === 1, `OIP infer of ${ref.length} texts: every head from one engine run (runs ${before} -> ${after}) ${r.status === 200 ? '' : r.text.slice(0, 200)}`);
  if (r.status !== 200 || !outs.dense || !outs.sparse_indices || !outs.sparse_values || !outs.multi_vector || !outs.multi_vector_rows) {
    check(false, `OIP infer gives the tensors dense, sparse_indices, sparse_values, multi_vector, multi_vector_rows: ${Object.keys(outs)}`);
    return;
  }
  const dim = outs.dense.shape[1];
  let dense = outs.dense.shape[0] === ref.length ? 1 : -Infinity;
  for (let i = 0; dense > -Infinity && i < ref.length; ++i) dense = Math.min(dense, cosine(outs.dense.data.slice(i * dim, (i + 1) * dim), ref[i].dense));
  check(dense >= MIN_COS, `OIP "dense" [${outs.dense.shape}]: lowest cosine to the reference ${dense.toFixed(7)}`);
  const pairs = outs.sparse_indices.data, values = outs.sparse_values.data;
  let sparse = pairs.length === 2 * values.length ? 0 : Infinity;
  for (let i = 0; sparse < Infinity && i < ref.length; ++i) {
    const got = { indices: [], values: [] };
    for (let k = 0; k < values.length; ++k) if (pairs[2 * k] === i) { got.indices.push(pairs[2 * k + 1]); got.values.push(values[k]); }
    sparse = Math.max(sparse, sparseOk(got, ref[i]));
  }
  check(sparse <= MAX_REL, `OIP "sparse_indices" [${outs.sparse_indices.shape}] + "sparse_values": per text indices exact, values maxRelDiff ${sparse.toExponential(2)}`);
  const counts = outs.multi_vector_rows.data, w = outs.multi_vector.shape[1];
  let multi = counts.length === ref.length && counts.reduce((a, b) => a + b, 0) === outs.multi_vector.shape[0] ? 1 : -Infinity;
  for (let i = 0, at = 0; multi > -Infinity && i < ref.length; at += counts[i], ++i) {
    const rows = [];
    for (let k = 0; k < counts[i]; ++k) rows.push(outs.multi_vector.data.slice((at + k) * w, (at + k + 1) * w));
    multi = Math.min(multi, multiOk(rows, ref[i]));
  }
  check(multi >= MIN_COS, `OIP "multi_vector" [${outs.multi_vector.shape}] split by "multi_vector_rows": lowest cosine ${multi.toFixed(7)}`);
  const one = await post(base, '/v2/models/m3/infer', { ...body, outputs: [{ name: 'sparse_values' }] });
  check(one.status === 200 && one.json.outputs.length === 1 && JSON.stringify(one.json.outputs[0].data) === JSON.stringify(values),
        `OIP infer asking for "sparse_values" alone gives it, equal to the full answer's ${one.text.slice(0, 120)}`);
}

// A head the model does not declare is refused by name, with the declared heads and their routes.
async function serveRefusals(base) {
  let r = await post(base, '/embed_sparse', { inputs: 'a fox', model: 'm3_no_sparse' });
  check(r.status === 400 && r.text.includes('no sparse head') && r.text.includes('dense, multi_vector') && r.text.includes('/embed_multi'),
        `/embed_sparse on a heads model without a sparse head is refused by name (${r.text.slice(0, 300)})`);
  r = await post(base, '/embed_multi', { inputs: 'a fox', model: 'm3_no_sparse' });
  check(r.status === 200 && r.json.length === 1 && r.json[0].length > 0, `/embed_multi on m3_no_sparse still answers (${r.text.slice(0, 80)})`);
  const meta = await (await fetch(`${base}/v2/models/m3_no_sparse`)).json();
  check((meta.outputs || []).map((o) => o.name).join(',') === 'dense,multi_vector,multi_vector_rows',
        `OIP metadata of m3_no_sparse lists only the declared heads (${JSON.stringify(meta.outputs)})`);
  r = await post(base, '/embed', { inputs: 'a fox', model: 'm3_multi_only' });
  check(r.status === 400 && r.text.includes('no dense head') && r.text.includes('/embed_multi (multi_vector)'),
        `/embed on a heads model without a dense head is refused by name (${r.text.slice(0, 300)})`);
  r = await post(base, '/embed_all', { inputs: 'a fox', model: 'm3' });  // its rank-3 outputs are heads, not a hidden state
  check(r.status === 400 && r.text.includes('declares heads') && r.text.includes('multi_vector'),
        `/embed_all on a heads model is refused, naming its per-token head (${r.text.slice(0, 200)})`);
  r = await post(base, '/embed_multi', { inputs: 'a fox', model: 'm3', query: true });
  check(r.status === 400 && r.json.error.includes('"query": true'), `/embed_multi "query": true on a heads model is refused (${r.text.slice(0, 200)})`);
}

// The server gives every declared head: /embed the dense one, /embed_sparse the sparse one, /embed_multi the
// multi_vector one, OIP infer all of them; each from the scheduler's one engine run per batch.
async function serveChecks() {
  const ref = JSON.parse(fs.readFileSync(path.join(DIR, 'm3.reference.json'), 'utf8')).texts;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox_m3_serve_'));
  const variant = (name, fn) => {
    const d = path.join(tmp, name);
    fs.cpSync(path.join(DIR, 'm3'), d, { recursive: true });
    editJson(path.join(d, 'glassbox.json'), fn);
    return d;
  };
  const dirs = [path.join(DIR, 'm3'), path.join(DIR, 'm3_raw'), variant('m3_no_sparse', (j) => { delete j.heads.sparse; }),
    variant('m3_multi_only', (j) => { delete j.heads.sparse; delete j.heads.dense; })];
  let server;
  try {
    server = await peer.startServer(GLASSBOX, dirs, { timeoutMs: 120000 });
    const r = await post(server.base, '/embed', { inputs: ref.map((c) => c.text), model: 'm3' });
    let worst = r.status === 200 && r.json.length === ref.length ? 1 : -Infinity;
    for (let i = 0; worst > -Infinity && i < ref.length; ++i) worst = Math.min(worst, cosine(r.json[i], ref[i].dense));
    check(worst >= MIN_COS, `POST /embed on a heads model: the dense head, lowest cosine ${worst.toFixed(7)} ${r.status === 200 ? '' : r.text.slice(0, 200)}`);
    await serveHeadRoutes(server.base, 'm3');
    await serveHeadRoutes(server.base, 'm3_raw');
    await serveOip(server.base);
    await serveRefusals(server.base);
  } catch (e) {
    check(false, `serve m3: ${e.message.slice(0, 400)}`);
  } finally {
    if (server) await peer.stopServer(server);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

async function main() {
  if (!GLASSBOX || !DIR) throw new Error('usage: m3_test.js GLASSBOX_BINARY M3_DIR');
  const full = await compareReferences('m3');
  await compareReferences('m3_raw');
  if (full) checkHeadsFlag(full);
  checkRefusals();
  await serveChecks();
  checker.finish();
}

main().catch((e) => { console.error(e.stack || e); process.exit(1); });
