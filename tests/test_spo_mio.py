"""SPOT MILP: optimum == exhaustive enumeration on tiny instances (both solvers); never worse than greedy."""
import numpy as np
import pytest

from opttrees.estimators.spo import SPOTree
from opttrees.experiments.spo_data import shortest_path_data
from opttrees.formulations.spot import SPOTFormulation, fit_spot_mio
from opttrees.oracles import NewsRecommendation
from opttrees.spo import grow_spo_tree

ALPHA = 1e-4


def leaf_loss(pr, Cm, z, w, idx):
    if w[idx].sum() <= 0:
        return 0.0
    d, _ = pr._solve_min((w[idx] @ Cm[idx] / w[idx].sum())[None])
    return float(w[idx] @ (Cm[idx] @ d[0] - z[idx]))


def best_subtree(pr, X, Cm, z, w, idx, depth, min_leaf, alpha_raw):
    """Exact minimum of (weighted regret + alpha_raw * splits) over trees of depth <= depth on rows idx."""
    best = leaf_loss(pr, Cm, z, w, idx)
    if depth == 0:
        return best
    for j in range(X.shape[1]):
        for s in np.unique(X[idx, j])[1:]:
            L, R = idx[X[idx, j] < s], idx[X[idx, j] >= s]
            if w[L].sum() < min_leaf or w[R].sum() < min_leaf:
                continue
            v = alpha_raw + best_subtree(pr, X, Cm, z, w, L, depth - 1, min_leaf, alpha_raw)
            if v < best:
                v += best_subtree(pr, X, Cm, z, w, R, depth - 1, min_leaf, alpha_raw)
                best = min(best, v)
    return best


def brute_objective(pr, X, C, w, depth, min_leaf, alpha):
    Cm = pr.sign * C
    _, z = pr._solve_min(Cm)
    norm = w @ np.abs(z)
    return best_subtree(pr, X, Cm, z, w, np.arange(len(X)), depth, min_leaf, alpha * norm) / norm


def tiny(seed, n=14, p=2, grid=(2, 3)):
    D = shortest_path_data(n, deg=4, noise=0.3, p=p, grid=grid, n_test=0, seed=seed)
    X = np.round(D.X, 1)   # repeated values exercise the epsilon rows
    w = np.random.default_rng(seed).integers(1, 3, n).astype(float)
    return D.problem, X, D.C, w


@pytest.mark.parametrize("solver", ["highs", "scip"])
@pytest.mark.parametrize("depth,seed", [(1, 0), (1, 1), (2, 2), (2, 3)])
def test_mio_equals_enumeration(solver, depth, seed):
    pr, X, C, w = tiny(seed, n=12 if depth == 2 else 14)
    tree, info = fit_spot_mio(pr, X, C, w, depth=depth, min_samples_leaf=2, alpha=ALPHA, solver=solver,
                              time_limit=120, quantile_step=None, x_precision=None)
    res = info["result"]
    assert res.proven_optimal
    brute = brute_objective(pr, X, C, w, depth, 2, ALPHA)
    assert res.objective == pytest.approx(brute, abs=1e-6)
    assert info["objective"] == pytest.approx(brute, abs=1e-6)
    # the greedy start is feasible with its own objective
    assert res.start_objective == pytest.approx(info["greedy_objective_rounded"], abs=1e-7)
    assert res.start_objective == pytest.approx(info["greedy_objective"], abs=1e-7)
    assert info["objective"] <= info["greedy_objective"] + 1e-9


def test_mio_never_worse_than_greedy_under_time_limit():
    D = shortest_path_data(80, deg=8, noise=0.25, p=3, grid=(3, 3), n_test=200, seed=5)
    tree, info = fit_spot_mio(D.problem, D.X, D.C, depth=2, min_samples_leaf=8, time_limit=3, solver="highs")
    res = info["result"]
    assert res.has_solution
    assert res.objective <= res.start_objective + 1e-7
    assert res.start_objective == pytest.approx(info["greedy_objective_rounded"], abs=1e-7)
    assert info["objective"] <= info["greedy_objective"] + 1e-12
    est = SPOTree(D.problem, max_depth=2, min_samples_leaf=8, method="mio", time_limit=3, prune=False).fit(D.X, D.C)
    g = SPOTree(D.problem, max_depth=2, min_samples_leaf=8, prune=False).fit(D.X, D.C)
    assert est.training_loss(D.X, D.C) <= g.training_loss(D.X, D.C) + 1e-12


def test_mio_maximisation_news():
    nw = NewsRecommendation.random(d=4, m=3, seed=12)
    rng = np.random.default_rng(3)
    X = np.round(rng.random((12, 2)), 1)
    P = np.clip(0.2 + 0.3 * np.column_stack([X[:, 0], 1 - X[:, 0], X[:, 1], 1 - X[:, 1]]) + 0.05 * rng.random((12, 4)), 0, 1)
    w = np.ones(12)
    tree, info = fit_spot_mio(nw, X, P, w, depth=1, min_samples_leaf=2, alpha=ALPHA, solver="highs",
                              quantile_step=None, time_limit=60, x_precision=None)
    assert info["result"].proven_optimal
    assert info["result"].objective == pytest.approx(brute_objective(nw, X, P, w, 1, 2, ALPHA), abs=1e-6)


def test_warm_start_objective_matches_greedy_tree():
    pr, X, C, w = tiny(7, n=16)
    g = grow_spo_tree(pr, X, C, w, max_depth=2, min_samples_leaf=2, quantile_step=None)
    form = SPOTFormulation(pr, X, C, w, max_depth=2, min_samples_leaf=2, alpha=ALPHA)
    form.warm_start(g)
    from pyomo.environ import value
    assert value(form.model.objective) == pytest.approx(form.tree_objective(g), abs=1e-9)
    for c in form.model.component_data_objects(__import__("pyomo.environ").environ.Constraint, active=True):
        lo, body, hi = c.lower, value(c.body), c.upper
        assert (lo is None or body >= value(lo) - 1e-7) and (hi is None or body <= value(hi) + 1e-7), c.name


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 10**5), depth=st.integers(1, 2), solver=st.sampled_from(["highs", "scip"]))
def test_mio_never_worse_than_its_greedy_start_property(seed, depth, solver):
    D = shortest_path_data(30, deg=6, noise=0.25, p=2, grid=(2, 3), n_test=0, seed=seed)
    w = np.random.default_rng(seed).integers(1, 3, 30).astype(float)
    tree, info = fit_spot_mio(D.problem, D.X, D.C, w, depth=depth, min_samples_leaf=3, solver=solver, time_limit=1.5)
    res = info["result"]
    assert res.start_objective == pytest.approx(info["greedy_objective_rounded"], abs=1e-7)
    if res.has_solution:
        assert res.objective <= res.start_objective + 1e-7
    assert info["objective"] <= info["greedy_objective"] + 1e-12
    assert tree.depth <= depth


@pytest.mark.parametrize("solver", ["highs", "scip"])
def test_mio_with_binary_pyomo_knapsack_equals_enumeration(solver):
    """SPOT MILP over a user MILP region (binary knapsack, max sense) at depth 1 == brute force."""
    from bruteforce import KNAPSACK_CAPACITY, KNAPSACK_WEIGHTS as wts, binary_knapsack_problem
    prob = binary_knapsack_problem()
    rng = np.random.default_rng(2)
    X = np.round(rng.random((12, 2)), 1)
    V = np.column_stack([X[:, 0], 1 - X[:, 0], X[:, 1], 1 - X[:, 1]]) + 0.3 * rng.random((12, 4))
    w = np.ones(12)
    tree, info = fit_spot_mio(prob, X, V, w, depth=1, min_samples_leaf=2, alpha=ALPHA, solver=solver,
                              quantile_step=None, time_limit=30, x_precision=None)
    res = info["result"]
    assert res.proven_optimal
    brute = brute_objective(prob, X, V, w, 1, 2, ALPHA)
    assert res.objective == pytest.approx(brute, abs=1e-6)
    assert info["objective"] == pytest.approx(brute, abs=1e-6)
    # the tree's leaf decisions are feasible 0/1 knapsack solutions
    W = tree.predict(X)
    assert np.all(np.isin(W, (0.0, 1.0))) and np.all(W @ wts <= KNAPSACK_CAPACITY + 1e-9)
