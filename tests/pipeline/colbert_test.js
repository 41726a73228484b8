#!/usr/bin/env node
// Multi-vector (ColBERT, PyLate layout) model directories (scripts/make_colbert_models.py: a BERT encoder exported
// with torch, modules.json Transformer -> pylate.models.Dense.Dense, config_sentence_transformers.json with PyLate's
// fields) read as declared:
//   1. `glassbox embed DIR` (documents) and `glassbox embed DIR --query` (batches of 2: padding exercised) give the
//      reference token vectors the script computed with torch + numpy following PyLate's semantics (one text at a
//      time): the same number of vectors, each with cosine >= 0.99999 to its reference; token ids equal the HF
//      `tokenizers` peer's;
//   2. `glassbox rerank DIR --query Q DOC...`: each score equals the reference MaxSim (1e-5 relative), the order is
//      the reference's sorted order;
//   3. explain: output and the multi_vector_* rows with their sources (the file, or PyLate's defaults);
//   4. loud paths: an overlong document (error naming document_length) and --overflow truncate (tokens_dropped),
//      --query on a dense model, --output, --dimensions, split, use_residual true, an unknown ColBERT field, an
//      unknown glassbox.json multi_vector field, a prefix that is not a token;
//   5. served (colbert_pylate): POST /embed_multi (queries and documents) equal to the references (cosine),
//      /rerank and /v1/rerank scores equal to the reference MaxSim with its order, and the refusals (/embed and
//      /v1/embeddings name /embed_multi, split is a 400, an overlong document a 413 naming it).
// Usage: node tests/pipeline/colbert_test.js GLASSBOX_BINARY COLBERT_DIR   (COLBERT_DIR: make_colbert_models.py --out)
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

const ROOT = path.resolve(__dirname, '..', '..');
const peer = require(path.join(ROOT, 'tests', 'common', 'peer_helpers.js'));
const tk = require(path.join(ROOT, '.peers', 'node_modules', 'tokenizers'));

const MIN_COS = 0.99999;
const MAX_REL = 1e-5;
const [GLASSBOX, DIR] = process.argv.slice(2);
const checker = peer.checker();
const check = checker.check;
const glassbox = (args) => peer.runCli(GLASSBOX, args);
const NAMES = ['colbert_pylate', 'colbert_attend', 'colbert_no_expansion'];

function editJson(file, fn) {
  const j = JSON.parse(fs.readFileSync(file, 'utf8'));
  fn(j);
  fs.writeFileSync(file, JSON.stringify(j, null, 2));
}

function cosine(a, b) {
  let d = 0, x = 0, y = 0;
  for (let k = 0; k < a.length; ++k) { d += a[k] * b[k]; x += a[k] * a[k]; y += b[k] * b[k]; }
  return d / Math.sqrt(x * y);
}

// The lowest cosine of glassbox's vectors to the reference's (-Infinity when the counts or sizes differ).
function worstCosine(got, ref) {
  if (!got || got.length !== ref.length) return -Infinity;
  let worst = 1;
  for (let k = 0; k < ref.length; ++k) {
    if (got[k].length !== ref[k].length) return -Infinity;
    worst = Math.min(worst, cosine(got[k], ref[k]));
  }
  return worst;
}

async function compareVectors(name, ref) {
  const dir = path.join(DIR, name);
  const tok = tk.Tokenizer.fromFile(path.join(dir, 'tokenizer.json'));
  for (const [role, cases] of [['query', ref.queries], ['document', ref.documents]]) {
    const r = glassbox(['embed', dir, '--batch', '2', ...(role === 'query' ? ['--query'] : []), ...cases.map((c) => c.text)]);
    if (r.status !== 0) { check(false, `${name} ${role}: glassbox embed failed: ${r.stderr.trim()}`); continue; }
    const got = peer.jsonl(r.stdout);
    let worst = got.length === cases.length ? 1 : -Infinity, idsOk = true, rows = 0;
    for (let i = 0; i < cases.length && i < got.length; ++i) {
      worst = Math.min(worst, worstCosine(got[i].vectors, cases[i].vectors));
      rows += cases[i].vectors.length;
      const ids = (await tok.encode(cases[i].text)).getIds();
      idsOk = idsOk && JSON.stringify(ids) === JSON.stringify(cases[i].ids) && got[i].tokens === cases[i].model_ids.length;
    }
    check(idsOk, `${name} ${role}s: token ids of the tokenizers peer are the reference's; tokens = the model input's length`);
    check(worst >= MIN_COS, `${name} ${role}s: ${cases.length} texts, ${rows} token vectors, each cosine to the reference ` +
          `>= ${MIN_COS} (lowest ${worst.toFixed(7)})`);
  }
}

function compareRerank(name, ref) {
  const dir = path.join(DIR, name);
  ref.queries.forEach((q, qi) => {
    const r = glassbox(['rerank', dir, '--query', q.text, ...ref.documents.map((d) => d.text)]);
    if (r.status !== 0) { check(false, `${name} rerank: ${r.stderr.trim()}`); return; }
    const got = peer.jsonl(r.stdout);
    const want = ref.scores[qi];
    const order = want.map((s, i) => [s, i]).sort((a, b) => b[0] - a[0] || a[1] - b[1]).map((x) => x[1]);
    let worst = 0;
    for (const g of got) worst = Math.max(worst, Math.abs(g.score - want[g.index]) / Math.max(Math.abs(want[g.index]), 1e-30));
    check(got.length === want.length && worst <= MAX_REL && JSON.stringify(got.map((g) => g.index)) === JSON.stringify(order),
          `${name} rerank query ${qi}: MaxSim scores within ${MAX_REL} relative of the reference (max ${worst.toExponential(2)}), ` +
          `order the reference's ${JSON.stringify(order)}`);
  });
}

function explainRows(dir) {
  const r = glassbox(['explain', dir, '--json']);
  if (r.status !== 0) return { error: r.stderr };
  return Object.fromEntries(JSON.parse(r.stdout).pipeline.map((row) => [row.field, row]));
}

function explainChecks() {
  let rows = explainRows(path.join(DIR, 'colbert_pylate'));
  check(!rows.error && rows.task.value === 'embed' && rows.output.value.startsWith('multi-vector') &&
        rows.output.source.includes('Transformer -> Dense(1_Dense, per token)') &&
        rows.multi_vector_query_prefix.value.startsWith("'[Q] '") &&
        rows.multi_vector_query_prefix.source === 'config_sentence_transformers.json query_prefix' &&
        rows.multi_vector_query_length.value === '16' && rows.multi_vector_document_length.value === '24' &&
        rows.multi_vector_query_expansion.value === 'true' && rows.multi_vector_attend_to_expansion.value === 'false' &&
        rows.multi_vector_expansion_token.value.startsWith('[MASK]') && rows.multi_vector_skiplist.value.startsWith('32 words') &&
        rows.multi_vector_score.value.startsWith('MaxSim') && !rows.pooling &&
        rows.unpadded_batches.value === 'false' && rows.unpadded_batches.source.startsWith('multi-vector head'),
        `explain colbert_pylate: the head from modules.json and config_sentence_transformers.json ${JSON.stringify(rows).slice(0, 300)}`);
  rows = explainRows(path.join(DIR, 'colbert_no_expansion'));
  check(!rows.error && rows.multi_vector_query_length.value === '32' && rows.multi_vector_query_length.source.startsWith('default: PyLate') &&
        rows.multi_vector_query_length.risk && rows.multi_vector_document_prefix.value === 'none' &&
        rows.multi_vector_skiplist.source.includes("string.punctuation") && rows.multi_vector_query_expansion.value === 'false',
        `explain colbert_no_expansion: absent fields are PyLate's defaults, with their risk ${JSON.stringify(rows).slice(0, 300)}`);
}

function loudPaths() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox_colbert_'));
  const refused = (what, args, needles) => {
    const r = glassbox(args);
    check(r.status !== 0 && r.stdout === '' && needles.every((n) => r.stderr.includes(n)), `${what}: ${r.stderr.trim().slice(0, 300)}`);
  };
  const dir = path.join(DIR, 'colbert_pylate');
  const mutated = (name, mutate) => {
    const d = path.join(tmp, name);
    fs.cpSync(dir, d, { recursive: true });
    mutate(d);
    return d;
  };
  try {
    const long = 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen '.repeat(2).trim();
    refused('an overlong document', ['embed', dir, long], ['30 tokens', 'document_length 24']);
    const r = glassbox(['embed', dir, '--overflow', 'truncate', long]);
    const j = r.status === 0 ? peer.jsonl(r.stdout)[0] : null;
    check(j && j.tokens === 24 && j.tokens_dropped === 7, `--overflow truncate: the document cut to 23 text tokens + [D] (${r.stderr.trim()})`);
    refused('--output on a multi-vector model', ['embed', dir, '--output', path.join(tmp, 'x.npy'), 'hello'], ['--output']);
    refused('--dimensions on a multi-vector model', ['embed', dir, '--dimensions', '4', 'hello'], ['dimensions']);
    refused('rerank --overflow split', ['rerank', dir, '--query', 'fox', '--overflow', 'split', 'a fox'], ['split']);
    refused('--query on a model without a multi-vector head', ['embed', mutated('dense', (d) => {
      editJson(path.join(d, 'modules.json'), (m) => { m.splice(1); m.push({ idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' }); });
      fs.mkdirSync(path.join(d, '1_Pooling'));
      fs.writeFileSync(path.join(d, '1_Pooling', 'config.json'), JSON.stringify({ word_embedding_dimension: 32, pooling_mode_mean_tokens: true }));
      editJson(path.join(d, 'config_sentence_transformers.json'), (c) => { c.similarity_fn_name = 'cosine'; });
    }), '--query', 'hello'], ['--query']);
    refused('use_residual true', ['embed', mutated('residual', (d) => editJson(path.join(d, '1_Dense', 'config.json'),
      (c) => { c.use_residual = true; })), 'hello'], ["'use_residual'"]);
    refused('an unknown ColBERT field', ['embed', mutated('field', (d) => editJson(path.join(d, 'config_sentence_transformers.json'),
      (c) => { c.pool_factor = 2; })), 'hello'], ["'pool_factor'"]);
    refused('an unknown glassbox.json multi_vector field', ['embed', mutated('gj', (d) => fs.writeFileSync(path.join(d, 'glassbox.json'),
      JSON.stringify({ multi_vector: { query_len: 8 } }))), 'hello'], ["'multi_vector.query_len'"]);
    refused('a prefix that is not a token', ['embed', mutated('prefix', (d) => editJson(path.join(d, 'config_sentence_transformers.json'),
      (c) => { c.query_prefix = '[QQ] '; })), 'hello'], ["'[QQ] '"]);
    // glassbox.json wins over the file: query_length 10 pads queries to 10 (explain says so).
    const declared = mutated('declared', (d) => fs.writeFileSync(path.join(d, 'glassbox.json'), JSON.stringify({ multi_vector: { query_length: 10 } })));
    const q = glassbox(['embed', declared, '--query', 'a fox']);
    const rows = explainRows(declared);
    check(q.status === 0 && peer.jsonl(q.stdout)[0].vectors.length === 10 && rows.multi_vector_query_length.source === 'glassbox.json multi_vector.query_length',
          `glassbox.json multi_vector.query_length 10 over the file's 16: 10 query vectors (${q.stderr.trim().slice(0, 200)})`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

async function post(base, route, body) {
  const r = await fetch(`${base}${route}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch (e) { /* checked by the caller */ }
  return { status: r.status, json, text, headers: r.headers };
}

async function serveChecks(ref) {
  const dir = path.join(DIR, 'colbert_pylate');
  let server;
  try {
    server = await peer.startServer(GLASSBOX, [dir], { timeoutMs: 120000 });
    for (const [role, cases] of [['query', ref.queries], ['document', ref.documents]]) {
      const r = await post(server.base, '/embed_multi', { inputs: cases.map((c) => c.text), query: role === 'query' });
      let worst = r.status === 200 && r.json.length === cases.length ? 1 : -Infinity;
      for (let i = 0; worst > -Infinity && i < cases.length; ++i) worst = Math.min(worst, worstCosine(r.json[i], cases[i].vectors));
      check(worst >= MIN_COS, `POST /embed_multi ${role}s: every token vector cosine >= ${MIN_COS} to the reference (lowest ` +
            `${worst.toFixed(7)}) ${r.status === 200 ? '' : r.text.slice(0, 200)}`);
    }
    const want = ref.scores[0];
    const order = want.map((x, i) => [x, i]).sort((a, b) => b[0] - a[0] || a[1] - b[1]).map((x) => x[1]);
    const docs = ref.documents.map((d) => d.text);
    let r = await post(server.base, '/rerank', { query: ref.queries[0].text, texts: docs });
    const rel = (g) => Math.abs(g.score - want[g.index]) / Math.abs(want[g.index]);
    check(r.status === 200 && JSON.stringify(r.json.map((x) => x.index)) === JSON.stringify(order) && r.json.every((g) => rel(g) <= MAX_REL) &&
          r.headers.get('x-glassbox-rerank-score') === 'MaxSim',
          `TEI /rerank by MaxSim: the reference's scores (1e-5) and order ${r.text.slice(0, 200)}`);
    r = await post(server.base, '/v1/rerank', { query: ref.queries[0].text, documents: docs, top_n: 2 });
    check(r.status === 200 && r.json.results.length === 2 && r.json.results.every((g, k) => g.index === order[k] &&
          Math.abs(g.relevance_score - want[g.index]) <= MAX_REL * Math.abs(want[g.index])),
          `/v1/rerank by MaxSim: top_n 2 in the reference's order ${r.text.slice(0, 200)}`);
    const long = 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen '.repeat(2).trim();
    r = await post(server.base, '/rerank', { query: 'a fox', texts: ['a fox', long] });
    check(r.status === 413 && r.text.includes('document 1'), `/rerank overlong document: 413 naming document 1 (${r.text.slice(0, 200)})`);
    r = await post(server.base, '/rerank', { query: 'a fox', texts: ['a fox', long], overflow: 'truncate' });
    check(r.status === 200 && r.json.find((x) => x.index === 1).tokens_dropped === 7, `/rerank overflow truncate: 7 tokens dropped (${r.text.slice(0, 200)})`);
    r = await post(server.base, '/rerank', { query: 'a fox', texts: ['a fox'], overflow: 'split' });
    check(r.status === 400 && r.text.includes('split'), `/rerank overflow split: 400 (${r.text.slice(0, 160)})`);
    r = await post(server.base, '/embed', { inputs: 'a fox' });
    check(r.status === 400 && r.text.includes('/embed_multi'), `/embed refuses a multi-vector model naming /embed_multi (${r.text.slice(0, 160)})`);
    r = await post(server.base, '/v1/embeddings', { model: 'colbert_pylate', input: 'a fox' });
    check(r.status === 400 && r.text.includes('/embed_multi'), `/v1/embeddings refuses it naming /embed_multi (${r.text.slice(0, 160)})`);
  } catch (e) {
    check(false, `serve colbert_pylate: ${e.message.slice(0, 400)}`);
  } finally {
    if (server) await peer.stopServer(server);
  }
}

async function main() {
  if (!GLASSBOX || !DIR) throw new Error('usage: colbert_test.js GLASSBOX_BINARY COLBERT_DIR');
  for (const name of NAMES) {
    const ref = JSON.parse(fs.readFileSync(path.join(DIR, `${name}.reference.json`), 'utf8'));
    await compareVectors(name, ref);
    compareRerank(name, ref);
  }
  explainChecks();
  loudPaths();
  await serveChecks(JSON.parse(fs.readFileSync(path.join(DIR, 'colbert_pylate.reference.json'), 'utf8')));
  checker.finish();
}

main().catch((e) => { console.error(e.stack || e); process.exit(1); });
