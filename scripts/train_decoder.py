#!/usr/bin/python3
"""Trains the Llama-style tiny decoder of scripts/make_decoder_models.py briefly on real text found on every
Debian 12 machine, with a real tokenizer, so that its greedy output is text, not noise (issue #28). The engine is
then tested on a model whose greedy continuation can be read: glassbox's must equal transformers.js's, and be made
of the corpus's words (tests/generation/trained_text_test.js, ctest generation_trained_text).

Writes OUT/llama_text/ like a user's download: model.onnx (make_decoder_models.export(): Optimum's current layout
with past_key_values), config.json (llama_config() with this tokenizer's bos/eos ids), generation_config.json (bos,
eos), tokenizer.json and tokenizer_config.json (add_bos_token false), and train_report.json (corpus files, steps,
loss, seconds; the test reads the corpus list from it). Also OUT/llama_text_untrained/: the same model at its
seeded initialisation (before step 1), the test's negative control: its greedy output must fail the text check.

Model: make_decoder_models.Llama (RMSNorm, RoPE, SwiGLU, GQA), hidden 128, 2 layers, 4 query heads / 2 kv heads
(head_dim 32), intermediate 344, max_position_embeddings 256, untied lm_head, vocab 21022. Hidden 64 (intermediate
172) was tried first: after 600 steps (more time than this script's 300) its loss was 0.71 and its greedy words
were often broken ("leganization", "orresponding"); hidden 128 learns about twice as much per second.

Corpus: 11 license texts of Debian's base-files package, /usr/share/common-licenses/ Apache-2.0, Artistic, BSD,
GFDL-1.2, GFDL-1.3, GPL-2, GPL-3, LGPL-2, LGPL-2.1, LGPL-3, MPL-2.0 (sorted; the links GFDL, GPL, LGPL are not read
twice; GPL-1, MPL-1.1 and CC0-1.0 are left out). A missing file is an error that names it. In each text every run
of whitespace (line breaks, indentation) becomes one space; the texts are tokenized one by one and joined with
</s>: 185,776 characters, 55,191 tokens, 1,756 distinct ids (with </s>).

Tokenizer: tests/data/tokenizer/models/roberta-bpe.json (byte-level BPE, 21,022 tokens) exactly as
make_decoder_models.write_roberta_tokenizer() prepares it for gpt2_tiny (GPT-2's plain ByteLevel post-processor;
bos <s> 21017, eos </s> 21019), applied by the HF `tokenizers` peer (node; train_classifier.tokenize()).

Training: torch.manual_seed(28), 1 thread, AdamW (lr 1e-2, betas 0.8/0.95, no weight decay, 20 warm-up steps,
cosine decay to 10 %), 300 steps of 32 windows of 64 tokens at seeded random offsets (about 11 passes over the
corpus), next-token cross entropy over the full vocabulary (computed cheaply: see train()).
Measured on this 2-core machine (AMD EPYC VM, torch 1.13, 1 thread) while another user's 3 compiler processes
kept the load at 4.4-4.7: the whole script 73 s wall as the ctest fixture (70.7 s after the imports, training
68.8 s; an idle machine is faster); final training loss 0.65 (mean of the last 20 steps; the first step's is
9.98, ln 21022 = 9.95). Greedy, 24 new tokens (glassbox == transformers.js):
  "This program is free software" -> "; you can redistribute it and/or modify it under the terms of the GNU
                                       General Public License"
  "You may not use this file except" -> " all documents with the license notices in the Document, provided that
                                          you make sure that they,"
  untrained: "文件名和参数对待führenden它将读取并执行� Optionsbuchstabensaient ..." (0 of 7 words in the corpus)
The weights are the same on every run of one torch build on one kind of CPU, not across builds or CPUs (float
summation order); the test asserts what any such run gives: glassbox == transformers.js, words of the corpus.

Usage: scripts/train_decoder.py [--out DIR] [--steps N]    (writes DIR/llama_text, DIR/llama_text_untrained)
"""
import argparse
import copy
import json
import math
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_decoder_models as mdm  # noqa: E402  (Llama, export, llama_config, write_json, the tokenizer)
import train_classifier as tc  # noqa: E402  (tokenize: the HF tokenizers peer)

CORPUS_DIR = "/usr/share/common-licenses"
CORPUS = ("Apache-2.0", "Artistic", "BSD", "GFDL-1.2", "GFDL-1.3", "GPL-2", "GPL-3", "LGPL-2", "LGPL-2.1",
          "LGPL-3", "MPL-2.0")
SHAPE = dict(vocab=21022, hidden=128, layers=2, heads=4, kv_heads=2, intermediate=344, max_pos=256,
             rope_theta=10000.0)
SEED, STEPS, BATCH, SEQ = 28, 300, 32, 64
LR, WARMUP, MIN_LR, BETAS, WEIGHT_DECAY = 1e-2, 20, 0.1, (0.8, 0.95), 0.0


def read_corpus():
    missing = [os.path.join(CORPUS_DIR, f) for f in CORPUS if not os.path.isfile(os.path.join(CORPUS_DIR, f))]
    if missing:
        sys.exit(f"train_decoder.py: corpus file(s) missing: {', '.join(missing)} (Debian's base-files package)")
    texts = []
    for f in CORPUS:
        with open(os.path.join(CORPUS_DIR, f), encoding="utf-8") as fh:
            texts.append(" ".join(fh.read().split()))
    return texts


def write_model_dir(model, d, bos, eos):
    os.makedirs(d, exist_ok=True)
    mdm.export(model, SHAPE, os.path.join(d, "model.onnx"))
    mdm.write_json(os.path.join(d, "config.json"), mdm.llama_config(SHAPE, bos, eos))
    mdm.write_json(os.path.join(d, "generation_config.json"), {"bos_token_id": bos, "eos_token_id": eos})
    mdm.write_roberta_tokenizer(d, SHAPE["max_pos"])


def lr_at(step, steps):
    if step < WARMUP:
        return LR * (step + 1) / WARMUP
    t = (step - WARMUP) / max(1, steps - WARMUP)
    return LR * (MIN_LR + (1 - MIN_LR) * 0.5 * (1 + math.cos(math.pi * t)))


def train(model, stream, steps):
    """Trains model in place; returns the loss of every step.

    The loss is the full-vocabulary next-token cross entropy of a model whose lm_head rows of the token ids the
    corpus never uses are tied to one shared row: the softmax runs over the used ids' rows plus that shared row
    with log(number of unused ids) added to its logit (the unused ids' exact total mass), so the head and softmax
    cost 1,757 / 21,022 of the full ones (the corpus and </s> use 1,756 ids). The embedding trains the used ids'
    rows only (no other id is ever an input). Afterwards every unused row of lm_head is set to the shared row: the
    exported model's 21,022-way softmax is exactly the one trained."""
    used = torch.unique(stream)  # sorted
    target_of = torch.full((SHAPE["vocab"],), -1, dtype=torch.int64)
    target_of[used] = torch.arange(len(used))
    unused = torch.ones(SHAPE["vocab"], dtype=torch.bool)
    unused[used] = False
    log_unused = math.log(int(unused.sum()))
    lm_head, model.lm_head = model.lm_head, torch.nn.Identity()  # the model's forward returns the final norm
    embed, model.embed = model.embed, torch.nn.Embedding.from_pretrained(model.embed.weight.detach()[used], freeze=False)
    w_used = torch.nn.Parameter(lm_head.weight.detach()[used].clone())
    w_other = torch.nn.Parameter(lm_head.weight.detach()[unused].mean(0, keepdim=True))
    opt = torch.optim.AdamW([*model.parameters(), w_used, w_other], lr=LR, betas=BETAS, weight_decay=WEIGHT_DECAY)
    gen = torch.Generator().manual_seed(SEED)
    mask = torch.ones(BATCH, SEQ, dtype=torch.int64)
    pos = torch.arange(SEQ).unsqueeze(0).expand(BATCH, SEQ)
    losses = []
    model.train()
    for step in range(steps):
        starts = torch.randint(0, len(stream) - SEQ - 1, (BATCH,), generator=gen)
        window = target_of[torch.stack([stream[s:s + SEQ + 1] for s in starts.tolist()])]
        h = model(window[:, :-1], mask, pos)[0].reshape(-1, SHAPE["hidden"])
        logits = torch.cat([h @ w_used.t(), h @ w_other.t() + log_unused], dim=1)
        loss = torch.nn.functional.cross_entropy(logits, window[:, 1:].reshape(-1))
        for g in opt.param_groups:
            g["lr"] = lr_at(step, steps)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([*model.parameters(), w_used, w_other], 1.0)
        opt.step()
        losses.append(loss.item())
        if step % 50 == 0 or step == steps - 1:
            print(f"step {step:4d}  loss {loss.item():.3f}  lr {lr_at(step, steps):.2e}", flush=True)
    with torch.no_grad():
        lm_head.weight[unused] = w_other.detach()
        lm_head.weight[used] = w_used.detach()
        embed.weight[used] = model.embed.weight.detach()
    model.lm_head, model.embed = lm_head, embed
    return losses


def main():
    t0 = time.time()
    torch.set_num_threads(1)  # 2 threads ran 3.5x slower beside a busy core; 1 thread: the same floats every run
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(mdm.ROOT, "tests", "data", "generated"))
    ap.add_argument("--steps", type=int, default=STEPS, help="training steps (default %(default)s)")
    args = ap.parse_args()
    texts = read_corpus()
    d = os.path.join(args.out, "llama_text")
    os.makedirs(d, exist_ok=True)
    bos, eos = mdm.write_roberta_tokenizer(d, SHAPE["max_pos"])  # tc.tokenize reads d/tokenizer.json
    with open(os.path.join(d, "tokenizer.json"), encoding="utf-8") as f:
        tok = json.load(f)
    n_tokens = max([*tok["model"]["vocab"].values(), *(t["id"] for t in tok["added_tokens"])]) + 1
    if n_tokens != SHAPE["vocab"]:
        sys.exit(f"train_decoder.py: {mdm.ROBERTA} has {n_tokens} tokens, expected {SHAPE['vocab']}")
    ids = tc.tokenize(d, texts)
    stream = []
    for i, doc in enumerate(ids):
        stream += ([eos] if i else []) + doc
    stream = torch.tensor(stream, dtype=torch.int64)
    print(f"corpus: {len(CORPUS)} files from {CORPUS_DIR}, {sum(map(len, texts))} characters, {len(stream)} tokens")

    torch.manual_seed(SEED)
    model = mdm.Llama(SHAPE)
    untrained = copy.deepcopy(model)
    t1 = time.time()
    losses = train(model, stream, args.steps)
    train_s = time.time() - t1
    final = sum(losses[-20:]) / len(losses[-20:]) if losses else float("nan")

    write_model_dir(model, d, bos, eos)
    write_model_dir(untrained, os.path.join(args.out, "llama_text_untrained"), bos, eos)
    report = {"corpus": [os.path.join(CORPUS_DIR, f) for f in CORPUS], "corpus_tokens": len(stream),
              "steps": args.steps, "batch": BATCH, "sequence_length": SEQ, "lr": LR, "seed": SEED,
              "final_loss_last20": round(final, 4), "first_loss": round(losses[0], 4) if losses else None,
              "train_seconds": round(train_s, 1), "total_seconds": round(time.time() - t0, 1),
              "torch": torch.__version__, "threads": torch.get_num_threads()}
    mdm.write_json(os.path.join(d, "train_report.json"), report)
    print(f"final training loss {final:.3f} (mean of the last 20 steps), {args.steps} steps in {train_s:.1f} s, "
          f"total {time.time() - t0:.1f} s on {torch.get_num_threads()} thread(s)")
    print(d)


if __name__ == "__main__":
    sys.exit(main())
