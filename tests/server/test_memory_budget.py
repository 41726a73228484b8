"""The declared memory budget in the server (docs/memory.md): glassbox.json "max_memory" per model.

A tensor model's requests may use what the budget leaves after the process and the weights: a request
whose tensors would cross it is refused with 413 before the allocation, and the server's peak RSS stays
under the budget across a few largest-shape requests. A text model whose estimate at the scheduler's
largest run exceeds its budget is refused at load, naming the numbers.
"""
import json
import os
import shutil
import tempfile
import time

import requests
from onnx import TensorProto, helper, save


BUDGET = 1 << 30  # 1 GiB


def vm(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise AssertionError(key)


def filled_model_dir(budget):
    """y = ConstantOfShape(shape) (float 1.0): the request's two numbers decide the output's bytes."""
    d = tempfile.mkdtemp(prefix="glassbox-membudget-")
    node = helper.make_node("ConstantOfShape", ["shape"], ["y"], value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0]))
    g = helper.make_graph([node], "filled", [helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["a", "b"])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    save(m, os.path.join(d, "model.onnx"))
    with open(os.path.join(d, "glassbox.json"), "w") as f:
        json.dump({"max_memory": budget}, f)
    return d


def infer(server, shape):
    body = {"inputs": [{"name": "shape", "datatype": "INT64", "shape": [2], "data": shape}],
            "outputs": [{"name": "y", "parameters": {"binary_data": True}}]}
    return requests.post(server.url("/v2/models/%s/infer" % server.model), json=body, timeout=60)


def test_tensor_request_over_budget_is_413_and_rss_stays_under(start_server):
    d = filled_model_dir("1G")
    try:
        s = start_server([d])
        s.model = os.path.basename(d)
        r = infer(s, [64, 1024])  # 256 KiB: fits
        assert r.status_code == 200, r.text
        r = infer(s, [40000, 40000])  # 6.4 GB of floats: over what 1 GiB leaves
        assert r.status_code == 413, r.text
        assert "the memory limit is" in r.text, r.text  # the executor's refusal before the allocation
        # A few of the largest shapes that fit (64 MiB each) and the over-budget one again.
        for _ in range(3):
            assert infer(s, [4096, 4096]).status_code == 200
            assert infer(s, [40000, 40000]).status_code == 413
        peak = vm(s.proc.pid, "VmHWM")
        assert peak < BUDGET, "peak RSS %d over the budget %d" % (peak, BUDGET)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_text_model_over_budget_is_refused_at_load(models, start_server):
    d = tempfile.mkdtemp(prefix="glassbox-membudget-text-")
    try:
        shutil.copytree(models["langid"], os.path.join(d, "langid"))
        path = os.path.join(d, "langid", "glassbox.json")
        with open(path) as f:
            j = json.load(f)
        j["max_memory"] = "1M"
        with open(path, "w") as f:
            json.dump(j, f)
        s = start_server([os.path.join(d, "langid")], wait_ready=False)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and "over the budget of 1048576 bytes" not in s.log:
            time.sleep(0.2)
        log = s.log
        assert "over the budget of 1048576 bytes" in log, log
        assert "weights" in log and "process" in log, log
        assert "0 of 1 models ready" in log or not s.ready(), log
    finally:
        shutil.rmtree(d, ignore_errors=True)
