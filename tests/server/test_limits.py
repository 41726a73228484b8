"""Every limit and bad input: a clear JSON error with the right status, no crash, server still live."""
import http.client
import json
import socket
import time

import requests

from conftest import SLOW

TEXT = {"name": "text", "datatype": "BYTES", "shape": [1], "data": ["hello there"]}


def live(server):
    return requests.get(server.url("/v2/health/live"), timeout=10).status_code == 200


def post_raw(server, path, body, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    c.request("POST", path, body=body, headers=headers or {"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data, r


def error_of(status_body):
    status, data = status_body[0], status_body[1]
    return status, json.loads(data)["error"]


def raw_exchange(server, payload, timeout=10):
    s = socket.create_connection(("127.0.0.1", server.port), timeout=timeout * SLOW)
    s.sendall(payload)
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            if b"\r\n\r\n" in data:
                head, _, rest = data.partition(b"\r\n\r\n")
                m = [l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
                if m and len(rest) >= int(m[0].split(b":")[1]):
                    break
    except socket.timeout:
        pass
    s.close()
    return data


def test_body_over_cap_is_413_from_the_headers(start_server, models):
    s = start_server([models["langid"], "--max-body-bytes", "1000"])
    # Headers promise 10 MB; the body is never sent: the answer must come from the headers alone.
    data = raw_exchange(s, b"POST /v2/models/langid/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                           b"Content-Length: 10000000\r\n\r\n")
    assert data.startswith(b"HTTP/1.1 413"), data[:200]
    assert b"max_body_bytes" in data
    # A chunked body that grows past the cap is refused too.
    chunk = b"x" * 600
    data = raw_exchange(s, b"POST /v2/models/langid/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
                        b"%x\r\n" % len(chunk) + chunk + b"\r\n" + b"%x\r\n" % len(chunk) + chunk + b"\r\n0\r\n\r\n")
    assert data.startswith(b"HTTP/1.1 413"), data[:200]
    assert live(s)


def test_chunked_body_is_accepted(text_server):
    body = json.dumps({"inputs": [TEXT]}).encode()
    chunks = b"".join(b"%x\r\n" % len(body[i:i + 7]) + body[i:i + 7] + b"\r\n" for i in range(0, len(body), 7))
    data = raw_exchange(text_server, b"POST /v2/models/langid/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                                     b"Connection: close\r\n\r\n" + chunks + b"0\r\n\r\n")
    assert data.startswith(b"HTTP/1.1 200"), data[:300]
    assert b'"label"' in data


def test_header_caps_are_431(text_server):
    big = b"X-Big: " + b"a" * 20000 + b"\r\n"
    data = raw_exchange(text_server, b"GET /v2 HTTP/1.1\r\nHost: x\r\n" + big + b"\r\n")
    assert data.startswith(b"HTTP/1.1 431"), data[:200]
    many = b"".join(b"X-H%d: v\r\n" % i for i in range(150))
    data = raw_exchange(text_server, b"GET /v2 HTTP/1.1\r\nHost: x\r\n" + many + b"\r\n")
    assert data.startswith(b"HTTP/1.1 431"), data[:200]
    assert b"max_header_count" in data
    assert live(text_server)


def test_slow_client_is_timed_out(start_server, models):
    s = start_server([models["langid"], "--header-timeout-ms", "400"])
    sock = socket.create_connection(("127.0.0.1", s.port), timeout=10 * SLOW)
    sock.sendall(b"GET /v2 HTTP/1.1\r\nHost: x\r\n")  # never finishes its headers
    t0 = time.time()
    sock.settimeout(10 * SLOW)
    assert sock.recv(100) == b""  # the server closed it
    assert time.time() - t0 < 5 * SLOW
    sock.close()
    assert live(s)


def test_malformed_json_nan_and_deep_nesting(text_server):
    cases = [b"{not json", b'{"inputs": [{"name": "text", "datatype": "FP32", "shape": [1], "data": [NaN]}]}',
             b'{"inputs": [{"name": "x", "datatype": "FP32", "shape": [1], "data": [Infinity]}]}',
             b'{"inputs": ' + b"[" * 100000 + b"]" * 100000 + b"}", b"[]", b""]
    for body in cases:
        status, err = error_of(post_raw(text_server, "/v2/models/langid/infer", body))
        assert status == 400, (body[:40], status)
        assert err
    status, err = error_of(post_raw(text_server, "/v2/models/langid/infer", cases[3]))
    assert "max_json_depth" in err
    assert live(text_server)


def test_numbers_beyond_float64_are_400_not_a_crash(text_server):
    """1e999 is valid JSON that the parser cannot hold: it used to escape as an exception and terminate the
    server (found by tests/fuzz/fuzz_server_request; its input is in the corpus as number_overflow)."""
    for path, body in (("/predict", b'{"inputs": 1e999}'),
                       ("/v2/models/langid/infer", b'{"inputs": [{"name": "x", "datatype": "FP32", "shape": [1], "data": [-1e999]}]}'),
                       ("/v1/embeddings", b'{"input": "x", "model": "langid_embed", "dimensions": 222222222222222222222222e2222}')):
        status, err = error_of(post_raw(text_server, path, body))
        assert status == 400 and "out of range" in str(err), (path, status, err)
    assert live(text_server)


def test_invalid_utf8_and_lone_surrogate(text_server):
    status, err = error_of(post_raw(text_server, "/v2/models/langid/infer",
                                    b'{"inputs": [{"name": "text", "datatype": "BYTES", "shape": [1], "data": ["\xff\xfe"]}]}'))
    assert status == 400 and "UTF-8" in err
    status, err = error_of(post_raw(text_server, "/v2/models/langid/infer",
                                    b'{"inputs": [{"name": "text", "datatype": "BYTES", "shape": [1], "data": ["\\ud800"]}]}'))
    assert status == 400 and "surrogate" in err
    blob = b"\x02\x00\x00\x00\xc3\x28"
    header = json.dumps({"inputs": [{"name": "text", "datatype": "BYTES", "shape": [1],
                                     "parameters": {"binary_data_size": len(blob)}}]}).encode()
    status, err = error_of(post_raw(text_server, "/v2/models/langid/infer", header + blob,
                                    {"Inference-Header-Content-Length": str(len(header))}))
    assert status == 400 and "UTF-8" in err
    assert live(text_server)


def test_shape_count_and_datatype_mismatches(tensor_server):
    def infer(inputs, model="dtypes"):
        return error_of(post_raw(tensor_server, "/v2/models/%s/infer" % model, json.dumps({"inputs": inputs}).encode()))

    status, err = infer([{"name": "x", "datatype": "FP32", "shape": [3], "data": [1, 2]}], "nonfinite")
    assert status == 400 and "2 elements" in err and "needs 3" in err
    status, err = infer([{"name": "x", "datatype": "FP64", "shape": [2], "data": [1, 2]}], "nonfinite")
    assert status == 400 and "FP64" in err and "FP32" in err
    status, err = infer([{"name": "x", "datatype": "FP32", "shape": [2, 1], "data": [1, 2]}], "nonfinite")
    assert status == 400 and "declares" in err
    status, err = infer([{"name": "y", "datatype": "FP32", "shape": [1], "data": [1]}], "nonfinite")
    assert status == 400 and "no input 'y'" in err
    status, err = infer([{"name": "n", "datatype": "INT64", "shape": [], "data": [1.5]}], "slow")
    assert status == 400 and "not an integer" in err
    status, err = infer([{"name": "in_int8", "datatype": "INT8", "shape": [1], "data": [300]}])
    assert status == 400 and "out of range" in err
    status, err = infer([{"name": "x", "datatype": "NOPE", "shape": [1], "data": [1]}], "nonfinite")
    assert status == 400 and "unknown datatype" in err
    status, err = infer([], "nonfinite")
    assert status == 400 and "missing input 'x'" in err
    # binary sizes that do not add up
    header = json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [2], "parameters": {"binary_data_size": 8}}]}).encode()
    status, err = error_of(post_raw(tensor_server, "/v2/models/nonfinite/infer", header + b"\0" * 12,
                                    {"Inference-Header-Content-Length": str(len(header))}))
    assert status == 400 and "no input claims" in err
    status, err = error_of(post_raw(tensor_server, "/v2/models/nonfinite/infer", header + b"\0" * 4,
                                    {"Inference-Header-Content-Length": str(len(header))}))
    assert status == 400 and "past the end" in err
    assert live(tensor_server)


def test_caps_on_inputs_and_texts(text_server):
    many = [{"name": "t%d" % i, "datatype": "BYTES", "shape": [1], "data": ["a"]} for i in range(70)]
    status, err = error_of(post_raw(text_server, "/v2/models/langid/infer", json.dumps({"inputs": many}).encode()))
    assert status == 400 and "max_inputs_per_request" in err
    texts = ["hello"] * 17  # the fixture's --max-texts-per-request is 16
    status, err = error_of(post_raw(text_server, "/v2/models/langid/infer",
                                    json.dumps({"inputs": [{"name": "text", "datatype": "BYTES", "shape": [17], "data": texts}]}).encode()))
    assert status == 400 and "max_texts_per_request" in err
    r = requests.post(text_server.url("/embed"), json={"inputs": texts, "model": "langid_embed"}, timeout=30)
    assert r.status_code == 400 and "max_texts_per_request" in r.json()["error"]


def test_unknown_model_version_route_and_traversal(text_server):
    assert requests.get(text_server.url("/v2/models/nope"), timeout=10).status_code == 404
    r = requests.get(text_server.url("/v2/models/langid/versions/7"), timeout=10)
    assert r.status_code == 404 and "serving version 1" in r.json()["error"]
    assert requests.post(text_server.url("/v2/models/nope/infer"), json={"inputs": [TEXT]}, timeout=10).status_code == 404
    assert requests.get(text_server.url("/nowhere"), timeout=10).status_code == 404
    assert requests.get(text_server.url("/v2/models/langid/infer"), timeout=10).status_code == 405
    for path in ("/v2/models/..%2f..%2fetc/infer", "/v2/models/%2e%2e/infer", "/v2/models/..%2F/ready",
                 "/v2/repository/models/%2e%2e%2fmodels/load", "/v2/models/a%00b"):
        r = requests.post(text_server.url(path), json={"inputs": [TEXT]}, timeout=10)
        assert r.status_code in (400, 404, 405), (path, r.status_code)
        assert "/work" not in r.text and "/tmp" not in r.text and "models/langid" not in r.text
    assert live(text_server)


def test_errors_do_not_echo_internal_paths(text_server, models):
    r = requests.post(text_server.url("/v2/models/langid_strict/infer"),
                      json={"inputs": [{"name": "text", "datatype": "BYTES", "shape": [1], "data": ["a " * 400]}]}, timeout=30)
    assert r.status_code == 413
    assert models["root"] not in r.text and "/models/" not in r.text, r.text


def test_client_gone_mid_body_and_content_length_mismatch(text_server):
    # Headers promise 5000 bytes; the client sends 10 and vanishes: nothing is queued, the server stays up.
    s = socket.create_connection(("127.0.0.1", text_server.port), timeout=10)
    s.sendall(b"POST /v2/models/langid/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n{\"inputs\":")
    s.close()
    # A body longer than its Content-Length: the extra bytes are the next request, which is malformed.
    body = json.dumps({"inputs": [TEXT]}).encode()
    data = raw_exchange(text_server, b"POST /v2/models/langid/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body)
                        + body + b"garbage that is not a request\r\n\r\n")
    assert data.startswith(b"HTTP/1.1 200"), data[:200]
    assert live(text_server)
    r = requests.post(text_server.url("/v2/models/langid/infer"), json={"inputs": [TEXT]}, timeout=30)
    assert r.status_code == 200
