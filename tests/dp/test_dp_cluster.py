"""The continuous DP's root features in parts (``root_features``) and on a Dask cluster
(opttrees.dp.cluster.solve_dp_continuous_cluster): the best over a partition of the root features is the whole
search's optimum and tree; the cluster gives the same objective and tree as one process; bad input is named."""
import sys

import numpy as np
import pytest
from sklearn.datasets import make_classification

from opttrees.cluster import chunks
from opttrees.dp import RegressionTask
from opttrees.dp.continuous import solve_dp_continuous
from opttrees.errors import InputError


def _data(seed=0, n=300, p=6):
    X, y = make_classification(n_samples=n, n_features=p, n_informative=min(4, p - 1), n_redundant=1 if p > 4 else 0, n_classes=3,
                               random_state=seed)
    return np.round(X, 1), y          # one decimal: many tied values per feature


def _best_of_parts(X, y, groups, **kw):
    parts = [solve_dp_continuous(X, y, root_features=g, **kw) for g in groups]
    k = min(range(len(parts)), key=lambda i: (parts[i][1].objective, i))
    return parts, parts[k]


@pytest.mark.parametrize("depth", [2, 3])
@pytest.mark.parametrize("seed", [0, 3])
def test_the_best_over_a_partition_of_root_features_is_the_optimum_and_its_tree(depth, seed):
    X, y = _data(seed)
    full_tree, full = solve_dp_continuous(X, y, max_depth=depth)
    assert full.status == "optimal"
    for k in (2, 3, 6):
        parts, (tree, res) = _best_of_parts(X, y, chunks(list(range(X.shape[1])), k), max_depth=depth)
        assert res.objective == pytest.approx(full.objective, abs=1e-12)
        assert tree.to_dict() == full_tree.to_dict()
        for _, r in parts:     # each part proves its own part: its bound is its objective, never below the optimum
            assert r.status == "optimal" and r.bound == pytest.approx(r.objective)
            assert r.objective >= full.objective - 1e-12
        assert min(r.bound for _, r in parts) == pytest.approx(full.bound)


def test_a_part_searches_only_its_root_features():
    X, y = _data(1, n=250, p=4)
    X = np.column_stack([np.full(len(y), 2.0), X])     # feature 0 is constant: no root split on it
    _, full = solve_dp_continuous(X, y, max_depth=2)
    t_const, r_const = solve_dp_continuous(X, y, max_depth=2, root_features=[0])
    t_rest, r_rest = solve_dp_continuous(X, y, max_depth=2, root_features=[1, 2, 3, 4])
    assert r_rest.objective == pytest.approx(full.objective)
    # only the starts (CART's tree, the best stump) remain for the constant feature: strictly worse here
    assert r_const.objective > full.objective + 1e-9
    assert r_const.status == "optimal"      # optimal for its part: no tree rooted on feature 0 beats the starts
    # the order and repeats of the indices do not matter
    t_again, r_again = solve_dp_continuous(X, y, max_depth=2, root_features=[4, 2, 3, 1, 2])
    assert t_again.to_dict() == t_rest.to_dict()


def test_min_leaf_and_regression_parts_agree_with_the_whole():
    X, y = _data(2, n=200, p=5)
    for kw in ({"max_depth": 3, "min_samples_leaf": 5}, {"max_depth": 2, "task": RegressionTask()}):
        yy = X[:, 0] * 2 + np.round(X[:, 1], 0) if "task" in kw else y
        full_tree, full = solve_dp_continuous(X, yy, **kw)
        _, (tree, res) = _best_of_parts(X, yy, [[0, 1], [2], [3, 4]], **kw)
        assert res.objective == pytest.approx(full.objective, abs=1e-12)


@pytest.mark.parametrize("bad, words", [([], "root_features is empty"), ([0, 6], "6 is not a feature index"),
                                        ([-1], "-1 is not a feature index"), ([1.5], "1.5 is not a feature"),
                                        ("01", "list of feature indices"), (3, "list of feature indices"),
                                        ([True], "True is not a feature index")])
def test_bad_root_features_are_named(bad, words):
    X, y = _data(0, n=60)
    with pytest.raises(InputError, match=words):
        solve_dp_continuous(X, y, max_depth=2, root_features=bad)


def test_cluster_refuses_what_is_not_a_client():
    from opttrees.dp.cluster import solve_dp_continuous_cluster
    X, y = _data(0, n=60)
    with pytest.raises(InputError, match="client must be a dask.distributed.Client.*got str"):
        solve_dp_continuous_cluster("tcp://localhost:8786", X, y, max_depth=2)


def test_missing_dask_names_the_extra(monkeypatch):
    from opttrees.dp.cluster import solve_dp_continuous_cluster
    monkeypatch.setitem(sys.modules, "distributed", None)      # import distributed -> ImportError
    X, y = _data(0, n=60)
    with pytest.raises(InputError, match=r"needs Dask distributed: pip install 'opttrees\[dask\]'"):
        solve_dp_continuous_cluster(object(), X, y, max_depth=2)


@pytest.mark.slow
@pytest.mark.parametrize("depth, kw", [(2, {}), (3, {}), (3, {"min_samples_leaf": 4}), (2, {"alpha": 0.01})])
def test_cluster_gives_the_one_process_objective_and_tree(client, depth, kw):
    from opttrees.dp.cluster import solve_dp_continuous_cluster
    X, y = _data(4)
    tree1, r1 = solve_dp_continuous(X, y, max_depth=depth, **kw)
    for parts in (None, 1, 6):
        tree, res = solve_dp_continuous_cluster(client, X, y, max_depth=depth, parts=parts, time_limit=120, **kw)
        assert res.objective == pytest.approx(r1.objective, abs=1e-12)
        assert tree.to_dict() == tree1.to_dict()
        assert res.status == "optimal" and res.bound == pytest.approx(res.objective)
        assert res.timings["workers"] == 2 and res.timings["parts"] == (parts or 4)
        assert res.timings["parts_run"] == res.timings["parts"]
        assert res.plan["route"] == "dask"
        # the returned tree is the data's: re-scored, the reported objective
        baseline = len(y) - np.bincount(y).max()      # L-hat: the root leaf's errors
        assert res.objective == pytest.approx(np.sum(tree.predict(X) != y) / baseline
                                              + kw.get("alpha", 0.0) * tree.n_splits, rel=1e-9)


@pytest.mark.slow
def test_cluster_time_limit_is_honest(client):
    from opttrees.dp.cluster import solve_dp_continuous_cluster
    X, y = make_classification(n_samples=4000, n_features=8, n_informative=5, n_classes=3, random_state=0)
    tree, res = solve_dp_continuous_cluster(client, X, y, max_depth=4, time_limit=1.0)
    assert res.status == "time_limit" and not res.proven_optimal
    assert 0.0 <= res.bound <= res.objective
    assert res.objective <= 1.0 and tree.n_splits >= 1          # at least CART's tree comes back


@pytest.mark.slow
def test_cluster_bad_parts_and_threads(client):
    from opttrees.dp.cluster import solve_dp_continuous_cluster
    X, y = _data(0, n=60)
    with pytest.raises(InputError, match="parts must be a positive integer"):
        solve_dp_continuous_cluster(client, X, y, max_depth=2, parts=0)
    with pytest.raises(InputError, match="threads must be an integer >= 1"):
        solve_dp_continuous_cluster(client, X, y, max_depth=2, threads=0)


@pytest.mark.slow
def test_cluster_ctrl_c_returns_the_best_so_far(client):
    import threading

    from opttrees.dp.cluster import solve_dp_continuous_cluster
    from opttrees.interrupt import STOP
    X, y = make_classification(n_samples=3000, n_features=8, n_informative=5, n_classes=3, random_state=1)
    timer = threading.Timer(0.5, STOP.set)           # what the first Ctrl-C does inside stop_on_sigint
    timer.start()
    try:
        tree, res = solve_dp_continuous_cluster(client, X, y, max_depth=4, time_limit=5.0)
    finally:
        timer.cancel()
    assert res.status == "interrupted" and not res.proven_optimal
    assert 0.0 <= res.bound <= res.objective and tree.n_splits >= 1
