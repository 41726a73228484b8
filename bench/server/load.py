#!/usr/bin/env python3
"""Closed-loop load generator for the serving benchmark (loopback only).

Each of C clients keeps one keep-alive connection and sends POST /predict {"inputs": text} back
to back for D seconds; texts are 8-200 words cut from the English, German and French
texts of tests/data/tokenizer/corpus (seeded; whitespace-separated languages, so a "word" is a word and
200 words stay under BERT's 512 positions).
Reports throughput, p50/p95/p99 of admitted requests, errors and 429s, and the server's peak RSS
(VmHWM of PID) as one JSON line.

Usage: load.py --port P --pid PID --clients C --seconds D [--seed S] [--honor-retry-after]
"""
import argparse
import http.client
import json
import os
import random
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def texts(seed, n=2000):
    words = []
    corpus = os.path.join(ROOT, "tests", "data", "tokenizer", "corpus")
    for f in ("en.txt", "de.txt", "fr.txt"):
        with open(os.path.join(corpus, f), encoding="utf-8") as fh:
            words += fh.read().split()
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        k = rng.randint(8, 200)
        start = rng.randrange(0, len(words) - k)
        out.append(" ".join(words[start:start + k]))
    return out


def proc_status_bytes(pid, key):
    """A memory line of /proc/PID/status (VmHWM = peak RSS, VmRSS = now) in bytes."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def run(port, pid, clients, seconds, seed, honor_retry):
    pool = texts(seed)
    lat, errors, refused = [], [0], [0]
    error_kinds = {}
    lock = threading.Lock()
    stop_at = time.time() + seconds
    rss_samples = []

    def client(i):
        rng = random.Random(seed * 1000 + i)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while time.time() < stop_at:
            body = json.dumps({"inputs": rng.choice(pool)})
            t0 = time.perf_counter()
            try:
                conn.request("POST", "/predict", body=body, headers={"Content-Type": "application/json"})
                r = conn.getresponse()
                r.read()
                dt = time.perf_counter() - t0
                with lock:
                    if r.status == 200:
                        lat.append(dt)
                    elif r.status == 429:
                        refused[0] += 1
                    else:
                        errors[0] += 1
                        error_kinds[str(r.status)] = error_kinds.get(str(r.status), 0) + 1
                if r.status == 429 and honor_retry:
                    time.sleep(min(float(r.getheader("Retry-After", "1")), max(0.0, stop_at - time.time())))
                if r.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            except Exception as e:  # noqa: BLE001 - a reset counts as an error
                with lock:
                    errors[0] += 1
                    error_kinds[type(e).__name__] = error_kinds.get(type(e).__name__, 0) + 1
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        conn.close()

    def sample():
        while time.time() < stop_at:
            rss_samples.append(proc_status_bytes(pid, "VmRSS"))
            time.sleep(0.5)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)] + [threading.Thread(target=sample)]
    t0 = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 180)
    wall = time.time() - t0
    lat.sort()
    q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] * 1000 if lat else float("nan")  # noqa: E731
    return {"clients": clients, "seconds": round(wall, 1), "ok": len(lat), "rps": round(len(lat) / wall, 2),
            "p50_ms": round(q(0.50), 1), "p95_ms": round(q(0.95), 1), "p99_ms": round(q(0.99), 1),
            "errors": errors[0], "error_kinds": error_kinds, "refused_429": refused[0], "peak_rss_mb": round(proc_status_bytes(pid, "VmHWM") / 2**20, 1),
            "rss_first_mb": round(rss_samples[0] / 2**20, 1) if rss_samples else None,
            "rss_last_mb": round(rss_samples[-1] / 2**20, 1) if rss_samples else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--clients", type=int, required=True)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--honor-retry-after", action="store_true")
    a = ap.parse_args()
    print(json.dumps(run(a.port, a.pid, a.clients, a.seconds, a.seed, a.honor_retry_after)))


if __name__ == "__main__":
    main()
