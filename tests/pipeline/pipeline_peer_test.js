#!/usr/bin/env node
// Pipelines against the peers: the scores / vectors printed by `glassbox classify` and
// `glassbox embed` must equal running the same model.onnx in onnxruntime-node 1.30.0 on the
// ids produced by the npm `tokenizers` 0.23.2 peer (batch of 1, no padding), within 1e-4.
//   1. models/langid (byte-level BPE, 24 labels), texts in many languages + one over max_length
//      (glassbox.json declares longest_first truncation: the tokens dropped must match the peer's).
//   2. bert_tiny_cls_op14.onnx (tests/data/generated, scripts/make_test_models.py) with a WordPiece
//      tokenizer trained here by the peer on tests/data/tokenizer/corpus (cut to the model's 1000
//      rows), text pairs included (token_type_ids); no glassbox.json, everything derived.
//   3. bert_tiny_op14.onnx as an embedding model: mean / cls (+normalize) / none (pooler_output).
//   4. loud paths through the CLI: overlong input without a policy, the full peer-trained
//      vocabulary (> embedding rows) at load.
// Usage: node tests/pipeline/pipeline_peer_test.js GLASSBOX_BINARY
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');

const ROOT = path.resolve(__dirname, '..', '..');
const peer = require(path.join(ROOT, 'tests', 'common', 'peer_helpers.js'));
const PEERS = path.join(ROOT, '.peers', 'node_modules');
const tk = require(path.join(PEERS, 'tokenizers'));
const { runOrt } = require(path.join(ROOT, 'scripts', 'parity', 'run_ort.js'));

const TOLERANCE = 1e-4;
const GLASSBOX = process.argv[2];
const GENERATED = path.join(ROOT, 'tests', 'data', 'generated');
const checker = peer.checker();
const glassbox = (args, stdin) => peer.runCli(GLASSBOX, args, stdin);
const { jsonl } = peer;
const check = checker.check;

function softmax(v) {
  const m = Math.max(...v);
  const e = v.map((x) => Math.exp(x - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
}

// Runs one encoding (batch of 1) through ORT; feeds only the inputs the model declares.
async function ortRun(model, enc) {
  const n = enc.ids.length;
  const all = {
    input_ids: BigInt64Array.from(enc.ids.map(BigInt)),
    attention_mask: BigInt64Array.from(enc.mask.map(BigInt)),
    token_type_ids: BigInt64Array.from(enc.types.map(BigInt)),
  };
  const ort = require(path.join(PEERS, 'onnxruntime-node'));
  const s = await ort.InferenceSession.create(model);
  const names = s.inputNames;
  await s.release();
  const inputs = {};
  for (const name of names) inputs[name] = { type: 'int64', dims: [1, n], data: all[name] };
  return runOrt(model, inputs);
}

async function peerEncode(tok, text, pair) {
  const e = await tok.encode(text, pair === undefined ? null : pair);
  return { ids: e.getIds(), mask: e.getAttentionMask(), types: e.getTypeIds() };
}

// Compares `glassbox classify DIR --top-k all` with ORT on peer ids, text by text.
async function compareClassify(name, dir, labels, items, extraArgs = []) {
  const tok = tk.Tokenizer.fromFile(path.join(dir, 'tokenizer.json'));
  const stdin = items.map((it) => JSON.stringify(it.pair === undefined ? { text: it.text } : it)).join('\n') + '\n';
  const r = glassbox(['classify', dir, '--top-k', String(labels.length), ...extraArgs], stdin);
  if (r.status !== 0) return check(false, `${name}: glassbox classify failed: ${r.stderr}`);
  const got = jsonl(r.stdout);
  check(got.length === items.length, `${name}: ${got.length} results for ${items.length} texts`);
  let worst = 0;
  for (let i = 0; i < items.length && i < got.length; ++i) {
    const enc = await peerEncode(tok, items[i].text, items[i].pair);
    const outs = await ortRun(path.join(dir, 'model.onnx'), enc);
    const ref = softmax(Array.from(outs.find((o) => o.name === 'logits').data));
    const scores = Object.fromEntries(got[i].labels.map((l) => [l.label, l.score]));
    let diff = 0;
    labels.forEach((l, k) => { diff = Math.max(diff, Math.abs((scores[l] ?? Infinity) - ref[k])); });
    worst = Math.max(worst, diff);
    const refTop = labels[ref.indexOf(Math.max(...ref))];
    const okTokens = got[i].tokens === enc.ids.length;
    if (diff > TOLERANCE || !okTokens || got[i].label !== refTop)
      check(false, `${name}: text ${i} ${JSON.stringify(items[i].text).slice(0, 40)}: max|score diff| ${diff.toExponential(2)}, ` +
            `tokens ${got[i].tokens} vs peer ${enc.ids.length}, label ${got[i].label} vs ${refTop}`);
    if (items[i].dropped !== undefined)
      check(got[i].tokens_dropped === items[i].dropped,
            `${name}: text ${i} tokens_dropped ${got[i].tokens_dropped} == peer ${items[i].dropped}`);
  }
  check(worst <= TOLERANCE, `${name}: ${items.length} texts, every label's score within ${TOLERANCE} of ORT (max ${worst.toExponential(2)})`);
  return got;
}

function writeDir(dir, files) {
  fs.mkdirSync(dir, { recursive: true });
  for (const [f, v] of Object.entries(files)) {
    if (typeof v === 'string' && v.endsWith('.onnx')) fs.copyFileSync(v, path.join(dir, f));
    else fs.writeFileSync(path.join(dir, f), typeof v === 'string' ? v : JSON.stringify(v, null, 2));
  }
}

// WordPiece trained by the peer; keep = null keeps the whole trained vocabulary.
function trainWordPiece(outFile, keep) {
  const t = new tk.Tokenizer(tk.WordPiece.empty());
  t.setNormalizer(tk.bertNormalizer({ lowercase: true }));
  t.setPreTokenizer(tk.bertPreTokenizer());
  const corpus = path.join(ROOT, 'tests', 'data', 'tokenizer', 'corpus');
  t.train(['en.txt', 'de.txt', 'fr.txt'].map((f) => path.join(corpus, f)));
  const specials = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
  const learned = Object.entries(t.getVocab()).sort((a, b) => a[1] - b[1]).map(([w]) => w)
    .filter((w) => !specials.includes(w));
  const words = specials.concat(keep ? learned.slice(0, keep - specials.length) : learned);
  const vocab = Object.fromEntries(words.map((w, i) => [w, i]));
  const out = new tk.Tokenizer(tk.WordPiece.init(vocab, { unkToken: '[UNK]', continuingSubwordPrefix: '##' }));
  out.setNormalizer(tk.bertNormalizer({ lowercase: true }));
  out.setPreTokenizer(tk.bertPreTokenizer());
  out.setPostProcessor(tk.bertProcessing(['[SEP]', vocab['[SEP]']], ['[CLS]', vocab['[CLS]']]));
  out.setDecoder(tk.wordPieceDecoder('##'));
  out.addSpecialTokens(specials);
  out.save(outFile);
  return words.length;
}

const L2 = (v) => Math.sqrt(v.reduce((a, b) => a + b * b, 0));

async function main() {
  if (!GLASSBOX) throw new Error('usage: pipeline_peer_test.js GLASSBOX_BINARY');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox_pipeline_peer_'));
  try {
    // ---- 1. the embedded language-ID model
    const langid = path.join(ROOT, 'models', 'langid');
    const gb = JSON.parse(fs.readFileSync(path.join(langid, 'glassbox.json'), 'utf8'));
    const long = 'Der schnelle braune Fuchs springt über den faulen Hund. '.repeat(20);
    const ltok = tk.Tokenizer.fromFile(path.join(langid, 'tokenizer.json'));
    ltok.disableTruncation();
    const fullLen = (await ltok.encode(long)).getIds().length;
    const texts = ['Guten Morgen, wie geht es dir?', 'Could you tell me where the station is?',
      '¿Dónde está la estación de tren?', 'Où se trouve la gare ?', 'Dov\'è la stazione?', 'Waar is het station?',
      'Gdzie jest dworzec?', 'Onde fica a estação?', 'Где находится вокзал?', 'Де знаходиться вокзал?',
      '駅はどこですか？', '火车站在哪里？', '기차역이 어디에 있어요?', 'Hol van a vasútállomás?', 'Kde je nádraží?',
      'Var ligger järnvägsstationen?', 'Tren istasyonu nerede?', 'Nhà ga ở đâu?', 'a', '!!!', '12345'];
    const items = texts.map((t) => ({ text: t }));
    items.push({ text: long, dropped: fullLen - gb.max_length });
    check(fullLen > gb.max_length, `langid: long text has ${fullLen} > ${gb.max_length} tokens`);
    await compareClassify('langid', langid, gb.labels, items);

    // ---- 2. BERT-like classifier with a peer-trained WordPiece tokenizer
    const clsModel = path.join(GENERATED, 'bert_tiny_cls_op14.onnx');
    const embModel = path.join(GENERATED, 'bert_tiny_op14.onnx');
    for (const m of [clsModel, embModel])
      if (!fs.existsSync(m)) throw new Error(`${m} is missing: run /usr/bin/python3 scripts/make_test_models.py`);
    const bert = path.join(tmp, 'bert_cls');
    writeDir(bert, {
      'model.onnx': clsModel,
      'config.json': { id2label: { 0: 'negative', 1: 'neutral', 2: 'positive' }, max_position_embeddings: 128 },
    });
    const rows = trainWordPiece(path.join(bert, 'tokenizer.json'), 1000);
    check(rows === 1000, `WordPiece vocabulary cut to the model's 1000 rows (${rows})`);
    const bertItems = [
      { text: 'The quick brown fox jumps over the lazy dog.' }, { text: 'Hello' },
      { text: 'Die Datei wurde nicht gefunden.', pair: 'Le fichier est introuvable.' },
      { text: 'unbelievably unrecognizable words xyzzy', pair: 'a' }, { text: 'ÉCOLE, été, Straße!' },
      { text: 'one two three four five six seven eight nine ten eleven twelve thirteen' }];
    await compareClassify('bert_tiny_cls wordpiece', bert, ['negative', 'neutral', 'positive'], bertItems, ['--batch', '4']);

    // overlong without a policy: the message states the length, the limit and the flag
    const over = 'word '.repeat(200);
    const btok = tk.Tokenizer.fromFile(path.join(bert, 'tokenizer.json'));
    const overLen = (await btok.encode(over)).getIds().length;
    let r = glassbox(['classify', bert, over]);
    check(r.status !== 0 && r.stderr.includes(`${overLen} tokens`) && r.stderr.includes('128') &&
          r.stderr.includes('--truncation'), `overlong input without policy fails loudly: ${r.stderr.trim()}`);
    // the same with a policy: tokens_dropped as the peer's truncation
    btok.setTruncation(128);
    const cut = await btok.encode(over);
    r = glassbox(['classify', bert, '--truncation', 'longest_first', over]);
    const res = r.status === 0 ? jsonl(r.stdout)[0] : {};
    check(res.tokens === cut.getIds().length && res.tokens_dropped === overLen - 128,
          `--truncation longest_first: tokens ${res.tokens}, dropped ${res.tokens_dropped} (peer ${cut.getIds().length}, ${overLen - 128})`);
    // explain MODEL_DIR prints each derived decision with its source
    r = glassbox(['explain', bert]);
    check(r.status === 0 && /max_length = 128 +\[config\.json max_position_embeddings\]/.test(r.stdout) &&
          /task = classify/.test(r.stdout), 'explain MODEL_DIR prints the derivations');
    // empty text
    r = glassbox(['classify', bert, '']);
    check(r.status !== 0 && r.stderr.includes('empty'), `empty text fails loudly: ${r.stderr.trim()}`);

    // the whole peer-trained vocabulary does not fit the 1000-row embedding table: error at load
    const big = path.join(tmp, 'bert_big_vocab');
    writeDir(big, { 'model.onnx': clsModel, 'config.json': { id2label: { 0: 'a', 1: 'b', 2: 'c' }, max_position_embeddings: 128 } });
    const bigRows = trainWordPiece(path.join(big, 'tokenizer.json'), null);
    r = glassbox(['classify', big, 'hello']);
    check(bigRows > 1000 && r.status !== 0 && r.stderr.includes('1000 rows'),
          `tokenizer with ${bigRows} tokens vs 1000-row embedding fails at load: ${r.stderr.trim()}`);
    // a missing file is named
    fs.rmSync(path.join(big, 'config.json'));
    r = glassbox(['classify', big, 'hello']);
    check(r.status !== 0 && r.stderr.includes('config.json'), `missing config.json is named: ${r.stderr.trim()}`);

    // ---- 3. embeddings (pooling per glassbox.json) vs ORT outputs pooled here
    const embTexts = ['The quick brown fox.', 'Hello world', 'Die Datei wurde nicht gefunden, bitte erneut versuchen.'];
    for (const [pooling, normalize] of [['mean', false], ['cls', true], ['none', false]]) {
      const dir = path.join(tmp, `bert_embed_${pooling}`);
      writeDir(dir, {
        'model.onnx': embModel, 'tokenizer.json': fs.readFileSync(path.join(bert, 'tokenizer.json'), 'utf8'),
        'config.json': { max_position_embeddings: 128 },
        'glassbox.json': { task: 'embed', pooling, normalize },
      });
      r = glassbox(['embed', dir, '--batch', '2', ...embTexts]);
      if (r.status !== 0) { check(false, `embed ${pooling}: ${r.stderr}`); continue; }
      const got = jsonl(r.stdout);
      let worst = 0;
      for (let i = 0; i < embTexts.length; ++i) {
        const enc = await peerEncode(btok, embTexts[i]);
        const outs = await ortRun(embModel, enc);
        const hs = outs.find((o) => o.name === 'last_hidden_state');
        const H = hs.dims[2], T = hs.dims[1];
        let ref = new Array(H).fill(0);
        if (pooling === 'none') ref = Array.from(outs.find((o) => o.name === 'pooler_output').data);
        else if (pooling === 'cls') ref = Array.from(hs.data.slice(0, H));
        else for (let t = 0; t < T; ++t) for (let h = 0; h < H; ++h) ref[h] += hs.data[t * H + h] / T;
        if (normalize) { const n = L2(ref); ref = ref.map((x) => x / n); }
        const v = got[i].vector;
        check(v.length === H, `embed ${pooling}: text ${i} vector length ${v.length} == ${H}`);
        for (let h = 0; h < H; ++h) worst = Math.max(worst, Math.abs(v[h] - ref[h]));
      }
      check(worst <= TOLERANCE, `embed ${pooling}${normalize ? ' + normalize' : ''}: vectors within ${TOLERANCE} of ORT (max ${worst.toExponential(2)})`);
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  console.log(checker.failures ? `${checker.failures} check(s) failed` : 'all pipeline peer checks passed');
  process.exit(checker.failures ? 1 : 0);
}

main().catch((e) => { console.error(e.stack || e); process.exit(1); });
