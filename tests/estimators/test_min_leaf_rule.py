"""One minimum-leaf rule for every method: a row of weight 0 is absent (it counts toward no leaf's
``min_samples_leaf`` and gives no threshold); ``min_samples_leaf`` counts the remaining rows.

Before: on the example below the MIO gave 0.0 (a split at 1.5 whose left leaf held the zero-weight row) while
the DP gave 1.0 and called it optimal. Every method is checked against brute force on the data without the
zero-weight rows.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracles.bruteforce import brute_force_objective
from opttrees import OptimalTreeClassifier, OptimalTreeRegressor
from opttrees.dp import solve_dp

X4 = np.array([[0.0], [1.0], [2.0], [3.0]])
Y4 = np.array([0, 1, 1, 1])
W4 = np.array([1.0, 0.0, 1.0, 1.0])
METHODS = [("mio", {"solver": "highs"}), ("mio", {"solver": "scip"}), ("dp", {"binarization": "midpoints"}),
           ("local-search", {}), ("greedy", {})]


@pytest.mark.parametrize("method,kw", METHODS)
def test_issue_example_all_methods_agree(method, kw):
    clf = OptimalTreeClassifier(max_depth=1, min_samples_leaf=2, method=method, time_limit=30, **kw)
    clf.fit(X4, Y4, sample_weight=W4)
    ref = brute_force_objective(X4[W4 > 0], Y4[W4 > 0], 1, min_samples_leaf=2)
    assert ref == 1.0
    assert clf.objective_ == pytest.approx(ref)
    if method in ("mio", "dp"):
        assert clf.solve_result_.proven_optimal


@pytest.mark.parametrize("method,kw", [("mio", {"solver": "scip"}), ("dp", {}), ("local-search", {})])
def test_regressor_zero_weights(method, kw):
    y = np.array([0.0, 5.0, 5.0, 5.0])
    reg = OptimalTreeRegressor(max_depth=1, min_samples_leaf=2, method=method, time_limit=30, **kw)
    reg.fit(X4, y, sample_weight=W4)
    assert reg.tree_.n_splits == 0           # 3 rows of positive weight cannot make two leaves of 2
    assert reg.predict(X4[:1])[0] == pytest.approx(10.0 / 3)


def test_solve_dp_direct_api_drops_zero_weight_rows():
    tree, res = solve_dp(X4, Y4, max_depth=1, min_samples_leaf=2, sample_weight=W4, binarization="midpoints")
    assert res.objective == pytest.approx(1.0) and tree.n_splits == 0


@settings(max_examples=15)
@given(st.integers(0, 10 ** 6), st.integers(1, 3))
def test_zero_weights_equal_brute_force(seed, min_leaf):
    rng = np.random.default_rng(seed)
    n = 9
    X = rng.integers(0, 4, (n, 2)).astype(float)
    y = rng.integers(0, 2, n)
    w = rng.choice([0.0, 1.0, 2.0], n)
    w[:2] = [1.0, 1.0]
    y[:2] = [0, 1]
    keep = w > 0
    if keep.sum() < min_leaf:
        return
    ref = brute_force_objective(X[keep], y[keep], 2, min_samples_leaf=min_leaf, sample_weight=w[keep])
    for method, kw in [("mio", {"solver": "highs"}), ("dp", {"binarization": "midpoints"})]:
        clf = OptimalTreeClassifier(max_depth=2, min_samples_leaf=min_leaf, method=method, time_limit=30, **kw)
        clf.fit(X, y, sample_weight=w)
        assert clf.objective_ == pytest.approx(ref, abs=1e-9), method
    ls = OptimalTreeClassifier(max_depth=2, min_samples_leaf=min_leaf, method="local-search").fit(X, y, sample_weight=w)
    assert ls.objective_ >= ref - 1e-9


@pytest.mark.parametrize("solver", ["highs", "scip"])
@pytest.mark.parametrize("seed", range(8))
def test_mio_trees_have_no_empty_leaf(solver, seed):
    """Before: 24 of 320 random OCT fits with alpha=0 returned a leaf no training row reaches (x0 < min(x0))."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, (12, 2)).astype(float)
    y = rng.integers(0, 2, 12)
    y[:2] = [0, 1]
    for msl in (1, 3):
        clf = OptimalTreeClassifier(max_depth=2, min_samples_leaf=msl, method="mio", solver=solver, time_limit=30,
                                    warm_start=None).fit(X, y)
        leaf_of_row = clf.tree_.apply(X)
        assert set(leaf_of_row) == set(clf.tree_.leaves), "a leaf holds no training row"
        assert np.bincount(leaf_of_row)[clf.tree_.leaves].min() >= msl
        assert clf.objective_ == pytest.approx(brute_force_objective(X, y, 2, min_samples_leaf=msl), abs=1e-9)
        assert clf.solve_result_.objective == pytest.approx(clf.objective_, abs=1e-9)
        leaves = clf.tree_.leaves
        for t in range(clf.tree_.n_nodes):
            cl, cr = clf.tree_.children_left[t], clf.tree_.children_right[t]
            if cl in leaves and cr in leaves:
                assert clf.tree_.label[cl] != clf.tree_.label[cr], "a split into two leaves of one class"
