#!/usr/bin/python3
"""The built glassbox on other x86-64 CPUs: the same binary under qemu-x86_64's CPU models
EPYC-Rome (AVX2+FMA, no AVX-512: Zen 2 clouds) and Nehalem (SSE4.2, no AVX), against the same
binary run natively.

Per CPU model:
  * `explain --json`: the CPU features glassbox reports are the model's (qemu's CPU definitions,
    not glassbox's word: EPYC-Rome has avx2 and fma, no avx512f; Nehalem has sse4.2, no avx) and
    every precision has a verdict;
  * `classify` with the default model: same labels as natively, scores within FP32_TOL;
  * `run` on a small fp32 model (bert_tiny_cls_op14 from scripts/make_test_models.py) and on its
    int8 forms (scripts/quantize_model.py: dynamic per-channel, QDQ per-tensor) at --precision
    fp32, and the fp32 model at every other --precision: outputs equal the native run's within
    FP32_TOL / INT8_TOL, or the precision is refused by the declared rule (exit code 1, message
    naming the missing feature and the alternatives), never an abort (bf16 needs AVX512_BF16 or
    AMX_BF16, which neither model has);
  * `serve` (default model) on 127.0.0.1, port chosen by the kernel: GET /v2 reports this CPU's
    features, one OIP text request answers the native classify's label; `serve --precision bf16`
    stays live but not ready, its model's load refused by the rule (logged, and UNAVAILABLE with the
    reason in the repository index), as the server treats any failed load.

Tolerances (not bit-exact): oneDNN picks another GEMM kernel per ISA (brgemm AVX-512 natively,
gemm:jit AVX2 or SSE4.1 under emulation) with other blockings, so fp32 sums are rounded in
another order; without AVX2+FMA the elementwise math (exp, erf, tanh) is libm's instead of the
vector polynomials, which may differ in the last bit. FP32_TOL bounds the max abs difference
relative to the output's max |value| (float rounding noise, far below any model difference). The
int8 models quantize activations from such fp32 values at run time: one that lands next to a
rounding boundary can move one quantization step (tests/quant/quant_peer_test.js says the same
for passes on and off); INT8_TOL allows that step (measured on these inputs: ~1e-7, no step moved)
and still catches a wrong integer kernel (a saturating one is off by tens of percent).

ASan builds: Debian 12's qemu-user 7.2 tracks guest pages one by one, and AddressSanitizer's
~14 TiB shadow reservation makes qemu grow past the machine's memory (measured: killed above
20 GB). An instrumented binary therefore runs under qemu with asan_stub.c in place of libasan
(same soname, LD_LIBRARY_PATH): a no-op runtime whose shadow pages are mapped zeroed on first
touch. The instrumentation still runs, memory errors are what the native ASan suites check; the
question here is which instructions each CPU accepts. UBSan's runtime is used as is.

Usage: portability_test.py GLASSBOX_BINARY   (GLASSBOX_TEST_SLOWDOWN scales the time bounds)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "common"))
from serve_process import SLOW, ServeProcess  # noqa: E402

# qemu's CPU definitions (target/i386/cpu.c): what each model has and lacks.
CPU_MODELS = {
    "EPYC-Rome": {"has": ["sse4.2", "avx", "avx2", "fma"], "lacks": ["avx512f", "avx512_bf16", "amx_bf16"]},
    "Nehalem": {"has": ["sse4.1", "sse4.2"], "lacks": ["avx", "avx2", "fma", "avx512f", "avx512_bf16"]},
}
FP32_TOL = 1e-5   # max |a - b| / max(1, max |native|)
INT8_TOL = 1e-2   # allows an activation one quantization step apart (see the docstring); measured ~1e-7
PRECISIONS = ["fp32", "bf16", "int8-dynamic"]
TEXTS = ["hello world, how are you today?", "Der schnelle braune Fuchs springt über den faulen Hund.",
         "La vie est belle quand il fait beau."]
FAILURES = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


def asan_instrumented(binary):
    out = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, check=True).stdout
    return "libasan.so" in out


def build_asan_stub(binary, workdir):
    """libasan.so.<N> (the binary's soname) from asan_stub.c plus a no-op per imported __asan_* symbol."""
    needed = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, check=True).stdout
    soname = re.search(r"\[(libasan\.so[.\d]*)\]", needed).group(1)
    syms = set()
    for line in subprocess.run(["nm", "-D", "--undefined-only", binary], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        name = line.split()[-1].split("@")[0]
        if name.startswith(("__asan_", "__sanitizer_")):
            syms.add(name)
    lines = ["#include <stddef.h>", "void gb_asan_stub_report(const char*);"]
    for s in sorted(syms):
        if s in ("__asan_init", "__asan_handle_no_return", "__asan_option_detect_stack_use_after_return"):
            continue  # defined in asan_stub.c
        if s.startswith("__asan_stack_malloc"):
            lines.append("void* %s(size_t n) { (void)n; return 0; }" % s)  # no fake stack: the real one
        elif s.startswith("__asan_report"):
            lines.append('void %s(void) { gb_asan_stub_report("%s"); }' % (s, s))
        else:
            lines.append("void %s(void) {}" % s)
    gen = os.path.join(workdir, "asan_stub_symbols.c")
    with open(gen, "w") as f:
        f.write("\n".join(lines) + "\n")
    stub_dir = os.path.join(workdir, "asan_stub")
    os.makedirs(stub_dir)
    subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", os.path.join(stub_dir, soname),
                    os.path.join(HERE, "asan_stub.c"), gen], check=True)
    print("asan stub: %s with %d symbols (the binary is ASan-instrumented)" % (soname, len(syms)), flush=True)
    return stub_dir


class Runner:
    """Runs the binary natively (cpu None) or under qemu-x86_64 -cpu MODEL."""

    def __init__(self, binary, cpu, stub_dir):
        self.binary, self.cpu = binary, cpu
        self.env = dict(os.environ)
        self.prefix = []
        if cpu:
            self.prefix = ["qemu-x86_64", "-cpu", cpu]
            if stub_dir:
                self.env["LD_LIBRARY_PATH"] = stub_dir + (":" + self.env["LD_LIBRARY_PATH"]
                                                          if self.env.get("LD_LIBRARY_PATH") else "")
        self.name = cpu or "native"

    def argv(self, args):
        return self.prefix + [self.binary] + list(args)

    def run(self, args, timeout=240):
        t0 = time.time()
        p = subprocess.run(self.argv(args), capture_output=True, text=True, env=self.env, timeout=timeout * SLOW)
        p.seconds = time.time() - t0
        return p


def not_an_abort(p):
    """Exited by itself (no signal), and no uncaught exception or sanitizer report."""
    return p.returncode >= 0 and "terminate called" not in p.stderr and "Sanitizer" not in p.stderr


def prepare_models(workdir):
    fp32 = os.path.join(ROOT, "tests", "data", "generated", "bert_tiny_cls_op14.onnx")
    if not os.path.exists(fp32):
        sys.exit("missing %s: run /usr/bin/python3 scripts/make_test_models.py" % fp32)
    models = {"fp32": fp32}
    quantize = os.path.join(ROOT, "scripts", "quantize_model.py")
    for name, extra in (("int8_dynamic_pc", ["--mode", "dynamic", "--per-channel"]),
                        ("int8_qdq", ["--mode", "qdq", "--act-range", "-8", "8"])):
        out = os.path.join(workdir, name + ".onnx")
        subprocess.run([sys.executable, quantize, fp32, out] + extra, check=True, stdout=subprocess.DEVNULL)
        models[name] = out
    rng = np.random.default_rng(33)
    inputs = {"input_ids": rng.integers(1, 1000, size=(2, 12), dtype=np.int64),
              "attention_mask": np.ones((2, 12), dtype=np.int64),
              "token_type_ids": np.zeros((2, 12), dtype=np.int64)}
    inputs["attention_mask"][1, 9:] = 0  # a padded row
    flags = []
    for k, v in inputs.items():
        path = os.path.join(workdir, k + ".npy")
        np.save(path, v)
        flags += ["--input", "%s=%s" % (k, path)]
    return models, flags


def run_model(r, model, input_flags, precision, outdir):
    os.makedirs(outdir, exist_ok=True)
    p = r.run(["run", model, "--threads", "1", "--precision", precision, "--output-dir", outdir] + input_flags)
    outs = []
    if p.returncode == 0:
        i = 0
        while os.path.exists(os.path.join(outdir, "output_%d.npy" % i)):
            outs.append(np.load(os.path.join(outdir, "output_%d.npy" % i)))
            i += 1
    return p, outs


def rel_diff(a, b):
    return max(float(np.max(np.abs(x.astype(np.float64) - y.astype(np.float64)))) / max(1.0, float(np.max(np.abs(y))))
               for x, y in zip(a, b))


def native_has_bf16():
    with open("/proc/cpuinfo") as f:
        flags = f.read()
    return bool(re.search(r"\b(avx512_bf16|amx_bf16)\b", flags))


def check_refusal(p, who):
    check(p.returncode == 1 and not_an_abort(p),
          "%s: refused with exit code 1, no abort (rc %d)" % (who, p.returncode))
    check("bf16 needs" in p.stderr and "avx512_bf16" in p.stderr.lower() and "--precision fp32" in p.stderr
          and "int8-dynamic" in p.stderr,
          "%s: the refusal names the missing feature and the alternatives: %s" % (who, p.stderr.strip()[-300:]))


def classify(r):
    p = r.run(["classify", "--threads", "1", "--top-k", "3"] + TEXTS)
    rows = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")] if p.returncode == 0 else []
    return p, rows


def check_cpu(r, models, input_flags, native, workdir):
    model = CPU_MODELS[r.cpu]
    p = r.run(["explain", "--json"])
    check(p.returncode == 0, "%s: explain --json runs (%.1f s)" % (r.name, p.seconds))
    if p.returncode == 0:
        cpu = json.loads(p.stdout)["cpu"]
        check(all(f in cpu["features"] for f in model["has"]) and not any(f in cpu["features"] for f in model["lacks"]),
              "%s: explain reports the model's features: %s" % (r.name, " ".join(cpu["features"])))
        verdicts = {v["precision"]: v["runs"] for v in cpu["precisions"]}
        check(verdicts == {"fp32": True, "bf16": False, "int8-dynamic": True},
              "%s: precision verdicts %s" % (r.name, verdicts))
        print("      %s; GEMM fp32: %s" % (cpu["onednn"], cpu["kernels"][0]["kernel"]), flush=True)

    p, rows = classify(r)
    check(p.returncode == 0 and [x["label"] for x in rows] == [x["label"] for x in native["classify"]],
          "%s: classify labels %s equal the native run's (%.1f s)" % (r.name, [x["label"] for x in rows], p.seconds))
    if rows:
        d = max(abs(a["score"] - b["score"]) for x, y in zip(rows, native["classify"])
                for a, b in zip(x["labels"], y["labels"]))
        check(d <= FP32_TOL, "%s: classify scores within %g of native (max diff %.3g)" % (r.name, FP32_TOL, d))

    for name, path in models.items():
        tol = FP32_TOL if name == "fp32" else INT8_TOL
        p, outs = run_model(r, path, input_flags, "fp32", os.path.join(workdir, r.name, name))
        ok = p.returncode == 0 and len(outs) == len(native[name]) > 0
        d = rel_diff(outs, native[name]) if ok else float("inf")
        check(ok and d <= tol, "%s: run %s equals native within %g (max rel diff %.3g, %.1f s)%s"
              % (r.name, name, tol, d, p.seconds, "" if ok else ": " + p.stderr[-300:]))

    for precision in PRECISIONS[1:]:
        p, outs = run_model(r, models["fp32"], input_flags, precision, os.path.join(workdir, r.name, precision))
        if precision == "bf16":
            check_refusal(p, "%s: run --precision bf16" % r.name)
        else:
            ok = p.returncode == 0 and len(outs) == len(native[precision]) > 0
            d = rel_diff(outs, native[precision]) if ok else float("inf")
            check(ok and d <= INT8_TOL, "%s: run --precision %s equals native within %g (max rel diff %.3g)%s"
                  % (r.name, precision, INT8_TOL, d, "" if ok else ": " + p.stderr[-300:]))

    check_serve(r, native)


def check_serve(r, native):
    s = ServeProcess(None, command=r.argv(["serve", "--host", "127.0.0.1", "--port", "0", "--threads", "1"]),
                     env=r.env, name="serve under %s" % r.name, timeout=180)
    try:
        s.wait_ready(timeout=180)
        status, body = s.get("/v2", timeout=30 * SLOW)
        features = json.loads(body)["cpu"]["features"]
        check(status == 200 and "avx512f" not in features and CPU_MODELS[r.cpu]["has"][-1] in features,
              "%s: serve GET /v2 reports the CPU's features: %s" % (r.name, " ".join(features)))
        req = json.dumps({"inputs": [{"name": "text", "datatype": "BYTES", "shape": [1], "data": [TEXTS[1]]}]})
        http = urllib.request.Request(s.url("/v2/models/langid/infer"), data=req.encode(),
                                      headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(http, timeout=60 * SLOW) as resp:
            outs = {o["name"]: o for o in json.loads(resp.read())["outputs"]}
        check(outs["label"]["data"] == [native["classify"][1]["label"]],
              "%s: serve answers an OIP text request like native classify (%s)" % (r.name, outs["label"]["data"]))
    finally:
        s.stop()
    check_serve_refusal(r)


def check_serve_refusal(r):
    """serve --precision bf16: live, the model's load refused by the rule (logged, and its state in the
    repository index), the server not ready -- the process neither aborts nor serves bf16."""
    s = ServeProcess(None, command=r.argv(["serve", "--host", "127.0.0.1", "--port", "0", "--threads", "1",
                                           "--precision", "bf16"]),
                     env=r.env, name="serve --precision bf16 under %s" % r.name, timeout=180)
    try:
        deadline = time.time() + 180 * SLOW
        while time.time() < deadline and s.proc.poll() is None and "load of model 'langid' failed" not in s.log:
            time.sleep(0.2)
        line = next((l for l in s.lines if "load of model 'langid' failed" in l), "")
        check(s.proc.poll() is None and "bf16 needs" in line and "avx512_bf16" in line.lower() and "--precision fp32" in line,
              "%s: serve --precision bf16 stays up and logs the refusal: %s" % (r.name, line.strip()[-200:] or s.log[-300:]))
        check(not s.ready(), "%s: serve --precision bf16 is not ready (no model loaded)" % r.name)
        http = urllib.request.Request(s.url("/v2/repository/index"), data=b"{}", headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(http, timeout=30 * SLOW) as resp:
            index = {m["name"]: m for m in json.loads(resp.read())}
        langid = index.get("langid", {})
        check(langid.get("state") == "UNAVAILABLE" and "bf16 needs" in langid.get("reason", ""),
              "%s: the repository index says why langid is unavailable: %s" % (r.name, str(langid)[:200]))
    finally:
        s.stop()
    check(s.proc.returncode == -9 and "terminate called" not in s.log and "Sanitizer" not in s.log,
          "%s: serve --precision bf16 was stopped by the test, not by an abort (rc %s)" % (r.name, s.proc.returncode))


def main():
    binary = os.path.abspath(sys.argv[1])
    if not shutil.which("qemu-x86_64"):
        sys.exit("qemu-x86_64 not found: install Debian's qemu-user (scripts/setup.sh does)")
    workdir = tempfile.mkdtemp(prefix="glassbox-portability-")
    try:
        stub = build_asan_stub(binary, workdir) if asan_instrumented(binary) else None
        models, input_flags = prepare_models(workdir)
        native_runner = Runner(binary, None, None)
        native = {}
        p, native["classify"] = classify(native_runner)
        if p.returncode != 0:
            sys.exit("native classify failed: " + p.stderr)
        for name, path in models.items():
            p, native[name] = run_model(native_runner, path, input_flags, "fp32", os.path.join(workdir, "native", name))
            if p.returncode != 0:
                sys.exit("native run of %s failed: %s" % (name, p.stderr))
        for precision in PRECISIONS[1:]:
            p, native[precision] = run_model(native_runner, models["fp32"], input_flags, precision,
                                             os.path.join(workdir, "native", precision))
            if precision == "bf16" and not native_has_bf16():
                check_refusal(p, "native: run --precision bf16 (this CPU lacks AVX512_BF16 and AMX_BF16)")
            else:
                check(p.returncode == 0, "native: run --precision %s runs%s" % (precision, p.stderr[-300:]))
        for cpu in CPU_MODELS:
            check_cpu(Runner(binary, cpu, stub), models, input_flags, native, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if FAILURES:
        print("\n%d check(s) failed:\n  %s" % (len(FAILURES), "\n  ".join(FAILURES)))
        sys.exit(1)
    print("portability: all checks passed")


if __name__ == "__main__":
    main()
