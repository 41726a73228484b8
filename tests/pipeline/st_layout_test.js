#!/usr/bin/env node
// sentence-transformers model directories (scripts/make_st_models.py: Optimum's onnx/model.onnx, modules.json,
// 1_Pooling, 2_Dense + safetensors, Normalize, prompts, no glassbox.json) read as declared:
//   1. `glassbox embed DIR` (batches of 3: padding is exercised) equals the reference vectors the script computed
//      with torch + numpy following sentence-transformers' semantics (batch of one, no padding): cosine >= 0.99999
//      for cls, max, mean, mean_sqrt_len, weightedmean, lasttoken, concatenated modes, Dense (F32 and F16
//      safetensors), Normalize, prompts by name / literal / default, include_prompt false, do_lower_case,
//      Matryoshka dimensions, and a declared variant file (--model-file); token ids equal the HF `tokenizers` peer's.
//   2. the same directories in transformers.js 4.3.2 (pipeline('feature-extraction', {pooling, normalize}))
//      where it has the mode (cls, mean, last_token): cosine >= 0.99999; and mean != cls on the BGE-style
//      directory (the old default would fail this test).
//   3. explain: every decision sourced from the files, none undeclared; a directory without the
//      sentence-transformers files shows its pooling default as UNDECLARED with the risk.
//   4. loud paths: unknown pooling field / module type / activation, pickle weights, a truncated safetensors,
//      unknown prompt_name, too many dimensions, a directory without a model (naming what was looked for), only
//      quantized variants (listed), and the Optimum-layout classify bug (a directory is never a text).
// Usage: node tests/pipeline/st_layout_test.js GLASSBOX_BINARY ST_DIR   (ST_DIR: make_st_models.py --out)
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');

const ROOT = path.resolve(__dirname, '..', '..');
const peer = require(path.join(ROOT, 'tests', 'common', 'peer_helpers.js'));
const PEERS = path.join(ROOT, '.peers', 'node_modules');
const tk = require(path.join(PEERS, 'tokenizers'));

const MIN_COSINE = 0.99999;
const [GLASSBOX, ST] = process.argv.slice(2);
const checker = peer.checker();
const glassbox = (args, stdin) => peer.runCli(GLASSBOX, args, stdin);
const { jsonl } = peer;
const check = checker.check;

const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);
const cosine = (a, b) => (a.length === b.length ? dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b)) : -2);
const l2 = (v) => Math.sqrt(dot(v, v));

function copyDir(src, dst, mutate) {
  fs.cpSync(src, dst, { recursive: true });
  if (mutate) mutate(dst);
  return dst;
}

function editJson(file, fn) {
  const j = JSON.parse(fs.readFileSync(file, 'utf8'));
  const out = fn(j) ?? j;
  fs.writeFileSync(file, JSON.stringify(out, null, 2));
}

function optionArgs(c) {
  const a = [];
  if (c.prompt_name !== undefined) a.push('--prompt-name', c.prompt_name);
  if (c.prompt !== undefined) a.push('--prompt', c.prompt);
  if (c.dimensions !== undefined) a.push('--dimensions', String(c.dimensions));
  if (c.model_file !== undefined) a.push('--model-file', c.model_file);
  return a;
}

// 1. every reference case through `glassbox embed`, grouped by options
async function compareReferences(name) {
  const dir = path.join(ST, name);
  const ref = JSON.parse(fs.readFileSync(path.join(ST, `${name}.reference.json`), 'utf8'));
  const tok = tk.Tokenizer.fromFile(path.join(dir, 'tokenizer.json'));
  const groups = new Map();
  for (const c of ref.cases) {
    const key = JSON.stringify(optionArgs(c));
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(c);
  }
  const vectors = {};
  for (const [key, cases] of groups) {
    const args = JSON.parse(key);
    const r = glassbox(['embed', dir, '--batch', '3', ...args, ...cases.map((c) => c.text)]);
    if (r.status !== 0) { check(false, `${name} ${key}: glassbox embed failed: ${r.stderr.trim()}`); continue; }
    const got = jsonl(r.stdout);
    check(got.length === cases.length, `${name} ${key}: ${got.length} vectors for ${cases.length} texts`);
    let worst = 1;
    let idsOk = true;
    for (let i = 0; i < cases.length && i < got.length; ++i) {
      worst = Math.min(worst, cosine(got[i].vector, cases[i].vector));
      const peer = (await tok.encode(cases[i].full_text)).getIds();
      // the peer tokenizes the cased text with the cased tokenizer: compare only where the file lowercases itself
      if (!ref.spec.do_lower_case) idsOk = idsOk && JSON.stringify(peer) === JSON.stringify(cases[i].ids);
      idsOk = idsOk && got[i].tokens === cases[i].ids.length;
    }
    check(idsOk, `${name} ${key}: token ids as the tokenizers peer, token counts as the reference`);
    check(worst >= MIN_COSINE, `${name} ${key}: ${cases.length} vectors, min cosine to the reference ${worst.toFixed(7)}`);
    if (!args.length) vectors[name] = got.map((g) => g.vector);
  }
  return vectors[name];
}

// 2. transformers.js on the same directory and texts (one text per call: no padding)
async function tjsVectors(name, texts, options) {
  const { pipeline, env } = await import(path.join(PEERS, '@huggingface', 'transformers', 'dist', 'transformers.node.mjs'));
  env.allowRemoteModels = false;
  env.localModelPath = ST + path.sep;
  const extract = await pipeline('feature-extraction', name, { dtype: 'fp32', local_files_only: true });
  const out = [];
  for (const t of texts) out.push(Array.from((await extract(t, options)).data));
  await extract.dispose();
  return out;
}

async function compareTransformersJs(name, options, glassboxVectors) {
  const ref = JSON.parse(fs.readFileSync(path.join(ST, `${name}.reference.json`), 'utf8'));
  const plain = ref.cases.filter((c) => optionArgs(c).length === 0);
  const tjs = await tjsVectors(name, plain.map((c) => c.full_text), options);
  let worst = 1;
  for (let i = 0; i < plain.length; ++i) worst = Math.min(worst, cosine(glassboxVectors[i], tjs[i]));
  check(worst >= MIN_COSINE, `${name}: glassbox vs transformers.js ${JSON.stringify(options)}: min cosine ${worst.toFixed(7)}`);
  return tjs;
}

function explainRows(dir, extra = []) {
  const r = glassbox(['explain', dir, '--json', ...extra]);
  if (r.status !== 0) return { error: r.stderr };
  return Object.fromEntries(JSON.parse(r.stdout).pipeline.map((row) => [row.field, row]));
}

async function serveChecks(bge, bgeVectors, optimumText, tmp) {
  const tensor = path.join(tmp, 'optimum_tensor');
  fs.mkdirSync(path.join(tensor, 'onnx'), { recursive: true });
  fs.copyFileSync(path.join(optimumText, 'onnx', 'model.onnx'), path.join(tensor, 'onnx', 'model.onnx'));
  const ref = JSON.parse(fs.readFileSync(path.join(ST, `${bge}.reference.json`), 'utf8'));
  const texts = ref.cases.filter((c) => optionArgs(c).length === 0).map((c) => c.text);
  let server;
  try {
    server = await peer.startServer(GLASSBOX, [path.join(ST, bge), tensor], { timeoutMs: 120000 });
    let r = await fetch(`${server.base}/embed`, { method: 'POST', headers: { 'Content-Type': 'application/json' },
                                                  body: JSON.stringify({ inputs: texts, model: bge }) });
    const served = r.status === 200 ? await r.json() : [];
    let worst = served.length === bgeVectors.length ? 1 : -2;
    for (let i = 0; i < served.length && i < bgeVectors.length; ++i) worst = Math.min(worst, cosine(served[i], bgeVectors[i]));
    check(worst >= MIN_COSINE, `serve ${bge}: TEI /embed equals glassbox embed (checked against the reference above): min cosine ${worst}`);
    r = await fetch(`${server.base}/info`);
    const info = r.status === 200 ? await r.json() : { status: r.status };
    check(info.model_type && info.model_type.embedding && info.model_type.embedding.pooling === 'cls' && info.model_dtype === 'float32',
          `serve ${bge}: /info names the pooling 1_Pooling declares: ${JSON.stringify(info.model_type)} ${info.model_dtype}`);
    r = await fetch(`${server.base}/v2/models/optimum_tensor`);
    const meta = r.status === 200 ? await r.json() : { status: r.status, body: await r.text() };
    const names = (meta.inputs || []).map((i) => i.name).sort().join(',');
    check(names === 'attention_mask,input_ids,token_type_ids',
          `serve a tensor model in Optimum's layout (onnx/model.onnx, no tokenizer): OIP metadata ${JSON.stringify(meta).slice(0, 200)}`);
  } catch (e) {
    check(false, `serve the sentence-transformers / Optimum layouts: ${e.message.slice(0, 400)}`);
  } finally {
    if (server) await peer.stopServer(server);
  }
  // TEI's name for last-token pooling
  try {
    server = await peer.startServer(GLASSBOX, [path.join(ST, 'st_lasttoken_normalize')], { timeoutMs: 120000 });
    const info = await (await fetch(`${server.base}/info`)).json();
    check(info.model_type && info.model_type.embedding && info.model_type.embedding.pooling === 'last_token',
          `serve st_lasttoken_normalize: /info pooling in TEI's name: ${JSON.stringify(info.model_type)}`);
  } catch (e) {
    check(false, `serve st_lasttoken_normalize: ${e.message.slice(0, 400)}`);
  } finally {
    if (server) await peer.stopServer(server);
  }
}

async function main() {
  if (!GLASSBOX || !ST) throw new Error('usage: st_layout_test.js GLASSBOX_BINARY ST_DIR');
  const names = fs.readdirSync(ST).filter((f) => f.endsWith('.reference.json')).map((f) => f.replace('.reference.json', ''));
  check(names.length >= 9, `${names.length} sentence-transformers directories generated`);
  const vectors = {};
  for (const n of names.sort()) vectors[n] = await compareReferences(n);

  // 2. transformers.js
  const bge = 'st_cls_normalize';
  await compareTransformersJs(bge, { pooling: 'cls', normalize: true }, vectors[bge]);
  const meanOfBge = await tjsVectors(bge, ['The quick brown fox jumps over the lazy dog.'], { pooling: 'mean', normalize: true });
  check(cosine(meanOfBge[0], vectors[bge][0]) < 0.999,
        `BGE-style directory: CLS vector differs from mean pooling (cosine ${cosine(meanOfBge[0], vectors[bge][0]).toFixed(4)})`);
  await compareTransformersJs('st_mean', { pooling: 'mean', normalize: false }, vectors.st_mean);
  await compareTransformersJs('st_lasttoken_normalize', { pooling: 'last_token', normalize: true }, vectors.st_lasttoken_normalize);
  check(Math.abs(l2(vectors[bge][0]) - 1) < 1e-5 && Math.abs(l2(vectors.st_mean[0]) - 1) > 1e-3,
        'Normalize module present: unit vectors; absent: raw vectors');

  // 3. explain: decisions and their sources
  let rows = explainRows(path.join(ST, bge));
  check(!rows.error && rows.pooling.value === 'cls' && rows.pooling.source.includes('1_Pooling/config.json pooling_mode_cls_token') &&
        rows.normalize.value === 'true' && rows.normalize.source.includes('2_Normalize') &&
        rows.model_file.value === 'onnx/model.onnx' && rows.max_length.value === '64' &&
        rows.max_length.source === 'sentence_bert_config.json max_seq_length' && rows.prompts.value === 'query' &&
        rows.similarity.source.includes('similarity_fn_name') && Object.values(rows).every((r) => !r.risk),
        `explain ${bge}: pooling/normalize/model_file/max_length/prompts/similarity from the files, nothing undeclared ${JSON.stringify(rows).slice(0, 300)}`);
  rows = explainRows(path.join(ST, 'st_mean'));
  check(!rows.error && rows.model_file.source.includes('onnx/model_quantized.onnx') &&
        rows.model_file.source.includes('onnx/model_qint8_avx512_vnni.onnx') && rows.similarity.value === 'dot',
        `explain st_mean lists the variants it did not choose: ${rows.model_file && rows.model_file.source}`);
  rows = explainRows(path.join(ST, 'st_mean'), ['--model-file', 'onnx/model_quantized.onnx']);
  check(!rows.error && rows.model_file.value === 'onnx/model_quantized.onnx' && rows.model_file.source === 'flag --model-file',
        'explain --model-file records the flag as the source');
  rows = explainRows(path.join(ST, 'st_dense_normalize'));
  check(!rows.error && rows.dense && rows.dense.value.includes('3_Dense: 16 -> 12, identity, no bias'),
        `explain shows the Dense chain: ${rows.dense && rows.dense.value}`);

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox_st_'));
  try {
    // a directory without the sentence-transformers files: the old default, declared with its risk
    const bare = copyDir(path.join(ST, bge), path.join(tmp, 'bare'), (d) => {
      for (const f of ['modules.json', '1_Pooling', '2_Normalize', 'config_sentence_transformers.json', 'sentence_bert_config.json'])
        fs.rmSync(path.join(d, f), { recursive: true });
    });
    rows = explainRows(bare);
    check(!rows.error && rows.pooling.value === 'mean' && rows.pooling.risk && rows.normalize.risk,
          'no declaration anywhere: pooling mean and normalize false carry their risk');
    let r = glassbox(['explain', bare]);
    check(r.status === 0 && /UNDECLARED[^]*! pooling = mean[^]*risk: /.test(r.stdout), 'explain text shows the undeclared pooling prominently');
    // glassbox.json wins over the files, and says what it overrides
    const over = copyDir(path.join(ST, bge), path.join(tmp, 'over'), (d) =>
      fs.writeFileSync(path.join(d, 'glassbox.json'), JSON.stringify({ pooling: 'mean' })));
    rows = explainRows(over);
    check(!rows.error && rows.pooling.value === 'mean' && rows.pooling.source.startsWith('glassbox.json (over 1_Pooling'),
          `glassbox.json pooling overrides 1_Pooling: ${rows.pooling && rows.pooling.source}`);

    // 4. loud paths
    const refused = (what, dir, needles, args = ['embed', dir, 'hello']) => {
      const res = glassbox(args);
      const ok = res.status !== 0 && needles.every((n) => res.stderr.includes(n)) && res.stdout === '';
      check(ok, `${what}: ${res.stderr.trim()}`);
    };
    refused('unknown pooling field', copyDir(path.join(ST, 'st_mean'), path.join(tmp, 'pool_unknown'), (d) =>
      editJson(path.join(d, '1_Pooling', 'config.json'), (j) => { j.pooling_mode_median_tokens = true; })), ['pooling_mode_median_tokens']);
    refused('no pooling mode', copyDir(path.join(ST, 'st_mean'), path.join(tmp, 'pool_none'), (d) =>
      editJson(path.join(d, '1_Pooling', 'config.json'), (j) => { j.pooling_mode_mean_tokens = false; })), ['no pooling_mode']);
    refused('unknown module type', copyDir(path.join(ST, 'st_mean'), path.join(tmp, 'module_unknown'), (d) =>
      editJson(path.join(d, 'modules.json'), (j) => {
        j.push({ idx: 2, name: '2', path: '2_WordWeights', type: 'sentence_transformers.models.WordWeights' });
      })), ['sentence_transformers.models.WordWeights']);
    refused('custom module', copyDir(path.join(ST, 'st_mean'), path.join(tmp, 'module_custom'), (d) =>
      editJson(path.join(d, 'modules.json'), (j) => { j[1].type = 'my_package.MyPooling'; })), ['my_package.MyPooling']);
    refused('unknown Dense activation', copyDir(path.join(ST, 'st_dense_normalize'), path.join(tmp, 'act'), (d) =>
      editJson(path.join(d, '2_Dense', 'config.json'), (j) => { j.activation_function = 'torch.nn.modules.activation.Softsign'; })),
    ['torch.nn.modules.activation.Softsign']);
    refused('pickled Dense weights', copyDir(path.join(ST, 'st_dense_normalize'), path.join(tmp, 'pickle'), (d) =>
      fs.renameSync(path.join(d, '2_Dense', 'model.safetensors'), path.join(d, '2_Dense', 'pytorch_model.bin'))), ['pytorch_model.bin']);
    refused('truncated safetensors', copyDir(path.join(ST, 'st_dense_normalize'), path.join(tmp, 'trunc'), (d) => {
      const f = path.join(d, '2_Dense', 'model.safetensors');
      fs.truncateSync(f, fs.statSync(f).size - 4);
    }), ['model.safetensors', 'data_offsets']);
    refused('Dense weights of the wrong shape', copyDir(path.join(ST, 'st_dense_normalize'), path.join(tmp, 'shape'), (d) =>
      editJson(path.join(d, '2_Dense', 'config.json'), (j) => { j.out_features = 15; })), ['linear.weight must be [15, 32]']);
    refused('unknown prompt_name', path.join(ST, bge), ["prompt_name 'passage' is not declared", 'query'],
            ['embed', path.join(ST, bge), '--prompt-name', 'passage', 'hello']);
    refused('dimensions over the size', path.join(ST, bge), ['dimensions 64'],
            ['embed', path.join(ST, bge), '--dimensions', '64', 'hello']);

    // the Optimum-layout classify bug: a directory is the model, never a text
    const cls = path.join(ROOT, 'tests', 'data', 'generated', 'bert_tiny_cls_op14.onnx');
    const optimum = path.join(tmp, 'optimum_cls');
    fs.mkdirSync(path.join(optimum, 'onnx'), { recursive: true });
    fs.copyFileSync(cls, path.join(optimum, 'onnx', 'model.onnx'));
    fs.copyFileSync(path.join(ST, bge, 'tokenizer.json'), path.join(optimum, 'tokenizer.json'));
    fs.writeFileSync(path.join(optimum, 'config.json'), JSON.stringify({
      id2label: { 0: 'negative', 1: 'neutral', 2: 'positive' }, max_position_embeddings: 128 }));
    r = glassbox(['classify', optimum, 'a fox is an animal']);
    const res = r.status === 0 ? jsonl(r.stdout) : [];
    check(res.length === 1 && res[0].text === 'a fox is an animal',
          `classify OPTIMUM_DIR "a fox is an animal": one result for the one text (${r.stdout.trim().slice(0, 120)} ${r.stderr.trim()})`);
    r = glassbox(['embed', path.join(ST, 'st_mean'), 'a fox is an animal', 'hello world']);
    check(r.status === 0 && jsonl(r.stdout).length === 2, 'embed ST_DIR with two texts: two vectors');
    const empty = path.join(tmp, 'no_model');
    fs.mkdirSync(empty);
    fs.copyFileSync(path.join(ST, bge, 'tokenizer.json'), path.join(empty, 'tokenizer.json'));
    for (const verb of ['classify', 'embed', 'explain'])
      refused(`${verb} on a directory without a model`, empty, ['model.onnx', 'onnx/model.onnx', 'onnx/model_*.onnx'],
              verb === 'explain' ? ['explain', empty] : [verb, empty, 'a fox is an animal']);
    refused('a directory given twice', empty, ['two model directories'], ['classify', '--model', optimum, empty, 'text']);
    const variants = copyDir(path.join(ST, 'st_mean'), path.join(tmp, 'variants_only'), (d) => fs.rmSync(path.join(d, 'onnx', 'model.onnx')));
    refused('only quantized variants, no declaration', variants,
            ['onnx/model_qint8_avx512_vnni.onnx', 'onnx/model_quantized.onnx', '--model-file']);
    fs.writeFileSync(path.join(variants, 'glassbox.json'), JSON.stringify({ model_file: 'onnx/model_quantized.onnx' }));
    rows = explainRows(variants);
    check(!rows.error && rows.model_file.value === 'onnx/model_quantized.onnx' && rows.model_file.source.startsWith('glassbox.json'),
          'glassbox.json model_file declares the variant');
    refused('a declared file that is missing', variants, ["model file 'onnx/model_int8.onnx'"],
            ['embed', variants, '--model-file', 'onnx/model_int8.onnx', 'hello']);
    refused('a declared file outside the directory', variants, ['not a path inside the model directory'],
            ['embed', variants, '--model-file', '../st_mean/onnx/model.onnx', 'hello']);

    // 5. served as published: `glassbox serve` on the same directories (TEI /embed and /info, OIP metadata for an
    // Optimum-layout tensor model: onnx/model.onnx and no tokenizer)
    await serveChecks(bge, vectors[bge], optimum, tmp);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  console.log(checker.failures ? `${checker.failures} check(s) failed` : 'all sentence-transformers layout checks passed');
  process.exit(checker.failures ? 1 : 0);
}

main().catch((e) => { console.error(e.stack || e); process.exit(1); });
