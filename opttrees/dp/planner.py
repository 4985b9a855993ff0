"""The one planner of every MIO fit (:class:`Auto`) over one cost model: which start, which bound, which route.

Every MIO estimator hands :func:`opttrees.estimators.pipeline.run_mio` what the user asked for
(``warm_start``, ``dp_bound``, ``solver``, each possibly ``"auto"``) and what a DP run over the model's split set
would cost (:class:`DPCost`); :meth:`Auto.plan` resolves the ``"auto"`` values into a :class:`Plan` by the
predicted seconds and memory below, never by a fixed threshold (docs/design-notes.md). The cost model is one set
of measured constants and the functions that read them:

- the DP over ``m`` binary columns: ``DP_SECONDS_PER_CELL`` x m^depth x rows (``SPO_DP_SECONDS_PER_CELL`` for
  the SPO DP, which calls the decision oracle per leaf), within the DP's memory cap (:mod:`opttrees.dp.memory`);
- the continuous DP over every midpoint (:func:`continuous_seconds`);
- the MIO's set-up before the solver starts: the Pyomo build (``BUILD_SECONDS_PER_ROW_LEAF``), the hand-off
  (``HANDOFF_PER_BUILD``) and the extraction (``EXTRACT_PER_BUILD``) (:func:`mio_setup_seconds`), which decides
  whether an OCT-type fit is routed to the DP or the local search instead (:func:`mio_route`).

A start may use :data:`START_SHARE` of the time left (the DP's start and bound, the local search's start); the
solver gets the rest. Numbers only: this module reads data objects' sizes and imports no Pyomo.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: predicted cost of the solver hand-off (compile + load into the solver), per second of Pyomo build, and of
#: the extraction. Measured (benchmarks/README.md "OCT model build and hand-off", and FlowOCT at 0.8 M
#: nonzeros): compile 1.3-2.2x the build; loading into HiGHS ~0.1-0.3x, into SCIP (row by row from Python)
#: 1.5-3x; extraction ~0.1x.
HANDOFF_PER_BUILD = {"highs": 1.5, "scip": 3.0}
EXTRACT_PER_BUILD = 0.1


#: share of the time left that a start (the dynamic program's start and bound, the local search's start) may use;
#: the solver gets the rest
START_SHARE = 0.5
#: seconds per (binary column^depth x row) of the DP, measured on this machine (wine depth 2 over every midpoint:
#: 1,260 columns x 178 rows in 1.5 s; iris depth 3, 118 columns, 0.2 s): what "auto" predicts a run costs
DP_SECONDS_PER_CELL = 5e-9
#: with no time limit, "auto" still skips a DP predicted to take longer than this (seconds)
DP_AUTO_MAX_SECONDS = 120.0


#: the SPO DP calls the decision oracle for every candidate leaf: measured on the shortest-path generator (n=100,
#: p=5, depth 2, 495 midpoint columns: 10 s), about 80 times the classification DP's cost per cell
SPO_DP_SECONDS_PER_CELL = 4e-7


def dp_seconds(left: float | None) -> float:
    """What a DP run may use: :data:`START_SHARE` of the ``left`` seconds, or :data:`DP_AUTO_MAX_SECONDS` without a
    limit."""
    return DP_AUTO_MAX_SECONDS if left is None else START_SHARE * left


def dp_fits(n: int, m: int, depth: int, n_stats: int, left: float | None, what: str,
            seconds_per_cell: float = DP_SECONDS_PER_CELL) -> tuple[bool, str]:
    """Whether a DP run on ``n`` rows and ``m`` binary columns fits :data:`START_SHARE` of the ``left`` seconds
    (predicted: ``DP_SECONDS_PER_CELL`` x m^depth x n) and the DP's memory cap (:mod:`opttrees.dp.memory`),
    with the reason in words naming ``what`` runs."""
    from .api import MAX_COUNT_BYTES
    from .memory import counts_bytes, default_limit, estimate_bytes, fmt_bytes

    budget = dp_seconds(left)
    seconds = seconds_per_cell * float(max(m, 1)) ** max(depth, 1) * n
    memory = estimate_bytes(n, m, n_stats, depth)
    counts = counts_bytes(m, n_stats) if depth >= 2 else 0
    if memory > default_limit() or counts > MAX_COUNT_BYTES:
        return False, f"{what} ({m} columns) would need about {fmt_bytes(max(memory, counts))}"
    if seconds > budget:
        return False, f"{what} ({m} columns) is predicted to take {seconds:.3g} s > {budget:.3g} s"
    return True, f"{what} ({m} columns, predicted {seconds:.2g} s) gives the start and the bound"


#: seconds per (features^2 x rows x log2 rows) of the continuous DP at depth 2, and the factor per feature for each
#: level deeper. Steady seconds on a quiet machine after the per-threshold bounds (benchmarks/README.md, session 4):
#: depth 2 20,000 x 10 0.50-0.57 s, 10,000 x 10 0.20 s, 100,000 x 20 5.8-6.8 s CPU (predicted 0.43, 0.20, 10); depth
#: 3, actual / this model's base per feature: breast cancer 2.0, 2,000 x 19 with 7 classes 2.0, 1,000 x 10 6.8,
#: 20,000 x 10 with 8 classes 6.8, 5,000 x 10 10.7, 10,000 x 10 with 4 classes 23.5, digits 0.3 (the factor 10 puts
#: most within 2x, and the worst 2.4x under)
CONTINUOUS_SECONDS_PER_CELL = 1.5e-8
CONTINUOUS_DEPTH_FACTOR = 10.0


def continuous_seconds(n: int, p: int, depth: int) -> float:
    """Predicted seconds of the continuous DP (:mod:`opttrees.dp.continuous`) on n rows x p features: the interval
    search's evaluations (about p log n of them, each a sweep of p n) cost about the same per cell whatever the
    number of classes (10,000 x 10 with 4 classes 0.20 s, 20,000 x 10 with 8 classes 0.50 s)."""
    base = CONTINUOUS_SECONDS_PER_CELL * p * p * n * max(np.log2(max(n, 2)), 1.0)
    return base * (CONTINUOUS_DEPTH_FACTOR * p) ** max(depth - 2, 0)


#: seconds of the Pyomo OCT build per (row x leaf), times (1 + features / 40): measured on this machine (1,000-16,000
#: rows, 10-20 features, depths 2-3: 0.6-1.2e-4 s per row x leaf; 100,000 x 20 at depth 2: 58 s)
BUILD_SECONDS_PER_ROW_LEAF = 1.0e-4
#: an OCT-type MIO is routed elsewhere when its predicted set-up (build, hand-off, extraction) exceeds this share of
#: the time left (it would leave the solver nothing), or this many seconds without a time limit
ROUTE_SETUP_SHARE = 0.5
ROUTE_SETUP_SECONDS = 120.0


def mio_setup_seconds(n: int, p: int, depth: int, solver: str) -> float:
    """Predicted seconds before an OCT-type MIO on n rows x p features can start solving: the Pyomo build, the
    hand-off to ``solver`` and the extraction."""
    build = BUILD_SECONDS_PER_ROW_LEAF * n * 2 ** depth * (1.0 + p / 40.0)
    return build * (1.0 + HANDOFF_PER_BUILD.get(solver, 3.0) + EXTRACT_PER_BUILD)


def mio_route(data, depth: int, left: float | None, solver: str) -> tuple[str, str]:
    """Where an OCT-type fit goes when the MIO cannot finish: ("mio", "") when its predicted set-up fits, else
    ("dp", why) when the continuous DP over every midpoint (whose optimum is the OCT optimum) is predicted to
    finish in the time left, else ("local-search", why)."""
    setup = mio_setup_seconds(data.n, data.p, depth, solver)
    room = ROUTE_SETUP_SECONDS if left is None else ROUTE_SETUP_SHARE * left
    if setup <= room:
        return "mio", ""
    why = (f"the MIO's build and hand-off ({data.n} rows, depth {depth}) are predicted to take {setup:.3g} s, more "
           f"than {room:.3g} s" + ("" if left is None else f" ({ROUTE_SETUP_SHARE:g} of the {left:.3g} s left)"))
    _, _, values = data.ranks
    p = sum(len(v) > 1 for v in values)
    dp = continuous_seconds(data.n, p, depth)
    if dp <= dp_seconds(left):
        return "dp", why + f": the DP over every midpoint (predicted {dp:.3g} s; its optimum is the OCT optimum) " \
                           "runs instead and the model is not built"
    return "local-search", why + f", and the DP over every midpoint {dp:.3g} s: the local search runs instead " \
                                 "(no proof)"


def dp_statistics(data) -> int:
    """Statistics per row the DP keeps for classification ``data``: one per class, plus a row count when the
    weights are not all 1 (what sizes its depth-two counts)."""
    return max(data.n_classes, 1) + (0 if np.all(data.sample_weight == 1.0) else 1)


def dp_plan(data, depth: int, left: float | None, n_thresholds: int = 10) -> tuple[str, str]:
    """What ``warm_start="auto"`` / ``dp_bound="auto"`` use for an OCT-type fit: (mode, why)
    (:meth:`DPCost.mode` of :meth:`DPCost.of_ranks`).

    mode "midpoints": the DP over every midpoint (the MIO's own split set) gives the start and the bound;
    "quantile": the DP over ``n_thresholds`` quantiles per feature gives a start only; "": no DP. A mode is
    chosen when its predicted time fits :data:`START_SHARE` of the time left and its fixed memory fits the DP's
    memory cap (:mod:`opttrees.dp.memory`).
    """
    return DPCost.of_ranks(data, depth, n_thresholds).mode(left)


@dataclass(frozen=True)
class DPCost:
    """What a DP run over a MIO's split set would cost: what :class:`Auto` reads to choose the start and bound.

    ``rows`` x ``columns`` (the model's own split set: every midpoint, or the model's binary columns) at
    ``depth``, ``n_stats`` statistics per row (sizing the DP's depth-two counts), ``what`` names the run in the
    plan's words. Optional: ``quantile_columns`` (a coarser split set that gives a start but no bound, over
    ``n_thresholds`` quantiles per feature) and ``continuous`` (features with two or more values: the
    continuous DP over every midpoint, O(n p) memory, tried first). ``seconds_per_cell``: None for the
    classification DP's :data:`DP_SECONDS_PER_CELL`, else e.g. :data:`SPO_DP_SECONDS_PER_CELL`.
    ``names_split_set``: the plan records ``dp_binarization`` (the OCT family)."""

    rows: int
    depth: int
    columns: int
    n_stats: int
    what: str = "the DP over every midpoint"
    seconds_per_cell: float | None = None
    quantile_columns: int | None = None
    n_thresholds: int = 10
    continuous: int | None = None
    names_split_set: bool = False

    @classmethod
    def of_ranks(cls, data, depth: int, n_thresholds: int = 10, n_stats: int | None = None) -> DPCost:
        """The OCT family's cost: the continuous DP, then every midpoint, then ``n_thresholds`` quantiles of
        ``data`` (a prepared table: ``ranks``, ``n``, ``n_classes``)."""
        _, _, values = data.ranks
        return cls(data.n, int(depth), sum(len(v) - 1 for v in values),
                   dp_statistics(data) if n_stats is None else n_stats,
                   quantile_columns=sum(min(len(v) - 1, n_thresholds) for v in values), n_thresholds=n_thresholds,
                   continuous=sum(len(v) > 1 for v in values), names_split_set=True)

    def mode(self, left: float | None) -> tuple[str, str]:
        """(mode, why): "midpoints" (the DP over the model's own split set gives the start and the bound),
        "quantile" (a start only) or "" (no DP), by the predicted time within :data:`START_SHARE` of the ``left``
        seconds and the memory cap."""
        reasons = []
        budget = dp_seconds(left)
        if self.continuous is not None:
            p = self.continuous
            seconds = continuous_seconds(self.rows, p, self.depth)
            if seconds <= budget:      # the continuous search: O(n p) memory, every midpoint
                return "midpoints", (f"the continuous DP over every midpoint ({self.rows} rows x {p} features, "
                                     f"predicted {seconds:.2g} s) gives the start and the bound")
            reasons.append(f"the continuous DP over every midpoint is predicted to take {seconds:.3g} s > "
                           f"{budget:.3g} s")
        options = [("midpoints", self.columns, self.what)]
        if self.quantile_columns is not None:
            options.append(("quantile", self.quantile_columns, f"the DP over {self.n_thresholds} quantiles per feature"))
        per_cell = DP_SECONDS_PER_CELL if self.seconds_per_cell is None else self.seconds_per_cell
        for mode, m, what in options:
            ok, why = dp_fits(self.rows, m, self.depth, self.n_stats, left, what, per_cell)
            if ok:
                return mode, why if mode == "midpoints" else \
                    why.replace("the start and the bound", "the start; no bound") + " (" + "; ".join(reasons) + ")"
            reasons.append(why)
        if len(reasons) == 1:
            return "", reasons[0]
        return "", "no DP (" + "; ".join(reasons) + "); the greedy tree starts the solver"


@dataclass(frozen=True)
class RouteCost:
    """An OCT-type fit that may go elsewhere when the MIO cannot finish (:func:`mio_route`): the prepared data
    and depth; ``dp_ok``: whether the DP route's binarisation is every midpoint (else the local search)."""

    data: object
    depth: int
    dp_ok: bool = True


@dataclass
class Plan:
    """What :meth:`Auto.plan` chose: the ``start`` ("greedy", "local-search", "dp", or None), whether the DP
    bounds the MIO (``bound``), the DP's ``mode`` when "auto" asked for one ("midpoints", "quantile", "" or
    None), the ``route`` ("mio", "dp", "local-search"), the ``solver`` and what :attr:`SolveResult.plan`
    records (``record``: the why)."""

    start: str | None
    bound: bool
    mode: str | None = None
    route: str = "mio"
    solver: str = "highs"
    record: dict = field(default_factory=dict)

    @property
    def split_set(self) -> str | None:
        """The DP's split set the plan chose ("midpoints", "quantile"), or None: the estimator's own."""
        return self.mode or None


@dataclass(frozen=True)
class Auto:
    """The one planner of every MIO fit: the user's ``warm_start``, ``dp_bound`` and ``solver`` (each possibly
    "auto"), resolved over the cost model by :meth:`plan`.

    ``cost``: the DP over the model's split set (None: the model has no DP relaxation, e.g. hyperplane splits;
    ``no_dp``: why, for the plan); ``route``: an OCT-type fit that may be routed elsewhere
    (:class:`RouteCost`); ``auto_solver``: (name, why) of ``solver="auto"`` for this model.
    """

    warm_start: object = None
    dp_bound: object = False
    solver: str = "highs"
    auto_solver: tuple[str, str] = ("highs", "a linear MIO: HiGHS")
    cost: DPCost | None = None
    no_dp: str = ""
    route: RouteCost | None = None

    def solver_plan(self) -> tuple[str, dict]:
        """(solver, what the plan records): ``solver`` in lower case, ``"auto"`` resolved with its reason."""
        name = str(self.solver).lower()
        if name != "auto":
            return name, {"solver": name}
        auto, why = self.auto_solver
        return auto, {"solver": auto, "solver_why": f"solver='auto': {why}"}

    def plan(self, left: float | None, stopping: bool = False) -> Plan:
        """The start, bound, route and solver for a fit with ``left`` seconds (``stopping``: Ctrl-C or the
        time is up already; the MIO path's fallback then runs, never a route)."""
        solver, record = self.solver_plan()
        ws, db, cost = (None if self.warm_start is False else self.warm_start), self.dp_bound, self.cost
        asked = ws == "auto" or db == "auto"
        mode = None
        if asked and cost is None:
            ws, db = ("greedy" if ws == "auto" else ws), False
            record["why"] = self.no_dp
        elif asked and cost is not None:
            mode, record["why"] = cost.mode(left)
            db = mode == "midpoints" if db == "auto" else db
            ws = ("dp" if mode else "greedy") if ws == "auto" else ws
            if cost.names_split_set:
                record["dp_binarization"] = "midpoints" if db else "quantile" if mode else None
        plan = Plan(None if ws is None else str(ws), bool(db), mode, solver=solver, record=record)
        if self.route is not None and self.warm_start == "auto" and self.dp_bound == "auto" and not stopping:
            route, why = mio_route(self.route.data, self.route.depth, left, solver)
            if route == "dp" and not self.route.dp_ok:
                route = "local-search"
            if route != "mio":
                plan.route = route
                plan.record = {k: v for k, v in plan.record.items() if k not in ("solver", "solver_why")}
                plan.record.update(route=route, start=None, bound=None, dp_binarization=None, why=why)
        return plan
