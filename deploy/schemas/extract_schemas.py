#!/usr/bin/env python3
"""Extracts the JSON schemas tests/deploy/validate_manifests.py checks deploy/ against, from the
upstream files named in deploy/schemas/README.md (read there, never edited here):

  kubernetes.json: the definitions the plain-Kubernetes manifests use (Deployment, Service,
    PodDisruptionBudget, HorizontalPodAutoscaler and everything they reference), from the
    Kubernetes OpenAPI v2 document (swagger.json), descriptions dropped.
  kserve-servingruntime.json, kserve-inferenceservice.json: the openAPIV3Schema of the served
    version of KServe's CRDs. InferenceService is ~700 KB because every predictor framework
    repeats a full container spec; the subtrees our manifests do not use are replaced by the
    schema `false` (so using one fails validation, naming the pruned path, never passes silently).

Strictness: every object schema with declared properties and no additionalProperties /
x-kubernetes-preserve-unknown-fields gets additionalProperties: false (as `kubectl apply
--validate=strict` refuses unknown fields). IntOrString and Quantity accept integers and strings,
as the API server does.

usage: extract_schemas.py SWAGGER_JSON SERVINGRUNTIME_CRD_YAML INFERENCESERVICE_CRD_YAML OUT_DIR
"""
import json
import sys

import yaml

K8S_ROOTS = ["io.k8s.api.apps.v1.Deployment", "io.k8s.api.core.v1.Service",
             "io.k8s.api.policy.v1.PodDisruptionBudget", "io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler"]
# InferenceService subtrees replaced by `false` (unused by deploy/kserve; see the module docstring).
ISVC_PRUNED_SPEC = ["canary", "explainer", "transformer"]
ISVC_PRUNED_PREDICTOR = ["workerSpec", "xgboost", "triton", "tensorflow", "sklearn", "pytorch", "pmml", "paddle",
                         "onnx", "lightgbm", "huggingface", "initContainers", "containers"]


def refs(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref":
                yield v.rsplit("/", 1)[-1]
            else:
                yield from refs(v)
    elif isinstance(node, list):
        for v in node:
            yield from refs(v)


def strict(node):
    """Drops descriptions, closes objects, rewrites $ref to this file's definitions."""
    if isinstance(node, list):
        return [strict(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: strict(v) for k, v in node.items() if k != "description"}
    if "$ref" in out:
        out["$ref"] = "#/definitions/" + out["$ref"].rsplit("/", 1)[-1]
    if ("properties" in node and "additionalProperties" not in node
            and not node.get("x-kubernetes-preserve-unknown-fields")):
        out["additionalProperties"] = False
    return out


def kubernetes_subset(swagger):
    defs = swagger["definitions"]
    keep, todo = set(), list(K8S_ROOTS)
    while todo:
        name = todo.pop()
        if name not in keep:
            keep.add(name)
            todo.extend(refs(defs[name]))
    out = {}
    for name in sorted(keep):
        d = strict(defs[name])
        if d.get("format") == "int-or-string":
            d = {"anyOf": [{"type": "integer"}, {"type": "string"}]}
        elif name == "io.k8s.apimachinery.pkg.api.resource.Quantity":
            d = {"anyOf": [{"type": "number"}, {"type": "string"}]}
        gvk = defs[name].get("x-kubernetes-group-version-kind")
        if gvk and name in K8S_ROOTS:
            g = gvk[0]
            api = (g["group"] + "/" if g["group"] else "") + g["version"]
            d["properties"]["apiVersion"] = {"const": api}
            d["properties"]["kind"] = {"const": g["kind"]}
            d["required"] = sorted(set(d.get("required", [])) | {"apiVersion", "kind", "metadata"})
        out[name] = d
    return {"$schema": "http://json-schema.org/draft-07/schema#", "roots": K8S_ROOTS, "definitions": out}


def crd_schema(crd, prune):
    group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
    served = [v for v in crd["spec"]["versions"] if v.get("served") and v.get("storage")]
    version = served[0]
    schema = strict(version["schema"]["openAPIV3Schema"])
    schema["properties"]["apiVersion"] = {"const": f"{group}/{version['name']}"}
    schema["properties"]["kind"] = {"const": kind}
    schema["required"] = sorted(set(schema.get("required", [])) | {"apiVersion", "kind", "metadata", "spec"})
    pruned = prune(schema)
    schema["$schema"] = "http://json-schema.org/draft-07/schema#"
    schema["x-glassbox-pruned"] = pruned
    return schema


def prune_isvc(schema):
    spec = schema["properties"]["spec"]["properties"]
    pred = spec["predictor"]["properties"]
    pruned = []
    for k in ISVC_PRUNED_SPEC:
        spec[k] = False
        pruned.append("spec." + k)
    for k in ISVC_PRUNED_PREDICTOR:
        pred[k] = False
        pruned.append("spec.predictor." + k)
    return pruned


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__)
    swagger_path, sr_path, isvc_path, out_dir = argv[1:]
    with open(swagger_path) as f:
        k8s = kubernetes_subset(json.load(f))
    with open(sr_path) as f:
        sr = crd_schema(yaml.safe_load(f), lambda s: [])
    with open(isvc_path) as f:
        isvc = crd_schema(yaml.safe_load(f), prune_isvc)
    for name, doc in [("kubernetes.json", k8s), ("kserve-servingruntime.json", sr),
                      ("kserve-inferenceservice.json", isvc)]:
        with open(f"{out_dir}/{name}", "w") as f:
            json.dump(doc, f, indent=None, separators=(",", ":"), sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main(sys.argv)
