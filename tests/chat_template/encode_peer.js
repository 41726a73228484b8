#!/usr/bin/env node
// Prints the ids the npm `tokenizers` peer gives for a prompt file, add_special_tokens=false
// (how a chat-template prompt must be tokenized: the template placed BOS itself).
// Usage: node encode_peer.js TOKENIZER_JSON PROMPT_FILE
'use strict';
const fs = require('fs');
const path = require('path');
const tk = require(path.join(__dirname, '..', '..', '.peers', 'node_modules', 'tokenizers'));

(async () => {
  const tok = tk.Tokenizer.fromFile(process.argv[2]);
  const text = fs.readFileSync(process.argv[3], 'utf8');
  const enc = await tok.encode(text, null, { addSpecialTokens: false });
  process.stdout.write(JSON.stringify(enc.getIds()));
})().catch((e) => { console.error(e); process.exit(1); });
