"""Small, seeded scikit-learn 1.2 and XGBoost 1.7 models with their held-out predictions.

cases() -> [{name, model (ONNX), feeds {"X": float32}, library {output index: expected},
             library_name}] for scripts/ml/ml_parity.py. Training takes a few seconds in all.
"""
import numpy as np
import xgboost as xgb
from sklearn import ensemble, linear_model, svm, tree
from sklearn.datasets import make_classification, make_regression

import convert

N_TRAIN, N_TEST = 500, 200
# onnxruntime computes SVM kernels with float32 GEMMs (sums of F products, then V kernel terms,
# cancelling); glassbox sums in double and stays within 1e-5 of scikit-learn (float64), while
# onnxruntime is up to ~2e-4 relative away from both on these models: against it we accept 5e-4.
SVM_ORT_TOLERANCE = 5e-4


def classification(n_classes, seed, nan=False):
    x, y = make_classification(n_samples=N_TRAIN + N_TEST, n_features=8, n_informative=5, n_classes=n_classes,
                               n_clusters_per_class=1, random_state=seed)
    x = x.astype(np.float32)
    if nan:  # missing values in train and test, and a row that is all NaN
        mask = np.random.default_rng(seed).random(x.shape) < 0.1
        x[mask] = np.nan
        x[-1, :] = np.nan
    return x[:N_TRAIN], y[:N_TRAIN], x[N_TRAIN:]


def regression(seed, nan=False, targets=1):
    x, y = make_regression(n_samples=N_TRAIN + N_TEST, n_features=8, n_informative=6, n_targets=targets, noise=3.0,
                           random_state=seed)
    x = x.astype(np.float32)
    if nan:
        mask = np.random.default_rng(seed).random(x.shape) < 0.1
        x[mask] = np.nan
        x[-1, :] = np.nan
    return x[:N_TRAIN], y[:N_TRAIN], x[N_TRAIN:]


def sk_classifier(name, model, n_classes, seed, convert_fn, nan=False):
    x, y, xt = classification(n_classes, seed, nan)
    model.fit(x, y)
    return dict(name=name, model=convert_fn(model), feeds={"X": xt}, library_name="scikit-learn",
                library={0: model.predict(xt).astype(np.int64), 1: model.predict_proba(xt).astype(np.float64)})


def sk_regressor(name, model, seed, convert_fn, nan=False, targets=1):
    x, y, xt = regression(seed, nan, targets)
    model.fit(x, y)
    pred = model.predict(xt).astype(np.float64).reshape(len(xt), -1)
    return dict(name=name, model=convert_fn(model), feeds={"X": xt}, library_name="scikit-learn", library={0: pred})


def xgb_case(name, params, rounds, n_classes, seed):
    if n_classes:
        x, y, xt = classification(n_classes, seed, nan=True)
    else:
        x, y, xt = regression(seed, nan=True)
    booster = xgb.train(dict(params, seed=seed, nthread=1), xgb.DMatrix(x, label=y, missing=np.nan), rounds)
    pred = booster.predict(xgb.DMatrix(xt, missing=np.nan)).astype(np.float64)
    model = convert.xgboost_booster(booster, x.shape[1])
    if n_classes == 0:
        lib = {0: pred.reshape(-1, 1)}
    elif n_classes == 2:
        lib = {0: (pred > 0.5).astype(np.int64), 1: np.stack([1 - pred, pred], axis=1)}
    else:
        lib = {0: np.argmax(pred, axis=1).astype(np.int64), 1: pred}
    return dict(name=name, model=model, feeds={"X": xt}, library_name="xgboost", library=lib)


def linear_svc_case():
    x, y, xt = classification(2, 31)
    m = svm.LinearSVC(random_state=0, max_iter=5000).fit(x, y)
    d = m.decision_function(xt).astype(np.float64)
    return dict(name="sklearn_linear_svc_binary", model=convert.linear_classifier(m, "NONE"), feeds={"X": xt},
                library_name="scikit-learn", library={0: m.predict(xt).astype(np.int64), 1: np.stack([-d, d], axis=1)})


def svc_case(name, n_classes, seed, **kw):
    x, y, xt = classification(n_classes, seed)
    m = svm.SVC(random_state=0, **kw).fit(x[:200], y[:200])  # 200 rows: a few dozen support vectors
    lib = {0: m.predict(xt).astype(np.int64)}
    if m.probability:
        lib[1] = m.predict_proba(xt).astype(np.float64)
    else:
        m.decision_function_shape = "ovo"
        d = m.decision_function(xt).astype(np.float64)
        lib[1] = np.stack([d, -d], axis=1) if n_classes == 2 else d
    return dict(name=name, model=convert.svm_classifier(m), feeds={"X": xt}, library_name="scikit-learn", library=lib,
                ort_tolerance=SVM_ORT_TOLERANCE)


def cases():
    fc, fr = convert.forest_classifier, convert.forest_regressor
    gbc = lambda m: convert.gradient_boosting(m, True)  # noqa: E731
    gbr = lambda m: convert.gradient_boosting(m, False)  # noqa: E731
    hgc = lambda m: convert.hist_gradient_boosting(m, True)  # noqa: E731
    hgr = lambda m: convert.hist_gradient_boosting(m, False)  # noqa: E731
    out = [
        sk_classifier("sklearn_decision_tree_multiclass", tree.DecisionTreeClassifier(max_depth=6, random_state=0), 3, 1, fc),
        sk_classifier("sklearn_random_forest_binary", ensemble.RandomForestClassifier(20, max_depth=8, random_state=0), 2, 2, fc),
        sk_classifier("sklearn_random_forest_deep_multiclass", ensemble.RandomForestClassifier(15, random_state=0), 4, 3, fc),
        sk_classifier("sklearn_extra_trees_multiclass", ensemble.ExtraTreesClassifier(10, max_depth=10, random_state=0), 3, 4, fc),
        sk_regressor("sklearn_decision_tree_regressor_deep", tree.DecisionTreeRegressor(random_state=0), 5, fr),
        sk_regressor("sklearn_random_forest_regressor", ensemble.RandomForestRegressor(20, max_depth=8, random_state=0), 6, fr),
        sk_classifier("sklearn_gradient_boosting_binary", ensemble.GradientBoostingClassifier(n_estimators=30, random_state=0), 2, 7, gbc),
        sk_classifier("sklearn_gradient_boosting_multiclass", ensemble.GradientBoostingClassifier(n_estimators=20, random_state=0), 3, 8, gbc),
        sk_regressor("sklearn_gradient_boosting_regressor", ensemble.GradientBoostingRegressor(n_estimators=40, random_state=0), 9, gbr),
        sk_classifier("sklearn_hist_gradient_boosting_binary_nan", ensemble.HistGradientBoostingClassifier(max_iter=30, random_state=0), 2, 10, hgc, nan=True),
        sk_classifier("sklearn_hist_gradient_boosting_multiclass_nan", ensemble.HistGradientBoostingClassifier(max_iter=20, random_state=0), 3, 11, hgc, nan=True),
        sk_regressor("sklearn_hist_gradient_boosting_regressor_nan", ensemble.HistGradientBoostingRegressor(max_iter=30, random_state=0), 12, hgr, nan=True),
        xgb_case("xgboost_regression_nan", {"objective": "reg:squarederror", "max_depth": 6}, 60, 0, 13),
        xgb_case("xgboost_binary_logistic_nan", {"objective": "binary:logistic", "max_depth": 5}, 60, 2, 14),
        xgb_case("xgboost_multiclass_softprob_nan", {"objective": "multi:softprob", "num_class": 4, "max_depth": 4}, 25, 4, 15),
        sk_classifier("sklearn_logistic_regression_binary", linear_model.LogisticRegression(max_iter=1000), 2, 20,
                      lambda m: convert.linear_classifier(m, "LOGISTIC")),
        sk_classifier("sklearn_logistic_regression_multinomial", linear_model.LogisticRegression(max_iter=1000), 4, 21,
                      lambda m: convert.linear_classifier(m, "SOFTMAX")),
        linear_svc_case(),
        svc_case("sklearn_svc_rbf_binary", 2, 24),
        svc_case("sklearn_svc_poly_multiclass", 3, 25, kernel="poly", degree=3, gamma=0.1, coef0=1.0),
        svc_case("sklearn_svc_rbf_multiclass_proba", 3, 26, probability=True),
        svc_case("sklearn_svc_sigmoid_binary_proba", 2, 27, kernel="sigmoid", gamma=0.05, probability=True),
        dict(sk_regressor("sklearn_svr_rbf", svm.SVR(C=10.0), 28, convert.svm_regressor), ort_tolerance=SVM_ORT_TOLERANCE),
        dict(sk_regressor("sklearn_svr_linear", svm.SVR(kernel="linear"), 29, convert.svm_regressor),
             ort_tolerance=SVM_ORT_TOLERANCE),
        sk_regressor("sklearn_linear_regression", linear_model.LinearRegression(), 22, convert.linear_regressor),
        sk_regressor("sklearn_ridge_two_targets", linear_model.Ridge(alpha=0.5), 23, convert.linear_regressor, targets=2),
    ]
    return out + v5_cases(out)


# The same library models on TreeEnsemble (ai.onnx.ml 5, convert.py --tree-ensemble-v5), against the
# same library predictions; two also in double (X, thresholds, weights and Y float64).
V5_CASES = ("sklearn_random_forest_binary", "sklearn_random_forest_deep_multiclass", "sklearn_random_forest_regressor",
            "sklearn_gradient_boosting_binary", "sklearn_gradient_boosting_regressor",
            "sklearn_hist_gradient_boosting_multiclass_nan", "xgboost_regression_nan", "xgboost_binary_logistic_nan",
            "xgboost_multiclass_softprob_nan")
V5_DOUBLE_CASES = ("sklearn_decision_tree_regressor_deep", "sklearn_random_forest_deep_multiclass")


def v5_cases(out):
    res = []
    for c in out:
        if c["name"] in V5_CASES:
            res.append(dict(c, name=c["name"] + "_v5", model=convert.tree_ensemble_v5(c["model"])))
        if c["name"] in V5_DOUBLE_CASES:
            res.append(dict(c, name=c["name"] + "_v5_double", model=convert.tree_ensemble_v5(c["model"], np.float64),
                            feeds={"X": c["feeds"]["X"].astype(np.float64)}))
    return res
