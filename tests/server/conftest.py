"""Fixtures of the server tests: real `glassbox serve` processes on 127.0.0.1.

Every server is started with --port 0 (the kernel picks a free port; the server prints
"listening on 127.0.0.1:PORT"), every wait is bounded in time, and every process a test
starts is stopped when the test ends. GLASSBOX_SERVE_CMD runs them through another command,
e.g. in the container image (tests/common/serve_process.py, deploy/container-check.sh).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from serve_process import ROOT, SLOW, ServeProcess  # noqa: E402  (shared with tests/deploy/fleet.py)

GLASSBOX = os.environ.get("GLASSBOX_BIN", os.path.join(ROOT, "build", "src", "cli", "glassbox"))


class Server(ServeProcess):
    """One `glassbox serve --host 127.0.0.1 --port 0 ARGS...` (or GLASSBOX_SERVE_CMD + the same
    flags: tests/common/serve_process.py), ready unless wait_ready=False."""

    def __init__(self, args, wait_ready=True, timeout=60):
        super().__init__(GLASSBOX, args, name="server", timeout=timeout)
        if wait_ready:
            try:
                self.wait_ready(timeout)
            except RuntimeError:
                self.stop()  # not yet handed to start_server's cleanup
                raise


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
    s = Server([models["dtypes"], models["slow"], models["nonfinite"], models["nonfinite_half"]])
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
