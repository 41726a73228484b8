"""One route table, one typed refusal (docs/serving.md "Routes" and "Errors").

The routes table of docs/serving.md must equal the one `glassbox explain --serve --markdown`
prints from the code; metric route labels are the table's path templates; and every refusal
(bad JSON, limits, unknown model, unavailable model, wrong method, unknown route, queue full,
deadline, drain) comes back in the calling protocol's shape: OIP {"error"}, TEI {"error",
"error_type"}, OpenAI {"error": {"message", "type", "param", "code"}}. The openai npm client's
typed exceptions are checked in refusal_peer_test.js.
"""
import os
import signal
import socket
import subprocess
import threading
import time

import pytest
import requests

from conftest import GLASSBOX, ROOT, SLOW
from test_metrics_scheduling import scrape, value

PROTOCOLS = ["oip", "tei", "openai"]
# code -> (status, OpenAI type, TEI error_type), as docs/serving.md's table of codes says.
CODES = {
    "invalid_request": (400, "invalid_request_error", "validation"),
    "route_not_found": (404, "invalid_request_error", "validation"),
    "model_not_found": (404, "invalid_request_error", "validation"),
    "method_not_allowed": (405, "invalid_request_error", "validation"),
    "too_large": (413, "invalid_request_error", "validation"),
    "headers_too_large": (431, "invalid_request_error", "validation"),
    "queue_full": (429, "rate_limit_error", "overloaded"),
    "model_unavailable": (503, "server_error", "unhealthy"),
    "draining": (503, "server_error", "unhealthy"),
    "deadline_exceeded": (504, "server_error", "overloaded"),
}


def routes_markdown():
    r = subprocess.run([GLASSBOX, "explain", "--serve", "--markdown"], capture_output=True, text=True, timeout=60 * SLOW)
    assert r.returncode == 0, r.stderr
    head = "**routes** (`glassbox serve`)\n\n"
    assert head in r.stdout, r.stdout[-2000:]
    table = r.stdout.split(head, 1)[1]
    return "".join(line + "\n" for line in table.splitlines() if line.startswith("|"))


def test_docs_routes_table_is_the_code_table():
    table = routes_markdown()
    assert table.count("\n") >= 20 and "| POST | `/v1/embeddings` | openai |" in table
    with open(os.path.join(ROOT, "docs", "serving.md"), encoding="utf-8") as f:
        doc = f.read()
    assert table in doc, "docs/serving.md's routes table differs from `glassbox explain --serve --markdown`:\n" + table


def test_explain_json_lists_every_route():
    r = subprocess.run([GLASSBOX, "explain", "--serve", "--json"], capture_output=True, text=True, timeout=60 * SLOW)
    assert r.returncode == 0, r.stderr
    import json
    j = json.loads(r.stdout)
    paths = {(e["method"], e["path"]) for e in j["routes"]}
    assert ("POST", "/v2/models/{m}/infer") in paths and ("GET", "/metrics") in paths
    assert {e["protocol"] for e in j["routes"]} == {"oip", "tei", "openai", "repository", "metrics"}
    # every limit the scheduler and the HTTP layer read is a ServerOptions row
    names = {o["name"] for o in j["options"] if o.get("component") == "server"}
    for limit in ["max_body_bytes", "max_header_bytes", "max_header_count", "max_json_depth", "max_inputs_per_request",
                  "max_tensor_elements", "max_texts_per_request", "max_queue", "max_batch_tokens", "max_batch_size",
                  "max_queue_delay_ms", "default_timeout_ms", "header_timeout_ms", "body_timeout_ms"]:
        assert limit in names, limit


@pytest.fixture(scope="module")
def server(models):
    """slow (a Loop of n additions) holds the one dispatcher while text work queues behind it."""
    from conftest import Server
    s = Server([models["slow"], models["langid_embed"], models["langid"], "--max-queue", "2", "--max-texts-per-request", "4",
                "--max-body-bytes", "65536", "--max-header-count", "40"])
    yield s
    s.stop()


def call(s, protocol, texts=("hello",), model="langid_embed", headers=None, raw=None, method="POST"):
    """The same embedding request in each protocol."""
    if protocol == "oip":
        url = "/v2/models/%s/infer" % model
        body = {"inputs": [{"name": "text", "datatype": "BYTES", "shape": [len(texts)], "data": list(texts)}]}
    elif protocol == "tei":
        url, body = "/embed", {"inputs": list(texts), "model": model}
    else:
        url, body = "/v1/embeddings", {"input": list(texts), "model": model}
    if raw is not None:
        return requests.request(method, s.url(url), data=raw, headers=headers, timeout=60 * SLOW)
    return requests.request(method, s.url(url), json=body, headers=headers, timeout=60 * SLOW)


def check_refusal(protocol, r, code, param=None):
    status, openai_type, tei_type = CODES[code]
    assert r.status_code == status, (protocol, code, r.status_code, r.text)
    assert r.headers["Content-Type"] == "application/json"
    j = r.json()
    if protocol in ("oip", "repository", "metrics"):
        assert set(j) == {"error"} and isinstance(j["error"], str) and j["error"], r.text
    elif protocol == "tei":
        assert set(j) == {"error", "error_type"} and isinstance(j["error"], str) and j["error"], r.text
        assert j["error_type"] == tei_type, r.text
    else:
        assert set(j) == {"error"} and set(j["error"]) == {"message", "type", "param", "code"}, r.text
        e = j["error"]
        assert isinstance(e["message"], str) and e["message"] and e["type"] == openai_type and e["code"] == code, r.text
        if param is not None:
            assert e["param"] == param, r.text
    return j


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_bad_json_limits_and_unknown_model(server, protocol):
    check_refusal(protocol, call(server, protocol, raw=b'{"input": ', headers={"Content-Type": "application/json"}),
                  "invalid_request")
    check_refusal(protocol, call(server, protocol, texts=["a"] * 5), "invalid_request",
                  param={"oip": None, "tei": "inputs", "openai": "input"}[protocol])
    check_refusal(protocol, call(server, protocol, model="nope"), "model_not_found",
                  param="model" if protocol == "openai" else None)
    # the HTTP layer's own limits, before any route ran, in the shape of the target's route
    check_refusal(protocol, call(server, protocol, texts=["x" * 70000]), "too_large")
    many = {"X-Pad-%d" % i: "1" for i in range(50)}
    check_refusal(protocol, call(server, protocol, headers=many), "headers_too_large")
    check_refusal(protocol, call(server, protocol, method="GET", raw=b""), "method_not_allowed")


def test_unknown_routes_take_the_shape_of_their_neighbours(server):
    check_refusal("openai", requests.post(server.url("/v1/nothing"), json={}, timeout=30), "route_not_found")
    check_refusal("oip", requests.get(server.url("/v2/models/langid/versions"), timeout=30), "route_not_found")
    check_refusal("oip", requests.get(server.url("/nothing"), timeout=30), "route_not_found")
    r = requests.get(server.url("/v2/models/langid/infer"), timeout=30)
    assert "allowed: POST" in check_refusal("oip", r, "method_not_allowed")["error"]
    # a TEI route named for a model of the other task: 400 validation
    r = requests.post(server.url("/predict"), json={"inputs": "hi", "model": "langid_embed"}, timeout=30)
    check_refusal("tei", r, "invalid_request")


def test_metric_route_labels_are_the_table_templates(server):
    requests.post(server.url("/v2/models/langid/infer"),
                  json={"inputs": [{"name": "text", "datatype": "BYTES", "shape": [1], "data": ["hi"]}]}, timeout=30)
    requests.get(server.url("/no/such/route/at/all"), timeout=30)
    text = scrape(server)
    assert value(text, "glassbox_requests_total", model="langid", route="/v2/models/{m}/infer", code="200") >= 1
    assert value(text, "glassbox_requests_total", model="", route="other", code="404") >= 1
    routes = {line.split('route="')[1].split('"')[0] for line in text.splitlines()
              if line.startswith("glassbox_requests_total{")}
    table = routes_markdown()
    for r in routes - {"other"}:
        assert "`%s`" % r in table, r


def slow_body(n):
    return {"inputs": [{"name": "n", "datatype": "INT64", "shape": [], "data": [n]}]}


def hold_dispatcher(s, seconds):
    """Starts a slow run that holds the one dispatcher for about `seconds`; returns its thread."""
    t0 = time.time()
    requests.post(s.url("/v2/models/slow/infer"), json=slow_body(20000), timeout=120 * SLOW)
    n = int(min(max(seconds / max((time.time() - t0) / 20000, 1e-7), 1000), 5_000_000))
    t = threading.Thread(target=lambda: requests.post(s.url("/v2/models/slow/infer"), json=slow_body(n), timeout=120 * SLOW))
    t.start()
    time.sleep(0.3)
    return t


def in_background(fn):
    out = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    return t, out


def test_queue_full_and_deadline_in_each_protocol(server):
    before = scrape(server)
    slow = hold_dispatcher(server, 1.5 * SLOW)
    # two requests with a 1 ms deadline fill langid_embed's queue (max_queue 2) ...
    waiting = [in_background(lambda p=p: call(server, p, headers={"X-Request-Timeout-Ms": "1"})) for p in ("openai", "tei")]
    time.sleep(0.3)
    # ... so each protocol's next request is a 429 with Retry-After
    for p in PROTOCOLS:
        r = call(server, p)
        check_refusal(p, r, "queue_full")
        assert int(r.headers["Retry-After"]) >= 1
    slow.join(120 * SLOW)
    for (t, out), p in zip(waiting, ("openai", "tei")):
        t.join(60 * SLOW)
        check_refusal(p, out[0], "deadline_exceeded")
    slow = hold_dispatcher(server, 1.0 * SLOW)
    t, out = in_background(lambda: call(server, "oip", headers={"X-Request-Timeout-Ms": "1"}))
    slow.join(120 * SLOW)
    t.join(60 * SLOW)
    check_refusal("oip", out[0], "deadline_exceeded")
    after = scrape(server)
    d = lambda **l: value(after, "glassbox_rejected_requests_total", **l) - value(before, "glassbox_rejected_requests_total", **l)  # noqa: E731
    assert d(model="langid_embed", reason="queue_full") == 3
    assert d(model="langid_embed", reason="deadline") == 3


def test_unavailable_model_in_each_protocol(start_server, models):
    s = start_server([models["langid_embed"], models["langid"]])
    assert requests.post(s.url("/v2/repository/models/langid_embed/unload"), timeout=30).status_code == 200
    for p in PROTOCOLS:
        check_refusal(p, call(s, p), "model_unavailable")
    check_refusal("repository", requests.post(s.url("/v2/repository/models/bad%20name/load"), timeout=30), "invalid_request")


def test_draining_in_each_protocol(start_server, models):
    s = start_server([models["slow"], models["langid_embed"], "--drain-timeout", str(30 * SLOW)])
    slow = hold_dispatcher(s, 2.0 * SLOW)
    s.signal(signal.SIGTERM)
    time.sleep(0.3)
    for p in PROTOCOLS:
        r = call(s, p)
        check_refusal(p, r, "draining")
        assert r.headers.get("Connection", "").lower() == "close"
    slow.join(120 * SLOW)
    assert s.wait(60) == 0
