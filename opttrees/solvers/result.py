"""One result type and one gap definition for every solver, and where a proof came from.

HiGHS reports (P-D)/|P| and SCIP |P-D|/min(|P|,|D|); the same state read 0.975 vs 39.7. opttrees always
reports ``gap = |P - D| / max(|P|, 1e-10)`` (0 when |P - D| <= 1e-9, inf without an incumbent or bound).

A proof can come from the solver alone (``proof == "solver"``) or lean on a bound computed outside it
(:class:`ObjectiveBound`, e.g. the dynamic program's optimum of a relaxation: ``proof == "dp-bound"``); the
result says which, and :func:`settle_with_bound` is the one place such a bound can make a result optimal.
"""
from __future__ import annotations

import math
import logging
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable

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
    UNVERIFIED = "unverified"      # feasible, but the solver's own figures (objective, proof) do not hold for it
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


#: provenances an :class:`ObjectiveBound` may state (what :func:`opttrees.solvers.solve` accepts)
BOUND_PROVENANCES = {
    "dp-bound": "the dynamic program's optimum (or anytime lower bound) of a relaxation of the formulation: the "
                "same depth, objective scale and minimum leaf size over a split set holding every partition "
                "the MIO can realise (opttrees.dp.bound)",
}


@dataclass(eq=False)
class ObjectiveBound:
    """A bound on a formulation's own objective that was computed outside the solver, with its provenance.

    Why a type and not a number: a bound decides proofs, so it must say where it came from and which
    formulation (and which objective expression of it) it bounds; :func:`opttrees.solvers.solve` refuses a
    bound that does not match. Made by :func:`opttrees.dp.bound.dp_bound`, not by hand.

    ``value`` bounds every tree the formulation can express from below (``sense == 1``, minimisation) or
    above (``sense == -1``); side constraints added to the model only move the optimum away from it.
    ``verify(formulation)`` decodes the solution loaded in the model and returns ``(objective, reason)``:
    the objective the tree scores when the training data is re-routed through it, or None with the reason
    why that point cannot be proven by this bound (e.g. a leaf below the minimum size after a user deactivated
    a formulation row). ``check_model(formulation)`` returns "" when the model still holds every row and
    variable domain of the formulation (side constraints may be added), else why the bound no longer holds.
    """

    value: float
    sense: int
    provenance: str
    formulation: Any
    objective_expr: Any
    verify: Callable[[Any], tuple]
    details: dict = field(default_factory=dict)
    check_model: Callable[[Any], str] | None = None

    def meets(self, objective: float | None) -> bool:
        """``objective`` reaches this bound within the proof tolerance (so a feasible point there is optimal)."""
        if objective is None or not math.isfinite(objective) or not math.isfinite(self.value):
            return False
        return is_proven_optimal(objective, self.value)

    def violated_by(self, objective: float | None) -> bool:
        """A verified feasible objective lies beyond the bound by more than the tolerance: the bound is wrong."""
        if objective is None or not math.isfinite(objective):
            return False
        return self.sense * (objective - self.value) < 0 and not is_proven_optimal(objective, self.value)

    def record(self) -> dict:
        """What the SolveResult keeps (no references to the model)."""
        return {"value": self.value, "sense": self.sense, "provenance": self.provenance, **self.details}


#: the fields that hold a result's state: set by :func:`finish` and changed only by the result's own transitions
#: (:meth:`SolveResult.reconcile`, ``refit``, ``replaced``, ``unproven``, ``interrupted``, :func:`settle_with_bound`)
_STATE = frozenset({"termination", "solution_status", "objective", "bound", "proof", "external_bound"})


@dataclass(eq=False)
class SolveResult:
    """What a solve (or a DP) returned: two enums (why it stopped, what came back), the objective of the returned
    point, the bound, and where a proof came from.

    ``status``, ``proven_optimal``, ``has_solution`` and ``gap`` are derived from that state, never stored, so
    they cannot disagree. The state is sealed after construction: only the named transitions below change it,
    each keeping the project's rules (the objective is the returned tree's own, a proof never coexists with a
    better known tree, a bound never passes a feasible objective). Annotations (``message``, ``plan``,
    ``timings``) may be added by the layers above.
    """

    termination: TerminationCondition
    solution_status: SolutionStatus
    objective: float | None
    bound: float | None
    runtime: float
    node_count: int
    solver: str
    n_lazy_cuts: int = 0
    n_rounds: int = 1
    trace: list[Incumbent] = field(default_factory=list)
    message: str = ""
    timings: dict = field(default_factory=dict)
    start_objective: float | None = None
    solver_version: str = ""
    #: where the proof came from: "solver" (the solver's own bound), "dp-bound" (it relies on an
    #: :class:`ObjectiveBound` from the dynamic program), or None when nothing is proven
    proof: str | None = None
    #: the external bound given to ``solve`` (value, provenance, details, "row": passed to the solver as a row)
    external_bound: dict | None = None
    #: what an estimator chose for this solve and why: "start" (the source of the warm start: "dp", "greedy",
    #: "local-search" or None), "bound" ("dp-bound" or None), "why" (e.g. the ``"auto"`` rule's reason)
    plan: dict = field(default_factory=dict)
    #: a DP's normalisation (its baseline loss L̂), so a bound in its units can be rescaled (DP results only)
    dp_baseline: float | None = None
    #: the problem a DP solved, as it solved it (DP results only): "max_depth", "max_num_nodes",
    #: "min_samples_leaf", "alpha", "n_rows" and "weight_sum" (rows of positive weight), "split_set" ("every
    #: midpoint", "columns" or "quantile"); a DP bound for a MIO is issued only when it matches the MIO's problem
    problem: dict = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "_sealed", True)

    def __setattr__(self, name, value):
        if name in _STATE and getattr(self, "_sealed", False):
            raise AttributeError(f"SolveResult.{name} is set by finish() and changed only by the result's "
                                 "transitions (reconcile, refit, replaced, unproven, interrupted, settle_with_bound)")
        object.__setattr__(self, name, value)

    def _set(self, **state) -> None:
        """The one way a transition changes the state."""
        for name, value in state.items():
            object.__setattr__(self, name, value)

    # ------------------------------------------------------------------------------------ derived
    @property
    def status(self) -> str:
        """One word for the two enums (:data:`STATUSES`)."""
        sol, term = self.solution_status, self.termination
        if sol is SolutionStatus.OPTIMAL:
            return "optimal"
        if sol is SolutionStatus.UNVERIFIED:
            return "unverified"
        if sol is SolutionStatus.FEASIBLE:
            return "gap_limit" if term is TerminationCondition.OPTIMAL else term.value
        if sol is SolutionStatus.INFEASIBLE:
            return "infeasible"
        if term in (TerminationCondition.INTERRUPTED, TerminationCondition.INFEASIBLE,
                    TerminationCondition.UNBOUNDED, TerminationCondition.ERROR):
            return term.value
        return "no_solution"

    @property
    def proven_optimal(self) -> bool:
        return self.solution_status is SolutionStatus.OPTIMAL

    @property
    def has_solution(self) -> bool:
        return self.solution_status in (SolutionStatus.OPTIMAL, SolutionStatus.FEASIBLE, SolutionStatus.UNVERIFIED)

    @property
    def gap(self) -> float:
        """``|P - D| / max(|P|, 1e-10)`` (module docstring): the same definition for every solver."""
        return relative_gap(self.objective, self.bound)

    def _note(self, text: str) -> None:
        self.message = (self.message + "; " if self.message else "") + text

    # ------------------------------------------------------------------------------------ transitions
    def unproven(self, why: str, unverified: bool = False, termination: TerminationCondition | None = None) -> None:
        """Nothing is proven any more (``why`` says so): the solution stays, "unverified" when its figures do not
        hold (``unverified``), else feasible under ``termination`` (default: the solver's own)."""
        if not self.has_solution:
            return
        sol = SolutionStatus.UNVERIFIED if unverified else SolutionStatus.FEASIBLE
        self._set(solution_status=sol, proof=None, termination=termination or self.termination)
        if why:
            self._note(why)

    @property
    def claims_optimality(self) -> bool:
        """The solver said it closed the gap (proven, or to the requested mip_gap): what a mismatch makes
        "unverified" rather than merely unproven (and one that is unverified stays so)."""
        return self.status in ("optimal", "gap_limit", "unverified")

    def interrupted(self) -> None:
        """Ctrl-C stopped the fit this solve belongs to: whatever was proven, the fit's answer is its best so far
        (a model proven infeasible or unbounded, or a failure, keeps its word)."""
        if self.status in ("infeasible", "unbounded", "error"):
            return
        sol = SolutionStatus.FEASIBLE if self.has_solution else SolutionStatus.NO_SOLUTION
        self._set(termination=TerminationCondition.INTERRUPTED, solution_status=sol, proof=None)

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
            self.unproven(f"solver objective {self.objective:.9g} differs from the tree's {own:.9g}",
                          unverified=self.claims_optimality)
        elif (self.proof is not None and self.external_bound is not None
              and self.external_bound.get("proved") == "reached"
              and not is_proven_optimal(own, self.external_bound["value"])):
            # the tree's own objective no longer reaches the external bound: its proof is gone
            solver_status = self.external_bound.get("solver_status", "limit")
            term = (TerminationCondition(solver_status) if solver_status in TerminationCondition._value2member_map_
                    else TerminationCondition.LIMIT)
            self.unproven(f"the tree's objective {own:.9g} does not reach the {self.external_bound['provenance']} "
                          f"{self.external_bound['value']:.9g}", termination=term)
        if not self.has_solution:
            self._set(solution_status=SolutionStatus.FEASIBLE)
        self._set(objective=own)

    def refit(self, tree_objective: float, sense: int = 1) -> None:
        """The returned tree's leaf values were refit on the solver's partition (ORT's leaf means or medians, ORT-L's
        leaf models): ``tree_objective`` is that tree's own objective and becomes the reported one.

        The refit tree is a feasible point of the same model with an objective no worse than the solver's point,
        so the bound stays valid; a bound beyond the new objective is the solver's tolerance and moves onto it
        (as in :func:`settle_with_bound`). The status is kept: a proof stays one (the gap can only shrink), and a
        stopped solve stays stopped. Call after :meth:`reconcile`.
        """
        if tree_objective is None or not math.isfinite(tree_objective):
            return
        own = float(tree_objective)
        if self.objective is not None and sense * (own - self.objective) > 1e-9 * max(1.0, abs(self.objective)):
            log.warning("the refit tree scores %.9g, worse than the solver's point %.9g (please report this)",
                        own, self.objective)
        bound = self.bound
        if bound is not None and math.isfinite(bound) and sense * (bound - own) > 0:
            bound = own
        self._set(objective=own, bound=bound)
        if not self.has_solution:
            self._set(solution_status=SolutionStatus.FEASIBLE)

    def replaced(self, objective: float, sense: int, why: str) -> None:
        """The fit returns a strictly better tree than the solver's (its warm start, or the single leaf): a
        proof never coexists with a better known tree. The objective becomes that tree's, nothing is proven
        (status "unverified"), and a bound the new objective passes (the model's bound, which did not hold for
        a tree the model could not express) is dropped."""
        own = float(objective)
        bound = self.bound
        if bound is not None and math.isfinite(bound) and sense * (bound - own) > 1e-9 * max(1.0, abs(own)):
            bound = None
        if not self.has_solution:
            self._set(solution_status=SolutionStatus.FEASIBLE)
        self.unproven(why, unverified=self.claims_optimality)
        self._set(objective=own, bound=bound)

    def summary(self) -> str:
        proof = f" (proven optimal{' by the DP bound' if self.proof == 'dp-bound' else ''})"
        return (f"{self.solver}: {self.status}{proof if self.proven_optimal else ''}  "
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
            "timings": self.timings, "message": self.message, "proof": self.proof,
            "external_bound": None if self.external_bound is None else
            {k: clean(v) if isinstance(v, float) else v for k, v in self.external_bound.items()},
            "plan": dict(self.plan),
        }


def finish(solver: str, version: str, termination: str, objective: float | None, bound: float | None,
           runtime: float, node_count: int, trace: list, **extra) -> SolveResult:
    """The one place a SolveResult is settled, for every adapter.

    ``termination`` is why the solver stopped; ``objective`` the returned point's own objective (None without
    one). Settles the proof (:func:`is_proven_optimal`: reaching a user's mip_gap is not one), and so both enums;
    the status, "no_solution" when a limit came before any solution, follows from them.
    """
    term = TerminationCondition(termination)
    if objective is not None and is_proven_optimal(objective, bound) and term in (
            TerminationCondition.OPTIMAL, TerminationCondition.GAP_LIMIT):
        sol = SolutionStatus.OPTIMAL
    elif objective is not None and term not in (TerminationCondition.INFEASIBLE, TerminationCondition.UNBOUNDED):
        sol = SolutionStatus.FEASIBLE
    elif term is TerminationCondition.INFEASIBLE:
        sol = SolutionStatus.INFEASIBLE
    else:
        sol = SolutionStatus.NO_SOLUTION
    return SolveResult(termination=term, solution_status=sol, objective=objective, bound=bound, runtime=runtime,
                       node_count=node_count, solver=solver, trace=trace, solver_version=version,
                       proof="solver" if sol is SolutionStatus.OPTIMAL else None, **extra)


#: statuses whose returned point is a feasible solution the external bound may prove optimal
_BOUNDABLE = ("optimal", "gap_limit", "time_limit", "interrupted", "limit")


def settle_with_bound(res: SolveResult, bound: ObjectiveBound, verified: float | None, reason: str = "",
                      as_row: bool = False) -> SolveResult:
    """Combine a solver's result with an external bound: the one place such a bound can prove optimality.

    ``verified`` is the returned point's objective re-computed from its tree (``bound.verify``): None when the
    point is not a tree the bound speaks about (``reason`` says why). Rules:

    - the result records the bound (``external_bound``); the reported bound is the tighter of the solver's
      and the external one;
    - optimal with ``proof = bound.provenance`` only when the solver returned a feasible point whose objective
      is its re-verified tree's and reaches the external bound within :data:`PROVEN_TOL`;
    - when the bound entered the model as a row (``as_row``) a solver proof leans on it: it keeps
      ``proof = bound.provenance`` only for a verified tree, and is revoked otherwise;
    - a point beyond the bound means the bound does not hold for this model (a bug, or formulation rows
      the user removed): the bound is dropped, with a message (and a warning when the point was verified).
    """
    rec = {**bound.record(), "row": bool(as_row), "solver_status": res.status}
    res._set(external_bound=rec)
    obj = res.objective

    def revoke(text):
        res.unproven(text, termination=TerminationCondition.LIMIT if res.status == "optimal" else None)

    beyond = next((v for v in (verified, obj) if v is not None and bound.violated_by(v)), None)
    if beyond is not None:
        if verified is not None:   # a verified tree of the formulation beats a bound on all its trees: a bug
            log.warning("%s %.9g is beyond a verified feasible objective %.9g; ignoring it (please report this)",
                        bound.provenance, bound.value, beyond)
        rec["rejected"] = True
        res._note(f"{bound.provenance} {bound.value:.9g} not used: the model reached {beyond:.9g} beyond it"
                  f"{' (' + reason + ')' if reason else ''}")
        if as_row:   # the solver saw a row that does not hold for this model: nothing it proved can be trusted
            revoke("a proof from a model holding that row is not trusted")
        return res
    value = res.bound
    if value is None or not math.isfinite(value) or bound.sense * (bound.value - value) > 0:
        value = bound.value
        rec["tighter_than_solver"] = True
    if obj is not None and bound.sense * (value - obj) > 0:
        value = obj         # round-off: a bound never passes a feasible objective
    res._set(bound=value)
    if not res.has_solution or obj is None or res.status not in _BOUNDABLE:
        return res
    if verified is None:
        why = reason or "the returned point was not verified"
    elif abs(verified - obj) > 1e-5 + 1e-6 * abs(obj):
        why = f"the solver's objective {obj:.9g} is not the tree's {verified:.9g}"
    else:
        why = ""
    if res.proven_optimal:
        if as_row:   # the solver's bound leaned on the row: a proof only for a tree the formulation allows
            if why:
                revoke(f"the solver's proof used the {bound.provenance} row but {why}")
            else:
                res._set(proof=bound.provenance)
                rec["proved"] = "solver-with-row"
        return res
    if why:
        res._note(f"not proven by the {bound.provenance}: {why}")
        return res
    if bound.meets(verified):
        res._set(objective=verified, solution_status=SolutionStatus.OPTIMAL, proof=bound.provenance)
        rec["proved"] = "reached"
    return res
