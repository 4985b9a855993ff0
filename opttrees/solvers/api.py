"""``solve(formulation, solver=...)``: the one entry point from formulations to HiGHS or SCIP."""
from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
import pyomo.environ as pyo

from ..params import Satisfies, check_param
from ..errors import InputError, SolverError
from ..interrupt import STOP, Budget, seconds, stop_on_sigint
from .adapter import adapter_names, get_adapter, installed
from .checks import model_feasible, violated_cuts
from .compile import CompileStopped, compile_model, fixed_vars
from .options import SolveOptions
from .result import BOUND_PROVENANCES, ObjectiveBound, SolveResult, finish, settle_with_bound

#: the built-in back-ends (:mod:`opttrees.solvers.adapter`), installed or not
SOLVERS = adapter_names()


def available_solvers() -> list[str]:
    """Registered solvers whose Python package is importable here."""
    return [s for s in adapter_names() if installed(s)]


def check_solver(solver: str) -> str:
    """Normalise and validate a solver name with a message that lists the alternatives."""
    names = adapter_names()
    if not isinstance(solver, str) or solver.lower() not in names:
        raise SolverError(f"unknown solver {solver!r}; choose one of {list(names)}")
    s = solver.lower()
    if not installed(s):
        package = get_adapter(s).package
        raise SolverError(f"solver {s!r} needs the Python package {package!r}, which is not installed: "
                          f"pip install {package}")
    return s


def _check_options(time_limit, mip_gap, threads):
    """The shared rules of opttrees.params: the same words as every estimator and spec."""
    check_param("time_limit", time_limit, owner="solve()")
    check_param("mip_gap", mip_gap, owner="solve()")
    check_param("threads", threads, owner="solve()")


def solve(formulation, solver: str = "highs", time_limit: float | Budget | None = None, mip_gap: float = 1e-6,
          threads: int = 1, seed: int = 0, warm_start=None, verbose: int | bool = False,
          callbacks=None, objective_bound=None, bound_row: bool = True) -> SolveResult:
    """Solve a formulation (or a bare Pyomo model) and load the solution into its Pyomo variables.

    ``time_limit`` is the wall time of this call (seconds, or a running :class:`~opttrees.interrupt.Budget`: what
    is left of it): compiling the model and handing it to the solver count.
    The first Ctrl-C stops the solver and returns the best solution so far with status "interrupted" (a
    second one raises ``KeyboardInterrupt``).

    ``warm_start`` is a Tree (passed through ``formulation.warm_start``) or None. ``callbacks`` are functions
    called with each new :class:`Incumbent`; returning True stops the solve. Lazy constraints come from
    ``formulation.separator`` (SCIP: a constraint handler; HiGHS: a solve-separate-resolve loop).

    ``objective_bound`` is a bound on the formulation's objective from outside the solver: an
    :class:`~opttrees.solvers.result.ObjectiveBound` made by :func:`opttrees.dp.bound.dp_bound` (the solver
    layer does not import the DP, which sits above it). A bare
    number is refused (a bound decides proofs, so it must say where it came from), and so is a bound for
    another formulation or for an objective that was changed since. The bound holds after side constraints
    are added to ``formulation.model``. With ``bound_row`` it enters the model as the row
    ``objective >= bound`` (``<=`` when maximising); the solve stops at an incumbent that reaches it. The
    result is optimal with ``proof == "dp-bound"`` when the returned point's objective, re-verified from its
    tree, reaches the bound (:func:`~opttrees.solvers.result.settle_with_bound`); ``external_bound`` records it.
    """
    with stop_on_sigint():
        return _solve(formulation, solver, time_limit, mip_gap, threads, seed, warm_start, verbose, callbacks,
                      objective_bound, bound_row)


def _solve(formulation, solver, time_limit, mip_gap, threads, seed, warm_start, verbose, callbacks,
           objective_bound=None, bound_row=True):
    t0 = time.perf_counter()
    s = check_solver(solver)
    time_limit = seconds(time_limit)
    _check_options(time_limit, mip_gap, threads)
    check_param("bound_row", bound_row, [_BOOL], owner="solve()")
    if time_limit is not None and math.isinf(time_limit):
        time_limit = None
    budget = Budget(time_limit)   # from now: the whole solve, hand-off included (a given Budget: what it had left)
    bound = _resolve_bound(formulation, objective_bound)
    # a formulation built onto a caller's block solves the whole model it lives in (objective, side rows)
    model = (formulation if isinstance(formulation, pyo.Block) else formulation.model).model()
    separator = getattr(formulation, "separator", None)
    repair = getattr(separator, "repair", None) if separator is not None else None
    stop_at_bound = [] if bound is None else [lambda inc: bound.meets(inc.primal)]
    opts = SolveOptions(time_limit=time_limit, mip_gap=float(mip_gap), threads=int(threads), seed=int(seed),
                        verbose=int(verbose), callbacks=list(callbacks or []) + stop_at_bound,
                        budget=budget)
    start_obj = None
    fixed = fixed_vars(model)   # the user's Var.fix(): kept as columns with lo = hi = value
    if warm_start is not None:
        if isinstance(formulation, pyo.Block):
            raise InputError("warm_start needs a formulation object (a bare Pyomo model has no warm_start)")
        formulation.warm_start(warm_start)
        for v, val in fixed:    # a warm start sets every variable; a fixed one keeps the user's value
            v.set_value(val, skip_validation=True)
    try:
        cm = compile_model(model, should_stop=lambda: STOP.is_set() or (opts.remaining() or 1.0) <= 0,
                           fixed=fixed)
    except CompileStopped as exc:
        why = "interrupted" if STOP.is_set() else "time_limit"
        res = finish(s, get_adapter(s).version(), why, None, None, 0.0, 0, [],
                     message=f"{why.replace('_', ' ')} while handing the model to the solver ({exc})")
        res.timings["compile"] = res.timings["total"] = time.perf_counter() - t0
        if hasattr(formulation, "last_result"):
            formulation.last_result = res
        return res
    compile_time = time.perf_counter() - t0
    as_row = bool(bound is not None and bound_row and not cm.quad)
    if as_row:
        cm = _with_bound_row(cm, bound)
    x0 = None
    if warm_start is not None:
        x0 = cm.start_vector()
        if not np.isnan(x0).all():
            filled = np.where(np.isnan(x0), 0.0, x0)
            start_obj = cm.objective_value(filled) if not np.isnan(x0).any() else None
    if repair is not None:
        inner = repair
        repair = lambda x: _repair_values(cm, inner, x)
    if STOP.is_set():   # Ctrl-C before the solve started (e.g. during the build): return the start as it is
        res, x = _not_started(cm, s, x0, separator)
    else:
        res, x = get_adapter(s).solve(cm, opts, x0=x0, separator=separator, repair=repair)
    if x is not None:
        cm.load_solution(x)
    if bound is not None:
        verified, reason = bound.verify(formulation) if x is not None else (None, "no solution")
        settle_with_bound(res, bound, verified, reason, as_row)
    res.start_objective = start_obj
    res.timings["compile"] = compile_time
    res.timings["total"] = time.perf_counter() - t0
    res.timings.update({"n_rows": cm.n_rows, "n_cols": cm.n_cols, "n_nonzeros": cm.n_nonzeros})
    if hasattr(formulation, "last_result"):
        formulation.last_result = res
    return res


_BOOL = Satisfies(lambda v: isinstance(v, (bool, np.bool_)), "True or False")


def prove_start(formulation, tree, objective_bound: ObjectiveBound) -> SolveResult | None:
    """``tree`` as a proven-optimal result of ``formulation`` when its re-verified objective reaches
    ``objective_bound``, without handing the model to a solver; None when it falls short.

    Why: a solver given such a start only stops at once, after a hand-off that costs more than the rest of the
    fit on thousands of rows (5,000 rows, OCT depth 2: a 15 s hand-off after a 4 s DP). The caller vouches
    that ``tree`` satisfies every row of the model (the DP's own tree over the formulation's split set, with no
    side constraints added): this checks the bound against the model and re-verifies the tree by routing the
    training data, as :func:`solve` does for a returned point, but does not evaluate the model's rows.
    The result's solver is "none", its proof the bound's provenance; ``formulation.extract()`` decodes the tree.
    """
    t0 = time.perf_counter()
    bound = _resolve_bound(formulation, objective_bound)
    if bound is None:
        return None
    formulation.warm_start(tree)
    verified, reason = bound.verify(formulation)
    if verified is None or not bound.meets(verified):
        return None
    res = finish("none", "", "optimal", verified, None, time.perf_counter() - t0, 0, [])
    settle_with_bound(res, bound, verified, reason)
    if not res.proven_optimal:   # pragma: no cover - meets() above is the rule settle_with_bound applies
        return None
    res._note(f"the start tree reaches the {bound.provenance}: proven optimal without a solver (no hand-off)")
    res.start_objective = verified
    res.timings.update(total=res.runtime, compile=0.0)
    formulation.last_result = res
    return res


def _resolve_bound(formulation, objective_bound) -> ObjectiveBound | None:
    """The checked external bound of this solve, or None."""
    if objective_bound is None:
        return None
    if isinstance(formulation, pyo.Block):
        raise InputError("objective_bound needs a formulation object (a bare Pyomo model has no tree to verify)")
    if not isinstance(objective_bound, ObjectiveBound):
        raise InputError(f"objective_bound must be None or an ObjectiveBound from opttrees.dp.bound.dp_bound"
                         f"(formulation); got {objective_bound!r} (a bare number states no provenance, and a "
                         "bound decides proofs)")
    return _check_bound(formulation, objective_bound)


def _check_bound(formulation, bound: ObjectiveBound) -> ObjectiveBound:
    """Refuse a bound that does not speak about this formulation's objective as the model holds it now."""
    if bound.provenance not in BOUND_PROVENANCES:
        raise InputError(f"objective_bound has provenance {bound.provenance!r}; accepted: {sorted(BOUND_PROVENANCES)}")
    if bound.formulation is not formulation:
        raise InputError("objective_bound was computed for another formulation; compute it for this one "
                         "(opttrees.dp.bound.dp_bound(formulation))")
    if not getattr(formulation, "owns_model", True):
        raise InputError("objective_bound: the formulation was built on a block of a bigger model whose objective "
                         "is not the formulation's")
    m = formulation.model
    objs = list(m.model().component_data_objects(pyo.Objective, active=True, descend_into=True))
    own = m.component("objective")
    if (len(objs) != 1 or own is None or objs[0] is not own or own.expr is not m.component("objective_expr")
            or m.objective_expr.expr is not bound.objective_expr):
        raise InputError("objective_bound: the model's objective is no longer the formulation's own (it was "
                         "replaced, deactivated or edited); the bound holds only for that objective")
    if (1 if own.sense == pyo.minimize else -1) != bound.sense:
        raise InputError("objective_bound: the bound's direction does not match the objective's sense")
    if not math.isfinite(bound.value):
        raise InputError(f"objective_bound must be finite; got {bound.value!r}")
    reason = bound.check_model(formulation) if bound.check_model is not None else ""
    if reason:
        raise InputError(f"objective_bound: {reason}; the bound holds for the formulation plus added constraints, "
                         "not for a model with rows removed or relaxed")
    return bound


#: slack of the bound row (relative): the row must never cut off the optimum through round-off
BOUND_ROW_SLACK = 1e-7


def _with_bound_row(cm, bound: ObjectiveBound):
    """The compiled model plus the row ``objective >= bound`` (minimisation) or ``<= bound`` (maximisation)."""
    nz = np.nonzero(cm.cost)[0].astype(np.int32)
    rhs = bound.value - cm.offset
    slack = BOUND_ROW_SLACK * max(1.0, abs(bound.value))
    lo, hi = (rhs - slack, math.inf) if bound.sense == 1 else (-math.inf, rhs + slack)
    return dataclasses.replace(
        cm, row_start=np.append(cm.row_start, cm.row_start[-1] + len(nz)).astype(np.int32),
        row_index=np.concatenate([cm.row_index, nz]).astype(np.int32),
        row_value=np.concatenate([cm.row_value, cm.cost[nz]]),
        row_lower=np.append(cm.row_lower, lo), row_upper=np.append(cm.row_upper, hi),
        row_names=list(cm.row_names) + [f"{bound.provenance}_row"])


def _not_started(cm, solver: str, x0, separator):
    """An 'interrupted' result holding the warm start when it is a complete, feasible solution."""
    x = None
    if x0 is not None and not np.isnan(x0).any() and model_feasible(cm, x0):
        if separator is None or not violated_cuts(cm, separator, x0):
            x = x0
    obj = cm.objective_value(x) if x is not None else None
    version = get_adapter(solver).version()
    res = finish(solver, version, "interrupted", obj, None, 0.0, 0, [],
                 message="interrupted before the solve started")
    return res, x


def _repair_values(cm, repair, x: np.ndarray):
    """Let a separator repair an incumbent: it receives value(var) and returns {VarData: value}."""
    fixed = repair(lambda v: float(x[cm.col_of[id(v)]]))
    if not fixed:
        return None
    xr = x.copy()
    for v, val in fixed.items() if isinstance(fixed, dict) else fixed:
        xr[cm.col_of[id(v)]] = val
    return xr
