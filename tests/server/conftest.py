"""Fixtures of the server tests: real `glassbox serve` processes on 127.0.0.1.

Every server is started with --port 0 (the kernel picks a free port; the server prints
"listening on 127.0.0.1:PORT"), every wait is bounded in time, and every process a test
starts is stopped when the test ends.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GLASSBOX = os.environ.get("GLASSBOX_BIN", os.path.join(ROOT, "build", "src", "cli", "glassbox"))
# Sanitizer builds run several times slower: every timeout scales with this.
SLOW = float(os.environ.get("GLASSBOX_TEST_SLOWDOWN", "1"))


class Server:
    """One `glassbox serve` process; its stderr is collected in self.log."""

    def __init__(self, args, wait_ready=True, timeout=60):
        self.args = [GLASSBOX, "serve", "--host", "127.0.0.1", "--port", "0"] + list(args)
        self.proc = subprocess.Popen(self.args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.lines = []
        self._port = threading.Event()
        self.port = None
        threading.Thread(target=self._read, daemon=True).start()
        if not self._port.wait(timeout * SLOW):
            self.stop()
            raise RuntimeError("server did not start listening:\n" + self.log)
        self.base = "http://127.0.0.1:%d" % self.port
        if wait_ready:
            self.wait_ready(timeout)

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append(line)
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
            if m and self.port is None:
                self.port = int(m.group(1))
                self._port.set()

    @property
    def log(self):
        return "".join(self.lines)

    def wait_ready(self, timeout=60):
        deadline = time.time() + timeout * SLOW
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("server exited:\n" + self.log)
            try:
                with urllib.request.urlopen(self.base + "/v2/health/ready", timeout=5) as r:
                    if r.status == 200:
                        return
            except Exception:
                pass
            time.sleep(0.05)
        raise RuntimeError("server not ready in time:\n" + self.log)

    def url(self, path):
        return self.base + path

    def signal(self, sig):
        self.proc.send_signal(sig)

    def wait(self, timeout=60):
        return self.proc.wait(timeout * SLOW)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(30)


@pytest.fixture(scope="session")
def models():
    """The test models (tests/server/make_server_models.py) in a temporary folder."""
    out = tempfile.mkdtemp(prefix="glassbox-server-models-")
    subprocess.run(["/usr/bin/python3", os.path.join(os.path.dirname(__file__), "make_server_models.py"), out, ROOT], check=True)
    paths = {name: os.path.join(out, name) for name in os.listdir(out)}
    paths["langid"] = os.path.join(ROOT, "models", "langid")
    paths["root"] = out
    yield paths
    shutil.rmtree(out, ignore_errors=True)


@pytest.fixture(scope="session")
def text_server(models):
    """langid (classify, declared truncation), langid_strict (no truncation), langid_embed (vectors)."""
    s = Server([models["langid"], models["langid_strict"], models["langid_embed"], "--max-texts-per-request", "16"])
    yield s
    s.stop()


@pytest.fixture(scope="session")
def tensor_server(models):
    s = Server([models["dtypes"], models["slow"], models["nonfinite"]])
    yield s
    s.stop()


@pytest.fixture
def start_server():
    started = []

    def start(args, **kw):
        s = Server(args, **kw)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def cli_json_lines(args, stdin=None):
    r = subprocess.run([GLASSBOX] + args, input=stdin, capture_output=True, text=True, timeout=120 * SLOW)
    assert r.returncode == 0, r.stderr
    return [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
