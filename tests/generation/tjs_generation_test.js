#!/usr/bin/env node
// transformers.js 4.3.2 `pipeline('text-generation')` against `glassbox generate` on the same model directories
// (issue 28's evidence): the tiny decoders of scripts/make_decoder_models.py in Optimum's current layout
// (llama_tiny: Qwen3 tokenizer, an EOS list; gpt2_tiny) and the legacy merged layout (llama_tiny_merged), given to
// transformers.js as its repos lay them out (onnx/model.onnx, local files only).
//  1. Same max_new_tokens, greedy on both sides: the generated text is identical.
//  2. Defaults (no generation argument at all): the test reports each policy field where transformers.js's resolved
//     GenerationConfig (with its pipeline's default max_new_tokens) differs from the policy glassbox declares
//     (`generate --explain`, each value with its source), and what transformers.js does with its defaults when they
//     run past the model's context (glassbox caps its default there, declared).
// Usage: node tjs_generation_test.js GLASSBOX_CLI DECODER_MODELS_DIR
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');

const ROOT = path.resolve(__dirname, '..', '..');
const [CLI, MODELS] = process.argv.slice(2);
const PROMPTS = ['The quick brown fox jumps over the lazy dog.', 'Once upon a time', 'Grüße aus Köln — 東京'];
const NEW_TOKENS = 12;
let failures = 0;

function check(cond, what) {
  if (!cond) { failures += 1; console.error(`FAIL ${what}`); } else console.log(`ok   ${what}`);
}

function glassbox(dir, args) {
  const out = execFileSync(CLI, ['generate', dir, ...args], { encoding: 'utf8', maxBuffer: 1 << 26,
    env: { ...process.env, ASAN_OPTIONS: process.env.ASAN_OPTIONS || 'detect_leaks=0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  return out;
}

// transformers.js reads onnx/model.onnx: a directory of links, the decoder file linked there under that name.
function tjsLayout(src, tmp) {
  src = path.resolve(src);  // the links must not be relative to the working directory
  const name = path.basename(src);
  const dst = path.join(tmp, name);
  fs.mkdirSync(path.join(dst, 'onnx'), { recursive: true });
  for (const f of fs.readdirSync(src)) {
    if (f.endsWith('.json')) fs.symlinkSync(path.join(src, f), path.join(dst, f));
    if (f.endsWith('.onnx')) fs.symlinkSync(path.join(src, f), path.join(dst, 'onnx', 'model.onnx'));
  }
  return dst;
}

function policyDifferences(explain, config, promptTokens) {
  const p = explain.policy;
  const tjsMaxNew = config.max_new_tokens ?? Math.max(0, config.max_length - promptTokens);
  const tjsEos = [].concat(config.eos_token_id ?? []);
  const rows = [
    ['max_new_tokens', p.max_new_tokens.value, tjsMaxNew, p.max_new_tokens.source,
      config.max_new_tokens == null ? `max_length ${config.max_length} - ${promptTokens} prompt tokens` : 'max_new_tokens'],
    ['do_sample', p.do_sample.value, Boolean(config.do_sample), p.do_sample.source, 'do_sample'],
    ['temperature', p.temperature.value, config.temperature, p.temperature.source, 'temperature'],
    ['top_k', p.top_k.value, config.top_k, p.top_k.source, 'top_k (used only when sampling)'],
    ['top_p', p.top_p.value, config.top_p, p.top_p.source, 'top_p'],
    ['repetition_penalty', p.repetition_penalty.value, config.repetition_penalty, p.repetition_penalty.source, 'repetition_penalty'],
    ['stop_token_ids', JSON.stringify([...p.stop_token_ids.value].sort()), JSON.stringify([...tjsEos].sort()),
      p.stop_token_ids.source, 'eos_token_id'],
  ];
  return rows.filter(([, g, t]) => String(g) !== String(t));
}

async function main() {
  const T = await import(path.join(ROOT, '.peers', 'node_modules', '@huggingface', 'transformers', 'dist', 'transformers.node.mjs'));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox-tjs-gen-'));
  try {
    T.env.allowRemoteModels = false;
    T.env.localModelPath = tmp;
    for (const model of ['llama_tiny', 'gpt2_tiny', 'llama_tiny_merged']) {
      const src = path.join(MODELS, model);
      const dir = tjsLayout(src, tmp);
      const generator = await T.pipeline('text-generation', model, { dtype: 'fp32',
        session_options: { intraOpNumThreads: 1, interOpNumThreads: 1 } });
      // 1. same max_new_tokens, greedy
      for (const prompt of PROMPTS) {
        const g = JSON.parse(glassbox(src, ['--json', '--greedy', '--max-new-tokens', String(NEW_TOKENS), '--threads', '1', prompt])
          .split('\n').find((l) => l.startsWith('{')));
        const t = await generator(prompt, { max_new_tokens: NEW_TOKENS, do_sample: false, return_full_text: false });
        check(g.text === t[0].generated_text,
          `${model} ${JSON.stringify(prompt)}: same greedy text (${g.usage.completion_tokens} tokens, finish ${g.finish_reason})` +
          (g.text === t[0].generated_text ? '' : `\n     glassbox     ${JSON.stringify(g.text)}\n     transformers ${JSON.stringify(t[0].generated_text)}`));
      }
      // 2. defaults on both sides: the resolved configurations compared field by field (transformers.js: the
      //    model's GenerationConfig as generate() builds it, with the pipeline's own default max_new_tokens)
      const prompt = PROMPTS[1];
      const explain = JSON.parse(glassbox(src, ['--explain']));
      const promptTokens = (await generator.tokenizer(prompt)).input_ids.dims[1];
      const config = generator.model._prepare_generation_config(null, generator._default_generation_config ?? {});
      const diffs = policyDifferences(explain, config, promptTokens);
      for (const [field, g, t, gsrc, tsrc] of diffs) {
        console.log(`     default differs: ${model} ${field}: glassbox ${g} (${gsrc}) vs transformers.js ${t} (${tsrc})`);
      }
      check(diffs.every(([, , , gsrc]) => typeof gsrc === 'string' && gsrc.length > 0),
        `${model} defaults: ${diffs.length} field(s) differ, each glassbox value with its declared source`);
      const context = explain.policy.max_context.value;
      const tjsNew = config.max_new_tokens ?? config.max_length - promptTokens;
      if (promptTokens + tjsNew > context) {
        // glassbox caps its default at the context left (declared); transformers.js does not look at the context
        let outcome;
        const quiet = console.error;
        console.error = () => {};  // transformers.js prints every input tensor when a run fails
        try {
          const t = (await generator(prompt, { return_full_text: false }))[0].generated_text;
          outcome = `ran (${t.length} chars)`;
        } catch (e) {
          outcome = `failed: ${String(e.message || e).split('\n')[0].slice(0, 160)}`;
        } finally {
          console.error = quiet;
        }
        console.log(`     ${model}: prompt ${promptTokens} + transformers.js's default ${tjsNew} new tokens > max_context ` +
                    `${context}; glassbox's default is ${explain.policy.max_new_tokens.value} capped at ${context - promptTokens}` +
                    ` (${explain.policy.max_new_tokens.source}); transformers.js with its defaults ${outcome}`);
      }
      await generator.dispose();
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  if (failures) { console.error(`${failures} check(s) failed`); process.exit(1); }
  console.log('all checks passed');
}

module.exports = { tjsLayout };  // trained_text_test.js lays llama_text out the same way

if (require.main === module) main().catch((e) => { console.error(e.stack || e); process.exit(1); });
