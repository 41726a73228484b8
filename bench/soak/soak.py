#!/usr/bin/python3
"""An hour of hostile traffic against one `glassbox serve` process (issue 32 §5; bench, not CI).

Starts `glassbox serve --model-repository REPO` on 127.0.0.1 (free port) with a repository of several kinds of
model — text (the langid classifier and an embedding copy of it), tensor (an OIP datatype model) and tabular (a
scikit-learn random forest through ai.onnx.ml) — and runs, for --minutes, at the same time:
  - valid traffic: --clients keep-alive clients, each paced to --rate requests/s, over /predict, /embed,
    /v1/embeddings, OIP infer of text, tensor and tabular models; every 200 answer is checked for its shape;
  - hostile traffic: raw-socket requests built to break the HTTP layer and the codecs (byte flips of valid
    requests, truncated bodies, lying Content-Length, Content-Length + Transfer-Encoding, bad chunk sizes,
    huge declared shapes, deep JSON, bad UTF-8, broken OIP binary framing, path tricks, 3000 headers);
  - churn: one model unloaded and loaded again through the repository API every --churn-seconds;
  - --slow slow connections (slowloris: a header byte every few seconds), re-opened as the server drops them.
Records every answer by kind and status, any 5xx (only 503 from the churned model or drain is documented),
RSS every minute, p50/p95/p99 of the valid requests per 10-minute window and overall, and the exit status
after SIGTERM at the end. Prints one JSON report and writes it to --out.

Usage: bench/soak/soak.py --glassbox BUILD/src/cli/glassbox [--minutes 60] [--clients 4] [--rate 5]
       [--slow 150] [--out build/soak.json]
"""
import argparse
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import http.client

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "common"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__))))
from serve_process import ServeProcess  # noqa: E402
import hostile  # noqa: E402

CHURNED = "tabular"
TEXTS = ["Guten Morgen, wie geht es dir?", "The weather is lovely today.", "Je voudrais un café.",
         "¿Dónde está la biblioteca?", "Ho dimenticato le chiavi.", "Dziękuję bardzo.", "今日はとても暑いですね。"]


def build_repository(repo):
    """langid (text classifier), langid_embed (vectors), dtypes (tensor), tabular (random forest)."""
    tmp = tempfile.mkdtemp(prefix="soak-models-")
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tests", "server", "make_server_models.py"), tmp, ROOT],
                   check=True, stdout=subprocess.DEVNULL)
    for name in ("langid_embed", "dtypes"):
        shutil.copytree(os.path.join(tmp, name), os.path.join(repo, name))
    shutil.copytree(os.path.join(ROOT, "models", "langid"), os.path.join(repo, "langid"))
    shutil.rmtree(tmp)
    sys.path.insert(0, os.path.join(ROOT, "scripts", "ml"))
    import onnx
    import library_models
    case = next(c for c in library_models.cases() if c["name"] == "sklearn_random_forest_deep_multiclass_v5")
    os.makedirs(os.path.join(repo, CHURNED))
    onnx.save(case["model"], os.path.join(repo, CHURNED, "model.onnx"))
    return case["feeds"]["X"].shape[1], case["name"]


def valid_requests(features):
    rng = random.Random(1)
    row = [round(rng.uniform(-2, 2), 3) for _ in range(features)]
    return [
        ("predict", "POST", "/predict", lambda t: {"inputs": t, "model": "langid"}, lambda r: "label" in r[0]),
        ("embed", "POST", "/embed", lambda t: {"inputs": [t, t[:5]], "model": "langid_embed"},
         lambda r: len(r) == 2 and len(r[0]) > 8),
        ("openai_embeddings", "POST", "/v1/embeddings", lambda t: {"input": t, "model": "langid_embed"},
         lambda r: r["data"][0]["embedding"]),
        ("oip_text", "POST", "/v2/models/langid/infer",
         lambda t: {"inputs": [{"name": "text", "datatype": "BYTES", "shape": [1], "data": [t]}]},
         lambda r: r["outputs"]),
        ("oip_tensor", "POST", "/v2/models/dtypes/infer", lambda t: hostile.dtypes_body(), lambda r: len(r["outputs"]) > 3),
        ("oip_tabular", "POST", "/v2/models/%s/infer" % CHURNED,
         lambda t: {"inputs": [{"name": "X", "datatype": "FP32", "shape": [1, features], "data": row}]},
         lambda r: r["outputs"]),
    ]


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.outcomes = {}      # "kind status" -> count
        self.latency = []       # (t, seconds) of valid 200s
        self.bad_5xx = []       # the first 50 unexpected 5xx / wrong answers
        self.unexpected = 0

    def add(self, kind, outcome, expected=True, detail=""):
        with self.lock:
            key = "%s %s" % (kind, outcome)
            self.outcomes[key] = self.outcomes.get(key, 0) + 1
            if not expected:
                self.unexpected += 1
                if len(self.bad_5xx) < 50:
                    self.bad_5xx.append({"t": round(time.time(), 1), "what": key, "detail": detail[:300]})


def valid_client(port, reqs, stats, stop, rate, seed, churning):
    rng = random.Random(seed)
    conn = None
    while not stop.is_set():
        kind, method, path, body, check = rng.choice(reqs)
        payload, headers = body(rng.choice(TEXTS)), {"Content-Type": "application/json"}
        if isinstance(payload, tuple):  # (bytes, raw header lines): the OIP binary extension
            payload, lines = payload
            headers = dict(h.split(": ", 1) for h in lines)
        else:
            payload = json.dumps(payload)
        t0 = time.time()
        try:
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            conn.request(method, path, payload, headers)
            resp = conn.getresponse()
            data = resp.read()
            dt = time.time() - t0
            if resp.status == 200:
                framed = resp.getheader("Inference-Header-Content-Length")
                ok = check(json.loads(data[:int(framed)] if framed else data))
                stats.add("valid:" + kind, "200" if ok else "200-wrong-shape", bool(ok), data[:200].decode("utf-8", "replace"))
                with stats.lock:
                    stats.latency.append((t0, dt))
            else:
                churn = kind == "oip_tabular" and resp.status in (404, 503) and churning.is_set()
                stats.add("valid:" + kind, str(resp.status), churn or (kind == "oip_tabular" and resp.status in (404, 503)),
                          data[:300].decode("utf-8", "replace"))
            if resp.getheader("Connection", "").lower() == "close":
                conn.close()
                conn = None
        except Exception as e:  # a dropped keep-alive connection is retried on a new one, and counted
            stats.add("valid:" + kind, "exception:" + type(e).__name__, False, str(e))
            if conn:
                conn.close()
            conn = None
        time.sleep(max(0.0, 1.0 / rate - (time.time() - t0)))


def hostile_client(port, stats, stop, seed, features):
    rng = random.Random(seed)
    cases = hostile.cases(features)
    while not stop.is_set():
        name, raw = rng.choice(cases)
        if callable(raw):
            raw = raw(rng)
        outcome = hostile.send_raw(port, raw, timeout=40)
        five = outcome.startswith("5") and outcome != "503"
        stats.add("hostile:" + name, outcome, not five and outcome != "refused-connect", "")
        time.sleep(0.05)


def churn(port, stats, stop, every, churning):
    while not stop.wait(every):
        for action in ("unload", "load"):
            churning.set()
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                c.request("POST", "/v2/repository/models/%s/%s" % (CHURNED, action), "{}", {"Content-Type": "application/json"})
                r = c.getresponse()
                r.read()
                stats.add("churn:" + action, str(r.status), r.status == 200)
                c.close()
            except Exception as e:
                stats.add("churn:" + action, "exception", False, str(e))
            time.sleep(2)
        time.sleep(1)
        churning.clear()


def slow_connections(port, stats, stop, count):
    """count sockets that each send one header byte every 3 s; reopened when the server closes them."""
    prefix = b"POST /predict HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 4000
    socks = {}
    while not stop.is_set():
        for i in range(count):
            if i not in socks:
                try:
                    s = socket.create_connection(("127.0.0.1", port), timeout=5)
                    s.setblocking(False)
                    socks[i] = [s, 0]
                except OSError as e:
                    stats.add("slow", "connect-failed:" + type(e).__name__, False, str(e))
                    continue
            s, at = socks[i]
            try:
                s.send(prefix[at:at + 1])
                socks[i][1] = (at + 1) % len(prefix)
            except OSError:
                stats.add("slow", "closed-by-server", True)
                s.close()
                del socks[i]
        stop.wait(3)
    for s, _ in socks.values():
        s.close()


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def percentiles(values):
    if not values:
        return {}
    v = sorted(values)
    pick = lambda q: round(1000 * v[min(len(v) - 1, int(q * len(v)))], 2)  # noqa: E731
    return {"n": len(v), "p50_ms": pick(0.50), "p95_ms": pick(0.95), "p99_ms": pick(0.99), "max_ms": round(1000 * v[-1], 2)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--glassbox", required=True)
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--rate", type=float, default=5, help="requests/s per valid client")
    ap.add_argument("--hostile-clients", type=int, default=2)
    ap.add_argument("--slow", type=int, default=150)
    ap.add_argument("--churn-seconds", type=float, default=30)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "soak.json"))
    a = ap.parse_args()
    repo = tempfile.mkdtemp(prefix="soak-repo-")
    features, forest = build_repository(repo)
    flags = ["--model-repository", repo, "--threads", str(a.threads), "--header-timeout-ms", "10000",
             "--body-timeout-ms", "10000", "--drain-timeout", "30"]
    srv = ServeProcess(a.glassbox, flags, name="soak", timeout=120)
    srv.wait_ready(120)
    stats, stop, churning = Stats(), threading.Event(), threading.Event()
    reqs = valid_requests(features)
    threads = [threading.Thread(target=valid_client, args=(srv.port, reqs, stats, stop, a.rate, 100 + i, churning))
               for i in range(a.clients)]
    threads += [threading.Thread(target=hostile_client, args=(srv.port, stats, stop, 200 + i, features))
                for i in range(a.hostile_clients)]
    threads += [threading.Thread(target=churn, args=(srv.port, stats, stop, a.churn_seconds, churning)),
                threading.Thread(target=slow_connections, args=(srv.port, stats, stop, a.slow))]
    t0 = time.time()
    for t in threads:
        t.start()
    rss = [{"minute": 0, "rss_mib": round(rss_kib(srv.proc.pid) / 1024, 1)}]
    minute = 0
    while time.time() - t0 < a.minutes * 60 and srv.proc.poll() is None:
        time.sleep(min(60, max(1, t0 + 60 * (minute + 1) - time.time())))
        minute += 1
        if srv.proc.poll() is None:
            rss.append({"minute": minute, "rss_mib": round(rss_kib(srv.proc.pid) / 1024, 1)})
            print("minute %d rss %.1f MiB, unexpected %d" % (minute, rss[-1]["rss_mib"], stats.unexpected), flush=True)
    stop.set()
    for t in threads:
        t.join(90)
    alive = srv.proc.poll() is None
    exit_code = None
    if alive:
        srv.signal(signal.SIGTERM)
        try:
            exit_code = srv.wait(60)
        except subprocess.TimeoutExpired:
            srv.kill()
            exit_code = "killed after 60 s"
    else:
        exit_code = "died during the soak: %s" % srv.proc.returncode
    windows = {}
    for t, dt in stats.latency:
        windows.setdefault(int((t - t0) // 600), []).append(dt)
    after_warmup = [r["rss_mib"] for r in rss if r["minute"] >= 5]
    report = {
        "minutes": round((time.time() - t0) / 60, 1), "glassbox": a.glassbox, "clients": a.clients, "rate": a.rate,
        "hostile_clients": a.hostile_clients, "slow_connections": a.slow, "churned_model": CHURNED, "tabular": forest,
        "outcomes": dict(sorted(stats.outcomes.items())), "unexpected": stats.unexpected,
        "unexpected_first": stats.bad_5xx, "rss_mib": rss,
        "rss_growth_after_minute_5": (round(max(after_warmup) / after_warmup[0] - 1, 4) if after_warmup else None),
        "valid_latency": percentiles([d for _, d in stats.latency]),
        "valid_latency_per_10_min": {str(k * 10): percentiles(v) for k, v in sorted(windows.items())},
        "exit_code_after_sigterm": exit_code, "load_average_end": os.getloadavg(),
    }
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(report, f, indent=1)
    print(json.dumps(report))
    shutil.rmtree(repo, ignore_errors=True)
    return 0 if stats.unexpected == 0 and exit_code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
