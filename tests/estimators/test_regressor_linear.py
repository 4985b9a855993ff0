"""OptimalTreeRegressor with linear leaves (ORT-L): the estimator wiring of the lasso-leaf local search and the
ORT-L MIO — raw-unit predictions, the reported objective, the MIO against its start and a brute force, and the
settings it refuses."""
import warnings

import numpy as np
import pytest

from opttrees import OptimalTreeRegressor
from opttrees.data.prepared import prepare
from opttrees.errors import InputError
from opttrees.heuristics.linear_leaves import linear_local_search, linear_tree_objective
from oracles.linear_leaves import lad_lasso_depth1 as brute_force_depth1


def piecewise_linear(n=60, seed=0):
    """Two features in raw units far from [0, 1]; y is linear in x1 with a slope that flips at x0 = 50."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(0, 100, n), rng.uniform(-500, 500, n)])
    y = np.where(X[:, 0] < 50, 0.02 * X[:, 1], 3.0 - 0.01 * X[:, 1]) + 0.01 * rng.standard_normal(n)
    return X, y


def test_linear_leaves_predict_raw_x_and_beat_constant_leaves():
    X, y = piecewise_linear()
    kw = dict(max_depth=1, n_restarts=3, random_state=0)
    # every threshold is a candidate (60 rows): with the default 32 the search may miss the one at x0 = 50
    lin = OptimalTreeRegressor(leaf_model="linear", leaf_penalty=1e-4, max_thresholds=64, **kw).fit(X, y)
    const = OptimalTreeRegressor(**kw).fit(X, y)
    assert lin.tree_.task == "linear" and lin.tree_.n_splits == 1 and lin.tree_.feature[0] == 0
    mse_lin = np.mean((lin.predict(X) - y) ** 2)
    mse_const = np.mean((const.predict(X) - y) ** 2)
    assert mse_lin < mse_const / 100, (mse_lin, mse_const)
    assert lin.score(X, y) > 0.99 > const.score(X, y)
    # the leaf models are in original units: evaluated by hand at a point of each leaf
    for x in ([10.0, 300.0], [90.0, -200.0]):
        leaf = lin.tree_.apply(np.array([x]))[0]
        by_hand = lin.tree_.value[leaf, 0] + lin.tree_.value[leaf, 1:] @ np.array(x)
        assert lin.predict([x])[0] == pytest.approx(by_hand)
    assert lin.predict([[10.0, 300.0]])[0] == pytest.approx(6.0, abs=0.05)


@pytest.mark.parametrize("alpha, lam", [(0.0, 1e-3), (0.05, 0.02)])
def test_objective_is_the_trees_linear_objective_and_at_most_the_constant_start(alpha, lam):
    X, y = piecewise_linear(40, seed=1)
    est = OptimalTreeRegressor(max_depth=2, alpha=alpha, leaf_model="linear", leaf_penalty=lam, n_restarts=2,
                               max_thresholds=8).fit(X, y)
    data = prepare(X, y, task="regression")
    lam = est._penalty(data)   # leaf_penalty / s_y: what the search and the MIO see
    assert est.objective_ == pytest.approx(linear_tree_objective(est.tree_, data, alpha, lam, refit=False))
    # the local search starts from the constant-leaf search's tree and accepts only improvements
    const = OptimalTreeRegressor(max_depth=2, alpha=alpha, n_restarts=2).fit(X, y)
    assert est.objective_ <= linear_tree_objective(const.tree_, data, alpha, lam) + 1e-9


# ------------------------------------------------------------------------------------------ MIO


@pytest.mark.parametrize("seed", [0, 1])
def test_mio_absolute_loss_is_proven_optimal_and_never_worse_than_its_start(seed):
    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(0, 10, (15, 2)), 1)
    y = np.where(X[:, 0] < 5, X[:, 1], 8.0 - X[:, 1]) + np.round(rng.standard_normal(15), 1)
    alpha, lam = 0.01, 0.02
    kw = dict(max_depth=1, alpha=alpha, leaf_model="linear", leaf_penalty=lam, loss="absolute", n_restarts=2,
              random_state=0)
    mio = OptimalTreeRegressor(method="mio", solver="highs", **kw).fit(X, y)
    data = prepare(X, y, task="regression")
    lam = OptimalTreeRegressor(**kw)._penalty(data)   # leaf_penalty / s_y: what the search and the MIO see
    start = linear_local_search(data, 1, alpha, lam, 1, 2, 0, max_thresholds=32)
    start_obj = linear_tree_objective(start, data, alpha, lam, loss="absolute", refit=False)
    assert mio.solve_result_.proven_optimal
    assert mio.objective_ == pytest.approx(linear_tree_objective(mio.tree_, data, alpha, lam, loss="absolute",
                                                                 refit=False))
    assert mio.objective_ <= start_obj + 1e-7
    assert mio.objective_ == pytest.approx(brute_force_depth1(data, alpha, lam), rel=1e-5, abs=1e-7)
    cold = OptimalTreeRegressor(method="mio", warm_start=None, **kw).fit(X, y)
    assert cold.objective_ == pytest.approx(mio.objective_, rel=1e-5, abs=1e-7)


def test_mio_l0_penalty_counts_nonzero_coefficients():
    rng = np.random.default_rng(3)
    X = np.round(rng.uniform(0, 10, (12, 2)), 1)
    y = 2.0 * X[:, 0] + np.round(0.1 * rng.standard_normal(12), 2)   # x1 is noise: l0 keeps one coefficient
    est = OptimalTreeRegressor(max_depth=1, alpha=0.5, method="mio", loss="absolute", leaf_model="linear",
                               leaf_penalty=0.05, leaf_penalty_type="l0", coef_bound=100.0, n_restarts=2).fit(X, y)
    assert est.solve_result_.proven_optimal and est.tree_.n_splits == 0
    assert np.count_nonzero(np.abs(est.tree_.value[0, 1:]) > 1e-9) == 1 and est.tree_.value[0, 1] > 0
    data = prepare(X, y, task="regression")
    assert est.objective_ == pytest.approx(linear_tree_objective(est.tree_, data, 0.5, 0.05, loss="absolute",
                                                                 penalty="l0", refit=False))


# ------------------------------------------------------------------------------------ bad settings
@pytest.mark.parametrize("settings, named", [
    ({"method": "greedy"}, "leaf_model='linear'"),
    ({"method": "dp"}, "leaf_model='linear'"),
    ({"loss": "absolute"}, "loss='absolute'"),
    ({"leaf_penalty_type": "l0"}, "leaf_penalty_type='l0'"),
    ({"coef_bound": 5.0}, "coef_bound=5.0"),
    ({"leaf_model": "constant", "coef_bound": 5.0}, "coef_bound=5.0"),
    ({"leaf_penalty": -0.1}, "leaf_penalty=-0.1"),
    ({"leaf_model": "lasso"}, "leaf_model='lasso'"),
    ({"max_thresholds": 0}, "max_thresholds=0"),
    ({"method": "mio", "loss": "squared", "solver": "highs"}, "solver='scip'"),
])
def test_bad_combinations_raise_naming_the_setting(settings, named):
    X, y = piecewise_linear(20)
    est = OptimalTreeRegressor(**{"max_depth": 1, "leaf_model": "linear", "n_restarts": 1, **settings})
    with pytest.raises(InputError, match=named.replace("(", r"\(").replace(".", r"\.")):
        est.fit(X, y)


def test_zero_leaf_penalty_with_small_leaves_warns():
    X, y = piecewise_linear(20)
    for method, loss in (("local-search", "squared"), ("mio", "absolute")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            OptimalTreeRegressor(max_depth=1, leaf_model="linear", leaf_penalty=0.0, n_restarts=1, method=method,
                                 loss=loss).fit(X, y)
        said = [w for w in caught if "leaf_penalty=0" in str(w.message)]
        assert len(said) == 1 and said[0].filename == __file__, method   # once, pointing at the caller
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        OptimalTreeRegressor(max_depth=1, leaf_model="linear", leaf_penalty=0.0, min_samples_leaf=3,
                             n_restarts=1).fit(X, y)


def test_mio_stops_at_the_time_limit_with_a_tree():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 10, (150, 4))
    y = np.where(X[:, 0] < 5, X[:, 1], 5 - X[:, 2]) + rng.standard_normal(150)
    est = OptimalTreeRegressor(max_depth=2, leaf_model="linear", method="mio", loss="absolute", leaf_penalty=1e-3,
                               n_restarts=2, time_limit=1.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    assert est.fit_status_ == "time_limit" and est.fit_timings_["total"] < 1.5 + 3.0   # slack for a loaded machine
    assert est.tree_.task == "linear" and est.objective_ < 0.5       # the local-search start already explains most
    data = prepare(X, y, task="regression")
    assert est.objective_ == pytest.approx(linear_tree_objective(est.tree_, data, 0.0, est._penalty(data), loss="absolute",
                                                                 refit=False))


def test_leaf_penalty_is_unit_free():
    """leaf_penalty divides by y's standard deviation: rescaling y rescales the coefficients, nothing else."""
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 10, (80, 2))
    y = np.where(X[:, 0] < 5, 2 * X[:, 1], 20 - X[:, 1]) + rng.normal(0, 0.3, 80)
    kw = dict(max_depth=1, leaf_model="linear", leaf_penalty=0.01, n_restarts=2, random_state=0)
    small = OptimalTreeRegressor(**kw).fit(X, y)
    big = OptimalTreeRegressor(**kw).fit(X, 1000 * y)
    assert big.objective_ == pytest.approx(small.objective_, rel=1e-6)
    assert np.allclose(big.predict(X), 1000 * small.predict(X), rtol=1e-5, atol=1e-6)
    assert np.count_nonzero(small.tree_.leaf_model(small.tree_.leaves[0])[1]) > 0   # not shrunk to constants
