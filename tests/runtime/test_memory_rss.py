#!/usr/bin/env python3
"""The memory estimate is honest (docs/memory.md): for small models at three shapes, the peak RSS of a
separate `glassbox classify` process running real texts at that shape must lie within +-10 % of what
`glassbox inspect MODEL --shape BxT --json` estimates (its own process: baseline, tokenizer, weights,
dry runs). Peak RSS is the child's ru_maxrss from wait4 (exactly that process).

Usage: test_memory_rss.py GLASSBOX_CLI MODEL_DIR [BxT ...]
"""
import json
import os
import subprocess
import sys
import tempfile

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
        line = json.dumps({"text": " ".join(["hello"] * words)}) + "\n"
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
    assert count(lo) == tokens, f"no text of exactly {tokens} tokens (got {count(lo)} at {lo} words)"
    return " ".join(["hello"] * lo)


def main():
    cli, model = sys.argv[1], sys.argv[2]
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
        pid = os.fork()
        if pid == 0:
            fd = os.open(path, os.O_RDONLY)
            os.dup2(fd, 0)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            os.execve(cli, [cli, "classify", model, "--batch", str(batch)], child_env())
        _, status, ru = os.wait4(pid, 0)
        os.unlink(path)
        rc = os.waitstatus_to_exitcode(status)
        measured = ru.ru_maxrss * 1024
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
