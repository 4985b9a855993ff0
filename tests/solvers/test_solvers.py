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


def test_quadratic_objective_with_products_of_different_variables():
    """(x + y - 1)^2 + x*y: cross terms of two variables reach the solver with their summed coefficient."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers, bounds=(0, 3))
    m.y = pyo.Var(domain=pyo.Integers, bounds=(0, 3))
    m.c = pyo.Constraint(expr=m.x + m.y >= 2)
    m.objective = pyo.Objective(expr=(m.x + m.y - 1) ** 2 + m.x * m.y)
    r = solve(m, "scip")
    assert r.proven_optimal and r.objective == pytest.approx(1.0)   # x + y = 2 with x * y = 0
    assert pyo.value(m.x) * pyo.value(m.y) == 0 and pyo.value(m.x + m.y) == 2


class _StartOnly:
    """The least a formulation needs for ``solve(..., warm_start=...)``: a model and a way to set its start."""

    def __init__(self, model, x):
        self.model, self.x = model, x

    def warm_start(self, values):
        for i, v in enumerate(values):
            self.x[i].set_value(v)


@pytest.mark.skipif("scip" not in SOLVERS, reason="needs SCIP")
@pytest.mark.parametrize("sense", [pyo.minimize, pyo.maximize])
def test_scip_accepts_a_complete_start_of_a_quadratic_model(sense):
    """SCIP solves a quadratic objective through an epigraph column the compiled model does not have: a complete
    start must set it too, or SCIP rejects it. The accepted start is an incumbent at its own objective before
    the root node (only SCIP's pre-presolve trivial heuristic may come earlier, with an inflated epigraph)."""
    a = np.array([0.3, 1.7, 2.2])
    sign = 1 if sense == pyo.minimize else -1
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Integers, bounds=(-5, 5))
    m.objective = pyo.Objective(expr=sign * (sum((m.x[i] - a[i]) ** 2 for i in range(3)) + 0.5 * m.x[0] * m.x[1]
                                             + 2 * m.x[2] + 0.25), sense=sense)
    m.c = pyo.Constraint(expr=sum(m.x[i] for i in range(3)) >= 4)

    def value(x):
        x = np.asarray(x, dtype=float)
        return sign * (float(((x - a) ** 2).sum()) + 0.5 * x[0] * x[1] + 2 * x[2] + 0.25)

    grid = [s for s in itertools.product(range(-5, 6), repeat=3) if sum(s) >= 4]
    best = min(value(s) * sign for s in grid) * sign   # brute force over the box
    start = (5, -4, 3)                                 # feasible, far from optimal, with a value of its own
    r = solve(_StartOnly(m, m.x), "scip", warm_start=start)
    assert "rejected" not in r.message
    assert r.start_objective == pytest.approx(value(start))
    at_start = [i for i in r.trace if i.kind == "incumbent" and i.primal == pytest.approx(value(start), abs=1e-6)]
    assert at_start and at_start[0].nodes == 0
    assert r.proven_optimal and r.objective == pytest.approx(best, abs=1e-6)


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

    from opttrees.data.prepared import prepare
    from opttrees.formulations import OCT

    X, y = load_breast_cancer(return_X_y=True)
    f = OCT(prepare(X[:200, :6], y[:200]), max_depth=2)
    r = solve(f, "highs", time_limit=1.0)
    assert r.status in ("time_limit", "no_solution") and not r.proven_optimal


def test_solve_finds_a_registered_adapter_by_name(monkeypatch):
    """solve() looks back-ends up in the adapter registry: a new one needs one registration, no edit of solve."""
    from opttrees.solvers import adapter
    from opttrees.solvers.highs import HighsAdapter

    calls = []

    class Recording(HighsAdapter):
        name = "recording"

        def solve(self, cm, opts, x0=None, separator=None, repair=None):
            calls.append(cm.n_cols)
            return super().solve(cm, opts, x0=x0, separator=separator, repair=repair)

    monkeypatch.setitem(adapter._ADAPTERS, "recording", Recording())
    m, *_, best = knapsack(n=8)
    r = solve(m, "Recording")
    assert calls == [8] and r.status == "optimal" and r.objective == pytest.approx(best)
    assert "recording" in available_solvers()
    with pytest.raises(SolverError, match="unknown solver 'nope'; choose one of .*'recording'"):
        solve(m, "nope")


def test_missing_solver_package_is_named(monkeypatch):
    import importlib.util

    import opttrees.solvers.api as api

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None if name == "pyscipopt" else real(name))
    m, *_ = knapsack(n=4)
    with pytest.raises(SolverError, match="needs the Python package 'pyscipopt'.*pip install pyscipopt"):
        solve(m, "scip")
    assert api.available_solvers() == ["highs"]


# --- proven optimal only when the solver proved it (not when the requested mip_gap was reached) -------------

def multi_knapsack(n=60, k=5, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.integers(100, 1000, (k, n))
    v = rng.integers(100, 1000, n)
    cap = (w.sum(1) * 0.5).astype(int)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), domain=pyo.Binary)
    m.objective = pyo.Objective(expr=sum(int(v[i]) * m.x[i] for i in range(n)), sense=pyo.maximize)
    m.cap = pyo.Constraint(range(k), rule=lambda m, j: sum(int(w[j, i]) * m.x[i] for i in range(n)) <= int(cap[j]))
    return m


def test_status_rule_lives_in_one_place():
    from opttrees.solvers.result import STATUSES, finish

    def settle(termination, objective, bound):
        r = finish("highs", "", termination, objective, bound, 0.0, 0, [])
        return r.status, r.proven_optimal

    assert settle("optimal", 10.0, 10.0) == ("optimal", True)
    assert settle("optimal", 10.0, 10.0 + 1e-7) == ("optimal", True)
    assert settle("optimal", 0.0, 5e-7) == ("optimal", True)          # absolute tolerance near zero
    assert settle("optimal", 8650.0, 9050.0) == ("gap_limit", False)  # the audit's knapsack
    assert settle("gap_limit", 9030.0, 9030.0) == ("optimal", True)
    assert settle("optimal", None, 1.0) == ("no_solution", False)
    assert settle("time_limit", 5.0, 5.0) == ("time_limit", False)
    assert "gap_limit" in STATUSES


@pytest.mark.parametrize("solver", SOLVERS)
def test_reaching_mip_gap_is_gap_limit_not_proven_optimal(solver):
    m = multi_knapsack()
    r = solve(m, solver, mip_gap=0.2)
    # both solvers stop early on this instance (objective 21942, bound ~23183)
    assert r.status == "gap_limit" and not r.proven_optimal, r.summary()
    assert 1e-6 < r.gap <= 0.2 + 1e-9 and r.bound >= r.objective
    assert "gap_limit" in r.summary() and r.to_dict()["status_meaning"]


@pytest.mark.parametrize("solver", SOLVERS)
def test_default_gap_small_oct_is_still_proven_optimal(solver):
    from sklearn.datasets import load_iris

    from opttrees.data.prepared import prepare
    from opttrees.formulations import OCT

    X, y = load_iris(return_X_y=True)
    r = solve(OCT(prepare(X[::3], y[::3]), max_depth=2), solver)
    assert r.status == "optimal" and r.proven_optimal and r.gap == 0.0, r.summary()


# --- progress trace and runtime ----------------------------------------------------------------------------

def test_trace_keeps_only_strict_improvements():
    from opttrees.solvers.options import Progress, SolveOptions

    p = Progress("scip", SolveOptions(), sense=1)
    p.incumbent(0.060000000000000005, float("nan"))
    p.incumbent(0.05999999999999881, float("nan"))  # SCIP re-reports the start after presolve
    p.incumbent(0.07, 0.0)                          # worse for minimisation: not an incumbent
    p.incumbent(0.05, 0.0)
    assert [i.primal for i in p.trace if i.kind == "incumbent"] == [0.060000000000000005, 0.05]
    q = Progress("highs", SolveOptions(), sense=-1)
    for v in (5.0, 5.0, 4.0, 7.0):
        q.incumbent(v, 10.0)
    assert [i.primal for i in q.trace if i.kind == "incumbent"] == [5.0, 7.0]


@pytest.mark.parametrize("solver", SOLVERS)
def test_runtime_covers_start_and_presolve(solver, capsys):
    from sklearn.datasets import load_iris

    from opttrees.data.prepared import prepare
    from opttrees.formulations import OCT
    from opttrees.heuristics.cart import cart_classifier_tree

    X, y = load_iris(return_X_y=True)
    data = prepare(X[::3], y[::3])
    r = solve(OCT(data, max_depth=2), solver, warm_start=cart_classifier_tree(data, 2), verbose=True)
    assert r.trace and all(i.time <= r.runtime for i in r.trace)  # one clock for trace and runtime
    assert r.runtime <= r.timings["total"]
    lines = [ln for ln in capsys.readouterr().err.splitlines() if " new incumbent=" in ln]
    incumbents = [i for i in r.trace if i.kind == "incumbent"]
    assert len(lines) == len(incumbents) and len(set(lines)) == len(lines)  # the start is printed once


# --- HiGHS solve-separate-resolve loop (BendersOCT) --------------------------------------------------------

@pytest.fixture(scope="module")
def highs_benders():
    from opttrees.estimators.flow import BendersOCTClassifier
    from opttrees.experiments.datasets_robust import load

    ds = load("balance-scale")
    X, y = ds.X[:150], ds.y[:150]
    # the greedy start, no DP bound: the cut loop runs (the DP's tree would be proven without a solver)
    clf = BendersOCTClassifier(max_depth=2, solver="highs", time_limit=2, warm_start="greedy", dp_bound=False).fit(X, y)
    return clf, X, y


def test_highs_cut_loop_never_loses_the_warm_start(highs_benders):
    clf, X, y = highs_benders
    r = clf.solve_result_
    assert r.start_objective is not None  # the greedy start (127 correct here)
    assert r.objective >= r.start_objective - 1e-9, r.summary()
    assert round(clf.score(X, y) * len(y)) == round(r.objective)  # the returned tree scores what is claimed


def test_highs_cut_loop_trace_holds_only_cut_feasible_incumbents(highs_benders):
    clf, X, y = highs_benders
    r = clf.solve_result_
    primals = [i.primal for i in r.trace if i.kind == "incumbent"]
    assert primals and primals == sorted(primals) and len(set(primals)) == len(primals)  # monotone
    assert primals[0] == pytest.approx(r.start_objective)  # the verified start is the first incumbent
    assert primals[-1] == pytest.approx(r.objective)       # the last one is the tree returned
    assert all(p <= r.bound + 1e-6 for p in primals)        # no master solution beyond a valid bound


@pytest.mark.parametrize("solver", SOLVERS)
def test_trace_holds_the_bound_history_and_plots(solver):
    """Both solvers record how the bound moved (not only incumbents), and the trace draws."""
    import matplotlib
    matplotlib.use("Agg")
    from sklearn.datasets import load_iris

    from opttrees.data.prepared import prepare
    from opttrees.formulations import OCT

    X, y = load_iris(return_X_y=True)
    data = prepare(X[::3], y[::3])
    r = solve(OCT(data, max_depth=2), solver)
    bounds = [i.dual for i in r.trace if np.isfinite(i.dual)]
    assert bounds, "no bound in the trace"
    assert abs(bounds[-1] - r.bound) <= 1e-6 * max(1, abs(r.bound)) or r.proven_optimal
    assert all(i.time <= r.runtime + 1e-9 for i in r.trace)
    ax = r.plot()
    assert len(ax.get_lines()) == 2


@pytest.mark.parametrize("solver", SOLVERS)
def test_progress_lines_arrive_at_least_every_two_seconds(solver, capsys):
    """verbose=True: a line with elapsed time, incumbent, bound, gap and nodes at least every 2 s."""
    import re

    from sklearn.datasets import load_iris

    from opttrees.data.prepared import prepare
    from opttrees.formulations import OCT

    X, y = load_iris(return_X_y=True)
    r = solve(OCT(prepare(X, y), max_depth=2), solver, time_limit=5, verbose=True)
    err = capsys.readouterr().err
    ticks = [ln for ln in err.splitlines() if re.match(rf"\[{solver}\]\s+[\d.]+s incumbent=", ln)]
    times = [float(re.match(rf"\[{solver}\]\s+([\d.]+)s", ln).group(1)) for ln in ticks]
    assert len(times) >= 2, err
    # lines are drawn every 1.5 s; the slack is for a loaded CI machine (2 test workers on 2 cores)
    assert times[0] <= 3.0 and all(b - a <= 3.0 for a, b in zip(times, times[1:])), times
    assert all(all(f"{k}=" in ln for k in ("incumbent", "bound", "gap", "nodes")) for ln in ticks)
    assert r.runtime <= 5 + 2


@pytest.mark.parametrize("solver", SOLVERS)
def test_two_status_enums_and_the_solver_version_in_every_result(solver):
    from opttrees.solvers.result import SolutionStatus, TerminationCondition

    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Binary)
    m.y = pyo.Var(domain=pyo.Binary)
    m.c = pyo.Constraint(expr=m.x + m.y <= 1)
    m.objective = pyo.Objective(expr=2 * m.x + 3 * m.y, sense=pyo.maximize)
    r = solve(m, solver)
    assert (r.status, r.termination, r.solution_status) == ("optimal", TerminationCondition.OPTIMAL,
                                                            SolutionStatus.OPTIMAL)
    assert r.solver_version and r.solver_version.split()[0] in ("HiGHS", "SCIP")
    d = r.to_dict()
    assert (d["termination"], d["solution_status"], d["solver_version"]) == ("optimal", "optimal", r.solver_version)
    m.c2 = pyo.Constraint(expr=m.x + m.y >= 3)
    r = solve(m, solver)
    assert r.status == "infeasible" and r.solution_status is SolutionStatus.INFEASIBLE and not r.has_solution
