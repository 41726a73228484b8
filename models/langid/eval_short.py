#!/usr/bin/env python3
"""Reports the committed model on a hand-written set through `glassbox classify` (the shipped pipeline, the
declared abstain threshold included): per language, how many texts get the right top label, how many abstain
(top score below glassbox.json abstain_below) and how right the answered ones are.

Usage: eval_short.py GLASSBOX_BINARY SET.tsv [--model-dir models/langid] [--sweep]
--sweep prints, for thresholds 0.30..0.90, the share abstained and the accuracy of the answered texts: how the
threshold was chosen (on everyday3.tsv, before the short set was run).
"""
import json
import os
import subprocess
import sys
from collections import defaultdict


def read_tsv(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            lang, text = line.rstrip("\n").split("\t", 1)
            rows.append((lang, text))
    return rows


def classify(binary, model_dir, texts):
    out = subprocess.run([binary, "classify", model_dir, "--top-k", "2", *texts], capture_output=True, text=True, check=True)
    lines = [json.loads(l) for l in out.stdout.splitlines() if l.startswith("{")]
    if len(lines) != len(texts):
        sys.exit(f"expected {len(texts)} results, got {len(lines)}")
    return lines


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) < 2:
        sys.exit(__doc__)
    binary, tsv = args[0], args[1]
    model_dir = "models/langid"
    if "--model-dir" in sys.argv:
        model_dir = sys.argv[sys.argv.index("--model-dir") + 1]
    rows = read_tsv(tsv)
    res = classify(binary, model_dir, [t for _, t in rows])
    if "--sweep" in sys.argv:
        print("threshold  abstained  accuracy(answered)  wrong answered")
        for t in [x / 100 for x in range(30, 95, 5)]:
            answered = [(l, r) for (l, _), r in zip(rows, res) if r["labels"][0]["score"] >= t]
            right = sum(1 for l, r in answered if r["label"] == l)
            print(f"{t:9.2f}  {len(rows) - len(answered):4d}/{len(rows)}  {right / max(len(answered), 1):8.3f}"
                  f"  {len(answered) - right:4d}")
        return
    per = defaultdict(lambda: [0, 0, 0, 0])  # n, right top label, abstained, right among answered
    misses = defaultdict(list)
    for (lang, text), r in zip(rows, res):
        p = per[lang]
        p[0] += 1
        right = r["label"] == lang
        p[1] += right
        abstained = r.get("abstained", False)
        p[2] += abstained
        p[3] += right and not abstained
        if not right or abstained:
            misses[lang].append(f"{text} -> {r['label']} {r['labels'][0]['score']:.2f}{' (abstained)' if abstained else ''}")
    print("| lang | n | top label right | abstained | answered and right | answered and wrong |")
    print("|---|---|---|---|---|---|")
    tot = [0, 0, 0, 0]
    for lang in sorted(per):
        n, right, ab, ok = per[lang]
        tot = [a + b for a, b in zip(tot, per[lang])]
        print(f"| {lang} | {n} | {right} | {ab} | {ok} | {n - ab - ok} |")
    n, right, ab, ok = tot
    print(f"| **all** | {n} | {right} ({100 * right / n:.1f} %) | {ab} | {ok} | {n - ab - ok} |")
    for lang in sorted(misses):
        for m in misses[lang]:
            print(f"  {lang}: {m}")


if __name__ == "__main__":
    main()
