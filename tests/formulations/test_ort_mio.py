"""ORT / ORT-H MIO (thesis model (4.8)) against exhaustive enumeration, both solvers, warm starts, big-M bounds.

Brute force, parallel splits: every midpoint between adjacent distinct values of every feature at every node
(the MIO's splits are exactly these partitions). Brute force, hyperplane splits: the line enumeration of
``tests/oracles/hyperplane.py`` with the same margin claim, charging each leaf its best constant (weighted
median for absolute loss, mean for squared loss).
"""
from __future__ import annotations

import warnings

import numpy as np
import pyomo.environ as pyo
import pytest

from opttrees import OptimalTreeRegressor
from opttrees.data.prepared import prepare
from opttrees.errors import InputError, SolverError
from opttrees.formulations.ort import ORT
from opttrees.heuristics import greedy_tree, local_search
from opttrees.objectives import baseline
from opttrees.solvers import available_solvers, solve
from oracles.hyperplane import HyperplaneBruteForce, hyperplane_tree
from oracles.mio_starts import start_is_feasible, start_objective
from oracles.parallel_trees import leaf_cost_fn, parallel_brute_force

SOLVERS = available_solvers()
HAS_SCIP = "scip" in SOLVERS


def tiny(seed, n, p=2):
    rng = np.random.default_rng(seed)
    X = rng.random((n, p)) * 20 - 5
    y = np.where(X[:, 0] < 3, 1.0, 4.0) + np.where(X[:, 1] < 2, 0.0, 2.5) + rng.normal(0, 0.6, n)
    y[rng.integers(n)] += 8.0   # an outlier: absolute and squared loss disagree
    return X, y


LOSS_SOLVER = [("absolute", s) for s in SOLVERS] + ([("squared", "scip")] if HAS_SCIP else [])
CASES = [  # (seed, n, depth, alpha)
    (0, 14, 1, 0.0),
    (1, 10, 2, 0.0),
    (2, 10, 2, 0.1),
]


@pytest.mark.parametrize("loss,solver", LOSS_SOLVER)
@pytest.mark.parametrize("seed,n,depth,alpha", CASES)
def test_ort_equals_brute_force(loss, solver, seed, n, depth, alpha):
    X, y = tiny(seed, n)
    data = prepare(X, y, task="regression")
    expected = parallel_brute_force(X, y, depth, alpha, loss)
    for start in (None, local_search(data, depth, alpha, 1, 10, "parallel", 0, loss=loss)):
        f = ORT(data, depth, 1, alpha, loss=loss)
        r = solve(f, solver, warm_start=start, time_limit=120)
        assert r.proven_optimal, r.summary()
        assert r.objective == pytest.approx(expected, abs=1e-5)
        tree = f.extract()
        assert f.tree_objective(tree) == pytest.approx(expected, abs=1e-5)


def test_weighted_absolute_loss_equals_brute_force():
    X, y = tiny(3, 12)
    w = np.random.default_rng(3).integers(1, 4, 12).astype(float)
    data = prepare(X, y, task="regression", sample_weight=w)
    f = ORT(data, 1, loss="absolute")
    r = solve(f, "highs", time_limit=60)
    assert r.objective == pytest.approx(parallel_brute_force(X, y, 1, 0.0, "absolute", w), abs=1e-6)
    f.extract()


@pytest.mark.parametrize("loss,solver", LOSS_SOLVER)
def test_ort_h_equals_brute_force(loss, solver):
    X, y = tiny(4, 12)
    data = prepare(X, y, task="regression")
    alpha = 0.05
    base = baseline(y, loss)
    bf = HyperplaneBruteForce(data.Xs, leaf_cost_fn(y, np.ones(len(y)), loss), 1, alpha * base)
    expected = bf.objective(base)
    f = ORT(data, 1, alpha=alpha, loss=loss, split_type="hyperplane")
    r = solve(f, solver, time_limit=120)
    assert r.proven_optimal
    assert r.objective == pytest.approx(expected, abs=1e-5)
    assert f.tree_objective(f.extract()) == pytest.approx(expected, abs=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("loss", ["absolute", "squared"])
def test_ort_h_depth2_equals_brute_force_slow(loss):
    X, y = tiny(5, 10)
    data = prepare(X, y, task="regression")
    base = baseline(y, loss)
    bf = HyperplaneBruteForce(data.Xs, leaf_cost_fn(y, np.ones(len(y)), loss), 2, 0.02 * base)
    f = ORT(data, 2, alpha=0.02, loss=loss, split_type="hyperplane")
    r = solve(f, "highs" if loss == "absolute" else "scip", time_limit=900)
    assert r.proven_optimal
    assert r.objective == pytest.approx(bf.objective(base), abs=1e-5)


@pytest.mark.skipif(not HAS_SCIP, reason="needs SCIP")
@pytest.mark.parametrize("split_type", ["parallel", "hyperplane"])
def test_highs_and_scip_agree_on_absolute_loss(split_type):
    X, y = tiny(6, 16)
    data = prepare(X, y, task="regression")
    objs = []
    for solver in ("highs", "scip"):
        f = ORT(data, 1, alpha=0.01, loss="absolute", split_type=split_type)
        r = solve(f, solver, time_limit=120)
        assert r.proven_optimal
        objs.append(r.objective)
    assert objs[0] == pytest.approx(objs[1], abs=1e-6)


# ------------------------------------------------------------------------------------------ warm starts
@pytest.mark.parametrize("split_type", ["parallel", "hyperplane"])
@pytest.mark.parametrize("loss", ["absolute", "squared"])
def test_local_search_tree_is_a_feasible_start_with_its_objective(loss, split_type):
    """Every local-search tree is a feasible start; with no margin notes its objective is the search's."""
    for seed in range(3):
        X, y = tiny(10 + seed, 30)
        data = prepare(X, y, task="regression")
        ls = local_search(data, 2, 0.01, 1, 10, split_type, seed, loss=loss, max_moves=2000)
        f = ORT(data, 2, alpha=0.01, loss=loss, split_type=split_type)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f.warm_start(ls)
        assert start_is_feasible(f)
        if not f.start_notes:
            assert start_objective(f) == pytest.approx(f.tree_objective(ls), rel=1e-9, abs=1e-9)


def test_solver_takes_the_local_search_start_as_its_first_incumbent():
    X, y = tiny(13, 30)
    data = prepare(X, y, task="regression")
    ls = local_search(data, 2, 0.01, 1, 10, "parallel", 0, loss="absolute")
    f = ORT(data, 2, alpha=0.01, loss="absolute")
    r = solve(f, "highs", warm_start=ls, time_limit=2)
    assert r.start_objective == pytest.approx(f.tree_objective(ls), abs=1e-9)
    assert r.trace and r.trace[0].primal == pytest.approx(f.tree_objective(ls), abs=1e-6)
    assert r.objective <= f.tree_objective(ls) + 1e-9


def test_bounds_make_the_big_m_valid_for_every_feasible_point():
    """f and beta live in [min y, max y] and M_f = max y - min y, so a leaf constant anywhere in that range
    with any routing satisfies the fit rows; a start tree's constants outside the range are clipped, which
    can only lower its loss."""
    X, y = tiny(14, 12)
    data = prepare(X, y, task="regression")
    f = ORT(data, 1, loss="absolute")
    lo, hi = y.min(), y.max()
    assert all(f.model.beta[t].bounds == (lo, hi) for t in f.structure.leaves)
    assert all(f.model.f[i].bounds == (lo, hi) for i in range(len(y)))
    tree = greedy_tree(data, 1, loss="absolute")
    tree.value[:, 0] = np.where(np.arange(tree.n_nodes) % 2 == 0, hi + 100.0, lo - 100.0)
    f.warm_start(tree)
    assert start_is_feasible(f)
    assert start_objective(f) <= f.tree_objective(tree)
    for t in f.structure.leaves:   # the other extreme: empty and used leaves at opposite ends of the range
        f.model.beta[t].set_value(lo if t % 2 else hi)
    for i in range(len(y)):
        leaf = max(f.structure.leaves, key=lambda t: pyo.value(f.model.tree.z[i, t]))
        f.model.f[i].set_value(pyo.value(f.model.beta[leaf]))
        f.model.L[i].set_value(abs(pyo.value(f.model.f[i]) - y[i]))
    assert start_is_feasible(f)


# ------------------------------------------------------------------------------------------ estimator and errors
@pytest.mark.parametrize("loss,solver", LOSS_SOLVER)
def test_estimator_mio_equals_brute_force_on_raw_units(loss, solver):
    X, y = tiny(15, 12)
    est = OptimalTreeRegressor(max_depth=2, method="mio", loss=loss, solver=solver, n_restarts=10, random_state=0,
                               alpha=0.01, time_limit=120).fit(X, y)
    assert est.solve_result_.proven_optimal
    expected = parallel_brute_force(X, y, 2, 0.01, loss)
    assert est.objective_ == pytest.approx(expected, abs=1e-5)
    assert est.solve_result_.objective == pytest.approx(expected, abs=1e-5)
    assert np.allclose(est.predict(X), est.tree_.predict(X))


def test_estimator_hyperplane_mio():
    X, y = tiny(16, 14)
    est = OptimalTreeRegressor(max_depth=1, method="mio", loss="absolute", split_type="hyperplane", n_restarts=5,
                               random_state=0, alpha=0.01, time_limit=120)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    assert est.solve_result_.proven_optimal
    assert est.objective_ <= est.solve_result_.objective + 1e-9


def test_squared_loss_on_highs_is_a_clear_error():
    X, y = tiny(17, 10)
    with pytest.raises(InputError, match="loss='squared'.*solver='scip'"):
        OptimalTreeRegressor(method="mio", loss="squared", solver="highs").fit(X, y)
    f = ORT(prepare(X, y, task="regression"), 1, loss="squared")
    with pytest.raises(SolverError, match="HiGHS cannot solve a quadratic objective"):
        solve(f, "highs")


def test_bad_formulation_input():
    X, y = tiny(18, 10)
    data = prepare(X, y, task="regression")
    with pytest.raises(InputError, match="hyperplane tree cannot warm-start a parallel-split formulation"):
        ORT(data, 1).warm_start(_regression(hyperplane_tree([1.0, 1.0], 0.0, prepare(X, (y > 3).astype(int)))))
    with pytest.raises(InputError, match="loss must be one of"):
        ORT(data, 1, loss="huber")
    with pytest.raises(InputError, match="split_type"):
        ORT(data, 1, split_type="oblique")
    with pytest.raises(InputError, match="regression data"):
        ORT(prepare(X, (y > 3).astype(int)), 1)
    with pytest.raises(InputError, match="regression tree"):
        ORT(data, 1).warm_start(hyperplane_tree([1.0, 1.0], 0.0, prepare(X, (y > 3).astype(int))))
    with pytest.raises(InputError, match="warm_start='dp' is not valid"):
        OptimalTreeRegressor(method="mio", warm_start="dp").fit(X, y)


def _regression(tree):
    tree.task, tree.label, tree.classes = "regression", None, None
    tree.value = np.zeros((tree.n_nodes, 1))
    return tree


@pytest.mark.skipif(not HAS_SCIP, reason="needs SCIP")
def test_scip_takes_a_squared_loss_start_as_its_first_incumbent():
    X, y = tiny(19, 20)
    data = prepare(X, y, task="regression")
    ls = local_search(data, 2, 0.0, 1, 10, "parallel", 0, loss="squared")
    f = ORT(data, 2, loss="squared")
    r = solve(f, "scip", warm_start=ls, time_limit=3)
    assert r.trace and r.trace[0].primal == pytest.approx(f.tree_objective(ls), abs=1e-6)


@pytest.mark.parametrize("split_type", ["parallel", "hyperplane"])
def test_builds_onto_a_caller_block(split_type):
    """The formulation contract: on a caller's block no Objective is added; a combined objective solves and
    extract() verifies the part on its own."""
    X, y = tiny(20, 10)
    m = pyo.ConcreteModel()
    m.reg = pyo.Block()
    f = ORT(prepare(X, y, task="regression"), 1, loss="absolute", split_type=split_type, block=m.reg)
    assert f.model.component("objective") is None and not f.owns_model
    m.obj = pyo.Objective(expr=f.sense * m.reg.objective_expr)
    r = solve(m, "highs", time_limit=60)
    assert r.objective == pytest.approx(f.tree_objective(f.extract()), abs=1e-6)
