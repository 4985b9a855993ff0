"""An exact search stopped early (Ctrl-C flag, time limit) returns a tree no worse than CART's of the same depth,
minimum leaf size and node limit (opttrees.dp.seed), on both engines, for classification and regression."""
import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from opttrees.dp import RegressionTask, solve_dp
from opttrees.dp.continuous import solve_dp_continuous
from opttrees.interrupt import STOP


def _data(seed, n=600, p=5, K=3, reg=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)).round(2)
    X[:, 0] = np.round(X[:, 0] * 3) / 3          # ties
    if reg:
        return X, X[:, 1] * 2 + np.sin(3 * X[:, 2]) + rng.normal(scale=0.3, size=n)
    score = X[:, 1] + X[:, 2] * X[:, 3]
    return X, np.digitize(score, np.quantile(score, np.linspace(0, 1, K + 1)[1:-1])) ^ (rng.random(n) < 0.1)


def _cart_loss(X, y, depth, minl, w, reg, nodes=None):
    kw = dict(max_depth=depth, min_samples_leaf=minl, random_state=0,
              max_leaf_nodes=None if nodes is None else nodes + 1)
    est = (DecisionTreeRegressor if reg else DecisionTreeClassifier)(**kw).fit(X, y, sample_weight=w)
    pred = est.predict(X)
    return float(np.sum(w * (y - pred) ** 2)) if reg else float(np.sum(w * (pred != y)))


def _loss(tree, X, y, w, reg):
    pred = tree.predict(X)
    return float(np.sum(w * (y - pred) ** 2)) if reg else float(np.sum(w * (pred != y)))


@pytest.mark.parametrize("engine", ["exact", "midpoints"])
@pytest.mark.parametrize("reg", [False, True])
@pytest.mark.parametrize("depth,minl,nodes", [(2, 1, None), (3, 5, None), (3, 1, 4)])
def test_a_stopped_search_is_never_worse_than_cart(engine, reg, depth, minl, nodes):
    X, y = _data(depth * 10 + minl, reg=reg)
    w = np.random.default_rng(0).integers(1, 4, len(y)).astype(float)
    STOP.set()                      # stopped at once: the start is what comes back
    try:
        tree, res = solve_dp(X, y, task=RegressionTask() if reg else None, max_depth=depth, max_num_nodes=nodes,
                             min_samples_leaf=minl, sample_weight=w, binarization=engine)
    finally:
        STOP.clear()
    assert res.status in ("interrupted", "optimal")      # a small search may finish before it polls the flag
    assert res.bound <= res.objective
    assert _loss(tree, X, y, w, reg) <= _cart_loss(X, y, depth, minl, w, reg, nodes) * (1 + 1e-9) + 1e-9
    sizes = np.bincount(tree.apply(X), minlength=tree.n_nodes)[tree.leaves]
    assert sizes.min() >= minl and tree.depth <= depth
    assert nodes is None or tree.n_splits <= nodes


def test_the_start_does_not_change_the_optimum():
    """With the search finished, the optimum is the same whether or not CART's tree was the first incumbent."""
    import opttrees.dp.continuous as continuous

    X, y = _data(7, n=300, p=4)
    _, with_start = solve_dp_continuous(X, y, max_depth=3, min_samples_leaf=3)
    real = continuous.cart_seed
    try:
        continuous.cart_seed = lambda *a, **k: (None, np.inf)
        _, without = solve_dp_continuous(X, y, max_depth=3, min_samples_leaf=3)
    finally:
        continuous.cart_seed = real
    assert with_start.status == without.status == "optimal"
    assert with_start.objective == pytest.approx(without.objective, rel=1e-12)
