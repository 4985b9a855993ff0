"""Solver options and progress reporting shared by both adapters."""
from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field

from .result import Incumbent, relative_gap


def _finite(v: float) -> float:
    """Solvers encode 'none yet' as +-1e20 or +-inf; report it as NaN/inf consistently."""
    return math.inf if v is None or not math.isfinite(v) or abs(v) >= 1e19 else float(v)


@dataclass
class SolveOptions:
    time_limit: float | None = None
    mip_gap: float = 1e-6
    threads: int = 1
    seed: int = 0
    verbose: int = 0                      # 0 silent, 1 opttrees progress lines, 2 also the solver log
    callbacks: list = field(default_factory=list)  # fn(Incumbent) -> True to stop


class Progress:
    """Collects the incumbent trace, prints live progress when verbose, and asks callbacks whether to stop."""

    def __init__(self, solver: str, options: SolveOptions, sense: int = 1):
        self.solver, self.options, self.sense = solver, options, sense
        self.trace: list[Incumbent] = []
        self.stop = False
        self._last_print = -math.inf
        self.t0 = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def incumbent(self, primal: float, dual: float, nodes: int = 0, t: float | None = None) -> None:
        t = self.elapsed() if t is None else t
        primal, dual = _finite(primal), _finite(dual)
        inc = Incumbent(t, primal, dual, relative_gap(primal, dual), nodes)
        if self.trace and math.isfinite(primal):
            last = self.trace[-1].primal
            # only strict improvements enter the trace: the same start reported twice (SCIP re-reports it
            # after presolve with round-off in the last digits) or a worse point is not a new incumbent
            if math.isfinite(last) and self.sense * (primal - last) >= -1e-9 * max(1.0, abs(last)):
                return
        self.trace.append(inc)
        self._print("incumbent", inc)
        self._ask(inc)

    def tick(self, primal: float, dual: float, nodes: int = 0) -> None:
        """Periodic progress (rate-limited to one line per second)."""
        now = self.elapsed()
        if self.options.verbose and now - self._last_print >= 1.0:
            primal, dual = _finite(primal), _finite(dual)
            self._print("progress", Incumbent(now, primal, dual, relative_gap(primal, dual), nodes))

    def _ask(self, inc: Incumbent) -> None:
        for cb in self.options.callbacks:
            if cb(inc):
                self.stop = True

    def _print(self, what: str, inc: Incumbent) -> None:
        if not self.options.verbose:
            return
        self._last_print = self.elapsed()
        fmt = lambda v: "-" if v is None or not math.isfinite(v) else f"{v:.6g}"
        gap = "-" if not math.isfinite(inc.gap) else f"{100 * inc.gap:.2f}%"
        print(f"[{self.solver}] {inc.time:7.2f}s {what:9s} incumbent={fmt(inc.primal)} bound={fmt(inc.dual)} "
              f"gap={gap} nodes={inc.nodes}", file=sys.stderr, flush=True)
