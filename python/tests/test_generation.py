"""pipeline("text-generation") and glassbox.GenerationSession against `glassbox generate --json` (the CLI
itself is checked against onnxruntime-node and python3-jinja2 in tests/generation) on the tiny decoders of
scripts/make_decoder_models.py: greedy output, seeded sampling, the chat path, streaming, prefill/step,
and refusals of bad arguments."""

import json
import os

import pytest

import glassbox
from conftest import run_cli

MODELS = os.environ.get("GLASSBOX_DECODER_MODELS") or os.path.join(
    os.environ.get("GLASSBOX_BUILD_DIR", ""), "tests", "generation", "models")


def model(name):
    d = os.path.join(MODELS, name)
    assert os.path.isfile(os.path.join(d, "model.onnx")), \
        f"{d} missing: ctest runs the fixture generation_models, or run scripts/make_decoder_models.py --out {MODELS}"
    return d


@pytest.fixture(scope="module")
def gpt2():
    return glassbox.pipeline("text-generation", model("gpt2_tiny"), threads=1)


@pytest.fixture(scope="module")
def qwen():
    return glassbox.pipeline("text-generation", model("llama_tiny"), threads=1)


def cli_json(*args):
    return [json.loads(line) for line in run_cli(["generate", *args, "--json", "--threads", "1"]).splitlines() if line]


@pytest.mark.parametrize("name,prompt", [("gpt2_tiny", "hello there"), ("llama_tiny", "Grüße, 世界")])
def test_greedy_equals_the_cli(name, prompt):
    pipe = glassbox.pipeline("text-generation", model(name), threads=1)
    got = pipe(prompt, max_new_tokens=12, return_full_text=False)
    want = cli_json(model(name), prompt, "--max-new-tokens", "12")[0]
    assert len(got) == 1
    assert got[0]["ids"] == want["ids"]
    assert got[0]["generated_text"] == want["text"]
    assert got[0]["finish_reason"] == want["finish_reason"]
    assert got[0]["policy"]["max_new_tokens"] == {"value": 12, "source": "argument"}
    assert got[0]["policy"]["do_sample"]["source"] == want["policy"]["do_sample"]["source"]
    full = pipe(prompt, max_new_tokens=12)
    assert full[0]["generated_text"] == prompt + want["text"]  # return_full_text=True: transformers' default


def test_a_list_of_prompts_is_one_batch_with_the_cli_results(gpt2):
    prompts = ["hello there", "a much longer prompt than the other one"]
    got = gpt2(prompts, max_new_tokens=8, return_full_text=False)
    want = cli_json(model("gpt2_tiny"), *prompts, "--max-new-tokens", "8")
    assert [g[0]["ids"] for g in got] == [w["ids"] for w in want]


def test_seeded_sampling_is_reproducible(gpt2):
    kw = dict(max_new_tokens=16, do_sample=True, temperature=1.5, top_k=50, return_full_text=False)
    a = gpt2("hello there", seed=7, **kw)[0]
    b = gpt2("hello there", seed=7, **kw)[0]
    c = gpt2("hello there", seed=8, **kw)[0]
    assert a["ids"] == b["ids"] and a["generated_text"] == b["generated_text"]
    assert a["ids"] != c["ids"]
    assert a["policy"]["seed"] == {"value": 7, "source": "argument"}
    cli = cli_json(model("gpt2_tiny"), "hello there", "--max-new-tokens", "16", "--do-sample", "--temperature", "1.5",
                   "--top-k", "50", "--seed", "7")[0]
    assert cli["ids"] == a["ids"]
    unseeded = gpt2("hello there", **kw)[0]
    assert "random" in unseeded["policy"]["seed"]["source"]  # a drawn seed is reported, never hidden


MESSAGES = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Name a colour, été."}]


def test_chat_equals_the_cli_chat_path(qwen, tmp_path):
    f = tmp_path / "messages.json"
    f.write_text(json.dumps(MESSAGES), encoding="utf-8")
    want = cli_json(model("llama_tiny"), "--chat", str(f), "--max-new-tokens", "6")[0]
    got = qwen(MESSAGES, max_new_tokens=6, return_full_text=False)[0]
    assert got["ids"] == want["ids"]
    assert got["generated_text"] == want["text"]
    assert got["chat"]["prompt"] == want["chat"]["prompt"]
    assert got["chat"]["template_source"] == "tokenizer_config.json"
    assert got["policy"]["add_special_tokens"]["value"] is False
    assert got["usage"]["prompt_tokens"] == len(want["chat"]["prompt_ids"])
    full = qwen(MESSAGES, max_new_tokens=6)[0]["generated_text"]
    assert full == MESSAGES + [{"role": "assistant", "content": want["text"]}]


def test_chat_ending_in_assistant_continues_it(qwen, tmp_path):
    msgs = MESSAGES + [{"role": "assistant", "content": "The colour is"}]
    f = tmp_path / "messages.json"
    f.write_text(json.dumps(msgs), encoding="utf-8")
    want = cli_json(model("llama_tiny"), "--chat", str(f), "--continue-final-message", "--max-new-tokens", "4")[0]
    got = qwen(msgs, max_new_tokens=4)[0]
    assert got["ids"] == want["ids"]
    assert got["chat"]["prompt"].endswith("The colour is")
    assert got["generated_text"][-1]["content"] == "The colour is" + want["text"]
    with pytest.raises(glassbox.InvalidInput, match="not compatible"):
        qwen(msgs, max_new_tokens=4, continue_final_message=True, add_generation_prompt=True)


def test_stream_pieces_add_up_to_the_text(qwen):
    want = qwen("Grüße, 世界", max_new_tokens=24, return_full_text=False)[0]
    stream = qwen("Grüße, 世界", max_new_tokens=24, return_full_text=False, stream=True)
    pieces = list(stream)
    assert "".join(pieces) == want["generated_text"]
    assert not any(p.endswith("\ufffd") for p in pieces[:-1])  # no character cut in two (random weights emit stray bytes)
    assert stream.result["ids"] == want["ids"]
    chat = list(qwen(MESSAGES, max_new_tokens=6, stream=True))
    assert "".join(chat) == qwen(MESSAGES, max_new_tokens=6, return_full_text=False)[0]["generated_text"]


def test_generation_session_prefill_and_step(gpt2):
    s = glassbox.GenerationSession(model("gpt2_tiny"), threads=1)
    ids, events = s.prefill(["hello there", "a much longer prompt than the other one"], max_new_tokens=8)
    assert len(ids) == 2 and {e["id"] for e in events} == set(ids)
    while s.active():
        for e in s.step():
            assert e["token"] is not None
    results = [s.take_result(i) for i in ids]
    want = cli_json(model("gpt2_tiny"), "hello there", "a much longer prompt than the other one", "--max-new-tokens", "8")
    assert [r["ids"] for r in results] == [w["ids"] for w in want]
    assert s.resolve(top_k=5)["top_k"] == {"value": 5, "source": "argument"}
    assert s.explain()["decoder"]["layout"] == "optimum"
    chat = glassbox.GenerationSession(model("llama_tiny"), threads=1).render_chat(json.dumps(MESSAGES))
    assert chat["add_generation_prompt"]["value"] is True and chat["prompt"].endswith("<|im_start|>assistant\n")


def test_bad_arguments_are_clear_errors(gpt2, qwen):
    with pytest.raises(glassbox.InvalidInput, match="temperature"):
        gpt2("x", do_sample=True, temperature=0.0)
    with pytest.raises(glassbox.InvalidInput, match="top_k must be an int"):
        gpt2("x", top_k="5")
    with pytest.raises(glassbox.InvalidInput, match="unknown generation argument 'topk'"):
        gpt2.session.prefill(["x"], topk=5)
    with pytest.raises(glassbox.InvalidInput, match="must be a str"):
        gpt2(42)
    with pytest.raises(glassbox.InvalidInput, match="one prompt"):
        gpt2(["a", "b"], stream=True)
    with pytest.raises(glassbox.LimitExceeded, match="max_context"):
        gpt2("x", max_new_tokens=100000)
    with pytest.raises(glassbox.NotFound, match="no chat template"):
        gpt2(MESSAGES)  # gpt2_tiny has none: never a generic fallback
    with pytest.raises(glassbox.InvalidInput, match="needs a decoder model directory"):
        glassbox.pipeline("text-generation")
    with pytest.raises(glassbox.GlassboxError):
        glassbox.pipeline("text-generation", model("gpt2_tiny") + "/missing")
    assert gpt2("x", max_new_tokens=2)[0]["usage"]["completion_tokens"] <= 2  # still usable after errors


def test_cli_interactive_chat_on_a_terminal(tmp_path):
    """`glassbox generate DIR --chat` with no file and a terminal on stdin: each line is a user turn, each reply
    is streamed to stdout and kept in the conversation; it equals --chat FILE on the conversation so far."""
    import pty
    import subprocess

    from conftest import child_env, cli_path

    master, slave = pty.openpty()
    p = subprocess.Popen([cli_path(), "generate", model("llama_tiny"), "--chat", "--max-new-tokens", "5", "--threads", "1"],
                         stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=child_env())
    os.close(slave)
    os.write(master, "hello\nagain, été\n".encode("utf-8") + b"\x04")  # two turns, then end of input
    out, _ = p.communicate(timeout=600)
    os.close(master)
    assert p.returncode == 0
    f = tmp_path / "m.json"
    turns = [{"role": "user", "content": "hello"}]
    f.write_text(json.dumps(turns), encoding="utf-8")
    first = cli_json(model("llama_tiny"), "--chat", str(f), "--max-new-tokens", "5")[0]["text"]
    turns += [{"role": "assistant", "content": first}, {"role": "user", "content": "again, été"}]
    f.write_text(json.dumps(turns), encoding="utf-8")
    second = cli_json(model("llama_tiny"), "--chat", str(f), "--max-new-tokens", "5")[0]["text"]
    assert out.decode("utf-8") == first + "\n" + second + "\n"
    # Not a terminal and no file: refused, naming the fix.
    r = subprocess.run([cli_path(), "generate", model("llama_tiny"), "--chat"], input="", capture_output=True, text=True,
                       env=child_env())
    assert r.returncode != 0 and "messages file" in r.stderr
