#!/usr/bin/python3
"""Parity of the ai.onnx.ml operators, three ways:

1. Library models: scikit-learn 1.2 and XGBoost 1.7 models trained here (small, fixed
   seeds, held-out rows incl. NaN where the model supports it), converted to ONNX by
   scripts/ml/convert.py. glassbox must match onnxruntime-node (every output) and the
   training library (predict / predict_proba / decision_function / Booster.predict).
2. Synthetic ensembles and single-op models (scripts/ml/op_models.py): every branch mode,
   NaN routing both ways, MIN/MAX/AVERAGE, multi-target, and each preprocessing op; vs
   onnxruntime-node.
3. Bad models (scripts/ml/op_models.py): broken tree attributes must fail at load with
   the named error, never crash.
4. Strings and maps (scripts/ml/string_models.py): scikit-learn models with string labels and
   string categories, string LabelEncoder / CategoryMapper, ZipMap; string tensors go through
   `glassbox run` as TensorProto files and through onnxruntime-node as JSON
   (scripts/ml/run_ort_json.js); ZipMap's maps against scikit-learn's predict_proba by label
   and onnxruntime's probabilities (onnxruntime-node cannot return sequences of maps). Plus
   the broken string models.

Criterion: float max|a - b| <= 1e-5 * max(|b|, 1) elementwise (b the reference), labels
exactly. glassbox sums tree leaves in double; onnxruntime and XGBoost sum in float32 in
their own order, which sets the floor (docs/ml.md).

Usage: scripts/ml/ml_parity.py GLASSBOX [--keep DIR] [CASE_PREFIX ...]    (exit 1 on any failure)
  --keep DIR: leave every case's model.onnx and inputs in DIR/<case> (debugging, fuzzer seeds)
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import convert  # noqa: E402
import library_models  # noqa: E402
import op_models  # noqa: E402
import string_models  # noqa: E402
from onnx import numpy_helper  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TOLERANCE = 1e-5


def compare(got, ref, what, tolerance=TOLERANCE):
    got, ref = np.asarray(got), np.asarray(ref)
    if got.shape != ref.shape:
        return f"{what}: shape {list(got.shape)} vs {list(ref.shape)}"
    if not np.issubdtype(ref.dtype, np.floating):
        bad = int(np.sum(got != ref))
        return f"{what}: {bad} of {got.size} labels differ" if bad else None
    g, r = got.astype(np.float64), ref.astype(np.float64)
    same = (g == r) | (np.isnan(g) & np.isnan(r))
    with np.errstate(invalid="ignore"):
        err = np.where(same, 0.0, np.abs(g - r) / np.maximum(np.abs(r), 1.0))
    worst = float(np.nanmax(np.where(np.isnan(err), np.inf, err), initial=0.0))
    return None if worst <= tolerance else f"{what}: max relative error {worst:.3g} (at {np.unravel_index(np.argmax(err), err.shape)})"


def run_both(model, feeds, d, ort_model=None):
    """ort_model: what onnxruntime runs instead, when it reads the model differently from the spec."""
    d.mkdir(parents=True, exist_ok=True)
    onnx.save(model, d / "model.onnx")
    if ort_model is not None:
        onnx.save(ort_model, d / "ort_model.onnx")
    specs = []
    for name, arr in feeds.items():
        np.save(d / f"{name}.npy", arr)
        specs.append(f"{name}={d / (name + '.npy')}")
    ort_file = d / ("model.onnx" if ort_model is None else "ort_model.onnx")
    ort = subprocess.run(["node", str(ROOT / "scripts/parity/run_ort.js"), str(ort_file), str(d / "ort")] + specs,
                         capture_output=True, text=True)
    gb = subprocess.run([GLASSBOX, "run", str(d / "model.onnx"), "--output-dir", str(d / "gb"), "--threads", "2"] +
                        sum([["--input", s] for s in specs], []), capture_output=True, text=True)
    if ort.returncode:
        return None, None, "onnxruntime failed: " + ort.stderr.strip()[-400:]
    if gb.returncode:
        return None, None, "glassbox failed: " + (gb.stderr or gb.stdout).strip()[-400:]
    n = len(model.graph.output)
    return ([np.load(d / "gb" / f"output_{i}.npy") for i in range(n)],
            [np.load(d / "ort" / f"output_{i}.npy") for i in range(n)], None)


def check_case(case, d):
    # TreeEnsemble: onnxruntime swaps post_transform 1 and 2 (convert.ort_post_transform_variant)
    gb, ort, why = run_both(case["model"], case["feeds"], d, convert.ort_post_transform_variant(case["model"]))
    if why:
        return why
    for i, (g, o) in enumerate(zip(gb, ort)):
        why = compare(g, o, f"output {i} vs onnxruntime", case.get("ort_tolerance", TOLERANCE))
        if why:
            return why
    for i, ref in case.get("library", {}).items():
        why = compare(gb[i], ref, f"output {i} vs {case['library_name']}")
        if why:
            return why
    return None


ORT_TYPES = {"O": "string", "f": "float32", "i": "int64"}


def _ort_json_feed(arr):
    kind = arr.dtype.kind
    data = [None if (kind == "f" and np.isnan(v)) else (v if kind == "O" else v.item()) for v in arr.ravel()]
    return {"type": ORT_TYPES[kind], "dims": list(arr.shape), "data": data}


def _gb_output(entry):
    """One `glassbox run` output as documented in docs/ml.md: a tensor (.pb; strings as str) or, for a
    sequence of maps, the list of {key: value} objects from its .json file."""
    if entry.get("type", "").startswith("sequence<map<"):
        return json.loads(Path(entry["json"]).read_text(encoding="utf-8"))
    return numpy_helper.to_array(onnx.load_tensor(entry["pb"]))


def compare_maps(got, ref, what):
    if len(got) != len(ref):
        return f"{what}: {len(got)} maps vs {len(ref)}"
    for r, (g, e) in enumerate(zip(got, ref)):
        if list(g.keys()) != list(e.keys()):
            return f"{what}: map {r} keys {list(g.keys())} vs {list(e.keys())}"
        why = compare(np.array(list(g.values()), np.float64), np.array(list(e.values()), np.float64), f"{what} map {r}")
        if why:
            return why
    return None


def check_string_case(case, d):
    """String tensors in and out: glassbox through TensorProto files, onnxruntime-node through JSON."""
    d.mkdir(parents=True, exist_ok=True)
    model = case["model"]
    onnx.save(model, d / "model.onnx")
    specs, ort_feeds = [], {}
    for name, arr in case["feeds"].items():
        (d / f"{name}.pb").write_bytes(numpy_helper.from_array(arr, name).SerializeToString())
        specs += ["--input", f"{name}={d / (name + '.pb')}"]
        ort_feeds[name] = _ort_json_feed(arr)
    (d / "inputs.json").write_text(json.dumps(ort_feeds), encoding="utf-8")
    tensor_outputs = [o.name for o in model.graph.output if o.type.HasField("tensor_type")]
    ort = subprocess.run(["node", str(ROOT / "scripts/ml/run_ort_json.js"), str(d / "model.onnx"), str(d / "inputs.json"),
                          str(d / "ort.json")] + tensor_outputs, capture_output=True, text=True)
    gb = subprocess.run([GLASSBOX, "run", str(d / "model.onnx"), "--output-dir", str(d / "gb"), "--threads", "2"] + specs,
                        capture_output=True, text=True)
    if ort.returncode:
        return "onnxruntime failed: " + ort.stderr.strip()[-400:]
    if gb.returncode:
        return "glassbox failed: " + (gb.stderr or gb.stdout).strip()[-400:]
    entries = json.loads(gb.stdout)["outputs"]
    got = [_gb_output(e) for e in entries]
    names = [o.name for o in model.graph.output]
    ort_out = {o["name"]: o for o in json.loads((d / "ort.json").read_text(encoding="utf-8"))["outputs"]}
    for i, name in enumerate(names):
        if name not in ort_out:
            continue
        o = ort_out[name]
        ref = np.array(o["data"], dtype=object if o["type"] == "string" else np.float64 if o["type"] == "float32"
                       else np.int64).reshape(o["dims"])
        if o["type"] == "float32":
            ref = ref.astype(np.float32)
        why = compare(got[i], ref, f"output {i} ({name}) vs onnxruntime", case.get("ort_tolerance", TOLERANCE))
        if why:
            return why
    for i, ref in case.get("library", {}).items():
        why = compare(got[i], ref, f"output {i} vs {case['library_name']}")
        if why:
            return why
    for i, ref in case.get("maps", {}).items():
        why = compare_maps(got[i], ref, f"output {i} (maps) vs scikit-learn predict_proba by label")
        if not why and "probabilities" in ort_out:  # the maps carry onnxruntime's probabilities, in label order
            o = ort_out["probabilities"]
            rows = np.array(o["data"], np.float64).reshape(o["dims"])
            why = compare_maps(got[i], [dict(zip(m.keys(), row)) for m, row in zip(ref, rows)],
                               f"output {i} (maps) vs onnxruntime probabilities")
        if why:
            return why
        kind = entries[i].get("type", "")
        if not kind.startswith("sequence<map<"):
            return f"output {i}: `glassbox run` reports type '{kind}', expected sequence<map<...>>"
    return None


def check_bad(case, d):
    d.mkdir(parents=True, exist_ok=True)
    onnx.save(case["model"], d / "model.onnx")
    np.save(d / "X.npy", np.zeros((2, 4), np.float32))
    gb = subprocess.run([GLASSBOX, "run", str(d / "model.onnx"), "--input", f"X={d / 'X.npy'}", "--output-dir",
                         str(d / "gb")], capture_output=True, text=True)
    text = gb.stderr + gb.stdout
    if gb.returncode == 0:
        return "loaded and ran; expected a load error"
    if gb.returncode < 0 or gb.returncode > 2:
        return f"exit status {gb.returncode} (a crash?): {text.strip()[-300:]}"
    if case["expect"] not in text:
        return f"error does not mention '{case['expect']}': {text.strip()[-300:]}"
    return None


def check_cli(tmp):
    """`inspect --json` lists ml ops as supported with their domain; `explain` gives each tree layout and why."""
    out = []
    for name, layout in (("xgboost_binary_logistic_nan", "complete"), ("sklearn_random_forest_deep_multiclass", "sparse")):
        model = tmp / name / "model.onnx"
        if not model.exists():
            continue
        j = json.loads(subprocess.run([GLASSBOX, "inspect", "--json", str(model)], capture_output=True, text=True).stdout)
        ops = [o for o in j["ops"] if o["op_type"] == "TreeEnsembleClassifier"]
        why = None
        if not ops or ops[0]["domain"] != "ai.onnx.ml" or not ops[0]["supported"]:
            why = f"inspect reports {j['ops']}"
        text = subprocess.run([GLASSBOX, "explain", str(model)], capture_output=True, text=True).stdout
        if not why and f"tree layout: {layout}" not in text:
            why = f"explain does not say 'tree layout: {layout}': {text.strip()[-200:]}"
        out.append((f"cli_inspect_explain_{name}", why))
    model = tmp / "strings_random_forest_labels_zipmap" / "model.onnx"
    if model.exists():
        j = json.loads(subprocess.run([GLASSBOX, "inspect", "--json", str(model)], capture_output=True, text=True).stdout)
        types = {o["name"]: o["dtype"] for o in j["outputs"]}
        want = {"label": "string", "probabilities": "float32", "probability_maps": "sequence<map<string, float32>>"}
        out.append(("cli_inspect_string_and_map_types", None if types == want else f"inspect reports {types}"))
    return out


def main():
    global GLASSBOX
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    GLASSBOX, prefixes = sys.argv[1], sys.argv[2:]
    keep = None
    if prefixes[:1] == ["--keep"] and len(prefixes) >= 2:
        keep, prefixes = prefixes[1], prefixes[2:]
    failed = total = 0
    with tempfile.TemporaryDirectory() as scratch:
        tmp = keep or scratch
        groups = [(library_models.cases, check_case), (op_models.cases, check_case), (op_models.bad_cases, check_bad),
                  (string_models.cases, check_string_case), (string_models.bad_cases, check_bad)]
        for make, check in groups:
            for case in make():
                if prefixes and not any(case["name"].startswith(p) for p in prefixes):
                    continue
                why = check(case, Path(tmp) / case["name"])
                total += 1
                failed += why is not None
                print(f"{'FAIL' if why else 'PASS'} {case['name']}" + (f" {why}" if why else ""), flush=True)
        for name, why in check_cli(Path(tmp)):
            total += 1
            failed += why is not None
            print(f"{'FAIL' if why else 'PASS'} {name}" + (f" {why}" if why else ""), flush=True)
    print(f"{total - failed} passed, {failed} failed")
    return 1 if failed or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
