#!/usr/bin/env node
// `glassbox classify IMAGE_MODEL_DIR IMAGE...` against onnxruntime-node 1.30 fed the reference
// pixel tensor (Pillow + transformers' arithmetic, written by make_image_classifiers.py): logits
// within 1e-4, scores (softmax, or sigmoid for multi_label_classification) within 1e-5, same order.
// Two torch-1.13-exported models: ResNet-shaped NCHW with CLIP-style preprocessing, ViT-shaped NHWC
// with ViT preprocessing. Then the declared argument rule: a text file or a damaged image after an
// image model directory is an error naming it.
// Usage: node tests/vision/classify_peer_test.js GLASSBOX_BINARY
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync, execFileSync } = require('child_process');

const ROOT = path.resolve(__dirname, '..', '..');
const { runOrt } = require(path.join(ROOT, 'scripts', 'parity', 'run_ort.js'));
const { readNpy } = require(path.join(ROOT, 'scripts', 'parity', 'npy.js'));
const GLASSBOX = process.argv[2];
let failures = 0;
const check = (ok, what) => {
  console.log(`${ok ? 'PASS' : 'FAIL'} ${what}`);
  if (!ok) failures += 1;
};

(async () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gb-classify-'));
  try {
    const spec = JSON.parse(execFileSync('/usr/bin/python3', [path.join(__dirname, 'make_image_classifiers.py'), tmp],
                                         { encoding: 'utf8' }));
    for (const [model, dir] of Object.entries(spec.models)) {
      const names = Object.keys(spec.images);
      const r = spawnSync(GLASSBOX, ['classify', dir, ...names.map(n => spec.images[n]), '--top-k', '5', '--threads', '1'],
                          { encoding: 'utf8' });
      check(r.status === 0, `${model}: glassbox classify exits 0 ${r.stderr.trim()}`);
      if (r.status !== 0) continue;
      const lines = r.stdout.trim().split('\n').map(l => JSON.parse(l));
      const multi = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'))).problem_type === 'multi_label_classification';
      for (let i = 0; i < names.length; ++i) {
        const x = readNpy(spec.reference[model][names[i]]);
        const [out] = await runOrt(path.join(dir, 'model.onnx'), { pixel_values: { type: 'float32', dims: x.shape || x.dims, data: x.data } });
        const ref = Array.from(out.data);
        const mine = lines[i].logits;
        const d = Math.max(...ref.map((v, k) => Math.abs(v - mine[k])));
        check(mine.length === ref.length && d <= 1e-4, `${model} ${names[i]}: logits max |diff| ${d.toExponential(2)} (<= 1e-4)`);
        const mx = Math.max(...ref);
        const e = ref.map(v => Math.exp(v - mx));
        const sum = e.reduce((a, b) => a + b, 0);
        const scores = multi ? ref.map(v => 1 / (1 + Math.exp(-v))) : e.map(v => v / sum);
        const labels = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'))).id2label;
        const order = scores.map((s, k) => [s, k]).sort((a, b) => b[0] - a[0]);
        const ok = lines[i].labels.every((l, k) => l.label === labels[order[k][1]] && Math.abs(l.score - order[k][0]) <= 1e-5);
        check(ok && lines[i].label === labels[order[0][1]], `${model} ${names[i]}: ${multi ? 'sigmoid' : 'softmax'} scores and order`);
      }
    }
    // explain lists every step with its value and source
    for (const [model, dir] of Object.entries(spec.models)) {
      const r = spawnSync(GLASSBOX, ['explain', dir, '--json'], { encoding: 'utf8' });
      const steps = r.status === 0 ? JSON.parse(r.stdout).pipeline || [] : [];
      const get = f => steps.find(s => s.field === f) || {};
      const layout = model === 'vit_nhwc' ? 'nhwc' : 'nchw';
      check(get('resample').source === 'preprocessor_config.json resample' && get('layout').value === layout &&
            (get('layout').source || '').startsWith('model input shape') && (get('do_resize').source || '').startsWith('default of') &&
            (get('labels').source === 'config.json id2label'),
            `${model}: explain lists the steps with sources (${steps.length} rows) ${r.stderr.trim()}`);
    }
    const dir = spec.models.resnet_nchw;
    const text = path.join(tmp, 'notes.txt');
    fs.writeFileSync(text, 'a photo of a cat');
    let r = spawnSync(GLASSBOX, ['classify', dir, spec.images['photo.jpg'], text], { encoding: 'utf8' });
    check(r.status !== 0 && r.stderr.includes("notes.txt' is not an image file"), `a text file is refused by name: ${r.stderr.trim()}`);
    r = spawnSync(GLASSBOX, ['classify', dir, 'a photo of a cat'], { encoding: 'utf8' });
    check(r.status !== 0 && r.stderr.includes('is not an image file'), 'a text argument is refused, not classified');
    const cut = path.join(tmp, 'cut.jpg');
    const full = fs.readFileSync(spec.images['photo.jpg']);
    fs.writeFileSync(cut, full.subarray(0, full.length >> 1));
    r = spawnSync(GLASSBOX, ['classify', dir, cut], { encoding: 'utf8' });
    check(r.status !== 0 && r.stderr.includes('cut.jpg') && r.stderr.includes('JPEG'), `a damaged image is an error: ${r.stderr.trim()}`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  console.log(`${failures} failed`);
  process.exit(failures ? 1 : 0);
})().catch(e => { console.error(e); process.exit(1); });
