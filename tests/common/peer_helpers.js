// Helpers shared by the node peer tests (tests/*/..._test.js): PASS/FAIL lines with a failure
// count, the one relative-difference rule every peer comparison uses, running the glassbox CLI, and
// starting `glassbox serve` on a kernel-chosen 127.0.0.1 port with a bounded wait.
'use strict';
const { spawn, spawnSync } = require('child_process');

// check(ok, what) prints PASS/FAIL and counts failures; exitCode() is what the test exits with.
function checker() {
  let failures = 0;
  return {
    check(ok, what) {
      console.log(`${ok ? 'PASS' : 'FAIL'} ${what}`);
      if (!ok) failures += 1;
    },
    get failures() { return failures; },
    exitCode() { return failures ? 1 : 0; },
    // Prints the summary line and exits with exitCode().
    finish() {
      console.log(failures ? `${failures} checks failed` : 'all checks passed');
      process.exit(failures ? 1 : 0);
    },
  };
}

// The project's parity criterion (tests/parity/parity_test.js, scripts/parity/op_cases.py): the
// largest absolute difference over max(largest finite reference magnitude, 1). A floor below 1
// would measure the peer's own approximation error on tiny outputs (ORT's MLAS Sigmoid returns 0
// below -18). A length mismatch, NaN on one side only, or an infinity that differs is Infinity;
// NaN on both sides is equal (non-finite values must flow like the reference's).
function maxRelDiff(actual, reference) {
  if (actual.length !== reference.length) return Infinity;
  let d = 0;
  let scale = 1;
  for (let i = 0; i < actual.length; ++i) {
    const x = Number(actual[i]);
    const y = Number(reference[i]);
    if (Number.isNaN(x) !== Number.isNaN(y)) return Infinity;
    if (Number.isNaN(y)) continue;
    if (!Number.isFinite(y) || !Number.isFinite(x)) {
      if (x !== y) return Infinity;
      continue;
    }
    d = Math.max(d, Math.abs(x - y));
    scale = Math.max(scale, Math.abs(y));
  }
  return d / scale;
}

// Runs the CLI; never throws: {status, stdout, stderr}.
function runCli(binary, args, stdin) {
  const r = spawnSync(binary, args, { input: stdin, encoding: 'utf8', maxBuffer: 64 << 20 });
  return { status: r.status, stdout: r.stdout || '', stderr: r.stderr || '' };
}

const jsonl = (s) => s.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));

// Starts `glassbox serve --host 127.0.0.1 --port 0 ...args`; resolves with {proc, base, log()}
// once it listens and its load summary says "server ready". Rejects (and kills it) when the
// summary says "server not ready", when it exits, or after timeoutMs.
function startServer(binary, args, { timeoutMs = 240000, env } = {}) {
  return new Promise((resolve, reject) => {
    const proc = spawn(binary, ['serve', '--host', '127.0.0.1', '--port', '0', ...args],
                       { stdio: ['ignore', 'ignore', 'pipe'], env: env || process.env });
    let log = '';
    let settled = false;
    const fail = (why) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      proc.kill('SIGKILL');
      reject(new Error(`${why}:\n${log}`));
    };
    const timer = setTimeout(() => fail(`server did not get ready in ${timeoutMs} ms`), timeoutMs);
    proc.stderr.on('data', (d) => {
      log += d.toString();
      const m = log.match(/listening on 127\.0\.0\.1:(\d+)/);
      if (!settled && m && log.includes('server ready')) {
        settled = true;
        clearTimeout(timer);
        resolve({ proc, base: `http://127.0.0.1:${m[1]}`, log: () => log });
      } else if (log.includes('server not ready')) {
        fail('server not ready');
      }
    });
    proc.on('exit', (code) => fail(`server exited (${code})`));
  });
}

// SIGTERM, then SIGKILL if it has not exited within graceMs; resolves with the exit code.
function stopServer(server, graceMs = 20000) {
  return new Promise((resolve) => {
    if (server.proc.exitCode !== null) return resolve(server.proc.exitCode);
    const timer = setTimeout(() => server.proc.kill('SIGKILL'), graceMs);
    server.proc.once('exit', (code) => { clearTimeout(timer); resolve(code); });
    server.proc.kill('SIGTERM');
  });
}

// Character error rate: Levenshtein distance over the truth's length (the empty truth: 0 or 1).
function cer(got, truth) {
  const a = [...got], b = [...truth];
  if (!b.length) return a.length ? 1 : 0;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; ++i) {
    const cur = [i];
    for (let j = 1; j <= b.length; ++j) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length] / b.length;
}

module.exports = { checker, maxRelDiff, runCli, jsonl, startServer, stopServer, cer };
