"""The STreeD engine (opttrees.dp): optimum == brute force / FlowOCT / pystreed; switches; anytime; bad input."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opttrees.dp import CostSensitiveTask, RegressionTask, solve_dp, solve_dp_binary
from opttrees.errors import InputError
from oracles.binary_trees import binary_brute_force as brute

SWITCHES = [{}, {"use_similarity_bound": False}, {"use_dataset_cache": False}, {"use_dataset_cache": False, "use_branch_cache": True},
            {"use_depth_two": False}, {"use_upper_bound": False}, {"use_lower_bound": False},
            {"iterative_deepening": False}, {"use_branch_cache": True}]


def instance(seed, n=14, p=4, K=2):
    rng = np.random.default_rng(seed)
    Z = rng.integers(0, 2, (n, p))
    y = ((Z[:, 0] ^ Z[:, 1]) | (rng.random(n) < 0.3)).astype(int) if K == 2 else rng.integers(0, K, n)
    return Z, y


def raw(res):
    return res.objective * res.dp_baseline


@pytest.mark.parametrize("switch", SWITCHES)
@pytest.mark.parametrize("seed,depth,nodes,minleaf,alpha", [
    (0, 0, None, 1, 0.0), (1, 1, None, 1, 0.0), (2, 2, None, 1, 0.0), (3, 3, None, 1, 0.0), (4, 3, 2, 1, 0.0),
    (5, 3, 4, 1, 0.0), (6, 2, None, 3, 0.0), (7, 3, None, 2, 0.05), (8, 2, None, 1, 0.2), (9, 3, 3, 2, 0.1)])
def test_classification_equals_brute_force(switch, seed, depth, nodes, minleaf, alpha):
    Z, y = instance(seed, K=2 + seed % 2)
    w = np.random.default_rng(seed).integers(1, 4, len(y)).astype(float) if seed % 3 == 0 else None
    tree, res = solve_dp_binary(Z, y, max_depth=depth, max_num_nodes=nodes, min_samples_leaf=minleaf, alpha=alpha,
                                sample_weight=w, **switch)
    base = res.dp_baseline
    ref = brute(Z, y, depth, nodes, alpha * base, minleaf, w)
    assert res.status == "optimal" and res.proven_optimal
    assert raw(res) == pytest.approx(ref, abs=1e-9)
    assert res.bound == pytest.approx(res.objective)
    assert tree.depth <= depth
    if nodes is not None:
        assert tree.n_splits <= nodes
    # the tree predicts the binary matrix and its leaves respect min_samples_leaf
    leaves = tree.apply(Z.astype(float))
    assert np.bincount(leaves)[tree.leaves].min(initial=10 ** 9) >= minleaf


@pytest.mark.parametrize("switch", [{}, {"use_depth_two": False}, {"use_dataset_cache": False}])
@pytest.mark.parametrize("seed,depth,nodes,minleaf,alpha", [(0, 2, None, 1, 0.0), (1, 3, None, 2, 0.0),
                                                            (2, 3, 2, 1, 0.01), (3, 1, None, 1, 0.0)])
def test_regression_equals_brute_force(switch, seed, depth, nodes, minleaf, alpha):
    rng = np.random.default_rng(seed)
    Z = rng.integers(0, 2, (13, 4))
    y = 3 * Z[:, 0] - 2 * Z[:, 1] * Z[:, 2] + rng.normal(0, 0.3, 13)
    w = rng.random(13) + 0.5 if seed % 2 else None
    tree, res = solve_dp_binary(Z, y, task=RegressionTask(), max_depth=depth, max_num_nodes=nodes,
                                min_samples_leaf=minleaf, alpha=alpha, sample_weight=w, **switch)
    ref = brute(Z, y, depth, nodes, alpha * res.dp_baseline, minleaf, w, kind="sq")
    assert raw(res) == pytest.approx(ref, rel=1e-9, abs=1e-9)
    assert res.proven_optimal
    assert np.allclose(tree.predict(Z.astype(float)), tree.value[tree.apply(Z.astype(float)), 0])


@pytest.mark.parametrize("switch", [{}, {"use_depth_two": False}, {"use_branch_cache": True}])
@pytest.mark.parametrize("seed,depth", [(0, 2), (1, 3), (2, 2)])
def test_cost_sensitive_equals_brute_force(switch, seed, depth):
    Z, y = instance(seed, K=3)
    rng = np.random.default_rng(seed)
    M = rng.integers(0, 5, (3, 3)).astype(float)
    np.fill_diagonal(M, 0)
    blocks = np.array([0, 0, 1, 2])
    fc = np.array([0.3, 0.3, 0.1, 0.5])
    task = CostSensitiveTask(M, feature_costs=[0.3, 0.1, 0.5])
    tree, res = solve_dp_binary(Z, y, task=task, max_depth=depth, feature_costs_columns=blocks, **switch)
    ref = brute(Z, y, depth, kind="cost", M=M, fcost=(fc, blocks))
    assert raw(res) == pytest.approx(ref, abs=1e-9)
    # without feature costs: the cost matrix alone
    tree, res = solve_dp_binary(Z, y, task=CostSensitiveTask(M), max_depth=depth, **switch)
    assert raw(res) == pytest.approx(brute(Z, y, depth, kind="cost", M=M), abs=1e-9)


def test_feature_cost_group_discount():
    """Two features in one group: the second costs the discount after the first was tested."""
    rng = np.random.default_rng(0)
    Z = rng.integers(0, 2, (40, 2))
    y = Z[:, 0] ^ Z[:, 1]                                 # needs both features
    M = np.array([[0.0, 1.0], [1.0, 0.0]])
    full = CostSensitiveTask(M, feature_costs=[0.01, 0.01])
    grouped = CostSensitiveTask(M, feature_costs=[0.01, 0.01], discount_costs=[0.0, 0.0], groups=["g", "g"])
    _, r_full = solve_dp_binary(Z, y, task=full, max_depth=2)
    _, r_grp = solve_dp_binary(Z, y, task=grouped, max_depth=2)
    # full: root test 0.01 * 40 + two child tests 0.01 * (their weight) = 0.8; grouped: only the root test
    assert raw(r_full) == pytest.approx(0.8)
    assert raw(r_grp) == pytest.approx(0.4)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), depth=st.integers(0, 3), nodes=st.one_of(st.none(), st.integers(0, 7)),
       minleaf=st.integers(1, 3), alpha=st.sampled_from([0.0, 0.03, 0.3]))
def test_property_dp_equals_brute_force(seed, depth, nodes, minleaf, alpha):
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(4, 12)), int(rng.integers(1, 4))
    Z = rng.integers(0, 2, (n, p))
    y = rng.integers(0, int(rng.integers(2, 4)), n)
    if n < minleaf:
        return
    tree, res = solve_dp_binary(Z, y, max_depth=depth, max_num_nodes=nodes, min_samples_leaf=minleaf, alpha=alpha)
    assert raw(res) == pytest.approx(brute(Z, y, depth, nodes, alpha * res.dp_baseline, minleaf), abs=1e-9)
    # the tree's own objective, recomputed by routing, is the reported one
    from opttrees.objectives import tree_objective
    assert tree_objective(tree, Z.astype(float), y, "misclassification", alpha=alpha,
                          n_classes=int(y.max()) + 1) == pytest.approx(res.objective, abs=1e-9)


@pytest.mark.parametrize("seed,depth", [(0, 1), (1, 2), (2, 3), (3, 2)])
def test_all_midpoints_equals_oct_brute_force(seed, depth):
    """With every midpoint, the DP optimum is the optimum over all axis-parallel trees (tests/oracles/bruteforce.py)."""
    from oracles.bruteforce import brute_force_objective
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(12, 2)).round(1)
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int) ^ (rng.random(12) < 0.2)
    alpha = 0.05 if seed == 3 else 0.0
    tree, res = solve_dp(X, y, max_depth=depth, binarization="midpoints", alpha=alpha)
    assert res.objective == pytest.approx(brute_force_objective(X, y, depth, alpha=alpha), abs=1e-9)
    assert (tree.predict(X) == y).mean() >= 0.5


@pytest.mark.parametrize("seed,depth", [(0, 1), (1, 2), (2, 2)])
def test_equals_flowoct_highs(seed, depth):
    from opttrees.data.binarized import BinarizedData
    from opttrees.formulations.flow import FlowOCT
    from opttrees.solvers import solve
    rng = np.random.default_rng(seed)
    Z = rng.integers(0, 2, (20, 3))
    y = (Z[:, 0] ^ (rng.random(20) < 0.25)).astype(int)
    f = FlowOCT(BinarizedData.from_binary(Z, y, 2), depth, regularization=0.0)
    r = solve(f, solver="highs")
    assert r.proven_optimal
    _, res = solve_dp_binary(Z, y, max_depth=depth)
    assert len(y) - r.objective == pytest.approx(raw(res), abs=1e-6)


@pytest.mark.parametrize("depth", [2, 3])
def test_equals_pystreed(depth):
    pystreed = pytest.importorskip("pystreed")
    from sklearn.datasets import load_wine

    from opttrees.data.binarizers import Binarizer
    X, y = load_wine(return_X_y=True)
    Xb = Binarizer(n_thresholds=4).fit_transform(X).astype(int)
    ref = pystreed.STreeDClassifier(max_depth=depth, time_limit=60).fit(Xb, y)
    errors = int((ref.predict(Xb) != y).sum())
    tree, res = solve_dp_binary(Xb, y, max_depth=depth)
    assert raw(res) == pytest.approx(errors)
    assert int((tree.predict(Xb.astype(float)) != y).sum()) == errors
    ref = pystreed.STreeDClassifier(max_depth=depth, max_num_nodes=depth + 1, min_leaf_node_size=5,
                                    time_limit=60).fit(Xb, y)
    _, res = solve_dp_binary(Xb, y, max_depth=depth, max_num_nodes=depth + 1, min_samples_leaf=5)
    assert raw(res) == pytest.approx(int((ref.predict(Xb) != y).sum()))


def test_raw_features_round_trip_and_original_units():
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    tree, res = solve_dp(X, labels, max_depth=2, n_thresholds=5)
    assert res.proven_optimal
    assert set(tree.predict(X)) <= set(labels)
    assert (tree.predict(X) == labels).mean() == pytest.approx(1 - res.objective * res.dp_baseline / len(y))
    from opttrees.tree import Tree
    again = Tree.from_dict(tree.to_dict())
    assert np.array_equal(again.predict(X), tree.predict(X))


def test_time_limit_returns_tree_and_valid_bound():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 12))
    y = (X[:, 0] * X[:, 1] + X[:, 2] > 0).astype(int) ^ (rng.random(400) < 0.2)
    solve_dp(X[:50], y[:50], max_depth=4, n_thresholds=20, time_limit=0.01)   # numba compile/cache load
    tree, res = solve_dp(X, y, max_depth=4, n_thresholds=20, time_limit=0.5)
    assert res.status in ("time_limit", "optimal")
    assert res.bound <= res.objective + 1e-12
    assert res.runtime < 5
    if res.status == "time_limit":
        assert not res.proven_optimal
    # the bound is a valid lower bound: no better than the proven depth-4 optimum
    _, full = solve_dp(X[:120], y[:120], max_depth=2, n_thresholds=5)
    assert full.bound == pytest.approx(full.objective)


def test_bad_input_names_parameter():
    Z, y = instance(0)
    with pytest.raises(InputError, match="Xb"):
        solve_dp_binary(Z * 2.5, y)
    with pytest.raises(InputError, match="max_depth"):
        solve_dp_binary(Z, y, max_depth=99)
    with pytest.raises(InputError, match="max_depth"):
        solve_dp_binary(Z, y, max_depth=-1)
    with pytest.raises(InputError, match="cost_matrix"):
        solve_dp_binary(Z, y, task=CostSensitiveTask(np.ones((3, 3))))
    with pytest.raises(InputError, match="alpha"):
        solve_dp_binary(Z, y, alpha=-1)
    with pytest.raises(InputError, match="min_samples_leaf"):
        solve_dp_binary(Z, y, min_samples_leaf=0)
    with pytest.raises(InputError, match="task"):
        solve_dp_binary(Z, y, task="accuracy")
    with pytest.raises(InputError, match="use_depth_two"):
        solve_dp_binary(Z, y, use_depth_two="yes")
    with pytest.raises(InputError, match="unknown option"):
        solve_dp_binary(Z, y, use_magic=True)
    with pytest.raises(InputError, match="binarization"):
        solve_dp(Z.astype(float), y, binarization="kmeans")


def test_result_counters_and_switches_change_work():
    rng = np.random.default_rng(1)
    Z = rng.integers(0, 2, (60, 8))
    y = (Z[:, 0] ^ Z[:, 3] ^ (rng.random(60) < 0.1)).astype(int)
    _, a = solve_dp_binary(Z, y, max_depth=3)
    _, b = solve_dp_binary(Z, y, max_depth=3, use_depth_two=False)
    assert a.objective == pytest.approx(b.objective)
    assert a.timings["depth_two_calls"] > 0 and b.timings["depth_two_calls"] == 0
    assert b.timings["subproblems"] > a.timings["subproblems"]
    assert a.node_count == a.timings["subproblems"]


@pytest.mark.parametrize("depth", [3, 4])
def test_switch_combinations_agree_on_a_medium_instance(depth):
    """Every speed feature off, one at a time: the same optimum (bounds and caches only prune)."""
    rng = np.random.default_rng(5)
    Z = rng.integers(0, 2, (90, 9))
    y = (Z[:, 0] & Z[:, 4] | Z[:, 2] ^ (rng.random(90) < 0.15)).astype(int)
    w = rng.integers(1, 3, 90).astype(float)
    ref = None
    for sw in SWITCHES:
        if depth == 4 and sw.get("use_depth_two") is False:
            continue
        _, res = solve_dp_binary(Z, y, max_depth=depth, sample_weight=w, alpha=0.001, **sw)
        assert res.proven_optimal
        ref = res.objective if ref is None else ref
        assert res.objective == pytest.approx(ref, abs=1e-12), sw


@pytest.mark.parametrize("depth", [2, 3])
def test_regression_equals_pystreed(depth):
    pystreed = pytest.importorskip("pystreed")
    from sklearn.datasets import load_diabetes

    from opttrees.data.binarizers import Binarizer
    X, y = load_diabetes(return_X_y=True)
    Xb = Binarizer(n_thresholds=3).fit_transform(X).astype(int)
    ref = pystreed.STreeDRegressor(optimization_task="regression", max_depth=depth, time_limit=120).fit(Xb, y)
    sse_ref = float(np.sum((ref.predict(Xb) - y) ** 2))
    tree, res = solve_dp_binary(Xb, y, task=RegressionTask(), max_depth=depth)
    assert raw(res) == pytest.approx(sse_ref, rel=1e-6)


@pytest.mark.parametrize("depth", [2, 3])
def test_cost_matrix_equals_pystreed(depth):
    pystreed = pytest.importorskip("pystreed")
    from sklearn.datasets import load_wine

    from opttrees.data.binarizers import Binarizer
    X, y = load_wine(return_X_y=True)
    Xb = Binarizer(n_thresholds=3).fit_transform(X).astype(int)
    M = np.random.default_rng(0).integers(1, 10, (3, 3)).astype(float)
    np.fill_diagonal(M, 0)
    ref = pystreed.STreeDCostSensitiveClassifier(max_depth=depth, time_limit=60)
    # zero feature costs (an empty list crashes pystreed 1.4.0)
    specs = [pystreed.FeatureCostSpecifier(0.0, 0.0, f"c{c}", c, c) for c in range(Xb.shape[1])]
    ref.fit(Xb, y, pystreed.CostSpecifier(M.tolist(), specs))
    tree, res = solve_dp_binary(Xb, y, task=CostSensitiveTask(M), max_depth=depth)
    assert raw(res) == pytest.approx(M[y, ref.predict(Xb)].sum())
    assert M[y, tree.predict(Xb.astype(float))].sum() == pytest.approx(raw(res))


def test_stop_flag_returns_best_tree_as_interrupted():
    """The Ctrl-C flag (opttrees.interrupt.STOP) stops the search; the tree so far comes back, unproven."""
    from opttrees.interrupt import STOP
    rng = np.random.default_rng(2)
    Z = rng.integers(0, 2, (200, 30))
    y = (Z[:, 0] ^ Z[:, 1] ^ (rng.random(200) < 0.1)).astype(int)
    STOP.set()
    try:
        tree, res = solve_dp_binary(Z, y, max_depth=4)
    finally:
        STOP.clear()
    assert res.status == "interrupted" and not res.proven_optimal
    assert res.bound <= res.objective
    assert tree.predict(Z.astype(float)).shape == (200,)


@pytest.mark.parametrize("task", [None, "regression"])
def test_a_stop_reaches_the_depth_two_counts(task):
    """The depth-two pair counts cost (features present)^2 per row (minutes on a wide table) and poll the stop
    flag per row: a stopped depth-2 search comes back interrupted with a valid bound, not after the whole count
    (before the poll, depth 2 never saw the flag and came back "optimal")."""
    from opttrees.dp import RegressionTask
    from opttrees.interrupt import STOP
    rng = np.random.default_rng(5)
    Z = rng.integers(0, 2, (300, 40))
    y = (Z[:, 0] ^ Z[:, 1] ^ (rng.random(300) < 0.1)).astype(int)
    STOP.set()
    try:
        tree, res = solve_dp_binary(Z, y.astype(float) if task else y, max_depth=2,
                                    task=RegressionTask() if task else None)
    finally:
        STOP.clear()
    assert res.status == "interrupted" and not res.proven_optimal
    assert res.bound <= res.objective
    _, full = solve_dp_binary(Z, y.astype(float) if task else y, max_depth=2, task=RegressionTask() if task else None)
    assert full.proven_optimal and full.objective <= res.objective + 1e-12
