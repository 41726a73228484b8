"""Synthetic ai.onnx.ml models for scripts/ml/ml_parity.py: random tree ensembles over
every branch mode (uniform and mixed), NaN routing, every aggregate; one-node models of
the preprocessing ops; and broken tree attributes that must be refused at load.
"""
import numpy as np
import onnx
import onnx.numpy_helper
from onnx import helper

from convert import ML, OPSETS, OPSETS_V5, TreeAttrs, V5Attrs

F32, I64 = onnx.TensorProto.FLOAT, onnx.TensorProto.INT64
MODES = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"]


def model_of(node, inputs, outputs, name, check=True):
    graph = helper.make_graph([node], name, inputs, outputs)
    m = helper.make_model(graph, opset_imports=OPSETS, producer_name="glassbox-scripts-ml")
    m.ir_version = 8
    if check:
        onnx.checker.check_model(m)
    return m


def random_forest_attrs(rng, n_trees, depth, n_features, n_targets, modes, grid):
    """Random (unbalanced) trees; thresholds on an integer grid so EQ/NEQ and ties matter."""
    ta = TreeAttrs()
    for t in range(n_trees):
        ids = [0]
        next_id = [1]

        def grow(nid, level):
            if level == depth or (level > 1 and rng.random() < 0.25):
                ta.node(t, nid, 0, "LEAF", 0.0, 0, 0, False)
                for k in range(n_targets):
                    if n_targets == 1 or rng.random() < 0.7:
                        ta.weight(t, nid, k, rng.normal())
                return
            tid, fid = next_id[0], next_id[0] + 1
            next_id[0] += 2
            ta.node(t, nid, int(rng.integers(n_features)), str(rng.choice(modes)), float(rng.integers(-grid, grid + 1)),
                    tid, fid, bool(rng.random() < 0.5))
            grow(tid, level + 1)
            grow(fid, level + 1)

        grow(ids[0], 0)
    return ta


def ensemble_inputs(rng, rows, n_features, grid):
    x = rng.integers(-grid - 1, grid + 2, size=(rows, n_features)).astype(np.float32)
    x[rng.random(x.shape) < 0.15] = np.nan
    x[:, 0] += rng.choice([0.0, 0.5], size=rows).astype(np.float32)  # off-grid values too
    return x


def regressor_case(name, seed, modes, n_targets=3, aggregate="SUM", depth=5, n_trees=12, base=True):
    rng = np.random.default_rng(seed)
    ta = random_forest_attrs(rng, n_trees, depth, 6, n_targets, modes, 3)
    extra = {"base_values": [float(v) for v in rng.normal(size=n_targets)]} if base else {}
    node = helper.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain=ML, n_targets=n_targets,
                            aggregate_function=aggregate, **extra, **ta.attrs("target"))
    m = model_of(node, [helper.make_tensor_value_info("X", F32, ["N", 6])],
                 [helper.make_tensor_value_info("Y", F32, ["N", n_targets])], name)
    return dict(name=name, model=m, feeds={"X": ensemble_inputs(rng, 300, 6, 3)})


def classifier_case(name, seed, modes, k, post, one_class=None, base=True, labels=None):
    rng = np.random.default_rng(seed)
    ta = random_forest_attrs(rng, 10, 4, 6, 1, modes, 3)
    # One class set per tree (glassbox's requirement): each tree scores one class (all `one_class` if given).
    tree_class = {}
    for i, t in enumerate(ta.w["treeids"]):
        ta.w["ids"][i] = one_class if one_class is not None else tree_class.setdefault(t, int(rng.integers(k)))
    node = helper.make_node("TreeEnsembleClassifier", ["X"], ["label", "Z"], domain=ML,
                            classlabels_int64s=labels or [10 * c + 1 for c in range(k)], post_transform=post,
                            **({"base_values": [float(v) for v in rng.normal(size=k)] if k > 2 else [0.25]} if base else {}),
                            **ta.attrs("class"))
    m = model_of(node, [helper.make_tensor_value_info("X", F32, ["N", 6])],
                 [helper.make_tensor_value_info("label", I64, ["N"]), helper.make_tensor_value_info("Z", F32, ["N", k])], name)
    return dict(name=name, model=m, feeds={"X": ensemble_inputs(rng, 300, 6, 3)})


def one_node(name, op, feeds, out_types, out_shapes, attrs, inputs=None):
    ins = [helper.make_tensor_value_info(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[v.dtype], list(v.shape))
           for n, v in feeds.items()]
    outs = [helper.make_tensor_value_info(f"y{i}", t, s) for i, (t, s) in enumerate(zip(out_types, out_shapes))]
    node = helper.make_node(op, inputs or list(feeds), [o.name for o in outs], domain=ML, **attrs)
    return dict(name=name, model=model_of(node, ins, outs, name), feeds=feeds)


def preprocessing_cases():
    rng = np.random.default_rng(40)
    x = rng.normal(size=(7, 5)).astype(np.float32) * 3
    xn = x.copy()
    xn[rng.random(x.shape) < 0.3] = np.nan
    xi = rng.integers(0, 6, size=(7, 3)).astype(np.int64)
    return [
        one_node("scaler_per_column", "Scaler", {"X": x}, [F32], [[7, 5]],
                 {"offset": [0.5, -1.0, 2.0, 0.0, 1.0], "scale": [2.0, 0.5, -1.0, 3.0, 0.25]}),
        one_node("scaler_broadcast_int64_input", "Scaler", {"X": xi}, [F32], [[7, 3]], {"offset": [1.5], "scale": [0.5]}),
        one_node("normalizer_max", "Normalizer", {"X": x}, [F32], [[7, 5]], {"norm": "MAX"}),
        one_node("normalizer_l1", "Normalizer", {"X": x}, [F32], [[7, 5]], {"norm": "L1"}),
        one_node("normalizer_l2", "Normalizer", {"X": x}, [F32], [[7, 5]], {"norm": "L2"}),
        one_node("binarizer", "Binarizer", {"X": x}, [F32], [[7, 5]], {"threshold": 0.5}),
        one_node("imputer_nan_per_column", "Imputer", {"X": xn}, [F32], [[7, 5]],
                 {"imputed_value_floats": [1.0, 2.0, 3.0, 4.5, 5.0], "replaced_value_float": float("nan")}),
        one_node("imputer_int64", "Imputer", {"X": xi}, [I64], [[7, 3]],
                 {"imputed_value_int64s": [-7], "replaced_value_int64": 2}),
        one_node("one_hot_encoder_int64", "OneHotEncoder", {"X": xi}, [F32], [[7, 3, 4]],
                 {"cats_int64s": [0, 2, 3, 5], "zeros": 1}),
        one_node("label_encoder_int_to_float", "LabelEncoder", {"X": xi}, [F32], [[7, 3]],
                 {"keys_int64s": [0, 1, 5], "values_floats": [0.5, -1.5, 9], "default_float": 42.0}),
        one_node("label_encoder_float_to_int", "LabelEncoder", {"X": np.round(x).astype(np.float32)}, [I64], [[7, 5]],
                 {"keys_floats": [0.0, 1.0, -2.0, 3.0], "values_int64s": [10, 11, 12, 13], "default_int64": -5}),
        one_node("array_feature_extractor", "ArrayFeatureExtractor", {"X": x, "idx": np.array([4, 0, 0, 2], np.int64)},
                 [F32], [[7, 4]], {}),
        one_node("feature_vectorizer_pad_and_cut", "FeatureVectorizer",
                 {"a": x, "b": x[:, 1:3].copy(), "c": x[:, :2].copy()}, [F32], [[7, 9]], {"inputdimensions": [3, 4, 2]}),
        one_node("feature_vectorizer_int64", "FeatureVectorizer", {"a": xi, "b": xi[:, :1].copy()}, [F32], [[7, 4]],
                 {"inputdimensions": [3, 1]}),
    ]


def cases():
    out = []
    for i, mode in enumerate(MODES):  # one mode per ensemble: the complete layout, each comparison
        out.append(regressor_case(f"ensemble_uniform_{mode.lower()}", 100 + i, [mode]))
    out += [
        regressor_case("ensemble_mixed_modes_sum", 110, MODES),
        regressor_case("ensemble_mixed_modes_average", 111, MODES, aggregate="AVERAGE"),
        regressor_case("ensemble_min", 112, ["BRANCH_LEQ"], aggregate="MIN"),
        regressor_case("ensemble_max_mixed", 113, MODES, aggregate="MAX"),
        regressor_case("ensemble_deep_sparse_layout", 114, ["BRANCH_LT"], n_targets=1, depth=16, n_trees=4, base=False),
        classifier_case("classifier_multiclass_softmax_mixed", 120, MODES, 4, "SOFTMAX"),
        classifier_case("classifier_multiclass_logistic", 121, ["BRANCH_GT"], 3, "LOGISTIC"),
        classifier_case("classifier_multiclass_softmax_zero", 122, ["BRANCH_LEQ"], 3, "SOFTMAX_ZERO"),
        classifier_case("classifier_binary_class1_logistic", 123, ["BRANCH_LT"], 2, "LOGISTIC", one_class=1, base=False),
        classifier_case("classifier_binary_one_score_class0_none", 124, MODES, 2, "NONE", one_class=0),
        classifier_case("classifier_binary_one_score_class0_logistic", 126, ["BRANCH_GT"], 2, "LOGISTIC", one_class=0),
        classifier_case("classifier_binary_two_scores_logistic", 125, ["BRANCH_GTE"], 2, "LOGISTIC", base=False,
                        labels=[0, 1]),
    ]
    return out + preprocessing_cases() + v5_cases()


def _bad_tree(name, expect, edit, op="TreeEnsembleRegressor"):
    ta = TreeAttrs()
    # tree 0: 0 -> (1, 2); tree 1: a single leaf
    ta.node(0, 0, 1, "BRANCH_LEQ", 0.5, 1, 2, False)
    ta.node(0, 1, 0, "LEAF", 0, 0, 0, False)
    ta.node(0, 2, 0, "LEAF", 0, 0, 0, False)
    ta.node(1, 0, 0, "LEAF", 0, 0, 0, False)
    for t, n in ((0, 1), (0, 2), (1, 0)):
        ta.weight(t, n, 0, 1.0)
    prefix = "target" if op == "TreeEnsembleRegressor" else "class"
    attrs = ta.attrs(prefix)
    edit(attrs)
    extra = {"n_targets": 1} if op == "TreeEnsembleRegressor" else {"classlabels_int64s": [0, 1]}
    outs = [helper.make_tensor_value_info("Y", F32, ["N", 1])] if op == "TreeEnsembleRegressor" else \
        [helper.make_tensor_value_info("label", I64, ["N"]), helper.make_tensor_value_info("Z", F32, ["N", 2])]
    node = helper.make_node(op, ["X"], [o.name for o in outs], domain=ML, **extra, **attrs)
    # Not checked: the ONNX checker does not look inside these attributes (that is our job).
    return dict(name=name, expect=expect,
                model=model_of(node, [helper.make_tensor_value_info("X", F32, ["N", 4])], outs, name, check=False))


def _set(key, i, v):
    def edit(a):
        a[key][i] = v
    return edit


def dict_vectorizer_model():
    """DictVectorizer: its input is a map (glassbox has no map inputs)."""
    node = helper.make_node("DictVectorizer", ["X"], ["Y"], domain=ML, string_vocabulary=["a", "b"])
    inp = onnx.ValueInfoProto(name="X")
    mt = inp.type.map_type
    mt.key_type = onnx.TensorProto.STRING
    mt.value_type.tensor_type.elem_type = F32
    return model_of(node, [inp], [helper.make_tensor_value_info("Y", F32, ["N", 2])], "dict_vectorizer")


def bad_cases():
    return [
        dict(name="bad_dict_vectorizer_refused_with_reason", expect="DictVectorizer is refused: its input is a map",
             model=dict_vectorizer_model()),
        _bad_tree("bad_child_out_of_range", "child id 7 is out of range", _set("nodes_truenodeids", 0, 7)),
        _bad_tree("bad_negative_child", "child id -1 is out of range", _set("nodes_falsenodeids", 0, -1)),
        _bad_tree("bad_node_id_out_of_range", "node id out of range", _set("nodes_nodeids", 2, 9)),
        _bad_tree("bad_duplicate_node_id", "node id appears twice", _set("nodes_nodeids", 2, 1)),
        _bad_tree("bad_cycle_to_root", "is the root or the node itself", _set("nodes_truenodeids", 0, 0)),
        _bad_tree("bad_cycle_two_parents", "already has parent",
                  lambda a: (a["nodes_modes"].__setitem__(1, "BRANCH_LT"), a["nodes_truenodeids"].__setitem__(1, 2),
                             a["nodes_falsenodeids"].__setitem__(1, 2))),
        _bad_tree("bad_unknown_mode", "'BRANCH_XOR' is not one of", _set("nodes_modes", 0, "BRANCH_XOR")),
        _bad_tree("bad_array_lengths", "nodes_values has 3 entries", lambda a: a["nodes_values"].pop()),
        _bad_tree("bad_weight_lengths", "target_weights has 2 entries", lambda a: a["target_weights"].pop()),
        _bad_tree("bad_weight_on_branch", "weights belong on LEAF nodes", _set("target_nodeids", 0, 0)),
        _bad_tree("bad_target_id", "target id 3 is out of range", _set("target_ids", 0, 3)),
        _bad_tree("bad_missing_track_value", "must be 0 or 1", _set("nodes_missing_value_tracks_true", 0, 2)),
        _bad_tree("bad_weight_unknown_tree", "no such tree", _set("target_treeids", 0, 5)),
        _bad_tree("bad_base_values_length", "base_values has 2 entries", lambda a: a.__setitem__("base_values", [1.0, 2.0])),
        _bad_tree("bad_post_transform", "post_transform 'SIGMOID' is not one of",
                  lambda a: a.__setitem__("post_transform", "SIGMOID")),
        _bad_tree("bad_aggregate", "aggregate_function 'MEDIAN'", lambda a: a.__setitem__("aggregate_function", "MEDIAN")),
        _bad_tree("bad_classifier_class_id", "class id 2 is out of range", _set("class_ids", 1, 2),
                  op="TreeEnsembleClassifier"),
        _bad_tree("bad_classifier_class1_with_base", "onnxruntime ignores base_values",
                  lambda a: (a["class_ids"].__setitem__(slice(None), [1, 1, 1]), a.__setitem__("base_values", [0.5])),
                  op="TreeEnsembleClassifier"),
        _bad_tree("bad_classifier_both_label_kinds", "classlabels_int64s and classlabels_strings are both given",
                  lambda a: a.__setitem__("classlabels_strings", ["a", "b"]), op="TreeEnsembleClassifier"),
    ] + bad_v5_cases()


# ---- TreeEnsemble (ai.onnx.ml 5) ---------------------------------------------------------------
V5_MODES = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ", "BRANCH_MEMBER"]


def v5_model(name, attrs, n_features, n_targets, dtype=np.float32):
    elem = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]
    node = helper.make_node("TreeEnsemble", ["X"], ["Y"], domain=ML, n_targets=n_targets, **attrs)
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info("X", elem, ["N", n_features])],
                              [helper.make_tensor_value_info("Y", elem, ["N", n_targets])])
    m = helper.make_model(graph, opset_imports=OPSETS_V5, producer_name="glassbox-scripts-ml")
    m.ir_version = 8
    return m  # no checker: the linked ONNX (1.12) has no TreeEnsemble schema


def random_v5_attrs(rng, n_trees, depth, n_features, n_targets, modes, grid):
    """Random unbalanced trees in TreeEnsemble form; MEMBER sets mix small integers (onnxruntime's
    bitmask form) with values over 30 and negatives (its big-set form). Integers only: onnxruntime
    refuses other set values ("only implemented for integers"); glassbox compares by equality."""
    va = V5Attrs()
    for _ in range(n_trees):
        def grow(level):
            """Returns (index, is_leaf) of a new subtree."""
            if level == depth or (level > 1 and rng.random() < 0.25):
                return va.leaf(int(rng.integers(n_targets)), rng.normal()), True
            mode = str(rng.choice(modes))
            members = None
            if mode == "BRANCH_MEMBER":
                pool = list(range(-grid, grid + 1)) + [31, 40]
                members = sorted(set(rng.choice(pool, size=int(rng.integers(1, 5))).tolist()))
            i = va.node(int(rng.integers(n_features)), mode, float(rng.integers(-grid, grid + 1)), rng.random() < 0.5,
                        members, hitrate=float(rng.random()))
            t, tl = grow(level + 1)
            f, fl = grow(level + 1)
            va.link(i, t, tl, f, fl)
            return i, False

        root, is_leaf = grow(0)
        if is_leaf:
            va.single_leaf_tree(va.leaf_targetids[root], va.leaf_weights[root])
        else:
            va.tree_roots.append(root)
    return va


def v5_case(name, seed, modes, n_targets=3, aggregate=1, post=0, dtype=np.float32, depth=5, n_trees=12,
            hitrates=False, one_leaf=False):
    rng = np.random.default_rng(seed)
    va = random_v5_attrs(rng, n_trees, depth, 6, n_targets, modes, 3)
    if one_leaf:
        va.single_leaf_tree(0, 0.75)
    m = v5_model(name, dict(aggregate_function=aggregate, post_transform=post, **va.attrs(dtype, hitrates)), 6,
                 n_targets, dtype)
    # Integer inputs only: onnxruntime 1.30 truncates x to an integer before its set test (2.5 is "in"
    # {2} there, not by the spec's equality, which glassbox follows; tests/ml/forest_kernel_test.cpp
    # covers non-integer x and set values against the reference walk).
    x = ensemble_inputs(rng, 300, 6, 3)
    x = np.where(np.isnan(x), x, np.floor(x))
    x[:7, 1] = [31, 40, 2, -3, 3, np.nan, 30]  # set members beyond the grid
    return dict(name=name, model=m, feeds={"X": x.astype(dtype)})


def v5_cases():
    return [
        v5_case("tree_ensemble_v5_member_mixed_sum", 200, V5_MODES),
        v5_case("tree_ensemble_v5_member_only", 201, ["BRANCH_MEMBER"], n_targets=2),
        v5_case("tree_ensemble_v5_uniform_leq_complete", 202, ["BRANCH_LEQ"], one_leaf=True),
        v5_case("tree_ensemble_v5_average_hitrates", 203, V5_MODES, aggregate=0, hitrates=True),
        v5_case("tree_ensemble_v5_min", 204, V5_MODES, aggregate=2),
        v5_case("tree_ensemble_v5_max_lt", 205, ["BRANCH_LT"], aggregate=3),
        v5_case("tree_ensemble_v5_softmax", 206, V5_MODES, n_targets=4, post=1),
        v5_case("tree_ensemble_v5_logistic", 207, V5_MODES, post=2),
        v5_case("tree_ensemble_v5_softmax_zero", 208, ["BRANCH_GTE", "BRANCH_MEMBER"], post=3),
        v5_case("tree_ensemble_v5_one_target_deep_sparse", 209, ["BRANCH_LT", "BRANCH_MEMBER"], n_targets=1, depth=16,
                n_trees=4),
        v5_case("tree_ensemble_v5_double_member_mixed", 210, V5_MODES, dtype=np.float64),
        # no hitrates with double X: ONNX's type check wants them float, onnxruntime's double kernel reads double
        v5_case("tree_ensemble_v5_double_softmax", 211, V5_MODES, n_targets=3, post=1, dtype=np.float64),
        v5_case("tree_ensemble_v5_double_uniform_gt", 212, ["BRANCH_GT"], n_targets=2, dtype=np.float64),
    ]


def _bad_v5(name, expect, edit):
    # tree 0: node 0 (x1 <= 0.5) -> node 1 (x0 member {1, 2}) | leaf 0; node 1 -> leaf 1 | leaf 2; tree 1: one leaf (3)
    va = V5Attrs()
    for w in (1.0, 2.0, 3.0, 4.0):
        va.leaf(0, w)
    va.node(1, "BRANCH_LEQ", 0.5)
    va.node(0, "BRANCH_MEMBER", 0.0, members=[1, 2])
    va.link(0, 1, False, 0, True)
    va.link(1, 1, True, 2, True)
    va.node(0, "BRANCH_LEQ", 0.0)
    va.link(2, 3, True, 3, True)
    va.tree_roots = [0, 2]
    attrs = dict(va.attrs(), n_targets=1)
    edit(attrs)
    n = attrs.pop("n_targets")
    return dict(name=name, expect=expect, model=v5_model(name, attrs, 4, n))


def _set_v5(key, i, v):
    def edit(a):
        arr = a[key]
        if isinstance(arr, onnx.TensorProto):
            vals = onnx.numpy_helper.to_array(arr).copy()
            vals[i] = v
            a[key] = onnx.numpy_helper.from_array(vals)
        else:
            arr[i] = v
    return edit


def bad_v5_cases():
    t = lambda v, dt=np.float32: onnx.numpy_helper.from_array(np.array(v, dt))  # noqa: E731
    return [
        _bad_v5("bad_v5_child_out_of_range", "true child 5 is out of range", _set_v5("nodes_truenodeids", 0, 5)),
        _bad_v5("bad_v5_leaf_out_of_range", "false child 9 is out of range (leaf ids", _set_v5("nodes_falsenodeids", 1, 9)),
        _bad_v5("bad_v5_cycle", "is reached twice", _set_v5("nodes_truenodeids", 0, 0)),
        _bad_v5("bad_v5_node_in_two_trees", "is reached twice", lambda a: a.__setitem__("tree_roots", [0, 1])),
        _bad_v5("bad_v5_root_out_of_range", "is not a node index", lambda a: a.__setitem__("tree_roots", [0, 7])),
        _bad_v5("bad_v5_lengths", "nodes_featureids has 2 entries", lambda a: a["nodes_featureids"].pop()),
        _bad_v5("bad_v5_leaf_lengths", "leaf_weights has 3 entries", lambda a: a.__setitem__("leaf_weights", t([1, 2, 3]))),
        _bad_v5("bad_v5_unknown_mode", "nodes_modes = 7 is not a mode", _set_v5("nodes_modes", 0, 7)),
        _bad_v5("bad_v5_modes_not_uint8", "nodes_modes must be a uint8 tensor",
                lambda a: a.__setitem__("nodes_modes", t([0, 6, 0], np.int64))),
        _bad_v5("bad_v5_member_set_missing", "its set is missing or not ended by a NaN",
                lambda a: a.__setitem__("membership_values", t([1, 2]))),
        _bad_v5("bad_v5_member_extra_set", "values after the last BRANCH_MEMBER",
                lambda a: a.__setitem__("membership_values", t([1, 2, np.nan, 5, np.nan]))),
        _bad_v5("bad_v5_leaf_flag", "nodes_trueleafs[1] must be 0 or 1", _set_v5("nodes_trueleafs", 1, 2)),
        _bad_v5("bad_v5_target_id", "leaf_targetids = 3 is out of range", _set_v5("leaf_targetids", 2, 3)),
        _bad_v5("bad_v5_aggregate", "aggregate_function 5 is not one of", lambda a: a.__setitem__("aggregate_function", 5)),
        _bad_v5("bad_v5_post_transform", "post_transform 9 is not one of", lambda a: a.__setitem__("post_transform", 9)),
        _bad_v5("bad_v5_type_mismatch", "leaf_weights is float64 but nodes_splits is float32",
                lambda a: a.__setitem__("leaf_weights", t([1, 2, 3, 4], np.float64))),
        _bad_v5("bad_v5_n_targets_zero", "n_targets is 0", lambda a: a.__setitem__("n_targets", 0)),
    ]
