"""Structured logs with trace context (docs/serving.md "Logs").

A real `glassbox serve --access-log --log-format json` process: every line it writes is one JSON
object (events on stderr, access lines on stdout); X-Request-Id is kept or generated and echoed;
W3C traceparent is validated as the spec says (a valid one continues its trace, an invalid one is
ignored and a new trace begins) and echoed with this server's span; every line about a request
carries its request id and trace id.
"""
import json
import os
import re
import signal
import subprocess
import tempfile
import time

import pytest
import requests

from conftest import GLASSBOX, SLOW

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"
HEX32 = re.compile(r"^[0-9a-f]{32}$")


class LoggedServer:
    """`glassbox serve` with stdout and stderr in files, so the test reads every line it wrote."""

    def __init__(self, args):
        self.dir = tempfile.mkdtemp(prefix="glassbox-logs-")
        self.out_path, self.err_path = os.path.join(self.dir, "out"), os.path.join(self.dir, "err")
        with open(self.out_path, "w") as out, open(self.err_path, "w") as err:
            self.proc = subprocess.Popen([GLASSBOX, "serve", "--host", "127.0.0.1", "--port", "0"] + args, stdout=out, stderr=err)
        deadline = time.time() + 120 * SLOW
        while time.time() < deadline:
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", self.stderr())
            if m and "server ready" in self.stderr():
                self.base = "http://127.0.0.1:%s" % m.group(1)
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("server did not become ready:\n" + self.stderr())

    def stderr(self):
        with open(self.err_path) as f:
            return f.read()

    def stdout(self):
        with open(self.out_path) as f:
            return f.read()

    def url(self, path):
        return self.base + path

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60 * SLOW)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)


@pytest.fixture
def logged(models):
    started = []

    def start(args):
        s = LoggedServer(args)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def json_lines(text):
    lines = [line for line in text.splitlines() if line.strip()]
    return [json.loads(line) for line in lines]  # every line must be one JSON object


def echoed_trace(r):
    version, trace, span, flags = r.headers["traceparent"].split("-")
    assert version == "00" and HEX32.match(trace) and re.match(r"^[0-9a-f]{16}$", span) and span != "0" * 16
    return trace, span, flags


def test_json_logs_request_ids_and_traceparent(logged, models):
    s = logged([models["langid_embed"], "--access-log", "--log-format", "json"])
    body = json.dumps({"inputs": ["hello there", "bonjour"]}).encode()
    r = requests.post(s.url("/embed"), data=body, timeout=60 * SLOW,
                      headers={"Content-Type": "application/json", "X-Request-Id": "req-abc-1",
                               "traceparent": "00-%s-%s-01" % (TRACE, PARENT)})
    assert r.status_code == 200
    assert r.headers["X-Request-Id"] == "req-abc-1"
    trace, span, flags = echoed_trace(r)
    assert trace == TRACE and span != PARENT and flags == "01"

    # A later version may carry more fields after the flags: still valid.
    r2 = requests.post(s.url("/embed"), json={"inputs": "x"}, headers={"traceparent": "01-%s-%s-00-more" % (TRACE, PARENT)},
                       timeout=60 * SLOW)
    assert echoed_trace(r2)[0] == TRACE and HEX32.match(r2.headers["X-Request-Id"])

    # Invalid by the spec: ignored, a new trace begins.
    invalid = ["00-%s-%s-01" % (TRACE.upper(), PARENT), "00-%s-%s-01" % ("0" * 32, PARENT), "00-%s-%s-01" % (TRACE, "0" * 16),
               "ff-%s-%s-01" % (TRACE, PARENT), "00-%s-%s-01-extra" % (TRACE, PARENT), "00-%s-%s-1" % (TRACE, PARENT),
               "00_%s-%s-01" % (TRACE, PARENT), "00-%s-%s-0g" % (TRACE, PARENT)]
    for bad in invalid:
        rb = requests.post(s.url("/embed"), json={"inputs": "x"}, headers={"traceparent": bad, "X-Request-Id": "bad id"},
                           timeout=60 * SLOW)
        assert rb.status_code == 200
        t, _, _ = echoed_trace(rb)
        assert t != TRACE, bad
        assert HEX32.match(rb.headers["X-Request-Id"]), "an invalid X-Request-Id is replaced"

    # A request dropped at its deadline (0 ms): its event line carries its ids.
    rd = requests.post(s.url("/embed"), json={"inputs": "x"}, headers={"X-Request-Id": "late-1", "X-Request-Timeout-Ms": "0"},
                       timeout=60 * SLOW)
    assert rd.status_code == 504 and rd.json()["error_type"] == "overloaded"
    late_trace = echoed_trace(rd)[0]
    s.stop()

    events = json_lines(s.stderr())
    assert events and all(e["type"] == "event" and {"time", "level", "message"} <= set(e) for e in events)
    assert all(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", e["time"]) for e in events)
    dropped = [e for e in events if "before compute" in e["message"]]
    assert len(dropped) == 1 and dropped[0]["request_id"] == "late-1" and dropped[0]["trace_id"] == late_trace
    assert dropped[0]["model"] == "langid_embed" and dropped[0]["route"] == "/embed"

    access = json_lines(s.stdout())
    assert len(access) == 2 + len(invalid) + 1 and all(a["type"] == "access" for a in access)
    first = next(a for a in access if a["request_id"] == "req-abc-1")
    assert first["trace_id"] == TRACE and first["parent_span_id"] == PARENT and first["span_id"] == span
    assert first["route"] == "/embed" and first["method"] == "POST" and first["model"] == "langid_embed"
    assert first["status"] == 200 and "refusal" not in first
    assert first["bytes_in"] == len(body) and first["bytes_out"] == len(r.content)
    assert first["tokens"] > 2 and first["queue_ms"] >= 0 and first["compute_ms"] > 0 and first["total_ms"] >= first["compute_ms"]
    late = next(a for a in access if a["request_id"] == "late-1")
    assert late["status"] == 504 and late["refusal"] == "deadline_exceeded" and late["trace_id"] == late_trace


def test_text_is_the_default_and_a_bad_format_is_refused(logged, models):
    s = logged([models["langid_embed"]])
    assert requests.post(s.url("/embed"), json={"inputs": "x"}, timeout=60 * SLOW).status_code == 200
    s.stop()
    lines = s.stderr().splitlines()
    assert lines and all(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z glassbox serve: ", line) for line in lines), lines
    assert s.stdout() == ""  # no access log unless asked
    r = subprocess.run([GLASSBOX, "serve", "--port", "0", "--log-format", "xml", models["langid_embed"]], capture_output=True,
                       text=True, timeout=60 * SLOW)
    assert r.returncode != 0 and "log_format" in r.stderr and "json" in r.stderr
