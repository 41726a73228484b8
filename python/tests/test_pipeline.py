"""glassbox.pipeline() against `glassbox classify` / `glassbox embed` (the C++ CLI) on the embedded
default model (models/langid) and a feature-extraction directory around the torch.onnx BERT
export; explain() against `glassbox explain MODEL_DIR --json`."""

import json
import shutil

import numpy as np
import pytest

import glassbox
from conftest import ROOT, generated_model, run_cli

TEXTS = ["Guten Morgen, wie geht es dir?", "The weather is lovely today, let's go for a walk.",
         "Je voudrais un café et un croissant, s'il vous plaît.", "¿Dónde está la biblioteca más cercana?",
         "Ho dimenticato le chiavi di casa in ufficio.", "Я очень люблю читать книги по вечерам.",
         "今日はとても暑いですね。", "我喜欢在周末和朋友一起喝茶。", "Bugün hava çok güzel, parka gidelim mi?"]


@pytest.fixture(scope="module")
def langid():
    return glassbox.pipeline("text-classification", threads=1)


def cli_jsonl(args, texts):
    stdin = "".join(json.dumps({"text": t}) + "\n" for t in texts)
    return [json.loads(line) for line in run_cli(args, stdin).splitlines() if line.strip()]


def test_classify_equals_cli(langid):
    k = len(langid.labels)
    cli = cli_jsonl(["classify", "--threads", "1", "--top-k", str(k)], TEXTS)
    ours = langid.details(TEXTS, top_k=k)
    assert len(cli) == len(ours) == len(TEXTS)
    for c, o in zip(cli, ours):
        assert o["label"] == c["label"] and o["tokens"] == c["tokens"] and o["tokens_dropped"] == c["tokens_dropped"]
        assert [x["label"] for x in o["labels"]] == [x["label"] for x in c["labels"]]
        np.testing.assert_allclose([x["score"] for x in o["labels"]], [x["score"] for x in c["labels"]], rtol=0,
                                   atol=1e-6)


def test_abstained_says_a_low_top_score_as_the_cli_does(langid):
    # langid declares glassbox.json abstain_below 0.5: each text says whether its top score is under it.
    texts = ["Merci beaucoup", "Guten Morgen, wie geht es dir?"]
    ours = langid.details(texts)
    cli = cli_jsonl(["classify", "--threads", "1"], texts)
    assert [o["abstained"] for o in ours] == [c["abstained"] for c in cli] == [o["labels"][0]["score"] < 0.5 for o in ours]
    assert ours[0]["abstained"] and not ours[1]["abstained"]


def test_classify_result_shapes(langid):
    one = langid(TEXTS[0])
    assert isinstance(one, list) and len(one) == 1 and set(one[0]) == {"label", "score"}
    assert one[0]["label"] == "de" and 0 < one[0]["score"] <= 1
    many = langid(TEXTS[:3])
    assert [r["label"] for r in many] == ["de", "en", "fr"]
    top3 = langid(TEXTS[0], top_k=3)
    assert len(top3) == 3 and top3[0] == one[0] and top3[0]["score"] >= top3[1]["score"] >= top3[2]["score"]
    ranked = langid(TEXTS[:2], top_k=2)
    assert len(ranked) == 2 and all(len(r) == 2 for r in ranked)
    assert langid.task == "text-classification" and langid.model_dir == glassbox.default_model_dir()


def test_precision_argument_equals_cli_flag():
    ours = glassbox.pipeline("text-classification", threads=1, precision="int8-dynamic")
    k = len(ours.labels)
    cli = cli_jsonl(["classify", "--threads", "1", "--top-k", str(k), "--precision", "int8-dynamic"], TEXTS)
    got = ours.details(TEXTS, top_k=k)
    assert [o["label"] for o in got] == [c["label"] for c in cli]
    for c, o in zip(cli, got):
        assert [x["label"] for x in o["labels"]] == [x["label"] for x in c["labels"]]
        np.testing.assert_allclose([x["score"] for x in o["labels"]], [x["score"] for x in c["labels"]], rtol=0,
                                   atol=1e-6)
    rows = [d for d in ours.explain()["pipeline"] if d["field"] == "precision"]
    assert rows == [{"field": "precision", "value": "int8-dynamic", "source": "argument precision"}]
    with pytest.raises(glassbox.InvalidInput):
        glassbox.pipeline("text-classification", precision="fp16")


def test_explain_equals_cli(langid):
    ours = langid.explain()
    cli = json.loads(run_cli(["explain", langid.model_dir, "--threads", "1", "--json"]))
    # The process component (heap policy) is the CLI process's own: a library never sets it.
    cli["options"] = [r for r in cli["options"] if r["component"] != "process"]
    # The warm-up plan is what `glassbox serve` would run: a library session has no server.
    cli.pop("warmup", None)
    for row in cli["options"]:  # threads=1 is a keyword argument here, a flag there
        row["source"] = "argument" if row["source"] == "flag" else row["source"]
    assert ours == cli
    assert [r["source"] for r in ours["options"] if r["name"] == "threads"] == ["argument"]
    fields = {d["field"] for d in ours["pipeline"]}
    assert {"task", "max_length", "truncation", "labels"} <= fields
    assert all(d["source"] for d in ours["pipeline"])


def test_overlong_without_policy_is_loud(langid):
    strict = glassbox.pipeline("text-classification", threads=1, truncation="none")
    text = "lorem ipsum dolor sit amet " * 200
    with pytest.raises(glassbox.LimitExceeded) as e:  # the C++ pipeline's kLimitExceeded, as the server's 413
        strict(text)
    assert "max_length" in str(e.value) or "tokens" in str(e.value)
    r = langid.details(text)[0]  # langid's glassbox.json declares longest_first truncation
    assert r["tokens_dropped"] > 0 and r["tokens"] == 256


@pytest.fixture(scope="module")
def embed_dir(tmp_path_factory):
    """bert_tiny_op14 (vocab 1000) with a WordLevel tokenizer of 1000 entries; mean pooling, normalized."""
    d = tmp_path_factory.mktemp("embed")
    shutil.copy(generated_model("bert_tiny_op14"), d / "model.onnx")
    words = []
    for line in open(f"{ROOT}/tests/data/tokenizer/corpus/en.txt", encoding="utf-8"):
        for w in line.lower().split():
            w = "".join(ch for ch in w if ch.isalnum())
            if w and w not in words:
                words.append(w)
    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]"] + words[:996])}
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [
            {"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
             "special": True} for t, i in vocab.items() if t.startswith("[")],
        "normalizer": {"type": "Lowercase"}, "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]},
        "decoder": None, "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"}}
    (d / "tokenizer.json").write_text(json.dumps(tokenizer), encoding="utf-8")
    (d / "config.json").write_text(json.dumps({"max_position_embeddings": 128, "model_type": "bert"}))
    (d / "glassbox.json").write_text(json.dumps({"task": "embed", "pooling": "mean", "normalize": True}))
    return str(d)


def test_embed_equals_cli(embed_dir):
    emb = glassbox.pipeline("feature-extraction", embed_dir, threads=1)
    texts = ["the weather is lovely today", "I forgot my keys at the office", "a"]
    cli = cli_jsonl(["embed", embed_dir, "--threads", "1"], texts)
    vectors = emb(texts)
    assert vectors.dtype == np.float32 and vectors.shape == (3, 64)
    for i, c in enumerate(cli):
        np.testing.assert_allclose(vectors[i], np.asarray(c["vector"], np.float32), rtol=0, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(emb(texts[0]), vectors[0])
    assert [d["tokens"] for d in emb.details(texts)] == [c["tokens"] for c in cli]
    with pytest.raises(glassbox.InvalidInput, match="task"):
        glassbox.pipeline("text-classification", embed_dir)


def test_sentence_transformers_layout_decisions(embed_dir, tmp_path):
    """A sentence-transformers directory (Optimum's onnx/model.onnx, modules.json, 1_Pooling CLS, Normalize) with
    no glassbox.json: the Python pipeline gets the C++ pipeline's decisions, CLS vectors, as the CLI does."""
    d = tmp_path / "st_cls"
    (d / "onnx").mkdir(parents=True)
    shutil.copy(f"{embed_dir}/model.onnx", d / "onnx" / "model.onnx")
    for f in ("tokenizer.json", "config.json"):
        shutil.copy(f"{embed_dir}/{f}", d / f)
    (d / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]))
    (d / "1_Pooling").mkdir()
    (d / "1_Pooling" / "config.json").write_text(json.dumps({
        "word_embedding_dimension": 64, "pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False,
        "pooling_mode_max_tokens": False, "pooling_mode_mean_sqrt_len_tokens": False,
        "pooling_mode_weightedmean_tokens": False, "pooling_mode_lasttoken": False, "include_prompt": True}))
    texts = ["the weather is lovely today", "I forgot my keys at the office"]
    emb = glassbox.pipeline("feature-extraction", str(d), threads=1)
    rows = {r["field"]: r for r in emb.explain()["pipeline"]}
    assert rows["model_file"]["value"] == "onnx/model.onnx"
    assert rows["pooling"]["value"] == "cls" and "1_Pooling/config.json" in rows["pooling"]["source"]
    assert rows["normalize"]["value"] == "true" and "2_Normalize" in rows["normalize"]["source"]
    assert not any("risk" in r for r in rows.values())
    vectors = emb(texts)
    cli = cli_jsonl(["embed", str(d), "--threads", "1"], texts)
    for i, c in enumerate(cli):
        np.testing.assert_allclose(vectors[i], np.asarray(c["vector"], np.float32), rtol=0, atol=1e-6)
    mean = glassbox.pipeline("feature-extraction", embed_dir, threads=1)(texts)  # same model, mean + normalize
    assert np.all(np.abs(np.sum(vectors * mean, axis=1)) < 0.999)
    (d / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": 64,
                                                             "pooling_mode_median_tokens": True}))
    with pytest.raises(glassbox.Unsupported, match="pooling_mode_median_tokens"):
        glassbox.pipeline("feature-extraction", str(d))


def test_weights_cache_argument_equals_cli_flag(embed_dir, tmp_path):
    cache = tmp_path / "cache"
    texts = ["the weather is lovely today", "I forgot my keys at the office"]
    cli = cli_jsonl(["embed", embed_dir, "--threads", "1", "--weights-cache", str(cache)], texts)
    assert len(list(cache.glob("*.gbpw"))) == 1  # the CLI wrote the file after its first run
    emb = glassbox.pipeline("feature-extraction", embed_dir, threads=1, weights_cache=cache)  # maps it
    vectors = emb(texts)
    for i, c in enumerate(cli):
        np.testing.assert_allclose(vectors[i], np.asarray(c["vector"], np.float32), rtol=0, atol=1e-6)
    rows = [d for d in emb.explain()["pipeline"] if d["field"] == "weights_cache"]
    assert rows == [{"field": "weights_cache", "value": str(cache), "source": "argument weights_cache"}]
    with pytest.raises(glassbox.InvalidInput):
        glassbox.pipeline("feature-extraction", embed_dir, weights_cache="")


def test_text_ranking_equals_cli_rerank(tmp_path):
    """pipeline("text-ranking") on a cross-encoder laid out as sentence-transformers saves it gives `glassbox
    rerank`'s scores and order (the scores themselves are checked against ORT and transformers.js by ctest
    pipeline_rerank); a 3-label classifier is refused by name."""
    import subprocess
    subprocess.run(["/usr/bin/python3", f"{ROOT}/scripts/make_cross_encoder.py", "--out", str(tmp_path)],
                   check=True, capture_output=True)
    d = str(tmp_path / "ce_sigmoid")
    query = "Where is the train station?"
    docs = ["A fox is an animal.", "Search for the best coffee near the station, please!", "Hello world"]
    ranker = glassbox.pipeline("text-ranking", d, threads=1)
    rows = {r["field"]: r for r in ranker.explain()["pipeline"]}
    assert rows["score_function"]["value"] == "sigmoid" and "activation_fn" in rows["score_function"]["source"]
    got = ranker(query, docs)
    cli = cli_jsonl(["rerank", d, "--threads", "1", "--query", query], docs)
    assert [g["index"] for g in got] == [c["index"] for c in cli]
    for g, c in zip(got, cli):
        assert g["score"] == pytest.approx(c["score"], rel=1e-6) and g["text"] == docs[g["index"]]
    assert [g["index"] for g in ranker(query, docs, top_n=1)] == [cli[0]["index"]]
    three_labels = _three_label_dir(tmp_path)
    with pytest.raises(glassbox.InvalidInput, match="one logit per pair"):
        glassbox.pipeline("text-ranking", three_labels, threads=1)


def _three_label_dir(tmp_path):
    d = tmp_path / "three_labels"
    (d / "onnx").mkdir(parents=True)
    shutil.copy(generated_model("bert_tiny_cls_op14"), d / "onnx" / "model.onnx")
    shutil.copy(tmp_path / "ce_sigmoid" / "tokenizer.json", d / "tokenizer.json")
    (d / "config.json").write_text(json.dumps({"id2label": {"0": "a", "1": "b", "2": "c"}, "max_position_embeddings": 128}))
    return str(d)


def test_sparse_model_gives_indices_and_values(tmp_path):
    """A SPLADE directory as sentence-transformers' SparseEncoder saves it (scripts/make_sparse_models.py):
    pipeline("feature-extraction") says output "sparse" and returns the reference's indices exactly and its
    values (torch + numpy, SpladePooling's semantics) within 1e-5 (the project's parity criterion)."""
    import subprocess
    subprocess.run(["/usr/bin/python3", f"{ROOT}/scripts/make_sparse_models.py", "--out", str(tmp_path)],
                   check=True, capture_output=True)
    ref = json.load(open(tmp_path / "splade_max.reference.json"))
    cases = [c for c in ref["cases"] if "prompt_name" not in c][:4]
    extractor = glassbox.pipeline("feature-extraction", str(tmp_path / "splade_max"), threads=1)
    assert extractor.output == "sparse"
    got = extractor([c["text"] for c in cases])
    for g, c in zip(got, cases):
        assert g["indices"].dtype == np.int64 and g["values"].dtype == np.float32
        assert g["indices"].tolist() == c["indices"]
        ref_values = np.array(c["values"])
        assert np.max(np.abs(g["values"] - ref_values)) / max(np.max(np.abs(ref_values)), 1.0) <= 1e-5
    one = extractor(cases[0]["text"])
    assert one["indices"].tolist() == cases[0]["indices"]
    assert extractor.details(cases[0]["text"])[0]["tokens"] == len(cases[0]["ids"])


def test_multi_vector_model_gives_token_vectors(tmp_path):
    """A ColBERT directory as PyLate saves it (scripts/make_colbert_models.py): pipeline("feature-extraction")
    says output "multi_vector" and returns per text a float32 [kept tokens, dim] array, each row with cosine
    >= 0.99999 to the reference (torch + numpy, PyLate's semantics), for documents and (query=True) queries."""
    import subprocess
    subprocess.run(["/usr/bin/python3", f"{ROOT}/scripts/make_colbert_models.py", "--out", str(tmp_path)],
                   check=True, capture_output=True)
    ref = json.load(open(tmp_path / "colbert_pylate.reference.json"))
    extractor = glassbox.pipeline("feature-extraction", str(tmp_path / "colbert_pylate"), threads=1)
    assert extractor.output == "multi_vector"
    for cases, query in ((ref["documents"][:3], False), (ref["queries"], True)):
        got = extractor([c["text"] for c in cases], query=query)
        for g, c in zip(got, cases):
            want = np.array(c["vectors"], dtype=np.float64)
            assert g.dtype == np.float32 and g.shape == want.shape
            cos = np.sum(g * want, axis=1) / (np.linalg.norm(g, axis=1) * np.linalg.norm(want, axis=1))
            assert cos.min() >= 0.99999


def test_heads_model_gives_every_head_from_one_run(tmp_path):
    """A BGE-M3-shaped directory (scripts/make_m3_model.py: one graph with dense_vecs, sparse_vecs, colbert_vecs,
    glassbox.json "heads"): pipeline("feature-extraction") says output "heads" and gives per text every declared
    head, against the torch + numpy reference following FlagEmbedding's BGEM3 semantics: dense cosine >= 0.99999,
    sparse indices exact and values within 1e-5 (parity criterion), multi-vector rows each with cosine >= 0.99999."""
    import subprocess
    subprocess.run(["/usr/bin/python3", f"{ROOT}/scripts/make_m3_model.py", "--out", str(tmp_path)],
                   check=True, capture_output=True)
    for name in ("m3", "m3_raw"):
        ref = json.load(open(tmp_path / f"{name}.reference.json"))["texts"]
        extractor = glassbox.pipeline("feature-extraction", str(tmp_path / name), threads=1, batch_size=3)
        assert extractor.output == "heads"
        got = extractor([c["text"] for c in ref])
        assert len(got) == len(ref)
        cos = lambda a, b: np.sum(a * b, axis=-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
        for g, c in zip(got, ref):
            assert sorted(g) == ["dense", "multi_vector", "sparse"]
            assert g["dense"].dtype == np.float32 and cos(g["dense"], np.array(c["dense"])) >= 0.99999
            assert g["sparse"]["indices"].dtype == np.int64 and g["sparse"]["indices"].tolist() == c["sparse"]["indices"]
            want = np.array(c["sparse"]["values"])
            assert np.max(np.abs(g["sparse"]["values"] - want)) / max(np.max(np.abs(want)), 1.0) <= 1e-5
            rows = np.array(c["colbert"])
            assert g["multi_vector"].shape == rows.shape and cos(g["multi_vector"], rows).min() >= 0.99999
        one = extractor.details(ref[0]["text"])[0]
        assert one["tokens"] == len(ref[0]["ids"]) and one["sparse"]["indices"] == ref[0]["sparse"]["indices"]
        with pytest.raises(glassbox.InvalidInput, match="dimensions"):
            extractor("a fox", dimensions=4)
        sim = glassbox.pipeline("sentence-similarity", str(tmp_path / name), threads=1)
        scores = sim(ref[0]["text"], [ref[1]["text"], ref[2]["text"]])
        want = [float(cos(np.array(ref[0]["dense"]), np.array(ref[k]["dense"]))) for k in (1, 2)]
        assert np.allclose(scores, want, atol=1e-5), (scores, want)


def test_text_ranking_by_max_sim_on_a_multi_vector_model(tmp_path):
    """pipeline("text-ranking") on PyLate ColBERT directories (scripts/make_colbert_models.py) ranks by MaxSim:
    every score within 1e-5 relative of the reference MaxSim (torch + numpy, PyLate's colbert_scores), the
    reference's order (ties keep the documents' order), and the same scores and order as `glassbox rerank`."""
    import subprocess
    subprocess.run(["/usr/bin/python3", f"{ROOT}/scripts/make_colbert_models.py", "--out", str(tmp_path)],
                   check=True, capture_output=True)
    for name in ("colbert_pylate", "colbert_attend", "colbert_no_expansion"):
        ref = json.load(open(tmp_path / f"{name}.reference.json"))
        ranker = glassbox.pipeline("text-ranking", str(tmp_path / name), threads=1)
        assert ranker.scoring == "max_sim"
        docs = [d["text"] for d in ref["documents"]]
        for qi, q in enumerate(ref["queries"]):
            want = ref["scores"][qi]
            order = sorted(range(len(want)), key=lambda i: (-want[i], i))
            got = ranker(q["text"], docs)
            assert [g["index"] for g in got] == order, (name, qi)
            for g in got:
                assert abs(g["score"] - want[g["index"]]) <= 1e-5 * abs(want[g["index"]]), (name, qi, g)
                assert g["logit"] == g["score"] and g["text"] == docs[g["index"]]
            cli = [json.loads(line) for line in run_cli(["rerank", str(tmp_path / name), "--query", q["text"]] + docs)
                   .splitlines() if line.strip()]
            assert [c["index"] for c in cli] == order
            for g, c in zip(got, cli):
                assert abs(g["score"] - c["score"]) <= 1e-5 * abs(c["score"])
        top = ranker(ref["queries"][0]["text"], docs, top_n=2)
        assert [t["index"] for t in top] == sorted(range(len(docs)), key=lambda i: (-ref["scores"][0][i], i))[:2]
    with pytest.raises(glassbox.InvalidInput, match="split"):
        ranker("a fox", ["a fox"], overflow="split")


def test_sentence_similarity_prompt_and_dimensions(tmp_path):
    """pipeline("sentence-similarity") and the embedding pipeline's prompt_name / dimensions on
    scripts/make_st_models.py's directories, against its reference vectors (torch + numpy following
    sentence-transformers): scores are the declared similarity_fn_name (cosine; dot for st_mean)."""
    import subprocess
    subprocess.run(["/usr/bin/python3", f"{ROOT}/scripts/make_st_models.py", "--out", str(tmp_path)],
                   check=True, capture_output=True)

    def ref(name, **opts):
        cases = json.loads((tmp_path / f"{name}.reference.json").read_text())["cases"]
        keys = ("prompt_name", "prompt", "dimensions", "model_file")
        return [c for c in cases if all(c.get(k) == opts.get(k) for k in keys)]

    for name, fn in [("st_cls_normalize", "cosine"), ("st_mean", "dot")]:
        sim = glassbox.pipeline("sentence-similarity", str(tmp_path / name), threads=1)
        assert sim.similarity_function == fn
        cases = ref(name)
        a = np.asarray(cases[0]["vector"], np.float64)
        want = []
        for c in cases[1:]:
            b = np.asarray(c["vector"], np.float64)
            want.append(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)) if fn == "cosine" else a @ b)
        got = sim(cases[0]["text"], [c["text"] for c in cases[1:]])
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
        assert sim({"source_sentence": cases[0]["text"], "sentences": [cases[1]["text"]]}) == pytest.approx(got[:1], rel=1e-6)
    emb = glassbox.pipeline("feature-extraction", str(tmp_path / "st_cls_normalize"), threads=1)
    for opts in ({"prompt_name": "query"}, {"dimensions": 8}):
        cases = ref("st_cls_normalize", **opts)
        np.testing.assert_allclose(emb([c["text"] for c in cases], **opts), [c["vector"] for c in cases], rtol=1e-4, atol=1e-5)
    with pytest.raises(glassbox.InvalidInput, match="query"):
        emb("a fox", prompt_name="nope")
    with pytest.raises(glassbox.InvalidInput, match="dimensions"):
        emb("a fox", dimensions=33)


def test_text_ranking_overflow_policies(tmp_path):
    """A document over max_length 32: LimitExceeded naming it by default; overflow="truncate" reports the tokens it
    lost; overflow="split" scores it in several windows (the values are checked against ORT on the tokenizers
    peer's windows by ctest pipeline_rerank)."""
    import subprocess
    subprocess.run(["/usr/bin/python3", f"{ROOT}/scripts/make_cross_encoder.py", "--out", str(tmp_path)],
                   check=True, capture_output=True)
    ranker = glassbox.pipeline("text-ranking", str(tmp_path / "ce_sigmoid"), threads=1)
    long_doc = " ".join(["one two three four five six seven eight nine ten eleven twelve thirteen fourteen"] * 3)
    docs = ["A fox is an animal.", long_doc]
    with pytest.raises(glassbox.LimitExceeded, match="input 1"):
        ranker("Where is the train station?", docs)
    cut = {r["index"]: r for r in ranker("Where is the train station?", docs, overflow="truncate")}
    assert cut[1]["tokens"] == 32 and cut[1]["tokens_dropped"] > 0 and cut[0]["tokens_dropped"] == 0
    split = {r["index"]: r for r in ranker("Where is the train station?", docs, overflow="split")}
    assert split[1]["windows"] >= 2 and split[0]["windows"] == 1 and split[1]["tokens_dropped"] == 0
    assert split[0]["score"] == pytest.approx(cut[0]["score"], rel=1e-6)
    with pytest.raises(glassbox.InvalidInput, match="overflow"):
        ranker("q", docs, overflow="chop")
