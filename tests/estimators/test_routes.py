"""The planner's routes for an OCT fit whose MIO cannot finish (issue 43): when the predicted build and hand-off
exceed the time left, the DP over every midpoint (same optimum) or the local search runs instead, and
``solve_result_.plan`` says which and why."""
import numpy as np
import pytest

import opttrees.dp.planner as planner
from opttrees import OptimalTreeClassifier


def _data(seed=0, n=150):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)).round(2)
    y = ((X[:, 0] > 0.2) ^ (X[:, 1] < -0.3)).astype(int) + (X[:, 2] > 1).astype(int)
    return X, y


def test_an_unbuildable_mio_takes_the_dp_with_the_same_optimum(monkeypatch):
    X, y = _data()
    mio = OptimalTreeClassifier(max_depth=2, time_limit=60).fit(X, y)
    assert mio.solve_result_.status == "optimal" and "route" not in mio.solve_result_.plan
    monkeypatch.setattr(planner, "BUILD_SECONDS_PER_ROW_LEAF", 10.0)        # the build "cannot" finish
    routed = OptimalTreeClassifier(max_depth=2, time_limit=60).fit(X, y)
    res = routed.solve_result_
    assert res.plan["route"] == "dp" and "build" in res.plan["why"]
    assert res.status == "optimal"
    assert routed.objective_ == pytest.approx(mio.objective_, rel=1e-12)


def test_without_an_exact_route_in_time_the_local_search_runs(monkeypatch):
    X, y = _data(1)
    monkeypatch.setattr(planner, "BUILD_SECONDS_PER_ROW_LEAF", 10.0)
    monkeypatch.setattr(planner, "CONTINUOUS_SECONDS_PER_CELL", 10.0)       # nor the DP
    clf = OptimalTreeClassifier(max_depth=2, time_limit=60, random_state=0).fit(X, y)
    res = clf.solve_result_
    assert res.plan["route"] == "local-search" and "no proof" in res.plan["why"]
    assert not res.proven_optimal and res.bound is None
    assert res.objective == pytest.approx(clf.objective_, rel=1e-12)


def test_explicit_settings_are_never_rerouted(monkeypatch):
    """A user who asked for a start or a bound gets the MIO they asked for."""
    X, y = _data(2, n=60)
    monkeypatch.setattr(planner, "BUILD_SECONDS_PER_ROW_LEAF", 10.0)
    clf = OptimalTreeClassifier(max_depth=1, time_limit=60, warm_start="greedy", dp_bound=False).fit(X, y)
    assert "route" not in clf.solve_result_.plan
