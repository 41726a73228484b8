#!/usr/bin/python3
"""Cross-checks a model directory written by scripts/train_classifier.py against its peers, in fp32:
torch's logits (test_logits.npy, computed in training) vs onnxruntime-node's logits on the exported
model.onnx (texts tokenized by the HF `tokenizers` peer, one text per run), and glassbox classify's
softmax scores vs softmax(ORT logits). Exit status 1 beyond the tolerances (logits 1e-3 relative to the
largest |logit|, probabilities 1e-4, any top-1 difference).

Usage: scripts/check_classifier_peers.py GLASSBOX_BINARY [MODEL_DIR] [--n 20]
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
ORT_JS = r"""
const [peers, dir] = process.argv.slice(1);
const tk = require(peers + '/tokenizers'), ort = require(peers + '/onnxruntime-node'), fs = require('fs');
(async () => {
  const tok = tk.Tokenizer.fromFile(dir + '/tokenizer.json');
  const s = await ort.InferenceSession.create(dir + '/model.onnx', { intraOpNumThreads: 1 });
  const texts = JSON.parse(fs.readFileSync(0, 'utf8')), out = [];
  for (const t of texts) {
    const ids = (await tok.encode(t)).getIds(), n = ids.length;
    const T = (a) => new ort.Tensor('int64', BigInt64Array.from(a.map(BigInt)), [1, n]);
    const r = await s.run({ input_ids: T(ids), attention_mask: T(ids.map(() => 1)), token_type_ids: T(ids.map(() => 0)) });
    out.push(Array.from(r.logits.data));
  }
  process.stdout.write(JSON.stringify({ ort: require(peers + '/onnxruntime-node/package.json').version, logits: out }));
})();
"""


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("glassbox")
    ap.add_argument("dir", nargs="?", default=os.path.join(ROOT, "tests", "data", "generated", "lang10_bert_base"))
    ap.add_argument("--n", type=int, default=20, help="first N held-out texts")
    a = ap.parse_args()
    rows = [json.loads(l) for l in open(os.path.join(a.dir, "test.jsonl"), encoding="utf-8")][: a.n]
    texts = [r["text"] for r in rows]
    labels = json.load(open(os.path.join(a.dir, "config.json")))["id2label"]
    labels = [labels[str(i)] for i in range(len(labels))]
    torch_logits = np.load(os.path.join(a.dir, "test_logits.npy"))[: a.n]
    r = subprocess.run(["node", "-e", ORT_JS, os.path.join(ROOT, ".peers", "node_modules"), a.dir],
                       input=json.dumps(texts).encode(), stdout=subprocess.PIPE, check=True)
    peer = json.loads(r.stdout)
    ort_logits = np.array(peer["logits"], dtype=np.float64)
    jsonl = "".join(json.dumps({"text": t}) + "\n" for t in texts)
    g = subprocess.run([a.glassbox, "classify", a.dir, "--threads", "1", "--batch", "1", "--top-k", str(len(labels))],
                       input=jsonl.encode(), stdout=subprocess.PIPE, check=True)
    gb = np.zeros_like(ort_logits)
    for i, line in enumerate(g.stdout.decode().splitlines()):
        for e in json.loads(line)["labels"]:
            gb[i, labels.index(e["label"])] = e["score"]
    lt = float(np.abs(torch_logits - ort_logits).max() / np.abs(ort_logits).max())
    pd = float(np.abs(gb - softmax(ort_logits)).max())
    top1 = int((gb.argmax(1) == ort_logits.argmax(1)).sum())
    top1_t = int((torch_logits.argmax(1) == ort_logits.argmax(1)).sum())
    print(f"{len(texts)} texts; onnxruntime-node {peer['ort']}")
    print(f"torch vs ORT logits: max |diff| / max |logit| = {lt:.2e}, top-1 {top1_t}/{len(texts)}")
    print(f"glassbox fp32 vs ORT softmax: max |diff| = {pd:.2e}, top-1 {top1}/{len(texts)}")
    ok = lt <= 1e-3 and pd <= 1e-4 and top1 == top1_t == len(texts)
    print("OK" if ok else "MISMATCH")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
