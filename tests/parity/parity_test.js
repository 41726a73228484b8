#!/usr/bin/env node
// Parity with ONNX Runtime: runs models through `glassbox run` and through
// onnxruntime-node 1.30.0 (scripts/parity/run_ort.js) on the same inputs and
// compares every output. Criterion: max|glassbox - ort| <= 1e-4 * max(max|ort|, 1)
// per output (error relative to the output's scale; integer outputs exactly).
// Usage: node tests/parity/parity_test.js GLASSBOX_BINARY [MODEL ...]
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');

const ROOT = path.resolve(__dirname, '..', '..');
const { runOrt } = require(path.join(ROOT, 'scripts', 'parity', 'run_ort.js'));
const { readNpy, writeNpy } = require(path.join(ROOT, 'scripts', 'parity', 'npy.js'));
const ort = require(path.join(ROOT, '.peers', 'node_modules', 'onnxruntime-node'));

const TOLERANCE = 1e-4;

// Fixed-seed generator (mulberry32) so failures reproduce.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Text encoders: (batch, sequence) pairs incl. 1 and odd lengths; row b is padded by b tokens.
const TEXT_SHAPES = [[1, 1], [1, 7], [2, 5], [3, 16], [4, 33]];
const OCR_SHAPES = {
  det: [[1, 3, 64, 96], [1, 3, 96, 64]],
  rec: [[1, 3, 48, 100], [2, 3, 48, 320]],
  cls: [[1, 3, 48, 192], [3, 3, 48, 192]],
};

function textInputs(meta, batch, seq, seed) {
  const r = rng(seed);
  const inputs = {};
  for (const m of meta) {
    const n = batch * seq;
    const data = new BigInt64Array(n);
    for (let b = 0; b < batch; ++b)
      for (let s = 0; s < seq; ++s) {
        const valid = s < Math.max(1, seq - b);
        let v = 0n;
        if (m.name.includes('mask')) v = valid ? 1n : 0n;
        else if (m.name.includes('type')) v = BigInt(s >= seq / 2 ? 1 : 0);
        else v = valid ? BigInt(1 + Math.floor(r() * 900)) : 0n;
        data[b * seq + s] = v;
      }
    inputs[m.name] = { type: 'int64', dims: [batch, seq], data };
  }
  return inputs;
}

function imageInputs(meta, dims, seed) {
  const r = rng(seed);
  const n = dims.reduce((a, b) => a * b, 1);
  const data = new Float32Array(n);
  for (let i = 0; i < n; ++i) data[i] = r() * 2 - 1;
  return { [meta[0].name]: { type: 'float32', dims, data } };
}

function compare(gb, ref) {
  if (gb.type !== ref.type && !(gb.type === 'bool' && ref.type === 'bool')) return { ok: false, why: `dtype ${gb.type} vs ${ref.type}` };
  if (JSON.stringify(gb.dims) !== JSON.stringify(ref.dims)) return { ok: false, why: `shape [${gb.dims}] vs [${ref.dims}]` };
  let maxAbs = 0, scale = 0;
  for (let i = 0; i < ref.data.length; ++i) {
    const a = Number(gb.data[i]), b = Number(ref.data[i]);
    if (Number.isNaN(a) && Number.isNaN(b)) continue;
    maxAbs = Math.max(maxAbs, Math.abs(a - b));
    scale = Math.max(scale, Math.abs(b));
  }
  const rel = maxAbs / Math.max(scale, 1);
  const isFloat = ref.type.startsWith('float');
  return { ok: isFloat ? rel <= TOLERANCE : maxAbs === 0, rel, maxAbs };
}

async function runCase(glassbox, model, inputs, label) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gb-parity-'));
  try {
    const args = ['run', model, '--output-dir', path.join(dir, 'out')];
    for (const [name, t] of Object.entries(inputs)) {
      const file = path.join(dir, `${name}.npy`);
      writeNpy(file, t.type, t.dims, t.data);
      args.push('--input', `${name}=${file}`);
    }
    let summary;
    try {
      summary = JSON.parse(execFileSync(glassbox, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
    } catch (e) {
      return { ok: false, line: `FAIL ${label} glassbox: ${(e.stderr || e.message).toString().trim()}` };
    }
    const ref = await runOrt(model, inputs);
    const parts = [];
    let ok = summary.outputs.length === ref.length;
    for (let i = 0; i < ref.length; ++i) {
      const gb = readNpy(path.join(dir, 'out', `output_${i}.npy`));
      const c = compare(gb, ref[i]);
      ok = ok && c.ok;
      parts.push(c.why ? `${ref[i].name}: ${c.why}` : `${ref[i].name} rel ${c.rel.toExponential(2)}`);
    }
    return { ok, line: `${ok ? 'PASS' : 'FAIL'} ${label} ${parts.join(', ')}` };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  const [glassbox, ...only] = process.argv.slice(2);
  if (!glassbox) {
    console.error('usage: parity_test.js GLASSBOX_BINARY [MODEL ...]');
    process.exit(2);
  }
  // scripts/make_test_models.py writes tests/data/generated/ (older layouts: tests/data/models/).
  const textDirs = ['generated', 'models'].map((d) => path.join(ROOT, 'tests', 'data', d));
  const ocrDir = path.join(ROOT, '.peers', 'node_modules', '@gutenye', 'ocr-models', 'assets');
  let models = only;
  if (!models.length) {
    models = [];
    for (const name of ['bert_tiny_op13', 'bert_tiny_op14', 'bert_tiny_op17', 'distilbert_tiny_op14', 'bert_tiny_cls_op14']) {
      const p = textDirs.map((d) => path.join(d, `${name}.onnx`)).find((f) => fs.existsSync(f));
      if (p) models.push(p);
      else console.log(`SKIP ${name}: not in tests/data/generated (run scripts/make_test_models.py)`);
    }
    for (const f of ['ch_PP-OCRv4_det_infer.onnx', 'ch_PP-OCRv4_rec_infer.onnx', 'ch_ppocr_mobile_v2.0_cls_infer.onnx']) {
      const p = path.join(ocrDir, f);
      if (fs.existsSync(p)) models.push(p);
      else console.log(`SKIP ${f}: not installed (scripts/install_peers.sh)`);
    }
  }
  let passed = 0, failed = 0;
  for (const model of models) {
    const session = await ort.InferenceSession.create(model);
    const meta = session.inputMetadata;
    await session.release();
    const base = path.basename(model, '.onnx');
    const ocr = base.startsWith('ch_');  // PaddleOCR file names; everything else is a text encoder
    const kind = !ocr ? 'text' : base.includes('_det_') ? 'det' : base.includes('_rec_') ? 'rec' : 'cls';
    const cases = kind === 'text'
      ? TEXT_SHAPES.map(([b, s], i) => [`${base} batch=${b} seq=${s}`, textInputs(meta, b, s, 1000 + i)])
      : OCR_SHAPES[kind].map((dims, i) => [`${base} [${dims}]`, imageInputs(meta, dims, 2000 + i)]);
    for (const [label, inputs] of cases) {
      const r = await runCase(glassbox, model, inputs, label);
      console.log(r.line);
      if (r.ok) ++passed;
      else ++failed;
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

main().catch((e) => { console.error(e.stack || e); process.exit(1); });
