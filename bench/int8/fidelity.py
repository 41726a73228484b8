#!/usr/bin/python3
"""int8 fidelity (issue 32 §1): how far an ORT-quantized model's logits depart from the fp32 model's, in
glassbox and in onnxruntime-node, on the same file, per text at batch 1.

MODEL_DIR is a trained classifier directory (scripts/train_classifier.py: a BERT-base-shaped model whose logits
mean something). Its model.onnx is quantized the way onnxruntime's quantize_dynamic writes it
(scripts/quantize_model.py --mode dynamic: DynamicQuantizeLinear + MatMulInteger + Cast + Mul, per tensor).
Texts: MODEL_DIR/test.jsonl (held out), tokenized once by glassbox's tokenizer (identical to HF tokenizers,
tests/tokenizer) and fed to both engines as the same ids. Reference: ORT fp32 at opt level 'all'.
For each engine x setting: max and mean over texts of max |logit - reference|, top-1 agreement, and the ratio of
glassbox's error to ORT's (the issue's goal: <= 1.5x on >= 200 texts).

Usage: PYTHONPATH=BUILD/python bench/int8/fidelity.py MODEL_DIR [--texts 400] [--threads 2] [--per-channel]
       (an ASan build needs LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import glassbox

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def stats(rows, ref):
    err = [float(np.abs(np.asarray(r, np.float64) - np.asarray(f, np.float64)).max()) for r, f in zip(rows, ref)]
    agree = sum(int(np.argmax(r) == np.argmax(f)) for r, f in zip(rows, ref))
    return {"max": max(err), "mean": float(np.mean(err)), "p99": float(np.quantile(err, 0.99)), "top1_agree": agree}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir")
    ap.add_argument("--texts", type=int, default=400)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--per-channel", action="store_true")
    ap.add_argument("--glassbox-runs", default="int8-opt2,int8-opt0,fp32-opt2",
                    help="which glassbox settings to run (int8-opt2 is the one the goal compares)")
    a = ap.parse_args()
    fp32 = os.path.join(a.model_dir, "model.onnx")
    q = os.path.join(a.model_dir, "model_dynamic_int8%s.onnx" % ("_per_channel" if a.per_channel else ""))
    if not os.path.exists(q) or os.path.getmtime(q) < os.path.getmtime(fp32):
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "quantize_model.py"), fp32, q, "--mode", "dynamic"]
                       + (["--per-channel"] if a.per_channel else []), check=True)
    with open(os.path.join(a.model_dir, "test.jsonl")) as f:
        texts = [json.loads(line)["text"] for line in f][:a.texts]
    tok = glassbox.Tokenizer.from_file(os.path.join(a.model_dir, "tokenizer.json"))
    feeds = []
    for t in texts:
        e = tok.encode(t)
        feeds.append({"input_ids": list(e.ids), "attention_mask": list(e.attention_mask), "token_type_ids": list(e.type_ids)})
    work = tempfile.mkdtemp(prefix="int8-fidelity-")
    ids_file, ort_file = os.path.join(work, "ids.json"), os.path.join(work, "ort.json")
    with open(ids_file, "w") as f:
        json.dump(feeds, f)
    specs = [fp32 + ":all", q + ":all", q + ":disabled"]
    subprocess.run(["node", os.path.join(ROOT, "bench", "int8", "ort_logits.js"), ids_file, ort_file] + specs, check=True)
    with open(ort_file) as f:
        ort = json.load(f)
    ref = ort[fp32 + ":all"]
    results = {"ort int8 (opt all)": stats(ort[q + ":all"], ref), "ort int8 (opt disabled)": stats(ort[q + ":disabled"], ref)}
    settings = {"fp32-opt2": ("glassbox fp32 (opt 2)", fp32, 2), "int8-opt2": ("glassbox int8 (opt 2)", q, 2),
                "int8-opt0": ("glassbox int8 (opt 0)", q, 0)}
    for label, path, level in (settings[k] for k in a.glassbox_runs.split(",")):
        print(label, "...", file=sys.stderr, flush=True)
        s = glassbox.Session(path, threads=a.threads, opt_level=level)
        names = [i.name for i in s.inputs]
        rows = []
        for fd in feeds:
            out = s.run({n: np.asarray([fd[n]], np.int64) for n in names})
            rows.append(next(iter(out.values())).reshape(-1).tolist())
        results[label] = stats(rows, ref)
    report = {"model_dir": a.model_dir, "texts": len(texts), "per_channel": a.per_channel, "reference": "ORT fp32 (opt all)",
              "results": results,
              "ratio_max": results["glassbox int8 (opt 2)"]["max"] / results["ort int8 (opt all)"]["max"],
              "ratio_mean": results["glassbox int8 (opt 2)"]["mean"] / results["ort int8 (opt all)"]["mean"]}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    sys.exit(main())
