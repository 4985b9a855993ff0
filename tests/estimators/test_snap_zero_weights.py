"""Snapping a fitted tree's thresholds to short decimals moves no training row, rows of weight 0 included
(issue 38, item 6).

Before: the snap's gap was bounded by the rows of positive weight only (``prepare`` drops the rows of weight 0), so
a weight-0 row inside that gap could change side: rows at 0.1, 0.2 and a weight-0 row at 0.15 gave the threshold
0.15000000000000002 (the row went left), snapped to 0.15 (the row went right).
"""
from unittest import mock

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import opttrees.tree as tree_module
from opttrees import BendersOCTClassifier, FlowOCTClassifier, OptimalTreeClassifier, OptimalTreeRegressor
from opttrees.data.prepared import prepare


def _no_snap(t, left_max, right_min):
    return float(t)


def _fit_pair(make, X, y, w):
    """The fitted tree, and the same fit's tree with every threshold left where the method put it."""
    snapped = make().fit(X, y, sample_weight=w).tree_
    with mock.patch.object(tree_module, "snap_threshold", _no_snap):
        raw = make().fit(X, y, sample_weight=w).tree_
    assert raw.feature.tolist() == snapped.feature.tolist()
    return snapped, raw


@pytest.mark.parametrize("make", [lambda: OptimalTreeClassifier(max_depth=1, method="greedy"),
                                  lambda: OptimalTreeClassifier(max_depth=1),
                                  lambda: FlowOCTClassifier(max_depth=1), lambda: BendersOCTClassifier(max_depth=1)],
                         ids=["greedy", "mio", "flow", "benders"])
def test_issue_example_weight0_row_stays_left(make):
    X = np.array([[0.1], [0.1], [0.2], [0.2], [0.15]])
    y, w = np.array([0, 0, 1, 1, 1]), np.array([1.0, 1, 1, 1, 0])
    snapped, raw = _fit_pair(make, X, y, w)
    assert raw.threshold[0] > 0.15                       # the method's midpoint sends the weight-0 row left
    assert np.array_equal(snapped.apply(X), raw.apply(X))


MAKERS = {
    "clf-greedy": lambda: OptimalTreeClassifier(max_depth=2, method="greedy"),
    "clf-dp": lambda: OptimalTreeClassifier(max_depth=2, method="dp", binarization="midpoints"),
    "clf-dp-exact": lambda: OptimalTreeClassifier(max_depth=2, method="dp", binarization="exact"),
    "reg-greedy": lambda: OptimalTreeRegressor(max_depth=2, method="greedy"),
    "reg-dp": lambda: OptimalTreeRegressor(max_depth=2, method="dp"),
}


@st.composite
def weighted_decimals(draw):
    """Rows on one- and two-digit decimals (their midpoints snap to shorter decimals), some of weight 0, often
    placed on the midpoint of two neighbouring positive-weight values."""
    n = draw(st.integers(4, 10))
    p = draw(st.integers(1, 2))
    scale = draw(st.sampled_from([1.0, 0.1, 100.0]))
    X = np.asarray(draw(st.lists(st.lists(st.integers(0, 6), min_size=p, max_size=p), min_size=n, max_size=n)),
                   dtype=float) * scale / 10
    y = np.asarray(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    w = np.asarray(draw(st.lists(st.sampled_from([1.0, 2.0, 0.0]), min_size=n, max_size=n)))
    m = draw(st.integers(1, 4))         # extra weight-0 rows at midpoints between grid values
    Z = np.asarray(draw(st.lists(st.lists(st.integers(0, 5), min_size=p, max_size=p), min_size=m, max_size=m)),
                   dtype=float)
    Z = (Z * scale / 10 + (Z + 1) * scale / 10) / 2
    X = np.vstack([X, Z])
    y = np.concatenate([y, np.asarray(draw(st.lists(st.integers(0, 1), min_size=m, max_size=m)))])
    w = np.concatenate([w, np.zeros(m)])
    return X, y, w


@pytest.mark.parametrize("name", list(MAKERS))
@settings(max_examples=30)
@given(weighted_decimals())
def test_snapping_moves_no_training_row_with_zero_weights(name, case):
    X, y, w = case
    keep = w > 0
    assume(keep.sum() >= 2 and (name.startswith("reg") or len(np.unique(y[keep])) == 2))
    yy = y.astype(float) if name.startswith("reg") else y
    snapped, raw = _fit_pair(MAKERS[name], X, yy, w)
    assert np.array_equal(snapped.apply(X), raw.apply(X))       # every row, weight 0 or not


def test_prepare_keeps_the_dropped_rows_features():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    d = prepare(X, np.array([0, 1, 1, 0]), sample_weight=np.array([1.0, 0.0, 1.0, 0.0]))
    assert d.X.tolist() == [[0.0], [2.0]] and d.dropped_X.tolist() == [[1.0], [3.0]]
    assert sorted(d.all_rows_X[:, 0].tolist()) == [0.0, 1.0, 2.0, 3.0]
    full = prepare(X, np.array([0, 1, 0, 1]))
    assert full.dropped_X is None and full.all_rows_X is full.X
