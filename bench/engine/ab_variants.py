#!/usr/bin/env python3
"""Interleaved A/B of glassbox configurations against onnxruntime-node, batch 1 x 128 (issue #17 section 4).

One round = ORT once, then every configuration once (each `glassbox bench --json` / `ort_bench.js` process
does its own warm-up and --repeat timed runs); --rounds rounds in turn, so every configuration sees the same
machine load. Prints per round the p50 of each, then per configuration the median p50 over rounds and its
ratio to ORT's median p50, and the output error vs ORT (max |gb - ORT| / max |ORT|) of its last round.
A configuration is `LABEL=BINARY[:extra flags]`, e.g.
  bench/engine/ab_variants.py --models minilm_l6_op14 --rounds 5 \
    'new=build-rel/src/cli/glassbox' \
    'no-attention=build-rel/src/cli/glassbox:--disable-pass attention_fusion' \
    'main=/tmp/glassbox-main'
Inputs and models as bench/vs_ort.sh (run that once first: it exports the models).
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_ort import MODELS, ROOT, compare, run_json, write_inputs  # noqa: E402


def parse_configs(specs):
    """[(label, binary, [extra flags])] from 'LABEL=BINARY[:extra glassbox bench flags]' strings."""
    configs = []
    for c in specs:
        label, _, rest = c.partition("=")
        binary, _, flags = rest.partition(":")
        configs.append((label, binary, flags.split()))
    return configs


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("configs", nargs="+", help="LABEL=BINARY[:extra glassbox bench flags]")
    p.add_argument("--models", nargs="*", default=["minilm_l6_op14", "distilbert_base_op14", "bert_base_op14"])
    p.add_argument("--models-dir", default=os.path.join(ROOT, "tests", "data", "generated"))
    p.add_argument("--work", default="/tmp/glassbox_ab_variants")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    configs = parse_configs(a.configs)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for name in a.models:
        vocab, tt = MODELS[name]
        model = os.path.join(a.models_dir, name + ".onnx")
        d = os.path.join(a.work, name)
        os.makedirs(d, exist_ok=True)
        inputs, mask = write_inputs(d, "b1x128", vocab, tt, 1, [128], 128, seed=7)
        common = ["--threads", str(a.threads), "--repeat", str(a.repeat), "--warmup", str(a.warmup)]
        ins = [x for spec in inputs for x in ("--input", spec)]
        p50 = {"ORT": []}
        p50.update({label: [] for label, _, _ in configs})
        err = {}
        for r in range(a.rounds):
            ort, _ = run_json(["node", os.path.join(ROOT, "bench", "engine", "ort_bench.js"), model] + common + ins +
                              ["--output-dir", os.path.join(d, "ort")])
            p50["ORT"].append(ort["latency_ms"]["p50"])
            for label, binary, flags in configs:
                out = os.path.join(d, label)
                gb, _ = run_json([binary, "bench", model, "--json", "--output-dir", out] + common + ins + flags)
                p50[label].append(gb["latency_ms"]["p50"])
                err[label] = compare(out, os.path.join(d, "ort"), mask)
            print(f"{name} round {r + 1}: " + ", ".join(f"{k} {v[-1]:.2f}" for k, v in p50.items()), flush=True)
        ort_med = statistics.median(p50["ORT"])
        print(f"{name}: ORT median p50 {ort_med:.2f} ms")
        for label, _, _ in configs:
            med = statistics.median(p50[label])
            print(f"{name}: {label:>16} median p50 {med:.2f} ms = {med / ort_med:.3f}x ORT "
                  f"(rounds {' '.join(f'{x / o:.3f}' for x, o in zip(p50[label], p50['ORT']))}), err {err[label]:.1e}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
