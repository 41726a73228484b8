"""The declared memory budget in the server (docs/memory.md): glassbox.json "max_memory" per model.

A tensor model's requests may use what the budget leaves after the process and the weights: a request
whose tensors would cross it is refused with 413 before the allocation, and the server's peak RSS stays
under the budget across a few largest-shape requests. A text model whose estimate at the scheduler's
largest run exceeds its budget is refused at load, naming the numbers.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

import pytest
import requests
from onnx import TensorProto, helper, save

from conftest import GLASSBOX, ROOT, SLOW


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


def explain_memory(server, model):
    ex = requests.get(server.url("/v2/models/%s/explain" % model), timeout=30).json()
    return {r["field"]: r for r in ex["model"]["memory"]}


def index(server):
    return {e["name"]: e for e in requests.post(server.url("/v2/repository/index"), json={}, timeout=30).json()}


def taken_before(memory_rows):
    """The bytes a model's memory.server row says the models loaded before it took."""
    return int(memory_rows["memory.server"]["source"].split(" bytes were taken")[0].rsplit(" ", 1)[1])


def two_langid_copies():
    repo = tempfile.mkdtemp(prefix="glassbox-membudget-server-")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models", "langid")
    for name in ("a", "b"):
        shutil.copytree(src, os.path.join(repo, name))
    return repo


def burst(server, model, seconds, clients=4):
    """Largest-shape requests (max_batch_size texts truncated to max_length) from `clients` threads; returns the
    status codes and the largest VmRSS of the server sampled every 10 ms meanwhile."""
    import threading
    text = " ".join(["hello"] * 600)  # truncated to max_length (langid declares truncation)
    body = {"inputs": [{"name": "text", "datatype": "BYTES", "shape": [8], "data": [text] * 8}]}
    codes = []
    deadline = time.monotonic() + seconds

    def client():
        while time.monotonic() < deadline:
            codes.append(requests.post(server.url("/v2/models/%s/infer" % model), json=body, timeout=120).status_code)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    peak = 0
    while any(t.is_alive() for t in threads):
        peak = max(peak, vm(server.proc.pid, "VmRSS"))
        time.sleep(0.01)
    for t in threads:
        t.join()
    return codes, peak


def test_server_budget_refuses_what_does_not_fit_unload_frees_it_and_a_burst_stays_under(start_server, monkeypatch):
    # Under ASan freed memory waits in a quarantine instead of being reused: the sanitizer's RSS, not the server's.
    monkeypatch.setenv("ASAN_OPTIONS", ":".join(o for o in [os.environ.get("ASAN_OPTIONS", ""), "quarantine_size_mb=0",
                                                            "detect_leaks=0"] if o))
    repo = two_langid_copies()
    try:
        # Under ASan the measured process row moves between two starts (a CI start: a's total 8.6 MB above step 1's),
        # and the window between a's total and b's need beside a is a's account less the server's one-time growth on
        # its first load (which only a's total holds): 22-33 MB at 8-32 rows (measured 2026-12-06, one plan per model).
        # 16 rows keeps step 3 21 MB under the budget (more rows: the unloaded a's pages that stay resident leave it
        # 8 MB at 32 rows); step 2 narrows the window on what each start measured, at most three starts.
        flags = ["--model-repository", repo, "--max-batch-size", "16"]
        # 1. With room for both: each model's account is what the server sums (b's row names a's).
        s = start_server(flags + ["--max-memory", "16G"])
        mem_a, mem_b = explain_memory(s, "a"), explain_memory(s, "b")
        assert "memory.server" in mem_b, mem_b
        taken_by_a = taken_before(mem_b)
        # process + tokenizer + weights + run tensors; the first model's process row also holds the server's
        # one-time growth on its first load, so a's total is the larger.
        total_a = int(mem_a["memory.total"]["value"].split()[0])
        total_b = int(mem_b["memory.total"]["value"].split()[0])
        print("a: total %d, account %d; b: total %d" % (total_a, taken_by_a, total_b))
        assert taken_by_a > 0 and total_a > taken_by_a, (taken_by_a, total_a)
        s.stop()
        # 2. A budget between what a needs alone and what b needs beside a (its total + a's account): a loads, b is
        # refused naming the numbers. A start that measured a above the budget (a refused: its reason names its
        # estimate) or b below it (b loaded: its account names both) narrows the window to those figures and starts
        # again.
        low, high = total_a, total_b + taken_by_a
        for attempt in range(3):
            assert low < high, "no budget fits a and refuses b: a needs %d, b beside a %d" % (low, high)
            budget = (low + high) // 2
            s = start_server(flags + ["--max-memory", str(budget)], timeout=120)  # ready: both first loads done
            idx = index(s)
            print("start %d: budget %d between %d and %d: a %s, b %s" % (attempt + 1, budget, low, high, idx["a"]["state"],
                                                                          idx["b"]["state"]))
            if idx["a"]["state"] != "READY":
                low = max(low, int(re.search(r"(\d+) bytes \([\d.]+ MiB\)", idx["a"]["reason"]).group(1)))
            elif idx["b"]["state"] == "READY":
                mem_b = explain_memory(s, "b")
                high = min(high, int(mem_b["memory.total"]["value"].split()[0]) + taken_before(mem_b))
            else:
                break
            s.stop()
        assert idx["a"]["state"] == "READY", idx
        assert idx["b"]["state"] == "UNAVAILABLE", idx
        reason = idx["b"]["reason"]
        assert "over the budget of" in reason, reason
        assert "the server's max_memory %d" % budget in reason, reason
        # 3. Unload frees a's account: b now loads; a is refused in turn.
        assert requests.post(s.url("/v2/repository/models/a/unload"), timeout=30).status_code == 200
        r = requests.post(s.url("/v2/repository/models/b/load"), timeout=120)
        assert r.status_code == 200, r.text
        assert index(s)["b"]["state"] == "READY"
        s.stop()
        # 4. A server with one model and a budget 10 % above its estimate (the estimate's goal, docs/memory.md): a burst
        # of largest-shape requests (8 x 256 tokens, 4 clients) keeps its RSS (sampled every 10 ms) under the budget.
        # The request path (queued bodies, responses, a second kept arena) is not in the estimate: measured 1.038x
        # the estimate on 2026-12-05, so a budget under ~1.04x the estimate is crossed (docs/memory.md, open work).
        # (A fresh server: an unloaded model's heap pages may stay resident, which the account does not see.)
        budget = int(total_a * 1.10)
        s = start_server([os.path.join(repo, "a"), "--max-batch-size", "8", "--max-memory", str(budget)], timeout=120)
        codes, peak = burst(s, "a", seconds=15 * min(2, SLOW_FACTOR))
        assert codes and all(c == 200 for c in codes), set(codes)
        print("server budget %d, estimate %d, sampled peak RSS %d (%.3f of the estimate), VmHWM %d, %d requests"
              % (budget, total_a, peak, peak / total_a, vm(s.proc.pid, "VmHWM"), len(codes)))
        assert 0 < peak <= budget, "sampled peak RSS %d over the budget %d" % (peak, budget)
    finally:
        shutil.rmtree(repo, ignore_errors=True)


SLOW_FACTOR = float(os.environ.get("GLASSBOX_TEST_SLOWDOWN", "1"))


@pytest.fixture(scope="module")
def gpt2_tiny():
    """scripts/make_decoder_models.py's gpt2_tiny (the ctest fixture's copy, GLASSBOX_DECODER_MODELS, or made here)."""
    given = os.environ.get("GLASSBOX_DECODER_MODELS")
    if given and os.path.exists(os.path.join(given, "gpt2_tiny", "model.onnx")):
        yield os.path.join(given, "gpt2_tiny")
        return
    out = tempfile.mkdtemp(prefix="glassbox-membudget-decoder-")
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "make_decoder_models.py"), "--out", out,
                    "--only", "gpt2_tiny"], check=True, timeout=600)
    yield os.path.join(out, "gpt2_tiny")
    shutil.rmtree(out, ignore_errors=True)


def test_decoder_kv_budget_derived_from_max_memory(gpt2_tiny, start_server):
    """--max-memory without --kv-cache-bytes: the KV budget is (budget - process) / 4, explained; the account
    reserves it twice (the cache and the past copied into each step's feeds)."""
    budget = 2 << 30
    s = start_server([gpt2_tiny, "--max-memory", str(budget), "--threads", "1"], timeout=120)
    rows = explain_memory(s, "gpt2_tiny")
    process = int(rows["memory.process"]["value"])
    kv = int(rows["memory.kv_cache"]["value"])
    assert process > 1 << 20, rows
    assert kv == (budget - process) // 4, rows
    assert "derived from the memory budget" in rows["memory.kv_cache"]["source"], rows["memory.kv_cache"]
    assert int(rows["memory.kv_feeds"]["value"]) == kv, rows
    weights = int(rows["memory.weights"]["value"])
    # The smallest generation ran at load: what it left resident (packed weights) is counted, runs get what is
    # left after it, and the rows sum.
    first_use = int(rows["memory.first_use"]["value"])
    assert first_use >= 0 and "packed" in rows["memory.first_use"]["source"], rows
    assert int(rows["memory.run_limit"]["value"]) == budget - process - 2 * kv - first_use - weights, rows
    parts = ["memory.process", "memory.kv_cache", "memory.kv_feeds", "memory.weights", "memory.first_run", "memory.arena",
             "memory.first_use"]
    assert int(rows["memory.total"]["value"]) == sum(int(rows[p]["value"]) for p in parts), rows
    ex = requests.get(s.url("/v2/models/gpt2_tiny/explain"), timeout=30).json()
    assert ex["model"]["generation"]["kv_cache"]["budget_bytes"] == kv, ex["model"]["generation"]["kv_cache"]
    # A generation still runs under it.
    r = requests.post(s.url("/v1/completions"), json={"model": "gpt2_tiny", "prompt": "Once upon a time", "max_tokens": 4},
                      timeout=120)
    assert r.status_code == 200, r.text


def test_declared_kv_budget_over_max_memory_is_refused_at_start(gpt2_tiny, start_server):
    budget, kv = 1 << 30, 1 << 30
    r = subprocess.run([GLASSBOX, "serve", gpt2_tiny, "--host", "127.0.0.1", "--port", "0", "--max-memory", str(budget),
                        "--kv-cache-bytes", str(kv)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       timeout=120 * SLOW)  # it must exit before listening: bounded by the timeout
    assert r.returncode != 0, "serve started with a KV budget larger than its memory budget"
    log = r.stderr
    assert "kv_cache_bytes %d does not fit the server's max_memory %d" % (kv, budget) in log, log
    assert "2 x %d" % kv in log and "lower --kv-cache-bytes" in log, log
    # A declared KV budget that fits is used as declared, reserved twice.
    s = start_server([gpt2_tiny, "--max-memory", str(2 << 30), "--kv-cache-bytes", str(64 << 20), "--threads", "1"], timeout=120)
    rows = explain_memory(s, "gpt2_tiny")
    assert int(rows["memory.kv_cache"]["value"]) == 64 << 20 and "declared" in rows["memory.kv_cache"]["source"], rows
    assert int(rows["memory.kv_feeds"]["value"]) == 64 << 20, rows


def forest_model_dir(budget, depth=15):
    """One full binary regression tree of 2^(depth+1) - 1 nodes (TreeEnsembleRegressor, 8 features): no
    initializers, so its weights count 0 bytes; what its load builds (the compiled tree) is the load's growth."""
    d = tempfile.mkdtemp(prefix="glassbox-membudget-tree-")
    branches = (1 << depth) - 1
    n = 2 * branches + 1
    ids = list(range(n))
    leaf = [i >= branches for i in ids]
    attrs = dict(nodes_treeids=[0] * n, nodes_nodeids=ids, nodes_featureids=[i % 8 for i in ids],
                 nodes_values=[float(i % 7) / 7 for i in ids], nodes_modes=["LEAF" if x else "BRANCH_LEQ" for x in leaf],
                 nodes_truenodeids=[0 if x else 2 * i + 1 for i, x in zip(ids, leaf)],
                 nodes_falsenodeids=[0 if x else 2 * i + 2 for i, x in zip(ids, leaf)],
                 target_treeids=[0] * (n - branches), target_nodeids=ids[branches:], target_ids=[0] * (n - branches),
                 target_weights=[float(i % 5) for i in ids[branches:]], n_targets=1)
    node = helper.make_node("TreeEnsembleRegressor", ["x"], ["y"], domain="ai.onnx.ml", **attrs)
    g = helper.make_graph([node], "tree", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)])
    m.ir_version = 8
    save(m, os.path.join(d, "model.onnx"))
    with open(os.path.join(d, "glassbox.json"), "w") as f:
        json.dump({"max_memory": budget}, f)
    return d


def test_tensor_model_account_counts_what_its_load_left_resident(start_server):
    """A tree model has no initializers: its account is the compiled trees its load built (measured, the resident
    set's growth across the load), beside the process and the warm-up's run tensors; the rows sum to the total."""
    d = forest_model_dir("2G")
    try:
        s = start_server([d])
        rows = explain_memory(s, os.path.basename(d))
        assert int(rows["memory.weights"]["value"]) == 0, rows
        growth = int(rows["memory.load_growth"]["value"])
        assert growth > 1 << 20, rows  # 65535 nodes: megabytes of compiled tree and parsed attributes
        parts = ["memory.process", "memory.load_growth", "memory.weights", "memory.first_run", "memory.arena"]
        assert int(rows["memory.total"]["value"]) == sum(int(rows[p]["value"]) for p in parts), rows
        # Each request's tensors get the budget less the process and the load's growth (the weights are 0 here).
        assert int(rows["memory.run_limit"]["value"]) == (2 << 30) - int(rows["memory.process"]["value"]) - growth, rows
        body = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [2, 8], "data": [0.5] * 16}]}
        r = requests.post(s.url("/v2/models/%s/infer" % os.path.basename(d)), json=body, timeout=60)
        assert r.status_code == 200, r.text
    finally:
        shutil.rmtree(d, ignore_errors=True)
