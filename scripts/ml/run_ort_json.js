#!/usr/bin/env node
// Runs an ONNX model through onnxruntime-node (.peers/node_modules) with inputs and outputs as
// JSON, so string tensors travel both ways (the .npy path of scripts/parity/run_ort.js has no
// strings). onnxruntime-node cannot return sequences of maps (ZipMap): name the outputs to fetch.
// Usage: node scripts/ml/run_ort_json.js MODEL.onnx INPUTS.json OUT.json [OUTPUT_NAME ...]
//   INPUTS.json: {name: {type: "string"|"float32"|"int64", dims: [...], data: [...] (row-major)}}
//   OUT.json:    {outputs: [{name, type, dims, data}]} (int64 as numbers: the tests' ids are small)
'use strict';
const fs = require('fs');
const path = require('path');

const ort = require(path.resolve(__dirname, '..', '..', '.peers', 'node_modules', 'onnxruntime-node'));

async function main([model, inputsFile, outFile, ...names]) {
  if (!outFile) {
    console.error('usage: run_ort_json.js MODEL.onnx INPUTS.json OUT.json [OUTPUT_NAME ...]');
    process.exit(2);
  }
  // Reference semantics as in scripts/parity/run_ort.js: no graph rewrites, one thread.
  const session = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: 'disabled', intraOpNumThreads: 1, interOpNumThreads: 1,
  });
  const feeds = {};
  for (const [name, t] of Object.entries(JSON.parse(fs.readFileSync(inputsFile, 'utf8')))) {
    let data = t.data;
    if (t.type === 'float32') data = Float32Array.from(data.map((v) => (v === null ? NaN : v)));
    if (t.type === 'int64') data = BigInt64Array.from(data.map((v) => BigInt(v)));
    feeds[name] = new ort.Tensor(t.type, data, t.dims);
  }
  const fetch = names.length ? names : session.outputNames;
  const result = await session.run(feeds, fetch);
  const outputs = fetch.map((name) => {
    const v = result[name];
    const data = Array.from(v.data, (x) => (typeof x === 'bigint' ? Number(x) : Number.isNaN(x) ? null : x));
    return { name, type: v.type, dims: Array.from(v.dims), data };
  });
  await session.release();
  fs.writeFileSync(outFile, JSON.stringify({ outputs }));
}

main(process.argv.slice(2)).catch((e) => { console.error(e.message || e); process.exit(1); });
