"""Issue 27 section 5: category columns in every estimator, never worse than the single leaf, void splits collapsed."""
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opttrees import (BendersOCTClassifier, FlowOCTClassifier, OptimalPrescriptiveTree, OptimalTreeClassifier,
                      OptimalTreeRegressor, PolicyTree, RobustTreeClassifier, SPOTree, Tree)
from opttrees.errors import InputError
from opttrees.estimators.common import finish_fit, root_leaf, tidy_tree
from opttrees.heuristics.core import make_problem, objective, refit_leaves


def _table(n=60, seed=0):
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue"], n)
    colour[:3] = ["red", "green", "blue"]
    df = pd.DataFrame({"x": rng.uniform(0, 1, n), "colour": pd.Categorical(colour)})
    return df, rng


def _raw_test(df):
    """The same rows with columns reordered, the category as plain text, and one unseen category."""
    out = df[["colour", "x"]].copy()
    out["colour"] = out["colour"].astype(str)
    out.loc[out.index[-1], "colour"] = "purple"
    return out


def _fit_kind(kind, df, rng):
    n = len(df)
    red = (df["colour"] == "red").to_numpy()
    if kind == "classifier":
        return OptimalTreeClassifier(max_depth=1, method="greedy").fit(df, np.where(red, "yes", "no")), True
    if kind == "regressor":
        return OptimalTreeRegressor(max_depth=1, method="greedy").fit(df, np.where(red, 5.0, 1.0)), True
    if kind == "flow":
        return FlowOCTClassifier(max_depth=1, time_limit=30, solver="highs").fit(df, red.astype(int)), True
    if kind == "benders":
        return BendersOCTClassifier(max_depth=1, time_limit=30).fit(df, red.astype(int)), True
    if kind == "robust":
        return RobustTreeClassifier(max_depth=1, time_limit=30).fit(df, red.astype(int)), False
    if kind == "spo":
        from opttrees.experiments.spo_data import shortest_path_data
        D = shortest_path_data(n, deg=2, noise=0.25, p=1, n_test=0, grid=(3, 3), seed=0)
        C = D.C * np.where(red, 3.0, 1.0)[:, None] ** np.linspace(-1, 1, D.C.shape[1])[None, :]
        return SPOTree(decision_problem=D.problem, max_depth=2, min_samples_leaf=5, prune=False).fit(df, C), False
    t = rng.integers(0, 2, n)
    y = np.where(t == red, 0.0, 1.0) + 0.01 * rng.normal(size=n)
    if kind == "prescriptive":
        return OptimalPrescriptiveTree(max_depth=1, method="greedy").fit(df, t, y), False
    return PolicyTree(max_depth=1, method="greedy", teacher="ipw").fit(df, t, y, propensity=np.full(n, 0.5)), False


@pytest.mark.parametrize("kind", ["classifier", "regressor", "flow", "benders", "robust", "spo", "prescriptive", "policy"])
def test_category_column_through_every_estimator(kind):
    df, rng = _table()
    est, splits_on_colour = _fit_kind(kind, df, rng)
    tree = est.tree_
    assert tree.encoding is not None and tree.encoding.categories == {"colour": ["blue", "green", "red"]}
    assert tree.n_features == 4 and tree.feature_names == ["x", "colour=blue", "colour=green", "colour=red"]
    pred = np.asarray(est.predict(df))
    raw = _raw_test(df)
    with pytest.warns(UserWarning, match="categories not seen in training"):
        pred_raw = np.asarray(est.predict(raw))
    assert np.array_equal(pred_raw[:-1], pred[:-1])
    if splits_on_colour:
        assert "colour = red" in tree.export_text() and "colour != red" in tree.export_text()
    back = Tree.from_json(tree.to_json())
    assert back.encoding.to_dict() == tree.encoding.to_dict()
    assert np.array_equal(np.asarray(back.predict(df)), pred)


def test_text_columns_stay_an_error_naming_category_dtype():
    df, _ = _table()
    df["colour"] = df["colour"].astype(str)
    with pytest.raises(InputError, match="category"):
        OptimalTreeClassifier(max_depth=1, method="greedy").fit(df, np.arange(len(df)) % 2)


def _bad_tree(data):
    """Depth 2, three splits, every leaf predicting the minority class (as BendersOCT did at its time limit)."""
    minority = int(np.argmin(np.bincount(data.y)))
    t = Tree([1, 3, 5, -1, -1, -1, -1], [2, 4, 6, -1, -1, -1, -1], [0, 0, 0, -1, -1, -1, -1],
             [0.5, 0.25, 0.75, 0, 0, 0, 0], np.zeros((7, data.n_classes)), label=[minority] * 7,
             classes=list(data.codec.classes), feature_names=data.feature_names, n_features=data.p)
    leaf = t.apply(data.X)
    for k in t.leaves:
        t.value[k] = np.bincount(data.y[leaf == k], minlength=data.n_classes)
    return t


def test_classifier_returns_the_leaf_when_its_method_returns_a_worse_tree(monkeypatch):
    import opttrees.estimators.classifier as clf_mod
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, (40, 2))
    y = np.where(rng.uniform(size=40) < 0.75, "no", "yes")
    real = clf_mod.cart_classifier_tree
    # the method's tree ignores alpha: splits that do not pay for themselves at alpha=0.6
    monkeypatch.setattr(clf_mod, "cart_classifier_tree", lambda data, depth, msl, alpha, rs: real(data, depth, msl, 0.0, rs))
    with pytest.warns(UserWarning, match="worse than the single leaf"):
        est = OptimalTreeClassifier(max_depth=2, method="greedy", alpha=0.6).fit(X, y)
    assert est.tree_.n_splits == 0 and est.predict(X[:1])[0] == "no"
    assert est.objective_ == pytest.approx(1.0)     # the root-only baseline on the normalised scale


def test_flow_returns_the_leaf_and_its_solve_result_stays_honest(monkeypatch):
    from opttrees.formulations.flow import FlowOCT
    rng = np.random.default_rng(2)
    X = rng.uniform(0, 1, (30, 2))
    y = (rng.uniform(size=30) < 0.3).astype(int)
    bad = _bad_tree(_prep(X, y))
    monkeypatch.setattr(FlowOCT, "extract", lambda self, verify=True: bad)
    with pytest.warns(UserWarning, match="worse than the single leaf"):
        est = FlowOCTClassifier(max_depth=2, solver="highs", time_limit=30, warm_start=None,
                                dp_bound=False).fit(X, y)
    res = est.solve_result_
    assert est.tree_.n_splits == 0
    assert res.objective == pytest.approx(est.formulation_.tree_objective(est.tree_))
    assert not res.proven_optimal and res.proof is None
    assert res.bound is None or res.bound >= res.objective - 1e-9    # maximised: a valid bound is above


def test_tidy_merges_same_class_leaves_and_sums_counts():
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 1, (30, 1))
    y = (X[:, 0] > 0.5).astype(int)
    from opttrees.data.prepared import prepare
    data = prepare(X, y)
    prob = make_problem(data)
    # split at 0.25 (both sides "0" below 0.5 on the left... ) then 0.5: the left split's leaves are both class 0
    t = Tree([1, 3, -1, -1, -1], [2, 4, -1, -1, -1], [0, 0, -1, -1, -1], [0.5, 0.25, 0, 0, 0],
             np.zeros((5, 2)), classes=[0, 1], n_features=1)
    t = refit_leaves(t, prob)
    before = objective(t, prob, 0.01)
    out = tidy_tree(t, data.X, lambda s: objective(s, prob, 0.01))
    assert out.n_splits == 1
    assert out.value[out.leaves].sum() == pytest.approx(len(y))
    assert objective(out, prob, 0.01) == pytest.approx(before - 0.01)
    # an empty side goes too, with the same routing
    e = Tree([1, -1, -1], [2, -1, -1], [0, -1, -1], [-5.0, 0, 0], np.zeros((3, 2)), classes=[0, 1], n_features=1)
    e = refit_leaves(e, prob)
    assert tidy_tree(e, data.X, lambda s: objective(s, prob, 0.0)).n_splits == 0


def test_tidied_mio_result_keeps_its_proof():
    rng = np.random.default_rng(4)
    X = rng.uniform(0, 1, (20, 2))
    y = (X[:, 0] > 0.5).astype(int)
    est = OptimalTreeClassifier(max_depth=2, method="mio", solver="highs", time_limit=60).fit(X, y)
    assert est.tree_.n_splits == 1
    assert est.solve_result_.proven_optimal
    assert est.solve_result_.objective == pytest.approx(est.objective_)


def _no_void(tree, X):
    leaf = tree.apply(X)
    assert set(tree.leaves.tolist()) <= set(leaf.tolist()), "a leaf is empty on the training data"
    for t in range(tree.n_nodes):
        if tree.is_leaf(t):
            continue
        a, b = tree.children_left[t], tree.children_right[t]
        if tree.is_leaf(a) and tree.is_leaf(b):
            if tree.task == "classification":
                assert tree.label[a] != tree.label[b]
            else:
                assert not np.array_equal(tree.value[a], tree.value[b])


@settings(max_examples=12)
@given(seed=st.integers(0, 10_000), n=st.integers(6, 18), k=st.integers(2, 3),
       method=st.sampled_from(["greedy", "local-search", "dp", "mio", "flow"]),
       alpha=st.sampled_from([0.0, 0.02]))
def test_no_returned_tree_has_void_splits_or_is_worse_than_the_leaf(seed, n, k, method, alpha):
    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(0, 1, (n, 2)), 1)
    y = rng.integers(0, k, n)
    y[:k] = np.arange(k)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "flow":
            est = FlowOCTClassifier(max_depth=2, regularization=alpha, solver="highs", time_limit=30).fit(X, y)
            form = est.formulation_
            own, trivial = form.tree_objective(est.tree_), form.tree_objective(
                refit_leaves(root_leaf(est.tree_), make_problem(_prep(X, y))))
            assert own >= trivial - 1e-9
        else:
            est = OptimalTreeClassifier(max_depth=2, method=method, alpha=alpha, solver="highs", time_limit=30,
                                        n_restarts=3).fit(X, y)
            prob = make_problem(_prep(X, y))
            assert est.objective_ <= objective(refit_leaves(root_leaf(est.tree_), prob), prob, alpha) + 1e-9
    _no_void(est.tree_, X)
    res = est.solve_result_
    if res is not None and res.has_solution and method in ("mio", "flow"):
        target = est.formulation_.tree_objective(est.tree_) if method == "flow" else est.objective_
        assert res.objective == pytest.approx(target, abs=1e-6)


def _prep(X, y):
    from opttrees.data.prepared import prepare
    return prepare(X, y)


@settings(max_examples=8)
@given(seed=st.integers(0, 10_000), method=st.sampled_from(["greedy", "local-search", "dp"]))
def test_regression_trees_have_no_equal_leaf_pairs(seed, method):
    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(0, 1, (14, 2)), 1)
    y = rng.integers(0, 2, 14).astype(float)     # few distinct values: equal leaf means are common
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = OptimalTreeRegressor(max_depth=2, method=method, n_restarts=3, time_limit=30).fit(X, y)
    _no_void(est.tree_, X)
    prob = make_problem(_prep_reg(X, y))
    assert est.objective_ <= objective(refit_leaves(root_leaf(est.tree_), prob), prob, 0.0) + 1e-9


def _prep_reg(X, y):
    from opttrees.data.prepared import prepare
    return prepare(X, y, task="regression")


def test_finish_fit_without_score_only_takes_safe_steps():
    t = Tree([1, -1, -1], [2, -1, -1], [0, -1, -1], [0.5, 0, 0], np.array([[3.0], [1.0], [1.0]]),
             task="regression", n_features=1)
    out = finish_fit(object(), t, np.array([[0.1], [0.9]]))
    assert out.n_splits == 0 and out.value[0, 0] == 1.0
