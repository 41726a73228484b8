#!/usr/bin/python3
"""glassbox cross-built for aarch64 (cmake/toolchain-aarch64.cmake), run under qemu-aarch64, against
the x86-64 build of the same commit run natively (issue 33 §2). Run by scripts/test_arm64.sh (not by
ctest: the cross build takes tens of minutes on CI's two cores). Two qemu CPU models (ARM64_CPUS):
`max` (NEON, SVE, BF16, I8MM, SDOT: a Neoverse-V1-class server such as Graviton 3) and `cortex-a72`
(NEON only: a Raspberry Pi 4), every check on each.

  * `explain --json`: the CPU report is the emulated ARM CPU's (asimd; sve, bf16, i8mm exactly where
    the qemu model has them; no x86 feature), fp32 and int8-dynamic run, bf16 is refused by the
    declared rule (docs/runtime.md);
  * `classify` with the default model: the same labels as the x86 run, scores within FP32_TOL;
  * `run` on the small fp32 test model (bert_tiny_cls_op14) and its int8 forms (dynamic per-channel,
    QDQ per-tensor) at --precision fp32, and the fp32 model at int8-dynamic: outputs equal the x86
    run's within FP32_TOL / INT8_TOL (the measured differences are printed); --precision bf16 is
    refused with exit code 1 naming what is missing and the alternatives, never an abort;
  * `serve` (default model) on 127.0.0.1: GET /v2 reports the ARM features, one OIP text request
    answers the x86 classify's label.

Tolerances (portability_test.py's, for the same reasons): on aarch64 oneDNN runs other GEMM kernels
(its aarch64 JIT or reference loops) with another summation order, and the elementwise math is libm's
instead of the x86 vector polynomials, so fp32 results differ by rounding noise; an int8 activation
next to a rounding boundary may move one quantization step.

Usage: arm64_test.py X86_GLASSBOX ARM64_GLASSBOX   (GLASSBOX_TEST_SLOWDOWN scales the time bounds)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import portability_test as pt  # noqa: E402
from portability_test import check, classify, not_an_abort, prepare_models, rel_diff, run_model  # noqa: E402
from serve_process import SLOW, ServeProcess  # noqa: E402

X86_FEATURES = ["sse4.1", "sse4.2", "avx", "avx2", "fma", "avx512f"]
# qemu's CPU definitions (target/arm/cpu64.c): what each model has and lacks.
ARM_CPUS = {
    "max": {"has": ["asimd", "fp16", "asimddp", "sve", "bf16", "i8mm"], "lacks": []},
    "cortex-a72": {"has": ["asimd"], "lacks": ["fp16", "asimddp", "sve", "bf16", "i8mm"]},
}
MEASURED = []  # (what, max rel diff) for the record in docs/benchmarks.md


class ArmRunner(pt.Runner):
    """The aarch64 binary under qemu-aarch64 (the multiarch loader /lib/ld-linux-aarch64.so.1 and the
    :arm64 libraries in /usr/lib/aarch64-linux-gnu, as scripts/test_arm64.sh installs them)."""

    def __init__(self, binary, cpu):
        super().__init__(binary, None, None)
        self.prefix = ["qemu-aarch64", "-cpu", cpu]
        self.arm_cpu = cpu
        self.name = "aarch64 %s (qemu)" % cpu


def check_arm_refusal(p, who):
    check(p.returncode == 1 and not_an_abort(p), "%s: refused with exit code 1, no abort (rc %d)" % (who, p.returncode))
    check("bf16 needs" in p.stderr and "aarch64" in p.stderr and "--precision fp32" in p.stderr
          and "int8-dynamic" in p.stderr,
          "%s: the refusal names what is missing and the alternatives: %s" % (who, p.stderr.strip()[-300:]))


def check_explain(r):
    p = r.run(["explain", "--json"], timeout=600)
    check(p.returncode == 0, "%s: explain --json runs (%.1f s)%s" % (r.name, p.seconds, "" if p.returncode == 0 else
                                                                      ": " + p.stderr[-300:]))
    if p.returncode != 0:
        return
    cpu = json.loads(p.stdout)["cpu"]
    model = ARM_CPUS[r.arm_cpu]
    check(all(f in cpu["features"] for f in model["has"]) and not any(f in cpu["features"] for f in model["lacks"])
          and not any(f in cpu["features"] for f in X86_FEATURES),
          "%s: explain reports ARM features, no x86 ones: %s (%s)" % (r.name, " ".join(cpu["features"]), cpu["vendor"]))
    verdicts = {v["precision"]: v["runs"] for v in cpu["precisions"]}
    check(verdicts == {"fp32": True, "bf16": False, "int8-dynamic": True}, "%s: precision verdicts %s" % (r.name, verdicts))
    for k in cpu["kernels"]:
        print("      %-60s %s | %s" % (k["op_class"][:60], k["kernel"], k["speed"]), flush=True)
    check(all("x86/" not in k["kernel"] and "AVX" not in k["kernel"] for k in cpu["kernels"]),
          "%s: no kernel family names an x86 kernel" % r.name)
    print("      %s" % cpu["onednn"], flush=True)


def check_models(r, models, input_flags, ref, workdir):
    for name, path in models.items():
        tol = pt.FP32_TOL if name == "fp32" else pt.INT8_TOL
        p, outs = run_model(r, path, input_flags, "fp32", os.path.join(workdir, r.arm_cpu, name))
        ok = p.returncode == 0 and len(outs) == len(ref[name]) > 0
        d = rel_diff(outs, ref[name]) if ok else float("inf")
        MEASURED.append(("%s run %s" % (r.arm_cpu, name), d))
        check(ok and d <= tol, "%s: run %s equals the x86 run within %g (max rel diff %.3g, %.1f s)%s"
              % (r.name, name, tol, d, p.seconds, "" if ok else ": " + p.stderr[-300:]))
    p, outs = run_model(r, models["fp32"], input_flags, "int8-dynamic", os.path.join(workdir, r.arm_cpu, "int8-dynamic"))
    ok = p.returncode == 0 and len(outs) == len(ref["int8-dynamic"]) > 0
    d = rel_diff(outs, ref["int8-dynamic"]) if ok else float("inf")
    MEASURED.append(("%s run --precision int8-dynamic" % r.arm_cpu, d))
    check(ok and d <= pt.INT8_TOL, "%s: run --precision int8-dynamic equals the x86 run within %g (max rel diff %.3g)%s"
          % (r.name, pt.INT8_TOL, d, "" if ok else ": " + p.stderr[-300:]))
    p, _ = run_model(r, models["fp32"], input_flags, "bf16", os.path.join(workdir, r.arm_cpu, "bf16"))
    check_arm_refusal(p, "%s: run --precision bf16" % r.name)


def check_serve(r, ref):
    s = ServeProcess(None, command=r.argv(["serve", "--host", "127.0.0.1", "--port", "0", "--threads", "1"]),
                     env=r.env, name="serve under " + r.name, timeout=300)
    try:
        s.wait_ready(timeout=300)
        status, body = s.get("/v2", timeout=60 * SLOW)
        features = json.loads(body)["cpu"]["features"]
        check(status == 200 and "asimd" in features and "avx2" not in features,
              "%s: serve GET /v2 reports the ARM features: %s" % (r.name, " ".join(features)))
        req = json.dumps({"inputs": [{"name": "text", "datatype": "BYTES", "shape": [1], "data": [pt.TEXTS[1]]}]})
        http = urllib.request.Request(s.url("/v2/models/langid/infer"), data=req.encode(),
                                      headers={"Content-Type": "application/json"})
        t0 = time.time()
        with urllib.request.urlopen(http, timeout=120 * SLOW) as resp:
            outs = {o["name"]: o for o in json.loads(resp.read())["outputs"]}
        check(outs["label"]["data"] == [ref["classify"][1]["label"]],
              "%s: serve answers an OIP text request like the x86 classify (%s, %.2f s)"
              % (r.name, outs["label"]["data"], time.time() - t0))
    finally:
        s.stop()


def main():
    x86, arm = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if not shutil.which("qemu-aarch64"):
        sys.exit("qemu-aarch64 not found: install Debian's qemu-user (scripts/setup.sh does)")
    workdir = tempfile.mkdtemp(prefix="glassbox-arm64-")
    try:
        models, input_flags = prepare_models(workdir)
        native = pt.Runner(x86, None, None)
        ref = {}
        p, ref["classify"] = classify(native)
        if p.returncode != 0:
            sys.exit("x86 classify failed: " + p.stderr)
        for name, path in models.items():
            p, ref[name] = run_model(native, path, input_flags, "fp32", os.path.join(workdir, "x86", name))
            if p.returncode != 0:
                sys.exit("x86 run of %s failed: %s" % (name, p.stderr))
        p, ref["int8-dynamic"] = run_model(native, models["fp32"], input_flags, "int8-dynamic",
                                           os.path.join(workdir, "x86", "int8-dynamic"))
        if p.returncode != 0:
            sys.exit("x86 run --precision int8-dynamic failed: " + p.stderr)

        for cpu in os.environ.get("ARM64_CPUS", "max cortex-a72").split():
            check_arm_cpu(ArmRunner(arm, cpu), models, input_flags, ref, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print("measured differences aarch64 (qemu) vs x86-64: " + "; ".join("%s %.3g" % m for m in MEASURED))
    if pt.FAILURES:
        print("\n%d check(s) failed:\n  %s" % (len(pt.FAILURES), "\n  ".join(pt.FAILURES)))
        sys.exit(1)
    print("arm64: all checks passed")


def check_arm_cpu(r, models, input_flags, ref, workdir):
    t0 = time.time()
    check_explain(r)
    p, rows = classify(r)
    check(p.returncode == 0 and [x["label"] for x in rows] == [x["label"] for x in ref["classify"]],
          "%s: classify labels %s equal the x86 run's (%.1f s)%s" % (r.name, [x["label"] for x in rows], p.seconds,
                                                                    "" if p.returncode == 0 else ": " + p.stderr[-300:]))
    if rows:
        d = max(abs(a["score"] - b["score"]) for x, y in zip(rows, ref["classify"])
                for a, b in zip(x["labels"], y["labels"]))
        MEASURED.append(("%s classify scores (abs)" % r.arm_cpu, d))
        check(d <= pt.FP32_TOL, "%s: classify scores within %g of x86 (max diff %.3g)" % (r.name, pt.FP32_TOL, d))
    check_models(r, models, input_flags, ref, workdir)
    check_serve(r, ref)
    print("%s: all checks took %.0f s" % (r.name, time.time() - t0), flush=True)


if __name__ == "__main__":
    main()
