"""The one planner (opttrees.dp.planner.Auto) that run_mio consults for every MIO model, and the one fit template:
explicit settings are never overridden, "auto" resolves over the cost model, the solver comes from the estimator
(SPOT and the OPT MIO included), SPOT's build runs under the fit's time limit, every estimator's fit is the
template's."""
import time

import numpy as np
import pytest

import opttrees.dp.planner as planner
from opttrees.data import prepare
from opttrees.dp.planner import Auto, DPCost, RouteCost


def _data(seed=0, n=80):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)).round(2)
    return prepare(X, (X[:, 0] > 0.1).astype(int))


def test_explicit_settings_are_kept_and_auto_resolves_over_the_cost_model():
    data = _data()
    cost = DPCost.of_ranks(data, 2)
    fixed = Auto("greedy", False, cost=cost, route=RouteCost(data, 2)).plan(10.0)
    assert (fixed.start, fixed.bound, fixed.mode, fixed.route) == ("greedy", False, None, "mio")
    assert "why" not in fixed.record and fixed.record["solver"] == "highs"
    auto = Auto("auto", "auto", cost=cost).plan(10.0)
    assert (auto.start, auto.bound, auto.mode) == ("dp", True, "midpoints")
    assert auto.record["dp_binarization"] == "midpoints" and "continuous DP" in auto.record["why"]
    none = Auto("auto", "auto", cost=cost).plan(1e-9)             # no time: no DP, the greedy start
    assert (none.start, none.bound, none.mode) == ("greedy", False, "")
    assert none.record["why"].startswith("no DP (") and none.record["dp_binarization"] is None
    assert Auto(False, "auto", cost=None, no_dp="hyperplanes").plan(10.0).record["why"] == "hyperplanes"


def test_one_candidate_split_set_reports_its_own_reason():
    """FlowOCT's and SPOT's DP runs over the model's own columns only: the reason is the one check's."""
    mode, why = DPCost(1000, 3, 5000, 3, "the DP over the model's binary columns").mode(1.0)
    assert mode == "" and why.startswith("the DP over the model's binary columns (5000 columns) is predicted")


def test_the_route_and_the_solver_come_from_the_plan(monkeypatch):
    data = _data(1)
    monkeypatch.setattr(planner, "BUILD_SECONDS_PER_ROW_LEAF", 10.0)
    plan = Auto("auto", "auto", solver="auto", auto_solver=("scip", "lazy rows"), cost=DPCost.of_ranks(data, 2),
                route=RouteCost(data, 2)).plan(60.0)
    assert plan.route == "dp" and plan.record["route"] == "dp" and "solver" not in plan.record
    assert plan.solver == "scip"
    assert Auto("auto", "auto", route=RouteCost(data, 2, dp_ok=False)).plan(60.0).route == "local-search"
    assert Auto("auto", "auto", route=RouteCost(data, 2)).plan(60.0, stopping=True).route == "mio"
    assert Auto("greedy", "auto", route=RouteCost(data, 2)).plan(60.0).route == "mio"   # asked for a start
    name, record = Auto(solver="auto", auto_solver=("scip", "lazy rows")).solver_plan()
    assert name == "scip" and record == {"solver": "scip", "solver_why": "solver='auto': lazy rows"}


def test_the_opt_mio_takes_its_solver_from_the_estimator():
    from opttrees.estimators.prescriptive import OptimalPrescriptiveTree

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(40, 2))
    t = np.arange(40) % 2
    y = np.where(t == (X[:, 0] > 0), 0.0, 1.0)
    est = OptimalPrescriptiveTree(max_depth=1, method="mio", solver="auto", n_restarts=2, time_limit=60).fit(X, t, y)
    plan = est.solve_result_.plan
    assert plan["solver"] == "scip" and "quadratic" in plan["solver_why"] and plan["start"] == "local-search"
    assert est.solve_result_.solver == "scip"


def test_the_spot_build_runs_under_the_fits_time_limit(monkeypatch):
    """SPOT's MILP is built by the pipeline under the fit's one deadline: a build that outlasts it is abandoned
    and the greedy tree is returned, with the fit's status saying so."""
    import opttrees.formulations.spot as spot
    from opttrees import SPOTree
    from opttrees.experiments.spo_data import shortest_path_data

    d = shortest_path_data(n=60, deg=2, noise=0.2, p=3, seed=0)
    real = spot.SPOTFormulation.__init__

    def slow(self, *args, **kwargs):
        time.sleep(3.0)
        real(self, *args, **kwargs)
    monkeypatch.setattr(spot.SPOTFormulation, "__init__", slow)
    with pytest.warns(UserWarning, match="no solution"):
        est = SPOTree(decision_problem=d.problem, max_depth=1, method="mio", min_samples_leaf=5, time_limit=1.0,
                      warm_start="greedy", dp_bound=False).fit(d.X, d.C)
    res = est.solve_result_
    assert est.fit_status_ == "time_limit" and not res.has_solution and "during the model build" in res.message
    assert est.mio_info_["source"] == "greedy" and est.tree_.n_leaves >= 1


@pytest.mark.parametrize("name", ["OptimalTreeClassifier", "OptimalTreeRegressor", "FlowOCTClassifier",
                                  "BendersOCTClassifier", "RobustTreeClassifier", "SPOTree",
                                  "OptimalPrescriptiveTree", "PolicyTree"])
def test_every_built_in_fit_is_the_template(name):
    """No built-in estimator orchestrates its own fit: each ``fit`` is the base's, or forwards its own arguments to
    the template (``_fit``), and the methods are hooks."""
    import inspect

    import opttrees.estimators as estimators
    from opttrees.estimators.base import OptTreesEstimator

    cls = getattr(estimators, name)
    assert hasattr(cls, "_prepare")
    if cls.fit is not OptTreesEstimator.fit:
        body = [ln.strip() for ln in inspect.getsource(cls.fit).splitlines()]
        code = [ln for ln in body if ln and not ln.startswith(("def ", '"""', "#")) and not ln.endswith('"""')]
        assert code[-1].startswith(("return self._fit(", "sample_weight_val=")), code
    methods = dict(cls._methods) or {"mio": None}
    for method in methods:
        assert hasattr(cls, "_fit_" + method.replace("-", "_")), method
