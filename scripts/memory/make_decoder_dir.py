#!/usr/bin/python3
"""A decoder with a KV cache big enough to see, for the memory-budget evidence (docs/memory.md,
bench/memory/rss_vs_estimate.sh): scripts/make_decoder_models.py's GPT-2-style model and gpt2_tiny's tokenizer
(21,022-token byte-level BPE), in Optimum's layout, at hidden 512, 4 layers, 8 heads, FFN 2048, 1024 positions:
16 KiB of KV cache per token (2 x 4 layers x 512 x 4 bytes), 138.6 MB of weights (34.7 M parameters). Random (seeded) weights; the EOS
row of lm_head is zero so its logit is exactly 0 and greedy decoding never picks it (the other 21,021 logits'
maximum is positive): every sequence runs its max_new_tokens, so a measured run fills the shape it was asked for.

Usage: /usr/bin/python3 scripts/memory/make_decoder_dir.py [--out DIR]   (default tests/data/generated/gpt2_kv_mem)
"""
import argparse
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import make_decoder_models as mdm  # noqa: E402

CONFIG = dict(vocab=21022, hidden=512, layers=4, heads=8, kv_heads=8, intermediate=2048, max_pos=1024)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(mdm.ROOT, "tests", "data", "generated", "gpt2_kv_mem"))
    a = ap.parse_args()
    tiny = os.path.join(os.path.dirname(a.out), "gpt2_tiny")
    mdm.make_gpt2(os.path.dirname(a.out))  # the tokenizer and configs this one copies (and the tiny model)
    c = CONFIG
    torch.manual_seed(5)
    model = mdm.Gpt2(c)
    with open(os.path.join(tiny, "config.json")) as f:
        config = json.load(f)
    eos = config["eos_token_id"]
    with torch.no_grad():
        model.wte.weight.mul_(2.0)
        model.lm_head.weight.mul_(4.0)
        model.lm_head.weight[eos].zero_()
    os.makedirs(a.out, exist_ok=True)
    mdm.export(model, c, os.path.join(a.out, "model.onnx"))
    config.update({"vocab_size": c["vocab"], "n_embd": c["hidden"], "n_layer": c["layers"], "n_head": c["heads"],
                   "n_inner": c["intermediate"], "n_positions": c["max_pos"]})
    mdm.write_json(os.path.join(a.out, "config.json"), config)
    for name in ("generation_config.json", "tokenizer.json", "tokenizer_config.json"):
        with open(os.path.join(tiny, name), encoding="utf-8") as f:
            j = json.load(f)
        if name == "tokenizer_config.json":
            j["model_max_length"] = c["max_pos"]
        mdm.write_json(os.path.join(a.out, name), j)
    print(f"wrote {a.out} ({sum(p.numel() for p in model.parameters())} parameters, eos {eos})")


if __name__ == "__main__":
    main()
