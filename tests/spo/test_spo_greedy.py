import numpy as np
import pytest
from sklearn.base import clone

from opttrees.errors import InputError
from opttrees.estimators.spo import SPOForest, SPOTree
from opttrees.experiments.spo_data import illustrative_boundary, illustrative_example, shortest_path_data
from opttrees.oracles import GridShortestPath, NewsRecommendation
from opttrees.spo import (decision_regret, grow_spo_tree, normalized_extra_cost, node_loss_on,
                          prune_on_validation, pruning_path)
from opttrees.tree import Tree
from oracles.spo import brute_depth1


@pytest.fixture(scope="module")
def illus():
    return illustrative_example(10000, seed=0)


def test_illustrative_spot_splits_at_boundary_with_zero_loss(illus):
    X, C, pr = illus
    b = illustrative_boundary()
    assert abs(b - 0.2846) < 1e-3
    t = grow_spo_tree(pr, X, C, max_depth=1, min_samples_leaf=20)          # paper's quantile step 0.01
    assert t.n_leaves == 2 and abs(t.threshold[0] - b) < 0.01
    assert normalized_extra_cost(pr, t.predict(X), C) < 1e-4
    exact = grow_spo_tree(pr, X, C, max_depth=1, min_samples_leaf=20, quantile_step=None)  # all thresholds
    assert abs(exact.threshold[0] - b) < 1e-3
    assert normalized_extra_cost(pr, exact.predict(X), C) == 0.0
    # the two leaves take different roads
    assert not np.array_equal(exact.extras["decision"][1], exact.extras["decision"][2])


def test_illustrative_cart_depth1_does_not(illus):
    X, C, pr = illus
    t = grow_spo_tree(pr, X, C, max_depth=1, min_samples_leaf=20, criterion="mse")
    assert abs(t.threshold[0] - 0.62) < 0.02            # paper: CART splits at x < 0.62
    # both leaves choose the same road (edge 2 predicted costlier in both): ~28% of x mis-decided
    assert np.array_equal(t.extras["decision"][1], t.extras["decision"][2])
    assert normalized_extra_cost(pr, t.predict(X), C) > 0.05
    mis = (decision_regret(pr, t.predict(X), C) > 0).mean()
    assert abs(mis - illustrative_boundary()) < 0.02


@pytest.mark.parametrize("seed", range(4))
def test_greedy_depth1_equals_brute_force(seed):
    D = shortest_path_data(40, deg=4, noise=0.25, p=3, n_test=0, grid=(3, 3), seed=seed)
    w = np.random.default_rng(seed).integers(1, 4, 40).astype(float)
    t = grow_spo_tree(D.problem, D.X, D.C, w, max_depth=1, min_samples_leaf=5, quantile_step=None)
    got = w @ decision_regret(D.problem, t.predict(D.X), D.C)
    assert got == pytest.approx(brute_depth1(D.problem, D.X, D.C, w, 5), rel=1e-9, abs=1e-9)
    # the stored per-node losses agree with routing the data
    leaves = t.leaves
    assert t.extras["train_spo"][leaves].sum() == pytest.approx(got, rel=1e-9, abs=1e-9)


def test_integer_weights_equal_duplicated_rows():
    D = shortest_path_data(60, deg=2, noise=0.25, seed=3, n_test=0)
    w = np.random.default_rng(0).integers(1, 4, 60)
    t1 = grow_spo_tree(D.problem, D.X, D.C, w.astype(float), max_depth=3, min_samples_leaf=10, quantile_step=None)
    rep = np.repeat(np.arange(60), w)
    t2 = grow_spo_tree(D.problem, D.X[rep], D.C[rep], max_depth=3, min_samples_leaf=10, quantile_step=None)
    assert np.array_equal(t1.feature, t2.feature) and np.allclose(t1.threshold, t2.threshold)
    assert np.allclose(t1.value, t2.value)


def test_min_leaf_and_depth_respected():
    D = shortest_path_data(300, deg=6, noise=0.25, seed=1, n_test=0)
    t = grow_spo_tree(D.problem, D.X, D.C, max_depth=None, min_samples_leaf=20)
    counts = np.bincount(t.apply(D.X), minlength=t.n_nodes)[t.leaves]
    assert counts.min() >= 20 and t.depth >= 3
    assert grow_spo_tree(D.problem, D.X, D.C, max_depth=2).depth <= 2


def test_pruning_picks_best_validation_subtree():
    D = shortest_path_data(400, deg=6, noise=0.25, seed=2, n_test=300)
    pr = D.problem
    t = grow_spo_tree(pr, D.X, D.C, min_samples_leaf=10)
    path = pruning_path(t)
    assert path[-1][1][0]                     # ends at the root-only tree
    alphas = [a for a, _ in path]
    assert alphas == sorted(alphas)
    pt = prune_on_validation(t, pr, D.X_test, D.C_test)
    def val(tree):
        return decision_regret(pr, tree.predict(D.X_test), D.C_test).sum()
    assert pt.n_leaves <= t.n_leaves
    assert val(pt) <= val(t) + 1e-9
    root = node_loss_on(t, pr, D.X_test, D.C_test, np.ones(300))[0]
    assert val(pt) <= root + 1e-9


def test_estimator_api_and_forest():
    D = shortest_path_data(200, deg=10, noise=0.25, seed=0, n_test=300)
    pr = D.problem
    est = SPOTree(decision_problem=pr, max_depth=3, min_samples_leaf=20, validation_fraction=0.2, random_state=0)
    est.fit(D.X, D.C)
    assert clone(est).get_params()["max_depth"] == 3
    W = est.predict(D.X_test)
    assert W.shape == (300, 24) and est.predict_cost(D.X_test).shape == (300, 24)
    s = est.score(D.X_test, D.C_test)
    assert -1 < s <= 0
    cart = SPOTree(decision_problem=pr, max_depth=3, criterion="mse").fit(D.X, D.C)
    assert isinstance(cart.tree_, Tree) and cart.tree_.task == "spo"
    tree2 = Tree.from_json(est.tree_.to_json())
    assert np.array_equal(tree2.predict(D.X_test), W)
    f1 = SPOForest(decision_problem=pr, n_estimators=8, max_features=3, n_jobs=1, random_state=1).fit(D.X, D.C)
    f2 = SPOForest(decision_problem=pr, n_estimators=8, max_features=3, n_jobs=2, random_state=1).fit(D.X, D.C)
    assert np.allclose(f1.predict_cost(D.X_test), f2.predict_cost(D.X_test))
    Wf = f1.predict(D.X_test)
    assert np.allclose(pr.solve(f1.predict_cost(D.X_test))[0], Wf)
    assert -1 < f1.score(D.X_test, D.C_test) <= 0


def test_news_maximisation_tree():
    nw = NewsRecommendation.random(seed=11)
    rng = np.random.default_rng(0)
    X = rng.random((400, 2))
    P = np.clip(0.05 + 0.1 * np.column_stack([X[:, 0], 1 - X[:, 0], X[:, 1], 1 - X[:, 1], X.mean(1), 0.5 + 0 * X[:, 0]])
                + 0.01 * rng.random((400, 6)), 0, 1)
    est = SPOTree(decision_problem=nw, max_depth=2, min_samples_leaf=30).fit(X, P, sample_weight=rng.integers(1, 5, 400))
    reg = decision_regret(nw, est.predict(X), P)
    root = decision_regret(nw, np.repeat(nw.solve(P.mean(0, keepdims=True))[0], 400, 0), P)
    assert (reg >= -1e-12).all() and reg.sum() <= root.sum() + 1e-12
    assert -1 < est.score(X, P) <= 0


def test_bad_inputs():
    pr = GridShortestPath(4, 4)
    X = np.random.default_rng(0).random((50, 3))
    with pytest.raises(InputError, match="shape"):
        SPOTree(decision_problem=pr).fit(X, np.ones((50, 5)))
    with pytest.raises(InputError, match="rows"):
        SPOTree(decision_problem=pr).fit(X, np.ones((49, 24)))
    with pytest.raises(InputError, match="decision_problem"):
        SPOTree().fit(X, np.ones((50, 24)))
    with pytest.raises(InputError, match="method"):
        SPOTree(decision_problem=pr, method="exact").fit(X, np.ones((50, 24)))
    with pytest.raises(InputError, match="not fitted"):
        SPOTree(decision_problem=pr).predict(X)
    with pytest.raises(InputError, match="NaN"):
        SPOTree(decision_problem=pr).fit(np.full((50, 3), np.nan), np.ones((50, 24)))


def test_decision_problem_from_spec_dicts():
    from opttrees.oracles import make_decision_problem
    assert make_decision_problem("shortest_path").n_decisions == 24
    assert make_decision_problem({"type": "shortest_path", "rows": 2, "cols": 3}).n_decisions == 7
    nw = make_decision_problem({"type": "news", "seed": 10})
    assert nw.sense == "max" and nw.n_decisions == 6
    with pytest.raises(InputError, match="unknown decision problem"):
        make_decision_problem({"type": "tsp"})
    with pytest.raises(InputError, match="rowz"):
        make_decision_problem({"type": "shortest_path", "rowz": 3})
    D = shortest_path_data(100, deg=2, seed=0, n_test=10)
    est = SPOTree(decision_problem={"type": "shortest_path"}, max_depth=2).fit(D.X, D.C)
    assert est.predict(D.X_test).shape == (10, 24) and clone(est).decision_problem == {"type": "shortest_path"}


def test_forest_with_generic_pyomo_oracle_in_workers():
    from opttrees.oracles import grid_lp_problem
    D = shortest_path_data(80, deg=4, noise=0.25, p=3, grid=(2, 3), seed=4, n_test=30)
    lp = grid_lp_problem(2, 3)
    lp.solve(D.C[:2])                                   # instantiate the HiGHS handle before pickling
    f_lp = SPOForest(decision_problem=lp, n_estimators=4, min_samples_leaf=10, max_features=2, n_jobs=2, random_state=3).fit(D.X, D.C)
    f_dp = SPOForest(decision_problem=D.problem, n_estimators=4, min_samples_leaf=10, max_features=2, n_jobs=1,
                     random_state=3).fit(D.X, D.C)
    assert np.allclose(f_lp.predict_cost(D.X_test), f_dp.predict_cost(D.X_test))


@pytest.mark.slow
def test_paper_check_spot_beats_cart_on_shortest_path():
    """Figure 3 direction at reduced scale: SPOT's test regret is below CART's on average (deg 10)."""
    imp = []
    for seed in range(4):
        D = shortest_path_data(200, deg=10, noise=0.25, seed=seed, n_test=1000)
        Xv, Cv, X, C = D.X[:40], D.C[:40], D.X[40:], D.C[40:]
        s = SPOTree(decision_problem=D.problem, max_depth=2).fit(X, C, X_val=Xv, C_val=Cv).score(D.X_test, D.C_test)
        c = SPOTree(decision_problem=D.problem, max_depth=2, criterion="mse").fit(X, C, X_val=Xv, C_val=Cv).score(D.X_test, D.C_test)
        imp.append(1 - s / c)
    assert np.mean(imp) > 0.1


# ------------------------------------------------------------------------------------------ input hardening
def test_unfitted_forest_and_tree_raise_sklearn_not_fitted_error():
    from sklearn.exceptions import NotFittedError
    pr = GridShortestPath(2, 2)
    X = np.zeros((3, 2))
    for est in (SPOForest(decision_problem=pr), SPOTree(decision_problem=pr)):
        with pytest.raises(NotFittedError):
            est.predict(X)
        with pytest.raises(InputError, match="not fitted"):     # still an opttrees InputError too
            est.predict_cost(X)


def test_forest_max_features_values():
    D = shortest_path_data(60, deg=2, noise=0.2, p=4, grid=(2, 2), n_test=0, seed=0)
    for bad in ("auto", 0, 5, 0.0, 1.5, True, [2]):
        with pytest.raises(InputError, match="max_features.*sqrt.*log2"):
            SPOForest(decision_problem=D.problem, n_estimators=2, max_features=bad).fit(D.X, D.C)
    for good in (None, 1, 4, 0.5, 1.0, "sqrt", "log2"):
        f = SPOForest(decision_problem=D.problem, n_estimators=2, max_features=good, min_samples_leaf=10).fit(D.X, D.C)
        assert f.predict(D.X[:3]).shape == (3, D.problem.n_decisions)


def test_training_loss_validates_weights_and_lengths():
    D = shortest_path_data(40, deg=2, noise=0.2, p=2, grid=(2, 2), n_test=0, seed=1)
    t = SPOTree(decision_problem=D.problem, max_depth=1, min_samples_leaf=5).fit(D.X, D.C)
    w = np.ones(40)
    assert t.training_loss(D.X, D.C, w) == pytest.approx(t.training_loss(D.X, D.C))
    with pytest.raises(InputError, match="non-negative"):
        t.training_loss(D.X, D.C, -w)
    with pytest.raises(InputError, match="shape"):
        t.training_loss(D.X, D.C, w[:-1])
    with pytest.raises(InputError, match="rows"):
        t.training_loss(D.X[:-1], D.C)
    with pytest.raises(InputError, match="sums to zero"):
        t.training_loss(D.X, D.C, 0 * w)
