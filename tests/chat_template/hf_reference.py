#!/usr/bin/env python3
"""Reference chat-template renderer: python3-jinja2 set up the way Hugging Face transformers'
apply_chat_template(tokenize=False) sets it up, written from transformers' documented behaviour
(src/transformers/utils/chat_template_utils.py and tokenization_utils_base.py):

  * ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
    extensions=[<generation tag>, jinja2.ext.loopcontrols]);
  * filters["tojson"] = json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False);
  * globals raise_exception(msg) -> TemplateError(msg), strftime_now(fmt) -> datetime.now().strftime(fmt)
    (here: a fixed instant and a declared zone, so the golden is reproducible);
  * template choice: a named list picks the requested name, else "tool_use" when tools are given and
    present, else "default"; chat_template.jinja wins over tokenizer_config.json's chat_template;
  * render(messages=..., tools=tools-or-None, documents=None, add_generation_prompt=...,
    **special_tokens_map, **kwargs), special_tokens_map = the set, non-empty special tokens
    (AddedToken objects as their content), special_tokens_map.json overriding tokenizer_config.json.

Used as a module by compare_with_jinja2.py, or as a CLI:
  hf_reference.py MODEL_DIR --messages FILE [--tools FILE] [--add-generation-prompt true|false]
                  [--template-name NAME] [--var KEY=JSON]... [--now-micros N] [--time-zone utc|local]
"""
import argparse
import datetime
import json
import os
import sys

import jinja2
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

SPECIAL_TOKEN_KEYS = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"]


class GenerationTag(Extension):
    """transformers' AssistantTracker without the tracking: {% generation %} renders its body."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def make_environment(now_micros=None, local_zone=False):
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        if now_micros is None:
            now = datetime.datetime.now() if local_zone else datetime.datetime.utcnow()
        else:
            ts = now_micros / 1e6
            now = datetime.datetime.fromtimestamp(ts) if local_zone else \
                datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).replace(tzinfo=None)
            now = now.replace(microsecond=now_micros % 1000000)
        return now.strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationTag, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def _token_text(v):
    if isinstance(v, str):
        return v
    if isinstance(v, dict) and isinstance(v.get("content"), str):
        return v["content"]
    return None


def _collect_special_tokens(cfg, out):
    for key in SPECIAL_TOKEN_KEYS:
        if key in cfg:
            t = _token_text(cfg[key])
            if t:
                out[key] = t
            else:
                out.pop(key, None)
    if isinstance(cfg.get("additional_special_tokens"), list):
        items = [t for t in (_token_text(v) for v in cfg["additional_special_tokens"]) if t is not None]
        if items:
            out["additional_special_tokens"] = items
        else:
            out.pop("additional_special_tokens", None)
    if isinstance(cfg.get("extra_special_tokens"), dict):
        for k, v in cfg["extra_special_tokens"].items():
            t = _token_text(v)
            if t:
                out[k] = t


def load_model_dir(model_dir):
    """Returns (templates: str or dict name->str, special_tokens: dict)."""
    cfg = {}
    path = os.path.join(model_dir, "tokenizer_config.json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            cfg = json.load(f)
    special = {}
    _collect_special_tokens(cfg, special)
    stm = os.path.join(model_dir, "special_tokens_map.json")
    if os.path.exists(stm):
        with open(stm, encoding="utf-8") as f:
            _collect_special_tokens(json.load(f), special)
    jinja_path = os.path.join(model_dir, "chat_template.jinja")
    if os.path.exists(jinja_path):
        with open(jinja_path, encoding="utf-8", newline="") as f:
            templates = f.read()
        extra_dir = os.path.join(model_dir, "additional_chat_templates")
        if os.path.isdir(extra_dir):
            named = {"default": templates}
            for name in sorted(os.listdir(extra_dir)):
                if name.endswith(".jinja"):
                    with open(os.path.join(extra_dir, name), encoding="utf-8", newline="") as f:
                        named[name[:-len(".jinja")]] = f.read()
            if len(named) > 1:
                templates = named
        return templates, special
    t = cfg.get("chat_template")
    if t is None:
        raise ValueError("no chat template")
    if isinstance(t, list):
        t = {item["name"]: item["template"] for item in t}
    return t, special


def choose_template(templates, name, tools):
    if isinstance(templates, dict):
        if name is not None and name in templates:
            return templates[name]
        if name is None:
            if tools is not None and "tool_use" in templates:
                return templates["tool_use"]
            if "default" in templates:
                return templates["default"]
        raise ValueError("no such template")
    if name not in (None, "default"):
        raise ValueError("no such template")
    return templates


def render_text(template, config, messages, tools=None, add_generation_prompt=False, variables=None, now_micros=None):
    """Renders a template text with the special tokens of a tokenizer_config.json object."""
    special = {}
    _collect_special_tokens(config, special)
    compiled = make_environment(now_micros).from_string(template)
    return compiled.render(messages=messages, tools=tools, documents=None,
                           add_generation_prompt=add_generation_prompt, **{**special, **(variables or {})})


def render(model_dir, messages, tools=None, add_generation_prompt=False, template_name=None, variables=None,
           now_micros=None, local_zone=False):
    templates, special = load_model_dir(model_dir)
    source = choose_template(templates, template_name, tools)
    compiled = make_environment(now_micros, local_zone).from_string(source)
    kwargs = {**special, **(variables or {})}
    return compiled.render(messages=messages, tools=tools, documents=None,
                           add_generation_prompt=add_generation_prompt, **kwargs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir")
    ap.add_argument("--messages", required=True)
    ap.add_argument("--tools")
    ap.add_argument("--add-generation-prompt", default="false", choices=["true", "false"])
    ap.add_argument("--template-name")
    ap.add_argument("--var", action="append", default=[])
    ap.add_argument("--now-micros", type=int)
    ap.add_argument("--time-zone", default="utc", choices=["utc", "local"])
    a = ap.parse_args()
    with open(a.messages, encoding="utf-8") as f:
        messages = json.load(f)
    tools = None
    if a.tools:
        with open(a.tools, encoding="utf-8") as f:
            tools = json.load(f)
    variables = {}
    for kv in a.var:
        k, v = kv.split("=", 1)
        variables[k] = json.loads(v)
    try:
        out = render(a.model_dir, messages, tools, a.add_generation_prompt == "true", a.template_name, variables,
                     a.now_micros, a.time_zone == "local")
    except Exception as e:  # noqa: BLE001 - the reference reports every failure the same way
        sys.stderr.write(f"{type(e).__name__}: {e}\n")
        return 1
    sys.stdout.buffer.write(out.encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
