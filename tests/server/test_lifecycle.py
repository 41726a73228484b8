"""Model repository, hot reload under traffic, readiness, drain on SIGTERM, idle connections, disconnects."""
import json
import os
import shutil
import signal
import socket
import threading
import time

import requests

from conftest import SLOW


def slow_body(n):
    return {"inputs": [{"name": "n", "datatype": "INT64", "shape": [], "data": [n]}]}


def make_repository(tmp_path, models):
    repo = tmp_path / "repo"
    (repo / "adder" / "1").mkdir(parents=True)
    shutil.copy(os.path.join(models["nonfinite"], "model.onnx"), repo / "adder" / "1" / "model.onnx")
    shutil.copytree(models["langid"], repo / "langid", ignore=shutil.ignore_patterns("*.tsv", "*.py", "*.js", "*.md"))
    shutil.copytree(models["warmup_fails"], repo / "broken")
    (repo / "bad name!").mkdir()
    return repo


def index(s):
    r = requests.post(s.url("/v2/repository/index"), json={}, timeout=30)
    assert r.status_code == 200
    return {e["name"]: e for e in r.json()}


def test_index_versions_and_failed_warmup(start_server, models, tmp_path):
    repo = make_repository(tmp_path, models)
    (repo / "adder" / "3").mkdir()
    shutil.copy(os.path.join(models["nonfinite"], "model.onnx"), repo / "adder" / "3" / "model.onnx")
    s = start_server(["--model-repository", str(repo)])
    idx = index(s)
    assert set(idx) == {"adder", "langid", "broken"}  # "bad name!" is not a valid model name
    assert idx["adder"]["state"] == "READY" and idx["adder"]["version"] == "3"  # the highest version serves
    assert idx["broken"]["state"] == "UNAVAILABLE" and "warm-up" in idx["broken"]["reason"]
    assert str(repo) not in json.dumps(list(idx.values()))
    assert requests.get(s.url("/v2/models/broken/ready"), timeout=10).status_code == 503
    assert requests.get(s.url("/v2/models/adder/versions/3/ready"), timeout=10).status_code == 200
    ready_only = requests.post(s.url("/v2/repository/index"), json={"ready": True}, timeout=10).json()
    assert {e["name"] for e in ready_only} == {"adder", "langid"}


def test_unload_and_load(start_server, models, tmp_path):
    repo = make_repository(tmp_path, models)
    s = start_server(["--model-repository", str(repo)])
    body = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [1], "data": [1.0]}]}
    assert requests.post(s.url("/v2/models/adder/infer"), json=body, timeout=30).status_code == 200
    assert requests.post(s.url("/v2/repository/models/adder/unload"), timeout=30).status_code == 200
    assert index(s)["adder"]["state"] == "UNAVAILABLE"
    assert requests.get(s.url("/v2/models/adder/ready"), timeout=10).status_code == 503
    assert requests.post(s.url("/v2/models/adder/infer"), json=body, timeout=30).status_code == 503
    assert requests.post(s.url("/v2/repository/models/adder/load"), timeout=60).status_code == 200
    assert requests.post(s.url("/v2/models/adder/infer"), json=body, timeout=30).status_code == 200
    r = requests.post(s.url("/v2/repository/models/ghost/load"), timeout=30)
    assert r.status_code == 404
    # A model folder added after start is found by an explicit load.
    shutil.copytree(models["slow"], repo / "late")
    assert requests.post(s.url("/v2/repository/models/late/load"), timeout=60).status_code == 200
    assert index(s)["late"]["state"] == "READY"


class Traffic:
    """Clients sending requests in a loop (bounded in time and count) and counting failures."""

    def __init__(self, s, model, body, clients=3, seconds=30.0, max_requests=2000):
        self.ok = self.failed = 0
        self.versions = set()
        self.errors = []
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.deadline = time.time() + seconds * SLOW
        self.max = max_requests

        def run():
            sess = requests.Session()
            while not self.stop.is_set() and time.time() < self.deadline and self.ok + self.failed < self.max:
                try:
                    r = sess.post(s.url("/v2/models/%s/infer" % model), json=body, timeout=30 * SLOW)
                    with self.lock:
                        if r.status_code == 200:
                            self.ok += 1
                            self.versions.add(r.json()["model_version"])
                        else:
                            self.failed += 1
                            self.errors.append(r.text)
                except Exception as e:  # noqa: BLE001 - a reset is a failure to count, not to hide
                    with self.lock:
                        self.failed += 1
                        self.errors.append(repr(e))

        self.threads = [threading.Thread(target=run) for _ in range(clients)]
        for t in self.threads:
            t.start()

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join(60 * SLOW)


def test_corrupt_reload_under_traffic_keeps_old_version_then_good_reload_swaps(start_server, models, tmp_path):
    repo = make_repository(tmp_path, models)
    s = start_server(["--model-repository", str(repo)])
    body = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [2], "data": [1.0, 2.0]}]}
    traffic = Traffic(s, "adder", body)
    time.sleep(0.3)
    # A half-written new version: truncated protobuf.
    (repo / "adder" / "2").mkdir()
    data = open(os.path.join(models["nonfinite"], "model.onnx"), "rb").read()
    (repo / "adder" / "2" / "model.onnx").write_bytes(data[: len(data) // 2])
    r = requests.post(s.url("/v2/repository/models/adder/load"), timeout=60)
    assert r.status_code == 400 and "adder" in r.json()["error"]
    assert str(repo) not in r.text
    idx = index(s)["adder"]
    assert idx["state"] == "READY" and idx["version"] == "1" and "last load failed" in idx["reason"]
    time.sleep(0.3)
    # Now a good version 2.
    shutil.copy(os.path.join(models["nonfinite"], "model.onnx"), repo / "adder" / "2" / "model.onnx")
    assert requests.post(s.url("/v2/repository/models/adder/load"), timeout=60).status_code == 200
    time.sleep(0.5)
    traffic.finish()
    assert traffic.failed == 0, traffic.errors[:3]
    assert traffic.ok > 10
    assert traffic.versions == {"1", "2"}
    assert index(s)["adder"]["version"] == "2"


def test_repository_poll_picks_up_a_new_version(start_server, models, tmp_path):
    repo = make_repository(tmp_path, models)
    s = start_server(["--model-repository", str(repo), "--repository-poll", "0.2"])
    (repo / "adder" / "5").mkdir()
    shutil.copy(os.path.join(models["nonfinite"], "model.onnx"), repo / "adder" / "5" / "model.onnx")
    deadline = time.time() + 30 * SLOW
    while time.time() < deadline and index(s)["adder"]["version"] != "5":
        time.sleep(0.1)
    assert index(s)["adder"]["version"] == "5"


def test_ready_only_after_warmup(start_server, models):
    s = start_server([models["warmup_fails"]], wait_ready=False)
    deadline = time.time() + 30 * SLOW
    while time.time() < deadline and "models ready" not in s.log:
        assert requests.get(s.url("/v2/health/live"), timeout=10).status_code == 200
        time.sleep(0.05)
    assert "0 of 1 models ready" in s.log
    assert requests.get(s.url("/v2/health/ready"), timeout=10).status_code == 503
    idx = requests.post(s.url("/v2/repository/index"), timeout=10).json()
    assert idx[0]["state"] == "UNAVAILABLE" and "warm-up run failed" in idx[0]["reason"]


def test_sigterm_drains_in_flight_requests_and_exits_0(start_server, models):
    s = start_server([models["slow"], "--drain-timeout", str(60 * SLOW)])
    # Calibrate: a request of n iterations should take ~1 s.
    t0 = time.time()
    requests.post(s.url("/v2/models/slow/infer"), json=slow_body(20000), timeout=120)
    per = max((time.time() - t0) / 20000, 1e-7)
    n = int(min(max(1.0 / per, 1000), 5_000_000))
    results = []

    def send():
        try:
            r = requests.post(s.url("/v2/models/slow/infer"), json=slow_body(n), timeout=120 * SLOW)
            results.append((r.status_code, r.json()["outputs"][0]["data"][0] if r.status_code == 200 else r.text))
        except Exception as e:  # noqa: BLE001
            results.append((-1, repr(e)))

    threads = [threading.Thread(target=send) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    s.signal(signal.SIGTERM)
    t1 = time.time()
    # Readiness turns 503 at once (the signal reaches the IO thread within milliseconds); new work
    # is refused with a clear 503.
    while requests.get(s.url("/v2/health/ready"), timeout=10).status_code != 503:
        assert time.time() - t1 < 2 * SLOW, "readiness still 200 after SIGTERM"
        time.sleep(0.01)
    late = requests.post(s.url("/v2/models/slow/infer"), json=slow_body(1), timeout=10)
    assert late.status_code == 503 and "shutting down" in late.json()["error"]
    for t in threads:
        t.join(180 * SLOW)
    assert s.wait(120) == 0, s.log
    assert [r[0] for r in results] == [200] * 4, results
    assert all(r[1] == float(n) for r in results)
    assert "drained" in s.log


def test_300_half_open_connections_do_not_block_a_new_request(start_server, models):
    s = start_server([models["langid"]])
    socks = []
    try:
        for i in range(300):
            c = socket.create_connection(("127.0.0.1", s.port), timeout=10)
            if i % 2:
                c.sendall(b"POST /v2/models/langid/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
            socks.append(c)
        t0 = time.time()
        r = requests.post(s.url("/v2/models/langid/infer"),
                          json={"inputs": [{"name": "text", "datatype": "BYTES", "shape": [1], "data": ["Guten Tag"]}]},
                          timeout=10)
        elapsed = time.time() - t0
        assert r.status_code == 200
        assert elapsed < 1.0 * SLOW, elapsed
    finally:
        for c in socks:
            c.close()


def test_client_disconnect_mid_inference_frees_its_work(start_server, models):
    s = start_server([models["slow"]])
    # Queue a long request behind another long one, then vanish: the queued one is dropped unrun.
    raw = json.dumps(slow_body(2_000_000)).encode()
    req = b"POST /v2/models/slow/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(raw) + raw
    first = socket.create_connection(("127.0.0.1", s.port), timeout=10)
    first.sendall(req)
    second = socket.create_connection(("127.0.0.1", s.port), timeout=10)
    second.sendall(req)
    time.sleep(0.2)
    first.close()
    second.close()
    t0 = time.time()
    r = requests.post(s.url("/v2/models/slow/infer"), json=slow_body(10), timeout=120 * SLOW)
    assert r.status_code == 200
    assert requests.get(s.url("/v2/health/live"), timeout=10).status_code == 200
    assert time.time() - t0 < 60 * SLOW
    assert "dropped a request for model 'slow' before compute: the client closed the connection" in s.log
