#!/usr/bin/python3
"""glassbox vs onnxruntime-node on the same int8-quantized BERT-base file (issue 17 §1a).

The fp32 BERT-base export (scripts/make_test_models.py --only bert_base_op14) is quantized with
scripts/quantize_model.py the way onnxruntime's quantize_dynamic writes it (DynamicQuantizeLinear +
MatMulInteger + Cast + Mul; per-tensor, and per-channel as a second model; --qdq adds the QDQ form).
Then, per round and model, interleaved: ORT (bench/engine/ort_bench.js: graphOptimizationLevel 'all',
intraOpNumThreads N — ORT fuses the pattern into its own int8 kernels) and `glassbox bench --json`
(default: quantized_matmul_fusion on), b1 x 128 tokens, both writing their outputs. Reports p50/p95
per engine, the ratio glassbox / ORT per round and its median over rounds, and the outputs' max
normwise difference glassbox vs ORT int8 next to ORT int8 vs ORT fp32 (the quantization noise).
Usage: bench/int8/vs_ort_int8.py --glassbox BUILD/src/cli/glassbox [--rounds 3] [--repeat 20]
       [--threads 2] [--qdq] [--record]   (--record appends the table to docs/benchmarks-history.md)
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
ORT_BENCH = os.path.join(ROOT, "bench", "engine", "ort_bench.js")


def run_json(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"command failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-3000:]}")
    out = p.stdout.strip()
    return json.loads(out[out.index("{"):])


def outputs(d):
    outs, i = [], 0
    while os.path.exists(os.path.join(d, f"output_{i}.npy")):
        outs.append(np.load(os.path.join(d, f"output_{i}.npy")).astype(np.float64))
        i += 1
    return outs


def normwise(a, b):
    if len(a) != len(b) or not a:
        return float("inf")
    return max(float(np.abs(x - y).max() / max(np.abs(y).max(), 1e-30)) for x, y in zip(a, b))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--glassbox", required=True)
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "tests", "data", "generated"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "vs_ort_int8"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--qdq", action="store_true", help="also the QDQ form (fixed activation range [-8, 8])")
    ap.add_argument("--record", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    fp32 = os.path.join(a.models_dir, "bert_base_op14.onnx")
    if not os.path.exists(fp32):
        sys.exit(f"{fp32} missing: run scripts/make_test_models.py --only bert_base_op14")
    variants = [("dynamic", []), ("dynamic per-channel", ["--per-channel"])]
    if a.qdq:
        variants.append(("qdq per-channel", ["--mode", "qdq", "--per-channel"]))
    models = {}
    for label, flags in variants:
        path = os.path.join(a.work, "bert_base_" + label.replace(" ", "_") + ".onnx")
        if not os.path.exists(path) or os.path.getmtime(path) < os.path.getmtime(fp32):
            mode = [] if "--mode" in flags else ["--mode", "dynamic"]
            subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "quantize_model.py"), fp32, path]
                           + mode + flags, check=True)
        models[label] = path
    rng = np.random.default_rng(7)
    inputs = []
    for name, v in (("input_ids", rng.integers(1, 30522, (1, 128))), ("attention_mask", np.ones((1, 128))),
                    ("token_type_ids", np.zeros((1, 128)))):
        p = os.path.join(a.work, f"{name}.npy")
        np.save(p, v.astype(np.int64))
        inputs += ["--input", f"{name}={p}"]
    common = ["--threads", str(a.threads), "--repeat", str(a.repeat), "--warmup", str(a.warmup)] + inputs
    ort32_dir = os.path.join(a.work, "ort_fp32")
    run_json(["node", ORT_BENCH, fp32, "--threads", str(a.threads), "--repeat", "1", "--warmup", "0",
              "--output-dir", ort32_dir] + inputs)
    ref32 = outputs(ort32_dir)
    load_before = os.getloadavg()
    rows = {label: {"ort": [], "gb": [], "gb_unfused": []} for label in models}
    errs = {}
    for r in range(a.rounds):
        for label, path in models.items():
            d = os.path.join(a.work, label.replace(" ", "_"))
            ort = run_json(["node", ORT_BENCH, path, "--output-dir", os.path.join(d, "ort")] + common)
            gb = run_json([a.glassbox, "bench", path, "--json", "--output-dir", os.path.join(d, "gb")] + common)
            gbu = run_json([a.glassbox, "bench", path, "--json", "--disable-pass", "quantized_matmul_fusion"] + common)
            rows[label]["ort"].append(ort["latency_ms"])
            rows[label]["gb"].append(gb["latency_ms"])
            rows[label]["gb_unfused"].append(gbu["latency_ms"])
            o8, g8 = outputs(os.path.join(d, "ort")), outputs(os.path.join(d, "gb"))
            errs[label] = (normwise(g8, o8), normwise(o8, ref32))
            print(f"round {r + 1} {label}: glassbox p50 {gb['latency_ms']['p50']:.1f} ms (unfused "
                  f"{gbu['latency_ms']['p50']:.1f}) vs ORT {ort['latency_ms']['p50']:.1f} ms -> "
                  f"{gb['latency_ms']['p50'] / ort['latency_ms']['p50']:.2f}x", flush=True)
    load_after = os.getloadavg()
    commit = subprocess.run(["git", "-C", ROOT, "log", "-1", "--format=%h %s"], capture_output=True, text=True).stdout.strip()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"### int8 vs ORT (same quantized file) — {now}, commit `{commit}`", "",
             f"Load average before/after: {load_before[0]:.2f} / {load_after[0]:.2f} (1 min), {os.cpu_count()} CPUs; "
             f"b1 x 128, {a.threads} threads, {a.repeat} timed runs x {a.rounds} interleaved rounds. Goal: p50 <= 0.8x ORT.", "",
             "| model (BERT-base) | glassbox p50 ms | unfused p50 ms | ORT p50 ms | p50 ratio per round | median ratio | "
             "max normwise diff vs ORT int8 | ORT int8 vs ORT fp32 |",
             "|---|---|---|---|---|---|---|---|"]
    for label, v in rows.items():
        ratios = [g["p50"] / o["p50"] for g, o in zip(v["gb"], v["ort"])]
        med = statistics.median(ratios)
        lines.append(f"| {label} | {statistics.median(g['p50'] for g in v['gb']):.1f} | "
                     f"{statistics.median(g['p50'] for g in v['gb_unfused']):.1f} | "
                     f"{statistics.median(o['p50'] for o in v['ort']):.1f} | {', '.join(f'{x:.2f}' for x in ratios)} | "
                     f"{med:.2f}x {'✓' if med <= 0.8 else '✗'} | {errs[label][0]:.1e} | {errs[label][1]:.1e} |")
    table = "\n".join(lines) + "\n"
    print("\n" + table)
    if a.record:
        with open(os.path.join(ROOT, "docs", "benchmarks-history.md"), "a") as f:
            f.write("\n" + table)
        print("appended to docs/benchmarks-history.md")


if __name__ == "__main__":
    main()
