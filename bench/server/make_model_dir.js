#!/usr/bin/env node
// Builds the serving benchmark's model directory from tests/data/generated/bert_base_cls_op14.onnx
// (scripts/make_test_models.py --only bert_base_cls_op14): a WordPiece tokenizer trained by the HF
// `tokenizers` peer on tests/data/tokenizer/corpus, a BERT config with two labels, and the ONNX file
// both where glassbox reads it (DIR/model.onnx) and where transformers.js does (DIR/onnx/model.onnx,
// a hard link). Usage: node bench/server/make_model_dir.js OUT_DIR [--labels A,B,...] [--model FILE | --no-model]
// (--labels: id2label of config.json, default NEGATIVE,POSITIVE; --no-model writes the tokenizer and configs only,
// for scripts/train_classifier.py, which tokenizes with this tokenizer before it exports the model.)
'use strict';
const fs = require('fs');
const path = require('path');

const ROOT = path.resolve(__dirname, '..', '..');
const tk = require(path.join(ROOT, '.peers', 'node_modules', 'tokenizers'));

const usage = 'usage: make_model_dir.js OUT_DIR [--labels A,B,...] [--model FILE | --no-model]';
const argv = process.argv.slice(2);
const out = argv[0];
if (!out || out.startsWith('--')) throw new Error(usage);
let model = path.join(ROOT, 'tests', 'data', 'generated', 'bert_base_cls_op14.onnx');
let labels = ['NEGATIVE', 'POSITIVE'];
for (let i = 1; i < argv.length; i++) {
  if (argv[i] === '--no-model') model = null;
  else if (argv[i] === '--model' && i + 1 < argv.length) model = argv[++i];
  else if (argv[i] === '--labels' && i + 1 < argv.length) labels = argv[++i].split(',');
  else throw new Error(`unknown argument '${argv[i]}'; ${usage}`);
}
fs.mkdirSync(path.join(out, 'onnx'), { recursive: true });
if (model) {
  for (const dst of [path.join(out, 'model.onnx'), path.join(out, 'onnx', 'model.onnx')]) {
    fs.rmSync(dst, { force: true });
    fs.linkSync(model, dst);
  }
}
const t = new tk.Tokenizer(tk.WordPiece.empty());
t.setNormalizer(tk.bertNormalizer({ lowercase: true }));
t.setPreTokenizer(tk.bertPreTokenizer());
const corpus = path.join(ROOT, 'tests', 'data', 'tokenizer', 'corpus');
t.train(fs.readdirSync(corpus).filter((f) => f.endsWith('.txt')).map((f) => path.join(corpus, f)));
const specials = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
const learned = Object.entries(t.getVocab()).sort((a, b) => a[1] - b[1]).map(([w]) => w).filter((w) => !specials.includes(w));
const words = specials.concat(learned).slice(0, 30522);
const vocab = Object.fromEntries(words.map((w, i) => [w, i]));
const tok = new tk.Tokenizer(tk.WordPiece.init(vocab, { unkToken: '[UNK]', continuingSubwordPrefix: '##' }));
tok.setNormalizer(tk.bertNormalizer({ lowercase: true }));
tok.setPreTokenizer(tk.bertPreTokenizer());
tok.setPostProcessor(tk.bertProcessing(['[SEP]', vocab['[SEP]']], ['[CLS]', vocab['[CLS]']]));
tok.setDecoder(tk.wordPieceDecoder('##'));
tok.addSpecialTokens(specials);
tok.save(path.join(out, 'tokenizer.json'));
fs.writeFileSync(path.join(out, 'config.json'), JSON.stringify({
  architectures: ['BertForSequenceClassification'], model_type: 'bert', vocab_size: 30522, hidden_size: 768,
  num_hidden_layers: 12, num_attention_heads: 12, intermediate_size: 3072, max_position_embeddings: 512,
  type_vocab_size: 2, id2label: Object.fromEntries(labels.map((l, i) => [i, l])),
  label2id: Object.fromEntries(labels.map((l, i) => [l, i])),
}, null, 2));
fs.writeFileSync(path.join(out, 'tokenizer_config.json'), JSON.stringify({
  tokenizer_class: 'BertTokenizer', do_lower_case: true, model_max_length: 512, cls_token: '[CLS]', sep_token: '[SEP]',
  pad_token: '[PAD]', unk_token: '[UNK]', mask_token: '[MASK]',
}, null, 2));
console.log(`wrote ${out} (${words.length} tokens in the vocabulary)`);
