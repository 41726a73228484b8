"""The declared memory budget from Python (docs/memory.md): glassbox.Session(..., max_memory=...) and
glassbox.pipeline(..., max_memory=...) apply the same rule as --max-memory. A model that cannot fit is refused
at load with LimitExceeded naming the numbers; the account is readable (memory_report()); a run whose tensors
would cross what the budget leaves is refused before the allocation.
"""
import os
import re
import tempfile

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper, save

import glassbox


def weights_model(path, floats):
    """y = x + W (W: `floats` float32 initializers), x [1, floats]."""
    w = numpy_helper.from_array(np.ones((1, floats), np.float32), "W")
    node = helper.make_node("Add", ["x", "W"], ["y"])
    g = helper.make_graph([node], "weights", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, floats])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, floats])], initializer=[w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    save(m, path)


def filled_model(path):
    """y = ConstantOfShape(shape): the input's two numbers decide the output's bytes."""
    node = helper.make_node("ConstantOfShape", ["shape"], ["y"], value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0]))
    g = helper.make_graph([node], "filled", [helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["a", "b"])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    save(m, path)


def numbers(text):
    return [int(n) for n in re.findall(r"\d{4,}", text)]


def test_session_refused_at_load_names_the_numbers():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "w.onnx")
        weights_model(path, 4 << 20)  # 16 MiB of weights
        with pytest.raises(glassbox.LimitExceeded) as e:
            glassbox.Session(path, max_memory="8M")  # less than the process alone
        msg = str(e.value)
        assert "over the budget of 8388608 bytes" in msg, msg
        assert str(16 << 20) in msg, msg  # the weights, by number
        # Without a budget it loads, and the account says there is none.
        s = glassbox.Session(path)
        r = s.memory_report()
        assert r["budget"] == 0 and r["weights"] == 16 << 20 and r["run_limit"] == 0, r


def test_session_budget_report_and_a_run_refused_before_its_allocation():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "filled.onnx")
        filled_model(path)
        probe = glassbox.Session(path, max_memory=1 << 40)
        process = probe.memory_report()["reserved"]  # the process, measured before the model
        assert process > 1 << 20, probe.memory_report()
        budget = process + (64 << 20)  # leaves 64 MiB for a run's tensors
        s = glassbox.Session(path, max_memory=budget, max_input_shapes={"shape": [2]})
        r = s.memory_report()
        assert r["budget"] == budget and r["weights"] == 0, r
        assert r["run_limit"] == budget - r["reserved"] and r["run_limit"] <= 64 << 20, r
        assert r["shape"] == "shape[2]", r  # the declared shape was dry-run at load
        assert s.options["max_memory"] == budget
        out = s.run({"shape": np.array([1024, 1024], np.int64)})  # 4 MiB: fits
        assert out["y"].shape == (1024, 1024)
        with pytest.raises(glassbox.LimitExceeded) as e:
            s.run({"shape": np.array([8192, 8192], np.int64)})  # 256 MiB: over what the budget leaves
        msg = str(e.value)
        assert "the memory limit is" in msg and str(budget) in msg, msg


def test_pipeline_budget_refused_at_load_and_report():
    with pytest.raises(glassbox.LimitExceeded) as e:
        glassbox.pipeline("text-classification", max_memory="1M")
    msg = str(e.value)
    assert "budget of 1048576 bytes" in msg, msg
    assert any(n > 1 << 20 for n in numbers(msg)), msg  # what it needs, by number
    p = glassbox.pipeline("text-classification", max_memory="4G")
    r = p.memory_report()
    assert r["budget"] == 4 << 30 and r["total"] <= r["budget"], r
    assert r["total"] == r["process"] + r["tokenizer"] + r["weights"] + r["first_run"] + r["arena"], r
    assert r["batch"] >= 1 and r["tokens"] >= 1 and r["weights"] > 0 and r["run_limit"] > 0, r
    assert len(p(["hello world"])) == 1
    assert glassbox.pipeline("text-classification").memory_report() is None  # no budget: nothing estimated
