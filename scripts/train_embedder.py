#!/usr/bin/python3
"""Trains a MiniLM-L6-shaped sentence-embedding model on real text found on this machine, CPU only, and
writes a model directory `glassbox embed` / `glassbox accuracy` take (issue #17 §1: cosine of bf16 /
int8-dynamic embeddings to fp32 on a model whose embeddings mean something).

Task: cross-lingual sentence embeddings. Pairs are an English user-interface message (a gettext msgid)
and its translation into one of de nl da sv es pt it fr pl (the same catalogs and cleaning as
scripts/train_classifier.py); the loss is the symmetric in-batch contrastive loss (InfoNCE, cosine / 0.05)
over mean-pooled last_hidden_state, as sentence-transformers' MultipleNegativesRankingLoss. Held out by
crc32(msgid) % 5 == 0; quality is retrieval top-1 on held-out pairs (English → its translation among
all held-out translations; chance = 1 / pairs).

Model: scripts/make_test_models.py's Encoder, MiniLM-L6 shape (6 layers, hidden 384, 12 heads, FFN 1536,
vocab 30522, no pooler), BERT init, every parameter trained (AdamW, warm-up + linear decay), 1 thread.

Writes OUT/ (default tests/data/generated/xling_minilm_l6, ignored by git): model.onnx, tokenizer.json,
config.json, tokenizer_config.json, glassbox.json (embed, mean pooling, normalize), test.jsonl
(held-out texts: each English text, then its translation), train_report.json.

Usage: nice -n 19 scripts/train_embedder.py [--out DIR] [--minutes 15]
"""
import argparse
import collections
import json
import os
import random
import sys
import time
import zlib

import numpy as np
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_test_models as mtm  # noqa: E402
import train_classifier as tc  # noqa: E402  (catalog reading, tokenizer, init)


def pairs(by_lang, seed):
    """(english, translation, lang) per msgid: one translation chosen per msgid (seeded)."""
    by_msgid = collections.defaultdict(dict)
    for lang in tc.LANGS[1:]:
        for text, msgid in by_lang[lang].items():
            by_msgid[msgid][lang] = text
    rng = random.Random(seed)
    out = []
    for msgid in sorted(by_msgid):
        if msgid in by_lang["en"]:
            lang = rng.choice(sorted(by_msgid[msgid]))
            out.append((msgid, by_msgid[msgid][lang], lang))
    rng.shuffle(out)
    return out


def encode(model, ids, mask):
    x, bias = tc.embed(model, ids, mask)
    for layer in model.layers:
        x = layer(x, bias)
    m = mask.unsqueeze(-1).float()
    return nn.functional.normalize((x * m).sum(1) / m.sum(1), dim=-1)


def pad(seqs):
    n = max(len(s) for s in seqs)
    ids = torch.zeros(len(seqs), n, dtype=torch.long)
    mask = torch.zeros(len(seqs), n, dtype=torch.long)
    for r, s in enumerate(seqs):
        ids[r, :len(s)] = torch.tensor(s)
        mask[r, :len(s)] = 1
    return ids, mask


def embed_all(model, seqs, batch=64):
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
    out = torch.zeros(len(seqs), model.c.hidden)
    with torch.no_grad():
        for s in range(0, len(order), batch):
            idx = order[s:s + batch]
            out[idx] = encode(model, *pad([seqs[i] for i in idx]))
    return out


def retrieval(model, test):
    a = embed_all(model, [p[0] for p in test])
    b = embed_all(model, [p[1] for p in test])
    sim = a @ b.T
    top1 = float((sim.argmax(1) == torch.arange(len(test))).float().mean())
    diag = sim.diag()
    off = sim.masked_fill(torch.eye(len(test), dtype=torch.bool), -2).max(1).values
    return {"top1": round(top1, 4), "chance": round(1 / len(test), 4),
            "cos_pair_mean": round(float(diag.mean()), 4), "cos_best_other_mean": round(float(off.mean()), 4)}


def write_embedder_dir(model, c, out, glassbox):
    """model.onnx (+ the onnx/model.onnx hard link transformers.js reads), config.json and glassbox.json of a
    BERT-shaped embedder in `out` (whose tokenizer files tc.make_tokenizer_dir wrote)."""
    path = os.path.join(out, "model.onnx")
    mtm.export_module(model, c, 14, path)
    link = os.path.join(out, "onnx", "model.onnx")
    if os.path.exists(link):
        os.remove(link)
    os.link(path, link)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump({"architectures": ["BertModel"], "model_type": "bert", "vocab_size": c.vocab,
                   "hidden_size": c.hidden, "num_hidden_layers": c.layers, "num_attention_heads": c.heads,
                   "intermediate_size": c.intermediate, "max_position_embeddings": c.max_pos,
                   "type_vocab_size": 2}, f, indent=2)
    with open(os.path.join(out, "glassbox.json"), "w") as f:
        json.dump(glassbox, f, indent=2)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(tc.ROOT, "tests", "data", "generated", "xling_minilm_l6"))
    ap.add_argument("--test-pairs", type=int, default=200)
    ap.add_argument("--max-tokens", type=int, default=48)
    ap.add_argument("--batch", type=int, default=64, help="pairs per step (in-batch negatives)")
    ap.add_argument("--steps", type=int, default=2000, help="planned steps (the schedule); --minutes may stop earlier")
    ap.add_argument("--minutes", type=float, default=15)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--seed", type=int, default=17)
    a = ap.parse_args()
    torch.set_num_threads(1)
    c = mtm.Config(vocab=30522, hidden=384, layers=6, heads=12, intermediate=1536, max_pos=512, pooler=False)
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    all_pairs = pairs(tc.collect(), a.seed)
    tc.make_tokenizer_dir(a.out)
    ids = tc.tokenize(a.out, [t for p in all_pairs for t in p[:2]])
    tok = [(ids[2 * i], ids[2 * i + 1], p) for i, p in enumerate(all_pairs)
           if max(len(ids[2 * i]), len(ids[2 * i + 1])) <= a.max_tokens]
    held = [t for t in tok if zlib.crc32(t[2][0].encode()) % 5 == 0][: a.test_pairs]
    train = [t for t in tok if zlib.crc32(t[2][0].encode()) % 5 != 0]
    print(f"data: {len(train)} train pairs, {len(held)} test pairs ({time.time() - t0:.0f} s)", flush=True)

    model = mtm.Encoder(c)
    tc.bert_init(model, a.seed)
    before = retrieval(model.eval(), held)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0.01)
    warm = max(1, a.steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min((s + 1) / warm, max(0.0, (a.steps - s) / (a.steps - warm))))
    rng = random.Random(a.seed)
    step, losses, t1 = 0, [], time.time()
    deadline = t1 + a.minutes * 60
    model.train()
    while step < a.steps and time.time() < deadline:
        batch = rng.sample(train, a.batch)
        ea = encode(model, *pad([p[0] for p in batch]))
        eb = encode(model, *pad([p[1] for p in batch]))
        sim = ea @ eb.T / 0.05
        target = torch.arange(len(batch))
        loss = (nn.functional.cross_entropy(sim, target) + nn.functional.cross_entropy(sim.T, target)) / 2
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
        step += 1
        if step % 25 == 0:
            print(f"step {step}/{a.steps} loss {np.mean(losses[-25:]):.4f} ({time.time() - t1:.0f} s)", flush=True)
    model.eval()
    report = {
        "task": "cross-lingual sentence embeddings: English msgid vs its translation (" + " ".join(tc.LANGS[1:]) + ")",
        "source": f"{tc.LOCALE}/*/LC_MESSAGES/*.mo, split by crc32(msgid) % 5",
        "shape": {"layers": c.layers, "hidden": c.hidden, "heads": c.heads, "intermediate": c.intermediate},
        "args": {k: v for k, v in vars(a).items() if k != "out"},
        "train_pairs": len(train), "test_pairs": len(held), "steps": step,
        "train_seconds": round(time.time() - t1, 1), "final_loss": float(np.mean(losses[-25:])),
        "retrieval_before_training": before, "retrieval_after_training": retrieval(model, held),
        "torch": torch.__version__,
    }
    with open(os.path.join(a.out, "test.jsonl"), "w") as f:
        for _, _, (en, tr, lang) in held:
            f.write(json.dumps({"text": en, "lang": "en"}, ensure_ascii=False) + "\n")
            f.write(json.dumps({"text": tr, "lang": lang}, ensure_ascii=False) + "\n")
    write_embedder_dir(model, c, a.out, {"task": "embed", "pooling": "mean", "normalize": True})
    with open(os.path.join(a.out, "train_report.json"), "w") as f:
        json.dump(report, f, indent=2)
    print(json.dumps(report, indent=2))
    print(f"wrote {a.out} ({time.time() - t0:.0f} s in all)")


if __name__ == "__main__":
    main()
