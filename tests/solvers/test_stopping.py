"""Stopping a solve promptly and honestly: behaviour, not timings (benchmarks/bench_interrupt_latency.py and
bench_overshoot.py measure the latencies).

- The hand-off (``compile_model``) asks ``should_stop`` by elapsed time, not every few thousand rows.
- A HiGHS run that polls nothing (presolve, a long LP) is left behind after Ctrl-C or past its budget: the solve
  returns the best point it has (the start), says why it stopped, and the next HiGHS run waits for the old one.
"""
import threading

import pyomo.environ as pyo
import pytest

import opttrees.solvers.compile as solver_compile
import opttrees.solvers.highs as highs_backend
from opttrees.interrupt import STOP
from opttrees.solvers import solve
from opttrees.solvers.compile import CompileStopped, compile_model


def _rows(n):
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, n - 1)
    m.x = pyo.Var(m.I, within=pyo.Binary)
    m.c = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] + m.x[(i + 1) % n] <= 1)
    m.o = pyo.Objective(expr=sum(m.x[i] for i in m.I), sense=pyo.maximize)
    return m


class Clock:
    """A perf_counter that advances ``step`` seconds per call."""

    def __init__(self, step):
        self.t, self.step = 0.0, step

    def __call__(self):
        self.t += self.step
        return self.t


class FlipsAfter:
    """A should_stop that says True from its ``n``-th call on, counting its calls."""

    def __init__(self, n):
        self.n, self.calls = n, 0

    def __call__(self):
        self.calls += 1
        return self.calls >= self.n


def test_the_hand_off_asks_should_stop_by_elapsed_time(monkeypatch):
    # every row takes a poll interval: should_stop is asked at every row, so the third ask stops it at row 2
    # (it used to be asked at row 2,048 only, so a 100-row model was never stopped)
    monkeypatch.setattr(solver_compile, "_clock", Clock(solver_compile.POLL_SECONDS))
    stop = FlipsAfter(3)
    with pytest.raises(CompileStopped, match="after 2 rows"):
        compile_model(_rows(100), should_stop=stop)
    assert stop.calls == 3


def test_the_hand_off_does_not_poll_when_no_time_passes(monkeypatch):
    # a frozen clock: only the first row asks, however many rows there are; the model compiles
    monkeypatch.setattr(solver_compile, "_clock", lambda: 0.0)
    stop = FlipsAfter(2)
    cm = compile_model(_rows(3000), should_stop=stop)
    assert stop.calls == 1 and cm.n_rows == 3000


def test_a_hand_off_started_after_the_stop_compiles_nothing():
    stop = FlipsAfter(1)
    with pytest.raises(CompileStopped, match="after 0 rows"):
        compile_model(_rows(10), should_stop=stop)
    assert stop.calls == 1


class _StuckRun:
    """Stands in for ``Highs.run`` in a phase that polls nothing (presolve, a long LP): blocks until released
    (or 30 s), optionally pressing Ctrl-C (setting STOP) when it starts."""

    def __init__(self, press_ctrl_c):
        self.press, self.release, self.started = press_ctrl_c, threading.Event(), threading.Event()

    def __call__(self, h):
        self.started.set()
        if self.press:
            STOP.set()
        self.release.wait(30)


@pytest.fixture
def stuck(monkeypatch):
    runs = []

    def make(press_ctrl_c):
        run = _StuckRun(press_ctrl_c)
        monkeypatch.setattr(highs_backend._highspy().Highs, "run", lambda h: run(h))
        runs.append(run)
        return run

    yield make
    for run in runs:     # let the runs left behind end, and check that they are forgotten once they have
        run.release.set()
    highs_backend._wait_left_behind(10)
    assert not highs_backend._left_behind


def _model_and_start():
    m = _rows(40)
    x0 = {i: float(i % 2) for i in range(40)}     # feasible: 20 ones, the optimum
    return m, x0


def _solve_from(m, x0, **kw):
    class Form:     # the smallest formulation solve() accepts a warm start for
        model = m

        def warm_start(self, tree):
            for i, v in x0.items():
                m.x[i].set_value(v)
    return solve(Form(), "highs", warm_start=object(), **kw)


def test_ctrl_c_during_a_highs_phase_that_polls_nothing_returns_the_start(stuck):
    run = stuck(press_ctrl_c=True)
    m, x0 = _model_and_start()
    res = _solve_from(m, x0)
    assert run.started.is_set() and not run.release.is_set()    # returned while HiGHS was still "running"
    assert len(highs_backend._left_behind) == 1 and highs_backend._left_behind[0].is_alive()
    assert res.status == "interrupted" and res.has_solution and res.objective == pytest.approx(20.0)
    assert not res.proven_optimal
    assert [m.x[i].value for i in range(4)] == [0.0, 1.0, 0.0, 1.0]   # the start, loaded back
    assert not STOP.is_set()       # the solve's own stop_on_sigint block cleared it


def test_a_highs_run_past_its_budget_is_left_behind_with_status_time_limit(stuck):
    run = stuck(press_ctrl_c=False)
    m, x0 = _model_and_start()
    res = _solve_from(m, x0, time_limit=0.3)
    assert not run.release.is_set() and len(highs_backend._left_behind) == 1
    assert res.status == "time_limit" and res.termination == "time_limit"
    assert res.has_solution and res.objective == pytest.approx(20.0) and not res.proven_optimal


def test_the_next_highs_run_waits_for_the_one_left_behind(stuck, monkeypatch):
    run = stuck(press_ctrl_c=True)
    m, x0 = _model_and_start()
    _solve_from(m, x0)
    left = highs_backend._left_behind[0]
    assert left.is_alive()
    monkeypatch.undo()      # the real Highs.run again
    threading.Timer(0.2, run.release.set).start()
    res = solve(_rows(40), "highs", time_limit=60)
    assert not left.is_alive() and not highs_backend._left_behind    # _build waited for it before starting
    assert res.proven_optimal and res.objective == pytest.approx(20.0)


def test_the_callbacks_of_a_run_left_behind_only_interrupt_it():
    """Once left behind, a run's callbacks touch nothing (its result is already settled) and say "stop"."""
    run = highs_backend.HighsRun(compile_model(_rows(10)), highs_backend.SolveOptions())
    subscribed = []

    class Event:     # HiGHS's callback slot, and the event it hands a callback
        flag = None

        def subscribe(self, fn):
            subscribed.append(fn)

        def interrupt(self, value=True):
            self.flag = value

    calls = []
    run.subscribe(Event(), calls.append)
    e = Event()
    subscribed[0](e)
    assert calls == [e] and e.flag is None          # an active run: the callback runs
    run.left = True
    e = Event()
    subscribed[0](e)
    assert calls == [calls[0]] and e.flag is True    # left behind: only "interrupt"
