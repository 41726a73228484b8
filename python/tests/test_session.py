"""glassbox.Session against the C++ CLI (`glassbox run`, same engine: identical) and
onnxruntime-node 1.30.0 (the peer: within 1e-5) on the torch.onnx test models, plus metadata,
feed layouts, check_numerics, the observer and run_unpadded."""

import numpy as np
import pytest

import glassbox
import json

from conftest import generated_model, run_cli, run_cli_outputs, run_ort, text_feeds

MODELS = ["bert_tiny_op13", "bert_tiny_op14", "bert_tiny_op17", "distilbert_tiny_op14", "bert_tiny_cls_op14"]
ORT_TOLERANCE = 1e-5  # max |glassbox - ort| relative to max(max|ort|, 1), per output


@pytest.mark.parametrize("name", MODELS)
def test_equals_cli_and_onnxruntime(name, tmp_path):
    path = generated_model(name)
    session = glassbox.Session(path, threads=1)
    for batch, seq, seed in ((1, 7, 1), (3, 16, 2)):
        feeds = text_feeds(session, batch, seq, seed)
        got = session.run(feeds)
        assert list(got) == [o.name for o in session.outputs]
        cli = run_cli_outputs(path, feeds, tmp_path / f"{batch}x{seq}")
        ort = run_ort(path, feeds, tmp_path / f"{batch}x{seq}")
        for out in session.outputs:
            g, c, o = got[out.name], cli[out.name], ort[out.name]
            assert g.dtype == np.float32 and g.shape == o.shape
            np.testing.assert_array_equal(g, c, err_msg=f"{name} {out.name}: Python != glassbox run")
            rel = np.max(np.abs(g - o)) / max(np.max(np.abs(o)), 1.0)
            assert rel <= ORT_TOLERANCE, f"{name} {out.name} {batch}x{seq}: {rel:.2e} from onnxruntime"


def test_metadata_and_options():
    session = glassbox.Session(generated_model("bert_tiny_op14"), threads=1, opt_level=1)
    names = [i.name for i in session.inputs]
    assert names == ["input_ids", "attention_mask", "token_type_ids"]
    ids = session.inputs[0]
    assert ids.dtype == "int64" and ids.shape == ["batch", "sequence"] and ids.kind == "tensor"
    assert [o.name for o in session.outputs] == ["last_hidden_state", "pooler_output"]
    assert session.outputs[0].dtype == "float32" and session.outputs[0].shape[2] == 64
    assert session.options["threads"] == 1 and session.options["opt_level"] == 1
    assert session.options["precision"] == "fp32" and session.node_count > 0
    assert "input_ids: int64[batch, sequence]" in repr(ids)
    explained = session.explain()
    assert explained["schema"] == "glassbox.explain/1"
    threads = [r for r in explained["options"] if r["component"] == "session" and r["name"] == "threads"]
    assert threads and threads[0]["value"] == "1" and threads[0]["reason"]


def test_explain_equals_cli():
    path = generated_model("bert_tiny_op14")
    ours = glassbox.Session(path, threads=1, opt_level=1).explain()
    cli = json.loads(run_cli(["explain", path, "--threads", "1", "--opt-level", "1", "--json"]))
    # The process component (heap policy) is the CLI process's own: a library never sets it.
    cli["options"] = [r for r in cli["options"] if r["component"] != "process"]
    # The warm-up plan is what `glassbox serve` would run: a library session has no server.
    cli.pop("warmup", None)
    for row in cli["options"]:  # keyword arguments here, flags there
        row["source"] = "argument" if row["source"] == "flag" else row["source"]
    assert ours == cli


def test_outputs_selection_and_zero_copy_layouts():
    session = glassbox.Session(generated_model("bert_tiny_op14"), threads=1)
    feeds = text_feeds(session, 2, 8, 3)
    full = session.run(feeds)
    only = session.run(feeds, ["pooler_output"])
    assert list(only) == ["pooler_output"]
    np.testing.assert_array_equal(only["pooler_output"], full["pooler_output"])
    # Non-contiguous, Fortran-ordered and byte-swapped feeds are copied once: same results.
    wide = {k: np.repeat(v, 2, axis=1)[:, ::2] for k, v in feeds.items()}
    assert not wide["input_ids"].flags.c_contiguous
    fortran = {k: np.asfortranarray(v) for k, v in feeds.items()}
    swapped = {k: v.astype(v.dtype.newbyteorder(">")) for k, v in feeds.items()}
    for variant in (wide, fortran, swapped):
        for k, v in session.run(variant).items():
            np.testing.assert_array_equal(v, full[k])
    # Inputs are never written, outputs are writable arrays the caller owns.
    before = {k: v.copy() for k, v in feeds.items()}
    out = session.run(feeds)
    for k in feeds:
        np.testing.assert_array_equal(feeds[k], before[k])
    out["last_hidden_state"][...] = 0
    np.testing.assert_array_equal(session.run(feeds)["last_hidden_state"], full["last_hidden_state"])


def test_check_numerics_names_the_first_bad_node(tiny_models):
    session = glassbox.Session(tiny_models["log"], threads=1, opt_level=0)
    x = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)
    y = session.run({"x": x})["y"]
    assert np.isnan(y).all()  # without the check: NaN comes back, as from onnxruntime
    with pytest.raises(glassbox.InvalidInput) as e:
        session.run({"x": x}, check_numerics=True)
    assert "log_node" in e.value.where and "Log" in e.value.where and "NaN/Inf" in e.value.what
    finite = session.run({"x": -x}, check_numerics=True)["y"]
    np.testing.assert_allclose(finite, np.log(x), rtol=1e-6)


def test_observer_sees_every_node(tiny_models):
    session = glassbox.Session(tiny_models["log"], threads=1, opt_level=0)
    x = -np.ones((2, 3), dtype=np.float32)
    events = []
    session.run({"x": x}, observer=events.append)
    assert [e["node"] for e in events] == ["relu_node", "neg_node", "log_node", "sum_node"]
    assert events[1]["op_type"] == "Neg" and events[1]["outputs"] == ["n"]
    np.testing.assert_array_equal(events[1]["output_values"][0], np.ones((2, 3), np.float32))
    assert all(e["elapsed_ns"] >= 0 for e in events)

    def stop(event):
        if event["node"] == "log_node":
            raise KeyError("stop here")
    with pytest.raises(KeyError, match="stop here"):
        session.run({"x": x}, observer=stop)
    np.testing.assert_array_equal(session.run({"x": x})["y"], np.zeros((2, 3), np.float32))


def test_run_unpadded_equals_onnxruntime_per_sequence(tmp_path):
    path = generated_model("bert_tiny_op14")
    session = glassbox.Session(path, threads=2)
    feeds = text_feeds(session, 3, 12, 5)  # rows of 12, 11, 10 real tokens
    got = session.run_unpadded(feeds)
    lengths = feeds["attention_mask"].sum(axis=1)
    for b, n in enumerate(lengths):
        row = {k: np.ascontiguousarray(v[b:b + 1, :n]) for k, v in feeds.items()}
        ort = run_ort(path, row, tmp_path / f"row{b}")
        for name, ref in ort.items():
            g = got[name][b:b + 1, :n] if name == "last_hidden_state" else got[name][b:b + 1]
            rel = np.max(np.abs(g - ref)) / max(np.max(np.abs(ref)), 1.0)
            assert rel <= ORT_TOLERANCE, f"row {b} {name}: {rel:.2e} from onnxruntime"
        assert not got["last_hidden_state"][b, n:].any()  # 0 at padding


# precision= takes what `glassbox run --precision` takes: the outputs are the CLI's bit for bit,
# differ from fp32 (the lower precision really ran) and stay within `glassbox accuracy`'s
# declared max relative error for that precision (2e-2 bf16, 5e-2 int8-dynamic); explain
# shows the argument as the source.
@pytest.mark.parametrize("precision,threshold", [("bf16", 2e-2), ("int8-dynamic", 5e-2)])
def test_precision_equals_cli(precision, threshold, tmp_path):
    path = generated_model("bert_tiny_op14")
    session = glassbox.Session(path, threads=1, precision=precision)
    assert session.options["precision"] == precision
    feeds = text_feeds(session, 2, 16, 3)
    got = session.run(feeds)
    cli = run_cli_outputs(path, feeds, tmp_path, extra=["--precision", precision])
    fp32 = glassbox.Session(path, threads=1).run(feeds)
    for name, g in got.items():
        np.testing.assert_array_equal(g, cli[name], err_msg=f"{precision} {name}: Python != glassbox run")
        rel = np.max(np.abs(g - fp32[name])) / np.max(np.abs(fp32[name]))
        assert 0 < rel <= threshold, f"{precision} {name}: {rel:.2e} from fp32"
    rows = [r for r in session.explain()["options"] if r["name"] == "precision"]
    assert rows and rows[0]["value"] == precision and rows[0]["source"] == "argument"


# pool_wait= is the CLI's --pool-wait: how idle pool threads wait changes no output bit; the
# options and explain show it with the argument as the source; an unknown mode is refused by name.
@pytest.mark.parametrize("mode", ["spin", "sleep"])
def test_pool_wait_equals_default_outputs(mode):
    path = generated_model("bert_tiny_op14")
    session = glassbox.Session(path, threads=2, pool_wait=mode)
    assert session.options["pool_wait"] == mode
    assert glassbox.Session(path, threads=2).options["pool_wait"] == "auto"
    feeds = text_feeds(session, 2, 16, 5)
    want = glassbox.Session(path, threads=2).run(feeds)
    for name, got in session.run(feeds).items():
        np.testing.assert_array_equal(got, want[name], err_msg=f"pool_wait={mode} {name}")
    rows = [r for r in session.explain()["options"] if r["name"] == "pool_wait"]
    assert rows and rows[0]["value"] == mode and rows[0]["source"] == "argument"
    with pytest.raises(glassbox.InvalidInput, match="busy"):
        glassbox.Session(path, pool_wait="busy")


# weights_cache= is the CLI's --weights-cache: the first load packs and writes the file after its
# first run, the next maps it; both give the uncached session's outputs bit for bit (the blocking
# depends on the thread count: same threads); explain shows the argument as the source.
@pytest.mark.parametrize("precision", ["fp32", "int8-dynamic"])
def test_weights_cache_miss_then_hit(precision, tmp_path):
    path = generated_model("bert_tiny_op14")
    plain = glassbox.Session(path, threads=1, precision=precision)
    assert plain.options["weights_cache"] is None and plain.weights_cache_report()["state"] == "off"
    feeds = text_feeds(plain, 2, 16, 4)
    want = plain.run(feeds)
    cache = tmp_path / "cache"
    first = glassbox.Session(path, threads=1, precision=precision, weights_cache=cache)
    assert first.options["weights_cache"] == str(cache)
    assert first.weights_cache_report()["state"] == "miss"
    got_first = first.run(feeds)
    report = first.weights_cache_report(wait_for_write=True)
    assert report["write"].startswith("written"), report
    second = glassbox.Session(path, threads=1, precision=precision, weights_cache=cache)
    got_second = second.run(feeds)
    report = second.weights_cache_report()
    assert report["state"] == "hit" and report["used"] > 0 and report["refused"] == 0, report
    for name, w in want.items():
        np.testing.assert_array_equal(got_first[name], w, err_msg=f"miss {name}")
        np.testing.assert_array_equal(got_second[name], w, err_msg=f"hit {name}")
    rows = [r for r in second.explain()["options"] if r["name"] == "weights_cache"]
    assert rows and rows[0]["value"] == str(cache) and rows[0]["source"] == "argument"
    with pytest.raises(glassbox.InvalidInput):
        glassbox.Session(path, weights_cache="")


def test_unknown_precision_is_refused():
    for p in ("int8", "fp16"):
        with pytest.raises(glassbox.InvalidInput) as e:
            glassbox.Session(generated_model("bert_tiny_op14"), precision=p)
        assert p in str(e.value) and "int8-dynamic" in e.value.fix


def test_load_errors(tmp_path):
    with pytest.raises(glassbox.GlassboxError) as e:
        glassbox.Session(tmp_path / "missing.onnx")
    assert "missing.onnx" in str(e.value)
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"this is not protobuf")
    with pytest.raises(glassbox.ModelError):
        glassbox.Session(bad)
    with pytest.raises(glassbox.InvalidInput, match="unknown pass"):
        glassbox.Session(generated_model("bert_tiny_op14"), disabled_passes=["no_such_pass"])
    with pytest.raises(glassbox.InvalidInput):
        glassbox.Session(generated_model("bert_tiny_op14"), opt_level=3)
