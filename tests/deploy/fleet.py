#!/usr/bin/env python3
"""A fleet of `glassbox serve` replicas on 127.0.0.1 behind Debian's haproxy running
deploy/haproxy/glassbox.cfg, and a bounded load generator (threads, http.client).

Used by tests/deploy/test_fleet.py (replicas stopped/killed/added under load) and, as a script,
to measure the throughput of 1, 2, 3 replicas (docs/benchmarks-history.md, "Fleet (issue #19)"):

  /usr/bin/python3 tests/deploy/fleet.py --bin build/src/cli/glassbox --replicas 1 2 3 --seconds 15

Everything listens on 127.0.0.1 only; every wait is bounded; every process started is stopped.
"""
import argparse
import csv
import http.client
import io
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from serve_process import ROOT, SLOW, ServeProcess, free_port  # noqa: E402,F401  (shared with tests/server)

HAPROXY_CFG = os.path.join(ROOT, "deploy", "haproxy", "glassbox.cfg")

TEXTS = ["Guten Morgen, wie geht es dir?", "Ho dimenticato le chiavi a casa.", "The weather is lovely today.",
         "Je voudrais un café, s'il vous plaît.", "¿Dónde está la estación de tren?",
         "Dit is een korte zin in het Nederlands, met nog een paar woorden erbij om hem langer te maken."]


class Replica(ServeProcess):
    """One `glassbox serve` on 127.0.0.1 (the default model: no model argument), `--threads 1`
    unless `threads` says otherwise."""

    def __init__(self, binary, name, port=0, extra=(), command=None, env=None, threads=1):
        """command: the whole command line instead of `binary serve --host 127.0.0.1 --port PORT
        --threads 1 EXTRA...` (it must listen on 127.0.0.1 and print glassbox's listening line)."""
        super().__init__(binary, ["--threads", str(threads)] + list(extra), name=name, port=port, command=command,
                         env=env, timeout=60)

    def wait_ready(self, timeout=90):
        super().wait_ready(timeout)

    def infer_count(self):
        """Inference requests this replica answered (glassbox_requests_total of the infer/predict routes)."""
        _, text = self.get("/metrics", timeout=10)
        n = 0.0
        for line in text.splitlines():
            if line.startswith("glassbox_requests_total{") and ('route="/v2/models/{m}/infer"' in line or
                                                                'route="/predict"' in line):
                n += float(line.rsplit(" ", 1)[1])
        return int(n)


class Haproxy:
    """haproxy -db -f deploy/haproxy/glassbox.cfg + one `server` line per replica (name, port)."""

    def __init__(self, workdir, servers, balance=None):
        """balance: another `balance` algorithm than the config's (figures only)."""
        self.port = free_port()
        self.sock = os.path.join(workdir, "haproxy.sock")
        cfg = os.path.join(workdir, "haproxy.cfg")
        with open(HAPROXY_CFG) as f:
            text = f.read()
        self.balance = re.search(r"^\s*balance (\S+)", text, re.M).group(1)
        if balance:
            text, self.balance = re.sub(r"^(\s*balance) \S+", r"\1 " + balance, text, flags=re.M), balance
        with open(cfg, "w") as f:
            f.write(text + "".join("    server %s 127.0.0.1:%d\n" % s for s in servers))
        env = dict(os.environ, GLASSBOX_LB_BIND="127.0.0.1:%d" % self.port, GLASSBOX_LB_STATS=self.sock)
        check = subprocess.run(["haproxy", "-c", "-f", cfg], env=env, capture_output=True, text=True, timeout=30)
        if check.returncode != 0:
            raise RuntimeError("haproxy -c refused the config:\n" + check.stdout + check.stderr)
        self.proc = subprocess.Popen(["haproxy", "-db", "-f", cfg], env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        self.lines = []
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.time() + 20
        while not os.path.exists(self.sock):
            if time.time() > deadline or self.proc.poll() is not None:
                self.stop()
                raise RuntimeError("haproxy did not start:\n" + "".join(self.lines))
            time.sleep(0.05)

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)

    def command(self, cmd):
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(5)
            s.connect(self.sock)
            s.sendall(cmd.encode() + b"\n")
            out = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    return out.decode()
                out += chunk

    def stats(self):
        """{server name: row of `show stat`} for the backend's servers."""
        text = self.command("show stat").lstrip("# ")
        rows = csv.DictReader(io.StringIO(text))
        return {r["svname"]: r for r in rows if r["pxname"] == "glassbox" and r["svname"] not in ("FRONTEND", "BACKEND")}

    def wait_up(self, names, timeout=60):
        deadline = time.time() + timeout * SLOW
        while time.time() < deadline:
            st = self.stats()
            if all(st[n]["status"] == "UP" for n in names):
                return
            time.sleep(0.1)
        raise RuntimeError("haproxy does not see %s UP: %s" % (names, {n: r["status"] for n, r in self.stats().items()}))

    def log_records(self):
        """Parsed request log lines: {rid, srv, status, retries, term, method, uri}."""
        out = []
        for line in self.lines:
            m = re.match(r"rid=(\S*) srv=(\S*) status=(\S*) retries=(\S*) term=(\S*) method=(\S*) uri=(\S*)", line.strip())
            if m:
                out.append(dict(zip(("rid", "srv", "status", "retries", "term", "method", "uri"), m.groups())))
        return out

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def request_for(i):
    """A mixed request: OIP JSON inference (1-3 texts) or TEI /predict, texts of varying length."""
    texts = [TEXTS[(i + k) % len(TEXTS)] for k in range(1 + i % 3)]
    if i % 2 == 0:
        body = {"inputs": [{"name": "text", "datatype": "BYTES", "shape": [len(texts)], "data": texts}],
                "outputs": [{"name": "label"}]}
        return "/v2/models/langid/infer", body, len(texts)
    return "/predict", {"inputs": texts, "model": "langid"}, len(texts)


def answered_ok(path, n, status, data):
    """A 200 whose body holds one label per text (the answer a client can use)."""
    if status != 200:
        return False
    try:
        j = json.loads(data)
    except ValueError:
        return False
    if path == "/predict":
        # TEI: a list of texts answers one ranked list per text.
        return isinstance(j, list) and len(j) == n and all(isinstance(e, list) and e and "label" in e[0] for e in j)
    outs = {o["name"]: o for o in j.get("outputs", [])}
    return "label" in outs and len(outs["label"]["data"]) == n


class Load:
    """`clients` threads sending mixed requests through the balancer until stop() or `seconds`,
    each request with a unique X-Request-Id; at most `max_requests` in all."""

    def __init__(self, port, clients=4, seconds=60.0, max_requests=100000):
        self.port, self.results, self._lock = port, [], threading.Lock()
        self._stop = threading.Event()
        self._deadline = time.time() + seconds
        self._budget = max_requests
        self._threads = [threading.Thread(target=self._run, args=(c,), daemon=True) for c in range(clients)]
        self.started = time.time()
        for t in self._threads:
            t.start()

    def _take(self):
        with self._lock:
            if self._budget <= 0:
                return False
            self._budget -= 1
            return True

    def _run(self, client):
        conn, i = None, client
        rng = random.Random(client)
        while not self._stop.is_set() and time.time() < self._deadline and self._take():
            path, body, n = request_for(i + rng.randrange(6))
            rid = "c%d-%d" % (client, i)
            t0 = time.time()
            status, ok, err, reused = None, False, None, conn is not None
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60 * SLOW)
                conn.request("POST", path, body=json.dumps(body),
                             headers={"Content-Type": "application/json", "X-Request-Id": rid})
                r = conn.getresponse()
                data = r.read()
                status, ok = r.status, answered_ok(path, n, r.status, data)
                if r.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = None
            except Exception as e:  # a failed request is recorded, never retried here
                err = "%s: %s" % (type(e).__name__, e)
                if conn is not None:
                    conn.close()
                conn = None
            with self._lock:
                self.results.append({"rid": rid, "path": path, "status": status, "ok": ok, "error": err,
                                     "reused": reused, "t0": t0, "t1": time.time()})
            i += 4
        if conn is not None:
            conn.close()

    def stop(self, timeout=120):
        self._stop.set()
        for t in self._threads:
            t.join(timeout * SLOW)
        self.elapsed = time.time() - self.started
        return self.results


def proc_usage(pid):
    """(CPU seconds user+system, voluntary, involuntary context switches) of a process, all its threads."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    vol = invol = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        vol += int(line.split()[1])
                    elif line.startswith("nonvoluntary_ctxt_switches:"):
                        invol += int(line.split()[1])
        except FileNotFoundError:  # a thread that ended meanwhile
            pass
    return cpu, vol, invol


def machine_cpu():
    """(busy, total) jiffies of the whole machine (/proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    return sum(v) - idle, sum(v)


def histogram_sums(replica):
    """{name: [sum, count]} of the batch size / queue / compute histograms, summed over labels."""
    _, text = replica.get("/metrics", timeout=10)
    out = {}
    for line in text.splitlines():
        m = re.match(r"(glassbox_(?:batch_size|queue_duration_seconds|compute_duration_seconds))_(sum|count)\{.*\} (\S+)$", line)
        if m:
            out.setdefault(m.group(1), [0.0, 0.0])[0 if m.group(2) == "sum" else 1] += float(m.group(3))
    return out


def throughput(binary, replicas, seconds, clients, threads=1, balance=None):
    """Answered requests/s through haproxy with `replicas` replicas (`--threads threads` each), with
    where the CPU went: per replica CPU seconds, context switches, engine runs, mean batch size, mean
    queue and compute time (deltas of /metrics over the run); haproxy's and the clients' CPU; the
    machine's busy fraction and load average."""
    work = tempfile.mkdtemp(prefix="glassbox-fleet-")
    started, lb = [], None
    try:
        for k in range(replicas):
            started.append(Replica(binary, "r%d" % k, threads=threads))
        for r in started:
            r.wait_ready()
        lb = Haproxy(work, [(r.name, r.port) for r in started], balance=balance)
        lb.wait_up([r.name for r in started])
        before = [(proc_usage(r.proc.pid), histogram_sums(r)) for r in started]
        lb_before, me_before, m_before = proc_usage(lb.proc.pid), os.times(), machine_cpu()
        load = Load(lb.port, clients=clients, seconds=seconds)
        time.sleep(seconds)
        res = load.stop()
        m_after, me_after, lb_after = machine_cpu(), os.times(), proc_usage(lb.proc.pid)
        after = [(proc_usage(r.proc.pid), histogram_sums(r)) for r in started]
        ok = [r for r in res if r["ok"]]
        lat = sorted(r["t1"] - r["t0"] for r in ok)
        per = []
        for (u0, h0), (u1, h1) in zip(before, after):
            d = {k: [h1[k][i] - h0.get(k, [0, 0])[i] for i in (0, 1)] for k in h1}
            runs = d.get("glassbox_batch_size", [0, 0])[1]
            mean = lambda k, scale=1.0: round(scale * d[k][0] / d[k][1], 2) if d.get(k, [0, 0])[1] else None  # noqa: E731
            per.append({"cpu_s": round(u1[0] - u0[0], 2), "ctx_vol": u1[1] - u0[1], "ctx_invol": u1[2] - u0[2],
                        "runs": int(runs), "mean_batch": mean("glassbox_batch_size"),
                        "queue_ms": mean("glassbox_queue_duration_seconds", 1000),
                        "compute_ms": mean("glassbox_compute_duration_seconds", 1000)})
        busy = (m_after[0] - m_before[0]) / max(1, m_after[1] - m_before[1])
        return {"replicas": replicas, "threads": threads, "clients": clients, "balance": lb.balance,
                "seconds": round(load.elapsed, 2), "requests": len(res),
                "ok": len(ok), "failed": len(res) - len(ok), "requests_per_s": round(len(ok) / load.elapsed, 1),
                "p50_ms": round(1000 * lat[len(lat) // 2], 1) if lat else None,
                "p99_ms": round(1000 * lat[int(len(lat) * 0.99)], 1) if lat else None,
                "machine_busy": round(busy, 3), "loadavg": os.getloadavg()[0],
                "haproxy_cpu_s": round(lb_after[0] - lb_before[0], 2),
                "clients_cpu_s": round(sum(me_after[:2]) - sum(me_before[:2]), 2), "per_replica": per}
    finally:
        if lb:
            lb.stop()
        for r in started:
            r.kill()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="the glassbox binary")
    ap.add_argument("--replicas", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--threads", type=int, nargs="+", default=[1], help="--threads per replica (each value is run)")
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--clients", type=int, default=6, help="concurrent client threads (default 6)")
    ap.add_argument("--balance", default=None, help="haproxy balance algorithm instead of the config's (leastconn)")
    ap.add_argument("--repeat", type=int, default=1, help="run the whole list this many times (interleaved)")
    a = ap.parse_args()
    for _ in range(a.repeat):
        for n in a.replicas:
            for t in a.threads:
                print(json.dumps(throughput(a.bin, n, a.seconds, a.clients, threads=t, balance=a.balance)), flush=True)


if __name__ == "__main__":
    sys.exit(main())
