"""Ctrl-C and wall-clock budgets shared by every long-running method.

Why: a solver or a numba kernel that receives SIGINT mid-run either ignores it (the signal is only seen
when Python bytecode runs) or dies with nothing written. Instead, the first Ctrl-C sets a flag that every
loop and solver callback polls and stops on, keeping the best tree found so far; a second Ctrl-C raises
``KeyboardInterrupt`` at once, for a user who really wants out.

``Budget`` carries one ``time_limit`` across the stages of a fit (encoding, build, hand-off, solve,
extraction) so that the limit is the wall time of the whole fit, not of the solver alone.
"""
from __future__ import annotations

import contextlib
import logging
import math
import signal
import threading
import time


class StopFlag:
    """Set by the first Ctrl-C (or by code that wants a run to stop); polled by loops and solver callbacks."""

    def __init__(self):
        self._event = threading.Event()

    def set(self) -> None:
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    def clear(self) -> None:
        self._event.clear()


#: the process-wide flag the SIGINT handler sets; solvers and heuristics poll it
STOP = StopFlag()


@contextlib.contextmanager
def stop_on_sigint():
    """Within the block, the first SIGINT sets :data:`STOP` instead of raising; a second one raises.

    Nested use is fine (only the outermost installs the handler). Outside the main thread signals cannot be
    handled, so the block is a no-op there. On exit the previous handler is restored; the flag is cleared
    when the outermost block is left so the next fit starts fresh.
    """
    if threading.current_thread() is not threading.main_thread() or _depth[0] > 0:
        _depth[0] += 1
        try:
            yield STOP
        finally:
            _depth[0] -= 1
        return

    def handler(signum, frame):
        already = STOP.is_set()
        STOP.set()
        if already or _raise_now[0] > 0:
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, handler)
    _depth[0] += 1
    try:
        yield STOP
    finally:
        _depth[0] -= 1
        signal.signal(signal.SIGINT, previous)
        STOP.clear()


_depth = [0]
_raise_now = [0]


@contextlib.contextmanager
def raise_on_sigint():
    """Within the block (inside :func:`stop_on_sigint`), Ctrl-C raises ``KeyboardInterrupt`` at once.

    For pure-Python stages that poll nothing, such as building a Pyomo model: the caller catches the
    exception and falls back to the best tree it already has (``STOP`` is set as well, so later stages stop).
    """
    _raise_now[0] += 1
    try:
        yield STOP
    finally:
        _raise_now[0] -= 1


class Budget:
    """The one time argument of every layer: a wall-clock budget started once and shared by every stage of a fit
    (``None`` = no limit), plus Ctrl-C (:data:`STOP`).

    Every layer takes it as ``time_limit=`` (the heuristics, the DPs, :func:`opttrees.solvers.solve`,
    ``fit_spot_mio``), where a float still means "this many seconds from now". ``Budget(budget)`` shares
    the given budget's clock (it does not restart it), so a stage handed a Budget stops when the fit's time is
    up; :meth:`share` gives a stage a fraction of what is left.
    """

    def __init__(self, time_limit: float | Budget | None):
        self.time_limit: float | None
        self.t0: float
        if isinstance(time_limit, Budget):
            self.time_limit, self.t0 = time_limit.time_limit, time_limit.t0
        else:
            self.time_limit = None if time_limit is None or math.isinf(time_limit) else float(time_limit)
            self.t0 = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def remaining(self) -> float | None:
        """Seconds left (never below a small positive floor so a solver still returns its start), or None."""
        if self.time_limit is None:
            return None
        return max(self.time_limit - self.elapsed(), 0.05)

    def expired(self) -> bool:
        return self.time_limit is not None and self.elapsed() >= self.time_limit

    def stop(self) -> bool:
        """True when the budget is spent or the user pressed Ctrl-C: the question every loop asks."""
        return self.expired() or STOP.is_set()

    def less(self, seconds: float) -> Budget:
        """The same clock ending ``seconds`` earlier (room for the work after a stage); no limit stays none."""
        out = Budget(self)
        if out.time_limit is not None:
            out.time_limit = max(out.time_limit - seconds, 0.0)
        return out

    def share(self, fraction: float) -> Budget:
        """A new budget of ``fraction`` of the time left, starting now (no limit when this one has none): a warm
        start that leaves the rest to the solver. Ctrl-C still stops it."""
        left = self.remaining()
        return Budget(None if left is None else fraction * left)


def seconds(time_limit: float | Budget | None) -> float | None:
    """A time argument as seconds from now (None: no limit): what a solver's own time limit wants."""
    if isinstance(time_limit, Budget):
        return time_limit.remaining()
    return time_limit


#: solver runs left behind after a Ctrl-C or past their budget (threads still ending: a solver phase that polls
#: nothing, see :mod:`opttrees.solvers.highs`); HiGHS's scheduler is process-global, so any code about to run
#: HiGHS waits for them first (:func:`wait_left_behind`)
LEFT_BEHIND: list[threading.Thread] = []


def wait_left_behind(timeout: float | None = None) -> None:
    """Wait for the solver runs left behind by a stop (each ends at its next interrupt poll or time limit)."""
    t0 = time.perf_counter()
    for t in list(LEFT_BEHIND):
        if t.is_alive():
            logging.getLogger("opttrees").info("waiting for an interrupted HiGHS run to end before starting another")
            t.join(None if timeout is None else max(timeout - (time.perf_counter() - t0), 0.0))
        if not t.is_alive():
            LEFT_BEHIND.remove(t)
