#!/usr/bin/env node
// Helper for train.py: tokenize one text per line with the npm `tokenizers`
// binding (no special tokens, no truncation) and write the ids, space-separated,
// one line per input line.
//   node models/langid/encode.js tokenizer.json in.txt out.txt
'use strict';
const fs = require('fs');
const path = require('path');
const tk = require(path.resolve(__dirname, '../../.peers/node_modules/tokenizers'));

(async () => {
  const [tokFile, inFile, outFile] = process.argv.slice(2);
  const t = tk.Tokenizer.fromFile(tokFile);
  t.disableTruncation();
  t.disablePadding();
  const lines = fs.readFileSync(inFile, 'utf8').split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  const out = fs.openSync(outFile, 'w');
  const CH = 2000;
  for (let i = 0; i < lines.length; i += CH) {
    const encs = await t.encodeBatch(lines.slice(i, i + CH), { addSpecialTokens: false });
    fs.writeSync(out, encs.map((e) => e.getIds().join(' ')).join('\n') + '\n');
  }
  fs.closeSync(out);
})();
