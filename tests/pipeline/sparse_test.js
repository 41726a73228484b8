#!/usr/bin/env node
// Sparse (SPLADE) model directories (scripts/make_sparse_models.py: a BERT MLM exported with torch, modules.json
// MLMTransformer -> SpladePooling as sentence-transformers' SparseEncoder saves it, or a glassbox.json "sparse"
// declaration) read as declared:
//   1. `glassbox embed DIR` (batches of 3: padding is exercised) gives the reference sparse vectors the script
//      computed with torch + numpy following SpladePooling's semantics (batch of one): indices exact, values
//      <= 1e-5 relative (peer.maxRelDiff), for max/relu, sum/log1p_relu, a named prompt, and a declared top_k; token ids equal the
//      HF `tokenizers` peer's; --sparse on a sparse model is the same output.
//   2. explain: output / sparse_pooling / sparse_activation / sparse_top_k with their sources.
//   3. loud paths: --sparse on a dense model, --output and --dimensions on a sparse one, an unknown
//      SpladePooling field / pooling_strategy / activation, a SparseEncoder module glassbox does not run
//      (refused by name), an unknown glassbox.json sparse field.
// Usage: node tests/pipeline/sparse_test.js GLASSBOX_BINARY SPARSE_DIR   (SPARSE_DIR: make_sparse_models.py --out)
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

const ROOT = path.resolve(__dirname, '..', '..');
const peer = require(path.join(ROOT, 'tests', 'common', 'peer_helpers.js'));
const tk = require(path.join(ROOT, '.peers', 'node_modules', 'tokenizers'));

const MAX_REL = 1e-5;
const [GLASSBOX, DIR] = process.argv.slice(2);
const checker = peer.checker();
const check = checker.check;
const glassbox = (args) => peer.runCli(GLASSBOX, args);

function editJson(file, fn) {
  const j = JSON.parse(fs.readFileSync(file, 'utf8'));
  fn(j);
  fs.writeFileSync(file, JSON.stringify(j, null, 2));
}

function copyDir(src, dst, mutate) {
  fs.cpSync(src, dst, { recursive: true });
  if (mutate) mutate(dst);
  return dst;
}

// the values' difference by the project's parity criterion (peer.maxRelDiff: largest absolute difference over
// max(largest reference magnitude, 1), per vector) where the indices are equal; Infinity when they are not.
// (Per element it would not hold: an entry of 1e-3 comes from a logit of 1e-3 whose float32 rounding in two
// engines differs by ~1e-7 absolute, 1e-4 relative to itself.)
function compare(got, c) {
  if (JSON.stringify(got.indices) !== JSON.stringify(c.indices)) return Infinity;
  return peer.maxRelDiff(got.values, c.values);
}

async function compareReferences(name, extra = []) {
  const dir = path.join(DIR, name);
  const ref = JSON.parse(fs.readFileSync(path.join(DIR, `${name}.reference.json`), 'utf8'));
  const tok = tk.Tokenizer.fromFile(path.join(dir, 'tokenizer.json'));
  const groups = new Map();
  for (const c of ref.cases) {
    const key = c.prompt_name || '';
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(c);
  }
  for (const [prompt, cases] of groups) {
    const args = ['embed', dir, '--batch', '3', ...extra, ...(prompt ? ['--prompt-name', prompt] : []), ...cases.map((c) => c.text)];
    const r = glassbox(args);
    if (r.status !== 0) { check(false, `${name} ${prompt}: glassbox embed failed: ${r.stderr.trim()}`); continue; }
    const got = peer.jsonl(r.stdout);
    let worst = got.length === cases.length ? 0 : Infinity;
    let idsOk = true;
    let nnz = 0;
    for (let i = 0; i < cases.length && i < got.length; ++i) {
      worst = Math.max(worst, compare(got[i], cases[i]));
      nnz += got[i].indices.length;
      const ids = (await tok.encode(cases[i].full_text)).getIds();
      idsOk = idsOk && JSON.stringify(ids) === JSON.stringify(cases[i].ids) && got[i].tokens === ids.length;
    }
    check(idsOk, `${name} ${prompt || 'no prompt'}: token ids of the tokenizers peer are the reference's, token counts equal`);
    check(worst <= MAX_REL && nnz > 0,
          `${name} ${prompt || 'no prompt'} ${extra.join(' ')}: ${cases.length} sparse vectors (${nnz} entries), indices exact, values max relative difference (maxRelDiff) ${worst.toExponential(2)}`);
    if (ref.spec.top_k) check(got.every((g) => g.indices.length <= ref.spec.top_k), `${name}: at most top_k = ${ref.spec.top_k} entries`);
  }
}

function explainRows(dir) {
  const r = glassbox(['explain', dir, '--json']);
  if (r.status !== 0) return { error: r.stderr };
  return Object.fromEntries(JSON.parse(r.stdout).pipeline.map((row) => [row.field, row]));
}

async function main() {
  if (!GLASSBOX || !DIR) throw new Error('usage: sparse_test.js GLASSBOX_BINARY SPARSE_DIR');
  await compareReferences('splade_max');
  await compareReferences('splade_max', ['--sparse']);
  await compareReferences('splade_sum_log1p');
  await compareReferences('splade_declared');

  // 2. explain
  let rows = explainRows(path.join(DIR, 'splade_max'));
  check(!rows.error && rows.output.value === 'sparse' && rows.output.source.includes('MLMTransformer -> SpladePooling(1_SpladePooling)') &&
        rows.task.value === 'embed' && rows.sparse_pooling.value === 'max' &&
        rows.sparse_pooling.source.includes('1_SpladePooling/config.json pooling_strategy') &&
        rows.sparse_activation.value === 'relu' && rows.sparse_top_k.value === 'all nonzero' &&
        rows.model_file.value === 'onnx/model.onnx' && !rows.pooling && Object.values(rows).every((r) => !r.risk),
        `explain splade_max: the sparse head from modules.json and 1_SpladePooling ${JSON.stringify(rows).slice(0, 400)}`);
  rows = explainRows(path.join(DIR, 'splade_declared'));
  check(!rows.error && rows.output.source === 'glassbox.json sparse' && rows.sparse_top_k.value === '5' &&
        rows.sparse_top_k.source === 'glassbox.json sparse.top_k' && rows.sparse_pooling.source === 'glassbox.json sparse.pooling',
        `explain splade_declared: the glassbox.json declaration ${JSON.stringify(rows).slice(0, 300)}`);

  // 3. loud paths
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox_sparse_'));
  const refused = (what, args, needles) => {
    const r = glassbox(args);
    check(r.status !== 0 && r.stdout === '' && needles.every((n) => r.stderr.includes(n)), `${what}: ${r.stderr.trim()}`);
  };
  try {
    const max = path.join(DIR, 'splade_max');
    const dense = copyDir(path.join(DIR, 'splade_declared'), path.join(tmp, 'dense'), (d) => fs.rmSync(path.join(d, 'glassbox.json')));
    refused('--sparse on a dense model', ['embed', dense, '--sparse', 'hello'], ['dense vectors', '--sparse']);
    refused('--output on a sparse model', ['embed', max, '--output', path.join(tmp, 'x.npy'), 'hello'], ['--output', 'sparse']);
    refused('--dimensions on a sparse model', ['embed', max, '--dimensions', '4', 'hello'], ['dimensions', 'sparse']);
    const mutated = (name, mutate) => copyDir(max, path.join(tmp, name), mutate);
    refused('unknown SpladePooling field', ['embed', mutated('field', (d) => editJson(path.join(d, '1_SpladePooling', 'config.json'),
      (j) => { j.temperature = 2; })), 'hello'], ['temperature']);
    refused('unknown pooling_strategy', ['embed', mutated('strategy', (d) => editJson(path.join(d, '1_SpladePooling', 'config.json'),
      (j) => { j.pooling_strategy = 'mean'; })), 'hello'], ["pooling_strategy 'mean'"]);
    refused('unknown activation_function', ['embed', mutated('act', (d) => editJson(path.join(d, '1_SpladePooling', 'config.json'),
      (j) => { j.activation_function = 'gelu'; })), 'hello'], ["activation_function 'gelu'"]);
    refused('a SparseEncoder module glassbox does not run', ['embed', mutated('static', (d) => editJson(path.join(d, 'modules.json'),
      (j) => { j.push({ idx: 2, name: '2', path: '2_X', type: 'sentence_transformers.sparse_encoder.models.SparseStaticEmbedding' }); })),
      'hello'], ['sentence_transformers.sparse_encoder.models.SparseStaticEmbedding']);
    refused('SpladePooling after a Transformer', ['embed', mutated('chain', (d) => editJson(path.join(d, 'modules.json'),
      (j) => { j[0].type = 'sentence_transformers.models.Transformer'; })), 'hello'], ['SpladePooling cannot follow Transformer']);
    refused('unknown glassbox.json sparse field', ['embed', copyDir(path.join(DIR, 'splade_declared'), path.join(tmp, 'gj'), (d) =>
      editJson(path.join(d, 'glassbox.json'), (j) => { j.sparse.prune = 0.1; })), 'hello'], ["'sparse.prune'"]);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  checker.finish();
}

main().catch((e) => { console.error(e.stack || e); process.exit(1); });
