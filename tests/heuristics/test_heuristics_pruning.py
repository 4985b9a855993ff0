"""Pruning (Alg 2.4–2.6), tuning, estimators, and the MIO warm-start contract."""
import itertools

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from opttrees import objectives as obj
from opttrees.data.prepared import prepare
from opttrees.errors import InputError
from opttrees.estimators import OptimalTreeCV, OptimalTreeRegressor
from opttrees.heuristics import batch_tune_cp, collapse, greedy_tree, local_search, prune_path, prune_to_alpha, tune_cp
from opttrees.heuristics.core import make_problem, objective
from opttrees.tree import LEAF


def _all_prunings(tree):
    internal = [t for t in range(tree.n_nodes) if tree.children_left[t] != LEAF]
    for r in range(len(internal) + 1):
        for cut in itertools.combinations(internal, r):
            yield cut


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("loss", ["misclassification", "squared", "absolute"])
def test_prune_to_alpha_is_the_best_pruning(seed, loss):
    rng = np.random.default_rng(seed)
    X = rng.random((60, 3))
    task = "classification" if loss == "misclassification" else "regression"
    y = (rng.integers(0, 3, 60) if task == "classification" else X[:, 0] + 0.3 * rng.standard_normal(60))
    d = prepare(X, y, task=task)
    prob = make_problem(d, loss)
    full = greedy_tree(d, 3, loss=loss)
    path = prune_path(full, prob)
    assert path.alphas[0] == 0 and np.all(np.diff(path.alphas) >= 0)
    for alpha in [0.0, 0.005, 0.02, 0.05, 0.2, 1.0]:
        got = objective(prune_to_alpha(full, prob, alpha), prob, alpha)
        best = min(objective(collapse(full, cut, prob), prob, alpha) for cut in _all_prunings(full))
        assert got == pytest.approx(best, abs=1e-9)


def test_tune_cp_and_batch_agree_on_one_tree():
    rng = np.random.default_rng(1)
    X = rng.random((200, 4))
    y = ((X[:, 0] > 0.5) ^ (X[:, 1] > 0.3)).astype(int) ^ (rng.random(200) < 0.15)
    d = prepare(X[:120], y[:120])
    prob = make_problem(d)
    t = local_search(d, 4, n_restarts=10, random_state=0)
    a1, v1 = tune_cp(t, prob, X[120:], y[120:])
    a2, v2 = batch_tune_cp([t], prob, X[120:], y[120:])
    assert v1 == pytest.approx(v2)
    pruned = prune_to_alpha(t, prob, a1)
    assert np.mean(pruned.predict(X[120:]) != y[120:]) == pytest.approx(v1)


def test_regressor_is_sklearn_compatible():
    rng = np.random.default_rng(0)
    X = rng.random((120, 3))
    y = np.where(X[:, 0] < 0.5, 1.0, 3.0) + np.where(X[:, 1] < 0.3, 0.0, 2.0) + 0.05 * rng.standard_normal(120)
    est = OptimalTreeRegressor(max_depth=2, n_restarts=10, random_state=0)
    assert clone(est).get_params() == est.get_params()
    est.fit(X, y)
    assert est.score(X, y) > 0.98 and est.tree_.n_splits == 3
    assert est.objective_ == pytest.approx(obj.tree_objective(est.tree_, X, y, "squared"))
    g = GridSearchCV(OptimalTreeRegressor(n_restarts=5, random_state=0), {"max_depth": [1, 2]}, cv=3).fit(X, y)
    assert g.best_params_ == {"max_depth": 2}
    gr = OptimalTreeRegressor(max_depth=2, method="greedy").fit(X, y)
    assert gr.predict(X).shape == (120,)
    with pytest.raises(InputError, match="HiGHS cannot solve"):   # squared loss is quadratic ("auto" picks SCIP)
        OptimalTreeRegressor(method="mio", solver="highs").fit(X, y)
    with pytest.raises(InputError, match="features"):
        est.predict(X[:, :2])


def test_optimal_tree_cv_iris():
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    cv = OptimalTreeCV(max_depth=3, n_restarts=20, random_state=0).fit(X, y)
    assert cv.best_depth_ in (2, 3) and cv.best_alpha_ >= 0
    assert len(cv.tuning_table_) == 3
    assert cv.score(X, y) > 0.9
    assert cv.predict_proba(X).shape == (150, 3)


def test_optimal_tree_cv_greedy_is_cart_tuned_on_validation():
    """method="greedy" (spec type cart-cv): per depth one CART tree, alpha by Algorithm 2.5 on the validation split;
    the refit is CART on train + validation pruned at the chosen alpha."""
    from sklearn.datasets import load_wine
    from sklearn.model_selection import train_test_split
    X, y = load_wine(return_X_y=True)
    cv = OptimalTreeCV(max_depth=3, method="greedy", random_state=0).fit(X, y)
    assert [r["depth"] for r in cv.tuning_table_] == [1, 2, 3]
    best = min(cv.tuning_table_, key=lambda r: (r["val_error"], r["depth"]))
    assert (cv.best_depth_, cv.best_alpha_) == (best["depth"], best["alpha"])
    # the table's figures are Algorithm 2.5 on the same split
    from opttrees.heuristics.local_search import _seeds
    s_split, s_tune, _ = _seeds(0, 3)
    Xt, Xv, yt, yv = train_test_split(X, y, test_size=1 / 3, random_state=int(s_split), stratify=y)
    d = prepare(Xt, yt)
    for row in cv.tuning_table_:
        a, v = tune_cp(greedy_tree(d, row["depth"], random_state=int(s_tune)), make_problem(d), Xv, yv)
        assert (a, v) == pytest.approx((row["alpha"], row["val_error"]))
    assert cv.tree_.depth <= cv.best_depth_ and cv.score(X, y) > 0.85
    with pytest.raises(InputError, match="parallel"):
        OptimalTreeCV(max_depth=2, method="greedy", split_type="hyperplane").fit(X, y)


def test_local_search_tree_is_feasible_mio_warm_start_with_same_objective():
    """Contract with the OCT formulation (issue 2): the warm start is accepted and its objective matches."""
    oct_mod = pytest.importorskip("opttrees.formulations.oct")
    solvers = pytest.importorskip("opttrees.solvers")
    rng = np.random.default_rng(0)
    X = np.round(rng.random((30, 2)), 2)
    y = rng.integers(0, 2, 30)
    for alpha, nmin in [(0.0, 1), (0.05, 2)]:
        d = prepare(X, y, min_samples_leaf=nmin)
        res = local_search(d, 2, alpha, nmin, n_restarts=30, random_state=0, return_all=True)
        f = oct_mod.OCT(d, 2, nmin, alpha)
        r = solvers.solve(f, "highs", warm_start=res.tree, time_limit=60)
        assert r.trace[0].primal == pytest.approx(res.objective, abs=1e-6)
        assert r.objective == pytest.approx(res.objective, abs=1e-6)   # local search optimal here (brute force)


@pytest.mark.parametrize("kw, name", [
    ({"max_depth": 2.5}, "max_depth"), ({"max_depth": 3.0}, "max_depth"), ({"max_depth": -1}, "max_depth"),
    ({"max_depth": True}, "max_depth"), ({"max_depth": "3"}, "max_depth"), ({"max_depth": 99}, "max_depth"),
    ({"max_depth": 0}, "depths"), ({"depths": []}, "depths"), ({"depths": [1, 2.0]}, "depths"),
    ({"depths": [1, -2]}, "depths"), ({"depths": [99]}, "depths"), ({"depths": 3}, "depths"),
    ({"depths": [True]}, "depths")])
def test_optimal_tree_cv_validates_depths_before_tuning(kw, name, monkeypatch):
    """Bad max_depth / depths fail up front with an InputError naming the parameter, before any local search."""
    import opttrees.estimators.tuning as est_tuning

    def boom(*a, **k):
        raise AssertionError("tuning work started before the depth grid was validated")

    monkeypatch.setattr(est_tuning, "_tune", boom)
    monkeypatch.setattr(est_tuning, "local_search", boom)
    X = np.random.default_rng(0).random((40, 2))
    y = (X[:, 0] > 0.5).astype(int)
    with pytest.raises(InputError, match=name):
        OptimalTreeCV(n_restarts=2, **kw).fit(X, y)


def test_tune_validates_depths():
    from opttrees.heuristics import tune
    X = np.random.default_rng(0).random((40, 2))
    y = (X[:, 0] > 0.5).astype(int)
    d = prepare(X, y)
    for bad, name in [(2.0, "max_depth"), (-1, "max_depth")]:
        with pytest.raises(InputError, match=name):
            tune(d, X, y, max_depth=bad, n_restarts=2)
    with pytest.raises(InputError, match="depths"):
        tune(d, X, y, depths=[1, 1.5], n_restarts=2)


def test_optimal_tree_cv_validation_set_arguments():
    X = np.random.default_rng(0).random((40, 2))
    y = (X[:, 0] > 0.5).astype(int)
    cv = OptimalTreeCV(max_depth=1, n_restarts=2, random_state=0)
    with pytest.raises(InputError, match="y_val was given without X_val"):
        cv.fit(X, y, y_val=y[:10])
    with pytest.raises(InputError, match="X_val was given without y_val"):
        cv.fit(X, y, X_val=X[:10])
    with pytest.raises(InputError, match="different lengths"):
        cv.fit(X, y, X_val=X[:10], y_val=y[:9])
    cv.fit(X[:30], y[:30], X_val=X[30:], y_val=y[30:])   # both given, same length: fine
    assert cv.best_depth_ == 1


def test_absolute_loss_regressor_tuning_and_pruning():
    """Absolute loss end to end: median leaves that ignore outliers, MAE validation error, CV with the loss."""
    rng = np.random.default_rng(4)
    X = rng.random((150, 3))
    y = np.where(X[:, 0] < 0.5, 0.0, 4.0) + 0.1 * rng.standard_normal(150)
    y[:8] += 200.0  # gross outliers: pull means, not medians
    ab = OptimalTreeRegressor(max_depth=1, n_restarts=5, loss="absolute", random_state=0).fit(X, y)
    sq = OptimalTreeRegressor(max_depth=1, n_restarts=5, loss="squared", random_state=0).fit(X, y)
    assert ab.objective_ == pytest.approx(obj.tree_objective(ab.tree_, X, y, "absolute"))
    leaf = ab.tree_.apply(X)
    for t in ab.tree_.leaves:
        assert ab.tree_.value[t, 0] == obj.weighted_median(y[leaf == t])
    clean = np.where(X[:, 0] < 0.5, 0.0, 4.0)
    assert np.abs(ab.predict(X) - clean).max() < 0.5 < np.abs(sq.predict(X) - clean).max()
    d = prepare(X[:100], y[:100], task="regression")
    prob = make_problem(d, "absolute")
    t = local_search(d, 3, n_restarts=5, random_state=0, loss="absolute")
    a, v = tune_cp(t, prob, X[100:], y[100:])
    pruned = prune_to_alpha(t, prob, a)
    assert np.mean(np.abs(pruned.predict(X[100:]) - y[100:])) == pytest.approx(v)
    cv = OptimalTreeCV(task="regression", max_depth=2, n_restarts=5, loss="absolute", random_state=0).fit(X, y)
    assert cv.val_error_ == min(r["val_error"] for r in cv.tuning_table_)
    with pytest.raises(InputError, match="needs regression"):
        OptimalTreeCV(max_depth=2, n_restarts=2, loss="absolute").fit(X, (y > 2).astype(int))


def test_pruning_routes_like_predict_on_hyperplane_boundaries():
    """Node losses come from Tree.decision_path, the routing apply/predict use: a point lying on a hyperplane
    (up to round-off) is counted in the leaf it is predicted in (X @ a and a row-wise einsum can disagree)."""
    from opttrees.heuristics.pruning import node_membership
    from opttrees.tree import HYPERPLANE, Tree
    rng = np.random.default_rng(0)
    X = np.round(rng.random((200, 3)), 1)
    y = rng.integers(0, 2, 200)
    coef = np.zeros((3, 3))
    coef[0] = rng.uniform(-1, 1, 3)
    p1, p2 = X @ coef[0], np.einsum("ij,ij->i", X, np.tile(coef[0], (200, 1)))
    i = np.nonzero(p1 != p2)[0][0]      # two ways of computing a·x round differently on this row
    t = Tree([1, LEAF, LEAF], [2, LEAF, LEAF], [HYPERPLANE, LEAF, LEAF], [max(p1[i], p2[i]), 0, 0],
             np.zeros((3, 2)), label=[0, 0, 0], coef=coef)
    M = node_membership(t, X)
    assert np.array_equal(np.where(M[:, 1], 1, 2), t.apply(X))
    prob = make_problem(prepare(X, y))
    pruned = prune_to_alpha(t, prob, 0.0)
    assert objective(pruned, prob, 0.0) <= objective(collapse(t, [0], prob), prob, 0.0) + 1e-12
