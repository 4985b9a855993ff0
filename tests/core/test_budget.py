"""Budget: the one time argument of every layer (a running clock shared, not restarted, by the stages)."""
import time

import numpy as np
import pytest

from opttrees.dp import solve_dp
from opttrees.interrupt import Budget, seconds


def test_a_budget_handed_on_shares_the_clock_and_a_share_is_a_fraction_of_what_is_left():
    b = Budget(10.0)
    time.sleep(0.05)
    same = Budget(b)
    assert same.t0 == b.t0 and same.time_limit == 10.0
    assert same.remaining() == pytest.approx(b.remaining(), abs=0.01) and same.remaining() < 9.96
    part = b.share(0.5)
    assert part.remaining() == pytest.approx(0.5 * b.remaining(), abs=0.02)
    assert Budget(None).share(0.5).time_limit is None and Budget(float("inf")).time_limit is None
    assert seconds(None) is None and seconds(3.0) == 3.0 and seconds(Budget(None)) is None


def test_stages_leave_the_epilogue_its_time_per_row_capped_at_a_tenth_of_the_limit():
    """A stage that may use everything left ends EPILOGUE_SECONDS_PER_ROW per row early (at 100,000 rows a DP
    stopped by a 5 s limit left 0.27 s of verification after it: the fit returned at 5.32 s), never more than a
    tenth of the limit; the fit's own clock is unchanged, and no limit stays none."""
    from opttrees.estimators import fitcontrol
    from opttrees.estimators.fitcontrol import FitControl

    ctl = FitControl(5.0)
    ctl.reserve_epilogue(100_000)
    assert ctl.reserve == pytest.approx(100_000 * fitcontrol.EPILOGUE_SECONDS_PER_ROW)
    stage = ctl.time()
    assert stage.t0 == ctl.budget.t0 and stage.time_limit == pytest.approx(5.0 - ctl.reserve)
    assert ctl.budget.time_limit == 5.0
    assert ctl.time(0.5).remaining() == pytest.approx(0.5 * stage.remaining(), abs=0.02)
    big = FitControl(5.0)
    big.reserve_epilogue(10 ** 8)
    assert big.reserve == pytest.approx(0.5)
    free = FitControl(None)
    free.reserve_epilogue(10 ** 6)
    assert free.reserve == 0.0 and free.time().time_limit is None


def test_a_search_stopped_at_the_reserve_counts_as_stopped_by_the_limit():
    """Between the stages' deadline (the limit less the epilogue's reserve) and the limit itself, the fit is stopping
    and its reason is the time limit: a local search that ended there was cut short (a loaded CI once saw neither, so
    the fit reported "completed" and no time-limit warning)."""
    from opttrees.estimators.fitcontrol import FitControl

    ctl = FitControl(1.0)
    ctl.reserve_epilogue(10 ** 8)                 # 0.1 s
    ctl.budget.t0 = time.perf_counter() - 0.5     # half the time gone: nothing stops yet
    assert not ctl.stop() and ctl.reason() == "completed"
    ctl.budget.t0 = time.perf_counter() - 0.95    # past the stages' 0.9 s, before the 1.0 s limit
    assert not ctl.budget.expired()
    assert ctl.stop() and ctl.reason() == "time_limit"
    out = ctl.search("local_search", lambda time_limit: "tree")
    assert out == "tree" and ctl.cut_short


def test_an_epilogue_reserve_is_what_a_time_limited_dp_fit_is_handed(monkeypatch):
    """The template fit reserves the epilogue's time before any method runs: the DP stage sees the limit minus it."""
    import opttrees.dp as dp_pkg
    from opttrees import OptimalTreeClassifier

    seen = []
    solve = dp_pkg.solve_dp

    def spy(*args, **kwargs):
        seen.append(kwargs.get("time_limit"))
        return solve(*args, **kwargs)

    monkeypatch.setattr(dp_pkg, "solve_dp", spy)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int)
    OptimalTreeClassifier(max_depth=2, method="dp", time_limit=2.0).fit(X, y)
    assert seen and isinstance(seen[0], Budget)
    assert seen[0].time_limit == pytest.approx(2.0 - 300 * 3e-6)


def test_an_expired_budget_stops_the_dp_at_once_and_says_so():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 6))
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int)
    spent = Budget(0.01)
    time.sleep(0.05)
    assert spent.expired()
    t0 = time.perf_counter()
    tree, res = solve_dp(X, y, max_depth=3, time_limit=spent)
    assert time.perf_counter() - t0 < 5.0
    assert res.status in ("time_limit", "interrupted") and not res.proven_optimal
    assert tree.predict(X).shape == (400,)


def test_solve_takes_a_budget():
    from opttrees.data.prepared import prepare
    from opttrees.formulations.oct import OCT
    from opttrees.solvers import solve

    rng = np.random.default_rng(1)
    X = np.round(rng.uniform(size=(30, 2)), 1)
    y = (X[:, 0] > 0.5).astype(int)
    form = OCT(prepare(X, y), 1)
    res = solve(form, time_limit=Budget(30.0))
    assert res.proven_optimal and res.objective == pytest.approx(0.0)


def test_every_heuristic_takes_time_limit_as_seconds_or_a_budget():
    """One name for the time argument across the layers: the heuristics take ``time_limit=`` like the DP and
    ``solve``; a spent Budget stops them at once with a valid tree (at least one restart always runs)."""
    from opttrees.data.prepared import prepare
    from opttrees.heuristics import greedy_tree, local_search
    from opttrees.heuristics.local_search import improve_tree
    from opttrees.heuristics.tuning import tune

    rng = np.random.default_rng(2)
    X = np.round(rng.normal(size=(3000, 8)), 2)
    y = (X[:, 0] + 0.5 * X[:, 1] * X[:, 2] > 0).astype(int)
    data = prepare(X, y)
    spent = Budget(0.01)
    time.sleep(0.05)
    for limit in (600.0, Budget(600.0), spent):   # generous: a loaded machine must not reach them
        g = greedy_tree(data, 2, time_limit=limit)
        res = local_search(data, 3, 0.0, n_restarts=400, random_state=0, time_limit=limit, return_all=True)
        assert res.stopped == (limit is spent) and 1 <= res.n_done and (res.n_done == 400) == (limit is not spent)
        assert res.objective <= 1.0 and g.predict(X).shape == (3000,)
        assert improve_tree(data, g, 2, time_limit=limit).predict(X).shape == (3000,)
        out = tune(data, X, y, max_depth=3, n_restarts=4, random_state=0, time_limit=limit)
        assert len(out.table) == (1 if limit is spent else 3)
    with pytest.raises(TypeError):
        local_search(data, 2, deadline=Budget(1.0))   # the old keyword is gone, not silently ignored


def test_work_that_polls_nothing_is_abandoned_at_the_limit_and_otherwise_returned():
    """``run_abandonable`` (the fit stages' thread, on ``run_threads``): a finished call gives its value, an error is
    raised in the caller, and a call still running when the budget is spent is left behind (ABANDONED) without
    waiting for it."""
    import threading

    from opttrees.jit import ABANDONED, run_abandonable
    assert run_abandonable(lambda: 41 + 1, Budget(None)) == [42]
    with pytest.raises(ZeroDivisionError):
        run_abandonable(lambda: 1 / 0, Budget(None))
    release, finished = threading.Event(), threading.Event()

    def long_call():          # a C call that polls nothing: only ends when released
        release.wait(60)
        finished.set()
        return 1

    try:
        assert run_abandonable(long_call, Budget(0.05)) is ABANDONED
        assert not finished.is_set()
    finally:
        release.set()
