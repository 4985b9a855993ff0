"""ORT-L lasso leaves and their local search (opttrees.heuristics.linear_leaves)."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import Lasso

from opttrees import objectives as obj
from opttrees.data.prepared import prepare
from opttrees.errors import InputError
from opttrees.heuristics.linear_leaves import (fit_leaf, glm_penalty, linear_leaf_tree, linear_local_search,
                                               linear_tree_objective, to_original_units, to_scaled_units)
from opttrees.tree import LEAF, Tree
from oracles.linear_leaves import lasso_depth1 as brute_force_depth1


def piecewise(n=300, seed=0, noise=0.05):
    """y = 1 + 2 x1 if x0 < 0.5 else -1 + 3 x2 (x0 in [-2, 3]); x3 is noise."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 3, (n, 4))
    y = np.where(X[:, 0] < 0.5, 1 + 2 * X[:, 1], -1 + 3 * X[:, 2]) + noise * rng.normal(size=n)
    return X, y


def fixed_tree():
    """x0 < 0.5 ? (x1 < 1 ? leaf : leaf) : leaf, original units."""
    return Tree([1, 3, LEAF, LEAF, LEAF], [2, 4, LEAF, LEAF, LEAF], [0, 1, LEAF, LEAF, LEAF],
                [0.5, 1.0, 0, 0, 0], np.zeros((5, 1)), task="regression", n_features=4)


def sklearn_leaf(data, rows, lam, base, weights=None):
    w = data.sample_weight[rows] if weights is None else weights
    glm = glm_penalty(lam, base, float(w.sum()))
    return Lasso(alpha=glm, fit_intercept=True, tol=1e-14, max_iter=1_000_000).fit(data.Xs[rows], data.y[rows],
                                                                                   sample_weight=w)


@pytest.mark.parametrize("lam", [0.001, 0.02, 0.3])
@pytest.mark.parametrize("weighted", [False, True])
def test_leaf_coefficients_equal_sklearn_lasso_at_the_mapped_penalty(lam, weighted):
    """The penalty applies to the coefficients of the min-max scaled features (data.Xs); the Tree holds the
    same affine functions in original units."""
    X, y = piecewise(200, seed=1, noise=0.3)
    w = np.random.default_rng(5).uniform(0.5, 2.0, len(y)) if weighted else None
    data = prepare(X, y, task="regression", sample_weight=w)
    base = obj.baseline(data.y, "squared", None, data.sample_weight)
    tree = linear_leaf_tree(fixed_tree(), data, lam)
    leaf_of = tree.apply(X)
    for t in tree.leaves:
        rows = np.nonzero(leaf_of == t)[0]
        sk = sklearn_leaf(data, rows, lam, base)
        b0, beta = to_scaled_units(data, tree.value[t])
        np.testing.assert_allclose(beta, sk.coef_, atol=1e-6)
        assert b0 == pytest.approx(sk.intercept_, abs=1e-6)
        # and the objective share is the lasso's optimum rescaled by 2 W_t / L̂
        f = fit_leaf(data, rows, lam, base)
        r = data.y[rows] - sk.predict(data.Xs[rows])
        W = data.sample_weight[rows].sum()
        glm = glm_penalty(lam, base, W)
        sk_obj = np.sum(data.sample_weight[rows] * r * r) / (2 * W) + glm * np.abs(sk.coef_).sum()
        assert f.objective == pytest.approx(sk_obj * 2 * W / base, rel=1e-8)
    # predict on raw X evaluates each leaf's model
    leaf = 3
    rows = leaf_of == leaf
    sk = sklearn_leaf(data, np.nonzero(rows)[0], lam, base)
    np.testing.assert_allclose(tree.predict(X[rows]), sk.predict(data.Xs[rows]), atol=1e-8)


def test_unit_maps_are_inverse_and_warm_starts_do_not_change_the_fit():
    X, y = piecewise(120, seed=2)
    data = prepare(X, y, task="regression")
    base = obj.baseline(data.y, "squared")
    rows = np.arange(0, 120, 2)
    cold = fit_leaf(data, rows, 0.01, base)
    warm = fit_leaf(data, rows, 0.01, base, warm=np.array([5.0, -3.0, 0.0, 2.0]))
    np.testing.assert_allclose(warm.coef, cold.coef, atol=1e-8)
    b0, beta = to_scaled_units(data, to_original_units(data, cold.intercept, cold.coef))
    assert b0 == pytest.approx(cold.intercept) and np.allclose(beta, cold.coef)


def test_objective_refit_equals_the_trees_own_leaf_models():
    X, y = piecewise(150, seed=3)
    data = prepare(X, y, task="regression")
    tree = linear_leaf_tree(fixed_tree(), data, 0.05)
    a = linear_tree_objective(fixed_tree(), data, alpha=0.01, leaf_penalty=0.05)
    b = linear_tree_objective(tree, data, alpha=0.01, leaf_penalty=0.05, refit=False)
    assert a == pytest.approx(b, rel=1e-9) and a > 0.02


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(6, 18), lam=st.sampled_from([0.01, 0.1, 1.0]),
       alpha=st.sampled_from([0.0, 0.05]), nmin=st.integers(1, 3))
def test_depth_one_search_equals_brute_force(seed, n, lam, alpha, nmin):
    """At depth 1 one visit of the root scans every split with leaf children, so the search is exact."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(0, 1, (n, 2)), 2)
    y = np.where(X[:, 0] < 0.5, X[:, 1], -2 * X[:, 1]) + rng.normal(scale=0.1, size=n)
    data = prepare(X, y, task="regression")
    res = linear_local_search(data, 1, alpha=alpha, leaf_penalty=lam, min_samples_leaf=nmin, n_restarts=2,
                              random_state=seed, max_thresholds=10_000, constant_restarts=2, return_all=True)
    assert res.objective == pytest.approx(brute_force_depth1(data, alpha, lam, nmin), rel=1e-7, abs=1e-9)


def test_search_is_never_worse_than_its_constant_leaf_start():
    """Exact claim: the result's lasso-leaf objective is <= the constant-leaf local-search tree's objective with
    lasso leaves refitted on that fixed structure (that tree is the first start; moves must strictly improve)."""
    from opttrees.heuristics import local_search
    X, y = piecewise(200, seed=4, noise=0.2)
    data = prepare(X, y, task="regression")
    const = local_search(data, 2, alpha=0.01, n_restarts=4, random_state=0, loss="squared")
    start = linear_tree_objective(const, data, alpha=0.01, leaf_penalty=0.01)
    res = linear_local_search(data, 2, alpha=0.01, leaf_penalty=0.01, starts=[const], random_state=0,
                              return_all=True)
    assert res.start_objectives[0] == pytest.approx(start, rel=1e-9)
    assert res.objective <= start + 1e-9
    assert res.objective == pytest.approx(linear_tree_objective(res.tree, data, 0.01, 0.01), rel=1e-9)
    # the default starts include that constant-leaf tree
    full = linear_local_search(data, 2, alpha=0.01, leaf_penalty=0.01, n_restarts=3, random_state=0,
                               constant_restarts=4, return_all=True)
    assert full.objective <= full.start_objectives[0] + 1e-9


def test_recovers_a_piecewise_linear_ground_truth():
    X, y = piecewise(400, seed=6, noise=0.05)
    data = prepare(X, y, task="regression")
    tree = linear_local_search(data, 2, alpha=0.01, leaf_penalty=0.001, n_restarts=4, random_state=1)
    assert tree.task == "linear" and tree.n_splits == 1 and tree.feature[0] == 0
    assert abs(tree.threshold[0] - 0.5) < 0.05
    left, right = tree.leaf_model(tree.children_left[0]), tree.leaf_model(tree.children_right[0])
    np.testing.assert_allclose(left[1], [0, 2, 0, 0], atol=0.05)
    np.testing.assert_allclose(right[1], [0, 0, 3, 0], atol=0.05)
    assert left[0] == pytest.approx(1, abs=0.1) and right[0] == pytest.approx(-1, abs=0.1)
    Xt, yt = piecewise(500, seed=7, noise=0.0)
    assert 1 - np.mean((tree.predict(Xt) - yt) ** 2) / np.var(yt) > 0.99
    assert Tree.from_json(tree.to_json()).predict(Xt) == pytest.approx(tree.predict(Xt))


def test_bad_inputs_name_the_setting():
    X, y = piecewise(30, seed=8)
    data = prepare(X, y, task="regression")
    with pytest.raises(InputError, match="leaf_penalty"):
        linear_local_search(data, 1, leaf_penalty=-1.0)
    with pytest.raises(InputError, match="max_thresholds"):
        linear_local_search(data, 1, max_thresholds=0)
    with pytest.raises(InputError, match="regression"):
        linear_local_search(prepare(X, y > 0), 1)
    with pytest.warns(UserWarning, match="leaf_penalty=0"):
        linear_local_search(data, 1, leaf_penalty=0.0, n_restarts=1, starts=[fixed_tree().prune([1])])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        linear_local_search(data, 1, leaf_penalty=0.0, min_samples_leaf=5, n_restarts=1,
                            starts=[fixed_tree().prune([0])])


def oblique(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (n, 2))
    return X, np.where(X[:, 0] + X[:, 1] < 1, 1 + 2 * X[:, 1], -X[:, 0]) + 0.05 * rng.normal(size=n)


def test_hyperplane_search_beats_parallel_on_an_oblique_truth_and_counts_coefficients():
    X, y = oblique()
    data = prepare(X, y, task="regression")
    kw = dict(alpha=0.01, leaf_penalty=0.001, n_restarts=3, random_state=0, constant_restarts=2)
    par = linear_local_search(data, 1, return_all=True, **kw)
    hyp = linear_local_search(data, 1, split_type="hyperplane", n_hyperplane_restarts=20, return_all=True, **kw)
    assert hyp.tree.feature[0] < 0 and hyp.objective < par.objective - 0.1
    # complexity = non-zero split coefficients, as opttrees.objectives counts it
    assert hyp.objective == pytest.approx(linear_tree_objective(hyp.tree, data, 0.01, 0.001), rel=1e-9)
    with pytest.raises(InputError, match="split_type='hyperplane'"):
        linear_local_search(data, 1, starts=[hyp.tree])
    with pytest.raises(InputError, match="split_type"):
        linear_local_search(data, 1, split_type="oblique")
