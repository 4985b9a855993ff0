"""Solver options and the live state of one solve shared by both adapters (trace, progress, stop requests)."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from ..interrupt import STOP, Budget
from ..progress import ProgressLine, fmt
from .result import Incumbent, relative_gap


def _finite(v: float) -> float:
    """Solvers encode 'none yet' as +-1e20 or +-inf; report it as inf consistently."""
    return math.inf if v is None or not math.isfinite(v) or abs(v) >= 1e19 else float(v)


@dataclass
class SolveOptions:
    time_limit: float | None = None
    mip_gap: float = 1e-6
    threads: int = 1
    seed: int = 0
    verbose: int = 0                      # 0 silent, 1 opttrees progress lines, 2 also the solver log
    callbacks: list = field(default_factory=list)  # fn(Incumbent) -> True to stop
    budget: Budget = field(default_factory=lambda: Budget(None))   # the whole solve, hand-off included

    def remaining(self) -> float | None:
        """Seconds left in the budget (may be <= 0: the hand-off polls it to give up), or None without a limit."""
        if self.budget.time_limit is None:
            return None
        return self.budget.time_limit - self.budget.elapsed()


#: a dual bound that moved by more than this (relative) enters the trace even without a new incumbent
BOUND_MOVE = 1e-6


class Progress:
    """Collects the incumbent and bound trace, shows live progress when verbose, and says when to stop.

    ``stop`` is true when a user callback asked for it or the user pressed Ctrl-C (:data:`opttrees.interrupt.STOP`).
    """

    def __init__(self, solver: str, options: SolveOptions, sense: int = 1):
        self.solver, self.options, self.sense = solver, options, sense
        self.trace: list[Incumbent] = []
        self._stop = False
        self.t0 = time.perf_counter()
        self.line = ProgressLine(solver, enabled=bool(options.verbose), time_limit=options.remaining())
        self._primal, self._dual = math.inf, math.inf

    @property
    def stop(self) -> bool:
        return self._stop or STOP.is_set()

    @stop.setter
    def stop(self, value: bool) -> None:
        self._stop = bool(value)

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def incumbent(self, primal: float, dual: float, nodes: int = 0, t: float | None = None) -> None:
        t = self.elapsed() if t is None else t
        primal, dual = _finite(primal), _finite(dual)
        if self.trace and math.isfinite(primal):
            last = self.trace[-1].primal
            # only strict improvements enter the trace: the same start reported twice (SCIP re-reports it
            # after presolve with round-off in the last digits) or a worse point is not a new incumbent
            if math.isfinite(last) and self.sense * (primal - last) >= -1e-9 * max(1.0, abs(last)):
                self.tick(primal, dual, nodes)
                return
        if not math.isfinite(dual) and math.isfinite(self._dual):
            dual = self._dual
        inc = Incumbent(t, primal, dual, relative_gap(primal, dual), nodes, "incumbent")
        self.trace.append(inc)
        self._show(primal, dual, nodes)
        self.line.note(f"new incumbent={fmt(inc.primal)} bound={fmt(dual)}")
        self._ask(inc)

    def tick(self, primal: float, dual: float, nodes: int = 0) -> None:
        """Periodic solver state: updates the display and records bound moves in the trace."""
        primal, dual = _finite(primal), _finite(dual)
        if not math.isfinite(primal) and self.trace:
            primal = self.trace[-1].primal
        if math.isfinite(dual):
            prev = self._dual
            if not math.isfinite(prev) or abs(dual - prev) > BOUND_MOVE * max(1.0, abs(prev)):
                self.trace.append(Incumbent(self.elapsed(), primal, dual, relative_gap(primal, dual), nodes,
                                            "bound"))
        self._show(primal, dual, nodes)

    def _show(self, primal, dual, nodes) -> None:
        if math.isfinite(dual):
            self._dual = dual
        if math.isfinite(primal):
            self._primal = primal
        self.line.update(incumbent=self._primal, bound=self._dual, gap=relative_gap(self._primal, self._dual),
                         nodes=int(nodes))

    def close(self) -> None:
        self.line.close()

    def _ask(self, inc: Incumbent) -> None:
        for cb in self.options.callbacks:
            if cb(inc):
                self._stop = True
