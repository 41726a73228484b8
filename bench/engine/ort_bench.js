// The peer's side of bench/vs_ort.sh: onnxruntime-node on the same model file and the same .npy inputs.
// Usage: node ort_bench.js MODEL.onnx --input NAME=FILE.npy ... [--repeat N] [--warmup N] [--threads N]
//        [--output-dir DIR] [--cold]
// Prints one JSON line: load_ms (session creation), first_run_ms, latency percentiles of the timed runs,
// peak_rss_bytes (process maxRSS) and process_to_first_result_ms (node process start -> first output).
// --cold: load, run once, print, exit (for cold-start timing from outside). Options match what a user
// would pick for speed: intraOpNumThreads N, interOpNumThreads 1, graphOptimizationLevel 'all', sequential.
const fs = require('fs');
const path = require('path');
const { performance } = require('perf_hooks');
const ort = require(path.resolve(__dirname, '../../.peers/node_modules/onnxruntime-node'));

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const hstart = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', hstart, hstart + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: fortran order not supported`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const data = buf.subarray(hstart + hlen);
  const copy = new Uint8Array(data.length);
  copy.set(data);
  const types = { '<i8': ['int64', BigInt64Array], '<f4': ['float32', Float32Array], '<i4': ['int32', Int32Array] };
  if (!types[descr]) throw new Error(`${file}: dtype ${descr} not supported`);
  const [type, Arr] = types[descr];
  return new ort.Tensor(type, new Arr(copy.buffer), shape);
}

function writeNpy(file, tensor) {
  const descr = { float32: '<f4', int64: '<i8', int32: '<i4' }[tensor.type];
  if (!descr) throw new Error(`cannot write ${tensor.type}`);
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const pre = Buffer.alloc(10);
  pre[0] = 0x93;
  pre.write('NUMPY', 1, 'latin1');
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const d = tensor.data;
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), Buffer.from(d.buffer, d.byteOffset, d.byteLength)]));
}

function percentile(sorted, p) {
  if (!sorted.length) return 0;
  const pos = p * (sorted.length - 1), lo = Math.floor(pos), hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

(async () => {
  const args = process.argv.slice(2);
  const opt = { inputs: [], repeat: 20, warmup: 3, threads: 2, outputDir: '', cold: false };
  const model = args.shift();
  while (args.length) {
    const a = args.shift();
    if (a === '--input') opt.inputs.push(args.shift());
    else if (a === '--repeat') opt.repeat = Number(args.shift());
    else if (a === '--warmup') opt.warmup = Number(args.shift());
    else if (a === '--threads') opt.threads = Number(args.shift());
    else if (a === '--output-dir') opt.outputDir = args.shift();
    else if (a === '--cold') opt.cold = true;
    else throw new Error(`unknown argument ${a}`);
  }
  const feeds = {};
  for (const spec of opt.inputs) {
    const eq = spec.indexOf('=');
    feeds[spec.slice(0, eq)] = readNpy(spec.slice(eq + 1));
  }
  let t0 = performance.now();
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: opt.threads, interOpNumThreads: 1, graphOptimizationLevel: 'all', executionMode: 'sequential',
  });
  const loadMs = performance.now() - t0;
  t0 = performance.now();
  let outs = await session.run(feeds);
  const firstRunMs = performance.now() - t0;
  const processToFirst = performance.now();  // performance.now() counts from node's process start
  const result = { impl: `onnxruntime-node@${require(path.resolve(__dirname, '../../.peers/node_modules/onnxruntime-node/package.json')).version}`,
    threads: opt.threads, load_ms: loadMs, first_run_ms: firstRunMs, process_to_first_result_ms: processToFirst };
  if (!opt.cold) {
    for (let i = 0; i < opt.warmup; ++i) outs = await session.run(feeds);
    const lat = [];
    for (let i = 0; i < opt.repeat; ++i) {
      t0 = performance.now();
      outs = await session.run(feeds);
      lat.push(performance.now() - t0);
    }
    lat.sort((a, b) => a - b);
    result.latency_ms = { p50: percentile(lat, 0.5), p95: percentile(lat, 0.95), min: lat[0], max: lat[lat.length - 1] };
    result.repeat = opt.repeat;
    result.warmup = opt.warmup;
  }
  if (opt.outputDir) {
    fs.mkdirSync(opt.outputDir, { recursive: true });
    session.outputNames.forEach((name, i) => writeNpy(path.join(opt.outputDir, `output_${i}.npy`), outs[name]));
  }
  result.peak_rss_bytes = process.resourceUsage().maxRSS * 1024;
  console.log(JSON.stringify(result));
})().catch((e) => { console.error(e.stack || String(e)); process.exit(1); });
