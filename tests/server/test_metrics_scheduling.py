"""Scheduling (token-budget batching, bounded queue, deadlines) and the Prometheus metrics that show it.

Counters are read with the python prometheus_client parser and must move by exactly what the
test sent; the exposition must pass `promtool check metrics`.
"""
import subprocess
import threading
import time

import numpy as np
import requests
from prometheus_client.parser import text_string_to_metric_families

from conftest import SLOW

FAMILIES = [
    "glassbox_request_duration_seconds", "glassbox_queue_duration_seconds", "glassbox_compute_duration_seconds",
    "glassbox_batch_size", "glassbox_batch_tokens", "glassbox_input_tokens", "glassbox_requests", "glassbox_rejected_requests",
    "glassbox_truncated_inputs", "glassbox_truncated_tokens", "glassbox_padding_tokens", "glassbox_nonfinite_outputs",
    "glassbox_predictions", "glassbox_prediction_confidence", "glassbox_softmax_saturated", "glassbox_model_loads",
    "glassbox_queue_depth", "glassbox_inflight_requests", "glassbox_model_ready", "process_resident_memory_bytes",
    "process_cpu_seconds", "process_start_time_seconds",
]


def concurrently(fn, n):
    """Runs fn(0) .. fn(n-1) on n threads at once and waits (bounded) for all of them."""
    threads = [threading.Thread(target=fn, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120 * SLOW)


def scrape(s):
    r = requests.get(s.url("/metrics"), timeout=30)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/plain")
    return r.text


def samples(text):
    out = {}
    for fam in text_string_to_metric_families(text):
        for smp in fam.samples:
            out[(smp.name, tuple(sorted(smp.labels.items())))] = smp.value
    return out


def value(text, name, **labels):
    return samples(text).get((name, tuple(sorted(labels.items()))), 0.0)


def test_exposition_passes_promtool_and_parses(text_server):
    requests.post(text_server.url("/predict"), json={"inputs": "Guten Morgen", "model": "langid"}, timeout=30)
    text = scrape(text_server)
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    names = {f.name for f in text_string_to_metric_families(text)}
    for f in FAMILIES:
        assert f in names, f
    assert value(text, "glassbox_model_ready", model="langid", version="1") == 1


def test_counters_move_by_exactly_what_was_sent(text_server):
    before = scrape(text_server)
    texts = ["Guten Morgen, wie geht es dir?"] * 3 + ["Obrigado pela ajuda, até amanhã!"] * 2
    for t in texts:
        assert requests.post(text_server.url("/predict"), json={"inputs": t, "model": "langid"}, timeout=30).status_code == 200
    bad = requests.post(text_server.url("/predict"), json={"inputs": 5, "model": "langid"}, timeout=30)
    assert bad.status_code == 400
    long = requests.post(text_server.url("/predict"), json={"inputs": "a " * 400, "model": "langid_strict", "truncate": True}, timeout=30)
    dropped = int(long.headers["X-Glassbox-Tokens-Dropped"])
    after = scrape(text_server)
    d = lambda name, **l: value(after, name, **l) - value(before, name, **l)  # noqa: E731
    assert d("glassbox_requests_total", model="langid", route="/predict", code="200") == 5
    assert d("glassbox_rejected_requests_total", model="", reason="invalid") + d("glassbox_rejected_requests_total", model="langid", reason="invalid") == 1
    assert d("glassbox_predictions_total", model="langid", version="1", label="de") == 3
    assert d("glassbox_predictions_total", model="langid", version="1", label="pt") == 2
    assert d("glassbox_prediction_confidence_count", model="langid", version="1") == 5
    assert d("glassbox_truncated_inputs_total", model="langid_strict", version="1") == 1
    assert d("glassbox_truncated_tokens_total", model="langid_strict", version="1") == dropped
    assert d("glassbox_request_duration_seconds_count", model="langid", route="/predict") == 5


def test_nonfinite_outputs_are_counted(tensor_server):
    before = scrape(tensor_server)
    body = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [3], "data": [-1.0, 0.0, 2.0]}]}
    r = requests.post(tensor_server.url("/v2/models/nonfinite/infer"), json=body, timeout=30)
    assert r.status_code == 200
    data = r.json()["outputs"][0]["data"]
    assert data[0] is None and data[1] is None and abs(data[2] - np.log(2)) < 1e-6  # NaN and -Inf have no JSON form
    assert r.json()["outputs"][0]["parameters"]["nonfinite"] == {"nan": 1, "pos_inf": 0, "neg_inf": 1}
    ok = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [1], "data": [1.0]}]}
    assert requests.post(tensor_server.url("/v2/models/nonfinite/infer"), json=ok, timeout=30).status_code == 200
    after = scrape(tensor_server)
    assert value(after, "glassbox_nonfinite_outputs_total", model="nonfinite", version="1", output="y") - \
        value(before, "glassbox_nonfinite_outputs_total", model="nonfinite", version="1", output="y") == 1


def test_nonfinite_float16_and_bfloat16_outputs_are_counted(tensor_server):
    # float16 overflows above 65504, bfloat16 above ~3.39e38: both become +Inf, which the one
    # non-finite scan (glassbox/numerics.h) must count like a float32 NaN.
    url = tensor_server.url("/v2/models/nonfinite_half/infer")
    outputs = [{"name": n, "parameters": {"binary_data": True}} for n in ("y16", "ybf16")]
    before = scrape(tensor_server)
    big = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [3], "data": [1.0, 1e5, 3.4e38]}], "outputs": outputs}
    r = requests.post(url, json=big, timeout=30)
    assert r.status_code == 200, r.text
    n = int(r.headers["Inference-Header-Content-Length"])
    blob = r.content[n:]
    f16 = np.frombuffer(blob[:6], np.float16)
    bf16 = (np.frombuffer(blob[6:12], np.uint16).astype(np.uint32) << 16).view(np.float32)
    assert f16[0] == 1 and np.isposinf(f16[1]) and np.isposinf(f16[2])
    assert bf16[0] == 1 and np.isfinite(bf16[1]) and np.isposinf(bf16[2])
    small = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [1], "data": [2.0]}], "outputs": outputs}
    assert requests.post(url, json=small, timeout=30).status_code == 200
    after = scrape(tensor_server)
    for out in ("y16", "ybf16"):
        assert value(after, "glassbox_nonfinite_outputs_total", model="nonfinite_half", version="1", output=out) - \
            value(before, "glassbox_nonfinite_outputs_total", model="nonfinite_half", version="1", output=out) == 1, out


def predict_alone(s, texts):
    return [requests.post(s.url("/predict"), json={"inputs": t, "raw_scores": True, "top_k": 24}, timeout=60).json() for t in texts]


def test_concurrent_texts_batch_and_equal_one_at_a_time(start_server, models):
    texts = ["Hej", "Guten Morgen, wie geht es dir heute, mein Freund?", "今日はとても暑いですね。",
             "Ho dimenticato le chiavi di casa in ufficio e non posso entrare.", "Dziękuję", "¿Dónde está la biblioteca más cercana?",
             "The weather is lovely today, let's go for a walk in the park and then have lunch.", "Merci"]
    solo = start_server([models["langid"], "--max-batch-size", "1"])
    alone = predict_alone(solo, texts)
    s = start_server([models["langid"], "--max-queue-delay-ms", str(int(300 * SLOW)), "--max-batch-size", "8"])
    results = [None] * len(texts)

    def send(i):
        results[i] = requests.post(s.url("/predict"), json={"inputs": texts[i], "raw_scores": True, "top_k": 24}, timeout=60).json()

    concurrently(send, len(texts))
    for got, ref in zip(results, alone):
        g = {e["label"]: e["score"] for e in got}
        r = {e["label"]: e["score"] for e in ref}
        assert max(abs(g[k] - r[k]) / max(1.0, abs(r[k])) for k in r) <= 1e-5
    text = scrape(s)
    runs = value(text, "glassbox_batch_size_count", model="langid", version="1")
    single = value(text, "glassbox_batch_size_bucket", model="langid", version="1", le="1.0")
    assert runs - 1 < len(texts)  # warm-up is not counted; fewer runs than texts means batches of several
    assert runs - single >= 1, text
    # One request's texts may span runs and come back in order.
    many = requests.post(s.url("/predict"), json={"inputs": texts, "raw_scores": True, "top_k": 24}, timeout=60).json()
    for got, ref in zip(many, alone):
        assert [e["label"] for e in got] == [e["label"] for e in ref]


def test_token_budget_splits_a_request_across_runs(start_server, models):
    texts = ["Guten Morgen, wie geht es dir?"] * 6
    s = start_server([models["langid"], "--max-batch-tokens", "70"])  # ~32 tokens each: two per run
    before = scrape(s)
    j = requests.post(s.url("/predict"), json={"inputs": texts}, timeout=60).json()
    assert [r[0]["label"] for r in j] == ["de"] * 6
    after = scrape(s)
    runs = value(after, "glassbox_batch_size_count", model="langid", version="1") - \
        value(before, "glassbox_batch_size_count", model="langid", version="1")
    assert runs == 3
    tokens = value(after, "glassbox_batch_tokens_sum", model="langid", version="1") - \
        value(before, "glassbox_batch_tokens_sum", model="langid", version="1")
    assert tokens == value(after, "glassbox_input_tokens_sum", model="langid", version="1") - \
        value(before, "glassbox_input_tokens_sum", model="langid", version="1")


def test_tensor_requests_batch_along_the_first_dimension(start_server, models):
    s = start_server([models["nonfinite"], "--max-queue-delay-ms", str(int(300 * SLOW))])
    rng = np.random.default_rng(5)
    xs = [rng.uniform(0.5, 3, size=k).astype(np.float32) for k in (1, 3, 2, 4)]
    outs = [None] * len(xs)

    def send(i):
        body = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [len(xs[i])], "data": xs[i].tolist()}]}
        outs[i] = requests.post(s.url("/v2/models/nonfinite/infer"), json=body, timeout=60).json()

    concurrently(send, len(xs))
    for x, o in zip(xs, outs):
        assert o["outputs"][0]["shape"] == [len(x)]
        assert np.allclose(o["outputs"][0]["data"], np.log(x), atol=1e-6)
    text = scrape(s)
    assert value(text, "glassbox_batch_size_sum", model="nonfinite", version="1") >= 10 - 0.5
    assert value(text, "glassbox_batch_size_count", model="nonfinite", version="1") < 1 + len(xs)


def slow(n):
    return {"inputs": [{"name": "n", "datatype": "INT64", "shape": [], "data": [n]}]}


def calibrated_n(s, seconds):
    t0 = time.time()
    requests.post(s.url("/v2/models/slow/infer"), json=slow(20000), timeout=120)
    per = max((time.time() - t0) / 20000, 1e-7)
    return int(min(max(seconds / per, 1000), 5_000_000))


def test_queue_full_is_429_with_retry_after_and_deadline_is_504(start_server, models):
    s = start_server([models["slow"], "--max-queue", "1"])
    n = calibrated_n(s, 1.5)
    before = scrape(s)
    first = threading.Thread(target=lambda: requests.post(s.url("/v2/models/slow/infer"), json=slow(n), timeout=120 * SLOW))
    first.start()
    time.sleep(0.3)
    second_result = []
    second = threading.Thread(target=lambda: second_result.append(
        requests.post(s.url("/v2/models/slow/infer"), json=slow(10), timeout=120 * SLOW, headers={"X-Request-Timeout-Ms": "1"})))
    second.start()
    time.sleep(0.3)
    third = requests.post(s.url("/v2/models/slow/infer"), json=slow(10), timeout=30)
    assert third.status_code == 429, third.text
    assert int(third.headers["Retry-After"]) >= 1 and "max_queue" in third.json()["error"]
    first.join(120 * SLOW)
    second.join(120 * SLOW)
    assert second_result[0].status_code == 504 and "deadline" in second_result[0].json()["error"]
    after = scrape(s)
    d = lambda name, **l: value(after, name, **l) - value(before, name, **l)  # noqa: E731
    assert d("glassbox_rejected_requests_total", model="slow", reason="queue_full") == 1
    assert d("glassbox_rejected_requests_total", model="slow", reason="deadline") == 1
    assert d("glassbox_compute_duration_seconds_count", model="slow", version="1") == 1  # the expired one never ran
    # OIP's own parameters.timeout (microseconds) is honoured the same way.
    body = slow(10)
    body["parameters"] = {"timeout": 0}
    assert requests.post(s.url("/v2/models/slow/infer"), json=body, timeout=30).status_code == 504


def test_gauges_and_model_loads(start_server, models, tmp_path):
    import shutil
    repo = tmp_path / "repo"
    shutil.copytree(models["nonfinite"], repo / "m" / "1")
    s = start_server(["--model-repository", str(repo)])
    text = scrape(s)
    assert value(text, "glassbox_model_ready", model="m", version="1") == 1
    assert value(text, "glassbox_model_loads_total", model="m", result="success") == 1
    assert value(text, "glassbox_queue_depth", model="m") == 0
    assert value(text, "glassbox_inflight_requests") >= 1  # the scrape itself
    shutil.copytree(models["nonfinite"], repo / "m" / "2")
    assert requests.post(s.url("/v2/repository/models/m/load"), timeout=60).status_code == 200
    text = scrape(s)
    assert value(text, "glassbox_model_ready", model="m", version="2") == 1
    assert ("glassbox_model_ready", (("model", "m"), ("version", "1"))) not in samples(text)
    assert value(text, "glassbox_model_loads_total", model="m", result="success") == 2
    assert value(text, "process_resident_memory_bytes") > 1e6
