"""Hostile HTTP requests for bench/soak/soak.py, sent on raw sockets, and how the server answered.

Each case is (name, bytes) or (name, function(rng) -> bytes). send_raw() returns the status code as a string,
or "closed" (the server closed without answering: what it does with a request it cannot frame), "timeout"
(no answer within the timeout: a lying Content-Length waits for the body timeout), or "refused-connect".
"""
import json
import random
import socket
import time

_INT = [1, -2]
DTYPES_INPUTS = [("in_fp32", "FP32", [0.5] * 8), ("in_fp64", "FP64", [1.5, -2.5]), ("in_fp16", "FP16", [1.0, 2.0]),
                 ("in_int8", "INT8", _INT), ("in_int16", "INT16", _INT), ("in_int32", "INT32", _INT),
                 ("in_int64", "INT64", _INT), ("in_uint8", "UINT8", [1, 2]), ("in_uint16", "UINT16", [1, 2]),
                 ("in_uint32", "UINT32", [1, 2]), ("in_uint64", "UINT64", [1, 2]), ("in_bool", "BOOL", [True, False])]


def dtypes_body():
    """The dtypes model's request: JSON for every input but FP16, which OIP allows only in binary form.
    Returns (body bytes, headers)."""
    inputs = []
    for n, d, v in DTYPES_INPUTS:
        t = {"name": n, "datatype": d, "shape": [2, 4] if n == "in_fp32" else [2]}
        if d == "FP16":
            t["parameters"] = {"binary_data_size": 4}
        else:
            t["data"] = v
        inputs.append(t)
    outputs = [{"name": "out" + n[2:], "parameters": {"binary_data": d == "FP16"}} for n, d, _ in DTYPES_INPUTS]
    header = json.dumps({"inputs": inputs, "outputs": outputs}).encode()
    fp16 = b"\x00\x3c\x00\x40"  # 1.0, 2.0 little-endian
    return header + fp16, ["Content-Type: application/octet-stream", "Inference-Header-Content-Length: %d" % len(header)]


def request(path, body, headers=(), method="POST"):
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
    head = "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" % (method, path)
    if not any(h.lower().startswith(("content-length", "transfer-encoding")) for h in headers):
        head += "Content-Length: %d\r\n" % len(body)
    head += "".join(h + "\r\n" for h in headers) + "\r\n"
    return head.encode("latin-1") + body


def _valid(features):
    return [
        request("/predict", {"inputs": "Guten Morgen", "model": "langid"}, ["Content-Type: application/json"]),
        request("/v2/models/dtypes/infer", *dtypes_body()),
        request("/v2/models/tabular/infer", {"inputs": [{"name": "X", "datatype": "FP32", "shape": [1, features],
                                                         "data": [0.1] * features}]}, ["Content-Type: application/json"]),
        request("/v1/embeddings", {"input": "hello", "model": "langid_embed"}, ["Content-Type: application/json"]),
    ]


def _flip(valid):
    def make(rng):
        b = bytearray(rng.choice(valid))
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    return make


def _truncate(valid):
    def make(rng):
        b = rng.choice(valid)
        return b[:rng.randrange(1, len(b))]
    return make


def _binary_framing(rng):
    header = json.dumps({"inputs": [{"name": "in_fp32", "datatype": "FP32", "shape": [2, 4],
                                     "parameters": {"binary_data_size": 32}}]}).encode()
    blob = bytes(rng.randrange(256) for _ in range(rng.choice([0, 5, 31, 33, 64])))
    hlen = rng.choice([len(header) + 7, len(header) - 3, 10 ** 12, -1, len(header)])
    return request("/v2/models/dtypes/infer", header + blob,
                   ["Content-Type: application/octet-stream", "Inference-Header-Content-Length: %d" % hlen])


def cases(features):
    valid = _valid(features)
    deep = ("[" * 100000 + "]" * 100000).encode()
    huge = {"inputs": [{"name": "in_fp32", "datatype": "FP32", "shape": [2 ** 31, 2 ** 31], "data": [1.0]}]}
    neg = {"inputs": [{"name": "X", "datatype": "FP32", "shape": [-1, features], "data": [1.0] * features}]}
    chunk_bad = (b"POST /predict HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n"
                 b"fffffffffffffffff\r\nabc\r\n0\r\n\r\n")
    chunk_neg = (b"POST /predict HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n"
                 b"-5\r\nabc\r\n0\r\n\r\n")
    smuggle = (b"POST /predict HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"0\r\n\r\nGET /v2/health/ready HTTP/1.1\r\nHost: x\r\n\r\n")
    return [
        ("valid-raw", lambda rng: rng.choice(valid)),
        ("byte-flip", _flip(valid)),
        ("truncated", _truncate(valid)),
        ("lying-content-length", request("/predict", b'{"inputs": "x"}', ["Content-Length: 5000"])),
        ("short-content-length", request("/predict", b'{"inputs": "hello there"}', ["Content-Length: 3"])),
        ("cl-and-te", smuggle),
        ("bad-chunk-size", chunk_bad),
        ("negative-chunk-size", chunk_neg),
        ("huge-declared-shape", request("/v2/models/dtypes/infer", huge, ["Content-Type: application/json"])),
        ("negative-shape", request("/v2/models/tabular/infer", neg, ["Content-Type: application/json"])),
        ("deep-json", request("/predict", deep, ["Content-Type: application/json"])),
        ("bad-utf8", request("/predict", b'{"inputs": "\xff\xfe\xc3(", "model": "langid"}',
                             ["Content-Type: application/json"])),
        ("binary-framing", _binary_framing),
        ("path-dotdot", request("/v2/models/../../etc/passwd/infer", b"{}")),
        ("path-encoded", request("/v2/models/%2e%2e%2fx/infer", b"{}")),
        ("path-nul", request("/v2/models/lang%00id/infer", b"{}")),
        ("path-double-slash", request("//v2//models//langid//infer", b"{}")),
        ("path-long", request("/v2/models/" + "a" * 20000 + "/infer", b"{}")),
        ("3000-headers", request("/predict", b'{"inputs": "x"}', ["X-H%d: v" % i for i in range(3000)])),
        ("bad-method", request("/predict", b"{}", method="BREW")),
        ("http-1.0-no-host", b"GET /v2/health/live HTTP/1.0\r\n\r\n"),
        ("garbage", lambda rng: bytes(rng.randrange(256) for _ in range(rng.randint(1, 400)))),
        ("body-not-json", request("/v1/embeddings", b"not json at all", ["Content-Type: application/json"])),
        ("wrong-types", request("/v1/embeddings", {"input": {"a": 1}, "model": 7}, ["Content-Type: application/json"])),
    ]


def send_raw(port, raw, timeout=40):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
    except OSError:
        return "refused-connect"
    s.settimeout(timeout)
    try:
        try:
            s.sendall(raw)
        except OSError:
            pass  # the server may answer and close before reading everything (a 431 / 413)
        data = b""
        deadline = time.time() + timeout
        while b"\r\n" not in data and time.time() < deadline:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        if not data:
            return "closed"
        parts = data.split(b" ", 2)
        return parts[1].decode("latin-1") if len(parts) > 1 and data.startswith(b"HTTP/") else "non-http-answer"
    except socket.timeout:
        return "timeout"
    except OSError as e:
        return "reset" if "reset" in str(e).lower() else "oserror"
    finally:
        s.close()


if __name__ == "__main__":  # list the cases
    for name, raw in cases(8):
        print(name, len(raw(random.Random(0)) if callable(raw) else raw))
