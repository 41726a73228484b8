"""Relocatable install (`cmake --install BUILD --prefix P`) and the container entrypoint outside a
container: the install is moved after installing, and its copy finds the default model next to
itself (explain says where and how), classifies, and serves; deploy/entrypoint.sh maps KServe's
one-model /mnt/models layout to a named model, passes repositories through, and exec's the
server so SIGTERM drains it; deploy/healthcheck.sh answers as a HEALTHCHECK must."""
import json
import os
import shutil
import signal
import subprocess
import urllib.request

import pytest

from fleet import ROOT, Replica, free_port

GLASSBOX = os.environ["GLASSBOX_BIN"]
BUILD = os.environ["GLASSBOX_BUILD_DIR"]
DEPLOY = os.path.join(ROOT, "deploy")
MODEL_FILES = {"model.onnx", "tokenizer.json", "config.json", "glassbox.json", "tokenizer_config.json", "README.md"}


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)


@pytest.fixture(scope="module")
def moved_install(tmp_path_factory):
    base = tmp_path_factory.mktemp("install")
    r = run(["cmake", "--install", BUILD, "--prefix", str(base / "first")])
    assert r.returncode == 0, r.stdout + r.stderr
    shutil.move(str(base / "first"), str(base / "moved"))  # after installing: nothing may point back
    return base / "moved"


def test_install_layout(moved_install):
    assert os.access(moved_install / "bin" / "glassbox", os.X_OK)
    assert set(os.listdir(moved_install / "share" / "glassbox" / "models" / "langid")) == MODEL_FILES


def explain_default_model(binary):
    r = run([binary, "explain", "--json"])
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["default_model"]


def test_moved_install_finds_its_own_model_and_says_how(moved_install):
    found = explain_default_model(str(moved_install / "bin" / "glassbox"))
    assert found["dir"] == str(moved_install / "share" / "glassbox" / "models" / "langid")
    assert found["found_by"].startswith("installed layout"), found
    assert found["tried"][0] == found["dir"]
    text = run([str(moved_install / "bin" / "glassbox"), "explain"]).stdout
    assert "default model" in text and found["dir"] in text


def test_build_tree_binary_falls_back_to_the_source_tree():
    found = explain_default_model(GLASSBOX)
    assert found["dir"] == os.path.join(ROOT, "models", "langid") and found["found_by"].startswith("build tree"), found


def test_copied_binary_without_share_falls_back_to_the_build_tree(moved_install, tmp_path):
    bare = tmp_path / "bare"
    os.makedirs(bare / "bin")
    shutil.copy2(moved_install / "bin" / "glassbox", bare / "bin" / "glassbox")
    found = explain_default_model(str(bare / "bin" / "glassbox"))
    # The copy has no share/ beside it: the build-tree fallback (this source tree) is what it finds.
    assert found["tried"][0] == str(bare / "share" / "glassbox" / "models" / "langid")
    assert found["found_by"].startswith("build tree"), found


def test_moved_install_classifies(moved_install):
    r = run([str(moved_install / "bin" / "glassbox"), "classify", "Guten Morgen, wie geht es dir?"])
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.splitlines()[0])["labels"][0]["label"] == "de"


def test_model_flag_wins_over_the_default(moved_install, tmp_path):
    missing = str(tmp_path / "no-such-model")
    r = run([str(moved_install / "bin" / "glassbox"), "classify", "--model", missing, "Guten Morgen"])
    assert r.returncode != 0 and missing in r.stderr, r.stderr


def infer(port, model="langid", text="Guten Morgen, wie geht es dir?"):
    body = {"inputs": [{"name": "text", "datatype": "BYTES", "shape": [1], "data": [text]}], "outputs": [{"name": "label"}]}
    req = urllib.request.Request("http://127.0.0.1:%d/v2/models/%s/infer" % (port, model), data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())["outputs"][0]["data"][0]


def test_moved_install_serves_and_drains(moved_install):
    s = Replica(str(moved_install / "bin" / "glassbox"), "installed")
    try:
        s.wait_ready()
        assert infer(s.port) == "de"
        s.proc.send_signal(signal.SIGTERM)
        assert s.proc.wait(60) == 0, s.log
    finally:
        s.kill()


def entrypoint(args, env_bin=GLASSBOX):
    return Replica(None, "entrypoint", command=[os.path.join(DEPLOY, "entrypoint.sh")] + args,
                   env=dict(os.environ, GLASSBOX_BIN=env_bin))


def test_entrypoint_names_a_kserve_single_model_folder(tmp_path):
    mnt = tmp_path / "mnt-models"
    shutil.copytree(os.path.join(ROOT, "models", "langid"), mnt)  # KServe: the model's files at the top
    s = entrypoint(["--model-name=my-langid", "--model-repository", str(mnt), "--host", "127.0.0.1", "--port", "0",
                    "--threads", "1"])
    try:
        s.wait_ready()
        assert infer(s.port, model="my-langid") == "de"
        assert "serving it as 'my-langid'" in s.log
        s.proc.send_signal(signal.SIGTERM)  # exec'd: the entrypoint's pid is the server's
        assert s.proc.wait(60) == 0, s.log
    finally:
        s.kill()


def test_entrypoint_passes_a_repository_through(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(os.path.join(ROOT, "models", "langid"), repo / "langid")
    s = entrypoint(["--model-repository", str(repo), "--host", "127.0.0.1", "--port", "0", "--threads", "1"])
    try:
        s.wait_ready()
        assert infer(s.port) == "de"
    finally:
        s.kill()


def test_entrypoint_refuses_an_unnamed_single_model(tmp_path):
    mnt = tmp_path / "mnt-models"
    shutil.copytree(os.path.join(ROOT, "models", "langid"), mnt)
    r = run([os.path.join(DEPLOY, "entrypoint.sh"), "--model-repository", str(mnt), "--port", "0"],
            env=dict(os.environ, GLASSBOX_BIN=GLASSBOX))
    assert r.returncode == 2 and "--model-name" in r.stderr, r.stderr


def test_healthcheck_script(tmp_path):
    s = Replica(GLASSBOX, "health")
    try:
        s.wait_ready()
        ok = run([os.path.join(DEPLOY, "healthcheck.sh"), str(s.port), "/v2/health/live"])
        assert ok.returncode == 0, ok.stderr
        missing = run([os.path.join(DEPLOY, "healthcheck.sh"), str(s.port), "/no/such/route"])
        assert missing.returncode == 1 and "404" in missing.stderr, missing.stderr
    finally:
        s.kill()
    closed = run([os.path.join(DEPLOY, "healthcheck.sh"), str(free_port()), "/v2/health/live"])
    assert closed.returncode != 0
