#!/usr/bin/python3
"""glassbox vs onnxruntime-node on transformer encoders, same run, same model files, same inputs (issue #5).

Called by bench/vs_ort.sh (which builds nothing: it needs a built `glassbox` and the exported models).
For every model and case it runs ORT (bench/engine/ort_bench.js) and then `glassbox bench --json`
interleaved, compares the outputs, prints the ratios with the inputs used and appends one table to
docs/benchmarks-history.md (with date, commit, load average). Cases:
  b1x128   batch 1 x 128 tokens, all real: latency p50/p95, peak RSS, outputs compared (goal 1, 4)
  var8     batch 8, lengths uniform in 16..128 (fixed seed), padded to the longest with attention_mask 0:
           sequences/s; outputs compared on real tokens only (goal 2). glassbox runs it twice: with
           `--unpad-mask attention_mask` (Session::run_unpadded: each sequence on its real length; the goal's
           figure) and padded like ORT (column "padded")
  cold     process start -> first result (separate processes, median of --cold-runs; goal 3)
Ratios are glassbox / ORT for times and memory (lower is better); the throughput ratio is glassbox
sequences/s over ORT's (higher is better).
--precision bf16 runs glassbox with `--precision bf16` against ORT in fp32 (issue #17): the goals become
p50 <= 0.5x, var8 throughput >= 3x, and the error column is then the accuracy cost (<= 2e-2);
--precision int8-dynamic likewise, with p50 <= 0.3x.
--cases / --cold-runs 0 shorten a run on a loaded machine (the table says which cases ran).
--weights-cache DIR (issue #17) adds to every cold-start round two glassbox runs with the packed-weights cache:
"cold cache" (DIR emptied first: packs, then writes the file before the process exits) and "warm cache" (maps
the file the previous run wrote), each with the process's peak RSS (wait4), and records a cold-start table.
"""
import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
MODELS = {  # name: (vocab, has token_type_ids)
    "bert_base_op14": (30522, True),
    "distilbert_base_op14": (30522, False),
    "minilm_l6_op14": (30522, True),
    "bert_base_cls_op14": (30522, True),  # BERT-base with a 2-label head (cold start with the weights cache, issue #17)
}
DEFAULT_MODELS = ["bert_base_op14", "distilbert_base_op14", "minilm_l6_op14"]
GOALS = {"p50": 0.75, "p95": 0.80, "throughput": 1.6, "cold": 0.10, "rss": 0.60, "rel_err": 1e-4}
GOALS_BF16 = {"p50": 0.5, "p95": 0.80, "throughput": 3.0, "cold": 0.10, "rss": 0.60, "rel_err": 2e-2}
# int8-dynamic (issue #17 goal: p50 <= 0.3x ORT fp32 "with the accuracy report"): the error column's goal is
# `glassbox accuracy`'s declared max relative error (2e-2), as for bf16.
GOALS_INT8 = {"p50": 0.3, "p95": 0.80, "throughput": 3.0, "cold": 0.10, "rss": 0.60, "rel_err": 2e-2}


def write_inputs(d, name, vocab, token_types, batch, lengths, seq, seed):
    rng = np.random.default_rng(seed)
    ids = np.zeros((batch, seq), np.int64)
    mask = np.zeros((batch, seq), np.int64)
    for b, n in enumerate(lengths):
        ids[b, :n] = rng.integers(1, vocab, n)
        mask[b, :n] = 1
    files = {"input_ids": ids, "attention_mask": mask}
    if token_types:
        files["token_type_ids"] = np.zeros((batch, seq), np.int64)
    args = []
    for k, v in files.items():
        p = os.path.join(d, f"{name}.{k}.npy")
        np.save(p, v)
        args.append(f"{k}={p}")
    return args, mask


def run_json(cmd):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = (time.perf_counter() - t0) * 1e3
    if p.returncode != 0:
        sys.exit(f"command failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-3000:]}")
    out = p.stdout.strip()
    return json.loads(out[out.index("{"):]), wall


def run_json_rss(cmd):
    """run_json, plus the child's peak RSS in MiB (ru_maxrss of exactly this process, from wait4)."""
    import tempfile
    with tempfile.TemporaryFile(mode="w+") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
        out = p.stdout.read()
        _, status, ru = os.wait4(p.pid, 0)  # reap it here (not Popen) to get its own rusage
        wall = (time.perf_counter() - t0) * 1e3
        p.returncode = os.waitstatus_to_exitcode(status)
        p.stdout.close()
        if p.returncode != 0:
            err.seek(0)
            sys.exit(f"command failed ({p.returncode}): {' '.join(cmd)}\n{err.read()[-3000:]}")
    out = out.strip()
    return json.loads(out[out.index("{"):]), wall, ru.ru_maxrss / 1024


def compare(gb_dir, ort_dir, mask):
    """Max |gb - ort| / max |ort| per output (normwise relative), over real tokens for [batch, seq, ...] outputs."""
    worst = 0.0
    i = 0
    while os.path.exists(os.path.join(ort_dir, f"output_{i}.npy")):
        a = np.load(os.path.join(gb_dir, f"output_{i}.npy")).astype(np.float64)
        b = np.load(os.path.join(ort_dir, f"output_{i}.npy")).astype(np.float64)
        if a.shape != b.shape:
            return float("inf")
        if a.ndim >= 2 and a.shape[:2] == mask.shape:
            keep = mask.astype(bool)
            a, b = a[keep], b[keep]
        scale = max(np.abs(b).max(), 1e-30)
        worst = max(worst, float(np.abs(a - b).max() / scale))
        i += 1
    return worst


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--glassbox", required=True, help="the glassbox binary")
    ap.add_argument("--models", nargs="*", default=DEFAULT_MODELS, choices=list(MODELS))
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "tests", "data", "generated"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "vs_ort"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=20, help="timed runs, batch 1 (var8 uses half)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--cold-runs", type=int, default=3)
    ap.add_argument("--glassbox-args", default="", help="extra flags for `glassbox bench`, e.g. '--opt-level 0'")
    ap.add_argument("--unpad-args", default="", help="extra flags for the unpadded var8 run, e.g. '--unpad-serial'")
    ap.add_argument("--no-record", action="store_true", help="do not append to docs/benchmarks-history.md")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "int8-dynamic"],
                    help="glassbox's SessionOptions::precision (ORT always runs the fp32 model as exported)")
    ap.add_argument("--cases", nargs="*", default=["b1x128", "var8"], choices=["b1x128", "var8"])
    ap.add_argument("--weights-cache", default="",
                    help="also time cold starts with glassbox's packed-weights cache in this directory (emptied: cold "
                         "cache; then reused: warm cache)")
    a = ap.parse_args()
    if a.precision != "fp32":
        a.glassbox_args = (a.glassbox_args + " --precision " + a.precision).strip()
        GOALS.update(GOALS_BF16 if a.precision == "bf16" else GOALS_INT8)
    os.makedirs(a.work, exist_ok=True)
    node_script = os.path.join(ROOT, "bench", "engine", "ort_bench.js")
    commit = subprocess.run(["git", "-C", ROOT, "log", "-1", "--format=%h %s"], capture_output=True, text=True).stdout.strip()
    load_before = os.getloadavg()
    started = time.time()
    rows = []
    rng = np.random.default_rng(20261202)
    var_lengths = sorted(rng.integers(16, 129, 8).tolist(), reverse=True)
    for name in a.models:
        vocab, tt = MODELS[name]
        model = os.path.join(a.models_dir, name + ".onnx")
        row = {"model": name}
        for case, batch, lengths, repeat in (("b1x128", 1, [128], a.repeat), ("var8", 8, var_lengths, max(3, a.repeat // 2))):
            if case not in a.cases:
                continue
            seq = max(lengths)
            d = os.path.join(a.work, f"{name}.{case}")
            os.makedirs(d, exist_ok=True)
            inputs, mask = write_inputs(d, case, vocab, tt, batch, lengths, seq, seed=7)
            ort_cmd = ["node", node_script, model, "--threads", str(a.threads), "--repeat", str(repeat),
                       "--warmup", str(a.warmup), "--output-dir", os.path.join(d, "ort")]
            gb_cmd = [a.glassbox, "bench", model, "--json", "--threads", str(a.threads), "--repeat", str(repeat),
                      "--warmup", str(a.warmup), "--output-dir", os.path.join(d, "glassbox")] + a.glassbox_args.split()
            for spec in inputs:
                ort_cmd += ["--input", spec]
                gb_cmd += ["--input", spec]
            if case == "var8":
                gb_cmd += ["--unpad-mask", "attention_mask"] + a.unpad_args.split()
            ort, _ = run_json(ort_cmd)
            gb, _ = run_json(gb_cmd)
            err = compare(os.path.join(d, "glassbox"), os.path.join(d, "ort"), mask)
            row[case] = {"ort": ort, "gb": gb, "rel_err": err, "lengths": lengths, "inputs": inputs}
            if case == "var8":  # the padded figure: glassbox computing the padded batch like ORT
                pad_cmd = [os.path.join(d, "glassbox_padded") if x == os.path.join(d, "glassbox") else x
                           for x in gb_cmd[:gb_cmd.index("--unpad-mask")]]
                row[case]["gb_padded"], _ = run_json(pad_cmd)
                row[case]["rel_err_padded"] = compare(os.path.join(d, "glassbox_padded"), os.path.join(d, "ort"), mask)
        # Cold start: fresh processes, load + one run (b1x128 inputs), timed from outside, median.
        b1 = row["b1x128"]["inputs"] if "b1x128" in row else []
        ort_cold, gb_cold = [], []
        if not b1 or a.cold_runs <= 0:
            row["cold"] = None
            rows.append(row)
            print_row(row)
            continue
        cache_runs = {"ort": [], "gb": [], "gb_cold_cache": [], "gb_warm_cache": []}  # (wall ms, peak RSS MiB)
        for _ in range(a.cold_runs):
            cmd = ["node", node_script, model, "--threads", str(a.threads), "--cold"]
            for spec in b1:
                cmd += ["--input", spec]
            _, ms, rss = run_json_rss(cmd)
            ort_cold.append(ms)
            cache_runs["ort"].append((ms, rss))
            cmd = [a.glassbox, "run", model, "--threads", str(a.threads), "--output-dir",
                   os.path.join(a.work, f"{name}.cold")] + [x for spec in b1 for x in ("--input", spec)]
            cmd += [x for x in a.glassbox_args.split() if x]
            _, ms, rss = run_json_rss(cmd)
            gb_cold.append(ms)
            cache_runs["gb"].append((ms, rss))
            if a.weights_cache:
                shutil.rmtree(a.weights_cache, ignore_errors=True)
                for kind in ("gb_cold_cache", "gb_warm_cache"):
                    j, ms, rss = run_json_rss(cmd + ["--weights-cache", a.weights_cache])
                    want = "hit" if kind == "gb_warm_cache" else "miss"
                    if j["weights_cache"]["state"] != want:
                        sys.exit(f"{kind}: weights cache state {j['weights_cache']['state']}, expected {want}: "
                                 f"{j['weights_cache']['reason']}")
                    cache_runs[kind].append((ms, rss))
        row["cold"] = {"ort_ms": statistics.median(ort_cold), "gb_ms": statistics.median(gb_cold)}
        if a.weights_cache:
            row["cold_cache"] = {k: (statistics.median(x[0] for x in v), max(x[1] for x in v)) for k, v in cache_runs.items()}
        rows.append(row)
        print_row(row)
    load_after = os.getloadavg()
    table = render(rows, a, commit, load_before, load_after, time.time() - started, var_lengths)
    if a.weights_cache:
        table += render_cold_cache(rows, a)
    print("\n" + table)
    if not a.no_record:
        with open(os.path.join(ROOT, "docs", "benchmarks-history.md"), "a") as f:
            f.write("\n" + table)
        print("appended to docs/benchmarks-history.md")


def print_row(r):
    if "var8" not in r or r["cold"] is None or "b1x128" not in r:
        for case in ("b1x128", "var8"):
            if case in r:
                o, g = r[case]["ort"]["latency_ms"], r[case]["gb"]["latency_ms"]
                print(f"{r['model']}: {case} p50 {g['p50']:.1f} vs ORT {o['p50']:.1f} ms ({g['p50'] / o['p50']:.2f}x), "
                      f"p95 {g['p95'] / o['p95']:.2f}x, rel err {r[case]['rel_err']:.1e}", flush=True)
        return
    b1, v8, c = r["b1x128"], r["var8"], r["cold"]
    o, g = b1["ort"], b1["gb"]
    print(f"{r['model']}: b1x128 p50 {g['latency_ms']['p50']:.1f} vs ORT {o['latency_ms']['p50']:.1f} ms "
          f"({g['latency_ms']['p50'] / o['latency_ms']['p50']:.2f}x), p95 {g['latency_ms']['p95'] / o['latency_ms']['p95']:.2f}x, "
          f"rel err {b1['rel_err']:.1e}; var8 {v8['ort']['latency_ms']['p50'] / v8['gb']['latency_ms']['p50']:.2f}x throughput "
          f"(padded {v8['ort']['latency_ms']['p50'] / v8['gb_padded']['latency_ms']['p50']:.2f}x); "
          f"cold {c['gb_ms']:.0f} vs {c['ort_ms']:.0f} ms ({c['gb_ms'] / c['ort_ms']:.2f}x); "
          f"RSS {g['peak_rss_bytes'] / 2**20:.0f} vs {o['peak_rss_bytes'] / 2**20:.0f} MiB", flush=True)


def mark(ok):
    return "✓" if ok else "✗"


def render(rows, a, commit, la0, la1, secs, var_lengths):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"### vs ORT — {now}, commit `{commit}`" + (f", glassbox precision {a.precision} vs ORT fp32" if a.precision != "fp32" else ""),
             "",
             f"Load average before/after: {la0[0]:.2f} / {la1[0]:.2f} (1 min); {os.cpu_count()} CPUs; {secs:.0f} s. "
             f"Threads {a.threads} each; batch-1 runs: {a.repeat} timed after {a.warmup} warm-up; var8: {max(3, a.repeat // 2)}. "
             f"glassbox extra flags: `{a.glassbox_args or '(none)'}`; var8 runs "
             f"`{('--unpad-mask attention_mask ' + a.unpad_args).strip()}` (each sequence on its real length); "
             f"\"padded\": the same batch computed padded, like ORT.",
             f"Inputs: ids uniform in [1, vocab) (numpy seed 7), token_type_ids 0; b1x128 all real; var8 lengths "
             f"{var_lengths} padded to {max(var_lengths)}. Ratios are glassbox / ORT (throughput: glassbox / ORT). "
             f"Error: max |gb − ORT| / max |ORT| over real tokens.",
             "",
             "| model | p50 ms gb / ORT | p50 ratio (≤0.75) | p95 ratio (≤0.8) | rel err (≤1e-4) | var8 seq/s gb / ORT | throughput ratio (≥1.6) | var8 rel err | var8 padded: seq/s, ratio | cold ms gb / ORT | cold ratio (≤0.1) | peak RSS MiB gb / ORT | RSS ratio (≤0.6) | arena MiB |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    if a.cases != ["b1x128", "var8"] or a.cold_runs <= 0:
        return render_short(rows, a, lines[:6])
    for r in rows:
        b1, v8, c = r["b1x128"], r["var8"], r["cold"]
        go, gg = b1["ort"]["latency_ms"], b1["gb"]["latency_ms"]
        p50, p95 = gg["p50"] / go["p50"], gg["p95"] / go["p95"]
        tv_o, tv_g = 8e3 / v8["ort"]["latency_ms"]["p50"], 8e3 / v8["gb"]["latency_ms"]["p50"]
        tv_p = 8e3 / v8["gb_padded"]["latency_ms"]["p50"]
        cold = c["gb_ms"] / c["ort_ms"]
        rss_g, rss_o = b1["gb"]["peak_rss_bytes"] / 2**20, b1["ort"]["peak_rss_bytes"] / 2**20
        lines.append(
            f"| {r['model']} | {gg['p50']:.1f} / {go['p50']:.1f} | {p50:.2f} {mark(p50 <= GOALS['p50'])} | "
            f"{p95:.2f} {mark(p95 <= GOALS['p95'])} | {b1['rel_err']:.1e} {mark(b1['rel_err'] <= GOALS['rel_err'])} | "
            f"{tv_g:.1f} / {tv_o:.1f} | {tv_g / tv_o:.2f} {mark(tv_g / tv_o >= GOALS['throughput'])} | "
            f"{v8['rel_err']:.1e} {mark(v8['rel_err'] <= GOALS['rel_err'])} | {tv_p:.1f}, {tv_p / tv_o:.2f} | {c['gb_ms']:.0f} / {c['ort_ms']:.0f} | "
            f"{cold:.2f} {mark(cold <= GOALS['cold'])} | {rss_g:.0f} / {rss_o:.0f} | {rss_g / rss_o:.2f} "
            f"{mark(rss_g / rss_o <= GOALS['rss'])} | {b1['gb']['arena_bytes'] / 2**20:.1f} |")
    lines.append("")
    lines.append("glassbox profile, b1x128 (top op types, ms per run):")
    lines.append("")
    for r in rows:
        prof = ", ".join(f"{p['op_type']} {p['ms']:.1f}" for p in r["b1x128"]["gb"].get("profile_top10", [])[:6])
        lines.append(f"- {r['model']}: {prof}")
    return "\n".join(lines) + "\n"


def render_cold_cache(rows, a):
    """Cold start (process start -> first result -> exit) with the packed-weights cache, same rounds as "cold"."""
    lines = ["", f"Cold start with the packed-weights cache (`glassbox run ... --weights-cache DIR`; median of "
                 f"{a.cold_runs} interleaved rounds: ORT, glassbox without cache, with an emptied cache (packs and "
                 f"writes the file before exiting), with the file the previous run wrote; peak RSS = max over rounds, "
                 f"ru_maxrss of each process from wait4):", "",
             "| model | ORT ms | gb no cache ms (ratio) | gb cold cache ms (ratio) | gb warm cache ms (ratio, goal ≤ 0.1) | "
             "peak RSS MiB ORT / gb no cache / cold cache / warm cache | warm-cache RSS ratio (≤ 0.6) |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        c = r.get("cold_cache")
        if not c:
            continue
        o = c["ort"][0]
        w = c["gb_warm_cache"][0] / o
        rss = c["gb_warm_cache"][1] / c["ort"][1]
        lines.append(f"| {r['model']} | {o:.0f} | {c['gb'][0]:.0f} ({c['gb'][0] / o:.2f}) | "
                     f"{c['gb_cold_cache'][0]:.0f} ({c['gb_cold_cache'][0] / o:.2f}) | {c['gb_warm_cache'][0]:.0f} "
                     f"({w:.2f} {mark(w <= GOALS['cold'])}) | {c['ort'][1]:.0f} / {c['gb'][1]:.0f} / "
                     f"{c['gb_cold_cache'][1]:.0f} / {c['gb_warm_cache'][1]:.0f} | {rss:.2f} {mark(rss <= GOALS['rss'])} |")
    return "\n".join(lines) + "\n"


def render_short(rows, a, head):
    """The table of a shortened run (--cases, --cold-runs 0): latency and error per case that ran."""
    lines = head[:5] + [f"Cases run: {' '.join(a.cases)}; cold start {'not measured' if a.cold_runs <= 0 else 'measured'}.", "",
                        "| model | case | p50 ms gb / ORT | p50 ratio | p95 ratio | rel err vs ORT | peak RSS MiB gb / ORT |",
                        "|---|---|---|---|---|---|---|"]
    for r in rows:
        for case in a.cases:
            if case not in r:
                continue
            o, g = r[case]["ort"], r[case]["gb"]
            p50 = g["latency_ms"]["p50"] / o["latency_ms"]["p50"]
            lines.append(f"| {r['model']} | {case} | {g['latency_ms']['p50']:.1f} / {o['latency_ms']['p50']:.1f} | "
                         f"{p50:.2f} {mark(case != 'b1x128' or p50 <= GOALS['p50'])} | "
                         f"{g['latency_ms']['p95'] / o['latency_ms']['p95']:.2f} | "
                         f"{r[case]['rel_err']:.1e} {mark(r[case]['rel_err'] <= GOALS['rel_err'])} | "
                         f"{g['peak_rss_bytes'] / 2**20:.0f} / {o['peak_rss_bytes'] / 2**20:.0f} |")
    lines.append("")
    lines.append("glassbox profile (top op types, ms per run):")
    lines.append("")
    for r in rows:
        for case in a.cases:
            if case in r:
                prof = ", ".join(f"{p['op_type']} {p['ms']:.1f}" for p in r[case]["gb"].get("profile_top10", [])[:6])
                lines.append(f"- {r['model']} {case}: {prof}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
