#!/usr/bin/python3
"""Tree-ensemble benchmark (issue #20): glassbox vs onnxruntime-node 1.30 vs the native library.

Models (trained here, seeded, converted by scripts/ml/convert.py):
  xgb500  XGBoost binary:logistic, 500 trees, max_depth 8, 32 features (NaN in 5% of the inputs)
  rf100   scikit-learn RandomForestClassifier, 100 trees, unbounded depth, 32 features, 3 classes
Each at batch 1 and 10,000 rows, 1 and 2 threads: p50 latency of `glassbox bench --json`,
bench/engine/ort_bench.js (graphOptimizationLevel all, intraOpNumThreads N) and the library's own
predictor (xgboost inplace_predict with nthread N; sklearn predict_proba with n_jobs N), all on
the same rows. Outputs are compared (glassbox vs ORT) before timing counts.

Usage: bench/ml/bench_trees.py GLASSBOX [--repeat N] [--record]   (--record appends to docs/benchmarks-history.md)
Takes ~2-4 min on the 2-core machine (training ~1 min). Run on a quiet machine; it prints the load.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "ml"))
import convert  # noqa: E402

FEATURES = 32


def data(rows, seed, nan):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, FEATURES)).astype(np.float32)
    y = ((x[:, 0] + x[:, 1] * x[:, 2] - x[:, 3] ** 2 + 0.3 * rng.normal(size=rows)) > 0).astype(int)
    if nan:
        x[rng.random(x.shape) < 0.05] = np.nan
    return x, y


def train(tmp):
    import xgboost as xgb
    from sklearn.ensemble import RandomForestClassifier
    x, y = data(20000, 1, nan=True)
    booster = xgb.train({"objective": "binary:logistic", "max_depth": 8, "eta": 0.1, "nthread": 2, "seed": 0,
                         "tree_method": "hist"}, xgb.DMatrix(x, label=y, missing=np.nan), 500)
    xr, yr = data(20000, 2, nan=False)
    yr = yr + (xr[:, 4] > 0.5)
    rf = RandomForestClassifier(100, random_state=0, n_jobs=2, min_samples_leaf=5).fit(xr, yr)
    models = {"xgb500": (convert.xgboost_booster(booster, FEATURES), booster, True),
              "rf100": (convert.forest_classifier(rf), rf, False)}
    for name, (m, _, _) in models.items():
        onnx.save(m, tmp / f"{name}.onnx")
    return models


def time_native(lib, x, threads, repeat):
    import xgboost as xgb
    if isinstance(lib, xgb.Booster):
        lib.set_param({"nthread": threads})
        fn = lambda: lib.inplace_predict(x, missing=np.nan)  # noqa: E731
    else:
        lib.n_jobs = threads
        fn = lambda: lib.predict_proba(x)  # noqa: E731
    for _ in range(3):
        fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return float(np.median(times))


def run_json(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out[out.index("{"):])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("glassbox")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--record", action="store_true")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="gb_trees_"))
    load_start = os.getloadavg()
    print(f"load average: {load_start[0]:.2f} {load_start[1]:.2f}", flush=True)
    models = train(tmp)
    rows_out = []
    for name, (model, lib, nan) in models.items():
        explain = subprocess.run([a.glassbox, "explain", str(tmp / f"{name}.onnx")], capture_output=True, text=True).stdout
        layout = [line.strip() for line in explain.splitlines() if "tree layout" in line]
        print(f"{name}: {layout[0] if layout else '(no layout line)'}", flush=True)
        for batch in (1, 10000):
            x, _ = data(batch, 7, nan)
            np.save(tmp / "x.npy", x)
            # outputs must agree before the timings mean anything
            subprocess.run([a.glassbox, "run", str(tmp / f"{name}.onnx"), "--input", f"X={tmp / 'x.npy'}", "--output-dir",
                            str(tmp / "gb")], capture_output=True, check=True)
            subprocess.run(["node", str(ROOT / "scripts/parity/run_ort.js"), str(tmp / f"{name}.onnx"), str(tmp / "ort"),
                            f"X={tmp / 'x.npy'}"], capture_output=True, check=True)
            g, o = np.load(tmp / "gb/output_1.npy"), np.load(tmp / "ort/output_1.npy")
            diff = float(np.max(np.abs(g - o)))
            repeat = a.repeat if batch > 1 else a.repeat * 20
            for threads in (1, 2):
                gb = run_json([a.glassbox, "bench", str(tmp / f"{name}.onnx"), "--input", f"X={tmp / 'x.npy'}",
                               "--repeat", str(repeat), "--threads", str(threads), "--json"])
                ort = run_json(["node", str(ROOT / "bench/engine/ort_bench.js"), str(tmp / f"{name}.onnx"), "--input",
                                f"X={tmp / 'x.npy'}", "--repeat", str(repeat), "--threads", str(threads)])
                native = time_native(lib, x, threads, max(5, repeat // 2))
                r = dict(model=name, batch=batch, threads=threads, glassbox_ms=gb["latency_ms"]["p50"],
                         ort_ms=ort["latency_ms"]["p50"], native_ms=native, max_abs_diff=diff)
                rows_out.append(r)
                print(f"{name} batch {batch:5d} threads {threads}: glassbox {r['glassbox_ms']:.4f} ms  ort {r['ort_ms']:.4f} ms"
                      f"  native {native:.4f} ms  ort/glassbox {r['ort_ms'] / r['glassbox_ms']:.2f}x  |diff| {diff:.2g}",
                      flush=True)
    table = ["| model | batch | threads | glassbox p50 ms | ORT p50 ms | native p50 ms | ORT / glassbox | max abs diff vs ORT |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows_out:
        table.append(f"| {r['model']} | {r['batch']} | {r['threads']} | {r['glassbox_ms']:.4f} | {r['ort_ms']:.4f} | "
                     f"{r['native_ms']:.4f} | {r['ort_ms'] / r['glassbox_ms']:.2f}x | {r['max_abs_diff']:.2g} |")
    print("\n".join(table))
    if a.record:
        commit = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%h %s"], capture_output=True,
                                text=True).stdout.strip()
        with open(ROOT / "docs/benchmarks-history.md", "a") as f:
            load_end = os.getloadavg()
            f.write(f"\n### Trees — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average "
                    f"{load_start[0]:.1f} at the start, {load_end[0]:.1f} at the end (1-min), commit `{commit[:90]}`\n\n"
                    f"`bench/ml/bench_trees.py {os.path.relpath(a.glassbox, ROOT)} --repeat {a.repeat} --record`\n\n" +
                    "\n".join(table) + "\n")


if __name__ == "__main__":
    main()
