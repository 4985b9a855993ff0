"""Regression targets with a large offset or a tiny / huge scale (the audit's wrong answers): every method finds the
tree it finds on the unit-scale target, with the predictions mapped; SPO costs scaled by 1e9 give the same tree."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opttrees import OptimalTreeRegressor
from opttrees.estimators.spo import SPOTree
from opttrees.objectives import tree_objective
from opttrees.oracles import GridShortestPath


def _data(n, seed):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, 5, n), rng.normal(size=n), rng.integers(0, 3, n)]).astype(float)
    y = 2.0 * (X[:, 0] >= 2) + 1.0 * (X[:, 1] > 0.3) + 0.3 * rng.normal(size=n)
    return X, y


def _splits(tree):
    return tree.children_left.tolist(), tree.feature.tolist(), np.round(tree.threshold, 9).tolist()


#: scale 10**e (1e-9 .. 1e9) and offset scale * 10**k (up to 1e6 spreads, and up to 1e9 in absolute value): y keeps
#: its information (an offset 1e9 spreads apart from a spread of 1e-9 would leave nothing of y in a double)
AFFINE = dict(e=st.integers(-9, 9), k=st.sampled_from([None, 0, 3, 6]), sign=st.sampled_from([1.0, -1.0]))


def _affine(y, e, k, sign):
    a = 10.0 ** e
    b = 0.0 if k is None else sign * min(a * 10.0 ** k, 1e9)
    return a, b, b + a * y


def _check_same(est0, est1, X, a, b, y1=None, loss="squared"):
    assert est1.objective_ == pytest.approx(est0.objective_, rel=1e-6, abs=1e-9)
    if y1 is not None and _splits(est1.tree_) != _splits(est0.tree_):
        # only a tie may pick another tree: the unit-scale tree scores the same on the mapped target
        other = tree_objective(est0.tree_, X, y1, loss)
        assert other == pytest.approx(est1.objective_, rel=1e-9, abs=1e-12)
        return
    assert _splits(est1.tree_) == _splits(est0.tree_)
    spread = a * max(1.0, float(np.ptp(est0.predict(X))))
    np.testing.assert_allclose(est1.predict(X), b + a * est0.predict(X), rtol=0, atol=1e-6 * spread + 4 * np.spacing(abs(b)))


@pytest.mark.parametrize("method,loss", [("greedy", "squared"), ("local-search", "squared"), ("dp", "squared"),
                                         ("local-search", "absolute")])
@settings(max_examples=10)
@given(depth=st.integers(1, 2), seed=st.integers(0, 50), **AFFINE)
def test_affine_target_same_tree_heuristics_and_dp(method, loss, depth, seed, e, k, sign):
    X, y = _data(60, seed)
    a, b, y1 = _affine(y, e, k, sign)
    kw = dict(max_depth=depth, method=method, loss=loss, n_restarts=5, random_state=0)
    _check_same(OptimalTreeRegressor(**kw).fit(X, y), OptimalTreeRegressor(**kw).fit(X, y1), X, a, b, y1, loss)


@pytest.mark.parametrize("loss,solver", [("absolute", "highs"), ("squared", "scip")])
@settings(max_examples=3)
@given(depth=st.integers(1, 2), seed=st.integers(0, 50), **AFFINE)
def test_affine_target_same_tree_mio(loss, solver, depth, seed, e, k, sign):
    X, y = _data(24, seed)
    a, b, y1 = _affine(y, e, k, sign)
    kw = dict(max_depth=depth, method="mio", loss=loss, solver=solver, n_restarts=5, time_limit=60)
    est0, est1 = OptimalTreeRegressor(**kw).fit(X, y), OptimalTreeRegressor(**kw).fit(X, y1)
    assert est0.solve_result_.status == est1.solve_result_.status == "optimal"
    # equal optima may be reached by different trees: the objective is what must agree
    assert est1.objective_ == pytest.approx(est0.objective_, rel=1e-6, abs=1e-9)
    if _splits(est1.tree_) == _splits(est0.tree_):
        _check_same(est0, est1, X, a, b)


def test_linear_leaves_map_back():
    X, y = _data(60, 3)
    kw = dict(max_depth=1, leaf_model="linear", leaf_penalty=1e-3, n_restarts=2)
    est0 = OptimalTreeRegressor(**kw).fit(X, y)
    est1 = OptimalTreeRegressor(**kw).fit(X, 1e6 + 1e-3 * y)
    assert _splits(est1.tree_) == _splits(est0.tree_)
    np.testing.assert_allclose(est1.predict(X), 1e6 + 1e-3 * est0.predict(X), rtol=0, atol=1e-8)


# ------------------------------------------------------------------------------- the audit's reproducers
def _binary(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2, n).astype(float)
    return x[:, None], x, rng


@pytest.mark.parametrize("method", ["greedy", "local-search", "dp"])
def test_offset_1e6_depth1(method):
    """y = 1e6 + 0.01 x + noise: greedy / local search reported objective 0, the DP raised VerificationError."""
    X, x, rng = _binary()
    y = 1e6 + 0.01 * x + 0.003 * rng.normal(size=len(x))
    est = OptimalTreeRegressor(max_depth=1, method=method, n_restarts=5).fit(X, y)
    assert est.tree_.n_splits == 1 and est.score(X, y) > 0.7
    assert est.objective_ == pytest.approx(1 - est.score(X, y), rel=1e-6)
    if method == "dp":
        assert est.solve_result_.status == "optimal"


@pytest.mark.parametrize("method", ["greedy", "local-search", "dp"])
def test_tiny_scale_depth1(method):
    """y = 1e-9 (x + noise): every method returned the single leaf and the DP called it optimal."""
    X, x, rng = _binary()
    y = 1e-9 * (x + 0.3 * rng.normal(size=len(x)))
    est = OptimalTreeRegressor(max_depth=1, method=method, n_restarts=5).fit(X, y)
    assert est.tree_.n_splits == 1 and est.score(X, y) > 0.7
    assert est.objective_ == pytest.approx(1 - est.score(X, y), rel=1e-6)


@pytest.mark.parametrize("y_of", [lambda x, r: 1e6 + 0.01 * x + 0.003 * r, lambda x, r: 1e-9 * (x + 0.3 * r)])
def test_offset_and_tiny_mio_scip(y_of):
    """SCIP reported 'objective 8.97' for the offset target and ran to the limit; the tiny one gave the leaf."""
    X, x, rng = _binary(30, 1)
    y = y_of(x, rng.normal(size=len(x)))
    est = OptimalTreeRegressor(max_depth=1, method="mio", solver="scip", n_restarts=5, time_limit=60).fit(X, y)
    assert est.solve_result_.status == "optimal" and est.tree_.n_splits == 1
    assert est.objective_ == pytest.approx(1 - est.score(X, y), rel=1e-6)


@pytest.mark.parametrize("y_of", [lambda r: 1e5 + r, lambda r: 1000 + 0.001 * r])
def test_dp_large_offset_2000_rows(y_of):
    """y = 1e5 + N(0, 1) and 1000 +- 0.001: the DP raised 'continuous dynamic program: the returned tree scores ...'."""
    rng = np.random.default_rng(25)
    X = np.column_stack([rng.integers(0, 5, 2000), rng.normal(size=2000)]).astype(float)
    y = y_of(X[:, 0] + 0.3 * rng.normal(size=2000))
    dp = OptimalTreeRegressor(max_depth=2, method="dp").fit(X, y)
    ls = OptimalTreeRegressor(max_depth=2, method="local-search", n_restarts=10).fit(X, y)
    assert dp.solve_result_.status == "optimal"
    assert dp.objective_ <= ls.objective_ + 1e-9 and dp.objective_ < 0.2


def test_mio_absolute_huge_scale():
    """loss='absolute' with y x 1e9: status 'limit' after 0.2 s with bound 0."""
    X, y = _data(24, 7)
    est0 = OptimalTreeRegressor(max_depth=1, method="mio", loss="absolute", n_restarts=5, time_limit=60).fit(X, y)
    est = OptimalTreeRegressor(max_depth=1, method="mio", loss="absolute", n_restarts=5, time_limit=60).fit(X, 1e9 * y)
    assert est.solve_result_.status == "optimal"
    assert est.solve_result_.bound == pytest.approx(est0.solve_result_.bound, rel=1e-6, abs=1e-9)
    assert est.objective_ == pytest.approx(est0.objective_, rel=1e-9)


def test_mio_scip_offset_1e9_is_feasible():
    """SCIP squared loss with y = 1e9 + spread returned 'infeasible'."""
    X, y = _data(24, 8)
    est = OptimalTreeRegressor(max_depth=1, method="mio", solver="scip", n_restarts=5, time_limit=60).fit(X, 1e9 + 100 * y)
    assert est.solve_result_.status == "optimal" and est.tree_.n_splits == 1


@pytest.mark.parametrize("method", ["greedy", "dp", "mio"])
def test_spo_costs_times_1e9_same_tree(method):
    """SPOTree(method='mio') with costs x 1e9 returned 'infeasible'; every method must find the unit-cost tree."""
    pr = GridShortestPath(2, 2)
    rng = np.random.default_rng(0)
    n = 40 if method == "mio" else 150
    X = np.column_stack([rng.integers(0, 3, n), rng.normal(size=n)]).astype(float)
    C = 1 + np.abs(rng.normal(size=(n, pr.n_decisions))) + 2.0 * X[:, [0]] * (np.arange(pr.n_decisions) % 2)
    kw = dict(max_depth=1, method=method, time_limit=60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est0, est1 = SPOTree(decision_problem=pr, **kw).fit(X, C), SPOTree(decision_problem=pr, **kw).fit(X, 1e9 * C)
    assert _splits(est1.tree_) == _splits(est0.tree_)
    assert est1.objective_ == pytest.approx(est0.objective_, rel=1e-6, abs=1e-12)
    np.testing.assert_array_equal(est1.predict(X), est0.predict(X))
    np.testing.assert_allclose(est1.predict_cost(X), 1e9 * est0.predict_cost(X), rtol=1e-9)
    assert est1.training_loss(X, 1e9 * C) == pytest.approx(1e9 * est0.training_loss(X, C), rel=1e-6, abs=1e-3)
    if method == "mio":
        assert est1.solve_result_.status == est0.solve_result_.status
