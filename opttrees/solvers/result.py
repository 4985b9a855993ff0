"""One result type and one gap definition for every solver.

HiGHS reports (P-D)/|P| and SCIP |P-D|/min(|P|,|D|); the same state read 0.975 vs 39.7. opttrees always
reports ``gap = |P - D| / max(|P|, 1e-10)`` (0 when |P - D| <= 1e-9, inf without an incumbent or bound).
"""
from __future__ import annotations

import math
import logging
from dataclasses import dataclass, field
from enum import Enum

from ..progress import fmt, fmt_gap

log = logging.getLogger(__name__)

#: meanings, shown in the README and the CLI
STATUSES = {
    "optimal": "solved to proven optimality: objective and bound agree (gap <= 1e-6)",
    "gap_limit": "stopped because the requested mip_gap was reached; feasible, not proven optimal (see gap)",
    "time_limit": "stopped at the time limit; the incumbent is feasible but not proven optimal",
    "interrupted": "stopped by a callback or the user; the incumbent is feasible but not proven optimal",
    "limit": "stopped by a node/solution/iteration limit; not proven optimal",
    "unverified": "the solver's own objective differs from the returned tree's (a solver inconsistency, logged); "
                  "the tree's objective is reported and nothing is proven",
    "infeasible": "the model has no feasible solution (check min_samples_leaf and other settings)",
    "unbounded": "the objective is unbounded (a modelling error)",
    "no_solution": "the solver stopped without any feasible solution",
    "error": "the solver failed; see the message",
}


def relative_gap(primal: float | None, dual: float | None) -> float:
    if primal is None or dual is None or not math.isfinite(primal) or not math.isfinite(dual):
        return math.inf
    diff = abs(primal - dual)
    if diff <= 1e-9:
        return 0.0
    return diff / max(abs(primal), 1e-10)


#: objective and bound closer than this (relative, in the gap definition above, or absolute) prove optimality
PROVEN_TOL = 1e-6


def is_proven_optimal(objective: float | None, bound: float | None) -> bool:
    """The project rule: proven optimal only when the objective and a valid bound agree (the solver proved it).

    Reaching a user's ``mip_gap`` (HiGHS kOptimal, SCIP "gaplimit") is not a proof.
    """
    if objective is None or bound is None or not math.isfinite(objective) or not math.isfinite(bound):
        return False
    return abs(objective - bound) <= PROVEN_TOL or relative_gap(objective, bound) <= PROVEN_TOL


def settle_status(status: str, objective: float | None, bound: float | None) -> tuple[str, bool]:
    """Final (status, proven_optimal) from a solver's stop reason, used by both adapters and the cut loop.

    ``status`` is "optimal" when the solver stopped because the gap closed to within its tolerances, which
    include the requested mip_gap (HiGHS kOptimal, SCIP "optimal"/"gaplimit"). That is "optimal" and proven
    only if :func:`is_proven_optimal`; otherwise it is "gap_limit". Other statuses pass through, unproven.
    """
    if status in ("optimal", "gap_limit"):
        if objective is None:
            return "no_solution", False
        if is_proven_optimal(objective, bound):
            return "optimal", True
        return "gap_limit", False
    return status, False


class TerminationCondition(str, Enum):
    """Why the solver stopped (as in Pyomo's ``contrib.solver``; the values are today's status strings)."""

    OPTIMAL = "optimal"            # the gap closed to within the solver's tolerances
    GAP_LIMIT = "gap_limit"        # the user's mip_gap was reached
    TIME_LIMIT = "time_limit"
    INTERRUPTED = "interrupted"    # Ctrl-C or a callback
    LIMIT = "limit"                # nodes, solutions, iterations, or a round that proved nothing
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    ERROR = "error"


class SolutionStatus(str, Enum):
    """What came back."""

    OPTIMAL = "optimal"            # feasible and proven optimal
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"      # the model has no solution
    NO_SOLUTION = "no_solution"


@dataclass
class Incumbent:
    """One point of the incumbent trace (also what progress callbacks receive)."""

    time: float
    primal: float
    dual: float
    gap: float
    nodes: int = 0
    kind: str = "incumbent"     # "incumbent": a new best solution; "bound": the dual bound moved


@dataclass
class SolveResult:
    status: str
    objective: float | None
    bound: float | None
    gap: float
    runtime: float
    node_count: int
    proven_optimal: bool
    solver: str
    has_solution: bool = False
    n_lazy_cuts: int = 0
    n_rounds: int = 1
    trace: list[Incumbent] = field(default_factory=list)
    message: str = ""
    timings: dict = field(default_factory=dict)
    start_objective: float | None = None
    termination: TerminationCondition = TerminationCondition.ERROR
    solution_status: SolutionStatus = SolutionStatus.NO_SOLUTION
    solver_version: str = ""

    def reconcile(self, tree_objective: float, atol: float = 1e-5, rtol: float = 1e-6) -> None:
        """Make the reported objective the returned tree's own (recomputed by routing the data).

        Why: a solver's figure can belong to another point than the one it returned (HiGHS presolve in a
        cut loop). When the two differ the result is no proof, whatever the solver said; the discrepancy is
        logged. When they agree the tree's value replaces the solver's round-off.
        """
        if tree_objective is None or not math.isfinite(tree_objective):
            return
        own = float(tree_objective)
        if self.objective is not None and abs(own - self.objective) > atol + rtol * abs(self.objective):
            log.warning("%s reported objective %.9g but the returned tree scores %.9g; reporting the tree's "
                        "objective, not a proof", self.solver, self.objective, own)
            self.message = (self.message + "; " if self.message else "") + \
                f"solver objective {self.objective:.9g} differs from the tree's {own:.9g}"
            if self.status in ("optimal", "gap_limit"):
                self.status = "unverified"
            self.proven_optimal = False
        self.solution_status = SolutionStatus.OPTIMAL if self.proven_optimal else SolutionStatus.FEASIBLE
        self.objective = own
        self.has_solution = True
        self.gap = relative_gap(own, self.bound)

    def summary(self) -> str:
        return (f"{self.solver}: {self.status}{' (proven optimal)' if self.proven_optimal else ''}  "
                f"objective={fmt(self.objective)} bound={fmt(self.bound)} gap={fmt_gap(self.gap)} "
                f"time={self.runtime:.2f}s nodes={self.node_count}"
                + (f" lazy_cuts={self.n_lazy_cuts} rounds={self.n_rounds}" if self.n_lazy_cuts else ""))

    def plot(self, ax=None):
        """Incumbent and bound over time as step lines (needs the ``plot`` extra: matplotlib)."""
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError("SolveResult.plot needs matplotlib: pip install 'opttrees[plot]'") from None
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 3.5))
        t = [i.time for i in self.trace] + [self.runtime]
        primal = [i.primal for i in self.trace] + ([self.objective] if self.objective is not None else [math.nan])
        dual = [i.dual for i in self.trace] + ([self.bound] if self.bound is not None else [math.nan])
        clean = lambda vs: [v if v is not None and math.isfinite(v) else math.nan for v in vs]
        ax.step(t, clean(primal), where="post", label="incumbent")
        ax.step(t, clean(dual), where="post", label="bound", linestyle="--")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("objective")
        ax.set_title(f"{self.solver}: {self.status}")
        ax.legend()
        return ax

    def to_dict(self) -> dict:
        clean = lambda v: None if v is None or (isinstance(v, float) and not math.isfinite(v)) else v
        return {
            "status": self.status, "status_meaning": STATUSES.get(self.status, ""),
            "objective": clean(self.objective), "bound": clean(self.bound), "gap": clean(self.gap),
            "runtime": self.runtime, "node_count": self.node_count, "proven_optimal": self.proven_optimal,
            "solver": self.solver, "solver_version": self.solver_version,
            "termination": self.termination.value, "solution_status": self.solution_status.value,
            "has_solution": self.has_solution, "n_lazy_cuts": self.n_lazy_cuts,
            "n_rounds": self.n_rounds, "start_objective": clean(self.start_objective),
            "trace": [{"time": i.time, "primal": clean(i.primal), "dual": clean(i.dual), "gap": clean(i.gap),
                       "nodes": i.nodes, "kind": i.kind} for i in self.trace],
            "timings": self.timings, "message": self.message,
        }


def finish(solver: str, version: str, termination: str, objective: float | None, bound: float | None,
           runtime: float, node_count: int, trace: list, **extra) -> SolveResult:
    """The one place a SolveResult is settled, for every adapter.

    ``termination`` is why the solver stopped; ``objective`` the returned point's own objective (None without
    one). Settles proof (:func:`settle_status`), the gap, "no_solution" when a limit came before any solution,
    and both enums.
    """
    term = TerminationCondition(termination)
    has = objective is not None
    status = termination
    if status in ("time_limit", "limit", "interrupted") and not has:
        status = "no_solution"
    status, proven = settle_status(status, objective, bound)
    if proven:
        sol = SolutionStatus.OPTIMAL
    elif has:
        sol = SolutionStatus.FEASIBLE
    elif term is TerminationCondition.INFEASIBLE:
        sol = SolutionStatus.INFEASIBLE
    else:
        sol = SolutionStatus.NO_SOLUTION
    return SolveResult(status=status, objective=objective, bound=bound, gap=relative_gap(objective, bound),
                       runtime=runtime, node_count=node_count, proven_optimal=proven, solver=solver,
                       has_solution=has, trace=trace, termination=term, solution_status=sol,
                       solver_version=version, **extra)
