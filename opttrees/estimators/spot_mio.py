"""SPOT with the MILP: greedy SPOT (or the SPO dynamic program), then the SPOT MILP warm-started from it.

Why here and not in :mod:`opttrees.formulations.spot`: choosing between greedy and MILP trees, rounding the
features the MILP sees and calling the solver is estimator orchestration; the formulation only builds the
model (issue 12).
"""
from __future__ import annotations

from functools import partial
from typing import Any, Callable

import numpy as np

from ..dp.planner import SPO_DP_SECONDS_PER_CELL, Auto, DPCost
from ..errors import InputError
from ..data.costs import prepare_costs
from ..formulations.spot import SPOTFormulation
from ..interrupt import Budget
from ..solvers.result import TerminationCondition
from ..data.costs import check_costs_fit
from ..spo.greedy import grow_spo_tree
from ..spo.objective import spot_norm, spot_objective
from ..spo.pruning import prune_alpha, refit_nodes
from .fitcontrol import FitControl
from .pipeline import MIO, DPUse, Start, run_mio


def round_features(X, decimals: int | None) -> np.ndarray:
    """Round features on the [0, 1] training scale (returned in original units).

    Why: the MILP's strict-inequality rows need a per-feature gap epsilon well above solver tolerances; the
    paper's code rounds x in [0, 1] to 2-3 decimals for the same reason.
    """
    if decimals is None:
        return X
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return np.round((X - lo) / span, int(decimals)) * span + lo


def fit_spot_mio(problem, X, C, w=None, depth: int = 2, min_samples_leaf: float = 1, alpha: float = 1e-4,
                 solver: str = "highs", time_limit: float | Budget | None = 60.0, mip_gap: float = 1e-6,
                 quantile_step: float | None = 0.01, x_precision: int | None = None, verbose=False,
                 feature_names=None, warm_start="greedy", dp_bound: bool = False, binarization: str = "quantile",
                 n_thresholds: int = 10):
    """Greedy SPOT, then the SPOT MILP warm-started; returns (tree, info). Never worse than greedy or its start.

    Every candidate is compared on the SPOT objective F = training normalised SPO loss + alpha · splits
    (:func:`opttrees.spo.spot_objective`; ``alpha`` on the normalised scale, see :mod:`opttrees.formulations.spot`): the
    greedy tree is pruned at ``alpha`` (:func:`opttrees.spo.prune_alpha`), so greedy and MILP minimise the
    same function. The MILP sees features rounded to ``x_precision`` decimals on the [0, 1] scale (None: exact
    values). The returned tree is whichever of {greedy on the raw data, greedy on the rounded data, the DP
    tree, MILP} has the lowest F on the *raw* training data, with leaves refitted on it.

    ``warm_start``: "greedy" (or True) starts the MILP from greedy SPOT on the rounded data; "dp" from the better
    (on the MILP's objective) of that and the SPO dynamic program's tree over the MILP's own features
    (``binarization``/``n_thresholds``; :func:`opttrees.dp.bound.dp_for_formulation`), a feasible start with
    the same objective; None/False: no start. ``dp_bound``: give the MILP the DP optimum over *all* midpoints
    of its features as an objective bound (``solve(..., objective_bound=...)``; the DP then runs over all
    midpoints, which is slow on large n); the fit is proven optimal with ``proof == "dp-bound"`` when the
    MILP's tree reaches it. The DP may use half of the time left. ``time_limit`` (seconds, or a running
    :class:`~opttrees.interrupt.Budget` whose clock is shared) covers the whole call.

    ``info`` holds the greedy tree, the SolveResult, the objectives, ``norm`` (N = Σ ω |z*|), ``source``
    ("mio", "dp" or "greedy"), ``start_source`` / ``start_objective`` (the start on the MILP's objective) and,
    with a DP, ``dp_result`` / ``dp_objective`` / ``dp_objective_raw`` (its tree on the MILP's objective and on
    the raw data).
    """
    def run(ctl, job, **request):
        job.auto = Auto(solver=solver, **request)
        job.solver_options = dict(mip_gap=mip_gap, verbose=verbose)
        return run_mio(job, ctl, "SPOT MILP", verbose=verbose)

    return spot_mio(run, FitControl(time_limit), problem, X, C, w, depth, min_samples_leaf, alpha, quantile_step,
                    x_precision, feature_names, warm_start, dp_bound, binarization, n_thresholds)


def spot_mio(run: Callable, ctl: FitControl, problem, X, C, w=None, depth: int = 2, min_samples_leaf: float = 1,
             alpha: float = 1e-4, quantile_step: float | None = 0.01, x_precision: int | None = None,
             feature_names=None, warm_start="greedy", dp_bound=False, binarization: str = "quantile",
             n_thresholds: int = 10):
    """:func:`fit_spot_mio` under the fit control ``ctl`` (the estimator's, or the function's own), with
    ``run(ctl, job, **request)`` the way into :func:`~opttrees.estimators.pipeline.run_mio` (the estimator's
    :meth:`~opttrees.estimators.base.SolverMixin._run_mio`: its solver settings and the planner)."""
    if warm_start not in (True, False, None, "greedy", "dp", "auto"):
        raise InputError(f"warm_start must be 'auto', 'greedy', 'dp' or None; got {warm_start!r}")
    X, C, w = check_costs_fit(problem, X, C, w)
    Xr = round_features(X, x_precision)
    Cm = problem.sign * C
    _, z = problem._solve_min(Cm)
    norm = spot_norm(problem, C, w, z=z)

    def greedy_on(Xg):
        return prune_alpha(grow_spo_tree(problem, Xg, C, w, max_depth=depth, min_samples_leaf=min_samples_leaf,
                                         quantile_step=quantile_step, feature_names=feature_names), alpha, norm)
    with ctl.stage("warm_start"):
        greedy = greedy_on(X)
        greedy_r = greedy if x_precision is None else greedy_on(Xr)
        costs = prepare_costs(problem, Xr, C, w, feature_names)
    # "auto": the DP over every midpoint of the MILP's features gives the start and the bound when it is predicted
    # to fit; the MILP is compared on its own objective on its rounded features, leaves refitted
    cost = DPCost(len(X), depth, int(sum(len(v) - 1 for v in costs.ranks[2])), C.shape[1],
                  "the SPO DP over every midpoint", SPO_DP_SECONDS_PER_CELL)
    job = MIO(partial(SPOTFormulation, costs, problem, max_depth=depth, min_samples_leaf=min_samples_leaf, alpha=alpha),
              starts=[Start.of("greedy", greedy_r)], hand_start=None, dp=DPUse(binarization=binarization,
                                                                               n_thresholds=int(n_thresholds)),
              comparable=lambda tree: refit_nodes(tree, problem, Xr, C, w))
    out = run(ctl, job, warm_start="greedy" if warm_start is True else warm_start,
              dp_bound=dp_bound if dp_bound == "auto" else bool(dp_bound), cost=cost)
    form, res = out.form, out.result
    info: dict[str, Any] = {"start_source": out.start.source if out.start is not None else None}
    if "why" in res.plan:
        info["plan_why"] = res.plan["why"]
    dp_run = out.dp_run
    if dp_run is not None:
        info.update(dp_result=dp_run.result, dp_objective=dp_run.objective, dp_tree=dp_run.tree)
    start = out.start
    info["start_objective"] = getattr(form, "start_objective", None) if start is not None else None
    rounded = (lambda tree: form.tree_objective(tree)) if form is not None else (lambda tree: None)

    def raw_objective(tree):
        tree = refit_nodes(tree, problem, X, C, w)
        return spot_objective(problem, tree, X, C, w, alpha=alpha, norm=norm, z=z), tree
    g_obj, greedy = raw_objective(greedy)
    gr_obj, greedy_r_raw = raw_objective(greedy_r)
    info.update({"greedy_tree": greedy, "result": res, "greedy_objective": g_obj, "formulation": form, "norm": norm,
                 "greedy_objective_rounded": rounded(refit_nodes(greedy_r, problem, Xr, C, w))})
    cands = [(g_obj, "greedy", greedy), (gr_obj, "greedy", greedy_r_raw)]
    if "dp_tree" in info and (info.get("dp_result") is not None):
        dp_obj, dp_raw = raw_objective(info["dp_tree"])
        info["dp_objective_raw"] = dp_obj
        cands.append((dp_obj, "dp", dp_raw))
    if out.source == "mio":
        mio = prune_alpha(out.tree, alpha, norm)
        info["mio_objective_rounded"] = rounded(mio)
        m_obj, mio = raw_objective(mio)
        info["mio_objective"] = m_obj
        cands.append((m_obj, "mio", mio))
    elif out.notes:
        info["verification_error"] = out.notes[0]
    obj, source, tree = min(cands, key=lambda c: (c[0] - (1e-12 if c[1] == "mio" else 0.0)))
    info["source"], info["objective"] = source, obj
    if x_precision is not None and res.proven_optimal and not np.array_equal(Xr, X):
        # the proof is about the rounded features: rounding merged values the raw data keeps apart
        res.unproven(f"proven optimal on features rounded to x_precision={x_precision} decimals, not on the raw "
                     "features", termination=TerminationCondition.LIMIT)
    return tree, info
