#!/usr/bin/env node
// The engine on a model whose greedy output is text (issue #28): llama_text, the Llama-style decoder that
// scripts/train_decoder.py trains briefly on the license texts of /usr/share/common-licenses with a real
// byte-level BPE tokenizer (ctest fixture generation_trained_model).
//  (a) `glassbox generate --greedy` gives the same text as transformers.js 4.3.2 pipeline('text-generation')
//      (do_sample false) at the same max_new_tokens, on the model laid out as transformers.js reads it.
//  (b) That text is text, not noise: of its whitespace-separated words (lowercased, ASCII punctuation removed,
//      empty ones dropped; when generation stopped at max_new_tokens with no whitespace after the last word, that
//      word, which may be cut, is not counted) at least 8 exist and >= 90 % occur as words of the training corpus
//      (the files train_report.json lists).
//  (c) Not a loop: no sequence of 3 words occurs 3 or more times in it. (b) alone passes a model trained for 30
//      steps (loss 5.0), whose greedy output is ", and the Library, and the Library, and the Library, ...": every
//      word is a corpus word. (c) fails it.
//  Control: llama_text_untrained (the same model at its seeded initialisation) must FAIL (b) on every prompt,
//  so (b) can fail; its fraction is printed.
// Usage: node trained_text_test.js GLASSBOX_CLI DECODER_MODELS_DIR
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
const { tjsLayout } = require('./tjs_generation_test.js');

const ROOT = path.resolve(__dirname, '..', '..');
const [CLI, MODELS] = process.argv.slice(2);
const PROMPTS = ['This program is free software', 'You may not use this file except'];
const NEW_TOKENS = 24;
const MIN_WORDS = 8;
const MIN_FRACTION = 0.9;
let failures = 0;

function check(cond, what) {
  if (!cond) { failures += 1; console.error(`FAIL ${what}`); } else console.log(`ok   ${what}`);
}

const PUNCT = /[!-\/:-@\[-`{-~]/g;  // ASCII punctuation: string.punctuation
const words = (text) => text.split(/\s+/).map((w) => w.toLowerCase().replace(PUNCT, '')).filter((w) => w.length);

function glassbox(dir, prompt) {
  const out = execFileSync(CLI, ['generate', dir, '--json', '--greedy', '--max-new-tokens', String(NEW_TOKENS),
    '--threads', '1', prompt], { encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ASAN_OPTIONS: process.env.ASAN_OPTIONS || 'detect_leaks=0' } });
  return JSON.parse(out.split('\n').find((l) => l.startsWith('{')));
}

// (c): the most frequent 3-word sequence and its count
function mostRepeated(text) {
  const w = words(text), count = new Map();
  let best = ['', 0];
  for (let i = 0; i + 3 <= w.length; ++i) {
    const k = w.slice(i, i + 3).join(' '), n = (count.get(k) || 0) + 1;
    count.set(k, n);
    if (n > best[1]) best = [k, n];
  }
  return best;
}

// (b): {n, known, fraction, ok, unknown}
function textCheck(result, corpusWords) {
  let w = words(result.text);
  if (result.finish_reason === 'length' && !/\s$/.test(result.text)) w = w.slice(0, -1);  // may be cut mid-word
  const unknown = w.filter((x) => !corpusWords.has(x));
  const fraction = w.length ? (w.length - unknown.length) / w.length : 0;
  return { n: w.length, known: w.length - unknown.length, fraction, ok: w.length >= MIN_WORDS && fraction >= MIN_FRACTION,
           unknown };
}

async function main() {
  const trained = path.join(MODELS, 'llama_text');
  const untrained = path.join(MODELS, 'llama_text_untrained');
  const report = JSON.parse(fs.readFileSync(path.join(trained, 'train_report.json'), 'utf8'));
  const corpusWords = new Set(report.corpus.flatMap((f) => words(fs.readFileSync(f, 'utf8'))));
  console.log(`     llama_text: ${report.steps} steps, final training loss ${report.final_loss_last20}; corpus ` +
              `${report.corpus.length} files, ${corpusWords.size} distinct words`);
  const T = await import(path.join(ROOT, '.peers', 'node_modules', '@huggingface', 'transformers', 'dist', 'transformers.node.mjs'));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox-trained-text-'));
  try {
    T.env.allowRemoteModels = false;
    T.env.localModelPath = tmp;
    tjsLayout(trained, tmp);
    const generator = await T.pipeline('text-generation', 'llama_text', { dtype: 'fp32',
      session_options: { intraOpNumThreads: 1, interOpNumThreads: 1 } });
    for (const prompt of PROMPTS) {
      const g = glassbox(trained, prompt);
      const t = (await generator(prompt, { max_new_tokens: NEW_TOKENS, do_sample: false, return_full_text: false }))[0];
      console.log(`     ${JSON.stringify(prompt)} -> ${JSON.stringify(g.text)}`);
      check(g.text === t.generated_text,
        `llama_text ${JSON.stringify(prompt)}: glassbox == transformers.js greedy text (${g.usage.completion_tokens} tokens, ` +
        `finish ${g.finish_reason})` +
        (g.text === t.generated_text ? '' : `\n     transformers ${JSON.stringify(t.generated_text)}`));
      const c = textCheck(g, corpusWords);
      check(c.ok, `llama_text ${JSON.stringify(prompt)}: text, not noise: ${c.known}/${c.n} words ` +
        `(${(100 * c.fraction).toFixed(1)} %) occur in the corpus (need >= ${MIN_WORDS} words, >= ${100 * MIN_FRACTION} %)` +
        (c.unknown.length ? `; not in it: ${JSON.stringify(c.unknown)}` : ''));
      const [seq, n] = mostRepeated(g.text);
      check(n < 3, `llama_text ${JSON.stringify(prompt)}: not a loop: the most repeated 3 words occur ${n} time(s)` +
        (n ? ` (${JSON.stringify(seq)})` : ''));
    }
    await generator.dispose();
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  // the control: the same check must fail on the untrained model
  for (const prompt of PROMPTS) {
    const g = glassbox(untrained, prompt);
    const c = textCheck(g, corpusWords);
    console.log(`     untrained ${JSON.stringify(prompt)} -> ${JSON.stringify(g.text)}`);
    check(!c.ok, `llama_text_untrained ${JSON.stringify(prompt)}: the text check fails (control): ${c.known}/${c.n} ` +
      `words (${(100 * c.fraction).toFixed(1)} %) occur in the corpus`);
  }
  if (failures) { console.error(`${failures} check(s) failed`); process.exit(1); }
  console.log('all checks passed');
}

main().catch((e) => { console.error(e.stack || e); process.exit(1); });
