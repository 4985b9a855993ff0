"""``solve(formulation, solver=...)``: the one entry point from formulations to HiGHS or SCIP."""
from __future__ import annotations

import importlib.util
import math
import time

import numpy as np
import pyomo.environ as pyo

from ..params import check_param
from ..errors import InputError, SolverError
from ..interrupt import STOP, stop_on_sigint
from .compile import CompileStopped, compile_model
from .options import SolveOptions
from .result import SolveResult, finish

SOLVERS = ("highs", "scip")
_MODULE = {"highs": "highspy", "scip": "pyscipopt"}


def available_solvers() -> list[str]:
    """Solvers whose Python package is importable here."""
    return [s for s in SOLVERS if importlib.util.find_spec(_MODULE[s]) is not None]


def check_solver(solver: str) -> str:
    """Normalise and validate a solver name with a message that lists the alternatives."""
    if not isinstance(solver, str) or solver.lower() not in SOLVERS:
        raise SolverError(f"unknown solver {solver!r}; choose one of {list(SOLVERS)}")
    s = solver.lower()
    if importlib.util.find_spec(_MODULE[s]) is None:
        raise SolverError(f"solver {s!r} needs the Python package {_MODULE[s]!r}, which is not installed: "
                          f"pip install {_MODULE[s]}")
    return s


def _check_options(time_limit, mip_gap, threads):
    """The shared rules of opttrees.params: the same words as every estimator and spec."""
    check_param("time_limit", time_limit, owner="solve()")
    check_param("mip_gap", mip_gap, owner="solve()")
    check_param("threads", threads, owner="solve()")


def solve(formulation, solver: str = "highs", time_limit: float | None = None, mip_gap: float = 1e-6,
          threads: int = 1, seed: int = 0, warm_start=None, verbose: int | bool = False,
          callbacks=None) -> SolveResult:
    """Solve a formulation (or a bare Pyomo model) and load the solution into its Pyomo variables.

    ``time_limit`` is the wall time of this call: compiling the model and handing it to the solver count.
    The first Ctrl-C stops the solver and returns the best solution so far with status "interrupted" (a
    second one raises ``KeyboardInterrupt``).

    ``warm_start`` is a Tree (passed through ``formulation.warm_start``) or None. ``callbacks`` are functions
    called with each new :class:`Incumbent`; returning True stops the solve. Lazy constraints come from
    ``formulation.separator`` (SCIP: a constraint handler; HiGHS: a solve-separate-resolve loop).
    """
    with stop_on_sigint():
        return _solve(formulation, solver, time_limit, mip_gap, threads, seed, warm_start, verbose, callbacks)


def _solve(formulation, solver, time_limit, mip_gap, threads, seed, warm_start, verbose, callbacks):
    t0 = time.perf_counter()
    s = check_solver(solver)
    _check_options(time_limit, mip_gap, threads)
    if time_limit is not None and math.isinf(time_limit):
        time_limit = None
    # a formulation built onto a caller's block solves the whole model it lives in (objective, side rows)
    model = (formulation if isinstance(formulation, pyo.Block) else formulation.model).model()
    separator = getattr(formulation, "separator", None)
    repair = getattr(separator, "repair", None) if separator is not None else None
    opts = SolveOptions(time_limit=time_limit, mip_gap=float(mip_gap), threads=int(threads), seed=int(seed),
                        verbose=int(verbose), callbacks=list(callbacks or []),
                        deadline=None if time_limit is None else t0 + float(time_limit))
    start_obj = None
    if warm_start is not None:
        if isinstance(formulation, pyo.Block):
            raise InputError("warm_start needs a formulation object (a bare Pyomo model has no warm_start)")
        formulation.warm_start(warm_start)
    try:
        cm = compile_model(model, should_stop=lambda: STOP.is_set() or (opts.remaining() or 1.0) <= 0)
    except CompileStopped as exc:
        why = "interrupted" if STOP.is_set() else "time_limit"
        res = finish(s, _adapter(s).version(), why, None, None, 0.0, 0, [],
                     message=f"{why.replace('_', ' ')} while handing the model to the solver ({exc})")
        res.timings["compile"] = res.timings["total"] = time.perf_counter() - t0
        if hasattr(formulation, "last_result"):
            formulation.last_result = res
        return res
    compile_time = time.perf_counter() - t0
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
        run = getattr(_adapter(s), f"solve_{s}")
        res, x = run(cm, opts, x0=x0, separator=separator, repair=repair)
    if x is not None:
        cm.load_solution(x)
    res.start_objective = start_obj
    res.timings["compile"] = compile_time
    res.timings["total"] = time.perf_counter() - t0
    res.timings.update({"n_rows": cm.n_rows, "n_cols": cm.n_cols, "n_nonzeros": cm.n_nonzeros})
    if hasattr(formulation, "last_result"):
        formulation.last_result = res
    return res


def _not_started(cm, solver: str, x0, separator):
    """An 'interrupted' result holding the warm start when it is a complete, feasible solution."""
    from .highs import _model_feasible, _violated

    x = None
    if x0 is not None and not np.isnan(x0).any() and _model_feasible(cm, x0):
        if separator is None or not _violated(cm, separator, x0):
            x = x0
    obj = cm.objective_value(x) if x is not None else None
    version = _adapter(solver).version()
    res = finish(solver, version, "interrupted", obj, None, 0.0, 0, [],
                 message="interrupted before the solve started")
    return res, x


def _adapter(name: str):
    """The adapter module of a solver: ``version()`` and ``solve_<name>(cm, opts, x0, separator, repair)``."""
    if name == "highs":
        from . import highs
        return highs
    from . import scip
    return scip


def _repair_values(cm, repair, x: np.ndarray):
    """Let a separator repair an incumbent: it receives value(var) and returns {VarData: value}."""
    fixed = repair(lambda v: float(x[cm.col_of[id(v)]]))
    if not fixed:
        return None
    xr = x.copy()
    for v, val in fixed.items() if isinstance(fixed, dict) else fixed:
        xr[cm.col_of[id(v)]] = val
    return xr
