"""The compiled prescriptive/policy DP (opttrees.dp.stats_kernels) against the Python recursion it replaces
(``_engine="python"``) and against brute force over every tree; its leaf cost against ``leaf_costs``; time
limit and Ctrl-C keep the deepest finished depth's tree; a user-sized table with ties and near-equal values."""
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opttrees.dp import stats_kernels
from opttrees.prescriptive.dp import solve_dp_prescriptive
from opttrees.interrupt import STOP
from opttrees.data.prescriptive import prepare_prescriptive
from opttrees.prescriptive.objective import KIND_OPT, KIND_POLICY, leaf_costs, make_problem, tree_objective
from oracles.prescriptive import brute_force


def problem(seed, n, p, levels, kind, n_treatment, msl, mu=0.5, m=2):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, p)).astype(float)
    t = rng.integers(0, m, n)
    t[:m] = np.arange(m)
    y = np.round(rng.normal(size=n) + X[:, 0] * (t - 0.5), 1)     # rounded: ties between leaves and treatments
    gamma = np.round(rng.normal(size=(n, m)), 1) if kind == KIND_POLICY else None
    return make_problem(prepare_prescriptive(X, t, y), kind, mu=mu if kind == KIND_OPT else 1.0,
                        n_treatment=n_treatment, min_samples_leaf=msl, gamma=gamma)


def heap_of(tree):
    """The tree's splits in preorder: (feature, threshold) or None for a leaf."""
    out = []

    def walk(u):
        if tree.is_leaf(u):
            out.append(None)
            return
        out.append((int(tree.feature[u]), float(tree.threshold[u])))
        walk(int(tree.children_left[u]))
        walk(int(tree.children_right[u]))

    walk(0)
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10 ** 6), n=st.integers(4, 24), p=st.integers(1, 3), levels=st.integers(2, 6),
       kind=st.sampled_from([KIND_OPT, KIND_POLICY]), nt=st.integers(0, 3), msl=st.integers(1, 4),
       mu=st.sampled_from([0.0, 0.5, 1.0]), m=st.integers(2, 3), depth=st.integers(0, 3),
       alpha=st.sampled_from([0.0, 0.01, 0.05]))
def test_compiled_dp_equals_the_python_recursion_and_brute_force(seed, n, p, levels, kind, nt, msl, mu, m, depth,
                                                                 alpha):
    prob = problem(seed, n, p, levels, kind, nt, msl, mu, m)
    try:
        ref_tree, ref = solve_dp_prescriptive(prob, depth, alpha, binarization="midpoints", _engine="python")
    except Exception as exc:   # an infeasible root: the compiled search must say the same
        with pytest.raises(type(exc)):
            solve_dp_prescriptive(prob, depth, alpha, binarization="midpoints")
        return
    tree, res = solve_dp_prescriptive(prob, depth, alpha, binarization="midpoints")
    assert res.status == ref.status == "optimal"
    assert res.objective == pytest.approx(ref.objective, abs=1e-9)
    assert tree_objective(tree, prob, alpha) == pytest.approx(res.objective, abs=1e-9)
    assert tree.depth <= depth
    if depth <= 2 or n <= 12:
        assert res.objective == pytest.approx(brute_force(prob, depth, alpha), abs=1e-9)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10 ** 6), n=st.integers(20, 60), p=st.integers(1, 3), levels=st.integers(3, 8),
       kind=st.sampled_from([KIND_OPT, KIND_POLICY]), nt=st.integers(0, 2), msl=st.integers(1, 3),
       m=st.integers(2, 3), depth=st.integers(3, 4))
def test_compiled_dp_equals_the_python_recursion_at_depths_three_and_four(seed, n, p, levels, kind, nt, msl, m,
                                                                           depth):
    """Deeper trees: the split loop, its pruning and the cache (below depth three only the direct solvers run)."""
    prob = problem(seed, n, p, levels, kind, nt, msl, 0.5, m)
    ref = solve_dp_prescriptive(prob, depth, 0.0, binarization="midpoints", _engine="python")[1]
    tree, res = solve_dp_prescriptive(prob, depth, 0.0, binarization="midpoints")
    assert res.objective == pytest.approx(ref.objective, abs=1e-9)
    assert tree_objective(tree, prob) == pytest.approx(res.objective, abs=1e-9)


@pytest.mark.parametrize("kind", [KIND_OPT, KIND_POLICY])
def test_leaf_cost_kernel_is_leaf_costs(kind):
    rng = np.random.default_rng(3)
    prob = problem(1, 40, 2, 4, kind, 2, 3, m=3)
    V = np.array([prob.Z[rng.random(40) < q].sum(axis=0) for q in rng.random(300) * 0.3])
    want = leaf_costs(prob, V)[0]
    ip = np.array([stats_kernels.KIND_OPT if kind == KIND_OPT else stats_kernels.KIND_POLICY, prob.m, prob.n_treatment,
                   prob.min_samples_leaf, 0], np.int64)
    fp = np.array([prob.a, prob.b, 0.0])
    got = np.array([stats_kernels.leaf_cost(v, ip, fp) for v in V])
    assert np.isinf(want).any() and np.isfinite(want).any()
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    np.testing.assert_allclose(got[np.isfinite(want)], want[np.isfinite(want)], rtol=1e-12, atol=1e-12)


def user_like(n, seed=0, kind=KIND_OPT):
    """Continuous columns as a user's table has them: rounded (ties), near-equal values, a constant column."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.round(rng.normal(size=n), 1),                       # many ties
                         rng.normal(size=n),                                     # distinct
                         np.round(rng.uniform(0, 1, n), 3) + rng.choice([0, 1e-12], n),   # near-equal pairs
                         rng.integers(0, 4, n).astype(float),
                         np.full(n, 2.5)])
    t = rng.integers(0, 3, n)
    y = X[:, 0] * (t == 1) - X[:, 1] * (t == 2) + (X[:, 3] > 1) * (t == 0) + rng.normal(0, 0.5, n)
    gamma = np.column_stack([y + rng.normal(0, 1, n) * (t != k) for k in range(3)]) if kind == KIND_POLICY else None
    return make_problem(prepare_prescriptive(X, t, y), kind, mu=0.5 if kind == KIND_OPT else 1.0,
                        n_treatment=5 if kind == KIND_OPT else 1, min_samples_leaf=10, gamma=gamma)


@pytest.mark.parametrize("kind,n,depth", [(KIND_OPT, 3000, 3), (KIND_POLICY, 2000, 3), (KIND_OPT, 5000, 2)])
def test_user_sized_table_gives_the_python_recursions_tree(kind, n, depth):
    prob = user_like(n, kind=kind)
    ref_tree, ref = solve_dp_prescriptive(prob, depth, 0.001, n_thresholds=8, _engine="python")
    tree, res = solve_dp_prescriptive(prob, depth, 0.001, n_thresholds=8)
    assert res.status == "optimal" and res.proven_optimal
    assert res.objective == pytest.approx(ref.objective, abs=1e-9)
    assert heap_of(tree) == heap_of(ref_tree)
    assert tree.depth == depth


def test_time_limit_returns_the_deepest_finished_depth():
    prob = user_like(5000, seed=1)
    tree, res = solve_dp_prescriptive(prob, 4, 0.0, binarization="midpoints", time_limit=1.0)
    assert res.status == "time_limit" and not res.proven_optimal
    assert np.isfinite(res.objective) and res.objective == pytest.approx(tree_objective(tree, prob), abs=1e-9)
    assert res.runtime < 15
    done = res.timings["incumbent_depth"]
    assert tree.depth <= done < 4
    if done >= 1:   # the incumbent is that depth's optimum
        assert res.objective == pytest.approx(
            solve_dp_prescriptive(prob, done, 0.0, binarization="midpoints")[1].objective, abs=1e-9)


def test_ctrl_c_stops_the_compiled_search_with_the_best_tree_so_far():
    prob = user_like(5000, seed=2, kind=KIND_POLICY)
    timer = threading.Timer(0.8, STOP.set)
    timer.start()
    try:
        tree, res = solve_dp_prescriptive(prob, 4, 0.0, binarization="midpoints")
    finally:
        timer.cancel()
        STOP.clear()
    assert res.status == "interrupted"
    assert res.objective == pytest.approx(tree_objective(tree, prob), abs=1e-9)
    assert res.runtime < 15
