"""Generation models over the Open Inference Protocol (Triton's generate convention): BYTES
"text_input" [N] -> BYTES "text_output" [N] through the same GenerationWorker as /v1/completions,
request parameters mapped onto the declared generation policy, the effective policy echoed (the
X-Glassbox-Policy header and the response parameter "policy"), refusals in OIP's {"error"} shape,
and the model metadata naming text_input / text_output. Greedy text is compared with
`glassbox generate --json` (the same engine through the CLI, not through the server).
"""
import json
import os
import subprocess

import pytest
import requests

from conftest import GLASSBOX, SLOW
from test_generation import PROMPT, SHORT, completion, decoders, metric, scrape  # noqa: F401 (decoders: the fixture)
from test_grpc import pb  # noqa: F401 (the fixture: stubs generated from inference.proto)


@pytest.fixture(scope="module")
def oip_gen_server(decoders):  # noqa: F811
    from conftest import Server
    s = Server([os.path.join(decoders, "llama_tiny"), "--threads", "1"], timeout=120)
    yield s
    s.stop()


def infer(server, texts, parameters=None, name="text_input", datatype="BYTES", shape=None, model="llama_tiny"):
    body = {"inputs": [{"name": name, "datatype": datatype, "shape": shape or [len(texts)], "data": texts}]}
    if parameters is not None:
        body["parameters"] = parameters
    return requests.post(server.url(f"/v2/models/{model}/infer"), json=body, timeout=120 * SLOW)


def cli_greedy(decoders, prompt, n):  # noqa: F811
    cli = subprocess.run([GLASSBOX, "generate", os.path.join(decoders, "llama_tiny"), prompt, "--json", "--greedy",
                          "--max-new-tokens", str(n), "--threads", "1"], capture_output=True, text=True, timeout=120 * SLOW)
    assert cli.returncode == 0, cli.stderr
    return json.loads(cli.stdout.strip().splitlines()[-1])


def test_greedy_text_output_equals_glassbox_generate(oip_gen_server, decoders):  # noqa: F811
    r = infer(oip_gen_server, [PROMPT], {"max_tokens": 8, "temperature": 0})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["model_name"] == "llama_tiny"
    out = {o["name"]: o for o in body["outputs"]}
    assert set(out) == {"text_output"}
    assert out["text_output"]["datatype"] == "BYTES" and out["text_output"]["shape"] == [1]
    want = cli_greedy(decoders, PROMPT, 8)
    assert want["text"], "the CLI generated no text: the comparison would prove nothing"
    assert out["text_output"]["data"] == [want["text"]]
    # The effective policy: header and response parameter carry the same compact form, with sources.
    header = json.loads(r.headers["X-Glassbox-Policy"])
    assert header == json.loads(body["parameters"]["policy"])
    assert header["max_new_tokens"] == [8, "request"] and header["do_sample"] == [False, "request"]
    # The same request through /v1/completions gives the same text (one worker, one path).
    c = completion(oip_gen_server, prompt=PROMPT, max_tokens=8, temperature=0)
    assert c.status_code == 200 and c.json()["choices"][0]["text"] == want["text"]


def test_n_prompts_answer_n_texts_in_order(oip_gen_server, decoders):  # noqa: F811
    r = infer(oip_gen_server, [SHORT, PROMPT], {"max_new_tokens": 5, "temperature": 0})
    assert r.status_code == 200, r.text
    data = r.json()["outputs"][0]["data"]
    assert data == [cli_greedy(decoders, SHORT, 5)["text"], cli_greedy(decoders, PROMPT, 5)["text"]]
    # Each prompt drew its own seed (none was sent), so the echo is one policy per prompt, in order.
    policies = json.loads(r.json()["parameters"]["policy"])
    assert json.loads(r.headers["X-Glassbox-Policy"]) == policies
    assert isinstance(policies, list) and len(policies) == 2
    assert all(p["max_new_tokens"] == [5, "request"] and p["seed"][1].startswith("glassbox default") for p in policies)
    same = infer(oip_gen_server, [SHORT, PROMPT], {"max_new_tokens": 5, "temperature": 0, "seed": 3})
    assert json.loads(same.json()["parameters"]["policy"])["seed"] == [3, "request"]  # one policy for both


def test_parameters_map_onto_the_policy(oip_gen_server):
    r = infer(oip_gen_server, [PROMPT], {"max_tokens": 4, "temperature": 0.7, "top_k": 5, "top_p": 0.9, "seed": 11,
                                         "stop": ["\n\n"]})
    assert r.status_code == 200, r.text
    p = json.loads(r.headers["X-Glassbox-Policy"])
    assert p["do_sample"] == [True, "request"] and p["temperature"] == [0.7, "request"]
    assert p["top_k"] == [5, "request"] and p["top_p"] == [0.9, "request"] and p["seed"] == [11, "request"]
    assert "\n\n" in p["stop_strings"][0]
    again = infer(oip_gen_server, [PROMPT], {"max_tokens": 4, "temperature": 0.7, "top_k": 5, "top_p": 0.9, "seed": 11,
                                             "stop": ["\n\n"]})
    assert again.json()["outputs"] == r.json()["outputs"]  # seeded sampling is reproducible


def test_refusals_in_oip_shape(oip_gen_server):
    ended_before = metric(scrape(oip_gen_server), "glassbox_generation_requests_total", model="llama_tiny", finish_reason="client_gone")
    cases = [
        (infer(oip_gen_server, [PROMPT], name="text"), "text_input"),
        (infer(oip_gen_server, [1, 2], datatype="INT64"), "not BYTES"),
        (infer(oip_gen_server, [PROMPT], {"max_tokens": -1}), "max_tokens"),
        (infer(oip_gen_server, [PROMPT], {"logprobs": True}), "not a generation field"),
        (infer(oip_gen_server, [PROMPT], {"max_tokens": 4, "max_new_tokens": 5}), "differ"),
        (infer(oip_gen_server, [PROMPT], {"max_tokens": 500}), "max_context 256"),
        (infer(oip_gen_server, [SHORT, PROMPT], {"max_tokens": 500}), "max_context 256"),
        # The first prompt fits and is queued, the second can never fit: the answer is the refusal, not a partial output.
        (infer(oip_gen_server, [SHORT, PROMPT * 4], {"max_tokens": 230}), "max_context 256"),
    ]
    for r, needle in cases:
        assert r.status_code == 400, r.text
        assert set(r.json()) == {"error"}, r.text  # OIP's error shape
        assert needle in r.json()["error"], r.text
    body = {"inputs": [{"name": "text_input", "datatype": "BYTES", "shape": [1], "data": [PROMPT]}],
            "outputs": [{"name": "logits"}]}
    r = requests.post(oip_gen_server.url("/v2/models/llama_tiny/infer"), json=body, timeout=30)
    assert r.status_code == 400 and "no output 'logits'" in r.json()["error"]
    # The server still answers after the refusals, and the prompt queued before its sibling was refused was ended.
    assert infer(oip_gen_server, [SHORT], {"max_tokens": 2}).status_code == 200
    ended = metric(scrape(oip_gen_server), "glassbox_generation_requests_total", model="llama_tiny", finish_reason="client_gone")
    assert ended == ended_before + 1


def test_metadata_lists_text_input_and_text_output(oip_gen_server):
    r = requests.get(oip_gen_server.url("/v2/models/llama_tiny"), timeout=30)
    assert r.status_code == 200, r.text
    m = r.json()
    assert m["inputs"] == [{"name": "text_input", "datatype": "BYTES", "shape": [-1]}]
    assert m["outputs"] == [{"name": "text_output", "datatype": "BYTES", "shape": [-1]}]


def test_grpc_and_binary_rest_take_the_same_path(pb, decoders):  # noqa: F811
    """gRPC ModelInfer and the REST binary extension reach the same worker: same greedy text as JSON REST."""
    from test_grpc import GrpcServer, bytes_raw, grpc_outputs, http_binary_infer
    s = GrpcServer(pb, [os.path.join(decoders, "llama_tiny"), "--threads", "1"])
    try:
        pb2 = s.pb2
        want = infer(s.http, [PROMPT], {"max_tokens": 6, "temperature": 0})
        assert want.status_code == 200, want.text
        text = want.json()["outputs"][0]["data"][0]
        assert text
        meta = s.stub.ModelMetadata(pb2.ModelMetadataRequest(name="llama_tiny"), timeout=30)
        assert [(t.name, t.datatype, list(t.shape)) for t in meta.inputs] == [("text_input", "BYTES", [-1])]
        assert [(t.name, t.datatype, list(t.shape)) for t in meta.outputs] == [("text_output", "BYTES", [-1])]
        T = pb2.ModelInferRequest.InferInputTensor
        req = pb2.ModelInferRequest(model_name="llama_tiny", inputs=[
            T(name="text_input", datatype="BYTES", shape=[1], contents=pb2.InferTensorContents(bytes_contents=[PROMPT.encode()]))])
        req.parameters["max_tokens"].int64_param = 6
        req.parameters["temperature"].double_param = 0.0
        resp = s.stub.ModelInfer(req, timeout=120 * SLOW)
        out = grpc_outputs(resp)
        assert out["text_output"][:2] == ("BYTES", [1]) and out["text_output"][2] == bytes_raw([text.encode()])
        assert json.loads(resp.parameters["policy"].string_param)["max_new_tokens"] == [6, "request"]
        _, binary = http_binary_infer(s.http, "llama_tiny", [("text_input", "BYTES", [1], bytes_raw([PROMPT.encode()]))],
                                      ["text_output"])
        # No parameters: the model's declared policy (greedy: its generation_config does not sample) on both.
        plain = infer(s.http, [PROMPT])
        assert plain.status_code == 200, plain.text
        assert binary["text_output"] == ("BYTES", [1], bytes_raw([plain.json()["outputs"][0]["data"][0].encode()]))
        assert json.loads(plain.headers["X-Glassbox-Policy"])["do_sample"][0] is False
    finally:
        s.stop()
