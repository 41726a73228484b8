#!/usr/bin/env node
// Generation routes against real clients and the peer, on a real `glassbox serve` on 127.0.0.1
// serving the tiny decoders of scripts/make_decoder_models.py (llama_tiny: Qwen3 tokenizer and
// chat template; gpt2_tiny: no chat template):
//   1. the `openai` npm client: chat.completions (non-stream; stream with `for await` and
//      stream_options.include_usage), completions, models.list; refusals surface as the SDK's typed
//      errors (BadRequestError with param/code, NotFoundError).
//   2. greedy tokens over HTTP (completions from token ids, temperature 0) equal onnxruntime-node's
//      plain greedy loop on the same model.onnx (tests/generation/decoder_reference.js's runCase).
// Usage: node tests/server/generation_peer_test.js GLASSBOX_BINARY MODELS_DIR
'use strict';
const path = require('path');
const { spawn } = require('child_process');

const ROOT = path.resolve(__dirname, '..', '..');
const peer = require(path.join(ROOT, 'tests', 'common', 'peer_helpers.js'));
const PEERS = path.join(ROOT, '.peers', 'node_modules');
const OpenAI = require(path.join(PEERS, 'openai')).default;
const ort = require(path.join(PEERS, 'onnxruntime-node'));
const { runCase } = require(path.join(ROOT, 'tests', 'generation', 'decoder_reference.js'));

const [GLASSBOX, MODELS] = process.argv.slice(2);
const checker = peer.checker();
const check = checker.check;

async function ortGreedy(dir, prompt, steps) {
  const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), {
    graphOptimizationLevel: 'disabled', intraOpNumThreads: 1, interOpNumThreads: 1,
  });
  // llama_tiny: 2 layers, 2 KV heads, head_dim 8 (config.json)
  const config = require(path.join(dir, 'config.json'));
  const r = await runCase(session, config.num_hidden_layers, config.num_key_value_heads, config.head_dim,
                          { prompts: [prompt], steps });
  await session.release();
  return Array.from(r.tokens, Number);
}

async function expectError(promise, cls, what, pred = () => true) {
  try {
    await promise;
    check(false, `${what}: expected ${cls.name}, the request succeeded`);
  } catch (e) {
    check(e instanceof cls && pred(e), `${what}: ${e.constructor.name} ${e.status} ${JSON.stringify(e.error || {})}`);
  }
}

async function main() {
  const llama = path.join(MODELS, 'llama_tiny');
  const gpt2 = path.join(MODELS, 'gpt2_tiny');
  const { proc, base } = await peer.startServer(GLASSBOX, ['--threads', '1', llama, gpt2], { timeoutMs: 120000 });
  try {
    const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 60000 });

    const models = await client.models.list();
    const ids = models.data.map((m) => m.id).sort();
    check(JSON.stringify(ids) === JSON.stringify(['gpt2_tiny', 'llama_tiny']), `models.list: ${ids}`);

    // Greedy over HTTP == onnxruntime-node's greedy loop, from the same token ids.
    const prompt = [9707, 11, 1879, 0, 3555, 374, 264];
    const steps = 12;
    const peer = await ortGreedy(llama, prompt, steps);
    const comp = await client.completions.create({ model: 'llama_tiny', prompt, max_tokens: steps, temperature: 0 });
    const got = comp.glassbox.ids;
    check(comp.object === 'text_completion' && comp.choices.length === 1, 'completions: shape');
    check(got.length >= 1 && JSON.stringify(got) === JSON.stringify(peer.slice(0, got.length)),
          `completions greedy ids == onnxruntime-node greedy loop: ${got} vs ${peer}`);
    check(comp.choices[0].finish_reason === (got.length === steps ? 'length' : 'stop'), `finish_reason ${comp.choices[0].finish_reason}`);
    check(comp.usage.prompt_tokens === prompt.length && comp.usage.completion_tokens === got.length, 'completions: usage');
    check(comp.glassbox.policy.max_new_tokens.source === 'request' && comp.glassbox.policy.do_sample.value === false,
          'completions: the policy echo names the request as max_new_tokens source, greedy');

    // Chat: non-stream and stream (for await, include_usage) give the same text.
    const messages = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello there, who are you?' }];
    const chat = await client.chat.completions.create({ model: 'llama_tiny', messages, max_tokens: 10, temperature: 0 });
    check(chat.object === 'chat.completion' && chat.choices[0].message.role === 'assistant', 'chat: shape');
    check(typeof chat.choices[0].message.content === 'string' && chat.usage.completion_tokens >= 1, 'chat: content and usage');
    check(chat.system_fingerprint.startsWith('glassbox-') && chat.glassbox.policy.max_new_tokens.value === 10, 'chat: fingerprint, policy');

    const stream = await client.chat.completions.create({ model: 'llama_tiny', messages, max_tokens: 10, temperature: 0,
                                                          stream: true, stream_options: { include_usage: true } });
    let text = '', chunks = 0, role = null, finish = null, usage = null, idsSeen = new Set(), final = null;
    for await (const chunk of stream) {
      chunks += 1;
      idsSeen.add(chunk.id);
      if (chunk.choices.length) {
        const c = chunk.choices[0];
        if (c.delta.role) role = c.delta.role;
        if (c.delta.content) text += c.delta.content;
        if (c.finish_reason) { finish = c.finish_reason; final = chunk; }
      } else if (chunk.usage) {
        usage = chunk.usage;
      }
    }
    check(text === chat.choices[0].message.content, `stream text == non-stream text: ${JSON.stringify(text)}`);
    check(role === 'assistant' && finish === chat.choices[0].finish_reason && idsSeen.size === 1 && chunks >= 3,
          `stream: role first, finish_reason ${finish}, one id, ${chunks} chunks`);
    check(usage && usage.completion_tokens === chat.usage.completion_tokens && usage.prompt_tokens === chat.usage.prompt_tokens,
          'stream: include_usage chunk equals the non-stream usage');
    check(final && final.glassbox && final.glassbox.policy && final.glassbox.ids.length === usage.completion_tokens,
          'stream: the finish chunk carries the glassbox object (policy, ids)');

    // Refusals as the SDK's typed errors.
    await expectError(client.chat.completions.create({ model: 'llama_tiny', messages, n: 2 }), OpenAI.BadRequestError,
                      'n=2 refused by name', (e) => e.param === 'n');
    await expectError(client.chat.completions.create({ model: 'gpt2_tiny', messages }), OpenAI.BadRequestError,
                      'chat on a model without a chat template refused by name', (e) => e.code === 'chat_template_missing');
    await expectError(client.chat.completions.create({ model: 'nope', messages }), OpenAI.NotFoundError, 'unknown model: 404');
    await expectError(client.completions.create({ model: 'llama_tiny', prompt: 'hi', max_tokens: 1000 }), OpenAI.BadRequestError,
                      'prompt + max_tokens over max_context: 400 naming the numbers',
                      (e) => e.code === 'context_length_exceeded' && /max_context 256/.test(e.message));
  } finally {
    proc.kill('SIGTERM');
  }
  console.log(checker.failures ? `${checker.failures} FAILED` : 'all passed');
  process.exit(checker.failures ? 1 : 0);
}

main().catch((e) => { console.error(e.stack || e); process.exit(1); });
