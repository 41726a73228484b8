"""deploy/ manifests against the real schemas (deploy/schemas/: KServe's CRDs, the Kubernetes API),
yamllint, and drift between the manifests/Dockerfile/entrypoint and `glassbox serve` itself."""
import copy
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import urllib.request

import jsonschema
import pytest
import yaml

from fleet import ROOT, Replica

GLASSBOX = os.environ["GLASSBOX_BIN"]
DEPLOY = os.path.join(ROOT, "deploy")
SCHEMAS = os.path.join(DEPLOY, "schemas")
MANIFESTS = sorted(glob.glob(os.path.join(DEPLOY, "kserve", "*.yaml")) + glob.glob(os.path.join(DEPLOY, "kubernetes", "*.yaml")))
K8S_OBJECTS = [m for m in MANIFESTS if not m.endswith("prometheus-adapter-rules.yaml")]
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def load(path):
    with open(path) as f:
        return yaml.safe_load(f)


def schema_file(name):
    with open(os.path.join(SCHEMAS, name)) as f:
        return json.load(f)


K8S = schema_file("kubernetes.json")
CRDS = {("serving.kserve.io/v1alpha1", "ServingRuntime"): schema_file("kserve-servingruntime.json"),
        ("serving.kserve.io/v1beta1", "InferenceService"): schema_file("kserve-inferenceservice.json")}


def k8s_root(api_version, kind):
    for name in K8S["roots"]:
        props = K8S["definitions"][name]["properties"]
        if props["apiVersion"]["const"] == api_version and props["kind"]["const"] == kind:
            return name
    return None


def validate(doc):
    """Raises jsonschema.ValidationError (or KeyError for a kind without a stored schema)."""
    key = (doc.get("apiVersion"), doc.get("kind"))
    if key in CRDS:
        jsonschema.Draft7Validator(CRDS[key]).validate(doc)
        # A CRD schema says only `metadata: object`; the API server checks it as ObjectMeta.
        meta = {"$ref": "#/definitions/" + OBJECT_META, "definitions": K8S["definitions"]}
        jsonschema.Draft7Validator(meta).validate(doc["metadata"])
        return
    root = k8s_root(*key)
    if root is None:
        raise KeyError("no stored schema for %s %s" % key)
    jsonschema.Draft7Validator({"$ref": "#/definitions/" + root, "definitions": K8S["definitions"]}).validate(doc)


@pytest.mark.parametrize("path", K8S_OBJECTS, ids=os.path.basename)
def test_manifest_validates_against_upstream_schema(path):
    validate(load(path))


def test_every_kind_has_a_manifest():
    kinds = {load(p)["kind"] for p in K8S_OBJECTS}
    assert kinds == {"ServingRuntime", "InferenceService", "Deployment", "Service", "PodDisruptionBudget",
                     "HorizontalPodAutoscaler"}


@pytest.mark.parametrize("mutate, where", [
    (lambda d: d["spec"].__setitem__("replica", 3), "Deployment: unknown field spec.replica"),
    (lambda d: d["spec"]["template"]["spec"]["containers"][0].__setitem__("ports", "8080"), "Deployment: ports not a list"),
    (lambda d: d.__setitem__("apiVersion", "apps/v1beta9"), "Deployment: wrong apiVersion"),
], ids=["unknown-field", "wrong-type", "wrong-apiVersion"])
def test_validator_rejects_broken_deployment(mutate, where):
    doc = copy.deepcopy(load(os.path.join(DEPLOY, "kubernetes", "deployment.yaml")))
    mutate(doc)
    with pytest.raises((jsonschema.ValidationError, KeyError)):
        validate(doc)


@pytest.mark.parametrize("mutate", [
    lambda d: d["spec"]["containers"][0].__setitem__("imagePullPolicyy", "Always"),
    lambda d: d["spec"].__setitem__("protocolVersions", "v2"),
    lambda d: d["spec"]["supportedModelFormats"][0].__setitem__("autoSelect", "yes"),
], ids=["unknown-field", "not-a-list", "not-a-bool"])
def test_validator_rejects_broken_servingruntime(mutate):
    doc = copy.deepcopy(load(os.path.join(DEPLOY, "kserve", "servingruntime.yaml")))
    mutate(doc)
    with pytest.raises(jsonschema.ValidationError):
        validate(doc)


def test_validator_rejects_pruned_inferenceservice_fields():
    """Subtrees pruned from the stored schema fail loudly instead of passing unchecked."""
    doc = copy.deepcopy(load(os.path.join(DEPLOY, "kserve", "inferenceservice.yaml")))
    doc["spec"]["transformer"] = {"containers": []}
    with pytest.raises(jsonschema.ValidationError):
        validate(doc)
    doc = copy.deepcopy(load(os.path.join(DEPLOY, "kserve", "inferenceservice.yaml")))
    doc["metadata"]["labelz"] = {}
    with pytest.raises(jsonschema.ValidationError):
        validate(doc)


def test_yamllint():
    files = MANIFESTS + [os.path.join(DEPLOY, "yamllint.yaml")]
    r = subprocess.run(["yamllint", "--strict", "-f", "parsable", "-c", os.path.join(DEPLOY, "yamllint.yaml")] + files,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


# ---- drift between the manifests and the server ----

def serve_flags():
    r = subprocess.run([GLASSBOX, "serve", "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    flags = set(re.findall(r"^\s+(--[a-z][a-z0-9-]*)", r.stdout, re.M))
    assert {"--port", "--host", "--drain-timeout", "--model-repository", "--threads"} <= flags, flags
    return flags


ENTRYPOINT_FLAGS = {"--model-name"}  # consumed by deploy/entrypoint.sh, never passed to glassbox


def flag_values(args):
    """{--flag: value} from an argument list (`--f v` and `--f=v`)."""
    out, i = {}, 0
    while i < len(args):
        a = args[i]
        if a.startswith("--"):
            if "=" in a:
                k, v = a.split("=", 1)
                out[k] = v
            elif i + 1 < len(args) and not args[i + 1].startswith("--"):
                out[a] = args[i + 1]
                i += 1
            else:
                out[a] = None
        i += 1
    return out


def dockerfile():
    with open(os.path.join(DEPLOY, "Dockerfile")) as f:
        text = f.read().replace("\\\n", " ")
    cmd = json.loads(re.search(r"^CMD (\[.*\])$", text, re.M).group(1))
    health = json.loads(re.search(r"^HEALTHCHECK .* CMD (\[.*\])$", text, re.M).group(1))
    expose = re.search(r"^EXPOSE (\d+)$", text, re.M).group(1)
    stop = re.search(r"^STOPSIGNAL (\S+)$", text, re.M).group(1)
    return cmd, health, int(expose), stop


def containers():
    """(source, container, pod-level dict) for every glassbox container in the manifests."""
    dep = load(os.path.join(DEPLOY, "kubernetes", "deployment.yaml"))
    sr = load(os.path.join(DEPLOY, "kserve", "servingruntime.yaml"))
    isvc = load(os.path.join(DEPLOY, "kserve", "inferenceservice.yaml"))
    pod = dep["spec"]["template"]["spec"]
    return [("deployment.yaml", pod["containers"][0], pod, dep["spec"]["template"]["metadata"]["annotations"]),
            ("servingruntime.yaml", sr["spec"]["containers"][0],
             {"terminationGracePeriodSeconds": isvc["spec"]["predictor"]["terminationGracePeriodSeconds"]},
             sr["spec"]["annotations"])]


def project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(glassbox VERSION (\S+)", f.read()).group(1)


def test_flags_and_ports_exist_in_glassbox_serve():
    flags = serve_flags()
    cmd, health, expose, stop = dockerfile()
    assert stop == "SIGTERM"
    used = [("Dockerfile CMD", flag_values(cmd))]
    for src, c, pod, ann in containers():
        used.append((src, flag_values(c["args"])))
    for src, values in used:
        unknown = sorted(set(values) - flags - ENTRYPOINT_FLAGS)
        assert not unknown, "%s uses flags `glassbox serve` does not have: %s" % (src, unknown)
        assert values["--port"] and int(values["--port"]) == expose, (src, values)
        assert values["--host"] == "0.0.0.0", (src, "a container must listen on all its interfaces")
        assert values["--model-repository"] == "/mnt/models", src
    # The HEALTHCHECK asks the port the server listens on, on the live route.
    assert health[1:] == [str(expose), "/v2/health/live"], health


def test_probes_ports_threads_grace_and_image_agree():
    version = project_version()
    cmd, health, expose, stop = dockerfile()
    for src, c, pod, ann in containers():
        v = flag_values(c["args"])
        port = int(v["--port"])
        named = {p.get("name"): p["containerPort"] for p in c["ports"]}
        assert port in named.values(), src
        for probe, path in (("readinessProbe", "/v2/health/ready"), ("livenessProbe", "/v2/health/live"),
                            ("startupProbe", "/v2/health/live")):
            get = c[probe]["httpGet"]
            assert get["path"] == path, (src, probe)
            assert named.get(get["port"], get["port"]) == port, (src, probe)
        port_ann = ann.get("prometheus.kserve.io/port", ann.get("prometheus.io/port"))
        path_ann = ann.get("prometheus.kserve.io/path", ann.get("prometheus.io/path"))
        assert int(port_ann) == port and path_ann == "/metrics", src
        # CPU request = limit = --threads: one engine run uses exactly the cores the pod gets.
        req, lim = c["resources"]["requests"]["cpu"], c["resources"]["limits"]["cpu"]
        assert str(req) == str(lim) == v["--threads"], (src, req, lim, v["--threads"])
        # The grace period covers the preStop sleep and the whole drain.
        sleep = c["lifecycle"]["preStop"]["exec"]["command"]
        assert sleep[0] == "sleep", src
        assert pod["terminationGracePeriodSeconds"] > int(sleep[1]) + float(v["--drain-timeout"]), src
        assert c["image"] == "glassbox:" + version, (src, c["image"], version)
    svc = load(os.path.join(DEPLOY, "kubernetes", "service.yaml"))
    dep_ports = {p["name"] for p in containers()[0][1]["ports"]}
    assert all(p["targetPort"] in dep_ports for p in svc["spec"]["ports"])


def test_the_deployment_args_start_a_server_through_the_entrypoint(tmp_path):
    """The Deployment's exact args through deploy/entrypoint.sh, with only the address, port and
    repository swapped for 127.0.0.1, a free port and a temporary repository: glassbox accepts the
    combination and serves; the metrics the autoscaling manifests name are exported."""
    c = containers()[0][1]
    args = list(c["args"])
    args[args.index("/mnt/models")] = str(tmp_path / "repo")
    args[args.index("0.0.0.0")] = "127.0.0.1"
    args[args.index("--port") + 1] = "0"
    shutil.copytree(os.path.join(ROOT, "models", "langid"), tmp_path / "repo" / "langid")
    env = dict(os.environ, GLASSBOX_BIN=GLASSBOX)
    r = Replica(None, "deployment-args", command=[os.path.join(DEPLOY, "entrypoint.sh")] + args, env=env)
    try:
        r.wait_ready()
        assert r.get("/v2/models/langid/ready")[0] == 200
        body = json.dumps({"inputs": [{"name": "text", "datatype": "BYTES", "shape": [1], "data": ["Guten Morgen"]}]})
        req = urllib.request.Request("http://127.0.0.1:%d/v2/models/langid/infer" % r.port, data=body.encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as resp:
            assert resp.status == 200
        _, metrics = r.get("/metrics", timeout=30)
        exported = set(re.findall(r"^(glassbox_[a-z_]+)", metrics, re.M))
        hpa = load(os.path.join(DEPLOY, "kubernetes", "hpa.yaml"))
        names = {m["pods"]["metric"]["name"] for m in hpa["spec"]["metrics"] if m["type"] == "Pods"}
        with open(os.path.join(DEPLOY, "kubernetes", "prometheus-adapter-rules.yaml")) as f:
            names |= set(re.findall(r"\b(glassbox_[a-z_]+)", f.read()))
        assert names and names <= exported, sorted(names - exported)
        r.proc.send_signal(signal.SIGTERM)  # the entrypoint exec'd glassbox: the signal reaches it
        assert r.proc.wait(60) == 0, r.log
    finally:
        r.kill()
