"""OCT-H MIO (thesis model (3.3)) against exhaustive enumeration of lines, warm starts, the margin, bad input.

**The exact claim the brute force checks.** On two features the MIO's optimum equals the minimum, over trees
of depth <= D, of (misclassifications / L̂ + alpha * coefficients), where each split is a partition (L, R) of
its node's training rows that some (a, b) with sum |a| <= 1 realises with margin mu on the min-max scaled
features: a.x + mu <= b on L and a.x >= b on R. Equivalently the partition's largest margin (a small LP) is
at least mu. A split costs 1 coefficient when one feature alone separates the sides by mu, else 2. The
candidate partitions are every line through two points with those two points put on either side (in general
position this yields every linearly separable partition). A partition whose largest margin is within 1e-4 of
mu would make the claim depend on solver tolerances, so the enumerator records the margins it checks and the
test asserts none is that close.
"""
from __future__ import annotations

import warnings

import numpy as np
import pyomo.environ as pyo
import pytest

from opttrees import OptimalTreeClassifier
from opttrees.data.prepared import prepare
from opttrees.errors import InputError
from opttrees.formulations import OCT
from opttrees.formulations.octh import OCTH
from opttrees.heuristics import local_search
from opttrees.objectives import tree_objective
from opttrees.solvers import available_solvers, solve
from opttrees.tree import HYPERPLANE
from oracles.hyperplane import MU, HyperplaneBruteForce, hyperplane_tree, misclassification_cost
from oracles.mio_starts import start_is_feasible, start_objective

SOLVERS = available_solvers()


# ------------------------------------------------------------------------------------------ brute force


def tiny(seed, n, k=2):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 2)) * np.array([3.0, 0.5]) + np.array([-1.0, 7.0])   # raw units far from [0, 1]
    y = ((X[:, 0] + 2 * rng.normal(0, 0.4, n) + 4 * (X[:, 1] - 7.25)) > 0.3).astype(int)
    if k == 3:
        y = np.where(rng.random(n) < 0.3, 2, y)
    return X, y


def brute(data, depth, alpha, mu=MU):
    K = data.n_classes
    base = float(len(data.y) - np.bincount(data.y, minlength=K).max())
    bf = HyperplaneBruteForce(data.Xs, misclassification_cost(data.y, K), depth, alpha * base, mu)
    return bf.objective(base)


CASES = [  # (seed, n, classes, depth, alpha)
    (0, 14, 2, 1, 0.0),
    (1, 14, 3, 1, 0.1),
    (2, 9, 2, 2, 0.0),
]


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed,n,k,depth,alpha", CASES)
def test_optimum_equals_brute_force(solver, seed, n, k, depth, alpha):
    X, y = tiny(seed, n, k)
    data = prepare(X, y)
    expected = brute(data, depth, alpha)
    for start in (None, local_search(data, depth, alpha, 1, 10, "hyperplane", 0, max_moves=2000)):
        f = OCTH(data, depth, 1, alpha)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # a start may need the margin adjustment
            r = solve(f, solver, warm_start=start, time_limit=120)
        assert r.proven_optimal, r.summary()
        assert r.objective == pytest.approx(expected, abs=1e-6)
        tree = f.extract()   # re-routes the raw training data and checks the objective itself
        assert f.tree_objective(tree) == pytest.approx(expected, abs=1e-6)
        assert tree.depth <= depth


@pytest.mark.slow
@pytest.mark.parametrize("seed,n,k,alpha", [(3, 12, 2, 0.0), (4, 11, 3, 0.05), (5, 12, 2, 0.1)])
def test_depth2_optimum_equals_brute_force_slow(seed, n, k, alpha):
    X, y = tiny(seed, n, k)
    data = prepare(X, y)
    f = OCTH(data, 2, 1, alpha)
    r = solve(f, "highs", time_limit=600)
    assert r.proven_optimal
    assert r.objective == pytest.approx(brute(data, 2, alpha), abs=1e-6)


@pytest.mark.skipif(len(SOLVERS) < 2, reason="needs HiGHS and SCIP")
def test_highs_and_scip_agree():
    X, y = tiny(6, 16, 3)
    data = prepare(X, y)
    objs = []
    for solver in ("highs", "scip"):
        f = OCTH(data, 1, alpha=0.05)
        r = solve(f, solver, time_limit=120)
        assert r.proven_optimal
        objs.append(r.objective)
        f.extract()
    assert objs[0] == pytest.approx(objs[1], abs=1e-6)


# ------------------------------------------------------------------------------------------ the margin
def gap_data(gap):
    """Two classes on feature 0 whose closest points are ``gap`` apart after scaling, and share feature 1 (so no
    hyperplane with sum |a| <= 1 separates them by more than ``gap``); feature 1 alone separates nothing."""
    x0 = np.r_[np.linspace(0.0, 0.4, 6), 0.4 + gap, np.linspace(0.7, 1.0, 5)]
    x1 = np.r_[0.1, 0.9, 0.3, 0.7, 0.2, 0.5, 0.5, 0.4, 0.6, 0.15, 0.85, 0.55]
    x1 = x1 + np.r_[0.013, -0.021, 0.017, 0.009, -0.011, 0.0, 0.0, 0.019, -0.007, 0.023, -0.016, 0.004]
    y = np.r_[np.zeros(6, int), np.ones(6, int)]
    return np.column_stack([x0 * 40 + 10, x1]), y


@pytest.mark.parametrize("mu,separable", [(0.005, False), (0.001, True)])
def test_margin_excludes_splits_closer_than_mu(mu, separable):
    """The classes are 0.003 apart (scaled): mu = 0.005 forbids the perfect split, mu = 0.001 allows it."""
    X, y = gap_data(0.003)
    data = prepare(X, y)
    f = OCTH(data, 1, margin=mu)
    r = solve(f, "highs", time_limit=60)
    assert r.proven_optimal
    assert (r.objective == pytest.approx(0.0, abs=1e-9)) == separable
    assert r.objective == pytest.approx(brute(data, 1, 0.0, mu), abs=1e-6)
    f.extract()


def test_non_splitting_nodes_send_every_point_right():
    X, y = gap_data(0.3)
    f = OCTH(prepare(X, y), 2)
    for t in f.structure.branch:
        f.model.tree.d[t].fix(0)
    r = solve(f, "highs")
    assert r.objective == pytest.approx(1.0)
    z = {t: sum(pyo.value(f.model.tree.z[i, t]) for i in range(len(y))) for t in f.structure.leaves}
    assert z[7] == len(y) and all(z[t] == 0 for t in (4, 5, 6))
    assert f.extract().n_splits == 0


def test_unused_coefficient_is_kept_so_the_objective_is_the_models():
    """An incumbent may charge s = 1 for a zero coefficient; the decoded tree keeps that feature (1e-9) so its
    recomputed objective is the solver's, and verification passes."""
    X, y = gap_data(0.3)
    f = OCTH(prepare(X, y), 1, alpha=0.1)
    f.model.tree.s[1, 1].setlb(1)
    f.model.tree.a[1, 1].setlb(0.0)
    f.model.tree.a[1, 1].setub(0.0)
    r = solve(f, "highs")
    tree = f.extract()
    assert r.objective == pytest.approx(0.2)   # perfect split on x0, two coefficients charged
    assert tree.feature[0] == HYPERPLANE and np.count_nonzero(tree.coef[0]) == 2


# ------------------------------------------------------------------------------------------ warm starts


@pytest.mark.parametrize("flips", [0, 3])
def test_local_search_tree_is_a_feasible_start_with_its_objective(flips):
    """Every local-search tree becomes a feasible start. Its objective is the local search's whenever no split
    had to change (no notes): always on clean clusters. With flipped labels the search carves single points
    out of clusters, often closer than mu; then the start is the adjusted tree, with that tree's objective."""
    unchanged = 0
    for seed in range(4):
        rng = np.random.default_rng(seed)
        centres = rng.random((4, 2)) * 10
        X = np.repeat(centres, 8, axis=0) + rng.normal(0, 0.3, (32, 2))
        y = np.repeat(rng.permutation([0, 1, 0, 1]), 8)
        y[rng.choice(32, flips, replace=False)] ^= 1
        data = prepare(X, y)
        ls = local_search(data, 2, 0.01, 1, 10, "hyperplane", seed, max_moves=2000)
        f = OCTH(data, 2, alpha=0.01)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            adjusted = f.feasible_start(ls)
            f.warm_start(ls)
        assert start_is_feasible(f)
        assert start_objective(f) == pytest.approx(f.tree_objective(adjusted), abs=1e-9)
        if not f.start_notes:
            unchanged += 1
            assert start_objective(f) == pytest.approx(f.tree_objective(ls), abs=1e-9)
    assert unchanged == 4 if flips == 0 else unchanged >= 1


def test_solver_takes_the_local_search_start_as_its_first_incumbent():
    rng = np.random.default_rng(0)
    X = np.repeat(rng.random((4, 2)) * 10, 8, axis=0) + rng.normal(0, 0.3, (32, 2))
    y = np.repeat([0, 1, 1, 0], 8)
    data = prepare(X, y)
    ls = local_search(data, 2, 0.01, 1, 10, "hyperplane", 0, max_moves=2000)
    f = OCTH(data, 2, alpha=0.01)
    r = solve(f, "highs", warm_start=ls, time_limit=2)
    assert not f.start_notes
    assert r.start_objective == pytest.approx(f.tree_objective(ls), abs=1e-9)
    assert r.trace and r.trace[0].primal == pytest.approx(f.tree_objective(ls), abs=1e-6)
    assert r.objective <= f.tree_objective(ls) + 1e-9


def test_close_split_is_rotated_when_another_direction_keeps_the_partition():
    """A split whose sides are 0.0018 apart along its own direction, while the same partition has a wide gap
    along another direction with the same features and signs: the start keeps the partition (no notes, same
    objective), with a rotated hyperplane."""
    X = np.array([[0.0, 0.0], [0.0, 1.0], [0.45, 1.0], [1.0, 0.0], [1.0, 1.0], [0.552, 0.0]])
    y = np.array([0, 0, 0, 1, 1, 1])
    data = prepare(X, y)
    tree = hyperplane_tree([1.0, 0.1], 0.551, data)   # (0.45, 1) at 0.55 left, (0.552, 0) at 0.552 right
    f = OCTH(data, 1)
    adjusted = f.feasible_start(tree)
    assert np.array_equal(tree.apply(X), adjusted.apply(X))
    assert not np.allclose(adjusted.coef[0] / adjusted.coef[0].sum(), tree.coef[0] / tree.coef[0].sum())
    f.warm_start(tree)
    assert not f.start_notes and start_is_feasible(f)
    assert pyo.value(f.model.objective) == pytest.approx(f.tree_objective(tree))


def test_split_closer_than_the_margin_is_adjusted_with_a_warning():
    """No hyperplane separates the partition by mu: the start is changed (warning, notes) into a feasible one,
    and the solver reports the adjusted start's objective."""
    X, y = gap_data(0.003)
    data = prepare(X, y)
    tree = hyperplane_tree([1.0, 0.0], 10 + 40 * 0.4015, data)   # the perfect split
    f = OCTH(data, 1, alpha=0.01)
    assert f.tree_objective(tree) == pytest.approx(0.01)
    with pytest.warns(UserWarning, match="< margin 0.005"):
        f.warm_start(tree)
    assert f.start_notes and start_is_feasible(f)
    start = pyo.value(f.model.objective)
    assert start > 0.01   # the margin costs an error here
    g = OCTH(data, 1, alpha=0.01)
    with pytest.warns(UserWarning):
        r = solve(g, "highs", warm_start=tree, time_limit=30)
    assert r.start_objective == pytest.approx(start, abs=1e-9)


def test_parallel_trees_start_the_hyperplane_model():
    from opttrees.heuristics.cart import cart_classifier_tree
    X, y = tiny(7, 20)
    data = prepare(X, y)
    cart = cart_classifier_tree(data, 2)
    f = OCTH(data, 2)
    f.warm_start(cart)
    assert start_is_feasible(f)
    assert pyo.value(f.model.objective) == pytest.approx(f.tree_objective(cart))


# ------------------------------------------------------------------------------------------ estimator
def test_estimator_predicts_raw_features_as_the_mio_routes_them():
    X, y = tiny(8, 24)
    est = OptimalTreeClassifier(max_depth=1, split_type="hyperplane", warm_start="local-search", n_restarts=10,
                                random_state=0, alpha=0.01, time_limit=60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    res = est.solve_result_
    assert res.proven_optimal
    assert est.objective_ <= res.objective + 1e-9    # the MIO's tree, or a better warm start
    t = est.tree_
    data = prepare(X, y)
    assert est.objective_ == pytest.approx(tree_objective(t, X, data.y, "misclassification", 0.01, 2))
    assert np.array_equal(est.predict(X), t.predict(X))


def test_estimator_keeps_a_better_start_the_margin_excludes():
    X, y = gap_data(0.003)
    est = OptimalTreeClassifier(max_depth=1, split_type="hyperplane", warm_start="local-search", n_restarts=5,
                                random_state=0, time_limit=60)
    with pytest.warns(UserWarning) as caught:
        est.fit(X, y)
    assert any("< margin 0.005" in str(w.message) for w in caught)
    assert any("beats the MIO's tree" in str(w.message) for w in caught)
    assert est.objective_ == pytest.approx(0.0)           # the local search's perfect split
    # the result reports the returned tree and is no proof (the MIO's optimum under mu = 0.005 is 1/6)
    res = est.solve_result_
    assert res.objective == pytest.approx(0.0) and res.status == "unverified" and not res.proven_optimal
    assert "0.166666667" in res.message
    loose = OptimalTreeClassifier(max_depth=1, split_type="hyperplane", hyperplane_margin=0.001,
                                  warm_start=None, time_limit=60).fit(X, y)
    assert loose.objective_ == pytest.approx(0.0) and loose.solve_result_.proven_optimal


@pytest.mark.parametrize("params,msg", [
    ({"split_type": "hyperplane", "method": "greedy"}, "needs method='mio' or 'local-search'"),
    ({"split_type": "hyperplane", "method": "dp"}, "needs method='mio' or 'local-search'"),
    ({"hyperplane_margin": 0.0}, "hyperplane_margin=0.0 is not valid"),
    ({"hyperplane_margin": 2.0}, "hyperplane_margin=2.0 is not valid"),
])
def test_bad_estimator_settings(params, msg):
    X, y = tiny(9, 12)
    with pytest.raises(InputError, match=msg):
        OptimalTreeClassifier(max_depth=1, **params).fit(X, y)


def test_bad_formulation_input():
    X, y = tiny(10, 12)
    data = prepare(X, y)
    hyper = hyperplane_tree([1.0, 1.0], 7.0, data)
    with pytest.raises(InputError, match="hyperplane tree cannot warm-start a parallel-split formulation"):
        OCT(data, 1).warm_start(hyper)
    with pytest.raises(InputError, match="margin"):
        OCTH(data, 1, margin=0.0)
    with pytest.raises(InputError, match="classification"):
        OCTH(prepare(X, y.astype(float), task="regression"), 1)
    from opttrees.heuristics.cart import cart_classifier_tree
    deep = cart_classifier_tree(data, 2)
    assert deep.depth == 2
    with pytest.raises(InputError, match="depth 2 > max_depth=1"):
        OCTH(data, 1).warm_start(deep)


def test_builds_onto_a_caller_block():
    X, y = tiny(11, 12)
    m = pyo.ConcreteModel()
    m.clf = pyo.Block()
    f = OCTH(prepare(X, y), 1, alpha=0.05, block=m.clf)
    assert f.model.component("objective") is None and not f.owns_model
    m.obj = pyo.Objective(expr=f.sense * m.clf.objective_expr)
    r = solve(m, "highs", time_limit=60)
    assert r.objective == pytest.approx(f.tree_objective(f.extract()), abs=1e-6)


@pytest.mark.parametrize("routing,loss", [("thesis", "thesis"), ("aggregated", "thesis"), ("thesis", "tight")])
def test_literal_and_strengthened_models_agree(routing, loss):
    X, y = tiny(12, 12)
    X = np.column_stack([X, np.full(len(y), 3.0)])   # a constant feature: never split on
    data = prepare(X, y)
    f = OCTH(data, 1, alpha=0.05, routing=routing, loss=loss)
    r = solve(f, "highs", time_limit=60)
    assert r.proven_optimal
    data2 = prepare(X[:, :2], y)
    assert r.objective == pytest.approx(brute(data2, 1, 0.05), abs=1e-6)
    f.extract()
