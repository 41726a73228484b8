#!/usr/bin/env python3
"""The memory estimate is honest (docs/memory.md): for small models at three shapes, the peak RSS of a
separate `glassbox classify` process running real texts at that shape must lie within +-10 % of what
`glassbox inspect MODEL --shape BxT --json` estimates (its own process: baseline, tokenizer, weights,
dry runs). Peak RSS is the child's ru_maxrss from wait4 (exactly that process).

A tensor model (MODEL.onnx, e.g. a tabular ai.onnx.ml model) takes input shapes instead, NAME=D1xD2 (one per
input, a shape is a comma-separated list of them): the estimate is `glassbox inspect MODEL.onnx --input-shape ...
--json`, the measurement a `glassbox run MODEL.onnx --input NAME=FILE.npy` process on random float32 inputs of that
shape (one run: the estimate's arena term is an upper bound for it).

A decoder directory (config.json architectures *ForCausalLM) takes generation shapes, BATCHxPROMPTxNEW: the
estimate is `glassbox inspect DIR --generate-shape BxPxN --json` (KV cache, the steps' past feeds, dry runs), the
measurement a `glassbox generate DIR --json --greedy --max-new-tokens N` process on B prompts of exactly P tokens;
every sequence must have generated N tokens (else the shape was not reached and the row fails).

Usage: test_memory_rss.py GLASSBOX_CLI MODEL_DIR [BxT ...]
       test_memory_rss.py GLASSBOX_CLI MODEL.onnx NAME=D1xD2[,NAME=...] ...
       test_memory_rss.py GLASSBOX_CLI DECODER_DIR BxPxN ...
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

TOLERANCE = 0.10


def child_env():
    env = dict(os.environ)
    # Under ASan freed memory waits in a quarantine (256 MiB by default) instead of being reused: that is the
    # sanitizer's RSS, not the engine's. Reuse it at once, as glibc does, so the comparison measures glassbox.
    opts = env.get("ASAN_OPTIONS", "")
    env["ASAN_OPTIONS"] = ":".join(o for o in [opts, "quarantine_size_mb=0", "detect_leaks=0"] if o)
    return env


def run(cmd, stdin=None):
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env())
    out, err = p.communicate(stdin, timeout=300)
    return p.returncode, out.decode(), err.decode()


def text_of_tokens(cli, tokenizer, tokens):
    """A text of `tokens` tokens (special tokens included) by bisection on the word count, via `glassbox encode`."""
    def count(words):
        return count_text(" ".join(["hello"] * words))

    def count_text(text):
        line = json.dumps({"text": text}) + "\n"
        rc, out, err = run([cli, "encode", "--tokenizer", tokenizer], line.encode())
        assert rc == 0, err
        return len(json.loads(out.splitlines()[0])["ids"])
    lo, hi = 1, tokens + 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if count(mid) <= tokens:
            lo = mid
        else:
            hi = mid
    text = " ".join(["hello"] * lo)
    for extra in range(tokens + 1):  # "hello" may be several tokens: fill up with a short word
        got = count_text(text + " a" * extra)
        if got == tokens:
            return text + " a" * extra
        if got > tokens:
            break
    raise AssertionError(f"no text of exactly {tokens} tokens (got {count(lo)} at {lo} words)")


def text_command(model):
    """`embed` for an embedding directory (glassbox.json task embed), else `classify`: the pipeline the model loads as."""
    try:
        with open(os.path.join(model, "glassbox.json")) as f:
            task = json.load(f).get("task")
    except FileNotFoundError:
        task = None
    return "embed" if task == "embed" else "classify"


def peak_rss_of(cli, argv, stdin_path=None, stdout_path=None):
    """Exit code and peak RSS (bytes, ru_maxrss from wait4) of `cli argv...`; stdout to `stdout_path` or discarded."""
    pid = os.fork()
    if pid == 0:
        if stdin_path:
            os.dup2(os.open(stdin_path, os.O_RDONLY), 0)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(os.open(stdout_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC) if stdout_path else devnull, 1)
        os.dup2(devnull, 2)
        os.execve(cli, [cli, *argv], child_env())
    _, status, ru = os.wait4(pid, 0)
    return os.waitstatus_to_exitcode(status), ru.ru_maxrss * 1024


def tensor_model(cli, model, specs):
    """Estimate vs peak RSS of `glassbox run` for a tensor model at each NAME=D1xD2[,...] spec."""
    problems = []
    rng = np.random.default_rng(0)
    for spec in specs:
        shapes = [s.split("=", 1) for s in spec.split(",")]
        rc, out, err = run([cli, "inspect", model, *[f"--input-shape={s}" for s in spec.split(",")], "--json"])
        if rc != 0:
            problems.append(f"inspect {spec} failed: {err}")
            continue
        est = json.loads(out)
        with tempfile.TemporaryDirectory() as tmp:
            args = ["run", model, "--output-dir", tmp]
            for name, dims in shapes:
                path = os.path.join(tmp, name + ".npy")
                np.save(path, rng.normal(size=[int(d) for d in dims.split("x")]).astype(np.float32))
                args += ["--input", f"{name}={path}"]
            rc, measured = peak_rss_of(cli, args)
        estimate = est["estimate_bytes"]
        ratio = measured / estimate
        ok = rc == 0 and abs(ratio - 1) <= TOLERANCE
        print(f"{os.path.basename(model)} {spec}: estimate {estimate / 2**20:.1f} MiB {est['breakdown']}, "
              f"measured peak RSS {measured / 2**20:.1f} MiB, ratio {ratio:.3f} {'ok' if ok else 'FAIL'}")
        if not ok:
            problems.append(f"{spec}: rc {rc}, measured/estimate {ratio:.3f} outside 1 +- {TOLERANCE}")
    return problems


def is_decoder(model):
    try:
        with open(os.path.join(model, "config.json")) as f:
            return any(a.endswith("ForCausalLM") or a.endswith("LMHeadModel") for a in json.load(f).get("architectures", []))
    except (FileNotFoundError, NotADirectoryError):
        return False


def decoder_model(cli, model, specs):
    """Estimate vs peak RSS of `glassbox generate` for a decoder at each BATCHxPROMPTxNEW."""
    problems = []
    for spec in specs:
        batch, prompt, new = (int(v) for v in spec.split("x"))
        rc, out, err = run([cli, "inspect", model, "--generate-shape", spec, "--json"])
        if rc != 0:
            problems.append(f"inspect {spec} failed: {err}")
            continue
        est = json.loads(out)
        text = text_of_tokens(cli, os.path.join(model, "tokenizer.json"), prompt)
        with tempfile.TemporaryDirectory() as tmp:
            out_path = os.path.join(tmp, "out.jsonl")
            rc, measured = peak_rss_of(cli, ["generate", model, "--json", "--greedy", "--max-new-tokens", str(new),
                                             *[text] * batch], stdout_path=out_path)
            with open(out_path) as f:
                results = [json.loads(line) for line in f if line.strip()]
        reached = len(results) == batch and all(r.get("usage", {}).get("completion_tokens") == new
                                                and r.get("usage", {}).get("prompt_tokens") == prompt
                                                for r in results)
        estimate = est["estimate_bytes"]
        ratio = measured / estimate
        ok = rc == 0 and reached and abs(ratio - 1) <= TOLERANCE
        print(f"{os.path.basename(model.rstrip('/'))} {spec}: estimate {estimate / 2**20:.1f} MiB {est['breakdown']}, "
              f"measured peak RSS {measured / 2**20:.1f} MiB, ratio {ratio:.3f} {'ok' if ok else 'FAIL'}"
              + ("" if reached else " (the generation did not reach the shape)"))
        if not ok:
            problems.append(f"{spec}: rc {rc}, reached {reached}, measured/estimate {ratio:.3f} outside 1 +- {TOLERANCE}")
    return problems


def main():
    cli, model = sys.argv[1], sys.argv[2]
    if is_decoder(model):
        problems = decoder_model(cli, model, sys.argv[3:])
        for p in problems:
            print(p)
        return 1 if problems else 0
    if model.endswith(".onnx"):
        problems = tensor_model(cli, model, sys.argv[3:])
        for p in problems:
            print(p)
        return 1 if problems else 0
    shapes = [tuple(int(v) for v in s.split("x")) for s in (sys.argv[3:] or ["1x16", "4x64", "8x256"])]
    problems = []
    for batch, tokens in shapes:
        rc, out, err = run([cli, "inspect", model, "--shape", f"{batch}x{tokens}", "--json"])
        if rc != 0:
            problems.append(f"inspect {batch}x{tokens} failed: {err}")
            continue
        est = json.loads(out)
        # The tokens inspect could make of one repeated word (at most the asked count): the same text here.
        text = text_of_tokens(cli, os.path.join(model, "tokenizer.json"), est["shape"]["tokens"])
        # One engine run of exactly this shape, twice (the second on the plan's arena), as the estimate assumes.
        lines = "".join(json.dumps({"text": text}) + "\n" for _ in range(2 * batch))
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
            f.write(lines)
            path = f.name
        rc, measured = peak_rss_of(cli, [text_command(model), model, "--batch", str(batch)], path)
        os.unlink(path)
        estimate = est["estimate_bytes"]
        ratio = measured / estimate
        ok = rc == 0 and abs(ratio - 1) <= TOLERANCE
        print(f"{os.path.basename(model.rstrip('/'))} {batch}x{est['shape']['tokens']}: estimate {estimate / 2**20:.1f} MiB "
              f"{est['breakdown']}, measured peak RSS {measured / 2**20:.1f} MiB, ratio {ratio:.3f} {'ok' if ok else 'FAIL'}")
        if not ok:
            problems.append(f"{batch}x{tokens}: rc {rc}, measured/estimate {ratio:.3f} outside 1 +- {TOLERANCE}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
