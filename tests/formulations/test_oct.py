"""OCT MIO against exhaustive enumeration, the non-splitting-node regression, warm starts, verification."""
import numpy as np
import pyomo.environ as pyo
import pytest
from sklearn.datasets import load_iris

from oracles.bruteforce import brute_force_objective
from opttrees.data.prepared import prepare
from opttrees.errors import VerificationWarning, InputError, VerificationError
from opttrees.formulations import OCT
from opttrees.heuristics.cart import cart_classifier_tree
from opttrees.solvers import available_solvers, solve

SOLVERS = available_solvers()


def tiny(seed, n=24, p=2, k=2, levels=6):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, (n, p)).astype(float) * rng.uniform(0.5, 3, p)
    y = rng.integers(0, k, n)
    return X, y


CASES = [  # (seed, n, p, classes, depth, alpha, min_leaf)
    (0, 24, 2, 2, 1, 0.0, 1),
    (1, 30, 3, 3, 1, 0.0, 1),
    (2, 20, 2, 2, 2, 0.0, 1),
    (3, 24, 2, 3, 2, 0.05, 1),
    (4, 22, 3, 2, 2, 0.0, 3),
]


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed,n,p,k,depth,alpha,nmin", CASES)
def test_optimum_equals_brute_force(solver, seed, n, p, k, depth, alpha, nmin):
    X, y = tiny(seed, n, p, k)
    data = prepare(X, y, min_samples_leaf=nmin)
    f = OCT(data, depth, nmin, alpha)
    r = solve(f, solver, warm_start=cart_classifier_tree(data, depth, nmin, alpha), time_limit=120)
    assert r.proven_optimal
    expected = brute_force_objective(X, data.y, depth, alpha, nmin)
    assert r.objective == pytest.approx(expected, abs=1e-6)
    tree = f.extract()  # re-routes the data and checks the objective itself
    assert f.tree_objective(tree) == pytest.approx(expected, abs=1e-6)
    assert tree.depth <= depth


@pytest.mark.parametrize("routing,loss", [("thesis", "thesis"), ("aggregated", "thesis"), ("thesis", "tight")])
def test_literal_and_strengthened_models_agree(routing, loss):
    X, y = tiny(5, 20, 2, 2)
    data = prepare(X, y)
    f = OCT(data, 2, routing=routing, loss=loss)
    r = solve(f, "highs", time_limit=120)
    assert r.proven_optimal
    assert r.objective == pytest.approx(brute_force_objective(X, data.y, 2), abs=1e-6)


@pytest.mark.parametrize("routing", ["thesis", "aggregated"])
def test_non_splitting_nodes_send_every_point_right(routing):
    """Regression test for the thesis's row (2.13): with no split anywhere, the model must not be able to put
    points in left leaves (the buggy row allowed a zero-error 'tree' with zero splits)."""
    X = np.array([[0.0], [1.0], [2.0], [3.0], [10.0], [11.0], [12.0], [13.0]])
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1])  # perfectly separable by one split
    f = OCT(prepare(X, y), 2, routing=routing, loss="thesis")
    for t in f.structure.branch:
        f.model.tree.d[t].fix(0)
    r = solve(f, "highs")
    assert r.objective == pytest.approx(1.0)  # the root-only tree: 4 errors / baseline 4
    z = {t: sum(pyo.value(f.model.tree.z[i, t]) for i in range(8)) for t in f.structure.leaves}
    assert z[7] == 8 and all(z[t] == 0 for t in (4, 5, 6))
    tree = f.extract()
    assert tree.n_splits == 0


@pytest.mark.parametrize("solver", SOLVERS)
def test_greedy_start_is_first_incumbent(solver):
    X, y = load_iris(return_X_y=True)
    rng = np.random.default_rng(0)
    idx = rng.choice(150, 40, replace=False)
    data = prepare(X[idx][:, [0, 1]], y[idx])  # sepal features: CART is not optimal here
    start = cart_classifier_tree(data, 2)
    f = OCT(data, 2)
    r = solve(f, solver, warm_start=start, time_limit=60)
    start_obj = f.tree_objective(start)
    assert r.start_objective == pytest.approx(start_obj)
    assert r.trace[0].primal == pytest.approx(start_obj, abs=1e-6)  # the solver reported it as incumbent
    assert r.objective <= start_obj + 1e-9


def test_warm_start_rejects_deep_or_hyperplane_trees():
    X, y = tiny(7, 30, 2, 2)
    data = prepare(X, y)
    deep = cart_classifier_tree(data, 3)
    assert deep.depth == 3
    with pytest.raises(InputError, match="depth 3 > max_depth=2"):
        OCT(data, 2).warm_start(deep)


def test_verification_catches_a_wrong_solution():
    X, y = tiny(8, 20, 2, 2)
    data = prepare(X, y)
    f = OCT(data, 1)
    solve(f, "highs")
    f.model.L[3].set_value(pyo.value(f.model.L[3]) + 2)  # corrupt the solver's objective
    with pytest.warns(VerificationWarning, match="not a proof"):
        f.extract()
    f.strict = True
    with pytest.raises(VerificationError, match="formulation bug"):
        f.extract()


def test_parameter_errors():
    X, y = tiny(9, 10, 2, 2)
    data = prepare(X, y)
    with pytest.raises(InputError, match="max_depth"):
        OCT(data, -1)
    with pytest.raises(InputError, match="alpha"):
        OCT(data, 1, alpha=-0.1)
    with pytest.raises(InputError, match="classification"):
        OCT(prepare(X, y.astype(float), task="regression"), 1)


def test_infeasible_min_leaf_is_reported():
    X, y = tiny(10, 10, 2, 2)
    data = prepare(X, y, min_samples_leaf=6)
    f = OCT(data, 1, min_samples_leaf=6)
    for t in f.structure.leaves:
        f.model.tree.l[t].fix(1)   # force two non-empty leaves: both cannot hold 6 of 10 points
    r = solve(f, "highs")
    assert r.status == "infeasible" and not r.has_solution


@pytest.mark.slow
@pytest.mark.parametrize("solver", SOLVERS)
def test_iris_depth2_proven_optimal_with_six_errors(solver):
    X, y = load_iris(return_X_y=True)
    data = prepare(X, y)
    f = OCT(data, 2)
    r = solve(f, solver, warm_start=cart_classifier_tree(data, 2), time_limit=900)
    assert r.proven_optimal, r.summary()
    tree = f.extract()
    assert int((tree.predict(X) != y).sum()) == 6
