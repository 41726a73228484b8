// Trains the small tokenizer.json files used by the golden tests with the official
// Node binding (tokenizers@0.23.2), then sets their pipeline components explicitly.
// Usage: node scripts/tokenizer/train.js   (writes tests/data/tokenizer/models/*.json)
const path = require('path');
const fs = require('fs');
const root = path.resolve(__dirname, '../..');
const tk = require(path.join(root, '.peers/node_modules/tokenizers'));
const corpusDir = path.join(root, 'tests/data/tokenizer/corpus');
const outDir = path.join(root, 'tests/data/tokenizer/models');
fs.mkdirSync(outDir, { recursive: true });
const files = fs.readdirSync(corpusDir).filter((f) => f.endsWith('.txt')).map((f) => path.join(corpusDir, f));

function finish(name, tok, patch) {
  const j = JSON.parse(tok.toString ? tok.toString() : '{}');
  patch(j);
  const s = JSON.stringify(j);
  tk.Tokenizer.fromString(s);  // the peer must accept what we write
  fs.writeFileSync(path.join(outDir, name + '.json'), JSON.stringify(j, null, 1));
  console.error(name, s.length, 'bytes');
}

function trained(model, normalizer, pre) {
  const t = new tk.Tokenizer(model);
  if (normalizer) t.setNormalizer(normalizer);
  if (pre) t.setPreTokenizer(pre);
  t.train(files);
  const tmp = path.join(outDir, '.tmp.json');
  t.save(tmp);
  const j = JSON.parse(fs.readFileSync(tmp, 'utf8'));
  fs.unlinkSync(tmp);
  return j;
}

function addSpecials(j, specials) {
  // specials go at the end of the model vocabulary and are declared as added tokens
  const vocab = j.model.vocab;
  const isArr = Array.isArray(vocab);
  let next = isArr ? vocab.length : Object.keys(vocab).length;
  const ids = {};
  for (const s of specials) {
    if (isArr) { ids[s] = vocab.length; vocab.push([s, 0.0]); }
    else if (vocab[s] === undefined) { ids[s] = next; vocab[s] = next++; } else ids[s] = vocab[s];
  }
  j.added_tokens = specials.map((s) => ({ id: ids[s], content: s, single_word: false, lstrip: s === '<mask>',
    rstrip: false, normalized: false, special: true }));
  return ids;
}

function write(name, j) {
  const s = JSON.stringify(j);
  tk.Tokenizer.fromString(s);
  fs.writeFileSync(path.join(outDir, name + '.json'), s);
  console.error(name, s.length, 'bytes');
}

// BERT uncased: WordPiece + BertNormalizer + BertPreTokenizer + TemplateProcessing
{
  const j = trained(tk.WordPiece.init({ '[UNK]': 0 }, { unkToken: '[UNK]' }), tk.bertNormalizer({ lowercase: true }),
    tk.bertPreTokenizer ? tk.bertPreTokenizer() : tk.whitespaceSplitPreTokenizer());
  const ids = addSpecials(j, ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']);
  j.normalizer = { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true };
  j.pre_tokenizer = { type: 'BertPreTokenizer' };
  j.post_processor = { type: 'TemplateProcessing',
    single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
    pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } },
      { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
    special_tokens: { '[CLS]': { id: '[CLS]', ids: [ids['[CLS]']], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [ids['[SEP]']], tokens: ['[SEP]'] } } };
  j.decoder = { type: 'WordPiece', prefix: '##', cleanup: true };
  write('bert-uncased', j);
}
// BERT cased: no lowercase, accents kept, BertProcessing
{
  const j = trained(tk.WordPiece.init({ '[UNK]': 0 }, { unkToken: '[UNK]' }),
    tk.bertNormalizer({ lowercase: false, stripAccents: false }), tk.whitespaceSplitPreTokenizer());
  const ids = addSpecials(j, ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']);
  j.normalizer = { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: false, lowercase: false };
  j.pre_tokenizer = { type: 'BertPreTokenizer' };
  j.post_processor = { type: 'BertProcessing', sep: ['[SEP]', ids['[SEP]']], cls: ['[CLS]', ids['[CLS]']] };
  j.decoder = { type: 'WordPiece', prefix: '##', cleanup: true };
  write('bert-cased', j);
}
// RoBERTa-style byte-level BPE
{
  const j = trained(tk.BPE.empty(), null, tk.byteLevelPreTokenizer(true, true));
  const ids = addSpecials(j, ['<s>', '<pad>', '</s>', '<unk>', '<mask>']);
  j.pre_tokenizer = { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true };
  j.post_processor = { type: 'RobertaProcessing', sep: ['</s>', ids['</s>']], cls: ['<s>', ids['<s>']], trim_offsets: true, add_prefix_space: true };
  j.decoder = { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true };
  write('roberta-bpe', j);
}
// Unigram with NFKC + Metaspace
{
  const j = trained(tk.Unigram.empty(), tk.nfkcNormalizer(), tk.metaspacePreTokenizer());
  const ids = addSpecials(j, ['<unk>', '<s>', '</s>', '<pad>']);
  j.model.unk_id = ids['<unk>'];
  j.normalizer = { type: 'NFKC' };
  j.pre_tokenizer = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true };
  j.post_processor = { type: 'TemplateProcessing',
    single: [{ Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }],
    pair: [{ Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '</s>', type_id: 1 } }],
    special_tokens: { '</s>': { id: '</s>', ids: [ids['</s>']], tokens: ['</s>'] } } };
  j.decoder = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true };
  write('unigram', j);
}
// WordLevel with Whitespace pre-tokenizer, Lowercase + StripAccents normalizers
{
  const j = trained(tk.WordLevel.init({ '<unk>': 0 }, { unkToken: '<unk>' }), null, tk.whitespacePreTokenizer());
  addSpecials(j, ['<unk>', '[CLS]', '[SEP]', '[PAD]']);
  j.normalizer = { type: 'Sequence', normalizers: [{ type: 'NFD' }, { type: 'StripAccents' }, { type: 'Lowercase' }, { type: 'Strip', strip_left: true, strip_right: true }] };
  j.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'Whitespace' }, { type: 'Digits', individual_digits: true }, { type: 'Punctuation', behavior: 'Isolated' }] };
  j.post_processor = { type: 'BertProcessing', sep: ['[SEP]', j.model.vocab['[SEP]']], cls: ['[CLS]', j.model.vocab['[CLS]']] };
  j.decoder = null;
  write('wordlevel', j);
}
