"""Concurrency and resource use: 4 Python threads on one Session / Tokenizer / pipeline give the
single-threaded results; the GIL is released while the engine works; 10k calls leave the
reference counts and the resident set flat."""

import gc
import os
import sys
import threading
import time

import numpy as np
import pytest

import glassbox
from conftest import ROOT, SANITIZED, generated_model, text_feeds


def in_threads(n, fn):
    results, errors = [None] * n, []

    def work(i):
        try:
            results[i] = fn(i)
        except BaseException as e:  # noqa: B036 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return results


def test_four_threads_share_one_session():
    session = glassbox.Session(generated_model("bert_tiny_op14"), threads=2)
    cases = [text_feeds(session, b, s, seed) for seed, (b, s) in enumerate([(1, 5), (2, 9), (3, 16), (4, 33)])]
    expected = [session.run(f) for f in cases]

    def work(i):
        out = []
        for k in range(12):  # every thread runs every shape, in a different order
            c = (i + k) % len(cases)
            out.append((c, session.run(cases[c])))
        return out
    for per_thread in in_threads(4, work):
        for c, got in per_thread:
            for name, value in got.items():
                np.testing.assert_array_equal(value, expected[c][name])


def test_four_threads_share_tokenizer_and_pipeline():
    tk = glassbox.Tokenizer.from_file(os.path.join(ROOT, "tests/data/tokenizer/models/bert-cased.json"))
    texts = [f"Sentence number {i} about threads and the GIL." for i in range(64)]
    expected = [e.ids for e in tk.encode_batch(texts)]
    for got in in_threads(4, lambda i: [[e.ids for e in tk.encode_batch(texts, threads=1 + i % 2)] for _ in range(5)]):
        assert all(g == expected for g in got)
    clf = glassbox.pipeline("text-classification", threads=1)
    words = ["Guten Morgen", "Good morning", "Bonjour à tous", "Buenos días"]
    want = clf(words, top_k=3)
    for got in in_threads(4, lambda i: [clf(words, top_k=3) for _ in range(5)]):
        assert all(g == want for g in got)


def assert_gil_released(work):
    """Runs work() 3 times on a thread while this thread ticks every ms; a call holding the GIL
    would stall the ticks for the whole call."""
    t0 = time.perf_counter()
    work()
    one_call = time.perf_counter() - t0
    done = threading.Event()
    ticks = []

    def worker():
        for _ in range(3):
            work()
        done.set()
    thread = threading.Thread(target=worker)
    thread.start()
    while not done.is_set():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    thread.join()
    gaps = np.diff(ticks) if len(ticks) > 1 else np.array([3 * one_call])
    assert one_call > 0.02, f"the call is too short ({one_call:.3f} s) to tell"
    assert len(ticks) > 10 and gaps.max() < 0.5 * one_call, (len(ticks), gaps.max(), one_call)


def test_gil_is_released_during_inference():
    session = glassbox.Session(generated_model("bert_tiny_op14"), threads=1)
    feeds = text_feeds(session, 16, 128, 9)
    assert_gil_released(lambda: session.run(feeds))
    assert_gil_released(lambda: session.run_unpadded(feeds))


def test_gil_is_released_during_encode_batch():
    tk = glassbox.Tokenizer.from_file(os.path.join(ROOT, "tests/data/tokenizer/models/roberta-bpe.json"))
    texts = [open(os.path.join(ROOT, "tests/data/tokenizer/corpus/en.txt"), encoding="utf-8").read()] * 8
    assert_gil_released(lambda: tk.encode_batch(texts))


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.parametrize("what", ["session", "tokenizer", "pipeline", "errors"])
def test_ten_thousand_calls_leave_rss_flat(what, tiny_models):
    session = glassbox.Session(tiny_models["add"], threads=1)
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    tk = glassbox.Tokenizer.from_file(os.path.join(ROOT, "tests/data/tokenizer/models/bert-uncased.json"))
    clf = glassbox.pipeline("text-classification", threads=1) if what == "pipeline" else None
    calls = {
        "session": lambda: session.run({"x": x, "y": x})["z"],
        "tokenizer": lambda: tk.encode_batch(["hello world", "a second text"], return_tensors="np"),
        "pipeline": lambda: clf("Guten Morgen"),
        "errors": lambda: pytest.raises(glassbox.InvalidInput, session.run, {"x": x}),
    }
    call = calls[what]
    refs = sys.getrefcount(x)
    for _ in range(3000):  # warm-up: plan caches, allocator pools, ASan's quarantine
        call()
    gc.collect()
    before, objects = rss_bytes(), len(gc.get_objects())
    n = 10000 if what != "pipeline" or not SANITIZED else 3000
    for _ in range(n):
        call()
    gc.collect()
    grown = rss_bytes() - before
    assert sys.getrefcount(x) == refs, "a feed array kept a reference"
    assert len(gc.get_objects()) - objects < 100, "Python objects accumulate"
    # 1 MiB over 10k calls: 100 bytes a call would already show; real leaks here are >= 32 bytes x 3 a call
    # (a tensor header per feed/output), so 1 MiB allows allocator noise but not a per-call leak.
    assert grown < (4 << 20 if SANITIZED else 1 << 20), f"RSS grew by {grown} bytes over {n} calls"
