"""serve --numerics-check: observed engine runs count the first node that wrote NaN/Inf, even when the
outputs hide it (hidden_nan: Log makes NaN, a Where replaces it), without changing any answer."""
import re

import requests

from conftest import GLASSBOX, Server, SLOW  # noqa: F401

import subprocess


def infer(s, x):
    body = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [len(x)], "data": x}]}
    r = requests.post(s.url("/v2/models/hidden_nan/infer"), json=body, timeout=30 * SLOW)
    assert r.status_code == 200, r.text
    return r.json()["outputs"][0]["data"]


def counter(s, name, **labels):
    text = requests.get(s.url("/metrics"), timeout=30 * SLOW).text
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name + "{"):
            continue
        got = dict(re.findall(r'(\w+)="([^"]*)"', line[line.index("{"):line.index("}")]))
        if all(got.get(k) == v for k, v in labels.items()):
            total += float(line.rsplit(" ", 1)[1])
    return total


def test_all_counts_the_hidden_nan_by_node_and_keeps_the_answer(start_server, models):
    s = start_server([models["hidden_nan"], "--numerics-check", "all"])
    assert infer(s, [-1.0, 1.0]) == [0.0, 0.0]  # NaN hidden by the Where: the answer is the graph's
    assert counter(s, "glassbox_nonfinite_internal_total", model="hidden_nan", node="log", kind="NaN") == 1
    assert counter(s, "glassbox_nonfinite_outputs_total", model="hidden_nan") == 0
    assert infer(s, [2.0, 3.0]) == [0.6931471824645996, 1.0986123085021973]
    assert counter(s, "glassbox_nonfinite_internal_total", model="hidden_nan") == 1  # finite run: nothing added
    assert re.search(r"numerics check: model hidden_nan .*node 'log' \(Log\) wrote NaN into 'l'", s.log), s.log


def test_sampled_observes_the_first_run_and_one_in_n(start_server, models):
    s = start_server([models["hidden_nan"], "--numerics-check", "sampled", "--numerics-sample-every", "3"])
    for _ in range(7):  # sequential: one engine run each; runs 1, 4 and 7 are observed
        assert infer(s, [-1.0]) == [0.0]
    assert counter(s, "glassbox_nonfinite_internal_total", model="hidden_nan", node="log") == 3


def test_off_sees_only_outputs(start_server, models):
    s = start_server([models["hidden_nan"], "--numerics-check", "off"])
    assert infer(s, [-1.0]) == [0.0]
    assert counter(s, "glassbox_nonfinite_internal_total") == 0


def test_text_models_answer_the_same_when_observed(start_server, models):
    """An observed text batch runs padded (run_unpadded takes no observer): same labels and scores."""
    texts = ["Guten Morgen, wie geht es dir?", "Ho dimenticato le chiavi di casa in ufficio, purtroppo.", "Hi"]
    answers = []
    for mode in ("all", "off"):
        s = start_server([models["langid"], "--numerics-check", mode])
        r = requests.post(s.url("/predict"), json={"inputs": texts, "raw_scores": True, "top_k": 3}, timeout=30 * SLOW)
        assert r.status_code == 200, r.text
        answers.append(r.json())
        assert counter(s, "glassbox_nonfinite_internal_total") == 0
        s.stop()
    assert len(answers[0]) == len(texts)
    for a, b in zip(*answers):  # per text: its top 3 labels and logits
        assert [x["label"] for x in a] == [x["label"] for x in b]
        for x, y in zip(a, b):
            assert abs(x["score"] - y["score"]) <= 1e-5 * max(1.0, abs(y["score"]))


def test_bad_values_are_refused_at_start():
    for flags, what in ((["--numerics-check", "sometimes"], "numerics_check 'sometimes' is unknown"),
                        (["--numerics-sample-every", "0"], "numerics_sample_every must be at least 1")):
        r = subprocess.run([GLASSBOX, "serve", "--port", "0"] + flags, capture_output=True, text=True, timeout=60 * SLOW)
        assert r.returncode != 0 and what in r.stderr, r.stderr
