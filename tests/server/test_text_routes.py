"""TEI-compatible routes and truncation that is never silent."""
import json
import subprocess

import numpy as np
import requests

from conftest import GLASSBOX, cli_json_lines

LONG = "a " * 400  # ~800 byte tokens: over langid's max_length of 256


def test_predict_single_batch_pairs_topk_raw(text_server):
    r = requests.post(text_server.url("/predict"), json={"inputs": "Guten Morgen, wie geht es dir?", "model": "langid"}, timeout=30)
    assert r.status_code == 200, r.text
    j = r.json()
    assert len(j) == 1 and j[0]["label"] == "de" and 0.5 < j[0]["score"] <= 1
    cli = cli_json_lines(["classify", "--top-k", "3", "Guten Morgen, wie geht es dir?", "Ho dimenticato le chiavi."])
    r = requests.post(text_server.url("/predict"), json={"inputs": ["Guten Morgen, wie geht es dir?", "Ho dimenticato le chiavi."],
                                                         "top_k": 3, "model": "langid"}, timeout=30)
    j = r.json()
    assert [[e["label"] for e in row] for row in j] == [[l["label"] for l in c["labels"]] for c in cli]
    for row, c in zip(j, cli):
        assert np.allclose([e["score"] for e in row], [l["score"] for l in c["labels"]], atol=1e-6)
    raw = requests.post(text_server.url("/predict"), json={"inputs": "Guten Morgen", "raw_scores": True, "model": "langid"},
                        timeout=30).json()
    assert raw[0]["label"] == "de" and raw[0]["score"] > 1  # a logit, not a probability
    pairs = requests.post(text_server.url("/predict"), json={"inputs": [["Guten Morgen", "wie geht es dir?"]], "model": "langid"},
                          timeout=30)
    assert pairs.status_code == 200 and len(pairs.json()) == 1


def test_predict_says_when_it_abstains(text_server):
    # langid declares glassbox.json abstain_below 0.5: the top entry of a text under it carries "abstained": true,
    # the others have no such key; labels and scores are what the CLI gives.
    texts = ["Merci beaucoup", "Guten Morgen, wie geht es dir?"]
    r = requests.post(text_server.url("/predict"), json={"inputs": texts, "model": "langid", "top_k": 2}, timeout=30)
    assert r.status_code == 200, r.text
    got = r.json()
    cli = cli_json_lines(["classify", "--top-k", "2"] + texts)
    for row, c in zip(got, cli):
        assert [e["label"] for e in row] == [l["label"] for l in c["labels"]]
        assert row[0].get("abstained", False) == c["abstained"] == (row[0]["score"] < 0.5)
        assert all("abstained" not in e for e in row[1:])
    assert got[0][0]["abstained"] is True and "abstained" not in got[1][0]


def test_predict_needs_model_when_several(text_server):
    # langid and langid_strict are both classifiers: the request must name one.
    r = requests.post(text_server.url("/predict"), json={"inputs": "hello"}, timeout=30)
    assert r.status_code == 400 and "\"model\"" in r.json()["error"]
    r = requests.post(text_server.url("/embed"), json={"inputs": "hello"}, timeout=30)  # one embedder: the default
    assert r.status_code == 200
    r = requests.post(text_server.url("/embed"), json={"inputs": "hello", "model": "langid"}, timeout=30)
    assert r.status_code == 400 and "/predict" in r.json()["error"]


def test_embed_matches_cli_and_normalize(text_server, models):
    texts = ["The weather is lovely today.", "Ik heb mijn fiets laten repareren."]
    r = requests.post(text_server.url("/embed"), json={"inputs": texts}, timeout=30)
    assert r.status_code == 200
    got = np.array(r.json())
    cli = np.array([c["vector"] for c in cli_json_lines(["embed", models["langid_embed"]] + texts)])
    assert got.shape == cli.shape and np.allclose(got, cli, atol=1e-5)
    n = np.array(requests.post(text_server.url("/embed"), json={"inputs": texts, "normalize": True}, timeout=30).json())
    assert np.allclose(np.linalg.norm(n, axis=1), 1, atol=1e-5)
    assert np.allclose(n, cli / np.linalg.norm(cli, axis=1, keepdims=True), atol=1e-5)


def test_tokenize_and_decode_match_cli(text_server, models):
    text = "Grüße aus Köln"
    r = requests.post(text_server.url("/tokenize"), json={"inputs": text, "model": "langid"}, timeout=30)
    assert r.status_code == 200
    toks = r.json()[0]
    enc = cli_json_lines(["encode", "--tokenizer", models["langid"] + "/tokenizer.json", "--offsets", "bytes"],
                         json.dumps({"text": text}) + "\n")[0]
    assert [t["id"] for t in toks] == enc["ids"]
    assert [[t["start"], t["stop"]] for t in toks] == enc["offsets"]
    assert [t["special"] for t in toks] == [bool(m) for m in enc["special_tokens_mask"]]
    for t in toks:
        if not t["special"]:
            assert t["text"] == text.encode()[t["start"]:t["stop"]].decode("utf-8", "replace") or t["text"]
    d = requests.post(text_server.url("/decode"), json={"ids": enc["ids"], "model": "langid"}, timeout=30)
    assert d.status_code == 200
    cli = cli_json_lines(["decode", "--tokenizer", models["langid"] + "/tokenizer.json", "--skip-special-tokens", "true"],
                         json.dumps({"ids": enc["ids"]}) + "\n")[0]
    assert d.json() == cli["text"]
    bad = requests.post(text_server.url("/decode"), json={"ids": [999999], "model": "langid"}, timeout=30)
    assert bad.status_code == 400


def test_info_and_health(start_server, models):
    s = start_server([models["langid"]])
    info = requests.get(s.url("/info"), timeout=10).json()
    assert info["model_id"] == "langid" and info["max_input_length"] == 256
    assert info["model_type"]["classifier"]["id2label"]["2"] == "de"
    assert requests.get(s.url("/health"), timeout=10).status_code == 200


def test_model_explain_is_the_clis(start_server, models):
    # One builder (diag::explain_model_json) for `glassbox explain --json MODEL` and the explain route: the
    # route's model part carries the same pipeline decisions (with their risks) and op decisions. bf16 makes
    # the GEMMs on constant weights say what precision does to them (Op::precision_decision).
    s = start_server([models["langid"], "--precision", "bf16"])
    ex = requests.get(s.url("/v2/models/langid/explain"), timeout=30).json()["model"]
    r = subprocess.run([GLASSBOX, "explain", "--json", "--precision", "bf16", models["langid"]], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    cli = json.loads(r.stdout)
    assert ex["schema"] == cli["schema"]
    assert ex["pipeline"] == cli["pipeline"] and any("risk" in d for d in cli["pipeline"]) == any("risk" in d for d in ex["pipeline"])
    assert cli["op_decisions"] and ex["op_decisions"] == cli["op_decisions"]
    assert all(d["decision"].startswith(("bf16:", "fp32:")) for d in cli["op_decisions"]), cli["op_decisions"]


def test_overlong_input_is_413_naming_tokens_limit_and_field(text_server):
    for path, body in (("/predict", {"inputs": LONG, "model": "langid_strict"}),
                       ("/v2/models/langid_strict/infer", {"inputs": [{"name": "text", "datatype": "BYTES", "shape": [1], "data": [LONG]}]})):
        r = requests.post(text_server.url(path), json=body, timeout=30)
        assert r.status_code == 413, r.text
        err = r.json()["error"]
        assert "tokens" in err and "max_length 256" in err and "truncate" in err


def test_truncation_on_request_reports_dropped_tokens(text_server):
    r = requests.post(text_server.url("/predict"), json={"inputs": LONG, "model": "langid_strict", "truncate": True}, timeout=30)
    assert r.status_code == 200
    dropped = int(r.headers["X-Glassbox-Tokens-Dropped"])
    assert dropped > 0
    body = {"inputs": [{"name": "text", "datatype": "BYTES", "shape": [1], "data": [LONG]}], "parameters": {"truncate": True}}
    r = requests.post(text_server.url("/v2/models/langid_strict/infer"), json=body, timeout=30)
    assert r.status_code == 200 and r.json()["parameters"]["tokens_dropped"] == dropped
    # The model directory's declared policy (langid: longest_first) allows it without the field, and still says so.
    r = requests.post(text_server.url("/predict"), json={"inputs": LONG, "model": "langid"}, timeout=30)
    assert r.status_code == 200 and int(r.headers["X-Glassbox-Tokens-Dropped"]) == dropped
    r = requests.post(text_server.url("/embed"), json={"inputs": LONG}, timeout=30)
    assert r.status_code == 413
    r = requests.post(text_server.url("/embed"), json={"inputs": LONG, "truncate": True}, timeout=30)
    assert r.status_code == 200 and int(r.headers["X-Glassbox-Tokens-Dropped"]) == dropped


def test_openai_embeddings_shape_over_raw_http(text_server):
    r = requests.post(text_server.url("/v1/embeddings"), json={"input": ["one", "two"], "model": "langid_embed"}, timeout=30)
    assert r.status_code == 200
    j = r.json()
    assert j["object"] == "list" and [d["index"] for d in j["data"]] == [0, 1] and j["model"] == "langid_embed"
    assert j["usage"]["prompt_tokens"] == j["usage"]["total_tokens"] > 0
    r = requests.post(text_server.url("/v1/embeddings"), json={"input": "x", "model": "nope"}, timeout=30)
    assert r.status_code == 404 and "nope" in r.json()["error"]["message"]
    r = requests.post(text_server.url("/v1/embeddings"), json={"input": [[1, 2, 3]], "model": "langid_embed"}, timeout=30)
    assert r.status_code == 400
