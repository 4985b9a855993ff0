"""A regression target that is constant by ``is_constant_target`` gives the single leaf, objective 0, in every method
(issue 38, item 4).

Before: ``TargetScaling`` mapped y = 1e6 (4 rows) and its next float (4 rows) to the residue 0 / 1.16e-10, which
no later step took for a constant any more (``squared_baseline`` of the residue is about 2.7e-20), so the DP split
on the one-float difference and called it optimal (2 leaves, objective 0.01 = alpha).
"""
import warnings

import numpy as np
import pytest

from opttrees import OptimalTreeRegressor
from opttrees.data.prepared import TargetScaling, is_constant_target, prepare, standardize_target
from opttrees.dp import RegressionTask, solve_dp
from opttrees.heuristics.greedy import greedy_tree
from opttrees.heuristics.local_search import local_search

X8 = np.arange(8.0)[:, None]


def _ulp_target(v):
    return np.array([v] * 4 + [np.nextafter(v, np.inf)] * 4)


TARGETS = {"1e6+ulp": _ulp_target(1e6), "-1e9+ulp": _ulp_target(-1e9), "1e-9+ulp": _ulp_target(1e-9),
           "2ulps": np.array([1.0, np.nextafter(1.0, 2), np.nextafter(np.nextafter(1.0, 2), 2)] * 3)}
METHODS = [("dp", "squared", {}), ("dp", "squared", {"binarization": "exact"}),
           ("dp", "squared", {"binarization": "midpoints"}),
           ("mio", "squared", {"solver": "scip"}), ("mio", "absolute", {"solver": "highs"}),
           ("greedy", "squared", {}), ("greedy", "absolute", {}),
           ("local-search", "squared", {}), ("local-search", "absolute", {})]


@pytest.mark.parametrize("name", list(TARGETS))
@pytest.mark.parametrize("method,loss,kw", METHODS)
@pytest.mark.parametrize("alpha", [0.01, 0.0])
def test_constant_target_gives_the_single_leaf(name, method, loss, kw, alpha):
    y = TARGETS[name]
    X = np.arange(len(y), dtype=float)[:, None]
    assert is_constant_target(y) and len(np.unique(y)) > 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reg = OptimalTreeRegressor(method=method, loss=loss, max_depth=2, alpha=alpha, time_limit=30, n_restarts=5,
                                   **kw).fit(X, y)
    assert reg.tree_.n_leaves == 1
    assert reg.objective_ == 0.0
    if reg.solve_result_ is not None:
        assert reg.solve_result_.status == "optimal" and reg.solve_result_.objective == pytest.approx(0.0, abs=1e-12)
    assert np.all(np.abs(reg.predict(X) - y) <= 4 * np.spacing(np.abs(y)))


@pytest.mark.parametrize("method", ["local-search", "mio"])
def test_constant_target_linear_leaves_one_leaf(method):
    reg = OptimalTreeRegressor(method=method, leaf_model="linear", max_depth=1, alpha=0.01, solver="scip",
                               n_restarts=3, time_limit=30).fit(X8, _ulp_target(1e6))
    assert reg.tree_.n_leaves == 1 and reg.objective_ == 0.0


def test_issue_example_dp_depth1():
    y = _ulp_target(1e6)
    reg = OptimalTreeRegressor(method="dp", max_depth=1, alpha=0.01).fit(X8, y)
    assert reg.tree_.n_leaves == 1 and reg.objective_ == 0.0 and reg.solve_result_.status == "optimal"


def test_public_searches_on_raw_data_give_one_leaf():
    y = _ulp_target(1e6)
    tree, res = solve_dp(X8, y, task=RegressionTask(), max_depth=2, alpha=0.0)
    assert tree.n_leaves == 1 and res.objective == 0.0
    data = prepare(X8, y, task="regression")
    assert greedy_tree(data, 2, alpha=0.0).n_leaves == 1
    assert local_search(data, 2, alpha=0.0, n_restarts=3, random_state=0).n_leaves == 1


def test_constant_target_standardises_to_exact_zero():
    y = _ulp_target(1e6)
    ts, z = TargetScaling.fit_transform(y)
    assert ts.scale == 1.0 and np.all(z == 0.0)
    assert np.all(standardize_target(prepare(X8, y, task="regression")).y == 0.0)
    # a target that is not constant keeps its spread
    y2 = np.array([1e6, 1e6 + 1e-3] * 4)
    _, z2 = TargetScaling.fit_transform(y2)
    assert not is_constant_target(y2) and np.ptp(z2) > 1.0
