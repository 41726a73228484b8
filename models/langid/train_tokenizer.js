#!/usr/bin/env node
// Train the language-ID tokenizer with the Hugging Face `tokenizers` npm binding.
//
//   node models/langid/train_tokenizer.js [--vocab 8000] [--max-length 128] [--out DIR]
//   (v5: --vocab 260 --max-length 256: the 256 byte symbols and no merges)
//
// Reads models/langid/data/corpus.jsonl (from extract_text.py), keeps only the
// TRAIN pages (same md5-of-page-name split as train.py), takes at most
// --per-lang sentences per language (deterministic order: md5 of the sentence),
// and trains a byte-level BPE:
//   normalizer     NFKC
//   pre_tokenizer  ByteLevel(add_prefix_space=true, trim_offsets=true, use_regex=true)
//   model          BPE (all 256 byte symbols in the vocab, so no [UNK] in practice)
//   post_processor TemplateProcessing  "[CLS] $A [SEP]"
//   decoder        ByteLevel
// Special tokens: [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3.
//
// The npm binding exposes no trainer options (its BPE trainer always targets
// 30000 tokens), so we train with the default trainer and keep only the first
// (vocab - 260) merges: BPE training is greedy, so this prefix is exactly what a
// trainer stopped at the smaller size would have produced.
'use strict';
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const PEERS = path.resolve(__dirname, '../../.peers/node_modules');
const tk = require(path.join(PEERS, 'tokenizers'));

const args = process.argv.slice(2);
function opt(name, def) {
  const i = args.indexOf('--' + name);
  return i >= 0 ? args[i + 1] : def;
}
const VOCAB = parseInt(opt('vocab', '8000'), 10);
const PER_LANG = parseInt(opt('per-lang', '20000'), 10);
// tokenizer.json's declared truncation: the model's max_length (128 for v1-v4, 256 for v5)
const MAX_LENGTH = parseInt(opt('max-length', '128'), 10);
const DATA = opt('data', path.join(__dirname, 'data'));
const OUT = opt('out', __dirname);

const md5 = (s) => crypto.createHash('md5').update(s, 'utf8').digest('hex');
// must match train.py: is_test(page) = int(md5(page)[:8], 16) % 10 == 0
const isTest = (page) => parseInt(md5(page).slice(0, 8), 16) % 10 === 0;

const perLang = {};
for (const line of fs.readFileSync(path.join(DATA, 'corpus.jsonl'), 'utf8').split('\n')) {
  if (!line) continue;
  const rec = JSON.parse(line);
  if (isTest(rec.page)) continue;
  (perLang[rec.lang] = perLang[rec.lang] || []).push(...rec.sents);
}
const lines = [];
for (const lang of Object.keys(perLang).sort()) {
  const s = Array.from(new Set(perLang[lang])).map((x) => [md5(x), x]);
  s.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const take = s.slice(0, PER_LANG).map((x) => x[1]);
  console.error(`${lang}: ${take.length} sentences for tokenizer training`);
  lines.push(...take);
}
const trainFile = path.join(DATA, 'tok_train.txt');
fs.writeFileSync(trainFile, lines.join('\n') + '\n');

const t = new tk.Tokenizer(tk.BPE.empty());
t.setNormalizer(tk.nfkcNormalizer());
t.setPreTokenizer(tk.byteLevelPreTokenizer(true, true));
t.train([trainFile]);
const fullFile = path.join(DATA, 'tok_full.json');
t.save(fullFile, false);
const full = JSON.parse(fs.readFileSync(fullFile, 'utf8'));

const SPECIALS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]'];
const vocab = {};
let next = 0;
for (const s of SPECIALS) vocab[s] = next++;
for (const ch of tk.byteLevelAlphabet().slice().sort()) {
  if (!(ch in vocab)) vocab[ch] = next++;
}
const merges = [];
for (const m of full.model.merges) {
  if (next >= VOCAB) break;
  const [a, b] = Array.isArray(m) ? m : m.split(' ');
  if (!(a in vocab) || !(b in vocab)) throw new Error(`merge ${a} ${b} uses unknown token`);
  merges.push([a, b]);
  if (!((a + b) in vocab)) vocab[a + b] = next++;
}

const json = {
  version: '1.0',
  truncation: { direction: 'Right', max_length: MAX_LENGTH, strategy: 'LongestFirst', stride: 0 },
  padding: null,
  added_tokens: SPECIALS.map((c, i) => ({
    id: i, content: c, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
  })),
  normalizer: { type: 'NFKC' },
  pre_tokenizer: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
  post_processor: {
    type: 'TemplateProcessing',
    single: [
      { SpecialToken: { id: '[CLS]', type_id: 0 } },
      { Sequence: { id: 'A', type_id: 0 } },
      { SpecialToken: { id: '[SEP]', type_id: 0 } },
    ],
    pair: [
      { SpecialToken: { id: '[CLS]', type_id: 0 } },
      { Sequence: { id: 'A', type_id: 0 } },
      { SpecialToken: { id: '[SEP]', type_id: 0 } },
      { Sequence: { id: 'B', type_id: 1 } },
      { SpecialToken: { id: '[SEP]', type_id: 1 } },
    ],
    special_tokens: {
      '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] },
      '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] },
    },
  },
  decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
  model: {
    type: 'BPE', dropout: null, unk_token: '[UNK]', continuing_subword_prefix: null,
    end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, ignore_merges: false,
    vocab, merges,
  },
};
// round-trip through the binding: validates the JSON and writes its canonical form
const final = tk.Tokenizer.fromString(JSON.stringify(json));
final.save(path.join(OUT, 'tokenizer.json'), true);
console.error(`vocab ${Object.keys(vocab).length}, merges ${merges.length} -> ${path.join(OUT, 'tokenizer.json')}`);

(async () => {
  const t2 = tk.Tokenizer.fromFile(path.join(OUT, 'tokenizer.json'));
  for (const s of ['Guten Morgen, wie geht es dir?', '今日はいい天気ですね。', 'Привет, как дела?']) {
    const e = await t2.encode(s);
    console.error(JSON.stringify(s), e.getIds().join(' '), '|', e.getTokens().join(' '));
  }
})();
