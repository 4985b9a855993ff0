"""A fit whose time is spent (or that saw Ctrl-C) before the solver: no hand-off, no solver, the start tree with
an honest status. Behaviour only; the latencies are in benchmarks/bench_interrupt_latency.py."""
from functools import partial

import numpy as np
import pytest

import opttrees.solvers.api as api
from opttrees.data.prepared import prepare
from opttrees.estimators import FlowOCTClassifier, OptimalTreeClassifier
from opttrees.estimators.fitcontrol import FitControl
from opttrees.estimators.pipeline import MIO, DPUse, Start, run_mio
from opttrees.formulations.oct import OCT
from opttrees.heuristics.cart import cart_classifier_tree
from opttrees.heuristics.core import make_problem, objective
from opttrees.interrupt import STOP, Budget, stop_on_sigint


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(size=(n, 3)), 2)
    y = (X[:, 0] + X[:, 1] + rng.normal(0, 0.2, n) > 1).astype(int)
    return X, y


@pytest.fixture
def no_solver(monkeypatch):
    """Fails the test if anything reaches the solver layer's solve."""
    def fail(*a, **k):
        pytest.fail("the solver was called")
    monkeypatch.setattr(api, "_solve", fail)


class Spent(Budget):
    """A budget that is already spent (whatever the clock says)."""

    def __init__(self):
        super().__init__(1.0)
        self.t0 -= 10.0


def test_a_budget_spent_before_the_build_builds_nothing_and_calls_no_solver(no_solver):
    X, y = _data()
    data = prepare(X, y)
    prob = make_problem(data)
    start = cart_classifier_tree(data, 2, 1, 0.0, 0)
    built = []

    def build():
        built.append(1)
        return OCT(data, 2)
    with stop_on_sigint(), pytest.warns(UserWarning, match="no solution"):
        ctl = FitControl(Spent())
        out = run_mio(MIO(build, lambda t: objective(t, prob, 0.0), [Start(start, "greedy")],
                          dp=DPUse(True, True), solver_options={"solver": "highs"}), ctl, "Test")
    assert not built and out.form is None and out.dp_run is None
    assert out.tree is start and out.source == "greedy"
    res = out.result
    assert res.termination == "time_limit" and res.status == "no_solution" and not res.has_solution
    assert "before the model build" in res.message
    assert ctl.aborted == "build" and ctl.reason() == "time_limit"


def test_ctrl_c_before_the_solve_returns_the_start_without_a_solver_or_a_dp_proof(no_solver, monkeypatch):
    """Ctrl-C during the DP: the DP's tree is the start (the best tree so far), nothing is proven or solved."""
    import opttrees.estimators.pipeline as pipeline

    X, y = _data()
    data = prepare(X, y)
    prob = make_problem(data)
    start = cart_classifier_tree(data, 2, 1, 0.0, 0)
    real_dp = pipeline._dp_step

    def dp_then_ctrl_c(*a, **k):
        out = real_dp(*a, **k)
        STOP.set()
        return out
    monkeypatch.setattr(pipeline, "_dp_step", dp_then_ctrl_c)
    monkeypatch.setattr(api, "prove_start", lambda *a, **k: pytest.fail("a proof after Ctrl-C"))
    monkeypatch.setattr(pipeline, "prove_start", lambda *a, **k: pytest.fail("a proof after Ctrl-C"))
    with stop_on_sigint():
        ctl = FitControl(60.0)
        out = run_mio(MIO(partial(OCT, data, 2), lambda t: objective(t, prob, 0.0), [Start(start, "greedy")],
                          dp=DPUse(True, True), solver_options={"solver": "highs"}), ctl, "Test")
        assert ctl.reason() == "interrupted"
    assert out.dp_run is not None and out.source in ("dp", "greedy")
    assert objective(out.tree, prob, 0.0) <= objective(start, prob, 0.0) + 1e-12
    assert out.result.termination == "interrupted" and not out.result.has_solution


@pytest.mark.parametrize("est", [
    OptimalTreeClassifier(max_depth=2, time_limit=1e-6),
    FlowOCTClassifier(max_depth=2, time_limit=1e-6),
], ids=["oct", "flow-oct"])
def test_a_fit_out_of_time_before_the_build_returns_its_start_tree(est, no_solver):
    X, y = _data(200)
    with pytest.warns(UserWarning):
        est.fit(X, y)
    res = est.solve_result_
    assert est.fit_status_ == "time_limit"
    assert res.termination == "time_limit" and res.status == "no_solution" and not res.proven_optimal
    assert est.tree_.n_leaves >= 1 and est.predict(X).shape == (len(X),)
