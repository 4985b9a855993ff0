"""One MIO pipeline for every MIO model: plan -> starts -> build -> DP start and bound -> solve -> extract ->
compare -> fallback.

Why one: OCT, OCT-H, ORT, ORT-L, FlowOCT, BendersOCT, RobustOCT, the SPOT MILP and the OPT MIO differ only in
*what* they build, where their start comes from and whether a dynamic program bounds them. How a fit runs a
MIO (the plan: start, bound, solver and route, by :class:`opttrees.dp.planner.Auto`; the deadline, the DP start
and bound, side constraints, the solver hand-off, re-verification, "never return a tree worse than the start", the
fallback when the solver finds nothing) is the same, so it lives here once. An estimator describes its model as
an :class:`MIO` and hands it to ``SolverMixin._run_mio`` (its solver settings and what it asks the planner), the
one way into :func:`run_mio`; adding a model is a formulation, a registry line and an estimator that declares its
``MIO(...)`` (docs/architecture.md, "Adding an MIO model").
"""
from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..dp.planner import START_SHARE, Auto, Plan
from ..errors import InputError, SolverError, VerificationError
from ..solvers.api import prove_start
from ..solvers.result import ObjectiveBound, SolveResult, finish
from ..tree import Tree
from .fitcontrol import FitControl

#: the bound a start source may hand the solver: computed outside it, with its provenance
Bound = ObjectiveBound


@dataclass(frozen=True)
class Start:
    """A warm-start tree and where it came from ("greedy", "local-search", "dp", "fairness-dp", ...)."""

    tree: Tree
    source: str

    @classmethod
    def of(cls, source: str, tree: Tree | None) -> Start | None:
        """A start from a source that may have produced nothing (cut short, or no feasible tree)."""
        return None if tree is None else cls(tree, source)


@dataclass(frozen=True)
class DPUse:
    """The dynamic program over the built formulation's own split set (:mod:`opttrees.dp.bound`).

    One run serves both uses: its tree is a feasible start with the same objective in the MIO (``start``), and
    when the DP problem relaxes the MIO its optimum bounds it (``bound``). ``binarization`` picks the split set
    for continuous-split models; a bound always needs every midpoint (the MIO's own splits).
    """

    start: bool = False
    bound: bool = False
    binarization: str = "midpoints"
    n_thresholds: int = 10

    def split_set(self) -> str:
        own = self.binarization
        return "midpoints" if self.bound or own in ("auto", "exact") else own


#: a start that needs the built model, the DP's bound and the plan: e.g. the constrained DP over the model's columns
LateStart = Callable[[Any, "ObjectiveBound | None", Plan], "Start | None"]
#: a start computed only when the plan asks for it (by name: "greedy", "local-search", "dp")
Source = Callable[[Plan], "Tree | None"]
#: another route than the MIO (the planner's choice when the MIO cannot finish): its tree and result (None: a
#: heuristic's, made by the pipeline)
Route = Callable[[], "tuple[Tree, SolveResult | None]"]


@dataclass
class MIO:
    """What a MIO fit runs: the model, its start and bound sources, and how trees are compared.

    ``build``: the formulation factory (``functools.partial(OCT, data, depth, ...)``), run under the fit's
    deadline. ``score``: the objective candidate trees are compared on, lower is better; None compares on the
    built formulation's own objective (``tree_objective`` with its sense), after ``comparable`` (e.g. SPOT's
    leaves refitted on the model's features). ``auto``: what the user asked for (``warm_start``, ``dp_bound``,
    ``solver``) and what a DP over the model costs; :func:`run_mio` plans with it (:class:`~opttrees.dp.planner.Auto`)
    before anything runs. ``starts``: trees computed before the build; ``sources``: starts by name, computed
    only when the plan names them (with a "dp" plan, "greedy" too: CART is cheap and the DP's tree is kept only
    when it scores no worse); the best (a later one winning ties) is handed to the solver, or with
    ``hand_start=False`` kept only as the fallback while the solver starts from nothing (None: handed when the
    plan names a start). ``dp``: the DP over the built model's own split set (with ``auto``: the plan sets its
    start and bound; ``dp_start``: the estimator's own DP start, used instead of the model's when the DP does
    not bound the model). ``late_starts``: start sources that need the built model, the DP's bound and the plan
    (the constrained DP); they come after the others, so a constrained start wins a tie against a repaired
    unconstrained one. ``routes``: what runs instead when the plan routes the fit away from the MIO.
    ``fallback``: the tree when the solver finds nothing and there is no start (e.g. the fit stopped first).
    ``constraints``: side constraints (:class:`~opttrees.estimators.constrained.ConstraintContext`): rows added
    in the build, every start repaired to feasibility or dropped, the bound tightened by the constrained DP.
    ``plan``: more for :attr:`SolveResult.plan`. ``solver_options``: for :func:`opttrees.solvers.solve` (the
    solver itself comes from the plan).
    """

    build: Callable[[], Any]
    score: Callable[[Tree], float] | None = None
    starts: Sequence[Start | None] = ()
    hand_start: bool | None = True
    dp: DPUse = field(default_factory=DPUse)
    late_starts: Sequence[LateStart] = ()
    fallback: Callable[[], Tree | None] | None = None
    constraints: Any = None
    plan: dict = field(default_factory=dict)
    solver_options: dict = field(default_factory=dict)
    auto: Auto | None = None
    sources: dict[str, Source] = field(default_factory=dict)
    dp_start: Source | None = None
    routes: dict[str, Route] = field(default_factory=dict)
    comparable: Callable[[Tree], Tree] | None = None


@dataclass
class MIOOutcome:
    """The tree a MIO fit returns, where it came from ("mio", a start's source, or "fallback"), the model (None
    when its build was abandoned), the solve result, the start handed to the solver and the DP run (if any)."""

    tree: Tree
    source: str
    form: Any
    result: SolveResult
    start: Start | None = None
    dp_run: Any = None
    notes: list[str] = field(default_factory=list)


def run_mio(job: MIO, ctl: FitControl, who: str, verbose=False) -> MIOOutcome:
    """Run ``job`` under the fit control ``ctl``; ``who`` names the estimator in warnings and errors.

    First the plan (:meth:`~opttrees.dp.planner.Auto.plan`: start, bound, solver, or another route), then the
    starts it names, the build, the DP over the model, the late starts, the solve and the extraction. The returned
    tree is the extracted (re-verified) MIO tree, unless a start scores strictly better on ``job.score`` (a start
    the formulation had to change to make it feasible, e.g. OCT-H's margin, and the solver found nothing better):
    then that start, with a warning, and the result says so (:meth:`SolveResult.replaced`). Without a solution:
    the start, else ``job.fallback()``, with a warning (none after Ctrl-C); a SolverError only when neither exists.
    """
    plan = job.auto.plan(ctl.remaining(), ctl.stop()) if job.auto is not None else Plan(None, job.dp.bound)
    if plan.route != "mio" and plan.route in job.routes:
        return _routed(ctl, job, plan)
    use = _dp_use(job, plan)
    ctx = job.constraints if job.constraints else None
    build = ctx.make(job.build) if ctx is not None else job.build
    starts = [_repaired(ctx, s, f"the {s.source} start") for s in [*job.starts, *_sourced(job, plan, use)]
              if s is not None]
    form = ctl.build(build)
    score = _scorer(job, form, ctx)
    dp_run, bound = _dp_step(who, ctl, form, use, verbose)
    candidates = list(starts)
    if dp_run is not None and use.start and dp_run.start_feasible:
        candidates.append(_repaired(ctx, Start(dp_run.tree, "dp"), "the DP start"))
    if form is not None and not ctl.stop():
        for late in job.late_starts:
            made = late(form, bound, plan)
            candidates.append(_repaired(ctx, made, f"the {made.source} start") if made is not None else None)
    start = _best_start(candidates, score)
    if ctx is not None:
        bound = ctx.tighten(bound)
    hand = job.hand_start if job.hand_start is not None else plan.start is not None
    handed = start if hand else None
    record = {**plan.record, **job.plan, "start": handed.source if handed is not None else None,
              "bound": None if bound is None else bound.provenance}
    res = _proven_by_dp(ctl, form, handed, bound, dp_run, ctx)
    if res is not None and verbose:
        print(f"[{who}] the DP's tree reaches the {bound.provenance}: proven optimal without a solver (no hand-off)",
              file=sys.stderr, flush=True)
    if res is None:
        options = {**job.solver_options, "solver": plan.solver} if job.auto is not None else job.solver_options
        res = ctl.solve(form, None if handed is None else handed.tree, objective_bound=bound, **options)
    res.plan = record
    if ctx is not None:
        ctx.infeasible(res)
    out = MIOOutcome(tree=None, source="", form=form, result=res, start=handed, dp_run=dp_run)  # type: ignore[arg-type]
    if form is not None and res.has_solution:
        tree = _extract(who, ctl, form, out)
        if tree is not None:
            return _compare(who, out, tree, handed, score)
    return _without_solution(who, ctl, job, out, start, ctx)


def _dp_use(job: MIO, plan: Plan) -> DPUse:
    """The DP over the model the plan asks for: its start (unless the estimator's own DP start stands in when
    the DP does not bound the model) and its bound, over the plan's split set or the estimator's."""
    if job.auto is None:
        return job.dp
    start = plan.start == "dp" and (plan.bound or job.dp_start is None)
    return DPUse(start, plan.bound, plan.split_set or job.dp.binarization, job.dp.n_thresholds)


def _sourced(job: MIO, plan: Plan, use: DPUse) -> list[Start | None]:
    """The starts the plan names, computed now (greedy first: with a DP start, CART is computed too)."""
    names = (["greedy"] if plan.start == "dp" else []) + ([plan.start] if plan.start is not None else [])
    out: list[Start | None] = [Start.of(name, job.sources[name](plan)) for name in dict.fromkeys(names)
                               if name in job.sources]
    if plan.start == "dp" and not use.start and job.dp_start is not None:
        out.append(Start.of("dp", job.dp_start(plan)))
    return out


def _routed(ctl: FitControl, job: MIO, plan: Plan) -> MIOOutcome:
    """The tree of the route the plan chose instead of the MIO, with a result whose plan says which and why (a
    heuristic route's result: no bound and no proof)."""
    t0 = ctl.budget.elapsed()
    tree, res = job.routes[plan.route]()
    if res is None:
        score = job.score or (lambda tree: 0.0)
        res = finish(plan.route, "", "time_limit" if ctl.stop() else "limit", score(tree), None,
                     ctl.budget.elapsed() - t0, 0, [], message="a heuristic route: no bound and no proof")
    res.plan = {**plan.record, **job.plan}
    return MIOOutcome(tree=tree, source=plan.route, form=None, result=res)


def _proven_by_dp(ctl: FitControl, form, start: Start | None, bound, dp_run, ctx):
    """The DP's own tree reaching the DP bound is optimal for the model: a result without a solver, or None.

    Only for the DP's tree unchanged and no side constraints: that tree is feasible for the model by
    construction (the DP searched the model's own split set), which :func:`~opttrees.solvers.api.prove_start`
    leaves to its caller."""
    if (form is None or bound is None or start is None or ctx is not None or start.source != "dp"
            or dp_run is None or not dp_run.start_feasible or start.tree is not dp_run.tree):
        return None
    # the proof sets every variable of the model from the tree (0.3 s on 1,500 rows, OCT depth 3): not after Ctrl-C
    # or the time limit, nor when the DP's own figure for its tree already falls short of the bound (a DP cut short)
    if ctl.stop() or not bound.meets(dp_run.objective):
        return None
    with ctl.stage("solve"):
        res = prove_start(form, start.tree, bound)
    if res is not None and "build" in ctl.timings:
        res.timings["build"] = ctl.timings["build"]
    return res


def _repaired(ctx, start: Start | None, what: str) -> Start | None:
    """``start`` made feasible for the side constraints (the best feasible pruning), or None."""
    if ctx is None or start is None:
        return start
    tree = ctx.repair(start.tree, what)
    return None if tree is None else Start(tree, start.source)


def _scorer(job: MIO, form, ctx) -> Callable[[Tree], float]:
    """Lower is better: the job's score (with side constraints: the context's, which charges each leaf its own
    label, since a constrained tree's need not be the best), else the built model's own objective."""
    if job.score is not None:
        return ctx.score if ctx is not None else job.score
    if form is None:
        return lambda tree: 0.0     # no model to score on: the last start is kept
    sense, comparable = int(form.sense), job.comparable or (lambda tree: tree)
    return lambda tree: sense * float(form.tree_objective(comparable(tree)))


def _best_start(candidates: Sequence[Start | None], score) -> Start | None:
    """The best-scoring start; a later candidate wins ties (it is at least as informed: the DP after greedy)."""
    best: Start | None = None
    best_score = 0.0
    for cand in candidates:
        if cand is None:
            continue
        value = score(cand.tree)   # once per candidate: a score routes every training row
        if best is None or value <= best_score:
            best, best_score = cand, value
    return best


def _dp_step(who: str, ctl: FitControl, form, use: DPUse, verbose):
    """One DP run over the built model under the fit's deadline -> (DPRun or None, bound or None)."""
    if form is None or not (use.start or use.bound) or ctl.stop():
        return None, None
    with ctl.stage("dp"):
        run = _run_dp(form, who, use, ctl, verbose)
    if run is None:
        return None, None
    if use.bound and run.bound is None:
        warnings.warn(f"{who}: dp_bound=True but {run.why_no_bound}; solving without it", stacklevel=4)
    return run, run.bound if use.bound else None


def _extract(who: str, ctl: FitControl, form, out: MIOOutcome) -> Tree | None:
    """The solver's tree, re-verified; None (with a warning) when a strict formulation refuses it."""
    try:
        with ctl.stage("extract"):
            return form.extract()
    except VerificationError as exc:
        warnings.warn(f"{who}: {exc}; keeping the start tree", stacklevel=4)
        out.notes.append(str(exc))
        return None


def _compare(who: str, out: MIOOutcome, tree: Tree, start: Start | None, score) -> MIOOutcome:
    """The MIO's tree, or the start when it scores strictly better (then the result says so)."""
    out.tree, out.source = tree, "mio"
    if start is not None and score(start.tree) < score(tree) - 1e-9:
        why = "; ".join(getattr(out.form, "start_notes", [])) or "see solve_result_"
        own, mio = score(start.tree), score(tree)
        warnings.warn(f"{who}: the warm-start tree (objective {own:.6g}) beats the MIO's tree ({mio:.6g}): {why}; "
                      "keeping the warm-start tree", stacklevel=4)
        # the result speaks the model's units (its objective and bound), whatever ``score`` compares on
        form = out.form
        out.result.replaced(float(form.tree_objective(start.tree)), int(form.sense),
                            f"the warm-start tree ({own:.9g}) beats the solver's tree ({mio:.9g}) and is returned")
        out.tree, out.source = start.tree, start.source
    return out


def _without_solution(who: str, ctl: FitControl, job: MIO, out: MIOOutcome, start: Start | None,
                      ctx) -> MIOOutcome:
    """No MIO tree: the start, else the fallback; a SolverError when there is neither."""
    res = out.result
    if start is None and job.fallback is not None:
        tree = job.fallback()
        tree = ctx.repair(tree, "the fallback tree") if ctx is not None else tree
        start = None if tree is None else Start(tree, "fallback")
    if start is None:
        what = " satisfying the constraints" if ctx is not None else ""
        raise SolverError(f"{who}: the solver found no feasible tree ({res.status}) and there is no start tree{what} "
                          f"within time_limit={ctl.budget.time_limit}; raise time_limit or use a warm start")
    if res.has_solution and out.form is not None:
        # the solver's point was refused at extraction (a strict re-verification): the result reports the tree
        # returned instead, never a figure about the refused point; nothing is proven about it
        res.unproven(f"the solver's tree failed re-verification; the {start.source} tree is returned",
                     unverified=res.claims_optimality)
        res.reconcile(float(out.form.tree_objective(start.tree)))
    elif ctl.reason() != "interrupted":
        warnings.warn(f"{who}: the solver returned no solution ({res.status}"
                      f"{'; ' + res.message if res.message else ''}); using the {start.source} tree", stacklevel=4)
    out.tree, out.source = start.tree, start.source
    return out


def _run_dp(form, who: str, use: DPUse, ctl: FitControl, verbose=False):
    """:func:`opttrees.dp.bound.dp_for_formulation` with :data:`~opttrees.dp.planner.START_SHARE` of the time
    left; None, with a warning naming ``who``, when the DP cannot run on this formulation (it costs the start,
    not the fit)."""
    from ..dp.bound import dp_for_formulation

    try:
        return dp_for_formulation(form, binarization=use.split_set(), n_thresholds=int(use.n_thresholds),
                                  time_limit=ctl.time(START_SHARE),  # type: ignore[arg-type]  # a Budget is shared
                                  bound=use.bound, verbose=verbose)
    except InputError as exc:
        warnings.warn(f"{who}: no dynamic-programming start or bound ({exc})", stacklevel=5)
        return None
