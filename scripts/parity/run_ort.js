#!/usr/bin/env node
// Runs an ONNX model through ONNX Runtime (npm onnxruntime-node 1.30.0 from
// .peers/node_modules) and writes its outputs as output_<i>.npy, in model order.
// Usage: node scripts/parity/run_ort.js MODEL.onnx OUT_DIR NAME=FILE.npy ...
'use strict';
const fs = require('fs');
const path = require('path');
const { readNpy, writeNpy } = require('./npy');

const PEERS = path.resolve(__dirname, '..', '..', '.peers', 'node_modules');

function loadOrt() {
  return require(path.join(PEERS, 'onnxruntime-node'));
}

// inputs: {name: {type, dims, data}}; returns [{name, type, dims, data}] in model output order.
async function runOrt(modelPath, inputs, { threads = 1 } = {}) {
  const ort = loadOrt();
  // Reference semantics: no graph rewrites, single thread, so the peer's own optimizations do not hide differences.
  const session = await ort.InferenceSession.create(modelPath, {
    graphOptimizationLevel: 'disabled', intraOpNumThreads: threads, interOpNumThreads: 1,
  });
  const feeds = {};
  for (const [name, t] of Object.entries(inputs)) {
    const data = t.type === 'bool' ? Uint8Array.from(t.data) : t.data;
    feeds[name] = new ort.Tensor(t.type, data, t.dims);
  }
  const result = await session.run(feeds);
  const outs = session.outputNames.map((name) => {
    const v = result[name];
    return { name, type: v.type, dims: Array.from(v.dims), data: v.data };
  });
  await session.release();
  return outs;
}

async function main(argv) {
  if (argv.length < 2) {
    console.error('usage: run_ort.js MODEL.onnx OUT_DIR NAME=FILE.npy ...');
    process.exit(2);
  }
  const [model, outDir, ...specs] = argv;
  const inputs = {};
  for (const spec of specs) {
    const eq = spec.indexOf('=');
    if (eq <= 0) throw new Error(`input '${spec}' is not NAME=FILE.npy`);
    inputs[spec.slice(0, eq)] = readNpy(spec.slice(eq + 1));
  }
  const outs = await runOrt(model, inputs);
  fs.mkdirSync(outDir, { recursive: true });
  const summary = outs.map((o, i) => {
    const file = path.join(outDir, `output_${i}.npy`);
    writeNpy(file, o.type, o.dims, o.data);
    return { name: o.name, dtype: o.type, shape: o.dims, npy: file };
  });
  console.log(JSON.stringify({ outputs: summary }, null, 2));
}

module.exports = { runOrt };
if (require.main === module) main(process.argv.slice(2)).catch((e) => { console.error(e.message || e); process.exit(1); });
