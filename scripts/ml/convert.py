"""Converters from scikit-learn 1.2 / XGBoost 1.7 models to ONNX ai.onnx.ml graphs (onnx.helper).

Debian has no skl2onnx/onnxmltools, so the tests carry their own converter. Each function
returns a ModelProto with one float32 input "X" [N, F]; classifiers output "label" (int64, or
string when the model's classes_ are strings: classlabels_strings) and "probabilities" (float32,
no ZipMap unless with_zipmap adds it), regressors "variable". one_hot_linear takes a string
input (OneHotEncoder cats_strings); label_encoder and category_mapper map strings <-> int64.

Exactness notes (docs/ml.md):
- scikit-learn trees split `x <= t` with a float64 t on float32 x; the ONNX threshold is
  the largest float32 <= t, which makes BRANCH_LEQ on float32 x decide identically.
- XGBoost stores float32 thresholds and splits `x < t` (BRANCH_LT); NaN follows
  default_left (nodes_missing_value_tracks_true). Values come from the JSON model
  (Booster.save_raw("json")), whose floats round-trip exactly.
- HistGradientBoosting splits `x <= t`, NaN follows missing_go_to_left.
"""
import json
import math

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import helper

ML = "ai.onnx.ml"
OPSETS = [helper.make_opsetid("", 17), helper.make_opsetid(ML, 3)]


def f32_floor(t):
    """Largest float32 <= t (so float32 x <= result iff x <= t)."""
    r = np.float32(t)
    if float(r) > t:
        r = np.nextafter(r, np.float32(-np.inf), dtype=np.float32)
    return float(r)


def _model(nodes, n_features, outputs, name):
    inp = [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, ["N", n_features])]
    graph = helper.make_graph(nodes, name, inp, outputs)
    m = helper.make_model(graph, opset_imports=OPSETS, producer_name="glassbox-scripts-ml")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def _string_classes(classes):
    return np.asarray(classes).dtype.kind in "OUS"


def _label_attrs(classes, ints_name):
    """classlabels_int64s/ints for integer classes, classlabels_strings for string classes."""
    if _string_classes(classes):
        return {"classlabels_strings": [str(c) for c in classes]}
    return {ints_name: [int(c) for c in classes]}


def _classifier_outputs(k, classes=None):
    label_type = onnx.TensorProto.STRING if classes is not None and _string_classes(classes) else onnx.TensorProto.INT64
    return [helper.make_tensor_value_info("label", label_type, ["N"]),
            helper.make_tensor_value_info("probabilities", onnx.TensorProto.FLOAT, ["N", k])]


def _regressor_outputs(t):
    return [helper.make_tensor_value_info("variable", onnx.TensorProto.FLOAT, ["N", t])]


class TreeAttrs:
    """Accumulates nodes_* and leaf weight attributes of an ensemble."""

    def __init__(self):
        self.n = {k: [] for k in ("treeids", "nodeids", "featureids", "modes", "values", "truenodeids",
                                  "falsenodeids", "missing_value_tracks_true")}
        self.w = {k: [] for k in ("treeids", "nodeids", "ids", "weights")}

    def node(self, tree, nid, feature, mode, value, true_id, false_id, missing_true):
        for k, v in zip(self.n, (tree, nid, feature, mode, value, true_id, false_id, int(missing_true))):
            self.n[k].append(v)

    def weight(self, tree, nid, target, value):
        for k, v in zip(self.w, (tree, nid, target, float(np.float32(value)))):
            self.w[k].append(v)

    def attrs(self, prefix):
        a = {"nodes_" + k: v for k, v in self.n.items()}
        a.update({f"{prefix}_{k}": v for k, v in self.w.items()})
        return a


def _add_sklearn_tree(ta, tree_id, tree, leaf_weights):
    """tree: sklearn Tree (tree_); leaf_weights(node) -> [(target, value)]."""
    for i in range(tree.node_count):
        left, right = tree.children_left[i], tree.children_right[i]
        if left < 0:
            ta.node(tree_id, i, 0, "LEAF", 0.0, 0, 0, False)
            for target, v in leaf_weights(i):
                ta.weight(tree_id, i, target, v)
        else:
            ta.node(tree_id, i, int(tree.feature[i]), "BRANCH_LEQ", f32_floor(tree.threshold[i]), int(left),
                    int(right), False)


def _class_weights(tree, i, scale, k):
    """Per-class fractions at leaf i (sklearn 1.2 stores weighted counts), times scale."""
    v = tree.value[i][0]
    p = v / v.sum()
    if k == 2:  # binary: one score, P(class 1), on class id 0 (the form onnxruntime reads as [1 - s, s])
        return [(0, p[1] * scale)]
    return [(c, p[c] * scale) for c in range(k)]


def forest_classifier(model):
    """DecisionTreeClassifier, RandomForestClassifier, ExtraTreesClassifier."""
    trees = getattr(model, "estimators_", [model])
    k = len(model.classes_)
    ta = TreeAttrs()
    for t, est in enumerate(trees):
        tr = est.tree_
        _add_sklearn_tree(ta, t, tr, lambda i, tr=tr: _class_weights(tr, i, 1.0 / len(trees), k))
    node = helper.make_node("TreeEnsembleClassifier", ["X"], ["label", "probabilities"], domain=ML,
                            post_transform="NONE", **_label_attrs(model.classes_, "classlabels_int64s"),
                            **ta.attrs("class"))
    return _model([node], model.n_features_in_, _classifier_outputs(k, model.classes_), type(model).__name__)


def forest_regressor(model):
    """DecisionTreeRegressor (SUM), RandomForestRegressor / ExtraTreesRegressor (AVERAGE)."""
    trees = getattr(model, "estimators_", [model])
    ta = TreeAttrs()
    for t, est in enumerate(trees):
        tr = est.tree_
        _add_sklearn_tree(ta, t, tr, lambda i, tr=tr: [(0, tr.value[i][0][0])])
    node = helper.make_node("TreeEnsembleRegressor", ["X"], ["variable"], domain=ML, n_targets=1,
                            aggregate_function="AVERAGE" if len(trees) > 1 else "SUM", **ta.attrs("target"))
    return _model([node], model.n_features_in_, _regressor_outputs(1), type(model).__name__)


def gradient_boosting(model, classifier):
    """GradientBoostingClassifier / Regressor: raw = init + learning_rate * sum of trees."""
    ta = TreeAttrs()
    n_stages, k_trees = model.estimators_.shape
    lr = model.learning_rate
    for s in range(n_stages):
        for c in range(k_trees):
            t = s * k_trees + c
            tr = model.estimators_[s, c].tree_
            _add_sklearn_tree(ta, t, tr, lambda i, tr=tr, c=c: [(c, lr * tr.value[i][0][0])])
    base = model._raw_predict_init(np.zeros((1, model.n_features_in_), dtype=np.float32))[0]
    if not classifier:
        node = helper.make_node("TreeEnsembleRegressor", ["X"], ["variable"], domain=ML, n_targets=1,
                                base_values=[float(base[0])], **ta.attrs("target"))
        return _model([node], model.n_features_in_, _regressor_outputs(1), "GradientBoostingRegressor")
    k = len(model.classes_)
    node = helper.make_node("TreeEnsembleClassifier", ["X"], ["label", "probabilities"], domain=ML,
                            **_label_attrs(model.classes_, "classlabels_int64s"),
                            post_transform="LOGISTIC" if k == 2 else "SOFTMAX",
                            base_values=[float(b) for b in base], **ta.attrs("class"))
    return _model([node], model.n_features_in_, _classifier_outputs(k, model.classes_), "GradientBoostingClassifier")


def hist_gradient_boosting(model, classifier):
    """HistGradientBoostingClassifier / Regressor (numerical splits; NaN -> missing_go_to_left)."""
    ta = TreeAttrs()
    t = 0
    for iteration in model._predictors:
        for c, pred in enumerate(iteration):
            for i, nd in enumerate(pred.nodes):
                if nd["is_leaf"]:
                    ta.node(t, i, 0, "LEAF", 0.0, 0, 0, False)
                    ta.weight(t, i, c, nd["value"])
                else:
                    if nd["is_categorical"]:
                        raise ValueError("categorical splits are not converted")
                    ta.node(t, i, int(nd["feature_idx"]), "BRANCH_LEQ", f32_floor(nd["num_threshold"]),
                            int(nd["left"]), int(nd["right"]), bool(nd["missing_go_to_left"]))
            t += 1
    base = [float(b) for b in np.ravel(model._baseline_prediction)]
    if not classifier:
        node = helper.make_node("TreeEnsembleRegressor", ["X"], ["variable"], domain=ML, n_targets=1,
                                base_values=base, **ta.attrs("target"))
        return _model([node], model.n_features_in_, _regressor_outputs(1), "HistGradientBoostingRegressor")
    k = len(model.classes_)
    node = helper.make_node("TreeEnsembleClassifier", ["X"], ["label", "probabilities"], domain=ML,
                            **_label_attrs(model.classes_, "classlabels_int64s"),
                            post_transform="LOGISTIC" if k == 2 else "SOFTMAX", base_values=base,
                            **ta.attrs("class"))
    return _model([node], model.n_features_in_, _classifier_outputs(k, model.classes_), "HistGradientBoostingClassifier")


def xgboost_booster(booster, n_features):
    """An XGBoost 1.7 Booster (gbtree; reg:squarederror, binary:logistic, multi:softprob) from its JSON model."""
    j = json.loads(booster.save_raw("json"))
    learner = j["learner"]
    objective = learner["objective"]["name"]
    base_score = float(learner["learner_model_param"]["base_score"])
    num_class = int(learner["learner_model_param"]["num_class"])
    model = learner["gradient_booster"]["model"]
    ta = TreeAttrs()
    for t, (tree, cls) in enumerate(zip(model["trees"], model["tree_info"])):
        left, right = tree["left_children"], tree["right_children"]
        for i in range(len(left)):
            if left[i] == -1:
                ta.node(t, i, 0, "LEAF", 0.0, 0, 0, False)
                ta.weight(t, i, int(cls), tree["split_conditions"][i])
            else:
                ta.node(t, i, int(tree["split_indices"][i]), "BRANCH_LT", float(np.float32(tree["split_conditions"][i])),
                        int(left[i]), int(right[i]), bool(tree["default_left"][i]))
    if objective == "reg:squarederror":
        node = helper.make_node("TreeEnsembleRegressor", ["X"], ["variable"], domain=ML, n_targets=1,
                                base_values=[base_score], **ta.attrs("target"))
        return _model([node], n_features, _regressor_outputs(1), "xgboost_" + objective)
    if objective == "binary:logistic":
        node = helper.make_node("TreeEnsembleClassifier", ["X"], ["label", "probabilities"], domain=ML,
                                classlabels_int64s=[0, 1], post_transform="LOGISTIC",
                                base_values=[math.log(base_score / (1 - base_score))], **ta.attrs("class"))
        return _model([node], n_features, _classifier_outputs(2), "xgboost_" + objective)
    if objective == "multi:softprob":
        node = helper.make_node("TreeEnsembleClassifier", ["X"], ["label", "probabilities"], domain=ML,
                                classlabels_int64s=list(range(num_class)), post_transform="SOFTMAX",
                                base_values=[base_score] * num_class, **ta.attrs("class"))
        return _model([node], n_features, _classifier_outputs(num_class), "xgboost_" + objective)
    raise ValueError(f"objective {objective} is not converted")


def _linear_classifier_node(model, post_transform, x="X"):
    coef, intercept = model.coef_.astype(np.float64), np.ravel(model.intercept_).astype(np.float64)
    if coef.shape[0] == 1:  # binary: two score rows [-z, z], so Z is [P(0), P(1)] / [-d, d]
        coef, intercept = np.vstack([-coef, coef]), np.concatenate([-intercept, intercept])
    return helper.make_node("LinearClassifier", [x], ["label", "probabilities"], domain=ML,
                            coefficients=[float(v) for v in coef.ravel()], intercepts=[float(v) for v in intercept],
                            post_transform=post_transform, **_label_attrs(model.classes_, "classlabels_ints"))


def linear_classifier(model, post_transform):
    """LogisticRegression (LOGISTIC binary / SOFTMAX multinomial), LinearSVC (NONE: decision values)."""
    node = _linear_classifier_node(model, post_transform)
    return _model([node], model.n_features_in_, _classifier_outputs(len(model.classes_), model.classes_),
                  type(model).__name__)


def linear_regressor(model):
    coef = np.atleast_2d(model.coef_)
    node = helper.make_node("LinearRegressor", ["X"], ["variable"], domain=ML, targets=coef.shape[0],
                            coefficients=[float(v) for v in coef.ravel()],
                            intercepts=[float(v) for v in np.atleast_1d(model.intercept_)])
    return _model([node], model.n_features_in_, _regressor_outputs(coef.shape[0]), type(model).__name__)


def _svm_kernel_attrs(model):
    gamma = model._gamma if model.kernel != "linear" else 0.0
    return {"kernel_type": model.kernel.upper(), "kernel_params": [float(gamma), float(model.coef0), float(model.degree)]}


def svm_classifier(model):
    """sklearn SVC (libsvm): the internal _dual_coef_/_intercept_ carry libsvm's signs (the public
    binary attributes are negated), so the ONNX decision value d is libsvm's (d > 0 votes the first class)."""
    k = len(model.classes_)
    attrs = dict(_svm_kernel_attrs(model), **_label_attrs(model.classes_, "classlabels_ints"),
                 vectors_per_class=[int(n) for n in model.n_support_],
                 support_vectors=[float(v) for v in model.support_vectors_.ravel()],
                 coefficients=[float(v) for v in model._dual_coef_.ravel()],
                 rho=[float(v) for v in model._intercept_])
    if model.probability:
        attrs.update(prob_a=[float(v) for v in model.probA_], prob_b=[float(v) for v in model.probB_])
    width = k if model.probability else (2 if k == 2 else k * (k - 1) // 2)
    node = helper.make_node("SVMClassifier", ["X"], ["label", "probabilities"], domain=ML, **attrs)
    return _model([node], model.n_features_in_, _classifier_outputs(width, model.classes_), "SVC")


def svm_regressor(model):
    node = helper.make_node("SVMRegressor", ["X"], ["variable"], domain=ML, n_supports=len(model.support_vectors_),
                            support_vectors=[float(v) for v in model.support_vectors_.ravel()],
                            coefficients=[float(v) for v in model._dual_coef_.ravel()],
                            rho=[float(v) for v in np.ravel(model._intercept_)], **_svm_kernel_attrs(model))
    return _model([node], model.n_features_in_, _regressor_outputs(1), "SVR")


# ---- ai.onnx.ml opset 5: TreeEnsemble ---------------------------------------------------------
# `--tree-ensemble-v5`: the same models in the form of TreeEnsemble (ai.onnx.ml 5), converted from
# the TreeEnsembleClassifier/Regressor this file writes. TreeEnsemble has one weight per leaf and no
# base values, so a tree whose leaves carry several targets' weights becomes one tree per target,
# base values become one-leaf trees (a root whose two children are the same leaf), and AVERAGE
# over split trees becomes SUM of weights divided by the original tree count. A classifier's
# label/probabilities come from standard ops after the scores: [1 - s, s] (one score), Sigmoid
# first for LOGISTIC with one score, ArgMax + Gather for the label.
OPSETS_V5 = [helper.make_opsetid("", 17), helper.make_opsetid(ML, 5)]
MODE_CODES = {"BRANCH_LEQ": 0, "BRANCH_LT": 1, "BRANCH_GTE": 2, "BRANCH_GT": 3, "BRANCH_EQ": 4, "BRANCH_NEQ": 5,
              "BRANCH_MEMBER": 6}


class V5Attrs:
    """Accumulates TreeEnsemble's node and leaf arrays; node(...)/leaf(...) return indices."""

    def __init__(self):
        self.nodes = {k: [] for k in ("featureids", "modes", "splits", "truenodeids", "trueleafs", "falsenodeids",
                                      "falseleafs", "missing_value_tracks_true", "hitrates")}
        self.leaf_targetids, self.leaf_weights, self.tree_roots, self.members = [], [], [], []

    def leaf(self, target, weight):
        self.leaf_targetids.append(int(target))
        self.leaf_weights.append(float(weight))
        return len(self.leaf_targetids) - 1

    def node(self, feature, mode, split, missing_true=False, members=None, hitrate=1.0):
        """Children are set later with link(); returns the node index."""
        vals = (int(feature), MODE_CODES.get(mode, mode), float(split), -1, 0, -1, 0, int(missing_true), float(hitrate))
        for k, v in zip(self.nodes, vals):
            self.nodes[k].append(v)
        if members is not None:
            self.members += [float(m) for m in members] + [float("nan")]
        return len(self.nodes["modes"]) - 1

    def link(self, i, true_child, true_is_leaf, false_child, false_is_leaf):
        self.nodes["truenodeids"][i], self.nodes["trueleafs"][i] = int(true_child), int(true_is_leaf)
        self.nodes["falsenodeids"][i], self.nodes["falseleafs"][i] = int(false_child), int(false_is_leaf)

    def single_leaf_tree(self, target, weight):
        lf = self.leaf(target, weight)
        i = self.node(0, 0, 0.0)
        self.link(i, lf, True, lf, True)
        self.tree_roots.append(i)

    def attrs(self, dtype=np.float32, hitrates=False):
        t = lambda v, dt=dtype: onnx.numpy_helper.from_array(np.array(v, dtype=dt))  # noqa: E731
        a = {"nodes_" + k: v for k, v in self.nodes.items() if k not in ("modes", "splits", "hitrates")}
        a.update(nodes_modes=t(self.nodes["modes"], np.uint8), nodes_splits=t(self.nodes["splits"]),
                 leaf_targetids=self.leaf_targetids, leaf_weights=t(self.leaf_weights), tree_roots=self.tree_roots)
        if hitrates:
            a["nodes_hitrates"] = t(self.nodes["hitrates"], np.float32)  # float whatever X is (onnxruntime's check)
        if self.members:
            a["membership_values"] = t(self.members)
        return a


def _v3_trees(attrs, prefix):
    """{tree id: ({node id: node tuple}, {node id: [(target, weight)]})} from a v3 node's attributes."""
    trees = {}
    for i, t in enumerate(attrs["nodes_treeids"]):
        nodes, _ = trees.setdefault(t, ({}, {}))
        nodes[attrs["nodes_nodeids"][i]] = (attrs["nodes_modes"][i].decode(), attrs["nodes_featureids"][i],
                                            attrs["nodes_values"][i], attrs["nodes_truenodeids"][i],
                                            attrs["nodes_falsenodeids"][i],
                                            (attrs.get("nodes_missing_value_tracks_true") or [0] * (i + 1))[i])
    for j, t in enumerate(attrs[prefix + "_treeids"]):
        trees[t][1].setdefault(attrs[prefix + "_nodeids"][j], []).append((attrs[prefix + "_ids"][j],
                                                                        attrs[prefix + "_weights"][j]))
    return trees


def _add_v5_tree(va, nodes, weights, target, scale):
    """Copies one v3 tree for one target (leaves: that target's weight times scale, 0 if none)."""
    def leaf_weight(nid):
        return sum(w for c, w in weights.get(nid, []) if c == target) * scale

    if nodes[0][0] == "LEAF":
        va.single_leaf_tree(target, leaf_weight(0))
        return
    index = {}
    for nid, (mode, feature, value, _, _, missing) in sorted(nodes.items()):
        if mode != "LEAF":
            index[nid] = va.node(feature, mode, value, missing)
    for nid, i in index.items():
        kids = []
        for c in nodes[nid][3:5]:
            kids += [va.leaf(target, leaf_weight(c)), True] if nodes[c][0] == "LEAF" else [index[c], False]
        va.link(i, *kids)
    va.tree_roots.append(index[0])


def tree_ensemble_v5(model, dtype=np.float32):
    """A TreeEnsembleClassifier/Regressor model written by this file -> the same model on TreeEnsemble (ai.onnx.ml 5)."""
    node = model.graph.node[0]
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    classifier = node.op_type == "TreeEnsembleClassifier"
    prefix = "class" if classifier else "target"
    trees = _v3_trees(attrs, prefix)
    n_targets = len(attrs["classlabels_int64s"]) if classifier else attrs.get("n_targets", 1)
    scored = sorted(set(attrs[prefix + "_ids"]))
    if classifier and n_targets == 2 and scored == [0]:
        n_targets = 1  # one score (the positive class's): [1 - s, s] after the ensemble
    agg = (attrs.get("aggregate_function", b"SUM") or b"SUM").decode()
    base = list(attrs.get("base_values", []))
    va = V5Attrs()
    split = any(len({c for c, _ in ws}) > 1 for _, (_, leaves) in trees.items() for ws in leaves.values())
    scale = 1.0
    if agg == "AVERAGE" and (split or base):
        agg, scale = "SUM", 1.0 / len(trees)
    for _, (nodes, weights) in sorted(trees.items()):
        for target in sorted({c for ws in weights.values() for c, _ in ws}):
            _add_v5_tree(va, nodes, weights, target, scale)
    for target, b in enumerate(base[:n_targets]):
        va.single_leaf_tree(target, b)
    post = (attrs.get("post_transform", b"NONE") or b"NONE").decode()
    one_score = n_targets == 1
    codes = {"NONE": 0, "SOFTMAX": 1, "LOGISTIC": 2, "SOFTMAX_ZERO": 3}
    ens = helper.make_node("TreeEnsemble", ["X"], ["scores" if classifier else "variable"], domain=ML,
                           n_targets=n_targets, aggregate_function={"AVERAGE": 0, "SUM": 1, "MIN": 2, "MAX": 3}[agg],
                           post_transform=0 if one_score else codes[post], **va.attrs(dtype))
    elem = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]
    n_features = model.graph.input[0].type.tensor_type.shape.dim[1].dim_value
    inp = [helper.make_tensor_value_info("X", elem, ["N", n_features])]
    if not classifier:
        out = [helper.make_tensor_value_info("variable", elem, ["N", n_targets])]
        m = helper.make_model(helper.make_graph([ens], model.graph.name + "_v5", inp, out), opset_imports=OPSETS_V5)
        m.ir_version = 8
        return m
    labels = attrs["classlabels_int64s"]
    k = len(labels)
    nodes = [ens]
    if one_score:
        src = "scores"
        if post == "LOGISTIC":
            nodes.append(helper.make_node("Sigmoid", ["scores"], ["p1"]))
            src = "p1"
        nodes += [helper.make_node("Constant", [], ["one"], value=onnx.numpy_helper.from_array(np.array(1, dtype))),
                  helper.make_node("Sub", ["one", src], ["p0"]),
                  helper.make_node("Concat", ["p0", src], ["probabilities"], axis=1)]
    else:
        nodes.append(helper.make_node("Identity", ["scores"], ["probabilities"]))
    nodes += [helper.make_node("ArgMax", ["probabilities"], ["best"], axis=1, keepdims=0),
              helper.make_node("Constant", [], ["classes"], value=onnx.numpy_helper.from_array(np.array(labels, np.int64))),
              helper.make_node("Gather", ["classes", "best"], ["label"], axis=0)]
    out = [helper.make_tensor_value_info("label", onnx.TensorProto.INT64, ["N"]),
           helper.make_tensor_value_info("probabilities", elem, ["N", k])]
    m = helper.make_model(helper.make_graph(nodes, model.graph.name + "_v5", inp, out), opset_imports=OPSETS_V5)
    m.ir_version = 8
    return m


def main(argv):
    """scripts/ml/convert.py --tree-ensemble-v5 IN.onnx OUT.onnx [--double]"""
    if len(argv) < 3 or argv[0] != "--tree-ensemble-v5":
        raise SystemExit("usage: convert.py --tree-ensemble-v5 IN.onnx OUT.onnx [--double]\n"
                         "  rewrites a TreeEnsembleClassifier/Regressor model written by this file as TreeEnsemble "
                         "(ai.onnx.ml 5); --double: double thresholds and weights, X and Y float64")
    m = tree_ensemble_v5(onnx.load(argv[1]), np.float64 if "--double" in argv[3:] else np.float32)
    onnx.save(m, argv[2])  # no checker: ONNX 1.12 has no TreeEnsemble schema



def ort_post_transform_variant(model):
    """onnxruntime (1.20 .. 1.30 at least) reads TreeEnsemble's post_transform with its internal enum
    (NONE, LOGISTIC, SOFTMAX, ...), so codes 1 and 2 are swapped against the ONNX spec (1 SOFTMAX,
    2 LOGISTIC; docs/ml.md). The model with 1 <-> 2 exchanged computes under onnxruntime what the
    spec says the original computes; None when the model does not use either code."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    swapped = False
    for node in m.graph.node:
        if node.op_type != "TreeEnsemble":
            continue
        for a in node.attribute:
            if a.name == "post_transform" and a.i in (1, 2):
                a.i = 3 - a.i
                swapped = True
    return m if swapped else None


# --- strings and maps ---

def _seq_map_output(name, key_type):
    """A graph output of type seq(map(key_type, float)) (onnx 1.12's helper has no map type maker)."""
    vi = onnx.ValueInfoProto(name=name)
    mt = vi.type.sequence_type.elem_type.map_type
    mt.key_type = key_type
    mt.value_type.tensor_type.elem_type = onnx.TensorProto.FLOAT
    return vi


def with_zipmap(model, classes):
    """Adds ZipMap(probabilities) -> "probability_maps" (seq(map(label, float))) as a third output, as
    skl2onnx's default export does (it keeps only the maps; the tensor stays here so onnxruntime-node,
    which cannot return sequences of maps, has the numbers to compare)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    strings = _string_classes(classes)
    m.graph.node.append(helper.make_node("ZipMap", ["probabilities"], ["probability_maps"], domain=ML,
                                         **_label_attrs(classes, "classlabels_int64s")))
    m.graph.output.append(_seq_map_output("probability_maps", onnx.TensorProto.STRING if strings else onnx.TensorProto.INT64))
    onnx.checker.check_model(m)
    return m


def _string_model(nodes, n_features, outputs, name):
    inp = [helper.make_tensor_value_info("X", onnx.TensorProto.STRING, ["N", n_features])]
    graph = helper.make_graph(nodes, name, inp, outputs)
    m = helper.make_model(graph, opset_imports=OPSETS, producer_name="glassbox-scripts-ml")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def one_hot_linear(encoder, clf):
    """sklearn Pipeline(OneHotEncoder(handle_unknown="ignore") on string columns, LogisticRegression):
    per column ArrayFeatureExtractor -> OneHotEncoder(cats_strings) [N, 1, K_j]; Concat; Flatten;
    LinearClassifier (string labels when clf.classes_ are strings)."""
    nodes, parts = [], []
    for j, cats in enumerate(encoder.categories_):
        idx = helper.make_tensor(f"col{j}", onnx.TensorProto.INT64, [1], [j])
        nodes.append(helper.make_node("Constant", [], [f"col{j}_idx"], value=idx))
        nodes.append(helper.make_node("ArrayFeatureExtractor", ["X", f"col{j}_idx"], [f"col{j}"], domain=ML))
        nodes.append(helper.make_node("OneHotEncoder", [f"col{j}"], [f"onehot{j}"], domain=ML,
                                      cats_strings=[str(c) for c in cats],
                                      zeros=1 if encoder.handle_unknown == "ignore" else 0))
        parts.append(f"onehot{j}")
    nodes.append(helper.make_node("Concat", parts, ["onehot"], axis=2))
    nodes.append(helper.make_node("Flatten", ["onehot"], ["features"], axis=1))
    nodes.append(_linear_classifier_node(clf, "LOGISTIC" if len(clf.classes_) == 2 else "SOFTMAX", x="features"))
    return _string_model(nodes, len(encoder.categories_), _classifier_outputs(len(clf.classes_), clf.classes_),
                         "OneHotEncoder_LogisticRegression")


def label_encoder(encoder, inverse=False, default=None):
    """sklearn LabelEncoder on strings: LabelEncoder(keys_strings=classes_, values_int64s=0..K-1) (transform),
    or the inverse (values_strings; unknown ids -> default_string, `default`)."""
    classes = [str(c) for c in encoder.classes_]
    ids = list(range(len(classes)))
    if inverse:
        attrs = dict(keys_int64s=ids, values_strings=classes)
        if default is not None:
            attrs["default_string"] = default
        x_type, y_type = onnx.TensorProto.INT64, onnx.TensorProto.STRING
    else:
        attrs = dict(keys_strings=classes, values_int64s=ids)
        if default is not None:
            attrs["default_int64"] = default
        x_type, y_type = onnx.TensorProto.STRING, onnx.TensorProto.INT64
    node = helper.make_node("LabelEncoder", ["X"], ["Y"], domain=ML, **attrs)
    graph = helper.make_graph([node], "LabelEncoder", [helper.make_tensor_value_info("X", x_type, ["N"])],
                              [helper.make_tensor_value_info("Y", y_type, ["N"])])
    m = helper.make_model(graph, opset_imports=OPSETS, producer_name="glassbox-scripts-ml")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def category_mapper(encoder, inverse=False):
    """sklearn OrdinalEncoder on one string column as CategoryMapper (cats_strings <-> 0..K-1): string -> int64
    (unknown -> -1), or int64 -> string (inverse_transform; unknown -> "_Unused")."""
    cats = [str(c) for c in encoder.categories_[0]]
    node = helper.make_node("CategoryMapper", ["X"], ["Y"], domain=ML, cats_strings=cats,
                            cats_int64s=list(range(len(cats))), default_int64=-1, default_string="_Unused")
    x_type, y_type = (onnx.TensorProto.INT64, onnx.TensorProto.STRING) if inverse else (onnx.TensorProto.STRING,
                                                                                      onnx.TensorProto.INT64)
    graph = helper.make_graph([node], "CategoryMapper", [helper.make_tensor_value_info("X", x_type, ["N", 1])],
                              [helper.make_tensor_value_info("Y", y_type, ["N", 1])])
    m = helper.make_model(graph, opset_imports=OPSETS, producer_name="glassbox-scripts-ml")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


if __name__ == "__main__":
    import sys
    main(sys.argv[1:])
