#!/usr/bin/env python3
"""CPU per run of glassbox configurations, normalised by oneDNN's JIT samples (issue #17 section 4).

On a loaded machine wall-clock ratios are noise; CPU samples move far less. For each model and precision, each
configuration runs `glassbox bench MODEL --repeat R` under `perf record -F 2000 -D 3000` (configurations interleaved,
--rounds times). oneDNN's JIT code (the GEMM arithmetic, identical work in every configuration that runs the same
kernels) normalises the runs: CPU per run relative to the first configuration = (other / JIT + 1) ratio. Printed per
configuration: JIT and other samples (summed over rounds), the other samples by DSO, and that ratio.
A configuration is `LABEL=BINARY[:extra flags]`, as bench/engine/ab_variants.py:
  bench/engine/perf_cpu_ab.py 'main=/tmp/glassbox-main' 'branch=build-rel/src/cli/glassbox:--pool-wait sleep' \
    --models minilm_l6_op14 bert_base_op14 --precisions fp32 bf16 int8-dynamic --threads 1
"""
import argparse
import collections
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_ort import MODELS, ROOT, write_inputs  # noqa: E402
from ab_variants import parse_configs  # noqa: E402


def dso_samples(data):
    out = subprocess.run(["perf", "report", "-i", data, "--sort", "dso", "-n", "--stdio"], capture_output=True,
                         text=True).stdout
    counts = collections.Counter()
    for line in out.splitlines():
        m = re.match(r"\s*[\d.]+%\s+(\d+)\s+(.*\S)\s*$", line)
        if m:
            name = m.group(2)
            counts["[JIT]" if name.startswith("[JIT]") else os.path.basename(name)] += int(m.group(1))
    return counts


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("configs", nargs="+", help="LABEL=BINARY[:extra glassbox bench flags]")
    p.add_argument("--models", nargs="*", default=["minilm_l6_op14", "bert_base_op14"])
    p.add_argument("--precisions", nargs="*", default=["fp32"])
    p.add_argument("--models-dir", default=os.path.join(ROOT, "tests", "data", "generated"))
    p.add_argument("--work", default="/tmp/glassbox_perf_cpu_ab")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=40)
    p.add_argument("--rounds", type=int, default=2)
    a = p.parse_args()
    configs = parse_configs(a.configs)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for name in a.models:
        vocab, tt = MODELS[name]
        d = os.path.join(a.work, name)
        os.makedirs(d, exist_ok=True)
        inputs, _ = write_inputs(d, "b1x128", vocab, tt, 1, [128], 128, seed=7)
        for prec in a.precisions:
            totals = {label: collections.Counter() for label, _, _ in configs}
            for r in range(a.rounds):
                for label, binary, flags in configs:
                    data = os.path.join(d, f"{label}.{prec}.{r}.perf")
                    cmd = ["perf", "record", "-q", "-F", "2000", "-D", "3000", "-o", data, binary, "bench",
                           os.path.join(a.models_dir, name + ".onnx"), "--threads", str(a.threads), "--repeat",
                           str(a.repeat), "--warmup", "3", "--precision", prec]
                    cmd += [x for spec in inputs for x in ("--input", spec)] + flags
                    subprocess.run(cmd, check=True, capture_output=True)
                    totals[label] += dso_samples(data)
            base = None
            print(f"\n{name} {prec} ({a.threads} threads, {a.rounds} rounds x {a.repeat} runs), "
                  f"load {os.getloadavg()[0]:.2f}")
            for label, _, _ in configs:
                c = totals[label]
                jit = c["[JIT]"]
                other = sum(v for k, v in c.items() if k != "[JIT]")
                rel = other / jit + 1 if jit else float("nan")
                base = base or rel
                top = ", ".join(f"{k} {v}" for k, v in c.most_common() if k != "[JIT]")
                print(f"  {label:12s} JIT {jit:7d}  other {other:7d}  CPU/run vs first {rel / base:.3f}  ({top})")


if __name__ == "__main__":
    main()
