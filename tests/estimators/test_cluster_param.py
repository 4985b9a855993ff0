"""``cluster="dask"`` on the estimators: the local search's restarts and the continuous DP's root features run on
the process's Dask Client and give the tree of one process (opttrees.heuristics.cluster, opttrees.dp.cluster)."""
import numpy as np
import pytest

from opttrees import OptimalTreeClassifier, OptimalTreeRegressor
from opttrees.errors import InputError

distributed = pytest.importorskip("distributed")


def _data(n=300, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5)).round(1)                       # ties
    y = np.digitize(X[:, 0] + X[:, 1] * X[:, 2], np.linspace(-1, 1, classes - 1)) ^ (rng.random(n) < 0.1)
    return X, y


@pytest.mark.parametrize("depth", [2, 3])
def test_a_dp_fit_on_the_cluster_is_the_one_process_fit(client, depth):
    X, y = _data()
    one = OptimalTreeClassifier(max_depth=depth, method="dp", time_limit=None).fit(X, y)
    many = OptimalTreeClassifier(max_depth=depth, method="dp", time_limit=None, cluster="dask").fit(X, y)
    assert one.solve_result_.proven_optimal and many.solve_result_.proven_optimal
    assert many.objective_ == pytest.approx(one.objective_)
    assert many.score(X, y) == pytest.approx(one.score(X, y))
    assert many.solve_result_.plan.get("route") == "dask"


def test_a_local_search_on_the_cluster_is_the_one_process_fit(client):
    X, y = _data(seed=1)
    kw = dict(max_depth=3, method="local-search", n_restarts=12, random_state=3)
    one = OptimalTreeClassifier(**kw).fit(X, y)
    many = OptimalTreeClassifier(**kw, cluster="dask").fit(X, y)
    assert np.array_equal(one.predict(X), many.predict(X)) and many.objective_ == pytest.approx(one.objective_)
    r = X[:, 0] * 2 + X[:, 1] ** 2
    reg = dict(max_depth=2, n_restarts=8, random_state=5)
    assert np.allclose(OptimalTreeRegressor(**reg).fit(X, r).predict(X),
                       OptimalTreeRegressor(**reg, cluster="dask").fit(X, r).predict(X))


def test_cluster_settings_that_cannot_run_say_why(client):
    X, y = _data(n=80)
    with pytest.raises(InputError, match="binarization"):
        OptimalTreeClassifier(method="dp", binarization="quantile", cluster="dask").fit(X, y)
    with pytest.raises(InputError, match="linear"):
        OptimalTreeRegressor(leaf_model="linear", cluster="dask", n_restarts=2).fit(X, X[:, 0])
    with pytest.raises(InputError, match="cluster"):
        OptimalTreeClassifier(method="dp", cluster="ray").fit(X, y)


def test_no_client_is_a_clear_error(monkeypatch):
    """Without a Client in the process (``distributed.get_client`` raises ValueError) the fit says how to start one."""
    def none():
        raise ValueError("No global client found and no address provided")

    monkeypatch.setattr(distributed, "get_client", none)
    X, y = _data(n=60)
    with pytest.raises(InputError, match="needs a running dask.distributed Client"):
        OptimalTreeClassifier(method="local-search", n_restarts=2, cluster="dask").fit(X, y)
