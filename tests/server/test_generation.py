"""Generation models over HTTP: OpenAI and TGI routes, raw SSE, continuous batching, the KV budget.

The tiny decoders of scripts/make_decoder_models.py (llama_tiny: Qwen3 tokenizer and chat template;
gpt2_tiny: none) come from the ctest fixture generation_models (GLASSBOX_DECODER_MODELS) or are
made here. Greedy answers are compared with `glassbox generate` (the same engine through the CLI,
not through the server) and concurrent streams with sequential runs; onnxruntime-node's greedy loop
and the `openai` npm client are in generation_peer_test.js.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from conftest import GLASSBOX, ROOT, SLOW

PROMPT = "The quick brown fox jumps over the lazy dog. Once upon a time"
SHORT = "Once upon a time"


@pytest.fixture(scope="module")
def decoders():
    given = os.environ.get("GLASSBOX_DECODER_MODELS")
    if given and os.path.exists(os.path.join(given, "llama_tiny", "model.onnx")):
        yield given
        return
    out = tempfile.mkdtemp(prefix="glassbox-decoders-")
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "make_decoder_models.py"), "--out", out,
                    "--only", "llama_tiny", "gpt2_tiny"], check=True, timeout=600)
    yield out
    shutil.rmtree(out, ignore_errors=True)


@pytest.fixture(scope="module")
def gen_server(decoders):
    from conftest import Server
    s = Server([os.path.join(decoders, "llama_tiny"), os.path.join(decoders, "gpt2_tiny"), "--threads", "1"], timeout=120)
    yield s
    s.stop()


def metric(text, name, **labels):
    total = 0.0
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                total += s.value
    return total


def scrape(server):
    return requests.get(server.url("/metrics"), timeout=30).text


def sse_events(resp):
    """The `data:` payloads of an SSE response, in order (raw parsing, no client library)."""
    events, buf = [], b""
    for piece in resp.iter_content(chunk_size=None):
        buf += piece
        while b"\n\n" in buf:
            block, buf = buf.split(b"\n\n", 1)
            for line in block.decode("utf-8").split("\n"):
                assert line.startswith("data: "), repr(block)
                events.append(line[len("data: "):])
    assert buf == b"", repr(buf)
    return events


def completion(server, **body):
    body.setdefault("model", "llama_tiny")
    return requests.post(server.url("/v1/completions"), json=body, timeout=60 * SLOW)


def stream_completion_ids(server, prompt, max_tokens, model="llama_tiny"):
    r = requests.post(server.url("/v1/completions"), json={"model": model, "prompt": prompt, "max_tokens": max_tokens,
                                                            "temperature": 0, "stream": True}, stream=True, timeout=120 * SLOW)
    assert r.status_code == 200, r.text
    events = sse_events(r)
    assert events[-1] == "[DONE]"
    final = json.loads(events[-2])
    return final["glassbox"]["ids"], "".join(json.loads(e)["choices"][0]["text"] for e in events[:-1])


def test_greedy_over_http_equals_glassbox_generate(gen_server, decoders):
    r = completion(gen_server, prompt=PROMPT, max_tokens=8, temperature=0)
    assert r.status_code == 200, r.text
    body = r.json()
    cli = subprocess.run([GLASSBOX, "generate", os.path.join(decoders, "llama_tiny"), PROMPT, "--json", "--greedy",
                          "--max-new-tokens", "8", "--threads", "1"], capture_output=True, text=True, timeout=120 * SLOW)
    assert cli.returncode == 0, cli.stderr
    want = json.loads(cli.stdout.strip().splitlines()[-1])
    assert body["glassbox"]["ids"] == want["ids"]
    assert body["choices"][0]["text"] == want["text"]
    assert body["usage"]["completion_tokens"] == len(want["ids"])
    assert body["choices"][0]["finish_reason"] == ("length" if len(want["ids"]) == 8 else "stop")
    # The policy echo: in the body with sources, and in the header (compact).
    assert body["glassbox"]["policy"]["max_new_tokens"] == {"value": 8, "source": "request"}
    header = json.loads(r.headers["X-Glassbox-Policy"])
    assert header["max_new_tokens"] == [8, "request"] and header["do_sample"][0] is False


def test_raw_sse_shape_of_chat_stream(gen_server):
    messages = [{"role": "user", "content": "Say something."}]
    body = {"model": "llama_tiny", "messages": messages, "max_tokens": 5, "temperature": 0, "stream": True,
            "stream_options": {"include_usage": True}}
    r = requests.post(gen_server.url("/v1/chat/completions"), json=body, stream=True, timeout=60 * SLOW)
    assert r.status_code == 200
    assert r.headers["Content-Type"] == "text/event-stream; charset=utf-8"
    assert r.headers.get("Transfer-Encoding") == "chunked"
    assert "max_new_tokens" in json.loads(r.headers["X-Glassbox-Policy"])
    events = sse_events(r)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert len({c["id"] for c in chunks}) == 1 and len({c["created"] for c in chunks}) == 1
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    usage = chunks[-1]
    assert usage["choices"] == [] and usage["usage"]["completion_tokens"] >= 1
    finish = chunks[-2]
    assert finish["choices"][0]["finish_reason"] in ("stop", "length") and finish["choices"][0]["delta"] == {}
    assert "policy" in finish["glassbox"]
    for c in chunks[1:-2]:
        assert c["choices"][0]["finish_reason"] is None and "content" in c["choices"][0]["delta"]
        assert c["usage"] is None
    # The same request without streaming gives the same text.
    body.pop("stream")
    body.pop("stream_options")
    whole = requests.post(gen_server.url("/v1/chat/completions"), json=body, timeout=60 * SLOW).json()
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks[:-1])
    assert whole["choices"][0]["message"]["content"] == text
    assert whole["usage"] == usage["usage"]


def test_concurrent_streams_equal_sequential_runs_and_batch(gen_server):
    """16 concurrent greedy streams give the tokens of 16 sequential runs, and decode steps batched them."""
    prompts = ["%s %d" % (PROMPT, i) for i in range(16)]
    sequential = [stream_completion_ids(gen_server, p, 6) for p in prompts]
    before = scrape(gen_server)
    results = [None] * len(prompts)

    def run(i):
        results[i] = stream_completion_ids(gen_server, prompts[i], 6)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(prompts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120 * SLOW)
    assert results == sequential
    after = scrape(gen_server)
    # Decode steps that advanced more than one sequence: histogram count minus the le=1 bucket.
    steps = metric(after, "glassbox_decode_batch_size_count", model="llama_tiny") - \
        metric(before, "glassbox_decode_batch_size_count", model="llama_tiny")
    single = metric(after, "glassbox_decode_batch_size_bucket", model="llama_tiny", le="1.0") - \
        metric(before, "glassbox_decode_batch_size_bucket", model="llama_tiny", le="1.0")
    assert steps - single > 0, "no decode step advanced more than one sequence"


def test_a_long_generation_does_not_starve_short_ones(gen_server):
    """Round-robin at the step level: short requests sent after a long one starts finish before it."""
    long = requests.post(gen_server.url("/v1/completions"), json={"model": "gpt2_tiny", "prompt": SHORT, "max_tokens": 110,
                                                                  "temperature": 0, "stream": True}, stream=True, timeout=120 * SLOW)
    assert long.status_code == 200
    events = long.iter_lines()
    next(events)  # the long sequence is generating
    ended = {}

    def read_long():
        for _ in events:
            pass
        ended["long"] = time.monotonic()

    reader = threading.Thread(target=read_long)
    reader.start()
    sent = time.monotonic()
    shorts = [None] * 4

    def short(i):
        shorts[i] = completion(gen_server, model="gpt2_tiny", prompt="%s %d" % (SHORT, i), max_tokens=3, temperature=0)

    threads = [threading.Thread(target=short, args=(i,)) for i in range(len(shorts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60 * SLOW)
    shorts_done = time.monotonic()
    reader.join(timeout=120 * SLOW)
    assert all(r is not None and r.status_code == 200 for r in shorts)
    if ended["long"] < sent:
        pytest.skip("the long generation ended before the short ones were sent (machine too fast for this timing)")
    assert shorts_done < ended["long"], "short requests waited for the long generation to finish"


def test_tgi_generate_and_stream(gen_server):
    r = requests.post(gen_server.url("/generate"), json={"model": "llama_tiny", "inputs": PROMPT,
                                                         "parameters": {"max_new_tokens": 4, "details": True}}, timeout=60 * SLOW)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["details"]["finish_reason"] in ("length", "eos_token", "stop_sequence")
    assert body["details"]["generated_tokens"] == len(body["details"]["glassbox"]["ids"])
    s = requests.post(gen_server.url("/generate_stream"), json={"model": "llama_tiny", "inputs": PROMPT,
                                                                "parameters": {"max_new_tokens": 4}}, stream=True, timeout=60 * SLOW)
    events = [json.loads(e) for e in sse_events(s)]
    assert events[-1]["generated_text"] == body["generated_text"]
    assert all(e["generated_text"] is None for e in events[:-1])
    assert [e["token"]["id"] for e in events] == body["details"]["glassbox"]["ids"]


def test_refusals_in_openai_shape(gen_server):
    r = requests.post(gen_server.url("/v1/chat/completions"), json={"model": "llama_tiny", "messages": [{"role": "user", "content": "x"}],
                                                                    "n": 3}, timeout=30)
    assert r.status_code == 400
    err = r.json()["error"]
    assert set(err) == {"message", "type", "param", "code"} and err["param"] == "n"
    r = requests.post(gen_server.url("/v1/chat/completions"), json={"model": "gpt2_tiny", "messages": [{"role": "user", "content": "x"}]},
                      timeout=30)
    assert r.status_code == 400 and r.json()["error"]["code"] == "chat_template_missing"
    assert "no chat template" in r.json()["error"]["message"]
    r = completion(gen_server, prompt=PROMPT, max_tokens=500)
    assert r.status_code == 400 and r.json()["error"]["code"] == "context_length_exceeded"
    assert "max_context 256" in r.json()["error"]["message"]
    r = requests.post(gen_server.url("/v1/completions"), json={"model": "missing", "prompt": "x"}, timeout=30)
    assert r.status_code == 404 and r.json()["error"]["code"] == "model_not_found"


def test_disconnect_mid_stream_frees_the_kv_cache(gen_server):
    before = scrape(gen_server)
    body = json.dumps({"model": "gpt2_tiny", "prompt": PROMPT, "max_tokens": 100, "temperature": 0, "stream": True}).encode()
    sock = socket.create_connection(("127.0.0.1", gen_server.port), timeout=30)
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                 % len(body) + body)
    got = b""
    while b"data: " not in got:
        got += sock.recv(4096)
    assert got.startswith(b"HTTP/1.1 200"), got[:200]
    sock.close()
    deadline = time.time() + 30 * SLOW
    while time.time() < deadline:
        text = scrape(gen_server)
        if metric(text, "glassbox_generation_requests_total", model="gpt2_tiny", finish_reason="client_gone") > \
                metric(before, "glassbox_generation_requests_total", model="gpt2_tiny", finish_reason="client_gone") and \
                metric(text, "glassbox_kv_cache_bytes", model="gpt2_tiny", state="used") == 0:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the sequence was not ended as client_gone with its KV freed:\n" + text)
    assert metric(text, "glassbox_active_sequences", model="gpt2_tiny") == 0


def test_metrics_are_promtool_clean(gen_server):
    completion(gen_server, prompt=PROMPT, max_tokens=4, temperature=0)
    text = scrape(gen_server)
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    for name in ["glassbox_time_to_first_token_seconds_count", "glassbox_time_per_output_token_seconds_count",
                 "glassbox_generation_e2e_seconds_count", "glassbox_generation_queue_seconds_count", "glassbox_generated_tokens_total"]:
        assert metric(text, name, model="llama_tiny") > 0, name
    assert metric(text, "glassbox_kv_cache_bytes", model="llama_tiny", state="budget") == 2 ** 31


def test_kv_budget_413_and_queue_429(start_server, decoders):
    # gpt2_tiny: K,V x 2 layers x 4 heads x head_dim 8 x 4 bytes = 512 bytes per token (its explain says so).
    per_token = 512
    s = start_server([os.path.join(decoders, "gpt2_tiny"), "--threads", "1", "--kv-cache-bytes", str(per_token * 110),
                      "--max-queue", "1"], timeout=120)
    explain = requests.get(s.url("/v2/models/gpt2_tiny/explain"), timeout=30).json()
    assert explain["model"]["generation"]["kv_cache"]["bytes_per_token"] == per_token
    assert explain["model"]["generation"]["kv_cache"]["budget_bytes"] == per_token * 110
    r = completion(s, model="gpt2_tiny", prompt=SHORT, max_tokens=110)
    assert r.status_code == 413, r.text
    err = r.json()["error"]
    assert err["code"] == "kv_budget" and str(per_token * 110) in err["message"] and "bytes/token" in err["message"]
    # One long stream holds most of the budget; the next waits in the queue (max 1); the third is refused with 429.
    long = {"model": "gpt2_tiny", "prompt": SHORT, "max_tokens": 80, "temperature": 0, "stream": True}
    first = requests.post(s.url("/v1/completions"), json=long, stream=True, timeout=60 * SLOW)
    assert first.status_code == 200
    second_result = {}

    def second():
        second_result["r"] = completion(s, model="gpt2_tiny", prompt=SHORT, max_tokens=30, temperature=0)

    t = threading.Thread(target=second)
    t.start()
    deadline = time.time() + 10 * SLOW
    while metric(scrape(s), "glassbox_waiting_sequences", model="gpt2_tiny") < 1 and time.time() < deadline:
        time.sleep(0.01)
    third = completion(s, model="gpt2_tiny", prompt=SHORT, max_tokens=30)
    events = sse_events(first)
    t.join(timeout=60 * SLOW)
    assert events[-1] == "[DONE]"
    if metric(scrape(s), "glassbox_generation_rejected_total", model="gpt2_tiny", reason="queue_full") == 0:
        pytest.skip("the long stream finished before the queue filled (machine too fast for this timing)")
    assert third.status_code == 429 and third.headers["Retry-After"] == "1"
    assert third.json()["error"]["code"] == "queue_full"
    assert second_result["r"].status_code == 200  # waited for room, then ran
    assert metric(scrape(s), "glassbox_kv_cache_bytes", model="gpt2_tiny", state="used") == 0


def test_drain_finishes_in_flight_generation(start_server, decoders):
    import signal
    s = start_server([os.path.join(decoders, "gpt2_tiny"), "--threads", "1", "--drain-timeout", "30"], timeout=120)
    r = requests.post(s.url("/v1/completions"), json={"model": "gpt2_tiny", "prompt": PROMPT, "max_tokens": 6, "temperature": 0,
                                                      "stream": True}, stream=True, timeout=60 * SLOW)
    assert r.status_code == 200
    s.signal(signal.SIGTERM)
    events = sse_events(r)
    assert events[-1] == "[DONE]"  # finished within the drain, not cut
    assert json.loads(events[-2])["choices"][0]["finish_reason"] in ("stop", "length")
    assert s.wait(timeout=30) == 0


def test_drain_timeout_cuts_with_an_explicit_error(start_server, decoders):
    import signal
    # The worker cuts at 90 % of the drain timeout (3.6 s); the 0.4 s left must cover one decode step.
    s = start_server([os.path.join(decoders, "llama_tiny"), "--threads", "1", "--drain-timeout", "4"], timeout=120)
    assert completion(s, prompt=SHORT, max_tokens=2).status_code == 200  # the first prefill plans the engine: not under the drain
    r = requests.post(s.url("/v1/completions"), json={"model": "llama_tiny", "prompt": SHORT, "max_tokens": 240, "temperature": 0,
                                                      "stream": True}, stream=True, timeout=60 * SLOW)
    assert r.status_code == 200
    s.signal(signal.SIGTERM)
    events = sse_events(r)
    if events[-1] == "[DONE]":
        pytest.skip("240 tokens finished within 3.6 s (machine too fast for this timing)")
    last = json.loads(events[-1])
    assert last["error"]["code"] == "draining", last
    assert "drain timeout" in last["error"]["message"]
    assert s.wait(timeout=30) == 0


def test_stop_rules_and_non_finite_logits_are_counted(start_server, decoders, tmp_path):
    """glassbox_generation_stops_total{rule} says which rule ended each generation (max_new_tokens, stop_string,
    stop_token) and glassbox_generation_nonfinite_logits_total counts generations cut by NaN/Inf logits."""
    base = os.path.join(decoders, "llama_tiny")
    probe = start_server([base, "--threads", "1"], timeout=120)
    completion_ids, greedy = stream_completion_ids(probe, PROMPT, 6)
    assert len(completion_ids) == 6, (completion_ids, greedy)
    # A stop string taken from the greedy text itself: the generation ends on it, by that rule.
    stop = next((c for c in reversed(greedy) if c.strip() and c != "\ufffd"), None)
    assert stop, greedy
    before = scrape(probe)
    r = completion(probe, prompt=PROMPT, max_tokens=6, temperature=0, stop=[stop])
    assert r.status_code == 200 and r.json()["choices"][0]["finish_reason"] == "stop", r.text
    rule = lambda text, name: metric(text, "glassbox_generation_stops_total", model="llama_tiny", rule=name)  # noqa: E731
    assert rule(scrape(probe), "stop_string") == rule(before, "stop_string") + 1
    probe.stop()
    # A copy of llama_tiny whose generation_config.json makes the prompt's greedy 2nd token its EOS: a stop token.
    eos = tmp_path / "llama_tiny"
    shutil.copytree(base, eos)
    with open(eos / "generation_config.json") as f:
        gc = json.load(f)
    gc["eos_token_id"] = completion_ids[1]
    with open(eos / "generation_config.json", "w") as f:
        json.dump(gc, f)
    s = start_server([str(eos), os.path.join(decoders, "gpt2_tiny_nan"), "--threads", "1"], timeout=120)
    before = scrape(s)
    r = completion(s, prompt=PROMPT, max_tokens=1, temperature=0)  # ends by max_new_tokens before the EOS
    assert r.status_code == 200 and r.json()["choices"][0]["finish_reason"] == "length", r.text
    r = completion(s, prompt=PROMPT, max_tokens=6, temperature=0)  # the 2nd token is now the EOS
    assert r.status_code == 200 and r.json()["choices"][0]["finish_reason"] == "stop", r.text
    text = scrape(s)
    assert rule(text, "max_new_tokens") == rule(before, "max_new_tokens") + 1, text
    assert rule(text, "stop_token") == rule(before, "stop_token") + 1, text
    r = completion(s, model="gpt2_tiny_nan", prompt=PROMPT, max_tokens=4, temperature=0)
    assert r.status_code == 500 and r.json()["error"]["code"] == "nonfinite_logits", r.text
    after = scrape(s)
    assert metric(after, "glassbox_generation_nonfinite_logits_total", model="gpt2_tiny_nan") == 1, after
    assert metric(after, "glassbox_generation_stops_total", model="gpt2_tiny_nan") == 0, after
