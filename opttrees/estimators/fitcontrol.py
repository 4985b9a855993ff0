"""Ctrl-C and ``time_limit`` for every estimator's ``fit``: one helper, used by all of them.

The contract (docs/solvers.md, "Stopping a fit"):

- ``time_limit`` is the wall time of the **whole** fit: input checks and encoding, warm start / heuristics,
  the Pyomo model build, the hand-off to the solver, the solve and the extraction of the tree. A
  :class:`~opttrees.interrupt.Budget` is started when ``fit`` starts and every stage asks it for the
  time that is left; the solver gets ``budget.remaining()``.
- The first Ctrl-C during ``fit`` stops it within about a second and ``fit`` **returns** normally with the
  best tree found so far: ``fit_status_ == "interrupted"``, ``solve_result_.status == "interrupted"`` for
  MIO methods, and an :class:`InterruptedFitWarning`. A second Ctrl-C raises ``KeyboardInterrupt`` at once.
  In a loop of fits (a script, ``GridSearchCV``), wrap the loop in
  ``with opttrees.interrupt.stop_on_sigint():`` so that one Ctrl-C ends every remaining fit quickly
  (each returns its fallback tree), or press Ctrl-C twice.
- A Pyomo model build polls nothing, so it runs under :func:`~opttrees.interrupt.raise_on_sigint` (Ctrl-C
  aborts it at once) and under a ``SIGALRM`` timer set to the deadline (the build is abandoned when the time
  is up). Either way the fit falls back to the warm-start / heuristic tree, which is always computed first.

After ``fit``: ``fit_status_`` ("completed", "time_limit" or "interrupted") and ``fit_timings_`` (seconds per
stage plus "total"); MIO estimators also record ``solve_result_.timings["build"]`` next to the solver
layer's "compile", "n_rows", "n_cols" and "n_nonzeros".
"""
from __future__ import annotations

import contextlib
import logging
import signal
import threading
import time
import warnings


from ..interrupt import STOP, Budget, raise_on_sigint, stop_on_sigint
from ..dp.planner import EXTRACT_PER_BUILD, HANDOFF_PER_BUILD
from ..jit import ABANDONED, run_abandonable

#: values of ``fit_status_``
FIT_STATUSES = {
    "completed": "the fit ran to its end (for a MIO: see solve_result_.status for optimality)",
    "time_limit": "time_limit ran out; the tree is the best found within it",
    "interrupted": "stopped by Ctrl-C; the tree is the best found so far",
}



class InterruptedFitWarning(UserWarning):
    """``fit`` was stopped by Ctrl-C and returned the best tree found so far."""


class _DeadlinePassed(BaseException):
    """Raised by the SIGALRM timer inside a model build (a BaseException, so no ``except Exception`` in
    Pyomo or user code swallows it)."""


@contextlib.contextmanager
def _alarm_at(budget: Budget):
    """Raise :class:`_DeadlinePassed` in the main thread when ``budget`` expires (for stages that poll
    nothing). A no-op without a time limit, off the main thread, or without ``setitimer`` (Windows)."""
    if (budget.time_limit is None or threading.current_thread() is not threading.main_thread()
            or not hasattr(signal, "setitimer")):
        yield
        return
    left = budget.time_limit - budget.elapsed()
    if left <= 0:
        raise _DeadlinePassed()
    armed = [True]

    def handler(signum, frame):
        if armed[0]:
            raise _DeadlinePassed()

    previous = signal.signal(signal.SIGALRM, handler)
    old_delay, old_interval = signal.setitimer(signal.ITIMER_REAL, left)
    t0 = time.monotonic()
    try:
        yield
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if old_delay > 0:   # someone else's timer was running: give it back what is left of it
            signal.setitimer(signal.ITIMER_REAL, max(old_delay - (time.monotonic() - t0), 1e-3), old_interval)


class _DropAbortLogs(logging.Filter):
    """Pyomo logs "Constructing component ... failed" before re-raising; an abandoned build is not an error."""

    def filter(self, record) -> bool:
        text = record.getMessage()
        return "_DeadlinePassed" not in text and "KeyboardInterrupt" not in text


_DROP_ABORT_LOGS = _DropAbortLogs()


@contextlib.contextmanager
def _quiet_aborts():
    logger = logging.getLogger("pyomo")
    handlers = [h for lg in (logger, logging.getLogger("pyomo.core")) for h in lg.handlers]
    for lg in (logger, logging.getLogger("pyomo.core")):
        lg.addFilter(_DROP_ABORT_LOGS)
    for h in handlers:
        h.addFilter(_DROP_ABORT_LOGS)
    try:
        yield
    finally:
        for lg in (logger, logging.getLogger("pyomo.core")):
            lg.removeFilter(_DROP_ABORT_LOGS)
        for h in handlers:
            h.removeFilter(_DROP_ABORT_LOGS)


#: seconds per training row kept back from a stage that may use all the time left, for the fit's work after it
#: (the tree routed through the data to verify it, node statistics, display bounds): 100,000 x 20 at depth 3 took
#: 0.27 s after a DP stopped by its limit (a 5 s limit returned in 5.32 s), so 3 microseconds per row
EPILOGUE_SECONDS_PER_ROW = 3e-6
#: ... but never more than this share of the time limit
EPILOGUE_MAX_SHARE = 0.1


class FitControl:
    """The deadline, stage timings and stop reason of one ``fit`` (see the module docstring)."""

    def __init__(self, time_limit: float | Budget | None):
        self.budget = Budget(time_limit)   # a Budget given: its clock is shared (a stage of a larger fit)
        self.reserve = 0.0                 # seconds the stages leave for the epilogue (:meth:`reserve_epilogue`)
        self.timings: dict[str, float] = {}
        self.aborted: str | None = None      # the first stage cut short (e.g. "build"), if any
        self.cut_short = False               # some stage ended early because of Ctrl-C or the deadline
        self.status = "completed"

    # ------------------------------------------------------------------------------------ questions
    def stop(self) -> bool:
        """Ctrl-C was pressed or the time is up: stop starting new work. The stages' time ends at the epilogue's
        reserve (:meth:`reserve_epilogue`), so a search that stopped there counts as stopped by the limit."""
        return self.budget.stop() or self._stages_expired()

    def _stages_expired(self) -> bool:
        return bool(self.reserve) and self.budget.less(self.reserve).expired()

    def remaining(self) -> float | None:
        return self.budget.remaining()

    def mark_cut_short(self, stage: str) -> None:
        """Record that ``stage`` ended early (it saw :meth:`stop`)."""
        self.cut_short = True
        self.aborted = self.aborted or stage

    @contextlib.contextmanager
    def stage(self, name: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - t0

    # ------------------------------------------------------------------------------------ stages
    def run(self, name: str, fn, *args, fallback=None, cheap: bool = False, threaded: bool = False, **kwargs):
        """``fn(*args, **kwargs)`` for a stage that polls nothing (a Pyomo build, a greedy start tree).

        Runs under :func:`~opttrees.interrupt.raise_on_sigint` and a timer set to the deadline: Ctrl-C or the
        end of the time abandons it, and so does a fit that is already stopping. Then ``fallback()`` (a
        cheaper result) is returned, or None without one. ``cheap``: a stage of a fraction of a second (CART
        on the raw features) that still runs when the fit is already stopping (its tree is much better than
        the fallback); only a new Ctrl-C abandons it. ``threaded``: for a stage that spends its time in one
        long C call (scikit-learn's CART on a wide binary matrix), where a Python signal handler only runs
        when the call returns: it runs in a daemon thread and, when abandoned, is left to finish there (its
        result is dropped) while the fit returns.
        """
        if self.stop() and not cheap:
            self.mark_cut_short(name)
            return fallback() if fallback is not None else None
        timer = contextlib.nullcontext() if cheap and self.stop() else _alarm_at(self.budget)
        with self.stage(name):
            try:
                with raise_on_sigint(), timer, _quiet_aborts():
                    if threaded:
                        out = run_abandonable(lambda: fn(*args, **kwargs), self.budget)
                        if out is not ABANDONED:
                            return out[0]
                        raise _DeadlinePassed()
                    return fn(*args, **kwargs)
            except (KeyboardInterrupt, _DeadlinePassed):
                if not STOP.is_set() and not self.budget.expired():
                    raise   # a KeyboardInterrupt that is not ours to absorb
                self.mark_cut_short(name)
        return fallback() if fallback is not None else None

    def search(self, name: str, fn, *args, share: float = 1.0, stopped=None, mark: str | None = None, **kwargs):
        """``fn(*args, time_limit=..., **kwargs)`` in the stage ``name``, for a search that polls the deadline and
        Ctrl-C itself and returns its best so far (a local search, a dynamic program, the greedy tree): it gets
        ``share`` of the time left (:meth:`time`), and the fit is marked cut short (as ``mark``, default ``name``)
        when ``stopped(out)`` says the search stopped early (default: when the fit is stopping)."""
        with self.stage(name):
            out = fn(*args, time_limit=self.time(share), **kwargs)
        if self.stop() if stopped is None else stopped(out):
            self.mark_cut_short(mark or name)
        return out

    def build(self, make, *args, **kwargs):
        """A Pyomo model build (see :meth:`run`): the formulation, or None when it was abandoned."""
        return self.run("build", make, *args, **kwargs)

    def solve(self, form, warm_start=None, solver="highs", **options):
        """``opttrees.solvers.solve`` with ``time_limit = budget.remaining()``; build time in its timings.

        When the fit is already stopping (Ctrl-C, time up) the solver is not started at all (its hand-off
        alone can take seconds on a large model): the result says so and has no solution.
        """
        from ..solvers import solve

        build = self.timings.get("build", 0.0)
        left = self.budget.time_limit - self.budget.elapsed() if self.budget.time_limit is not None else None
        if form is None:
            res = stopped_result(self.reason(), solver, f"stopped during the model build ({build:.2f} s)"
                                 if "build" in self.timings else "stopped before the model build")
        elif self.stop():
            self.mark_cut_short("solve")
            res = stopped_result(self.reason(), solver, "stopped before the solve started")
        elif left is not None and left < HANDOFF_PER_BUILD.get(str(solver).lower(), 3.0) * build:
            # the hand-off (compile + load) costs about as much as the Pyomo build and cannot be cut short:
            # starting it now would overrun the limit and leave the solver no time to improve the start
            self.mark_cut_short("solve")
            res = stopped_result("time_limit", solver, f"no time left for the solver: {left:.2f} s left after a "
                                 f"{build:.2f} s model build (the hand-off to the solver takes about as long)")
        else:
            # keep back the time the extraction needs (decode + re-verify: ~10% of the build time)
            limit = None if left is None else max(left - min(EXTRACT_PER_BUILD * build + 0.05, 0.25 * left), 0.05)
            with self.stage("solve"):
                res = solve(form, solver=solver, time_limit=limit, warm_start=warm_start, **options)
        if build:
            res.timings["build"] = build
        return res

    def time(self, share: float = 1.0) -> Budget:
        """The one way a stage is handed its time (``time_limit=`` of the layer below): the fit's own Budget
        (its clock shared) for a stage that may use everything left, else a budget of ``share`` of the time left
        from now (a start leaving the rest to the solver: :data:`~opttrees.dp.planner.START_SHARE`); no limit when
        the fit has none. Ctrl-C stops either (every stage polls ``STOP``)."""
        base = self.budget.less(self.reserve) if self.reserve else self.budget
        return base if share >= 1.0 else base.share(share)

    def reserve_epilogue(self, n_rows: int) -> None:
        """Keep :data:`EPILOGUE_SECONDS_PER_ROW` per row (at most :data:`EPILOGUE_MAX_SHARE` of the limit) back
        from the stages :meth:`time` hands out, so a fit stopped by its limit still returns within it."""
        limit = self.budget.time_limit
        if limit is not None:
            self.reserve = min(EPILOGUE_SECONDS_PER_ROW * n_rows, EPILOGUE_MAX_SHARE * limit)

    def reason(self) -> str:
        """Why the fit is stopping now: "interrupted" (Ctrl-C wins), "time_limit", or "completed"."""
        if STOP.is_set():
            return "interrupted"
        if self.budget.expired() or self._stages_expired():
            return "time_limit"
        return "completed"

    def finish(self, est, solve_result=None) -> None:
        """Set ``fit_status_`` / ``fit_timings_`` on ``est`` (called inside the stop_on_sigint block)."""
        if STOP.is_set():
            status = "interrupted"
        elif self.cut_short or (solve_result is not None and "time_limit" in (
                solve_result.status, getattr(solve_result, "termination", None))):
            # the solver's time ran out, with an incumbent ("time_limit") or without one ("no_solution")
            status = "time_limit"
        else:
            status = "completed"
        if solve_result is not None and status == "interrupted":
            solve_result.interrupted()
        self.status = status
        self.timings["total"] = self.budget.elapsed()
        est.fit_status_ = status
        est.fit_timings_ = dict(self.timings)
        if status == "interrupted":
            where = f" during the {self.aborted}" if self.aborted else ""
            warnings.warn(f"{type(est).__name__}.fit was interrupted (Ctrl-C){where}: keeping the best tree found "
                          f"so far (fit_status_='interrupted')", InterruptedFitWarning, stacklevel=5)


def warn_time_limit(est, ctl: FitControl, what: str) -> None:
    """Warn that ``time_limit`` cut ``what`` short (heuristics: the user may not expect the limit to apply)."""
    if ctl.cut_short and ctl.reason() == "time_limit":
        warnings.warn(f"{type(est).__name__}: time_limit={ctl.budget.time_limit:g} s reached during {what}",
                      stacklevel=3)


@contextlib.contextmanager
def controlled_fit(est, time_limit: float | None):
    """Run the body of ``fit`` under :func:`~opttrees.interrupt.stop_on_sigint` and one deadline.

    Yields a :class:`FitControl`; on normal exit sets ``fit_status_`` / ``fit_timings_`` (and marks
    ``est.solve_result_`` interrupted when Ctrl-C stopped the fit).
    """
    with stop_on_sigint():
        ctl = FitControl(time_limit)
        yield ctl
        ctl.finish(est, getattr(est, "solve_result_", None))


def stopped_result(status: str, solver: str, message: str):
    """A SolveResult for a MIO that was never (or only partly) run because the fit was stopping."""
    from ..solvers.result import finish

    return finish(str(solver), "", status if status != "completed" else "interrupted", None, None, 0.0, 0, [],
                  message=message)
