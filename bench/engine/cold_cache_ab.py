#!/usr/bin/env python3
"""Warm-cache cold start of several glassbox binaries, alternated (issue #17 §2).

Each round runs every binary once as a fresh `glassbox run MODEL --weights-cache DIR` process (the cache file must
already exist: one run with any binary of the same cache format writes it) and records the process's wall time,
CPU (user + sys from wait4), peak RSS, the first run's time and the load's time on the cache (`open_ms`).
Usage: bench/engine/cold_cache_ab.py --model M.onnx --input NAME=FILE.npy ... --cache DIR [--rounds 8] BIN [BIN ...]
The inputs vs_ort.py writes (build/vs_ort/<model>.b1x128/*.npy) fit. Prints medians and the load average.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time


def one(binary, a, out_dir):
    cmd = [binary, "run", a.model, "--threads", str(a.threads), "--output-dir", out_dir, "--weights-cache", a.cache]
    for spec in a.input:
        cmd += ["--input", spec]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = p.stdout.read().decode()
    _, status, ru = os.wait4(p.pid, 0)
    wall = (time.monotonic() - t0) * 1000
    if status != 0:
        raise SystemExit(f"{binary} failed (status {status})")
    j = json.loads(out[out.index("{"):])
    if j["weights_cache"]["state"] != "hit":
        raise SystemExit(f"{binary}: weights cache state {j['weights_cache']['state']}, expected hit (write the file first)")
    return {"wall": wall, "cpu": (ru.ru_utime + ru.ru_stime) * 1000, "rss": ru.ru_maxrss / 1024,
            "run": j["time_ms"], "open": j["weights_cache"]["open_ms"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--input", action="append", default=[])
    ap.add_argument("--cache", required=True)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("binaries", nargs="+")
    a = ap.parse_args()
    print("load average before:", " ".join(open("/proc/loadavg").read().split()[:3]))
    res = {b: [] for b in a.binaries}
    with tempfile.TemporaryDirectory() as out_dir:
        for _ in range(a.rounds):
            for b in a.binaries:
                res[b].append(one(b, a, out_dir))
    for b, rows in res.items():
        med = {k: statistics.median(r[k] for r in rows) for k in ("wall", "cpu", "run", "open")}
        print(f"{b}: wall {med['wall']:.0f} ms, cpu {med['cpu']:.0f} ms, first run {med['run']:.0f} ms, "
              f"open_ms {med['open']:.0f}, peak RSS max {max(r['rss'] for r in rows):.0f} MiB (medians of {a.rounds}; "
              f"walls {[round(r['wall']) for r in rows]})")
    print("load average after:", " ".join(open("/proc/loadavg").read().split()[:3]))


if __name__ == "__main__":
    main()
