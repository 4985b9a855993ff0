"""The fastest exact route by default: warm_start="auto", dp_bound="auto" (the DP's start and bound when the DP
fits the time and memory budget), and a DP that never outgrows its memory cap."""
import numpy as np
import pytest
from sklearn.datasets import load_iris, make_classification

from opttrees import OptimalTreeClassifier
from opttrees.data.prepared import prepare
from opttrees.dp import solve_dp
from opttrees.dp import api as dp_api
from opttrees.dp.memory import check_limit, default_limit, physical_memory
from opttrees.errors import InputError
from opttrees.dp.planner import dp_plan


@pytest.mark.parametrize("solver", ["highs", "scip"])
def test_default_fit_is_proven_by_the_dp_bound(solver):
    X, y = load_iris(return_X_y=True)
    clf = OptimalTreeClassifier(max_depth=2, solver=solver, time_limit=60).fit(X, y)
    res = clf.solve_result_
    assert res.proven_optimal and res.status == "optimal"
    assert clf.objective_ == pytest.approx(0.06)
    assert res.plan["start"] == "dp" and res.plan["bound"] == "dp-bound"
    assert "every midpoint" in res.plan["why"]
    assert res.to_dict()["plan"] == res.plan


def test_old_defaults_still_available():
    X, y = load_iris(return_X_y=True)
    clf = OptimalTreeClassifier(max_depth=1, warm_start="greedy", dp_bound=False, time_limit=60).fit(X, y)
    assert clf.solve_result_.plan["start"] == "greedy" and clf.solve_result_.plan["bound"] is None
    assert clf.solve_result_.proof == "solver"


def test_plan_skips_a_dp_that_does_not_fit_the_time():
    X, y = make_classification(1500, 4, n_informative=3, n_redundant=0, random_state=1)
    data = prepare(X, y)
    mode, why = dp_plan(data, 2, 10.0)       # ~6,000 midpoints: the continuous DP, predicted well under a second
    assert mode == "midpoints" and "continuous" in why
    mode, why = dp_plan(data, 3, 0.2)        # depth 3: 0.15 s predicted, over half of the 0.2 s left (and the
    assert mode == "" and "predicted to take" in why      # quantile DP is predicted slower than every midpoint)
    assert dp_plan(data, 3, 1.0)[0] == "midpoints"
    small = prepare(*load_iris(return_X_y=True))
    assert dp_plan(small, 2, 10.0)[0] == "midpoints"
    assert dp_plan(small, 2, 1e-6)[0] == ""                     # no time at all: the greedy start


def test_auto_on_a_large_continuous_set_is_proven_by_the_dp_bound():
    X, y = make_classification(1500, 4, n_informative=3, n_redundant=0, random_state=1)
    clf = OptimalTreeClassifier(max_depth=2, time_limit=60).fit(X, y)
    res = clf.solve_result_
    assert res.plan["bound"] == "dp-bound" and res.plan["dp_binarization"] == "midpoints"
    assert res.status == "optimal" and res.bound == pytest.approx(res.objective)
    _, dp = solve_dp(X, y, max_depth=2, binarization="exact")
    assert res.objective == pytest.approx(dp.objective, abs=1e-12)
    assert res.objective == pytest.approx(clf.objective_, abs=1e-9)


def test_auto_at_depth_three_is_proven_by_the_dp_bound_when_it_fits_and_routed_when_nothing_fits():
    # the set-up (predicted 3.7 s) and every midpoint (1.2 s) fit half of the 10 s: the DP's start and bound prove it
    X, y = make_classification(1500, 8, n_informative=3, n_redundant=0, random_state=1)
    clf = OptimalTreeClassifier(max_depth=3, time_limit=10).fit(X, y)
    res = clf.solve_result_
    assert "route" not in res.plan
    assert res.plan["bound"] == "dp-bound" and res.plan["dp_binarization"] == "midpoints"
    assert res.status == "optimal"
    _, dp = solve_dp(X, y, max_depth=3, binarization="exact")
    assert res.objective == pytest.approx(dp.objective, abs=1e-12)
    # with 2 s neither the MIO's set-up nor the DP fits half of the time: the local search, no proof
    res = OptimalTreeClassifier(max_depth=3, time_limit=2).fit(X, y).solve_result_
    assert res.plan["route"] == "local-search" and "no proof" in res.plan["why"]


def test_hyperplane_auto_uses_the_greedy_start():
    X, y = load_iris(return_X_y=True)
    clf = OptimalTreeClassifier(max_depth=1, split_type="hyperplane", time_limit=20).fit(X, y)
    assert clf.solve_result_.plan["start"] == "greedy" and clf.solve_result_.plan["bound"] is None


def test_explicit_dp_bound_true_with_hyperplanes_is_an_error():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(InputError, match="dp_bound=True"):
        OptimalTreeClassifier(split_type="hyperplane", dp_bound=True).fit(X, y)


def test_memory_limit_values():
    assert check_limit("4GB") == 4 * 1024 ** 3 and check_limit("500 mb") == 500 * 1024 ** 2
    assert check_limit(None) == default_limit()
    assert physical_memory() == 0 or default_limit() == physical_memory() // 2
    for bad in ("lots", -1, 0, True, "0GB"):
        with pytest.raises(InputError, match="memory_limit"):
            check_limit(bad)


def test_dp_refuses_a_run_over_its_memory_limit():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 6))
    y = rng.integers(0, 2, 400)
    with pytest.raises(InputError, match="memory_limit=100 MB: use fewer thresholds"):
        solve_dp(X, y, max_depth=2, binarization="midpoints", memory_limit="100MB")


def test_dp_stops_at_its_memory_cap_with_a_tree_and_a_bound(monkeypatch):
    """The caches grow during the search: the watch stops it like a time limit (a huge resident size here)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(600, 8))
    y = rng.integers(0, 3, 600)
    monkeypatch.setattr(dp_api, "resident_bytes", lambda: 10 ** 15)
    with pytest.warns(UserWarning, match="memory_limit"):
        tree, res = solve_dp(X, y, max_depth=4, binarization="quantile", n_thresholds=40)
    assert res.status in ("limit", "optimal")
    if res.status == "limit":
        assert res.timings["memory_limit"] and "memory_limit" in res.message
        assert 0.0 <= res.bound <= res.objective
    assert tree.predict(X).shape == (600,)


@pytest.mark.parametrize("cls", ["FlowOCTClassifier", "BendersOCTClassifier"])
def test_flow_models_default_to_the_dp_start_and_bound(cls):
    import opttrees

    X, y = load_iris(return_X_y=True)
    clf = getattr(opttrees, cls)(max_depth=2, time_limit=60).fit(X, y)
    res = clf.solve_result_
    assert res.proven_optimal and res.plan["bound"] == "dp-bound" and res.plan["start"] == "dp"
    expected = "scip" if cls == "BendersOCTClassifier" else "highs"
    assert res.plan["solver"] == expected and "solver='auto'" in res.plan["solver_why"]
    # the DP's tree reaches the DP bound: proven without handing the model to the solver
    assert res.solver == "none" and res.proof == "dp-bound" and res.timings["compile"] == 0.0


def test_solver_auto_picks_scip_for_squared_loss_and_says_so():
    from opttrees import OptimalTreeRegressor

    X = np.array([[1, 2], [0, 2], [3, 3], [0, 2], [3, 2]], dtype=float)
    y = np.array([-1.5, -2, -0.2, -1.2, 1.1])
    reg = OptimalTreeRegressor(max_depth=1, method="mio", loss="squared", time_limit=30).fit(X, y)
    assert reg.solve_result_.solver == "scip"
    with pytest.raises(InputError, match="HiGHS cannot solve"):
        OptimalTreeRegressor(max_depth=1, method="mio", loss="squared", solver="highs").fit(X, y)


def test_robust_auto_solver_is_scip():
    from opttrees.estimators import RobustTreeClassifier

    X = np.array([[0, 1], [1, 0], [2, 1], [3, 0]] * 3)
    y = np.array([0, 0, 1, 1] * 3)
    clf = RobustTreeClassifier(max_depth=1, time_limit=30).fit(X, y, costs=np.ones(2), budget=0.0)
    assert clf.solve_result_.solver == "scip" and clf.solve_result_.plan["solver"] == "scip"


def test_spot_auto_uses_the_dp_when_it_fits():
    from opttrees import SPOTree
    from opttrees.experiments.spo_data import shortest_path_data

    d = shortest_path_data(n=40, deg=4, noise=0.5, p=3, seed=0)
    est = SPOTree(decision_problem=d.problem, max_depth=1, method="mio", time_limit=60).fit(d.X, d.C)
    res = est.solve_result_
    assert res.plan["start"] in ("dp", "greedy") and res.plan["bound"] == "dp-bound", res.plan
    assert res.proven_optimal and res.proof in ("dp-bound", "solver")
    big = shortest_path_data(n=400, deg=4, noise=0.5, p=5, seed=0)
    from opttrees.dp.planner import SPO_DP_SECONDS_PER_CELL, dp_fits
    ok, why = dp_fits(400, 5 * 399, 2, big.C.shape[1], 60.0, "the SPO DP", SPO_DP_SECONDS_PER_CELL)
    assert not ok and "predicted" in why
