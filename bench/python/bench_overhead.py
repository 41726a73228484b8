#!/usr/bin/env python3
"""Binding overhead: glassbox.Session.run and glassbox.pipeline() per call from Python vs the same
work through the C++ API in the same process (glassbox._glassbox._bench_cpp_run / _bench_cpp_pipeline
time Session::run / Pipeline::classify in a C++ loop with no Python in it), on the same session.

Usage (a non-sanitized build; not part of CI):
  /usr/bin/python3 scripts/make_test_models.py --only bert_tiny_op14
  PYTHONPATH=build-dev/python /usr/bin/python3 bench/python/bench_overhead.py [--rounds 7]
Times are CPU time of the calling thread (threads=1: the engine runs on it), which other load
on the machine hardly changes. Prints one line per case: C++ per call, Python per call, overhead in us and %, from the best of
--rounds interleaved rounds (C++ then Python, each `repeat` calls), and the same from the medians.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

import glassbox
from glassbox import _glassbox

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def tiny_model(directory):
    import onnx
    from onnx import TensorProto, helper
    vi = helper.make_tensor_value_info
    graph = helper.make_graph([helper.make_node("Add", ["x", "y"], ["z"])], "add",
                              [vi("x", TensorProto.FLOAT, [1, 4]), vi("y", TensorProto.FLOAT, [1, 4])],
                              [vi("z", TensorProto.FLOAT, [1, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    path = os.path.join(directory, "add.onnx")
    onnx.save(model, path)
    return path


# CPU time of the calling thread, not wall time: with threads=1 the engine runs on the calling
# thread, and thread CPU time hardly moves when other processes load the machine (wall time does).
def per_call(fn, repeat):
    t0 = time.thread_time()
    for _ in range(repeat):
        fn()
    return (time.thread_time() - t0) / repeat


def cpp_per_call(fn, repeat):
    t0 = time.thread_time()
    fn(repeat)
    return (time.thread_time() - t0) / repeat


def measure(name, py_fn, cpp_fn, repeat, rounds):
    py_fn(), cpp_fn(1)  # warm-up: plans, caches
    py, cpp = [], []
    for _ in range(rounds):
        cpp.append(cpp_per_call(cpp_fn, repeat))
        py.append(per_call(py_fn, repeat))
    # Best round of each (the least disturbed by other load), and the medians for comparison.
    c, p = min(cpp), min(py)
    cm, pm = statistics.median(cpp), statistics.median(py)
    print(f"{name:42s} C++ {c * 1e6:9.2f} us  Python {p * 1e6:9.2f} us  overhead {(p - c) * 1e6:7.2f} us "
          f"({(p - c) / c * 100:+6.2f} %)  [medians: {(pm - cm) * 1e6:7.2f} us, {(pm - cm) / cm * 100:+6.2f} %]",
          flush=True)
    return c, p


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    print(f"glassbox {glassbox.__version__}, Python {sys.version.split()[0]}, threads={args.threads}, "
          f"load average {os.getloadavg()[0]:.1f}, "
          f"median of {args.rounds} rounds, best round")
    with tempfile.TemporaryDirectory() as d:
        s = glassbox.Session(tiny_model(d), threads=args.threads)
        x = np.ones((1, 4), np.float32)
        feeds = {"x": x, "y": x}
        measure("Session.run, Add [1,4] (tiny)", lambda: s.run(feeds), lambda n: _glassbox._bench_cpp_run(s, feeds, n),
                5000, args.rounds)

    bert = os.path.join(ROOT, "tests", "data", "generated", "bert_tiny_op14.onnx")
    s = glassbox.Session(bert, threads=args.threads)
    for batch, seq in ((1, 16), (1, 128), (8, 128)):
        rng = np.random.default_rng(0)
        feeds = {"input_ids": rng.integers(1, 900, (batch, seq)).astype(np.int64),
                 "attention_mask": np.ones((batch, seq), np.int64),
                 "token_type_ids": np.zeros((batch, seq), np.int64)}
        repeat = max(10, int(500 / (batch * seq / 16)))
        measure(f"Session.run, BERT-tiny [{batch},{seq}]", lambda: s.run(feeds),
                lambda n: _glassbox._bench_cpp_run(s, feeds, n), repeat, args.rounds)

    clf = glassbox.pipeline("text-classification", threads=args.threads)
    text = "Guten Morgen, wie geht es dir?"
    measure("pipeline('text-classification'), 1 text", lambda: clf(text),
            lambda n: _glassbox._bench_cpp_pipeline(clf._core, [text], n), 500, args.rounds)
    texts = [text] * 8
    measure("pipeline('text-classification'), 8 texts", lambda: clf(texts),
            lambda n: _glassbox._bench_cpp_pipeline(clf._core, texts, n), 60, args.rounds)


if __name__ == "__main__":
    main()
