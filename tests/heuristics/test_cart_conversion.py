"""scikit-learn's ``x <= t`` splits converted exactly into opttrees' ``x < b`` (issue 38, item 2).

Before: the CART start's midpoint of two neighbouring floats rounded onto the upper value and
``searchsorted(side="right")`` then sent that value left, so the converted tree routed rows unlike scikit-learn and
a leaf of 2 rows appeared with ``min_samples_leaf=3``: the default MIO kept that start ("unverified"), the greedy
method returned it silently.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeClassifier

from opttrees import OptimalTreeClassifier
from opttrees.data.prepared import cut_of_le, prepare
from opttrees.data.binarizers import Binarizer
from opttrees.heuristics.cart import (cart_classifier_tree, enforce_min_leaf, rank_indices, tree_from_ranks,
                                      tree_from_sklearn)
from opttrees.tree import LEAF, Tree

X_ISSUE = np.array([[1 + 2 ** -51], [1.], [1.], [1 + 2 ** -52], [2.], [1 + 2 ** -51], [1.], [np.nextafter(1., 0)],
                    [2.], [1.]])
Y_ISSUE = np.array([0, 0, 0, 0, 1, 1, 0, 0, 1, 0])
W_ISSUE = np.array([3., 2, 3, 3, 1, 2, 3, 3, 3, 1])


def _leaf_rows(tree, X):
    return np.bincount(tree.apply(X), minlength=tree.n_nodes)[tree.leaves]


@pytest.mark.parametrize("method,kw", [("greedy", {}), ("mio", {"solver": "highs"})])
def test_issue_example_keeps_the_minimum_leaf(method, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # no "the warm-start tree beats the MIO's tree"
        clf = OptimalTreeClassifier(max_depth=1, min_samples_leaf=3, method=method, time_limit=30, **kw)
        clf.fit(X_ISSUE, Y_ISSUE, sample_weight=W_ISSUE)
    assert _leaf_rows(clf.tree_, X_ISSUE).min() >= 3
    if method == "mio":
        assert clf.solve_result_.status == "optimal"


def test_issue_example_cart_routes_as_sklearn():
    data = prepare(X_ISSUE, Y_ISSUE, sample_weight=W_ISSUE, min_samples_leaf=3)
    R = rank_indices(data)
    est = DecisionTreeClassifier(max_depth=1, min_samples_leaf=3, random_state=0).fit(R, data.y, data.sample_weight)
    tree = tree_from_ranks(est, data, R)
    assert np.array_equal(tree.apply(data.X), est.apply(R))
    assert _leaf_rows(cart_classifier_tree(data, 1, 3), data.X).min() >= 3


# values a few floats apart around a few bases (also exactly one float apart), with ties
def _close_values(draw, n):
    base = draw(st.sampled_from([1.0, 0.1, 1e6, -3.0, 1e-9]))
    steps = draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n))
    far = draw(st.lists(st.sampled_from([0.0, 0.0, 0.0, 1.0, 2.0]), min_size=n, max_size=n))
    out = []
    for k, f in zip(steps, far):
        v = base + f * abs(base)
        for _ in range(abs(k)):
            v = np.nextafter(v, np.inf if k > 0 else -np.inf)
        out.append(v)
    return np.asarray(out, dtype=np.float64)


@st.composite
def close_float_data(draw):
    n = draw(st.integers(4, 14))
    p = draw(st.integers(1, 2))
    X = np.column_stack([_close_values(draw, n) for _ in range(p)])
    y = np.asarray(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    y[:2] = [0, 1]
    w = np.asarray(draw(st.lists(st.sampled_from([1.0, 2.0, 3.0]), min_size=n, max_size=n)))
    return X, y, w, draw(st.integers(1, 3)), draw(st.integers(1, 3))


@settings(max_examples=60)
@given(close_float_data())
def test_rank_cart_converted_tree_routes_every_row_as_sklearn(case):
    X, y, w, depth, min_leaf = case
    data = prepare(X, y, sample_weight=w, min_samples_leaf=min_leaf)
    R = rank_indices(data)
    est = DecisionTreeClassifier(max_depth=depth, min_samples_leaf=min_leaf, random_state=0)
    est.fit(R, data.y, sample_weight=data.sample_weight)
    tree = tree_from_ranks(est, data, R)
    assert np.array_equal(tree.apply(data.X), est.apply(R))      # same node ids: every row in sklearn's leaf
    assert _leaf_rows(tree, data.X).min() >= min_leaf
    assert _leaf_rows(cart_classifier_tree(data, depth, min_leaf, 0.0), data.X).min() >= min_leaf


@settings(max_examples=40)
@given(close_float_data())
def test_raw_cart_converted_tree_routes_every_row_as_sklearn(case):
    X, y, w, depth, min_leaf = case
    data = prepare(X, y, sample_weight=w, min_samples_leaf=min_leaf)
    est = DecisionTreeClassifier(max_depth=depth, min_samples_leaf=min_leaf, random_state=0)
    est.fit(data.X, data.y, sample_weight=data.sample_weight)     # sklearn compares float32 copies
    tree = tree_from_sklearn(est, data)
    assert np.array_equal(tree.apply(data.X), est.apply(data.X))
    # the flow models' quantile columns plus CART's splits: each added column is sklearn's test on X
    binz = Binarizer(n_thresholds=1).fit(data.X)
    inner = est.tree_.children_left >= 0
    binz.add_thresholds(data.X, est.tree_.feature[inner], est.tree_.threshold[inner])
    cols = {(int(j), float(b)) for j, b in zip(binz.feature_, binz.threshold_)}
    for j, t in zip(est.tree_.feature[inner], est.tree_.threshold[inner]):
        sk_left = data.X[:, j].astype(np.float32) <= t
        if sk_left.all() or not sk_left.any():
            continue
        assert any(j2 == j and np.array_equal(data.X[:, j] < b, sk_left) for j2, b in cols)


@settings(max_examples=200)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False, width=64), min_size=1, max_size=8),
       st.floats(-1e6, 1e6, allow_nan=False), st.booleans(), st.integers(0, 7), st.integers(-2, 2))
def test_cut_of_le_routes_as_le(vals, t, f32, pick, ulps):
    v = np.asarray(vals, dtype=np.float64)
    if pick < len(v):        # a threshold at (or a few floats from) a value: the hard case
        t = float(v[pick])
        for _ in range(abs(ulps)):
            t = float(np.nextafter(t, np.inf if ulps > 0 else -np.inf))
    key = v.astype(np.float32).astype(np.float64) if f32 else v
    left = key <= t
    b = cut_of_le(v, t, float32=f32)
    if left.all() or not left.any():
        assert b is None
    else:
        assert np.array_equal(v < b, left)


def test_neighbouring_floats_cut_is_the_upper_value():
    a = 1 + 2 ** -52
    b = np.nextafter(a, 2.0)
    assert (a + b) / 2 == b                       # the plain midpoint rounds onto the upper value
    assert cut_of_le([1.0, a, b, 2.0], a) == b    # x < b sends a left and b right, as x <= a does


def test_enforce_min_leaf_merges_small_leaves_with_a_warning():
    X = np.array([[0.], [1.], [2.], [3.], [4.], [5.]])
    data = prepare(X, np.array([0, 0, 1, 1, 1, 0]))
    # root x < 1 (1 row left), right child x < 5 (4 rows, 1 row): both splits break min leaf 2
    tree = Tree(np.array([1, LEAF, 3, LEAF, LEAF]), np.array([2, LEAF, 4, LEAF, LEAF]),
                np.array([0, LEAF, 0, LEAF, LEAF]), np.array([1.0, 0, 5.0, 0, 0]), np.zeros((5, 2)),
                task="classification", label=np.zeros(5, dtype=np.int64), classes=[0, 1], n_features=1)
    with pytest.warns(RuntimeWarning, match="min_samples_leaf=2"):
        fixed = enforce_min_leaf(tree, data, 2)
    assert fixed.n_splits == 0 and _leaf_rows(fixed, X).min() >= 2
    assert enforce_min_leaf(tree, data, 1) is tree
