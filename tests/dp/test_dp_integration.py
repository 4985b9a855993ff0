"""The dynamic program inside the estimators: method="dp" (OCT, ORT, SPOT), warm_start="dp" for the OCT MIO,
the spec model types, time limits and Ctrl-C, and bad input. Exactness is checked against another exact
method (the HiGHS-proven OCT optimum) and the heuristics on tiny continuous data with every midpoint."""
import json
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from opttrees import OptimalTreeClassifier, OptimalTreeRegressor, SPOTree
from opttrees.errors import InputError
from opttrees.estimators.fitcontrol import InterruptedFitWarning
from opttrees.interrupt import STOP

ROOT = Path(__file__).resolve().parents[2]


def tiny_classification(seed, n=18, p=2, k=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)).round(2)
    y = rng.integers(0, k, n)
    return X, np.array(["a", "b", "c"])[y]      # string labels: encoded inside, decoded on output


@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize("alpha", [0.0, 0.05])
@pytest.mark.parametrize("seed", [0, 1])
def test_dp_equals_the_proven_oct_optimum(depth, alpha, seed):
    X, y = tiny_classification(seed)
    dp = OptimalTreeClassifier(method="dp", max_depth=depth, alpha=alpha, binarization="midpoints").fit(X, y)
    mio = OptimalTreeClassifier(method="mio", max_depth=depth, alpha=alpha, warm_start=None, time_limit=60).fit(X, y)
    assert mio.solve_result_.proven_optimal and dp.solve_result_.proven_optimal
    assert dp.objective_ == pytest.approx(mio.objective_, abs=1e-9)
    assert dp.solve_result_.objective == pytest.approx(dp.objective_, abs=1e-9)
    assert dp.fit_status_ == "completed" and set(dp.predict(X)) <= set(y)
    assert dp.score(X, y) == pytest.approx(np.mean(dp.tree_.predict(X) == y))


def test_dp_respects_min_samples_leaf_and_max_num_nodes():
    X, y = tiny_classification(3, n=30)
    est = OptimalTreeClassifier(method="dp", max_depth=3, min_samples_leaf=4, max_num_nodes=2,
                                binarization="midpoints").fit(X, y)
    assert est.tree_.n_splits <= 2
    counts = np.bincount(est.apply(X), minlength=est.tree_.n_nodes)[est.tree_.leaves]
    assert counts.min() >= 4


def test_warm_start_dp_gives_the_mio_the_dp_optimum():
    """The DP tree over all midpoints is a feasible OCT start whose objective is the DP's (and the optimum)."""
    X, y = tiny_classification(4, n=16)
    for alpha in (0.0, 0.1):
        dp = OptimalTreeClassifier(method="dp", max_depth=2, alpha=alpha, min_samples_leaf=2,
                                   binarization="midpoints").fit(X, y)
        mio = OptimalTreeClassifier(method="mio", max_depth=2, alpha=alpha, min_samples_leaf=2, warm_start="dp",
                                    binarization="midpoints", time_limit=60).fit(X, y)
        assert mio.solve_result_.start_objective == pytest.approx(dp.objective_, abs=1e-9)
        assert mio.objective_ == pytest.approx(dp.objective_, abs=1e-9)
        assert "warm_start" in mio.fit_timings_


def test_regressor_dp_is_at_least_as_good_as_local_search():
    rng = np.random.default_rng(5)
    X = rng.random((40, 3)).round(3)
    y = np.where(X[:, 0] < 0.4, 1.0, 3.0) + np.where(X[:, 1] < 0.6, 0.0, 2.0) + 0.3 * rng.normal(size=40)
    for alpha in (0.0, 0.01):
        dp = OptimalTreeRegressor(method="dp", max_depth=2, alpha=alpha, binarization="midpoints").fit(X, y)
        ls = OptimalTreeRegressor(method="local-search", max_depth=2, alpha=alpha, n_restarts=20,
                                  random_state=0).fit(X, y)
        assert dp.solve_result_.proven_optimal
        assert dp.objective_ <= ls.objective_ + 1e-9
        assert dp.objective_ == pytest.approx(dp.solve_result_.objective, abs=1e-9)
        assert dp.predict(X).dtype == np.float64


def test_spotree_dp_matches_the_engine_and_is_exact_at_depth_one():
    from opttrees.dp import solve_dp_spo
    from opttrees.experiments.spo_data import shortest_path_data
    from opttrees.spo.objective import spot_objective
    D = shortest_path_data(60, deg=2, noise=0.25, grid=(2, 2), n_test=10, seed=0)
    est = SPOTree(decision_problem=D.problem, method="dp", max_depth=2, min_samples_leaf=5, alpha=0.0, n_thresholds=4,
                  prune=False).fit(D.X, D.C)
    tree, res = solve_dp_spo(D.X, D.C, D.problem, max_depth=2, min_samples_leaf=5, n_thresholds=4)
    assert est.solve_result_.proven_optimal and est.fit_status_ == "completed"
    own = spot_objective(D.problem, est.tree_, D.X, D.C)
    assert own == pytest.approx(res.objective, abs=1e-9) and est.objective_ == pytest.approx(own, abs=1e-9)
    assert est.predict(D.X_test).shape == (10, D.problem.n_decisions)
    # depth 1, every midpoint: no single split (with leaves of >= 5 rows) does better than the DP's
    one = SPOTree(decision_problem=D.problem, method="dp", max_depth=1, min_samples_leaf=5, alpha=0.0, binarization="midpoints",
                  prune=False).fit(D.X, D.C)
    best = spot_objective(D.problem, one.tree_, D.X, D.C)
    from opttrees.tree import Tree
    for j in range(D.X.shape[1]):
        v = np.unique(D.X[:, j])
        for t in (v[1:] + v[:-1]) / 2:
            left = (D.X[:, j] < t).sum()
            if min(left, len(D.X) - left) < 5:
                continue
            stump = Tree([1, -1, -1], [2, -1, -1], [j, -1, -1], [t, 0, 0], np.zeros((3, 1)), task="spo",
                         n_features=D.X.shape[1])
            leaf = stump.apply(D.X)
            stump.value = np.array([D.C.mean(0)] + [D.C[leaf == k].mean(0) for k in (1, 2)])
            stump.extras["decision"] = D.problem.solve(stump.value)[0]
            assert spot_objective(D.problem, stump, D.X, D.C) >= best - 1e-9


def _breast_cancer():
    from sklearn.datasets import load_breast_cancer
    return load_breast_cancer(return_X_y=True)


def test_time_limit_covers_the_dp_fit():
    X, y = _breast_cancer()
    OptimalTreeClassifier(method="dp", max_depth=1).fit(X[:50], y[:50])      # load the numba cache first
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = OptimalTreeClassifier(method="dp", max_depth=4, time_limit=1.5).fit(X, y)
    took = time.perf_counter() - t0
    res = est.solve_result_
    assert took < 1.5 + 2.0, took
    assert est.fit_status_ == "time_limit" and res.status == "time_limit" and not res.proven_optimal
    assert res.bound <= est.objective_ + 1e-12 and est.objective_ == pytest.approx(res.objective, abs=1e-9)
    assert est.score(X, y) > 0.9


def test_ctrl_c_keeps_the_best_dp_tree():
    """The first Ctrl-C only sets the STOP flag (opttrees.interrupt); setting it from a timer is the same."""
    X, y = _breast_cancer()
    OptimalTreeClassifier(method="dp", max_depth=1).fit(X[:50], y[:50])
    timer = threading.Timer(1.0, STOP.set)
    t0 = time.perf_counter()
    timer.start()
    try:
        with pytest.warns(InterruptedFitWarning):
            est = OptimalTreeClassifier(method="dp", max_depth=4, time_limit=None).fit(X, y)
    finally:
        timer.cancel()
    assert time.perf_counter() - t0 < 1.0 + 2.0
    assert est.fit_status_ == "interrupted" and est.solve_result_.status == "interrupted"
    assert est.tree_.n_splits >= 1 and not STOP.is_set()


@pytest.mark.parametrize("est, fit_y, msg", [
    (OptimalTreeRegressor(method="dp", loss="absolute"), "reg", "loss='absolute' is not valid with method='dp'.*squared loss"),
    (OptimalTreeRegressor(method="dp", split_type="hyperplane"), "reg",
     "split_type='hyperplane' is not valid with method='dp'.*parallel splits only"),
    (OptimalTreeClassifier(method="mio", max_num_nodes=2), "clf", "max_num_nodes=2 is not valid with method='mio'.*needs method='dp'"),
    (OptimalTreeClassifier(method="dp", max_depth=13), "clf", "max_depth"),
    (OptimalTreeClassifier(method="dp", binarization="deciles"), "clf", "binarization='deciles' is not valid"),
    (OptimalTreeClassifier(method="dp", n_thresholds=0), "clf", "n_thresholds=0 is not valid"),
])
def test_bad_dp_input_names_the_parameter(est, fit_y, msg):
    rng = np.random.default_rng(0)
    X = rng.random((20, 2))
    y = X[:, 0] if fit_y == "reg" else (X[:, 0] > 0.5).astype(int)
    with pytest.raises(InputError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        est.fit(X, y)


def test_spotree_dp_needs_a_fixed_depth_and_the_spo_criterion():
    from opttrees.oracles import GridShortestPath
    pr = GridShortestPath(2, 2)
    rng = np.random.default_rng(0)
    X, C = rng.random((20, 2)), rng.random((20, pr.n_decisions))
    with pytest.raises(InputError, match="max_depth=None is not valid with method='dp'"):
        SPOTree(decision_problem=pr, method="dp").fit(X, C)
    with pytest.raises(InputError, match="max_depth=5 is not valid with method='dp'"):
        SPOTree(decision_problem=pr, method="dp", max_depth=5).fit(X, C)
    with pytest.raises(InputError, match="criterion='spo'"):
        SPOTree(decision_problem=pr, method="dp", max_depth=1, criterion="mse").fit(X, C)


@pytest.mark.parametrize("est", [
    OptimalTreeClassifier(method="dp", max_depth=2),
    OptimalTreeRegressor(method="dp", max_depth=2),
], ids=["OCT-dp", "ORT-dp"])
def test_dp_estimators_pass_sklearn_check_estimator(est):
    """Every check passes but one: with sample weights, rows of weight 0 still tell binary columns apart, so the
    search sees other (duplicate-free) columns than on the repeated data and may return another, equally good
    tree among ties (objectives agree: test_sample_weights_match_repeated_rows)."""
    from sklearn.utils.estimator_checks import check_estimator
    expected = {"check_sample_weight_equivalence_on_dense_data": "ties between equally good trees"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = check_estimator(est, expected_failed_checks=expected, on_fail=None)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in res if r["status"] == "failed"]
    assert failed == [], failed


def test_sample_weights_match_repeated_rows():
    """Integer weights = repeated rows, over every midpoint (quantile thresholds count rows, not weight)."""
    for seed in range(4):
        rng = np.random.default_rng(seed)
        X, y, w = rng.random((15, 6)), rng.integers(0, 3, 15), rng.integers(0, 3, 15)
        Xr, yr = np.repeat(X, w, axis=0), np.repeat(y, w)
        for cls, cast in ((OptimalTreeClassifier, int), (OptimalTreeRegressor, float)):
            a = cls(method="dp", max_depth=2, binarization="midpoints")
            b = cls(method="dp", max_depth=2, binarization="midpoints")
            a.fit(X, y.astype(cast), sample_weight=w)
            b.fit(Xr, yr.astype(cast))
            assert a.objective_ == pytest.approx(b.objective_, abs=1e-9), (seed, cls.__name__)


def test_example_spec_solves_iris_at_depth_three(tmp_path):
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "opttrees.cli", "solve", str(ROOT / "examples/iris_dp.yaml"), "-o",
                        str(out), "-q"], capture_output=True, text=True, cwd=ROOT,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["model"] == "oct-dp" and report["solve"]["proven_optimal"]
    assert report["tree"]["depth"] == 3 and report["train_accuracy"] == pytest.approx(149 / 150)


def test_spec_model_types_fix_the_method():
    from opttrees.registry import models
    reg = models()
    assert reg["oct-dp"].make().method == "dp" and reg["ort-dp"].make().method == "dp"
    assert reg["spot-dp"].make(max_depth=2).method == "dp"
    assert "method" not in reg["oct-dp"].parameter_rules() and "binarization" in reg["oct-dp"].parameter_rules()


def test_a_quantile_optimum_says_it_covers_only_its_thresholds():
    """An "optimal" DP over quantile thresholds is the best over those only: the result says how many of every
    midpoint it covered; over every midpoint it says nothing."""
    import numpy as _np

    from opttrees.dp import solve_dp as _solve_dp
    X = _np.random.default_rng(0).random((300, 3))
    y = (X[:, 0] > 0.5).astype(int)
    _, res = _solve_dp(X, y, max_depth=1, binarization="quantile", n_thresholds=5)
    assert res.status == "optimal" and "covered 15 of the 897 midpoints" in res.message
    _, res = _solve_dp(X, y, max_depth=1, binarization="midpoints")
    assert "midpoints (binarization" not in res.message
