"""ORT-L MIO (opttrees.formulations.ort_linear) against brute force and the lasso-leaf local search."""
import warnings

import numpy as np
import pyomo.environ as pyo
import pytest

from opttrees import objectives as obj
from opttrees.data.prepared import prepare
from opttrees.errors import InputError, SolverError
from opttrees.formulations.ort_linear import ORTLinear
from opttrees.heuristics.linear_leaves import linear_local_search, linear_tree_objective
from opttrees.solvers import solve
from oracles.linear_leaves import ort_linear_brute_force as brute_force


def tiny(seed, n=9):
    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(0, 1, (n, 2)), 2)
    y = np.where(X[:, 0] < 0.5, X[:, 1], -2 * X[:, 1]) + rng.normal(scale=0.1, size=n)
    return prepare(X, y, task="regression")


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("penalty, solver", [("l1", "highs"), ("l1", "scip"), ("l0", "highs")])
def test_absolute_loss_equals_brute_force(seed, penalty, solver):
    data = tiny(seed)
    lam = 0.1 if penalty == "l1" else 0.05
    form = ORTLinear(data, 1, alpha=0.05, leaf_penalty=lam, penalty=penalty, loss="absolute",
                     coef_bound=None if penalty == "l1" else 50.0)
    res = solve(form, solver)
    tree = form.extract()
    assert res.status == "optimal"
    expected = brute_force(data, 0.05, lam, penalty, "absolute")
    assert form.tree_objective(tree) == pytest.approx(expected, rel=1e-6, abs=1e-7)
    assert res.objective == pytest.approx(expected, rel=1e-6, abs=1e-7)


@pytest.mark.parametrize("seed", [0, 3])
def test_squared_loss_on_scip_equals_brute_force_and_the_local_search(seed):
    data = tiny(seed)
    form = ORTLinear(data, 1, alpha=0.05, leaf_penalty=0.1, loss="squared")
    res = solve(form, "scip")
    tree = form.extract()
    expected = brute_force(data, 0.05, 0.1, "l1", "squared")
    assert res.objective == pytest.approx(expected, rel=1e-5)
    assert linear_tree_objective(tree, data, 0.05, 0.1, refit=False) == pytest.approx(expected, rel=1e-5)
    ls = linear_local_search(data, 1, alpha=0.05, leaf_penalty=0.1, n_restarts=2, constant_restarts=2,
                             random_state=seed, max_thresholds=1000)
    assert linear_tree_objective(ls, data, 0.05, 0.1, refit=False) == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("loss", ["squared", "absolute"])
def test_local_search_tree_is_a_feasible_warm_start_with_the_same_objective(loss):
    rng = np.random.default_rng(7)
    X = rng.uniform(0, 1, (14, 3))
    y = np.where(X[:, 0] < 0.5, 2 * X[:, 1], 1 - X[:, 2]) + rng.normal(scale=0.05, size=14)
    data = prepare(X, y, task="regression")
    ls = linear_local_search(data, 2, alpha=0.02, leaf_penalty=0.05, n_restarts=3, constant_restarts=2,
                             random_state=0)
    assert ls.n_splits >= 1
    form = ORTLinear(data, 2, alpha=0.02, leaf_penalty=0.05, loss=loss)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # no clipping: the start lies inside the proven bounds
        form.warm_start(ls)
    start = linear_tree_objective(ls, data, 0.02, 0.05, loss=loss, refit=False)
    assert pyo.value(form.model.objective_expr) == pytest.approx(start, rel=1e-9)
    # every constraint holds at the start
    for c in form.model.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(c.body)
        assert c.lower is None or body >= pyo.value(c.lower) - 1e-7, c.name
        assert c.upper is None or body <= pyo.value(c.upper) + 1e-7, c.name
    for v in form.model.component_data_objects(pyo.Var):
        assert (v.lb is None or v.value >= v.lb - 1e-9) and (v.ub is None or v.value <= v.ub + 1e-9), v.name
    # the start's own objective is a valid z_F: the bounds it implies still contain the start
    tight = ORTLinear(data, 2, alpha=0.02, leaf_penalty=0.05, loss=loss, upper_bound=min(1.0, start))
    assert tight.coef_bound < form.coef_bound
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tight.warm_start(ls)
    assert pyo.value(tight.model.objective_expr) == pytest.approx(start, rel=1e-9)
    if loss == "absolute":
        res = solve(form, "highs", warm_start=ls, time_limit=60)
        assert form.tree_objective(form.extract()) <= start + 1e-7
        assert res.objective <= start + 1e-7


def test_squared_loss_on_highs_is_refused_and_bad_settings_are_named():
    data = tiny(0)
    with pytest.raises(SolverError, match="HiGHS"):
        solve(ORTLinear(data, 1, loss="squared"), "highs")
    with pytest.raises(InputError, match="loss"):
        ORTLinear(data, 1, loss="huber")
    with pytest.raises(InputError, match="penalty"):
        ORTLinear(data, 1, penalty="l2")
    with pytest.raises(InputError, match="leaf_penalty"):
        ORTLinear(data, 1, leaf_penalty=-0.1)
    with pytest.raises(InputError, match="coef_bound"):
        ORTLinear(data, 1, coef_bound=0.0)
    with pytest.raises(InputError, match="regression"):
        ORTLinear(prepare(data.X, data.y > 0), 1)
    with pytest.warns(UserWarning, match="leaf_penalty=0"):
        ORTLinear(data, 1, leaf_penalty=0.0)


def test_bounds_follow_the_derivation():
    data = tiny(4)
    form = ORTLinear(data, 1, leaf_penalty=0.2, upper_bound=0.5, loss="absolute")
    base = obj.baseline(data.y, "absolute")
    assert form.coef_bound == pytest.approx(0.5 / 0.2) and form.coef_bound_proven
    assert form.intercept_bound == pytest.approx(np.abs(data.y).max() + 0.5 / 0.2 + base * 0.5)
    np.testing.assert_allclose(form.big_m, 2 * (form.intercept_bound + 2.5 * data.Xs.max(axis=1)))
    l0 = ORTLinear(data, 1, leaf_penalty=0.2, penalty="l0")
    assert not l0.coef_bound_proven and l0.coef_bound == pytest.approx(10 * np.ptp(data.y))


def test_hyperplane_local_search_tree_warm_starts_ort_lh():
    """ORT-LH: the start passes the structure's margin fit (a split closer than the margin is moved, with a
    warning, and the lasso leaves refitted); the model's value at the start is that tree's objective."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (40, 2))
    y = np.where(X[:, 0] + X[:, 1] < 1, 1 + 2 * X[:, 1], -X[:, 0]) + 0.05 * rng.normal(size=40)
    data = prepare(X, y, task="regression")
    ls = linear_local_search(data, 1, alpha=0.01, leaf_penalty=0.01, n_restarts=2, constant_restarts=2,
                             split_type="hyperplane", n_hyperplane_restarts=10, random_state=0)
    form = ORTLinear(data, 1, alpha=0.01, leaf_penalty=0.01, loss="squared", split_type="hyperplane")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = form.feasible_start(ls)
        form.warm_start(ls)
    assert pyo.value(form.model.objective_expr) == pytest.approx(form.tree_objective(start), rel=1e-8)
    for c in form.model.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(c.body)
        assert c.lower is None or body >= pyo.value(c.lower) - 1e-7, c.name
        assert c.upper is None or body <= pyo.value(c.upper) + 1e-7, c.name


def test_depth_two_highs_and_scip_agree_and_beat_the_warm_start():
    data = tiny(5, n=10)
    ls = linear_local_search(data, 2, alpha=0.02, leaf_penalty=0.1, n_restarts=2, constant_restarts=2,
                             random_state=0)
    objs = []
    for solver in ("highs", "scip"):
        form = ORTLinear(data, 2, alpha=0.02, leaf_penalty=0.1, loss="absolute")
        res = solve(form, solver, warm_start=ls, time_limit=120)
        assert res.status == "optimal"
        objs.append(form.tree_objective(form.extract()))
    assert objs[0] == pytest.approx(objs[1], rel=1e-6, abs=1e-7)
    assert objs[0] <= linear_tree_objective(ls, data, 0.02, 0.1, loss="absolute", refit=False) + 1e-7
