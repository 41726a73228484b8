#!/usr/bin/python3
"""A tabular ai.onnx.ml model for the memory-budget evidence (docs/memory.md, bench/memory/rss_vs_estimate.sh):
bench/ml/bench_trees.py's rf100 recipe (scikit-learn RandomForestClassifier, 100 trees, min_samples_leaf 5,
32 features, 3 classes, 20,000 seeded rows), converted by scripts/ml/convert.py to TreeEnsembleClassifier +
ZipMap-free outputs. Its trees are node attributes, not initializers: the model has no weights in the ONNX
sense, and the memory its compiled trees take is what the estimate must still find.

Usage: /usr/bin/python3 scripts/memory/make_tabular_model.py [--out FILE]   (default tests/data/generated/rf100_mem.onnx)
"""
import argparse
import os
import sys

import numpy as np
import onnx
from sklearn.ensemble import RandomForestClassifier

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "ml"))
import convert  # noqa: E402

FEATURES = 32


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "generated", "rf100_mem.onnx"))
    a = ap.parse_args()
    rng = np.random.default_rng(2)
    x = rng.normal(size=(20000, FEATURES)).astype(np.float32)
    y = ((x[:, 0] + x[:, 1] * x[:, 2] - x[:, 3] ** 2 + 0.3 * rng.normal(size=len(x))) > 0).astype(int) + (x[:, 4] > 0.5)
    rf = RandomForestClassifier(100, random_state=0, n_jobs=1, min_samples_leaf=5).fit(x, y)
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    onnx.save(convert.forest_classifier(rf), a.out)
    nodes = sum(e.tree_.node_count for e in rf.estimators_)
    print(f"wrote {a.out} ({nodes} tree nodes, {os.path.getsize(a.out)} bytes)")


if __name__ == "__main__":
    main()
