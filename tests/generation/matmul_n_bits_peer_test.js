#!/usr/bin/env node
// com.microsoft MatMulNBits against the peer: scripts/quantize_n_bits.py --op-cases writes
// single-node models with fixed-seed random A and weights (bits 4 and 8; block sizes 16 to 128;
// symmetric, packed uint8 and float zero points; K not a multiple of block_size; 2-D and 3-D A;
// bias; accuracy_level 1) and `glassbox run` and onnxruntime-node 1.30 (optimizations disabled) run
// the same files. At accuracy levels 0-1 both dequantize and multiply in fp32; at accuracy_level 4 both
// quantize A to int8 per block (symmetric, max|a|/127, round to nearest even) and multiply in int32;
// either way the criterion is the project's float one: max |diff| / max(max |ref|, 1) <= 1e-5 (an
// int8 rounding that differed from ORT's moves an output by ~1e-3).
// A case with g_idx must be refused at load, naming the input.
// Usage: node tests/generation/matmul_n_bits_peer_test.js GLASSBOX_BINARY PYTHON3
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');

const ROOT = path.resolve(__dirname, '..', '..');
const peer = require(path.join(ROOT, 'tests', 'common', 'peer_helpers.js'));
const { runOrt } = require(path.join(ROOT, 'scripts', 'parity', 'run_ort.js'));
const { readNpy } = require(path.join(ROOT, 'scripts', 'parity', 'npy.js'));

const TOLERANCE = 1e-5;
const [GLASSBOX, PYTHON = '/usr/bin/python3'] = process.argv.slice(2);

async function main() {
  const c = peer.checker();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox_nbits_'));
  const gen = spawnSync(PYTHON, [path.join(ROOT, 'scripts', 'quantize_n_bits.py'), '--op-cases', dir], { encoding: 'utf8' });
  if (gen.status !== 0) throw new Error(`quantize_n_bits.py --op-cases failed: ${gen.stderr}`);
  let worst = 0;
  for (const name of JSON.parse(fs.readFileSync(path.join(dir, 'cases.json'), 'utf8'))) {
    const model = path.join(dir, `${name}.onnx`);
    const aFile = path.join(dir, `${name}.A.npy`);
    const ref = (await runOrt(model, { A: readNpy(aFile) }))[0];
    const out = path.join(dir, `${name}.out`);
    const r = peer.runCli(GLASSBOX, ['run', model, '--input', `A=${aFile}`, '--output-dir', out, '--threads', '2']);
    if (r.status !== 0) {
      c.check(false, `${name}: glassbox run failed: ${r.stderr.trim()}`);
      continue;
    }
    const got = readNpy(path.join(out, 'output_0.npy'));
    const d = peer.maxRelDiff(got.data, ref.data);
    const acc4 = name.endsWith('_acc4');
    worst = Math.max(worst, d);
    c.check(JSON.stringify(got.dims) === JSON.stringify(ref.dims) && d <= TOLERANCE,
            `${name}: shape ${JSON.stringify(got.dims)}, max rel diff ${d.toExponential(2)} vs onnxruntime` +
            (acc4 ? ' (both with int8 activations per block)' : ''));
  }
  console.log(`worst max rel diff ${worst.toExponential(2)}`);
  // g_idx (deprecated act-order) is refused by name, never ignored.
  const gidx = spawnSync(PYTHON, ['-c', `
import onnx, sys
m = onnx.load(sys.argv[1])
n = m.graph.node[0]
del n.input[:]
n.input.extend(["A", "B", "scales", "", "g_idx"])
m.graph.initializer.append(onnx.helper.make_tensor("g_idx", onnx.TensorProto.INT32, [64], list(range(64))))
onnx.save(m, sys.argv[2])
`, path.join(dir, 'sym4_k64_b32.onnx'), path.join(dir, 'gidx.onnx')], { encoding: 'utf8' });
  if (gidx.status !== 0) throw new Error(gidx.stderr);
  const refused = peer.runCli(GLASSBOX, ['run', path.join(dir, 'gidx.onnx'), '--input', `A=${path.join(dir, 'sym4_k64_b32.A.npy')}`,
    '--output-dir', path.join(dir, 'gidx.out')]);
  c.check(refused.status !== 0 && refused.stderr.includes("'g_idx'"), `g_idx refused by name: ${refused.stderr.trim().split('\n')[0]}`);
  fs.rmSync(dir, { recursive: true, force: true });
  c.finish();
}

main().catch((e) => { console.error(e.stack || e); process.exit(1); });
