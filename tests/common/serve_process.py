"""One `glassbox serve` process on 127.0.0.1 for the Python test suites (tests/server/conftest.py,
tests/deploy/fleet.py): start it, read its stderr, learn its port from the listening line, wait
until it is ready, signal and stop it. Every wait is bounded (scaled by GLASSBOX_TEST_SLOWDOWN).

GLASSBOX_SERVE_CMD (optional) replaces `GLASSBOX serve` with another command that takes the same
flags and prints the same listening line -- e.g. a container run (deploy/container-check.sh):
  GLASSBOX_SERVE_CMD='podman run --rm --network host --name {name} glassbox:0.1.0'
GLASSBOX_SERVE_KILL (with it): the command that force-stops what GLASSBOX_SERVE_CMD started
(`podman rm -f -t 0 {name}`): SIGKILL reaches only the client process, not the container. `{name}`
is replaced in both by a name unique to the process started.
"""
import itertools
import os
import re
import shlex
import signal
import socket
import subprocess
import threading
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# Sanitizer builds run several times slower: every timeout scales with this.
SLOW = float(os.environ.get("GLASSBOX_TEST_SLOWDOWN", "1"))
SERVE_CMD = os.environ.get("GLASSBOX_SERVE_CMD", "")
SERVE_KILL = os.environ.get("GLASSBOX_SERVE_KILL", "")
_serial = itertools.count()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_command(binary, flags, name):
    """[binary, "serve"] + flags, or GLASSBOX_SERVE_CMD's words (with {name}) + flags."""
    if SERVE_CMD:
        return [w.replace("{name}", name) for w in shlex.split(SERVE_CMD)] + list(flags)
    return [binary, "serve"] + list(flags)


class ServeProcess:
    """A `glassbox serve` (or `command`) whose stderr is collected in self.lines / self.log.

    binary, flags: runs `binary serve --host 127.0.0.1 --port PORT FLAGS...` (port 0: the kernel
    picks one, read back from the listening line). command: the whole command line instead (it must
    listen on 127.0.0.1 and print glassbox's listening line). Raises RuntimeError, after stopping
    the process, when it does not print the listening line within `timeout` seconds."""

    def __init__(self, binary, flags=(), name="glassbox", port=0, command=None, env=None, timeout=60):
        self.name = name
        self.unique = "%s-%d-%d" % (re.sub(r"[^a-zA-Z0-9_.-]", "-", name), os.getpid(), next(_serial))
        self.args = command or serve_command(binary, ["--host", "127.0.0.1", "--port", str(port)] + list(flags),
                                             self.unique)
        self.killer = None if command or not SERVE_KILL else [w.replace("{name}", self.unique)
                                                               for w in shlex.split(SERVE_KILL)]
        self.proc = subprocess.Popen(self.args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        self.lines, self.port, self.base = [], None, None
        self._listening = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self._listening.wait(timeout * SLOW):
            self.kill()
            raise RuntimeError("%s did not start listening:\n%s" % (name, self.log))
        self.base = "http://127.0.0.1:%d" % self.port

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append(line)
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
            if m and self.port is None:
                self.port = int(m.group(1))
                self._listening.set()

    @property
    def log(self):
        return "".join(self.lines)

    def url(self, path):
        return self.base + path

    def get(self, path, timeout=5):
        with urllib.request.urlopen(self.base + path, timeout=timeout) as r:
            return r.status, r.read().decode()

    def ready(self):
        try:
            return self.get("/v2/health/ready")[0] == 200
        except Exception:
            return False

    def wait_ready(self, timeout=60):
        deadline = time.time() + timeout * SLOW
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited:\n%s" % (self.name, self.log))
            if self.ready():
                return
            time.sleep(0.05)
        raise RuntimeError("%s not ready in time:\n%s" % (self.name, self.log))

    def signal(self, sig):
        self.proc.send_signal(sig)

    def wait(self, timeout=60):
        return self.proc.wait(timeout * SLOW)

    def kill(self):
        """SIGKILL (and GLASSBOX_SERVE_KILL for a container) unless it has exited."""
        if self.proc.poll() is None:
            if self.killer:
                subprocess.run(self.killer, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(30)

    stop = kill
