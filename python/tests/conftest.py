"""Shared fixtures: paths, the C++ CLI, onnxruntime-node (the peer), small models.

Run by ctest (python/tests/pytest.cmake) with PYTHONPATH=<build>/python and GLASSBOX_CLI set;
by hand: PYTHONPATH=build-dev/python GLASSBOX_CLI=build-dev/src/cli/glassbox python3 -m pytest python/tests
"""

import json
import os
import subprocess

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GENERATED = os.path.join(ROOT, "tests", "data", "generated")
PEERS = os.path.join(ROOT, ".peers", "node_modules")
SANITIZED = os.environ.get("GLASSBOX_SANITIZED") == "1"


def child_env():
    """Environment for child processes: without the ASan preload meant for this interpreter."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return env


def cli_path():
    path = os.environ.get("GLASSBOX_CLI", os.path.join(ROOT, "build-dev", "src", "cli", "glassbox"))
    assert os.path.isfile(path), f"the glassbox CLI is not built at {path} (set GLASSBOX_CLI)"
    return path


def run_cli(args, stdin=None):
    """Runs `glassbox ARGS...`; returns stdout (fails the test on a non-zero exit)."""
    r = subprocess.run([cli_path()] + list(args), input=stdin, capture_output=True, text=True, env=child_env())
    assert r.returncode == 0, f"glassbox {' '.join(args)} failed ({r.returncode}): {r.stderr}"
    return r.stdout


def run_cli_outputs(model, feeds, tmp_path, threads=1, extra=()):
    """`glassbox run MODEL --input NAME=FILE.npy ... EXTRA...`: the outputs as {name: array}."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    args = ["run", model, "--threads", str(threads), "--output-dir", str(tmp_path / "cli")] + list(extra)
    for name, value in feeds.items():
        f = tmp_path / f"in_{name}.npy"
        np.save(f, value)
        args += ["--input", f"{name}={f}"]
    summary = json.loads(run_cli(args))
    return {o["name"]: np.load(tmp_path / "cli" / f"output_{i}.npy") for i, o in enumerate(summary["outputs"])}


def run_ort(model, feeds, tmp_path):
    """onnxruntime-node 1.30.0 (scripts/parity/run_ort.js): the outputs as {name: array}."""
    assert os.path.isdir(os.path.join(PEERS, "onnxruntime-node")), "npm peers missing: bash scripts/install_peers.sh"
    tmp_path.mkdir(parents=True, exist_ok=True)
    out = tmp_path / "ort"
    args = ["node", os.path.join(ROOT, "scripts", "parity", "run_ort.js"), model, str(out)]
    for name, value in feeds.items():
        f = tmp_path / f"ort_{name}.npy"
        np.save(f, value)
        args.append(f"{name}={f}")
    r = subprocess.run(args, capture_output=True, text=True, env=child_env())
    assert r.returncode == 0, f"run_ort.js failed: {r.stderr}"
    summary = json.loads(r.stdout)
    return {o["name"]: np.load(o["npy"]) for o in summary["outputs"]}


def generated_model(name):
    path = os.path.join(GENERATED, name + ".onnx")
    assert os.path.isfile(path), f"{path} missing: run /usr/bin/python3 scripts/make_test_models.py"
    return path


def text_feeds(session, batch, seq, seed):
    """Token inputs like tests/parity/parity_test.js: row b padded by b tokens, ids in [1, 900]."""
    rng = np.random.default_rng(seed)
    feeds = {}
    valid = np.arange(seq)[None, :] < np.maximum(1, seq - np.arange(batch))[:, None]
    for spec in session.inputs:
        if "mask" in spec.name:
            feeds[spec.name] = valid.astype(np.int64)
        elif "type" in spec.name:
            feeds[spec.name] = np.broadcast_to((np.arange(seq) >= seq / 2).astype(np.int64), (batch, seq)).copy()
        else:
            feeds[spec.name] = np.where(valid, rng.integers(1, 901, (batch, seq)), 0).astype(np.int64)
    return feeds


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory):
    """One-node models made with python3-onnx: add.onnx (x + y, float32 [N, 4]) and log.onnx (Log, NaN for x < 0)."""
    import onnx
    from onnx import TensorProto, helper

    d = tmp_path_factory.mktemp("tiny")

    def save(name, nodes, inputs, outputs):
        graph = helper.make_graph(nodes, name, inputs, outputs)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 7
        onnx.checker.check_model(model)
        onnx.save(model, str(d / f"{name}.onnx"))

    vi = helper.make_tensor_value_info
    save("add", [helper.make_node("Add", ["x", "y"], ["z"], name="add_node")],
         [vi("x", TensorProto.FLOAT, ["N", 4]), vi("y", TensorProto.FLOAT, ["N", 4])],
         [vi("z", TensorProto.FLOAT, ["N", 4])])
    save("log", [helper.make_node("Relu", ["x"], ["r"], name="relu_node"),
                 helper.make_node("Neg", ["x"], ["n"], name="neg_node"),
                 helper.make_node("Log", ["n"], ["l"], name="log_node"),
                 helper.make_node("Add", ["r", "l"], ["y"], name="sum_node")],
         [vi("x", TensorProto.FLOAT, [2, 3])], [vi("y", TensorProto.FLOAT, [2, 3])])
    return {"add": str(d / "add.onnx"), "log": str(d / "log.onnx")}
