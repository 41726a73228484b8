#!/usr/bin/python3
"""The tree kernel alone vs onnxruntime-node on the same model and rows, interleaved.

Trains rf100 exactly as bench_trees.py does (scikit-learn RandomForestClassifier, 100 trees,
unbounded depth, min_samples_leaf 5, 32 features, 3 classes), dumps its trees, compiles
forest_kernel_bench.cpp with src/kernels/trees/forest.cpp (g++ -O3, the Release flags), and
alternates ROUNDS times: the kernel's predict over all rows (1 thread; scores checked against
the reference walk) and bench/engine/ort_bench.js on the converted ONNX model (1 thread). A
quick check of a kernel change without a full Release build; bench_trees.py measures the CLI.

Usage: bench/ml/forest_kernel_bench.py [--rows 10000] [--rounds 3] [--repeat 7]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import helper

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "scripts" / "ml"))
import bench_trees  # noqa: E402
import convert  # noqa: E402

MODES = {"BRANCH_LEQ": 0, "BRANCH_LT": 1, "BRANCH_GTE": 2, "BRANCH_GT": 3, "BRANCH_EQ": 4, "BRANCH_NEQ": 5, "LEAF": 6}


def dump_spec(model, path, n_features):
    """The TreeEnsembleClassifier/Regressor's trees in the layout forest_kernel_bench.cpp reads."""
    node = model.graph.node[0]
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    prefix = "class" if node.op_type == "TreeEnsembleClassifier" else "target"
    trees = convert._v3_trees(attrs, prefix)
    n_targets = len(attrs["classlabels_int64s"]) if prefix == "class" else attrs.get("n_targets", 1)
    with open(path, "wb") as f:
        np.array([len(trees), n_targets, n_features], np.int32).tofile(f)
        for _, (nodes, weights) in sorted(trees.items()):
            ids = sorted(nodes)
            cols = list(zip(*[nodes[i] for i in ids]))  # mode, feature, value, true, false, missing
            np.array([len(ids)], np.int32).tofile(f)
            for arr in ([MODES[m] for m in cols[0]], cols[1], cols[3], cols[4], cols[5],
                        [len(weights.get(i, [])) if nodes[i][0] == "LEAF" else 0 for i in ids]):
                np.array(arr, np.int32).tofile(f)
            np.array(cols[2], np.float64).tofile(f)
            for i in ids:
                if nodes[i][0] == "LEAF":
                    w = weights.get(i, [])
                    np.array([c for c, _ in w], np.int32).tofile(f)
                    np.array([v for _, v in w], np.float64).tofile(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=7)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="gb_forest_kernel_"))
    print(f"load average at start: {os.getloadavg()[0]:.2f}", flush=True)
    from sklearn.ensemble import RandomForestClassifier
    xr, yr = bench_trees.data(20000, 2, nan=False)
    rf = RandomForestClassifier(100, random_state=0, n_jobs=2, min_samples_leaf=5).fit(xr, yr + (xr[:, 4] > 0.5))
    model = convert.forest_classifier(rf)
    onnx.save(model, tmp / "rf100.onnx")
    dump_spec(model, tmp / "spec.bin", bench_trees.FEATURES)
    x, _ = bench_trees.data(a.rows, 7, False)
    x.tofile(tmp / "x.f32")
    np.save(tmp / "x.npy", x)
    exe = tmp / "forest_kernel_bench"
    subprocess.run(["g++", "-std=c++20", "-O3", "-DNDEBUG", f"-I{ROOT / 'src'}", str(HERE / "forest_kernel_bench.cpp"),
                    str(ROOT / "src/kernels/trees/forest.cpp"), "-o", str(exe)], check=True)
    ratios = []
    for r in range(a.rounds):
        k = json.loads(subprocess.run([str(exe), str(tmp / "spec.bin"), str(tmp / "x.f32"), str(a.rows), str(a.repeat)],
                                      capture_output=True, text=True, check=True).stdout)
        o = subprocess.run(["node", str(ROOT / "bench/engine/ort_bench.js"), str(tmp / "rf100.onnx"), "--input",
                            f"X={tmp / 'x.npy'}", "--repeat", str(a.repeat), "--threads", "1"],
                           capture_output=True, text=True, check=True).stdout
        ort = json.loads(o[o.index("{"):])["latency_ms"]["p50"]
        ratios.append(ort / k["p50_ms"])
        if r == 0:
            print(k["layout"])
        print(f"round {r + 1}: kernel {k['p50_ms']:.2f} ms  ort {ort:.2f} ms  ort/kernel {ratios[-1]:.2f}x", flush=True)
    print(f"median ort/kernel {float(np.median(ratios)):.2f}x; load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
