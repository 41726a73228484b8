#!/usr/bin/env node
// glassbox's pixel tensors against transformers.js (npm @huggingface/transformers, the peer in
// .peers): AutoImageProcessor.from_pretrained on the same local model directories
// (env.allowRemoteModels = false) and RawImage.read on the same files.
//   node transformers_js_test.js VISION_TOOL
// transformers.js decodes and resizes with sharp (libvips), not Pillow: its resize kernels are not
// PIL's, so glassbox (which follows Pillow, what Python transformers and hence training used) is
// compared in two ways, each asserted:
//  - decoding: exact where sharp uses the same libjpeg-turbo/libpng/libwebp arithmetic (PNG, WebP
//    lossless, no-subsampling JPEG); other JPEGs within the measured bound below;
//  - preprocessing: a case whose resize is the identity (same size) must agree within 1/255 after
//    rescale; resized cases are reported (max and mean difference in 0..255 pixel units) and
//    asserted against the bounds measured here, so a regression on either side shows.
'use strict';
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const tool = process.argv[2];
const peers = path.join(__dirname, '..', '..', '.peers', 'node_modules');
const here = __dirname;

function readNpy(file) {
  const b = fs.readFileSync(file);
  const hlen = b.readUInt16LE(8);
  const header = b.subarray(10, 10 + hlen).toString('latin1');
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').map(s => s.trim()).filter(Boolean).map(Number);
  const body = b.subarray(10 + hlen);
  const data = header.includes("'<f4'")
    ? new Float32Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.length))
    : new Uint8Array(body);
  return { shape, data };
}

// Bounds in 0..255 pixel units, measured with transformers.js 4.3.2 / sharp (docs/vision.md).
// sharp's kernels differ from PIL's (nearest 10-13, box/hamming are not in transformers.js and fall
// back to bilinear: 4-10, bilinear/bicubic/lanczos 0.3-9 on these images; single pixels at text
// edges up to 245). A wrong step (mean/std, crop, layout, size) gives means of 100 and more.
const BOUND_RESIZED_MEAN = 14.0;
const BOUND_DECODE_JPEG = 2;       // sharp's libjpeg-turbo build vs Debian's, chroma upsampling

(async () => {
  const T = await import(path.join(peers, '@huggingface/transformers/dist/transformers.node.mjs'));
  T.env.allowRemoteModels = false;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gb-vision-tjs-'));
  const failures = [];
  let worst = 0;
  const check = (name, ok, detail) => {
    console.log(`${ok ? 'PASS' : 'FAIL'} ${name} ${detail || ''}`);
    if (!ok) failures.push(name);
  };
  try {
    const { images, cases } = JSON.parse(
      execFileSync('/usr/bin/python3', [path.join(here, 'write_cases.py'), tmp], { encoding: 'utf8' }));
    for (const [name, file] of Object.entries(images)) {
      if (name === 'grey16.png') continue;  // glassbox refuses it by name (Pillow clips, sharp scales)
      const out = path.join(tmp, 'dec.npy');
      execFileSync(tool, ['decode', file, out]);
      const mine = readNpy(out);
      let img;
      try {
        img = (await T.RawImage.read(file)).rgb();
      } catch (e) {  // a limitation of the peer, reported, not a glassbox failure
        console.log(`SKIP decode ${name}: transformers.js cannot read it (${e.message})`);
        continue;
      }
      let max = 0;
      if (img.width * img.height * 3 !== mine.data.length || img.height !== mine.shape[0]) max = Infinity;
      else for (let i = 0; i < mine.data.length; ++i) max = Math.max(max, Math.abs(mine.data[i] - img.data[i]));
      const bound = name.endsWith('.jpg') ? BOUND_DECODE_JPEG : 0;
      check(`decode ${name}`, max <= bound, `max diff ${max} (bound ${bound})`);
    }
    T.env.localModelPath = path.join(tmp, 'explicit') + path.sep;
    for (const [c, dir] of Object.entries(cases)) {
      if (!fs.existsSync(path.join(dir, 'preprocessor_config.json'))) continue;  // glassbox.json-only: no peer
      const proc = await T.AutoImageProcessor.from_pretrained(c, { local_files_only: true });
      for (const name of ['photo.jpg', 'tall.png', 'wide.jpg', 'orient6.jpg', 'palette.png', 'tiny.png']) {
        const out = path.join(tmp, 'pp.npy');
        execFileSync(tool, ['preprocess', dir, images[name], out]);
        const mine = readNpy(out);
        let pixel_values;
        try {
          ({ pixel_values } = await proc(await T.RawImage.read(images[name])));
        } catch (e) {  // a limitation of the peer (e.g. a crop larger than the image), reported
          console.log(`SKIP preprocess ${c} ${name}: transformers.js fails (${e.message})`);
          continue;
        }
        const ref = pixel_values.data;
        if (JSON.stringify(pixel_values.dims) !== JSON.stringify(mine.shape)) {
          check(`preprocess ${c} ${name}`, false, `shape ${mine.shape} vs transformers.js ${pixel_values.dims}`);
          continue;
        }
        // back to pixel units: x = (p * rescale - mean) / std  =>  dp = dx * std / rescale
        const pc = JSON.parse(fs.readFileSync(path.join(dir, 'preprocessor_config.json')));
        const std = proc.do_normalize ? (Array.isArray(proc.image_std) ? proc.image_std : [proc.image_std, proc.image_std, proc.image_std]) : [1, 1, 1];
        const scale = proc.do_rescale ? proc.rescale_factor : 1;
        const plane = mine.shape[2] * mine.shape[3];
        let max = 0, sum = 0;
        for (let i = 0; i < ref.length; ++i) {
          const d = Math.abs(mine.data[i] - ref[i]) * std[Math.floor(i / plane) % 3] / scale;
          max = Math.max(max, d);
          sum += d;
        }
        const mean = sum / ref.length;
        const stats = `max ${max.toFixed(3)} mean ${mean.toFixed(4)} (pixel units)`;
        if (pc.do_resize === false) {  // decode + rescale + normalize only: the references agree
          check(`preprocess ${c} ${name} (no resize)`, max <= 1.0 + 1e-3, stats + ' (bound 1 = 1/255 after rescale)');
        } else if (name === 'tiny.png') {  // sharp's upscale of a 1x1 image is not a constant image
          console.log(`REPORT preprocess ${c} ${name}: ${stats} (sharp upscaling 1x1; Pillow gives the constant colour)`);
        } else {
          check(`preprocess ${c} ${name}`, mean <= BOUND_RESIZED_MEAN, stats + ` (bound: mean ${BOUND_RESIZED_MEAN})`);
          worst = Math.max(worst, mean);
        }
      }
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  console.log(`worst mean difference of a resized case: ${worst.toFixed(3)} pixel units`);
  console.log(`${failures.length} failed`);
  process.exit(failures.length ? 1 : 0);
})().catch(e => { console.error(e); process.exit(1); });
