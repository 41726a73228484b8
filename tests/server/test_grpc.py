"""gRPC front end (--grpc-port): KServe v2 GRPCInferenceService with python3-grpcio.

The client stubs are generated at test time from src/server/grpc/inference.proto by grpc_tools.protoc
into a temporary folder, so the test speaks the wire contract, not glassbox's C++. Every answer is
held against the HTTP route of the same server (same model, same input -> the same output bytes as
the binary tensor extension sends) and against numpy for the tensor model; the bad-input set
checks the status codes docs/serving.md lists (INVALID_ARGUMENT, NOT_FOUND, RESOURCE_EXHAUSTED,
UNAVAILABLE); drain, metrics and the method table are checked on real processes.
"""
import importlib
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time

import grpc
import numpy as np
import pytest
import requests

from conftest import GLASSBOX, ROOT, SLOW, Server
from serve_process import free_port
from test_metrics_scheduling import scrape, value

PROTO_DIR = os.path.join(ROOT, "src", "server", "grpc")
SERVICE = "/inference.GRPCInferenceService/"
TEXTS = ["Guten Morgen, wie geht es dir?", "The weather is lovely today, let's go for a walk."]
# dtypes_typed's inputs: name -> numpy dtype, OIP datatype, typed contents field.
TYPED = {
    "fp32": (np.float32, "FP32", "fp32_contents"), "fp64": (np.float64, "FP64", "fp64_contents"),
    "int8": (np.int8, "INT8", "int_contents"), "int16": (np.int16, "INT16", "int_contents"),
    "int32": (np.int32, "INT32", "int_contents"), "int64": (np.int64, "INT64", "int64_contents"),
    "uint8": (np.uint8, "UINT8", "uint_contents"), "uint16": (np.uint16, "UINT16", "uint_contents"),
    "uint32": (np.uint32, "UINT32", "uint_contents"), "uint64": (np.uint64, "UINT64", "uint64_contents"),
    "bool": (np.bool_, "BOOL", "bool_contents"),
}
MAX_BODY = 1 << 20


@pytest.fixture(scope="module")
def pb():
    """(inference_pb2, inference_pb2_grpc) generated from our .proto into a temporary folder."""
    from grpc_tools import protoc
    out = tempfile.mkdtemp(prefix="glassbox-grpc-stubs-")
    rc = protoc.main(["grpc_tools.protoc", "-I" + PROTO_DIR, "--python_out=" + out, "--grpc_python_out=" + out,
                      os.path.join(PROTO_DIR, "inference.proto")])
    assert rc == 0, "grpc_tools.protoc failed on inference.proto"
    sys.path.insert(0, out)
    try:
        yield importlib.import_module("inference_pb2"), importlib.import_module("inference_pb2_grpc")
    finally:
        sys.path.remove(out)


class GrpcServer:
    """A `glassbox serve` with --grpc-port on a free port, and a stub on it."""

    def __init__(self, pb, args, wait_ready=True):
        self.pb2, pb2_grpc = pb
        self.grpc_port = free_port()
        self.http = Server(args + ["--grpc-port", str(self.grpc_port)], wait_ready=wait_ready)
        self.channel = grpc.insecure_channel("127.0.0.1:%d" % self.grpc_port)
        grpc.channel_ready_future(self.channel).result(timeout=30 * SLOW)
        self.stub = pb2_grpc.GRPCInferenceServiceStub(self.channel)

    def stop(self):
        self.channel.close()
        self.http.stop()


@pytest.fixture(scope="module")
def gs(pb, models):
    s = GrpcServer(pb, [models["langid"], models["dtypes"], models["dtypes_typed"], models["nonfinite_half"],
                        models["warmup_fails"], "--max-body-bytes", str(MAX_BODY), "--max-tensor-elements", "100000"])
    yield s
    s.stop()


def code_of(fn, *args, **kw):
    with pytest.raises(grpc.RpcError) as e:
        fn(*args, timeout=30 * SLOW, **kw)
    return e.value.code(), e.value.details()


def http_binary_infer(server, model, inputs, outputs):
    """POST /v2/models/{model}/infer with every input and output in the binary section: {name: (dtype, shape, bytes)}."""
    blob = b"".join(raw for _, _, _, raw in inputs)
    header = json.dumps({"inputs": [{"name": n, "datatype": d, "shape": list(s), "parameters": {"binary_data_size": len(raw)}}
                                    for n, d, s, raw in inputs],
                         "outputs": [{"name": o, "parameters": {"binary_data": True}} for o in outputs]}).encode()
    r = requests.post(server.url("/v2/models/%s/infer" % model), data=header + blob, timeout=60 * SLOW,
                      headers={"Inference-Header-Content-Length": str(len(header)), "Content-Type": "application/octet-stream"})
    assert r.status_code == 200, r.text
    n = int(r.headers["Inference-Header-Content-Length"])
    j, rest, out = json.loads(r.content[:n]), r.content[n:], {}
    for o in j["outputs"]:
        size = o["parameters"]["binary_data_size"]
        out[o["name"]] = (o["datatype"], o["shape"], rest[:size])
        rest = rest[size:]
    return j, out


def grpc_outputs(resp):
    return {o.name: (o.datatype, list(o.shape), resp.raw_output_contents[i]) for i, o in enumerate(resp.outputs)}


def bytes_raw(strings):
    return b"".join(struct.pack("<I", len(s)) + s for s in strings)


def test_health_and_metadata_match_http(gs):
    pb2, stub, s = gs.pb2, gs.stub, gs.http
    assert stub.ServerLive(pb2.ServerLiveRequest(), timeout=10).live is True
    assert stub.ServerReady(pb2.ServerReadyRequest(), timeout=10).ready is True
    meta = stub.ServerMetadata(pb2.ServerMetadataRequest(), timeout=10)
    h = requests.get(s.url("/v2"), timeout=10).json()
    assert (meta.name, meta.version, list(meta.extensions)) == (h["name"], h["version"], h["extensions"])
    for model in ("langid", "dtypes", "nonfinite_half"):
        m = stub.ModelMetadata(pb2.ModelMetadataRequest(name=model), timeout=10)
        h = requests.get(s.url("/v2/models/" + model), timeout=10).json()
        got = {"name": m.name, "versions": list(m.versions), "platform": m.platform,
               "inputs": [{"name": t.name, "datatype": t.datatype, "shape": list(t.shape)} for t in m.inputs],
               "outputs": [{"name": t.name, "datatype": t.datatype, "shape": list(t.shape)} for t in m.outputs]}
        assert got == h
        assert stub.ModelReady(pb2.ModelReadyRequest(name=model), timeout=10).ready is True
    assert stub.ModelReady(pb2.ModelReadyRequest(name="langid", version="1"), timeout=10).ready is True
    # A model that failed its declared warm-up exists but does not serve.
    assert stub.ModelReady(pb2.ModelReadyRequest(name="warmup_fails"), timeout=10).ready is False
    assert code_of(stub.ModelReady, pb2.ModelReadyRequest(name="nope"))[0] == grpc.StatusCode.NOT_FOUND
    assert code_of(stub.ModelMetadata, pb2.ModelMetadataRequest(name="nope"))[0] == grpc.StatusCode.NOT_FOUND
    assert code_of(stub.ModelMetadata, pb2.ModelMetadataRequest(name="../x"))[0] == grpc.StatusCode.INVALID_ARGUMENT
    index = {m.name: m for m in stub.RepositoryIndex(pb2.RepositoryIndexRequest(), timeout=10).models}
    assert index["langid"].state == "READY" and index["warmup_fails"].state == "UNAVAILABLE" and index["warmup_fails"].reason
    ready = [m.name for m in stub.RepositoryIndex(pb2.RepositoryIndexRequest(ready=True), timeout=10).models]
    assert "warmup_fails" not in ready and "langid" in ready


def test_text_infer_typed_and_raw_equal_http(gs):
    pb2, stub = gs.pb2, gs.stub
    texts = [t.encode() for t in TEXTS]
    _, http = http_binary_infer(gs.http, "langid", [("text", "BYTES", [2], bytes_raw(texts))], ["logits", "label", "score"])
    T = pb2.ModelInferRequest.InferInputTensor
    typed = pb2.ModelInferRequest(model_name="langid", id="g-1", inputs=[
        T(name="text", datatype="BYTES", shape=[2], contents=pb2.InferTensorContents(bytes_contents=texts))])
    raw = pb2.ModelInferRequest(model_name="langid", model_version="1", inputs=[T(name="text", datatype="BYTES", shape=[2])],
                                raw_input_contents=[bytes_raw(texts)])
    for req in (typed, raw):
        resp = stub.ModelInfer(req, timeout=60 * SLOW)
        assert resp.model_name == "langid" and resp.model_version == "1" and resp.id == req.id
        assert grpc_outputs(resp) == http
    label = grpc_outputs(stub.ModelInfer(typed, timeout=60 * SLOW))["label"][2]
    assert label == bytes_raw([b"de", b"en"])
    # Requested outputs: only those, in the order asked.
    typed.outputs.add(name="score")
    typed.outputs.add(name="label")
    resp = stub.ModelInfer(typed, timeout=60 * SLOW)
    assert [o.name for o in resp.outputs] == ["score", "label"] and len(resp.raw_output_contents) == 2


def dtype_inputs(rows):
    rng = np.random.default_rng(7)
    out = {}
    for name, (dt, _, _) in TYPED.items():
        shape = (rows, 4) if name == "fp32" else (rows,)
        if dt == np.bool_:
            out[name] = rng.integers(0, 2, size=shape).astype(np.bool_)
        elif np.issubdtype(dt, np.integer):
            info = np.iinfo(dt)
            out[name] = rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
        else:
            out[name] = rng.standard_normal(shape).astype(dt)
    return out


def test_tensor_infer_every_typed_field_equals_http_and_numpy(gs):
    pb2, stub = gs.pb2, gs.stub
    x = dtype_inputs(3)
    T = pb2.ModelInferRequest.InferInputTensor
    inputs = [T(name="in_" + n, datatype=TYPED[n][1], shape=list(a.shape),
                contents=pb2.InferTensorContents(**{TYPED[n][2]: a.reshape(-1).tolist()})) for n, a in x.items()]
    resp = stub.ModelInfer(pb2.ModelInferRequest(model_name="dtypes_typed", inputs=inputs), timeout=60 * SLOW)
    got = grpc_outputs(resp)
    _, http = http_binary_infer(gs.http, "dtypes_typed", [("in_" + n, TYPED[n][1], a.shape, a.tobytes()) for n, a in x.items()],
                                ["out_" + n for n in x])
    assert got == http
    # numpy: FP32 + 1, BOOL negated, the rest unchanged.
    for n, a in x.items():
        want = a + np.float32(1) if n == "fp32" else ~a if n == "bool" else a
        dt, shape, raw = got["out_" + n]
        assert dt == TYPED[n][1] and shape == list(a.shape)
        assert raw == want.astype(TYPED[n][0]).tobytes(), n


def test_raw_fp16_in_and_fp16_bf16_out_equal_http(gs):
    pb2, stub = gs.pb2, gs.stub
    x = dtype_inputs(2)
    x["fp16"] = np.array([0.5, -2.25], dtype=np.float16)
    dts = dict({n: v[1] for n, v in TYPED.items()}, fp16="FP16")
    T = pb2.ModelInferRequest.InferInputTensor
    req = pb2.ModelInferRequest(model_name="dtypes", inputs=[T(name="in_" + n, datatype=dts[n], shape=list(a.shape)) for n, a in x.items()],
                                raw_input_contents=[a.tobytes() for a in x.values()])
    got = grpc_outputs(stub.ModelInfer(req, timeout=60 * SLOW))
    _, http = http_binary_infer(gs.http, "dtypes", [("in_" + n, dts[n], a.shape, a.tobytes()) for n, a in x.items()],
                                ["out_" + n for n in x])
    assert got == http and got["out_fp16"][2] == x["fp16"].tobytes()
    # FP16 and BF16 outputs (JSON cannot carry them; gRPC sends them raw).
    v = np.array([1.0, 70000.0, -3.5], dtype=np.float32)
    req = pb2.ModelInferRequest(model_name="nonfinite_half", inputs=[T(name="x", datatype="FP32", shape=[3])],
                                raw_input_contents=[v.tobytes()])
    got = grpc_outputs(stub.ModelInfer(req, timeout=60 * SLOW))
    _, http = http_binary_infer(gs.http, "nonfinite_half", [("x", "FP32", [3], v.tobytes())], ["y16", "ybf16"])
    assert got == http
    with np.errstate(over="ignore"):
        assert got["y16"][2] == v.astype(np.float16).tobytes()  # 70000 overflows to +Inf in float16


def bad_requests(pb2):
    """(what, request, expected code) over the validation the REST route does, in gRPC's forms."""
    T = pb2.ModelInferRequest.InferInputTensor
    C = pb2.InferTensorContents
    R = pb2.ModelInferRequest
    fp32 = lambda vals, shape: T(name="x", datatype="FP32", shape=shape, contents=C(fp32_contents=vals))  # noqa: E731
    I = grpc.StatusCode.INVALID_ARGUMENT
    return [
        ("unknown model", R(model_name="nope", inputs=[fp32([1.0], [1])]), grpc.StatusCode.NOT_FOUND),
        ("unknown version", R(model_name="nonfinite_half", model_version="7", inputs=[fp32([1.0], [1])]), grpc.StatusCode.NOT_FOUND),
        ("invalid model name", R(model_name="a/b", inputs=[fp32([1.0], [1])]), I),
        ("typed count != shape", R(model_name="nonfinite_half", inputs=[fp32([1.0, 2.0], [3])]), I),
        ("raw size != shape", R(model_name="nonfinite_half", inputs=[T(name="x", datatype="FP32", shape=[3])],
                                raw_input_contents=[b"\0" * 8]), I),
        ("raw entries != inputs", R(model_name="nonfinite_half", inputs=[T(name="x", datatype="FP32", shape=[1])],
                                    raw_input_contents=[b"\0" * 4, b"\0" * 4]), I),
        ("typed and raw mixed", R(model_name="nonfinite_half", inputs=[fp32([1.0], [1])], raw_input_contents=[b"\0" * 4]), I),
        ("FP16 not raw", R(model_name="dtypes", inputs=[T(name="in_fp16", datatype="FP16", shape=[1], contents=C(fp32_contents=[1.0]))]), I),
        ("data in another field", R(model_name="nonfinite_half", inputs=[T(name="x", datatype="FP32", shape=[1],
                                                                           contents=C(fp64_contents=[1.0]))]), I),
        ("INT8 out of range", R(model_name="dtypes_typed", inputs=[T(name="in_int8", datatype="INT8", shape=[1],
                                                                      contents=C(int_contents=[300]))]), I),
        ("wrong datatype for the model", R(model_name="nonfinite_half", inputs=[T(name="x", datatype="FP64", shape=[1],
                                                                                  contents=C(fp64_contents=[1.0]))]), I),
        ("unknown datatype", R(model_name="nonfinite_half", inputs=[T(name="x", datatype="FP8", shape=[1])]), I),
        ("negative dim", R(model_name="nonfinite_half", inputs=[T(name="x", datatype="FP32", shape=[-1])]), I),
        ("no such input", R(model_name="nonfinite_half", inputs=[T(name="y", datatype="FP32", shape=[1], contents=C(fp32_contents=[1.0]))]), I),
        ("missing input", R(model_name="nonfinite_half"), I),
        ("no such output", R(model_name="nonfinite_half", inputs=[fp32([1.0], [1])],
                             outputs=[R.InferRequestedOutputTensor(name="zzz")]), I),
        ("shape over max_tensor_elements", R(model_name="nonfinite_half", inputs=[T(name="x", datatype="FP32", shape=[200000])]), I),
        ("BYTES element cut off", R(model_name="langid", inputs=[T(name="text", datatype="BYTES", shape=[1])],
                                    raw_input_contents=[b"\x09\0\0\0abc"]), I),
        ("text not UTF-8", R(model_name="langid", inputs=[T(name="text", datatype="BYTES", shape=[1], contents=C(bytes_contents=[b"\xff\xfe"]))]), I),
        ("bad timeout parameter", R(model_name="nonfinite_half", inputs=[fp32([1.0], [1])],
                                    parameters={"timeout": pb2.InferParameter(string_param="soon")}), I),
        ("model not serving", R(model_name="warmup_fails", inputs=[fp32([1.0], [1])]), grpc.StatusCode.UNAVAILABLE),
    ]


def test_bad_inputs_get_the_right_status(gs):
    for what, req, want in bad_requests(gs.pb2):
        code, details = code_of(gs.stub.ModelInfer, req)
        assert code == want, (what, code, details)
        assert details, what
    # Raw BOOL is one byte 0 or 1: any other byte is no bool (the shared binary decoder refuses it, REST alike).
    T = gs.pb2.ModelInferRequest.InferInputTensor
    code, details = code_of(gs.stub.ModelInfer, gs.pb2.ModelInferRequest(
        model_name="dtypes_typed", inputs=[T(name="in_bool", datatype="BOOL", shape=[2])], raw_input_contents=[b"\x01\x02"]))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "not 0 or 1" in details, details
    # A message over max_body_bytes is refused by gRPC before it is decoded.
    big = gs.pb2.ModelInferRequest(model_name="nonfinite_half", inputs=[T(name="x", datatype="FP32", shape=[MAX_BODY // 4 + 16])],
                                   raw_input_contents=[b"\0" * (MAX_BODY + 64)])
    assert code_of(gs.stub.ModelInfer, big)[0] == grpc.StatusCode.RESOURCE_EXHAUSTED
    # The server still answers after every refusal.
    assert gs.stub.ServerReady(gs.pb2.ServerReadyRequest(), timeout=10).ready is True


def test_metrics_count_grpc_calls_by_method(gs):
    pb2, stub = gs.pb2, gs.stub
    before = scrape(gs.http)
    route = SERVICE + "ModelInfer"
    ok0 = value(before, "glassbox_requests_total", model="langid", route=route, code="200")
    bad0 = value(before, "glassbox_requests_total", model="", route=route, code="404")
    T = pb2.ModelInferRequest.InferInputTensor
    req = pb2.ModelInferRequest(model_name="langid", inputs=[
        T(name="text", datatype="BYTES", shape=[1], contents=pb2.InferTensorContents(bytes_contents=[b"Hallo Welt"]))])
    stub.ModelInfer(req, timeout=60 * SLOW)
    code_of(stub.ModelInfer, pb2.ModelInferRequest(model_name="nope"))
    stub.ServerLive(pb2.ServerLiveRequest(), timeout=10)
    after = scrape(gs.http)
    assert value(after, "glassbox_requests_total", model="langid", route=route, code="200") == ok0 + 1
    assert value(after, "glassbox_requests_total", model="", route=route, code="404") == bad0 + 1
    assert value(after, "glassbox_requests_total", model="", route=SERVICE + "ServerLive", code="200") >= 1


def test_queue_full_is_unavailable_with_retry_after_and_deadline_drops_before_compute(pb, models):
    """The scheduler's refusals over gRPC, as test_metrics_scheduling checks them over HTTP: with
    --max-queue 1 and one slow call running, a second call whose gRPC deadline passes while it waits
    is dropped before compute (counted as reason=deadline, never run), and a third call is refused at
    once with UNAVAILABLE and a retry-after trailer (the 429 row of the refusal table)."""
    from test_metrics_scheduling import calibrated_n
    s = GrpcServer(pb, [models["slow"], "--max-queue", "1"])
    try:
        pb2 = s.pb2
        T = pb2.ModelInferRequest.InferInputTensor
        slow = lambda n: pb2.ModelInferRequest(model_name="slow", inputs=[  # noqa: E731
            T(name="n", datatype="INT64", shape=[], contents=pb2.InferTensorContents(int64_contents=[n]))])
        n = calibrated_n(s.http, 1.5)
        before = scrape(s.http)
        results = {}
        first = threading.Thread(target=lambda: results.update(first=s.stub.ModelInfer(slow(n), timeout=120 * SLOW)))
        first.start()
        time.sleep(0.3)

        def expiring():
            try:
                s.stub.ModelInfer(slow(10), timeout=0.5)
                results["second"] = grpc.StatusCode.OK
            except grpc.RpcError as e:
                results["second"] = e.code()
        second = threading.Thread(target=expiring)
        second.start()
        time.sleep(0.2)
        with pytest.raises(grpc.RpcError) as third:
            s.stub.ModelInfer(slow(10), timeout=30 * SLOW)
        assert third.value.code() == grpc.StatusCode.UNAVAILABLE, third.value.details()
        assert "max_queue" in third.value.details()
        trailers = dict(third.value.trailing_metadata() or ())
        assert int(trailers["retry-after"]) >= 1, trailers
        first.join(120 * SLOW)
        second.join(120 * SLOW)
        assert "first" in results and results["second"] == grpc.StatusCode.DEADLINE_EXCEEDED
        deadline = time.time() + 10 * SLOW  # the server counts the expired call when the slot frees
        while True:
            after = scrape(s.http)
            d = lambda name, **l: value(after, name, **l) - value(before, name, **l)  # noqa: E731
            if d("glassbox_rejected_requests_total", model="slow", reason="deadline") >= 1 or time.time() > deadline:
                break
            time.sleep(0.1)
        assert d("glassbox_rejected_requests_total", model="slow", reason="queue_full") == 1
        assert d("glassbox_rejected_requests_total", model="slow", reason="deadline") == 1
        assert d("glassbox_compute_duration_seconds_count", model="slow", version="1") == 1  # only the first ran
    finally:
        s.stop()


def test_grpc_method_table_in_explain_and_docs(pb):
    r = subprocess.run([GLASSBOX, "explain", "--serve", "--json"], capture_output=True, text=True, timeout=60 * SLOW)
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    served = [m["method"] for m in j["grpc_methods"]]
    assert served == [m.name for m in pb[0].DESCRIPTOR.services_by_name["GRPCInferenceService"].methods]
    assert any(o["name"] == "grpc_port" and o["value"] == "0" for o in j["options"] if o.get("component") == "server")
    r = subprocess.run([GLASSBOX, "explain", "--serve", "--markdown"], capture_output=True, text=True, timeout=60 * SLOW)
    head = "**gRPC methods** (`glassbox serve --grpc-port`)\n\n"
    assert head in r.stdout
    rows = r.stdout.split(head, 1)[1].splitlines()
    table = "".join(line + "\n" for line in rows[:next(i for i, l in enumerate(rows) if not l.startswith("|"))])
    assert table.count("\n") == 2 + len(served)
    with open(os.path.join(ROOT, "docs", "serving.md"), encoding="utf-8") as f:
        assert table in f.read(), "docs/serving.md's gRPC methods table differs from explain:\n" + table


def test_port_in_use_fails_loudly(pb, models):
    with tempfile.TemporaryDirectory():
        import socket
        with socket.socket() as held:
            held.bind(("127.0.0.1", 0))
            held.listen(1)
            port = held.getsockname()[1]
            r = subprocess.run([GLASSBOX, "serve", "--host", "127.0.0.1", "--port", "0", "--grpc-port", str(port),
                                models["nonfinite_half"]], capture_output=True, text=True, timeout=60 * SLOW)
    assert r.returncode != 0 and "gRPC" in r.stderr and str(port) in r.stderr, r.stderr


def test_sigterm_drains_grpc_calls(pb, models):
    s = GrpcServer(pb, [models["slow"], "--drain-timeout", str(60 * SLOW)])
    try:
        pb2, stub = s.pb2, s.stub
        T = pb2.ModelInferRequest.InferInputTensor

        def slow(n):
            return pb2.ModelInferRequest(model_name="slow", inputs=[T(name="n", datatype="INT64", shape=[],
                                                                      contents=pb2.InferTensorContents(int64_contents=[n]))])
        t0 = time.time()
        stub.ModelInfer(slow(20000), timeout=120 * SLOW)
        n = int(min(max(1.0 / max((time.time() - t0) / 20000, 1e-7), 1000), 5_000_000))  # ~1 s of work
        results = []

        def send():
            try:
                r = stub.ModelInfer(slow(n), timeout=120 * SLOW)
                results.append(("OK", np.frombuffer(r.raw_output_contents[0], dtype=np.float32).tolist()))
            except grpc.RpcError as e:
                results.append((e.code().name, e.details()))

        threads = [threading.Thread(target=send) for _ in range(3)]
        for t in threads:
            t.start()
        time.sleep(0.3)
        s.http.signal(signal.SIGTERM)
        t1 = time.time()
        while stub.ServerReady(pb2.ServerReadyRequest(), timeout=10).ready:
            assert time.time() - t1 < 2 * SLOW, "gRPC readiness still true after SIGTERM"
            time.sleep(0.01)
        code, details = code_of(stub.ModelInfer, slow(1))
        assert code == grpc.StatusCode.UNAVAILABLE and "shutting down" in details
        assert stub.ModelReady(pb2.ModelReadyRequest(name="slow"), timeout=10).ready is False
        for t in threads:
            t.join(180 * SLOW)
        assert s.http.wait(120) == 0, s.http.log
        assert results == [("OK", [float(n)])] * 3, results
        assert "drained" in s.http.log
    finally:
        s.stop()
