#!/usr/bin/env node
// Rerank with cross-encoders laid out as sentence-transformers saves them (scripts/make_cross_encoder.py:
// onnx/model.onnx, one logit, the activation recorded by v4 / v2 / not at all; no glassbox.json):
//   1. `glassbox rerank DIR --query Q DOC...`: every score equals the declared activation of
//      onnxruntime-node's logit on the HF `tokenizers` peer's pair encoding (1e-5 relative), the
//      order is the peer's sorted order, the logits equal transformers.js's
//      AutoModelForSequenceClassification on the same pairs (1e-4);
//   2. explain: score_function and its source from the files (sigmoid declared / none declared /
//      transformers' one-label rule);
//   3. --top-n, --raw-scores; an overlong pair is an error naming the input; --truncation only_second
//      cuts the document and the score equals ORT on the peer's only_second truncation;
//   4. refusals: a classifier with 3 labels, an unknown declared activation;
//   5. served: TEI POST /rerank and the Cohere/Jina POST /v1/rerank give the same scores and order,
//      with top_n, return_documents/return_text, raw_scores, and errors for bad bodies;
//   6. the long-document policy ("overflow": error / truncate / split) against the peer's windows.
// Usage: node tests/pipeline/rerank_test.js GLASSBOX_BINARY CE_DIR   (CE_DIR: make_cross_encoder.py --out)
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

const ROOT = path.resolve(__dirname, '..', '..');
const peer = require(path.join(ROOT, 'tests', 'common', 'peer_helpers.js'));
const PEERS = path.join(ROOT, '.peers', 'node_modules');
const tk = require(path.join(PEERS, 'tokenizers'));
const tkOverflow = require(path.join(PEERS, '@anush008', 'tokenizers'));  // overflow windows: see peerWindows
const { runOrt } = require(path.join(ROOT, 'scripts', 'parity', 'run_ort.js'));

const [GLASSBOX, CE] = process.argv.slice(2);
const checker = peer.checker();
const check = checker.check;
const glassbox = (args, stdin) => peer.runCli(GLASSBOX, args, stdin);
const { jsonl } = peer;
const relClose = (a, b, tol) => Math.abs(a - b) <= tol * Math.max(1, Math.abs(b));

const QUERY = 'Where is the train station?';
const DOCS = [
  'The quick brown fox jumps over the lazy dog.',
  'Search for the best coffee near the station, please!',
  'A fox is an animal.',
  'Hello world',
  'Dogs and cats are friends; birds are not.',
  'Where is the train station?',
];
const LONG = 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen '.repeat(3).trim();
const ACTIVATION = { ce_sigmoid: 'sigmoid', ce_identity: 'none', ce_undeclared: 'sigmoid' };
const sigmoid = (x) => 1 / (1 + Math.exp(-x));

// ORT's logit for each (query, doc) pair on the peer tokenizer's ids (truncation: the peer's, if given).
async function peerLogits(dir, query, docs, truncation) {
  const tok = tk.Tokenizer.fromFile(path.join(dir, 'tokenizer.json'));
  if (truncation) tok.setTruncation(truncation.maxLength, { strategy: truncation.strategy });
  const out = [];
  for (const d of docs) {
    const e = await tok.encode(query, d);
    const n = e.getIds().length;
    const i64 = (a) => ({ type: 'int64', dims: [1, n], data: BigInt64Array.from(a.map((x) => BigInt(x))) });
    const r = await runOrt(path.join(dir, 'onnx', 'model.onnx'), {
      input_ids: i64(e.getIds()), attention_mask: i64(e.getAttentionMask()), token_type_ids: i64(e.getTypeIds()) });
    out.push({ logit: r[0].data[0], tokens: n });
  }
  return out;
}

const scoreOf = (name, logit) => (ACTIVATION[name] === 'sigmoid' ? sigmoid(logit) : logit);

// The peer's ranking: indices sorted by score, ties in document order.
function peerOrder(scores) {
  return scores.map((s, i) => [s, i]).sort((a, b) => b[0] - a[0] || a[1] - b[1]).map((x) => x[1]);
}

async function tjsLogits(name, query, docs) {
  const { AutoTokenizer, AutoModelForSequenceClassification, env } =
    await import(path.join(PEERS, '@huggingface', 'transformers', 'dist', 'transformers.node.mjs'));
  env.allowRemoteModels = false;
  env.localModelPath = CE + path.sep;
  const tokenizer = await AutoTokenizer.from_pretrained(name);
  const model = await AutoModelForSequenceClassification.from_pretrained(name, { dtype: 'fp32', local_files_only: true });
  const inputs = tokenizer(new Array(docs.length).fill(query), { text_pair: docs, padding: true });
  const { logits } = await model(inputs);
  const out = Array.from(logits.data);
  await model.dispose();
  return out;
}

async function cliChecks(name) {
  const dir = path.join(CE, name);
  const ref = await peerLogits(dir, QUERY, DOCS);
  const r = glassbox(['rerank', dir, '--query', QUERY, ...DOCS]);
  const got = r.status === 0 ? jsonl(r.stdout) : [];
  check(got.length === DOCS.length, `${name}: one line per document (${r.stderr.trim().slice(0, 200)})`);
  const expected = ref.map((x) => scoreOf(name, x.logit));
  let ok = got.length === DOCS.length;
  for (const g of got) {
    ok = ok && relClose(g.score, expected[g.index], 1e-5) && relClose(g.logit, ref[g.index].logit, 1e-5) &&
         g.tokens === ref[g.index].tokens && g.text === DOCS[g.index] && g.tokens_dropped === 0;
  }
  check(ok, `${name}: scores = ${ACTIVATION[name]}(ORT logit on the tokenizers peer's pair ids), tokens equal`);
  check(JSON.stringify(got.map((g) => g.index)) === JSON.stringify(peerOrder(expected)),
        `${name}: order ${got.map((g) => g.index)} = the peer's sorted order ${peerOrder(expected)}`);
  const spread = Math.max(...expected) - Math.min(...expected);
  check(spread > 1e-3, `${name}: documents get clearly different scores (spread ${spread.toFixed(4)})`);
  const tjs = await tjsLogits(name, QUERY, DOCS);
  check(tjs.every((l, i) => relClose(l, ref[i].logit, 1e-4)),
        `${name}: transformers.js AutoModelForSequenceClassification logits equal ORT's (${tjs.map((x) => x.toFixed(4))})`);
  const ex = glassbox(['explain', dir, '--json']);
  const rows = ex.status === 0 ? Object.fromEntries(JSON.parse(ex.stdout).pipeline.map((row) => [row.field, row])) : {};
  const sourceWord = { ce_sigmoid: 'sentence_transformers.activation_fn', ce_identity: 'sbert_ce_default_activation_function',
                       ce_undeclared: 'one label' }[name];
  check(rows.score_function && rows.score_function.value === ACTIVATION[name] && rows.score_function.source.includes(sourceWord),
        `${name}: explain score_function ${JSON.stringify(rows.score_function)}`);
  return { ref, expected };
}

async function optionChecks() {
  const name = 'ce_sigmoid';
  const dir = path.join(CE, name);
  const ref = await peerLogits(dir, QUERY, DOCS);
  const expected = ref.map((x) => sigmoid(x.logit));
  let r = glassbox(['rerank', dir, '--query', QUERY, '--top-n', '2', '--raw-scores', ...DOCS]);
  const got = r.status === 0 ? jsonl(r.stdout) : [];
  const order = peerOrder(expected);
  check(got.length === 2 && got[0].index === order[0] && got[1].index === order[1] &&
        got.every((g) => relClose(g.score, ref[g.index].logit, 1e-5)),
        `--top-n 2 --raw-scores: the best two, scored by their logits (${r.stdout.trim().slice(0, 200)})`);
  r = glassbox(['rerank', dir, '--query', QUERY, DOCS[0], LONG]);
  check(r.status !== 0 && r.stdout === '' && /input 1/.test(r.stderr) && /max_length 32/.test(r.stderr),
        `an overlong pair is an error naming it: ${r.stderr.trim().slice(0, 200)}`);
  r = glassbox(['rerank', dir, '--query', QUERY, '--truncation', 'only_second', DOCS[0], LONG]);
  const cut = r.status === 0 ? jsonl(r.stdout) : [];
  const refCut = await peerLogits(dir, QUERY, [DOCS[0], LONG], { maxLength: 32, strategy: 'OnlySecond' });
  const long = cut.find((g) => g.index === 1);
  check(long && long.tokens === 32 && long.tokens_dropped > 0 && relClose(long.score, sigmoid(refCut[1].logit), 1e-5),
        `--truncation only_second cuts the document to 32 tokens, score = ORT on the peer's truncation (${JSON.stringify(long)})`);
}

function refusalChecks(tmp) {
  const cls = path.join(tmp, 'three_labels');
  fs.mkdirSync(path.join(cls, 'onnx'), { recursive: true });
  fs.copyFileSync(path.join(ROOT, 'tests', 'data', 'generated', 'bert_tiny_cls_op14.onnx'), path.join(cls, 'onnx', 'model.onnx'));
  fs.copyFileSync(path.join(CE, 'ce_sigmoid', 'tokenizer.json'), path.join(cls, 'tokenizer.json'));
  fs.writeFileSync(path.join(cls, 'config.json'), JSON.stringify({ id2label: { 0: 'a', 1: 'b', 2: 'c' }, max_position_embeddings: 128 }));
  let r = glassbox(['rerank', cls, '--query', 'fox', 'a fox']);
  check(r.status !== 0 && /one logit per pair/.test(r.stderr) && /3 labels/.test(r.stderr),
        `a 3-label classifier is refused for rerank: ${r.stderr.trim().slice(0, 200)}`);
  const bad = path.join(tmp, 'bad_activation');
  fs.cpSync(path.join(CE, 'ce_sigmoid'), bad, { recursive: true });
  const cfg = JSON.parse(fs.readFileSync(path.join(bad, 'config.json'), 'utf8'));
  cfg.sentence_transformers.activation_fn = 'torch.nn.modules.activation.Tanh';
  fs.writeFileSync(path.join(bad, 'config.json'), JSON.stringify(cfg));
  r = glassbox(['rerank', bad, '--query', 'fox', 'a fox']);
  check(r.status !== 0 && r.stderr.includes('torch.nn.modules.activation.Tanh'),
        `an unknown declared activation is refused by name: ${r.stderr.trim().slice(0, 200)}`);
}

async function post(base, route, body) {
  const r = await fetch(`${base}${route}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch (e) { /* not JSON: checked by the caller */ }
  return { status: r.status, json, text };
}

// The windows of (query, doc) at max_length 32 as docs/retrieval.md declares them: the HF tokenizers peer's
// only_second truncation with its overflowing pairs (stride 0), each window [CLS] query [SEP] part [SEP], scored by
// ORT. The windows come from @anush008/tokenizers (HF's tokenizers core before 0.23.1): tokenizers 0.23.x stops
// tokenizing once max_length tokens exist when truncation is on (huggingface/tokenizers#2091, fix in #2098), so its
// overflowing windows under-cover the text (here its second window holds 9 document tokens and 10 are lost, where
// Encoding::truncate's windows hold all 19 that remain). Also the untruncated length (npm tokenizers 0.23.2).
async function peerWindows(dir, query, doc) {
  const full = (await tk.Tokenizer.fromFile(path.join(dir, 'tokenizer.json')).encode(query, doc)).getIds().length;
  const tok = tkOverflow.Tokenizer.fromFile(path.join(dir, 'tokenizer.json'));
  tok.setTruncation(32, { strategy: 'OnlySecond', stride: 0 });
  const e = await tok.encode(query, doc);
  const logits = [];
  for (const w of [e].concat(e.getOverflowing())) {
    const n = w.getIds().length;
    const i64 = (a) => ({ type: 'int64', dims: [1, n], data: BigInt64Array.from(a.map((x) => BigInt(x))) });
    const r = await runOrt(path.join(dir, 'onnx', 'model.onnx'), {
      input_ids: i64(w.getIds()), attention_mask: i64(w.getAttentionMask()), token_type_ids: i64(w.getTypeIds()) });
    logits.push(r[0].data[0]);
  }
  return { full, logits, kept: 32 };
}

// The long-document policy on both routes: error (default) names the document and its length;
// truncate reports the tokens each document lost; split scores the best window (max over the peer's windows).
async function policyChecks(server) {
  const dir = path.join(CE, 'ce_sigmoid');
  const win = await peerWindows(dir, QUERY, LONG);
  const short = (await peerLogits(dir, QUERY, [DOCS[0]]))[0];
  let r = await post(server.base, '/rerank', { query: QUERY, texts: [DOCS[0], LONG] });
  check(r.status === 413 && /document 1/.test(r.text) && r.text.includes(`${win.full} tokens`) && /max_length 32/.test(r.text),
        `error (default): 413 naming document 1 and its ${win.full} tokens (${r.text.slice(0, 200)})`);
  r = await post(server.base, '/v1/rerank', { query: QUERY, documents: [DOCS[0], LONG], overflow: 'error' });
  check(r.status === 413 && r.json && r.json.error && /document 1/.test(r.json.error.message),
        `/v1/rerank overflow "error": 413 in OpenAI's shape naming document 1 (${r.text.slice(0, 160)})`);
  for (const body of [{ truncate: true }, { overflow: 'truncate' }]) {
    r = await fetch(`${server.base}/rerank`, { method: 'POST', body: JSON.stringify({ query: QUERY, texts: [DOCS[0], LONG], ...body }) });
    const j = await r.json();
    const long = j.find((x) => x.index === 1), first = j.find((x) => x.index === 0);
    check(r.status === 200 && long.tokens_dropped === win.full - 32 && first.tokens_dropped === 0 &&
          relClose(long.score, sigmoid(win.logits[0]), 1e-5) &&
          r.headers.get('x-glassbox-tokens-dropped-per-input') === `0,${win.full - 32}`,
          `${JSON.stringify(body)}: per document tokens_dropped (0, ${win.full - 32}) in body and header, score = ORT on the ` +
          `peer's only_second cut (${JSON.stringify(j)})`);
  }
  const best = Math.max(...win.logits);
  for (const route of ['/rerank', '/v1/rerank']) {
    const body = route === '/rerank' ? { query: QUERY, texts: [DOCS[0], LONG], overflow: 'split', raw_scores: true }
                                     : { query: QUERY, documents: [DOCS[0], LONG], overflow: 'split' };
    r = await post(server.base, route, body);
    const rows = route === '/rerank' ? r.json : r.json && r.json.results;
    const long = rows && rows.find((x) => x.index === 1), first = rows && rows.find((x) => x.index === 0);
    const score = (x) => (route === '/rerank' ? x.score : x.relevance_score);
    const want = route === '/rerank' ? best : sigmoid(best);
    check(r.status === 200 && win.logits.length >= 2 && long && long.windows === win.logits.length && first.windows === 1 &&
          relClose(score(long), want, 1e-5) && relClose(score(first), route === '/rerank' ? short.logit : sigmoid(short.logit), 1e-5),
          `${route} overflow "split": document 1 in ${win.logits.length} windows, score = max of ORT over the windows of the ` +
          `peer's tokens (${want.toFixed(5)}) (${r.text.slice(0, 200)})`);
  }
  // The CLI's --overflow takes the same policies.
  let cli = glassbox(['rerank', dir, '--query', QUERY, '--overflow', 'split', '--raw-scores', DOCS[0], LONG]);
  let row = cli.status === 0 ? jsonl(cli.stdout).find((x) => x.index === 1) : null;
  check(row && row.windows === win.logits.length && relClose(row.score, best, 1e-5),
        `CLI rerank --overflow split: document 1 in ${win.logits.length} windows, score = max of ORT over them (${cli.stdout.trim().slice(0, 200)}${cli.stderr.trim().slice(0, 200)})`);
  cli = glassbox(['rerank', dir, '--query', QUERY, '--overflow', 'truncate', DOCS[0], LONG]);
  row = cli.status === 0 ? jsonl(cli.stdout).find((x) => x.index === 1) : null;
  check(row && row.tokens_dropped === win.full - 32 && relClose(row.score, sigmoid(win.logits[0]), 1e-5),
        `CLI rerank --overflow truncate: ${win.full - 32} tokens dropped, score = ORT on the peer's only_second cut`);
  cli = glassbox(['rerank', dir, '--query', QUERY, DOCS[0], LONG]);
  check(cli.status !== 0 && /document|input 1/.test(cli.stderr), `CLI rerank without --overflow: the overlong pair is an error (${cli.stderr.trim().slice(0, 160)})`);
  for (const [body, why] of [[{ overflow: 'chop' }, 'an unknown policy'], [{ overflow: 'split', truncate: true }, 'disagreeing fields'],
                             [{ truncation_direction: 'Up' }, 'a bad truncation_direction']]) {
    r = await post(server.base, '/rerank', { query: QUERY, texts: DOCS, ...body });
    check(r.status === 400 && r.json && r.json.error, `/rerank ${why}: 400 (${r.text.slice(0, 120)})`);
  }
}

async function serveChecks(sigmoidRef) {
  const expected = sigmoidRef.map((x) => sigmoid(x.logit));
  const order = peerOrder(expected);
  let server;
  try {
    server = await peer.startServer(GLASSBOX, [path.join(CE, 'ce_sigmoid')], { timeoutMs: 120000 });
    let r = await post(server.base, '/rerank', { query: QUERY, texts: DOCS, return_text: true });
    const tei = r.json || [];
    check(r.status === 200 && tei.length === DOCS.length && JSON.stringify(tei.map((x) => x.index)) === JSON.stringify(order) &&
          tei.every((x) => relClose(x.score, expected[x.index], 1e-5) && x.text === DOCS[x.index]),
          `TEI /rerank: sorted, scores as the peer's, text returned (${r.text.slice(0, 160)})`);
    r = await post(server.base, '/rerank', { query: QUERY, texts: DOCS, raw_scores: true });
    check(r.status === 200 && r.json.every((x) => relClose(x.score, sigmoidRef[x.index].logit, 1e-5) && x.text === undefined),
          'TEI /rerank raw_scores: logits, no text unless asked');
    r = await post(server.base, '/v1/rerank', { model: 'ce_sigmoid', query: QUERY, documents: DOCS, top_n: 3, return_documents: true });
    const res = r.json && r.json.results;
    check(r.status === 200 && res.length === 3 && res.every((x, k) => x.index === order[k] &&
          relClose(x.relevance_score, expected[x.index], 1e-5) && x.document.text === DOCS[x.index]) &&
          r.json.usage && r.json.usage.total_tokens === sigmoidRef.reduce((s, x) => s + x.tokens, 0),
          `/v1/rerank (Cohere/Jina shape): top_n 3, documents, usage.total_tokens (${r.text.slice(0, 200)})`);
    await policyChecks(server);
    for (const [route, body, why] of [
      ['/rerank', { texts: DOCS }, 'no query'],
      ['/rerank', { query: QUERY, texts: 'one' }, 'texts not a list'],
      ['/rerank', { query: QUERY, texts: [] }, 'empty texts'],
      ['/v1/rerank', { query: QUERY, documents: DOCS, top_n: 0 }, 'top_n 0'],
      ['/v1/rerank', { query: QUERY, documents: [{ txt: 'x' }] }, 'a document without text'],
    ]) {
      r = await post(server.base, route, body);
      check(r.status === 400 && r.json && r.json.error, `${route} ${why}: 400 with an error (${r.text.slice(0, 120)})`);
    }
  } catch (e) {
    check(false, `serve rerank: ${e.message.slice(0, 400)}`);
  } finally {
    if (server) await peer.stopServer(server);
  }
}

async function main() {
  if (!GLASSBOX || !CE) throw new Error('usage: rerank_test.js GLASSBOX_BINARY CE_DIR');
  const results = {};
  for (const name of Object.keys(ACTIVATION)) results[name] = await cliChecks(name);
  await optionChecks();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox_rerank_'));
  try {
    refusalChecks(tmp);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  await serveChecks(results.ce_sigmoid.ref);
  console.log(checker.failures ? `${checker.failures} check(s) failed` : 'all rerank checks passed');
  process.exit(checker.exitCode());
}

main().catch((e) => { console.error(e.stack || e); process.exit(1); });
