"""The estimators as scikit-learn citizens (issue 41): apply / decision_path / get_depth / get_n_leaves /
feature_importances_ on every tree estimator, each checked against an independent computation, and
``to_sklearn()``: a fitted scikit-learn tree that predicts as ours (five datasets, classifier and regressor;
float32 values one step apart at every threshold), which export_text, plot_tree, export_graphviz, skl2onnx and
SHAP accept."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, load_wine
from sklearn.exceptions import NotFittedError
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor, export_graphviz, export_text

from opttrees import (FlowOCTClassifier, OptimalPrescriptiveTree, OptimalTreeClassifier, OptimalTreeCV,
                      OptimalTreeRegressor, PolicyTree, RobustTreeClassifier, SPOForest, SPOTree)
from opttrees.data.prepared import cut_of_le, prepare
from opttrees.errors import InputError
from opttrees.heuristics.cart import tree_from_sklearn
from opttrees.sklearn_export import feature_importances, set_node_statistics, sklearn_threshold, to_sklearn
from opttrees.tree import LEAF, Tree


# ------------------------------------------------------------------------------------------ data
def _ties():
    """Many duplicate values and neighbours one float32 step apart, with the label switching between them."""
    rng = np.random.default_rng(3)
    base = np.float32(1.0)
    grid = np.array([base, np.nextafter(base, np.float32(2)), np.nextafter(np.nextafter(base, np.float32(2)),
                                                                           np.float32(2))], dtype=np.float64)
    x0 = rng.choice(grid, 120)
    x1 = rng.integers(0, 3, 120).astype(np.float64)       # ties: three values only
    X = np.column_stack([x0, x1, rng.normal(size=120)])
    y = (x0 > grid[0]).astype(int) + (x1 == 2)
    return X, y


def _classification(name):
    if name == "ties":
        return _ties()
    return {"iris": load_iris, "wine": load_wine, "breast_cancer": load_breast_cancer}[name](return_X_y=True)


def _regression(name):
    if name == "diabetes":
        return load_diabetes(return_X_y=True)
    X, y = _classification(name)
    rng = np.random.default_rng(0)
    return X, y + 0.1 * rng.normal(size=len(y))    # a numeric target on the same features


DATASETS = ["iris", "wine", "breast_cancer", "ties"]


def _walk(tree: Tree, x) -> list[int]:
    """The independent routing: one row, node by node, left iff x[feature] (or coef . x) < threshold."""
    path, t = [0], 0
    while tree.children_left[t] != LEAF:
        f = int(tree.feature[t])
        v = x[f] if f >= 0 else sum(float(a) * float(xj) for a, xj in zip(tree.coef[t], x))
        t = int(tree.children_left[t] if v < tree.threshold[t] else tree.children_right[t])
        path.append(t)
    return path


def _near_thresholds(tree: Tree, X: np.ndarray) -> np.ndarray:
    """Float32 rows around every threshold: each training row's split feature set to the float32 values two steps
    either side of the threshold (values one float32 apart), so both trees see exactly these numbers."""
    rows = [X.astype(np.float32).astype(np.float64)]
    for t in np.nonzero(tree.children_left != LEAF)[0]:
        j, b = int(tree.feature[t]), float(tree.threshold[t])
        v = np.float32(b)
        vals = [v]
        for _ in range(2):
            vals = [np.nextafter(vals[0], np.float32(-np.inf))] + vals + [np.nextafter(vals[-1], np.float32(np.inf))]
        for val in vals:
            Z = rows[0][:40].copy()
            Z[:, j] = float(val)
            rows.append(Z)
    return np.vstack(rows)


# ------------------------------------------------------------------------------------------ round trips
@pytest.mark.parametrize("name", DATASETS + ["iris-dp"])
def test_to_sklearn_classifier_predicts_as_ours(name):
    X, y = _classification(name.removesuffix("-dp"))
    est = OptimalTreeClassifier(max_depth=2 if name.endswith("dp") else 3,
                                method="dp" if name.endswith("dp") else "greedy", time_limit=120).fit(X, y)
    sk = est.to_sklearn()
    assert isinstance(sk, DecisionTreeClassifier)
    Z = _near_thresholds(est.tree_, X)
    assert np.array_equal(sk.predict(X), est.predict(X))
    assert np.array_equal(sk.predict_proba(X), est.predict_proba(X))
    assert np.array_equal(sk.predict(Z), est.predict(Z))
    assert np.array_equal(sk.predict_proba(Z), est.predict_proba(Z))
    assert np.array_equal(sk.apply(Z.astype(np.float32)), est.apply(Z))
    assert (sk.decision_path(Z.astype(np.float32)) != est.decision_path(Z)).nnz == 0
    assert sk.get_depth() == est.get_depth() and sk.get_n_leaves() == est.get_n_leaves()
    assert np.array_equal(sk.feature_importances_, est.feature_importances_)
    assert np.array_equal(sk.tree_.n_node_samples, np.bincount(est.decision_path(X).indices, minlength=sk.tree_.node_count))


@pytest.mark.parametrize("name", ["diabetes"] + DATASETS)
@pytest.mark.parametrize("loss", ["squared", "absolute"])
def test_to_sklearn_regressor_predicts_as_ours(name, loss):
    X, y = _regression(name)
    est = OptimalTreeRegressor(max_depth=3, method="greedy" if loss == "squared" else "local-search", loss=loss,
                               n_restarts=3, time_limit=120).fit(X, y)
    sk = est.to_sklearn()
    assert isinstance(sk, DecisionTreeRegressor) and sk.criterion == f"{loss}_error"
    Z = _near_thresholds(est.tree_, X)
    assert np.array_equal(sk.predict(X), est.predict(X))
    assert np.array_equal(sk.predict(Z), est.predict(Z))
    assert np.array_equal(sk.feature_importances_, est.feature_importances_)
    # a branch node's value is the weighted mean of its training rows' predictions (what scikit-learn shows)
    pred, path = est.predict(X), est.decision_path(X).tocsc()
    for t in range(sk.tree_.node_count):
        rows = path.indices[path.indptr[t]:path.indptr[t + 1]]
        assert sk.tree_.value[t, 0, 0] == pytest.approx(pred[rows].mean(), rel=1e-12)


def test_float64_neighbours_scikit_learn_cannot_tell_apart_are_refused():
    """Values one float64 step apart are one float32: our tree splits them, no scikit-learn tree can."""
    a = 1.0
    X = np.array([[0.0], [a], [a], [np.nextafter(a, 2)], [np.nextafter(a, 2)], [3.0]])
    y = np.array([0, 0, 0, 1, 1, 1])
    est = OptimalTreeClassifier(max_depth=1, method="greedy").fit(X, y)
    assert est.score(X, y) == 1.0
    with pytest.raises(InputError, match="same float32.*X.astype"):
        est.to_sklearn()


@settings(max_examples=300, deadline=None)
@given(b=st.floats(-1e30, 1e30), x=st.floats(allow_nan=False, allow_infinity=False, width=32),
       step=st.integers(-3, 3))
def test_threshold_routes_every_float32_as_ours(b, x, step):
    t = sklearn_threshold(b)
    near = np.float32(b)        # and the float32 values a few steps either side of b
    for _ in range(abs(step)):
        near = np.nextafter(near, np.float32(np.sign(step) * np.inf))
    for v in (float(x), float(near)):
        assert (float(np.float32(v)) <= t) == (v < b)


@settings(max_examples=300, deadline=None)
@given(lo=st.floats(-1e6, 1e6), gap=st.floats(0, 1e-3), shift=st.floats(0, 1))
def test_threshold_keeps_the_training_values_nearest_the_split(lo, gap, shift):
    hi = float(np.nextafter(lo + gap, np.inf))
    b = float(np.clip(lo + shift * (hi - lo), np.nextafter(lo, np.inf), hi))
    if np.float32(lo) == np.float32(hi):
        with pytest.raises(ValueError, match="same float32"):
            sklearn_threshold(b, lo, hi)
        return
    t = sklearn_threshold(b, lo, hi)
    assert float(np.float32(lo)) <= t < float(np.float32(hi))
    # and back: the project's x <= t -> x < b conversion (cut_of_le, float32) routes lo and hi as our split does
    b2 = cut_of_le(np.array([lo, hi]), t, float32=True)
    assert lo < b2 <= hi


# ------------------------------------------------------------------------------------------ attributes
def test_importances_match_scikit_learn_on_its_own_tree_with_weights():
    """A scikit-learn tree converted into ours (same data, same weights): the same importances and node counts."""
    X, y = load_wine(return_X_y=True)
    w = np.random.default_rng(1).integers(1, 4, len(y)).astype(float)
    sk = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y, sample_weight=w)
    data = prepare(X, y, "classification", w)
    tree = set_node_statistics(tree_from_sklearn(sk, data), X, data.y, w, criterion="gini")
    assert np.allclose(feature_importances(tree), sk.feature_importances_, rtol=1e-12, atol=1e-15)
    assert np.array_equal(tree.extras["n_node_samples"], sk.tree_.n_node_samples)
    assert np.allclose(tree.extras["weighted_n_node_samples"], sk.tree_.weighted_n_node_samples)
    assert np.allclose(tree.extras["impurity"], sk.tree_.impurity, rtol=1e-12, atol=1e-15)


def test_regression_importances_match_scikit_learn_on_its_own_tree():
    X, y = load_diabetes(return_X_y=True)
    w = np.random.default_rng(2).integers(1, 4, len(y)).astype(float)
    sk = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y, sample_weight=w)
    s = sk.tree_
    inner = s.children_left >= 0
    thr = np.array([cut_of_le(X[:, s.feature[t]], s.threshold[t], float32=True) if inner[t] else 0.0
                    for t in range(s.node_count)])
    tree = Tree(np.where(inner, s.children_left, LEAF), np.where(inner, s.children_right, LEAF),
                np.where(inner, s.feature, LEAF), thr, s.value[:, :, 0], task="regression", n_features=X.shape[1])
    assert np.array_equal(tree.predict(X), sk.predict(X))
    set_node_statistics(tree, X, y, w, criterion="squared_error")
    assert np.allclose(feature_importances(tree), sk.feature_importances_, rtol=1e-9)
    assert np.allclose(tree.extras["impurity"], s.impurity, rtol=1e-9)


def test_importances_by_hand_gini():
    """The importances recomputed by brute force: gini from each node's routed class weights."""
    X, y = load_iris(return_X_y=True)
    w = np.linspace(0.5, 2, len(y))
    est = OptimalTreeClassifier(max_depth=3, method="greedy").fit(X, y, sample_weight=w)
    tree = est.tree_
    paths = [_walk(tree, x) for x in X]

    def node(t):
        wt = np.array([w[i] for i, p in enumerate(paths) if t in p])
        yt = np.array([y[i] for i, p in enumerate(paths) if t in p])
        W = wt.sum()
        return W, 1 - sum((wt[yt == k].sum() / W) ** 2 for k in range(3)) if W else 0.0

    imp = np.zeros(4)
    for t in range(tree.n_nodes):
        if tree.children_left[t] != LEAF:
            (Wt, it), (Wl, il), (Wr, ir) = node(t), node(tree.children_left[t]), node(tree.children_right[t])
            imp[tree.feature[t]] += Wt * it - Wl * il - Wr * ir
    assert np.allclose(est.feature_importances_, imp / imp.sum(), rtol=1e-12)


def _spo_data(n, p, signal, seed):
    """Shortest-path costs whose best path (of the 2 x 2 grid's two) flips with the sign of feature ``signal``."""
    from opttrees.oracles import GridShortestPath
    pr = GridShortestPath(2, 2)
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    first, second = pr.solve(np.array([[0.0, 1, 1, 0], [1.0, 0, 0, 1]]))[0]    # the two paths
    C = (np.abs(rng.normal(size=(n, pr.n_decisions))) + 3 * np.outer(X[:, signal] > 0, first)
         + 3 * np.outer(X[:, signal] <= 0, second))
    return pr, X, C


def _fitted_estimators():
    """Every tree estimator, fitted quickly on small data, with its training X."""
    X, y = load_iris(return_X_y=True)
    Xs, ys = X[::3], y[::3]
    rng = np.random.default_rng(0)
    out = [(OptimalTreeClassifier(max_depth=2, method="greedy").fit(Xs, ys), Xs),
           (OptimalTreeClassifier(max_depth=1, method="local-search", split_type="hyperplane", n_restarts=2)
            .fit(Xs, (Xs[:, 0] - Xs[:, 1] > 2.5).astype(int)), Xs),
           (OptimalTreeRegressor(max_depth=2, n_restarts=2).fit(Xs, Xs[:, 0]), Xs),
           (OptimalTreeRegressor(max_depth=1, leaf_model="linear", n_restarts=2).fit(Xs, Xs[:, 0]), Xs),
           (OptimalTreeCV(max_depth=2, n_restarts=2).fit(Xs, ys), Xs),
           (FlowOCTClassifier(max_depth=1, time_limit=30).fit(Xs, ys), Xs)]
    Xi = rng.integers(0, 4, (40, 2)).astype(float)
    out.append((RobustTreeClassifier(max_depth=1, time_limit=30).fit(Xi, (Xi[:, 0] > 1).astype(int)), Xi))
    pr, Xc, C = _spo_data(80, 3, 0, 0)
    out.append((SPOTree(decision_problem=pr, max_depth=2, min_samples_leaf=5).fit(Xc, C), Xc))
    t = rng.integers(0, 2, 80)
    outcome = Xc[:, 1] * (2 * t - 1) + 0.1 * rng.normal(size=80)
    out.append((OptimalPrescriptiveTree(max_depth=1, method="greedy", min_samples_leaf=5).fit(Xc, t, outcome), Xc))
    out.append((PolicyTree(max_depth=1, method="greedy", min_samples_leaf=5).fit(Xc, t, outcome), Xc))
    return out


@pytest.fixture(scope="module")
def fitted():
    return _fitted_estimators()


def test_every_tree_estimator_has_the_attributes(fitted):
    seen = set()
    for est, X in fitted:
        seen.add(type(est).__name__)
        tree = est.tree_
        paths = [_walk(tree, x) for x in X]
        assert est.apply(X).tolist() == [p[-1] for p in paths]
        ind = est.decision_path(X)
        assert ind.shape == (len(X), tree.n_nodes) and ind.format == "csr"
        assert all(sorted(ind.indices[ind.indptr[i]:ind.indptr[i + 1]]) == sorted(p) for i, p in enumerate(paths))
        assert np.array_equal(ind.indices[ind.indptr[1:] - 1], est.apply(X))   # the last node is the leaf
        leaves = [t for t in range(tree.n_nodes) if tree.children_left[t] == LEAF]
        assert est.get_n_leaves() == len(leaves)
        assert est.get_depth() == max(len(_walk_to(tree, t)) - 1 for t in leaves)
        imp = est.feature_importances_
        assert imp.shape == (X.shape[1],) and (imp.sum() == pytest.approx(1.0) or tree.n_nodes == 1)
        used = {j for t in range(tree.n_nodes) if tree.children_left[t] != LEAF
                for j in np.nonzero(tree.split_coef(t))[0]}
        assert all(imp[j] == 0 for j in range(X.shape[1]) if j not in used)
        assert tree.extras["n_node_samples"][0] == len(X)   # every training row reaches the root
    assert seen == {"OptimalTreeClassifier", "OptimalTreeRegressor", "OptimalTreeCV", "FlowOCTClassifier",
                    "RobustTreeClassifier", "SPOTree", "OptimalPrescriptiveTree", "PolicyTree"}


def _walk_to(tree: Tree, target: int) -> list[int]:
    parent = {int(c): t for t in range(tree.n_nodes) for c in (tree.children_left[t], tree.children_right[t]) if c >= 0}
    out = [target]
    while out[-1] in parent:
        out.append(parent[out[-1]])
    return out


def test_attributes_before_fit_raise_not_fitted():
    for est in (OptimalTreeClassifier(), OptimalTreeRegressor(), SPOTree(), PolicyTree()):
        for call, args in ((est.get_depth, ()), (est.get_n_leaves, ()), (est.to_sklearn, ()),
                           (est.apply, ([[0.0]],)), (est.decision_path, ([[0.0]],))):
            with pytest.raises(NotFittedError):
                call(*args)
        assert not hasattr(est, "feature_importances_")
    assert not hasattr(SPOForest(), "feature_importances_")


def test_every_estimator_converts_or_is_refused_clearly(fitted):
    messages = {"hyperplane": "axis-parallel splits", "linear": "linear leaves", "spo": "SPO leaves",
                "prescription": "prescriptive leaves"}
    refused, converted = set(), set()
    for est, X in fitted:
        tree = est.tree_
        kind = "hyperplane" if (tree.feature == -2).any() else tree.task
        if kind in messages:
            with pytest.raises(InputError, match=messages[kind]):
                est.to_sklearn()
            refused.add(kind)
            continue
        sk = est.to_sklearn()
        assert np.array_equal(sk.predict(X), est.predict(X))
        if tree.task == "classification":
            assert np.array_equal(sk.predict_proba(X), est.predict_proba(X))
        converted.add(type(est).__name__)
    assert refused == set(messages)
    assert converted == {"OptimalTreeClassifier", "OptimalTreeRegressor", "OptimalTreeCV", "FlowOCTClassifier",
                         "RobustTreeClassifier"}


def test_spo_importances_by_hand(fitted):
    """SPOTree: the decrease of the training SPO regret, each node deciding w*(its rows' mean cost)."""
    est, X = next((e, X) for e, X in fitted if isinstance(e, SPOTree))
    tree = est.tree_
    assert tree.n_splits >= 1
    dp = est.decision_path(X).tocsc()
    pr, Xc, C = _spo_data(80, 3, 0, 0)
    assert np.array_equal(Xc, X)
    z = pr.solve(C)[1]

    def loss(t):
        rows = dp.indices[dp.indptr[t]:dp.indptr[t + 1]]
        dec = pr.solve(C[rows].mean(axis=0, keepdims=True))[0][0]
        return float((C[rows] @ dec - z[rows]).sum())

    imp = np.zeros(3)
    for t in range(tree.n_nodes):
        if tree.children_left[t] != LEAF:
            imp[tree.feature[t]] += loss(t) - loss(tree.children_left[t]) - loss(tree.children_right[t])
    assert np.allclose(est.feature_importances_, imp / imp.sum(), rtol=1e-9)


def test_spo_forest_attributes():
    pr, X, C = _spo_data(120, 4, 1, 1)
    f = SPOForest(decision_problem=pr, n_estimators=4, max_depth=2, min_samples_leaf=5, max_features=None,
                  n_jobs=1).fit(X, C)
    leaves = f.apply(X)
    assert leaves.shape == (120, 4)
    assert all(np.array_equal(leaves[:, i], t.apply(X)) for i, t in enumerate(f.estimators_))
    ind, ptr = f.decision_path(X)
    assert ind.shape == (120, ptr[-1]) and list(np.diff(ptr)) == [t.n_nodes for t in f.estimators_]
    for i, t in enumerate(f.estimators_):
        assert (ind[:, ptr[i]:ptr[i + 1]] != t.decision_path(X)).nnz == 0
    imp = f.feature_importances_
    assert imp.sum() == pytest.approx(1.0) and imp[1] == imp.max()


# ------------------------------------------------------------------------------------------ leaves and ties
def _two_leaf_tree(counts_left, counts_right, labels):
    return Tree([1, LEAF, LEAF], [2, LEAF, LEAF], [0, LEAF, LEAF], [0.5, 0.0, 0.0],
                [np.add(counts_left, counts_right), counts_left, counts_right], label=[0, *labels],
                classes=["a", "b"], n_features=1)


def test_a_tied_leaf_keeps_its_label_and_a_non_majority_label_is_refused():
    X = np.array([[0.0], [1.0]])
    tied = to_sklearn(_two_leaf_tree([2.0, 2.0], [0.0, 3.0], [1, 1]))
    assert tied.predict(X).tolist() == ["b", "b"]
    assert np.allclose(tied.predict_proba(X), [[0.5, 0.5], [0.0, 1.0]], rtol=0, atol=1e-15)
    with pytest.raises(InputError, match="leaf 1 predicts class 'b' but its training rows' majority"):
        to_sklearn(_two_leaf_tree([3.0, 1.0], [0.0, 3.0], [1, 1]))


def test_a_single_leaf_converts():
    X = np.zeros((4, 2))
    for y in ([0, 1, 1, 1], [1.0, 2.0, 3.0, 4.0]):
        est = (OptimalTreeClassifier if isinstance(y[0], int) else OptimalTreeRegressor)(max_depth=0,
                                                                                       method="greedy").fit(X, y)
        sk = est.to_sklearn()
        text = export_text(sk)
        assert sk.tree_.node_count == 1 and sk.get_depth() == 0 and ("class:" in text or "value:" in text)
        assert np.array_equal(sk.predict(X), est.predict(X)) and not est.feature_importances_.any()


def test_node_statistics_reject_bad_arguments_by_name():
    tree = OptimalTreeClassifier(max_depth=1, method="greedy").fit([[0.0], [1.0]], [0, 1]).tree_
    with pytest.raises(InputError, match="exactly one of criterion= and node_loss="):
        set_node_statistics(tree, [[0.0], [1.0]])
    with pytest.raises(InputError, match="unknown criterion 'entropy'"):
        set_node_statistics(tree, [[0.0], [1.0]], [0, 1], criterion="entropy")
    with pytest.raises(InputError, match="needs y with one value per row of X"):
        set_node_statistics(tree, [[0.0], [1.0]], [0], criterion="gini")
    with pytest.raises(InputError, match="class codes in 0..1"):
        set_node_statistics(tree, [[0.0], [1.0]], [0, 5], criterion="gini")
    with pytest.raises(InputError, match="one total loss per node"):
        set_node_statistics(tree, [[0.0], [1.0]], node_loss=[1.0])


def test_regression_tree_without_statistics_names_the_fix():
    tree = Tree([1, LEAF, LEAF], [2, LEAF, LEAF], [0, LEAF, LEAF], [0.5, 0, 0], [[0.0], [1.0], [2.0]],
                task="regression", n_features=1)
    with pytest.raises(InputError, match="set_node_statistics"):
        to_sklearn(tree)


def test_regression_leaves_print_their_rows():
    X, y = load_diabetes(return_X_y=True)
    w = np.where(np.arange(len(y)) % 2, 2.0, 1.0)
    est = OptimalTreeRegressor(max_depth=2, method="greedy").fit(X, y)
    text = est.tree_.export_text()
    counts = np.bincount(est.apply(X), minlength=est.tree_.n_nodes)
    for t in est.tree_.leaves:
        assert f"leaf {t}: predict " in text and f"[rows {counts[t]}]" in text
    weighted = OptimalTreeRegressor(max_depth=1, method="greedy").fit(X, y, sample_weight=w)
    leaf = weighted.tree_.leaves[0]
    rows = weighted.apply(X) == leaf
    assert f"[rows {rows.sum()}, weight {w[rows].sum():g}]" in weighted.tree_.export_text()


# ------------------------------------------------------------------------------------------ categories
def test_a_tree_on_category_columns_converts_over_its_one_hot_features():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"colour": pd.Categorical(rng.choice(["red", "green", "blue"], 90)),
                       "size": rng.normal(size=90)})
    y = ((df["colour"] == "red") | (df["size"] > 1)).astype(int)
    est = OptimalTreeClassifier(max_depth=2, method="greedy").fit(df, y)
    sk = est.to_sklearn()
    encoded = est.tree_.encoding.transform(df)
    assert list(sk.feature_names_in_) == list(encoded.columns)
    assert np.array_equal(sk.predict(encoded), est.predict(df))
    assert "colour=red" in export_text(sk, feature_names=list(sk.feature_names_in_))


# ------------------------------------------------------------------------------------------ the scikit-learn tools
@pytest.fixture(scope="module")
def iris_pair():
    X, y = load_iris(return_X_y=True, as_frame=True)
    est = OptimalTreeClassifier(max_depth=2, method="greedy").fit(X, y)
    return est, est.to_sklearn(), X


def test_export_text_graphviz_and_plot_tree(iris_pair):
    est, sk, X = iris_pair
    assert list(sk.feature_names_in_) == list(X.columns)
    text = export_text(sk, feature_names=list(X.columns), show_weights=True)
    assert "petal" in text and text.count("class:") == est.get_n_leaves()
    dot = export_graphviz(sk, feature_names=list(X.columns), class_names=["s", "ve", "vi"])
    assert dot.startswith("digraph") and f"{sk.tree_.node_count - 1} [label=" in dot
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.tree import plot_tree
    fig, ax = plt.subplots()
    try:
        texts = [a.get_text() for a in plot_tree(sk, ax=ax, feature_names=list(X.columns))]
        assert sum("samples = " in t for t in texts) == sk.tree_.node_count
        assert sum("petal width (cm) <= 0.8\n" in t for t in texts) == 1
    finally:
        plt.close(fig)
    assert np.array_equal(sk.predict(X), est.predict(X))     # with the DataFrame, no feature-name warning


def test_onnx_export_predicts_as_ours(iris_pair):
    pytest.importorskip("skl2onnx")
    rt = pytest.importorskip("onnxruntime")
    from skl2onnx import to_onnx
    est, sk, X = iris_pair
    X32 = X.to_numpy(dtype=np.float32)
    onx = to_onnx(sk, X32[:1], options={"zipmap": False})
    sess = rt.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
    label, proba = sess.run(None, {sess.get_inputs()[0].name: X32})
    assert np.array_equal(label, est.predict(X)) and np.allclose(proba, est.predict_proba(X), atol=1e-6)


def test_shap_tree_explainer_adds_up_to_the_prediction(iris_pair):
    shap = pytest.importorskip("shap")
    est, sk, X = iris_pair
    explainer = shap.TreeExplainer(sk)
    values = np.asarray(explainer.shap_values(X.to_numpy()))        # (n, p, classes)
    total = values.sum(axis=1) + np.asarray(explainer.expected_value)
    assert np.allclose(total, est.predict_proba(X), atol=1e-9)
