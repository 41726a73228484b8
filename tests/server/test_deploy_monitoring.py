"""The alert rules and the Grafana dashboard in deploy/ use only metric names the server exports: the text and
tensor families of a server with the default model, the generation families of one serving a tiny decoder."""
import json
import os
import re
import subprocess

import requests
import yaml
from prometheus_client.parser import text_string_to_metric_families

from conftest import ROOT
from test_generation import decoders  # noqa: F401 (the fixture: the tiny decoders of scripts/make_decoder_models.py)

RULES = os.path.join(ROOT, "deploy", "prometheus", "alerts.yml")
DASHBOARD = os.path.join(ROOT, "deploy", "grafana", "glassbox-dashboard.json")
NAME = re.compile(r"\b((?:glassbox|process)_[a-z_]+)")


def exported(server):
    names = set()
    for fam in text_string_to_metric_families(requests.get(server.url("/metrics"), timeout=30).text):
        for smp in fam.samples:
            names.add(smp.name)
        names.add(fam.name)
    return names


def test_promtool_checks_the_rules():
    r = subprocess.run(["promtool", "check", "rules", RULES], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_rules_and_dashboard_use_exported_names(text_server, start_server, decoders):  # noqa: F811
    # Every family appears once the server has served a classification (a generation, for the decoder's).
    requests.post(text_server.url("/predict"), json={"inputs": "Guten Morgen", "model": "langid"}, timeout=30)
    names = exported(text_server)
    gen = start_server([os.path.join(decoders, "llama_tiny"), "--threads", "1"], timeout=120)
    r = requests.post(gen.url("/v1/completions"), json={"model": "llama_tiny", "prompt": "Once upon a time",
                                                       "max_tokens": 3, "temperature": 0}, timeout=120)
    assert r.status_code == 200, r.text
    gen_names = exported(gen)
    assert "glassbox_time_to_first_token_seconds" in gen_names, sorted(gen_names)
    names |= gen_names
    with open(RULES) as f:
        rules = yaml.safe_load(f)
    exprs = [r["expr"] for g in rules["groups"] for r in g["rules"]]
    with open(DASHBOARD) as f:
        dash = json.load(f)
    exprs += [t["expr"] for p in dash["panels"] for t in p["targets"]]
    exprs.append(dash["templating"]["list"][1]["query"])
    used = {n for e in exprs for n in NAME.findall(e)}
    assert used, "no metric names found"
    def known(n):  # a declared family (HELP/TYPE) counts before its first sample
        base = re.sub(r"_(total|bucket|sum|count)$", "", n)
        return n in names or base in names
    missing = sorted(n for n in used if not known(n))
    assert not missing, missing
