#!/usr/bin/python3
"""A decoder in onnxruntime-genai's builder layout, for glassbox's generation parity test: the tiny
Llama-style test decoder's shape and tokenizer (scripts/make_decoder_models.py's llama_tiny: Qwen3
tokenizer, 2 layers, GQA 4/2 heads, RMSNorm, SwiGLU) written with the ops and wiring the builder
emits for CPU fp32 (onnxruntime-genai src/python/py/models/builders/base.py):
  - SimplifiedLayerNormalization (ai.onnx domain) for the first norm, com.microsoft
    SkipSimplifiedLayerNormalization for every residual + norm after it;
  - one packed QKV MatMul per layer into com.microsoft GroupQueryAttention with do_rotary = 1 and the
    cos/sin caches as initializers (no position_ids input);
  - seqlens_k = Cast<int32>(ReduceSum(attention_mask, axis 1) - 1) and total_sequence_length =
    Cast<int32>(Gather(Shape(attention_mask), 1)).
The head size is 16 (ORT's CPU GQA kernel needs a multiple of 16; llama_tiny's is 8) and the weights
are fixed-seed random (this is a layout test, not a trained model). genai_config.json is written with
the fields make_genai_config writes, search defaults included.
Usage: scripts/make_genai_layout.py --src MODELS/llama_tiny --out MODELS/llama_tiny_genai
"""
import argparse
import json
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

LAYERS, HIDDEN, HEADS, KV_HEADS, HEAD, FFN, CONTEXT, EPS = 2, 32, 4, 2, 16, 64, 256, 1e-6


def build(vocab, tokenizer_size, rng):
    inits, nodes = [], []

    def w(name, *shape, scale=0.2):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def const(name, array):
        inits.append(numpy_helper.from_array(array, name))
        return name

    def node(op, ins, outs, domain="", **attrs):
        nodes.append(helper.make_node(op, ins, outs, name=f"/{op}_{len(nodes)}", domain=domain, **attrs))
        return outs[0]

    def skip_norm(x, skip, gamma, name):
        """residual + RMSNorm: outputs (normed, residual sum); mean and inv_std_var left empty as the builder does."""
        nodes.append(helper.make_node("SkipSimplifiedLayerNormalization", [x, skip, gamma],
                                      [f"{name}_out", "", "", f"{name}_residual"], name=f"/{name}",
                                      domain="com.microsoft", epsilon=EPS))
        return f"{name}_out", f"{name}_residual"

    # Attention metadata as the builder derives it from attention_mask.
    node("ReduceSum", ["attention_mask", const("axis_one", np.array([1], np.int64))], ["mask_sum"], keepdims=0)
    node("Sub", ["mask_sum", const("one_i64", np.array(1, np.int64))], ["seqlens_k_i64"])
    node("Cast", ["seqlens_k_i64"], ["seqlens_k"], to=TensorProto.INT32)
    node("Shape", ["attention_mask"], ["mask_shape"])
    node("Gather", ["mask_shape", const("index_one", np.array(1, np.int64))], ["total_len_i64"], axis=0)
    node("Cast", ["total_len_i64"], ["total_sequence_length"], to=TensorProto.INT32)
    half = HEAD // 2
    angle = np.outer(np.arange(CONTEXT), 1.0 / 10000.0 ** (np.arange(half) / half))
    const("cos_cache", np.cos(angle).astype(np.float32))
    const("sin_cache", np.sin(angle).astype(np.float32))

    x = node("Gather", [w("embed_tokens", vocab, HIDDEN, scale=1.0), "input_ids"], ["embeds"], axis=0)
    h = node("SimplifiedLayerNormalization", [x, w("layers.0.input_norm", HIDDEN, scale=0.1)], ["layers.0.norm_out"],
             axis=-1, epsilon=EPS)
    residual = x
    for i in range(LAYERS):
        p = f"layers.{i}"
        qkv = node("MatMul", [h, w(f"{p}.qkv_proj", HIDDEN, (HEADS + 2 * KV_HEADS) * HEAD)], [f"{p}.qkv"])
        attn = node("GroupQueryAttention", [qkv, "", "", f"past_key_values.{i}.key", f"past_key_values.{i}.value",
                                            "seqlens_k", "total_sequence_length", "cos_cache", "sin_cache"],
                    [f"{p}.attn", f"present.{i}.key", f"present.{i}.value"], domain="com.microsoft",
                    num_heads=HEADS, kv_num_heads=KV_HEADS, do_rotary=1, rotary_interleaved=0, local_window_size=-1,
                    scale=float(1.0 / np.sqrt(HEAD)))
        o = node("MatMul", [attn, w(f"{p}.o_proj", HEADS * HEAD, HIDDEN)], [f"{p}.o"])
        h2, residual = skip_norm(o, residual, w(f"{p}.post_norm", HIDDEN, scale=0.1), f"{p}.post_norm")
        g = node("MatMul", [h2, w(f"{p}.gate_proj", HIDDEN, FFN)], [f"{p}.gate"])
        u = node("MatMul", [h2, w(f"{p}.up_proj", HIDDEN, FFN)], [f"{p}.up"])
        sig = node("Sigmoid", [g], [f"{p}.gate_sigmoid"])
        silu = node("Mul", [g, sig], [f"{p}.silu"])
        m = node("Mul", [silu, u], [f"{p}.mlp_in"])
        d = node("MatMul", [m, w(f"{p}.down_proj", FFN, HIDDEN)], [f"{p}.mlp_out"])
        nxt = f"layers.{i + 1}.input_norm" if i + 1 < LAYERS else "final_norm"
        h, residual = skip_norm(d, residual, w(nxt, HIDDEN, scale=0.1), nxt)
    # The logits' width is config.json's vocab_size (151936), wider than the tokenizer (ids past it are padding
    # rows a trained model never picks): their lm_head columns are zero, so their logit 0 stays far below the
    # maximum of ~150k random logits, and greedy decoding only picks ids the tokenizer can decode.
    lm_head = (rng.standard_normal((HIDDEN, vocab)) * 1.0).astype(np.float32)
    lm_head[:, tokenizer_size:] = 0.0
    node("MatMul", [h, const("lm_head", lm_head)], ["logits"])

    past_dims = ["batch_size", KV_HEADS, "past_sequence_length", HEAD]
    present_dims = ["batch_size", KV_HEADS, "total_sequence_length", HEAD]
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch_size", "total_sequence_length"])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", "sequence_length", vocab])]
    for i in range(LAYERS):
        for kv in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{i}.{kv}", TensorProto.FLOAT, past_dims))
            outputs.append(helper.make_tensor_value_info(f"present.{i}.{kv}", TensorProto.FLOAT, present_dims))
    graph = helper.make_graph(nodes, "genai_llama_tiny", inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                              producer_name="glassbox scripts/make_genai_layout.py (onnxruntime-genai builder layout)")
    model.ir_version = 8
    return model


def genai_config(vocab, eos, pad, bos):
    """The fields onnxruntime-genai's make_genai_config writes (builders/base.py), with its search defaults."""
    return {
        "model": {
            "bos_token_id": bos, "context_length": CONTEXT,
            "decoder": {
                "session_options": {"log_id": "onnxruntime-genai", "provider_options": []},
                "filename": "model.onnx", "head_size": HEAD, "hidden_size": HIDDEN,
                "inputs": {"input_ids": "input_ids", "attention_mask": "attention_mask",
                           "past_key_names": "past_key_values.%d.key", "past_value_names": "past_key_values.%d.value"},
                "outputs": {"logits": "logits", "present_key_names": "present.%d.key",
                            "present_value_names": "present.%d.value"},
                "num_attention_heads": HEADS, "num_hidden_layers": LAYERS, "num_key_value_heads": KV_HEADS},
            "eos_token_id": eos, "pad_token_id": pad, "type": "qwen3", "vocab_size": vocab},
        "search": {"diversity_penalty": 0.0, "do_sample": False, "early_stopping": True, "length_penalty": 1.0,
                   "max_length": CONTEXT, "min_length": 0, "no_repeat_ngram_size": 0, "num_beams": 1,
                   "num_return_sequences": 1, "past_present_share_buffer": True, "repetition_penalty": 1.0,
                   "temperature": 1.0, "top_k": 50, "top_p": 1.0},
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True, help="the llama_tiny directory of make_decoder_models.py")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    with open(os.path.join(args.src, "config.json")) as f:
        cfg = json.load(f)
    with open(os.path.join(args.src, "generation_config.json")) as f:
        gen = json.load(f)
    os.makedirs(args.out, exist_ok=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(args.src, name), os.path.join(args.out, name))
    with open(os.path.join(args.src, "tokenizer.json"), encoding="utf-8") as f:
        tok = json.load(f)
    tokenizer_size = 1 + max(list(tok["model"]["vocab"].values()) + [t["id"] for t in tok.get("added_tokens", [])])
    model = build(cfg["vocab_size"], tokenizer_size, np.random.default_rng(28))
    onnx.save(model, os.path.join(args.out, "model.onnx"))
    eos = gen.get("eos_token_id", cfg.get("eos_token_id"))
    pad = gen.get("pad_token_id", eos[0] if isinstance(eos, list) else eos)
    with open(os.path.join(args.out, "genai_config.json"), "w") as f:
        json.dump(genai_config(cfg["vocab_size"], eos, pad, cfg.get("bos_token_id", 1)), f, indent=4)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
