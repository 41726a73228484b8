"""String tensors and sequences of maps: scikit-learn models with string class labels and string
categories, converted by scripts/ml/convert.py (small, seeded, made at test time).

cases() -> [{name, model (ONNX), feeds {name: array (object arrays for strings)},
             library {output index: expected}, library_name, maps {output index: [{label: p}]}}]
  - every tensor output is compared with onnxruntime-node on the same file (string tensors
    in and out); onnxruntime-node cannot return sequences of maps ("Non tensor type is
    temporarily not supported"), so a ZipMap output is compared with scikit-learn's
    predict_proba mapped to classes_ (and with onnxruntime's probabilities tensor, whose
    numbers the maps carry);
  - labels and probabilities against the training library on held-out rows, which include
    categories never seen in training (OneHotEncoder handle_unknown="ignore").
bad_cases() -> [{name, model, expect}]: string attributes of mismatched lengths, defaults of
  the wrong type, repeated categories, a string tensor reaching a numeric op, a sequence of
  maps fed to another op: each must fail at load with `expect` in the message.
"""
import numpy as np
import onnx
from onnx import helper
from sklearn import ensemble, linear_model, preprocessing, svm
from sklearn.datasets import make_classification
from sklearn.pipeline import make_pipeline

import convert

ML = convert.ML
COLORS = ["red", "green", "blue", "yellow", "black"]
SIZES = ["S", "M", "L", "XL"]
CITIES = ["Zürich", "東京", "São Paulo", "Oslo", "Lagos", "Lima"]  # non-ASCII UTF-8 on purpose
ANIMALS = np.array(["bird", "cat", "dog"], dtype=object)


def categorical(seed, n, n_classes):
    """Three string columns; the label is a noisy function of them (string classes)."""
    rng = np.random.default_rng(seed)
    cols = [rng.choice(COLORS, n), rng.choice(SIZES, n), rng.choice(CITIES, n)]
    score = (np.array([COLORS.index(c) for c in cols[0]]) + 2 * np.array([SIZES.index(s) for s in cols[1]]) +
             rng.integers(0, 3, n))
    x = np.stack(cols, axis=1).astype(object)
    if n_classes == 2:
        y = np.where(score > 5, "yes", "no").astype(object)
    else:
        y = ANIMALS[score % n_classes]
    return x, y


def with_unknowns(x):
    x = x.copy()
    x[0, 0] = "purple"          # unseen category in column 0
    x[1, 2] = "Zurich"          # near-miss of a seen one (bytes compare)
    x[2, :] = ["", "XXL", "ß"]  # every column unseen
    return x


def onehot_case(name, n_classes, seed, zipmap):
    x, y = categorical(seed, 400, n_classes)
    xt, _ = categorical(seed + 1, 120, n_classes)
    xt = with_unknowns(xt)
    enc = preprocessing.OneHotEncoder(handle_unknown="ignore")
    clf = linear_model.LogisticRegression(max_iter=2000)
    pipe = make_pipeline(enc, clf).fit(x, y)
    model = convert.one_hot_linear(enc, clf)
    proba = pipe.predict_proba(xt)
    case = dict(name=name, model=model, feeds={"X": xt}, library_name="scikit-learn",
                library={0: pipe.predict(xt).astype(object), 1: proba.astype(np.float64)})
    if zipmap:
        case["model"] = convert.with_zipmap(model, clf.classes_)
        case["maps"] = {2: [dict(zip([str(c) for c in clf.classes_], row)) for row in proba]}
    return case


def numeric_string_labels(name, model, n_classes, seed, convert_fn, zipmap=False, proba=True):
    """A classifier on numeric X with string class labels (classlabels_strings)."""
    x, y = make_classification(n_samples=500, n_features=6, n_informative=4, n_classes=n_classes,
                               n_clusters_per_class=1, random_state=seed)
    x = x.astype(np.float32)
    names = ANIMALS if n_classes == 3 else np.array(["no", "yes"], dtype=object)
    y = names[y]
    model.fit(x[:300], y[:300])
    xt = x[300:]
    lib = {0: model.predict(xt).astype(object)}
    if proba:
        lib[1] = model.predict_proba(xt).astype(np.float64)
    onnx_model = convert_fn(model)
    case = dict(name=name, model=onnx_model, feeds={"X": xt}, library_name="scikit-learn", library=lib)
    if zipmap:
        case["model"] = convert.with_zipmap(onnx_model, model.classes_)
        case["maps"] = {2: [dict(zip([str(c) for c in model.classes_], row)) for row in model.predict_proba(xt)]}
    return case


def label_encoder_cases():
    rng = np.random.default_rng(7)
    le = preprocessing.LabelEncoder().fit(CITIES + COLORS)
    words = np.array(list(rng.choice(CITIES + COLORS, 50)) + ["", "unknown", "Tokyo"], dtype=object)
    known = np.array([w in le.classes_ for w in words])
    fwd = np.full(len(words), -1, np.int64)
    fwd[known] = le.transform(words[known])
    ids = np.array(list(rng.integers(0, len(le.classes_), 40)) + [-1, 99], dtype=np.int64)
    inv = np.array([le.classes_[i] if 0 <= i < len(le.classes_) else "n/a" for i in ids], dtype=object)
    return [
        dict(name="strings_label_encoder_transform", model=convert.label_encoder(le, default=-1), feeds={"X": words},
             library_name="scikit-learn LabelEncoder.transform", library={0: fwd}),
        dict(name="strings_label_encoder_inverse", model=convert.label_encoder(le, inverse=True, default="n/a"),
             feeds={"X": ids}, library_name="scikit-learn LabelEncoder.inverse_transform", library={0: inv}),
    ]


def category_mapper_cases():
    rng = np.random.default_rng(8)
    enc = preprocessing.OrdinalEncoder().fit(np.array(COLORS + SIZES, dtype=object).reshape(-1, 1))
    cats = list(enc.categories_[0])
    words = np.array(list(rng.choice(COLORS + SIZES, 40)) + ["purple", "s"], dtype=object).reshape(-1, 1)
    known = np.array([w in cats for w in words[:, 0]])
    fwd = np.full((len(words), 1), -1, np.int64)
    fwd[known, 0] = enc.transform(words[known]).astype(np.int64)[:, 0]
    ids = np.array(list(rng.integers(0, len(cats), 30)) + [-3, 100], dtype=np.int64).reshape(-1, 1)
    inv = np.array([[cats[i] if 0 <= i < len(cats) else "_Unused"] for i in ids[:, 0]], dtype=object)
    return [
        dict(name="strings_category_mapper_to_int", model=convert.category_mapper(enc), feeds={"X": words},
             library_name="scikit-learn OrdinalEncoder.transform", library={0: fwd}),
        dict(name="strings_category_mapper_to_string", model=convert.category_mapper(enc, inverse=True),
             feeds={"X": ids}, library_name="scikit-learn OrdinalEncoder.categories_", library={0: inv}),
    ]


def _one_node(op, x_type, y_type, x_shape, y_shape=None, inputs=("X",), extra_inputs=(), **attrs):
    node = helper.make_node(op, list(inputs), ["Y"], domain=ML, **attrs)
    ins = [helper.make_tensor_value_info("X", x_type, x_shape)] + list(extra_inputs)
    graph = helper.make_graph([node], op, ins, [helper.make_tensor_value_info("Y", y_type, y_shape or x_shape)])
    m = helper.make_model(graph, opset_imports=convert.OPSETS, producer_name="glassbox-scripts-ml")
    m.ir_version = 8
    return m


def op_cases():
    """LabelEncoder's other string pairs and a string ArrayFeatureExtractor, vs onnxruntime-node only."""
    S, I, F = onnx.TensorProto.STRING, onnx.TensorProto.INT64, onnx.TensorProto.FLOAT
    words = np.array([["a", "b", "zz"], ["", "c", "a"]], dtype=object)
    return [
        dict(name="strings_label_encoder_string_to_float",
             model=_one_node("LabelEncoder", S, F, [2, 3], keys_strings=["a", "b", "c"], values_floats=[0.5, -1.0, 2.25],
                             default_float=7.0), feeds={"X": words}),
        dict(name="strings_label_encoder_float_to_string",
             model=_one_node("LabelEncoder", F, S, [4], keys_floats=[0.5, -1.0, 3.0],
                             values_strings=["half", "minus one", "three"], default_string="other"),
             feeds={"X": np.array([0.5, 2.0, 3.0, -1.0], np.float32)}),
        dict(name="strings_label_encoder_string_to_string",
             model=_one_node("LabelEncoder", S, S, [2, 3], keys_strings=["a", "b"], values_strings=["A", "Bé"]),
             feeds={"X": words}),
        dict(name="strings_array_feature_extractor",
             model=_one_node("ArrayFeatureExtractor", S, S, [2, 3], [2, 2], inputs=("X", "idx"),
                             extra_inputs=[helper.make_tensor_value_info("idx", I, [2])]),
             feeds={"X": words, "idx": np.array([2, 0], np.int64)}),
    ]


def cases():
    out = [
        onehot_case("strings_onehot_logreg_multiclass", 3, 40, zipmap=False),
        onehot_case("strings_onehot_logreg_binary_zipmap", 2, 41, zipmap=True),
        numeric_string_labels("strings_random_forest_labels_zipmap",
                              ensemble.RandomForestClassifier(n_estimators=10, max_depth=6, random_state=0), 3, 42,
                              convert.forest_classifier, zipmap=True),
        numeric_string_labels("strings_decision_tree_binary_labels",
                              ensemble.ExtraTreesClassifier(n_estimators=5, max_depth=5, random_state=0), 2, 43,
                              convert.forest_classifier),
        numeric_string_labels("strings_gradient_boosting_binary_labels",
                              ensemble.GradientBoostingClassifier(n_estimators=20, max_depth=3, random_state=0), 2, 44,
                              lambda m: convert.gradient_boosting(m, True)),
        numeric_string_labels("strings_svc_labels", svm.SVC(random_state=0), 3, 45, convert.svm_classifier, proba=False),
        numeric_string_labels("strings_logreg_labels_zipmap", linear_model.LogisticRegression(max_iter=1000), 3,
                              46, lambda m: convert.linear_classifier(m, "SOFTMAX"), zipmap=True),
    ]
    # A ZipMap with int64 keys: integer classes.
    x, y = make_classification(n_samples=300, n_features=5, n_informative=3, n_classes=3, n_clusters_per_class=1,
                               random_state=47)
    x = x.astype(np.float32)
    m = linear_model.LogisticRegression(max_iter=1000).fit(x[:200], y[:200] * 10 + 5)  # labels 5, 15, 25
    proba = m.predict_proba(x[200:])
    out.append(dict(name="strings_zipmap_int64_keys",
                    model=convert.with_zipmap(convert.linear_classifier(m, "SOFTMAX"), m.classes_),
                    feeds={"X": x[200:]}, library_name="scikit-learn",
                    library={0: m.predict(x[200:]).astype(np.int64), 1: proba},
                    maps={2: [dict(zip([str(int(c)) for c in m.classes_], row)) for row in proba]}))
    return out + label_encoder_cases() + category_mapper_cases() + op_cases()


def bad_cases():
    S, I, F = onnx.TensorProto.STRING, onnx.TensorProto.INT64, onnx.TensorProto.FLOAT
    le = dict(keys_strings=["a", "b", "c"], values_int64s=[1, 2])
    out = [
        ("bad_strings_label_encoder_lengths", _one_node("LabelEncoder", S, I, [2], **le), "one value per key"),
        ("bad_strings_label_encoder_default_type",
         _one_node("LabelEncoder", S, I, [2], keys_strings=["a"], values_int64s=[1], default_string="x"), "never apply"),
        ("bad_strings_label_encoder_two_key_kinds",
         _one_node("LabelEncoder", S, I, [2], keys_strings=["a"], keys_int64s=[3], values_int64s=[1]), "exactly one of keys"),
        ("bad_strings_category_mapper_lengths",
         _one_node("CategoryMapper", S, I, [2], cats_strings=["a", "b"], cats_int64s=[1, 2, 3]), "equal length"),
        ("bad_strings_category_mapper_repeated",
         _one_node("CategoryMapper", S, I, [2], cats_strings=["a", "a"], cats_int64s=[1, 2]), "twice"),
        ("bad_strings_one_hot_both_kinds",
         _one_node("OneHotEncoder", S, F, [2], [2, 2], cats_strings=["a", "b"], cats_int64s=[1, 2]), "exactly one of cats"),
        ("bad_strings_one_hot_repeated", _one_node("OneHotEncoder", S, F, [2], [2, 2], cats_strings=["a", "a"]), "twice"),
        ("bad_strings_zipmap_no_labels", _zipmap_model({}), "exactly one of classlabels"),
        ("bad_strings_zipmap_repeated_labels", _zipmap_model({"classlabels_strings": ["a", "a"]}), "unique"),
        ("bad_strings_linear_classifier_label_count",
         _linear_model({"classlabels_strings": ["a", "b", "c"]}), "labels for 2 score rows"),
        ("bad_strings_linear_classifier_both_labels",
         _linear_model({"classlabels_strings": ["a", "b"], "classlabels_ints": [1, 2]}), "both given"),
        ("bad_strings_tree_classifier_label_count", _tree_model(["only"]), "at least 2 classes"),
        ("bad_strings_into_numeric_op", _string_into("Abs", "", S), "does not take string tensors"),
        ("bad_strings_into_ml_numeric_op", _string_into("Normalizer", ML, S, norm="MAX"), "does not take string tensors"),
        ("bad_strings_map_sequence_into_op", _maps_into_identity(), "sequence of maps"),
    ]
    return [dict(name=n, model=m, expect=e) for n, m, e in out]


def _zipmap_model(attrs):
    node = helper.make_node("ZipMap", ["X"], ["Y"], domain=ML, **attrs)
    graph = helper.make_graph([node], "zipmap", [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [2, 2])],
                              [convert._seq_map_output("Y", onnx.TensorProto.STRING)])
    m = helper.make_model(graph, opset_imports=convert.OPSETS)
    m.ir_version = 8
    return m


def _linear_model(labels):
    node = helper.make_node("LinearClassifier", ["X"], ["label", "probabilities"], domain=ML,
                            coefficients=[1.0] * 8, intercepts=[0.0, 1.0], **labels)
    graph = helper.make_graph([node], "lc", [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [2, 4])],
                              convert._classifier_outputs(2, np.array(["a"], dtype=object)))
    m = helper.make_model(graph, opset_imports=convert.OPSETS)
    m.ir_version = 8
    return m


def _tree_model(labels):
    node = helper.make_node("TreeEnsembleClassifier", ["X"], ["label", "probabilities"], domain=ML,
                            nodes_treeids=[0], nodes_nodeids=[0], nodes_featureids=[0], nodes_modes=["LEAF"],
                            nodes_values=[0.0], nodes_truenodeids=[0], nodes_falsenodeids=[0], class_treeids=[0],
                            class_nodeids=[0], class_ids=[0], class_weights=[1.0], classlabels_strings=labels)
    graph = helper.make_graph([node], "tc", [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [2, 4])],
                              convert._classifier_outputs(1, np.array(labels, dtype=object)))
    m = helper.make_model(graph, opset_imports=convert.OPSETS)
    m.ir_version = 8
    return m


def _string_into(op, domain, x_type, **attrs):
    """A string graph input fed to an op that computes on numbers."""
    node = helper.make_node(op, ["X"], ["Y"], domain=domain, **attrs)
    graph = helper.make_graph([node], "s", [helper.make_tensor_value_info("X", x_type, [2, 4])],
                              [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, [2, 4])])
    m = helper.make_model(graph, opset_imports=convert.OPSETS)
    m.ir_version = 8
    return m


def _maps_into_identity():
    """ZipMap's sequence of maps fed to another op (maps are graph outputs only)."""
    z = helper.make_node("ZipMap", ["X"], ["maps"], domain=ML, classlabels_int64s=[0, 1, 2, 3])
    ident = helper.make_node("Identity", ["maps"], ["Y"])
    graph = helper.make_graph([z, ident], "m", [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [2, 4])],
                              [convert._seq_map_output("Y", onnx.TensorProto.INT64)])
    m = helper.make_model(graph, opset_imports=convert.OPSETS)
    m.ir_version = 8
    return m
