import itertools

import numpy as np
import pyomo.environ as pyo
import pytest

from opttrees.errors import InputError, SolverError
from opttrees.solvers import available_solvers, relative_gap, solve

SOLVERS = available_solvers()


def knapsack(n=14, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.integers(3, 20, (2, n))
    v = rng.integers(1, 30, n)
    cap = (w.sum(1) * 0.4).astype(int)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), domain=pyo.Binary)
    m.objective = pyo.Objective(expr=sum(int(v[i]) * m.x[i] for i in range(n)), sense=pyo.maximize)
    m.cap = pyo.Constraint(range(2), rule=lambda m, k: sum(int(w[k, i]) * m.x[i] for i in range(n)) <= int(cap[k]))
    best = None
    if n <= 16:  # brute force only where it is cheap
        best = max(int(v @ s) for s in itertools.product([0, 1], repeat=n) if (w @ np.array(s) <= cap).all())
    return m, w, v, cap, best


@pytest.mark.parametrize("solver", SOLVERS)
def test_knapsack_matches_brute_force(solver):
    m, w, v, cap, best = knapsack()
    r = solve(m, solver)
    assert r.status == "optimal" and r.proven_optimal
    assert r.objective == pytest.approx(best)
    x = np.array([pyo.value(m.x[i]) for i in range(len(v))])
    assert v @ x == pytest.approx(best) and (w @ x <= cap + 1e-9).all()  # solution loaded into Pyomo
    assert r.gap == 0.0 and r.bound == pytest.approx(best)


class CapacitySeparator:
    """Lazy version of the knapsack capacity rows: returns the violated ones."""

    def __init__(self, m, w, cap):
        self.m, self.w, self.cap, self.calls = m, w, cap, 0

    def separate(self, value):
        self.calls += 1
        n = self.w.shape[1]
        x = np.array([value(self.m.x[i]) for i in range(n)])
        return [sum(int(self.w[k, i]) * self.m.x[i] for i in range(n)) <= int(self.cap[k])
                for k in range(len(self.cap)) if self.w[k] @ x > self.cap[k] + 1e-6]


@pytest.mark.parametrize("solver", SOLVERS)
def test_lazy_constraints_reach_full_model_optimum(solver):
    m, w, v, cap, best = knapsack(seed=3)
    m.cap.deactivate()

    class F:
        model = m
        separator = CapacitySeparator(m, w, cap)

    r = solve(F(), solver)
    assert r.objective == pytest.approx(best)
    assert r.n_lazy_cuts >= 1 and F.separator.calls >= 1
    x = np.array([pyo.value(m.x[i]) for i in range(len(v))])
    assert (w @ x <= cap + 1e-9).all()


def test_unknown_solver_and_bad_options():
    m, *_ = knapsack(n=4)
    with pytest.raises(SolverError, match="unknown solver 'gurobi'"):
        solve(m, "gurobi")
    with pytest.raises(InputError, match="time_limit"):
        solve(m, "highs", time_limit=-1)
    with pytest.raises(InputError, match="mip_gap"):
        solve(m, "highs", mip_gap=2)


def test_quadratic_mip_rejected_by_highs_but_solved_by_scip():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Integers, bounds=(-5, 5))
    m.objective = pyo.Objective(expr=sum((m.x[i] - 1.3 * i) ** 2 for i in range(3)))
    m.c = pyo.Constraint(expr=sum(m.x[i] for i in range(3)) >= 4)
    with pytest.raises(SolverError, match="HiGHS cannot solve a quadratic objective with integer"):
        solve(m, "highs")
    r = solve(m, "scip")
    assert r.proven_optimal
    assert [pyo.value(m.x[i]) for i in range(3)] == [0, 1, 3]
    assert r.objective == pytest.approx(1.3 ** 2 * 0 + 0.09 + 0.16)


def test_gap_definition():
    assert relative_gap(10.0, 8.0) == pytest.approx(0.2)
    assert relative_gap(-10.0, -12.0) == pytest.approx(0.2)
    assert relative_gap(0.0, 0.0) == 0.0
    assert relative_gap(None, 1.0) == float("inf")


@pytest.mark.parametrize("solver", SOLVERS)
def test_callback_can_stop_and_result_is_not_called_optimal(solver):
    m, *_ = knapsack(n=40, seed=7)
    seen = []
    r = solve(m, solver, callbacks=[lambda inc: seen.append(inc) or len(seen) >= 2])
    assert len(seen) >= 2
    if r.status != "optimal":  # tiny models may be solved before the stop takes effect
        assert r.status == "interrupted" and not r.proven_optimal


@pytest.mark.parametrize("solver", SOLVERS)
def test_verbose_prints_live_progress(solver, capsys):
    m, *_ = knapsack(n=20, seed=2)
    solve(m, solver, verbose=True)
    err = capsys.readouterr().err
    assert f"[{solver}]" in err and "incumbent=" in err and "bound=" in err and "gap=" in err


def test_time_limit_is_reported_honestly():
    from sklearn.datasets import load_breast_cancer

    from opttrees.data import prepare
    from opttrees.formulations import OCT

    X, y = load_breast_cancer(return_X_y=True)
    f = OCT(prepare(X[:200, :6], y[:200]), max_depth=2)
    r = solve(f, "highs", time_limit=1.0)
    assert r.status in ("time_limit", "no_solution") and not r.proven_optimal


def test_missing_solver_package_is_named(monkeypatch):
    import opttrees.solvers.api as api

    real = api.importlib.util.find_spec
    monkeypatch.setattr(api.importlib.util, "find_spec", lambda name: None if name == "pyscipopt" else real(name))
    m, *_ = knapsack(n=4)
    with pytest.raises(SolverError, match="needs the Python package 'pyscipopt'.*pip install pyscipopt"):
        solve(m, "scip")
    assert api.available_solvers() == ["highs"]
