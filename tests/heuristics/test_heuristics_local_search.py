"""Local search, greedy and objectives: brute force on tiny instances, strict descent, reproducibility."""
import numpy as np
import pytest
from hypothesis import example, HealthCheck, given, settings
from hypothesis import strategies as st

from opttrees import objectives as obj
from opttrees.data.prepared import prepare
from opttrees.errors import InputError
from opttrees.heuristics import greedy_tree, improve_tree, local_search
from opttrees.heuristics.core import make_problem, objective
from opttrees.heuristics.pruning import node_membership
from oracles.parallel_trees import best_subtree as _best, brute_force, leaf_loss as _leaf_loss


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("depth", [1, 2])
def test_local_search_reaches_brute_force_classification(seed, depth):
    rng = np.random.default_rng(seed)
    n, p = 24, 3
    X = np.round(rng.random((n, p)), 2)
    y = rng.integers(0, 3 if seed % 2 else 2, n)
    alpha = [0.0, 0.05, 0.2][seed % 3]
    nmin = 1 + seed % 3
    d = prepare(X, y, min_samples_leaf=nmin)
    want = brute_force(d, depth, alpha, nmin, "misclassification")
    res = local_search(d, depth, alpha, nmin, n_restarts=60, random_state=seed, return_all=True)
    assert res.objective == pytest.approx(want, abs=1e-9)
    assert objective(res.tree, make_problem(d), alpha) == pytest.approx(want, abs=1e-9)
    assert obj.min_leaf_ok(res.tree, X, nmin)
    assert res.tree.depth <= depth


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("loss", ["squared", "absolute"])
def test_local_search_reaches_brute_force_regression(seed, loss):
    rng = np.random.default_rng(100 + seed)
    n, p = 20, 2
    X = np.round(rng.random((n, p)), 2)
    y = np.sin(4 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.standard_normal(n)
    if seed == 3:  # ties in y and in the weights: medians are order statistics, ties are their edge case
        y = np.round(y, 1)
    alpha = [0.0, 0.02][seed % 2]
    nmin = 1 + seed % 3
    w = None if seed < 2 else rng.integers(1, 4, n).astype(float)
    d = prepare(X, y, task="regression", sample_weight=w, min_samples_leaf=nmin)
    want = brute_force(d, 2, alpha, nmin, loss)
    res = local_search(d, 2, alpha, nmin, n_restarts=60, random_state=seed, return_all=True, loss=loss)
    assert res.objective == pytest.approx(want, rel=1e-9, abs=1e-12)
    assert obj.tree_objective(res.tree, X, y, loss, alpha, sample_weight=w) == pytest.approx(want, rel=1e-9)
    assert obj.min_leaf_ok(res.tree, X, nmin)


@pytest.mark.parametrize("seed", range(5))
def test_greedy_absolute_splits_are_the_best_splits(seed):
    """Greedy with absolute loss: each split is the brute-force best single split of its node's rows,
    and the leaves predict the weighted median (what an absolute-loss optimiser chooses)."""
    rng = np.random.default_rng(200 + seed)
    n = 40
    X = np.round(rng.random((n, 3)), 2)
    y = np.round(np.where(X[:, 0] < 0.4, 1.0, 3.0) + X[:, 2] + rng.standard_t(2, n), 1 + seed % 2)
    w = rng.integers(1, 3, n).astype(float) if seed % 2 else np.ones(n)
    nmin = 1 + seed % 2
    d = prepare(X, y, task="regression", sample_weight=w, min_samples_leaf=nmin)
    tree = greedy_tree(d, 3, nmin, loss="absolute")
    M = node_membership(tree, X)
    assert tree.n_splits >= 3
    for t in range(tree.n_nodes):
        rows = np.nonzero(M[:, t])[0]
        if tree.children_left[t] == -1:
            assert tree.value[t, 0] == obj.weighted_median(y[rows], w[rows])
            continue
        depth1 = _best(X, y, w, rows, 1, "absolute", None, 0.0, nmin)
        left = rows[X[rows, tree.feature[t]] < tree.threshold[t]]
        right = np.setdiff1d(rows, left)
        got = _leaf_loss(y[left], w[left], "absolute", None) + _leaf_loss(y[right], w[right], "absolute", None)
        assert got == pytest.approx(depth1, rel=1e-12, abs=1e-12)
    assert objective(tree, make_problem(d, "absolute"), 0.0) == pytest.approx(
        obj.tree_objective(tree, X, y, "absolute", sample_weight=w))


def test_sample_weights_match_duplicated_rows():
    rng = np.random.default_rng(5)
    X = np.round(rng.random((20, 2)), 2)
    y = rng.integers(0, 2, 20)
    w = rng.integers(1, 3, 20).astype(float)
    dw = prepare(X, y, sample_weight=w)
    dd = prepare(np.repeat(X, w.astype(int), axis=0), np.repeat(y, w.astype(int)))
    a = local_search(dw, 2, n_restarts=30, random_state=0, return_all=True).objective
    b = local_search(dd, 2, n_restarts=30, random_state=0, return_all=True).objective
    assert a == pytest.approx(b)
    assert a == pytest.approx(brute_force(dw, 2, 0.0, 1, "misclassification"))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), depth=st.integers(1, 4), alpha=st.sampled_from([0.0, 0.01, 0.1]),
       nmin=st.integers(1, 3), loss=st.sampled_from(["misclassification", "squared", "absolute"]),
       hyper=st.booleans())
@example(seed=3, depth=3, alpha=0.0, nmin=3, loss="misclassification", hyper=True)  # point on a hyperplane
@example(seed=11, depth=3, alpha=0.0, nmin=2, loss="absolute", hyper=True)
def test_every_accepted_move_strictly_decreases_objective(seed, depth, alpha, nmin, loss, hyper):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(15, 60))
    X = np.round(rng.random((n, 3)), 2)
    task = "classification" if loss == "misclassification" else "regression"
    y = rng.integers(0, 3, n) if task == "classification" else np.round(rng.standard_normal(n), 1)
    d = prepare(X, y, task=task, min_samples_leaf=nmin)
    start = greedy_tree(d, depth, nmin, max_features=1, random_state=seed, loss=loss)
    st_ = "hyperplane" if hyper else "parallel"
    final, trace = improve_tree(d, start, depth, alpha, nmin, split_type=st_, random_state=seed, return_trace=True,
                                loss=loss)
    prob = make_problem(d, loss)
    assert np.all(np.diff(trace) < 0)
    assert len(trace) <= n + 1 or alpha > 0 or task == "regression"   # thesis: <= n moves at alpha = 0
    assert trace[0] == pytest.approx(objective(start, prob, alpha), abs=1e-9)
    assert trace[-1] == pytest.approx(objective(final, prob, alpha), abs=1e-9)
    # independent check: stop after k moves and recompute through the public Tree and objectives
    prev = objective(start, prob, alpha)
    for k in range(1, len(trace)):
        tk = improve_tree(d, start, depth, alpha, nmin, split_type=st_, random_state=seed, max_moves=k, loss=loss)
        cur = objective(tk, prob, alpha)
        assert cur < prev - 1e-12
        assert obj.min_leaf_ok(tk, X, nmin)
        assert tk.depth <= depth
        prev = cur


def test_reproducible_and_independent_of_n_jobs():
    rng = np.random.default_rng(3)
    X = rng.random((200, 5))
    y = (X[:, 0] + X[:, 1] > 1).astype(int) ^ (rng.random(200) < 0.1)
    d = prepare(X, y)
    a = local_search(d, 3, 0.01, n_restarts=20, random_state=7)
    b = local_search(d, 3, 0.01, n_restarts=20, random_state=7)
    c = local_search(d, 3, 0.01, n_restarts=20, random_state=7, n_jobs=2)
    assert a.to_json() == b.to_json() == c.to_json()
    h1 = local_search(d, 2, n_restarts=5, split_type="hyperplane", random_state=1)
    h2 = local_search(d, 2, n_restarts=5, split_type="hyperplane", random_state=1, n_jobs=2)
    assert h1.to_json() == h2.to_json()
    r = prepare(X, X[:, 0] + rng.standard_t(2, 200), task="regression")
    a1 = local_search(r, 3, n_restarts=10, random_state=2, loss="absolute")
    a2 = local_search(r, 3, n_restarts=10, random_state=2, loss="absolute", n_jobs=2)
    assert a1.to_json() == a2.to_json()


def test_hyperplane_finds_oblique_boundary_and_routes_in_original_units():
    rng = np.random.default_rng(0)
    X = rng.random((300, 2)) * [10.0, 0.01] + [5.0, -3.0]     # very different scales
    y = ((X[:, 0] - 5) / 10 + (X[:, 1] + 3) / 0.01 < 1.0).astype(int)
    d = prepare(X, y)
    par = local_search(d, 1, n_restarts=5, random_state=0, return_all=True)
    hyp = local_search(d, 1, n_restarts=5, split_type="hyperplane", random_state=0, return_all=True)
    assert par.objective > 0.05
    assert (hyp.tree.predict(X) == y).all()            # routed with original-unit coefficients
    assert hyp.objective == pytest.approx(0.0)


def test_thresholds_are_midpoints_in_original_units():
    X = np.array([[1.0], [2.0], [4.0], [8.0]])
    y = np.array([0, 0, 1, 1])
    t = local_search(prepare(X, y), 1, n_restarts=3, random_state=0)
    assert t.feature[0] == 0 and t.threshold[0] == pytest.approx(3.0)
    assert t.value[t.leaves].sum() == 4 and set(t.label[t.leaves]) == {0, 1}


@pytest.mark.parametrize("name,errors", [("iris", 6), ("wine", 6), ("breast_cancer", 22)])
def test_thesis_depth2_training_optima(name, errors):
    from sklearn import datasets
    X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    t = local_search(prepare(X, y), 2, n_restarts=100, random_state=0, n_jobs=2)
    assert (t.predict(X) != y).sum() == errors


def test_greedy_gini_matches_cart_errors():
    from sklearn import datasets
    from sklearn.tree import DecisionTreeClassifier
    for name, want in [("wine", 14), ("breast_cancer", 33)]:
        X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
        g = greedy_tree(prepare(X, y), 2)
        cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
        assert (g.predict(X) != y).sum() == want == (cart.predict(X) != y).sum()


def test_bad_inputs_raise_clear_errors():
    X = np.random.default_rng(0).random((10, 2))
    y = np.arange(10) % 2
    d = prepare(X, y)
    with pytest.raises(InputError, match="max_depth"):
        local_search(d, -1)
    with pytest.raises(InputError, match="alpha"):
        local_search(d, 2, alpha=-0.1)
    with pytest.raises(InputError, match="split_type"):
        local_search(d, 2, split_type="oblique")
    with pytest.raises(InputError, match="n_restarts"):
        local_search(d, 2, n_restarts=0)
    with pytest.raises(InputError, match="'absolute' needs regression"):
        local_search(d, 2, loss="absolute")
    with pytest.raises(InputError, match="criterion 'squared' does not fit loss 'absolute'"):
        greedy_tree(prepare(X, X[:, 0], task="regression"), 2, criterion="squared", loss="absolute")
    with pytest.raises(InputError, match="unknown loss"):
        local_search(d, 2, loss="huber")


def test_hyperplane_squared_loss_search_terminates():
    """A hyperplane move counts only if the re-routed tree is strictly better: this case used to cycle forever
    between two trees (points on the plane routed differently than the descent assumed)."""
    from opttrees.interrupt import Budget

    rng = np.random.default_rng(1)
    X = rng.random((20, 2))
    y = np.where(X[:, 0] < 0.5, 1.0, 3.0) + np.where(X[:, 1] < 0.3, 0, 2) + rng.normal(0, 0.3, 20)
    d = prepare(X, y, task="regression")
    res = local_search(d, 2, 0.01, 1, 20, "hyperplane", 0, loss="squared", return_all=True, time_limit=Budget(60.0))
    assert not res.stopped and res.n_done == 20
    for tree, value in zip(res.trees, res.objectives):
        assert value == pytest.approx(objective(tree, make_problem(d, "squared"), 0.01), abs=1e-9)
