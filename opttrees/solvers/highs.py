"""HiGHS adapter: raw ``highspy.Highs`` loaded from compiled arrays with ``passModel``.

HiGHS 1.15 has no lazy constraints, so separation runs as solve -> separate -> add rows -> re-solve, each round
stopped at the first incumbent that violates a cut, all under one overall time limit. Pitfalls handled
(shared/notes/solver-probe.md): the interrupt callback always writes an explicit flag (stale-flag bug);
``threads`` is process-global, so the scheduler is reset when it changes.
"""
from __future__ import annotations

import math
import time

import numpy as np

from ..errors import SolverError
from .compile import CompiledModel
from .options import Progress, SolveOptions
from .result import SolveResult, relative_gap

_threads_in_use: int | None = None


def _highspy():
    try:
        import highspy
    except ImportError:  # pragma: no cover - highspy is a hard dependency
        raise SolverError("solver 'highs' needs the highspy package: pip install highspy") from None
    return highspy


def _build(cm: CompiledModel, opts: SolveOptions):
    hs = _highspy()
    global _threads_in_use
    if _threads_in_use is not None and _threads_in_use != opts.threads:
        hs.Highs.resetGlobalScheduler(True)
    _threads_in_use = opts.threads
    h = hs.Highs()
    h.setOptionValue("output_flag", opts.verbose >= 2)
    h.setOptionValue("threads", int(opts.threads))
    h.setOptionValue("random_seed", int(opts.seed))
    h.setOptionValue("mip_rel_gap", float(opts.mip_gap))
    lp = hs.HighsLp()
    lp.num_col_ = cm.n_cols
    lp.num_row_ = cm.n_rows
    lp.col_cost_ = cm.cost * cm.sense  # HiGHS minimises; we flip for maximisation ourselves
    lp.offset_ = cm.offset * cm.sense
    lp.col_lower_ = cm.col_lower
    lp.col_upper_ = cm.col_upper
    lp.row_lower_ = cm.row_lower
    lp.row_upper_ = cm.row_upper
    lp.a_matrix_.format_ = hs.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = cm.row_start
    lp.a_matrix_.index_ = cm.row_index
    lp.a_matrix_.value_ = cm.row_value
    lp.a_matrix_.num_col_ = cm.n_cols
    lp.a_matrix_.num_row_ = cm.n_rows
    if cm.is_mip:
        lp.integrality_ = [hs.HighsVarType.kInteger if i else hs.HighsVarType.kContinuous for i in cm.integer]
    status = h.passModel(lp)
    if status != hs.HighsStatus.kOk and status != hs.HighsStatus.kWarning:
        raise SolverError(f"HiGHS rejected the model (passModel returned {status})")
    return h


def _set_start(h, x0: np.ndarray) -> None:
    hs = _highspy()
    col = np.where(np.isnan(x0), hs.kHighsUndefined, x0)
    sol = hs.HighsSolution()
    sol.col_value = col.tolist()
    sol.value_valid = True
    h.setSolution(sol)


_STATUS = {
    "kOptimal": "optimal", "kTimeLimit": "time_limit", "kInterrupt": "interrupted", "kInfeasible": "infeasible",
    "kUnbounded": "unbounded", "kUnboundedOrInfeasible": "infeasible", "kIterationLimit": "limit",
    "kSolutionLimit": "limit", "kObjectiveBound": "limit", "kObjectiveTarget": "limit",
}


def solve_highs(cm: CompiledModel, opts: SolveOptions, x0: np.ndarray | None = None,
                separator=None, repair=None) -> tuple[SolveResult, np.ndarray | None]:
    if cm.quad:
        if cm.is_mip:
            raise SolverError("HiGHS cannot solve a quadratic objective with integer variables "
                              "(e.g. squared-loss regression trees); use solver='scip'")
        raise SolverError("quadratic objectives are routed to SCIP in opttrees; use solver='scip'")
    t0 = time.perf_counter()
    h = _build(cm, opts)
    load_time = time.perf_counter() - t0
    prog = Progress("highs", opts, cm.sense)
    state = {"interrupt": False, "cuts": [], "keys": set()}
    sgn = cm.sense

    def on_improving(e):
        o = e.data_out
        prog.incumbent(sgn * o.objective_function_value, sgn * o.mip_dual_bound, int(o.mip_node_count))

    def on_logging(e):
        o = e.data_out
        prog.tick(sgn * o.objective_function_value, sgn * o.mip_dual_bound, int(o.mip_node_count))

    def on_solution(e):  # lazy separation at every integer-feasible solution HiGHS finds
        if separator is None:
            return
        x = np.asarray(e.data_out.mip_solution)
        new = _separate(cm, separator, x, state["keys"])
        if new:
            state["cuts"].extend(new)
            state["interrupt"] = True

    def on_interrupt(e):
        e.interrupt(bool(state["interrupt"] or prog.stop))  # always explicit (HiGHS stale-flag bug)

    h.cbMipImprovingSolution.subscribe(on_improving)
    h.cbMipLogging.subscribe(on_logging)
    h.cbMipInterrupt.subscribe(on_interrupt)
    if separator is not None:
        h.cbMipSolution.subscribe(on_solution)

    start = prog.t0
    best_x, best_obj = None, None
    bound = None
    n_cuts, rounds, nodes = 0, 0, 0
    status = "error"
    if x0 is not None:
        _set_start(h, x0)
    while True:
        rounds += 1
        if opts.time_limit is not None:
            remaining = opts.time_limit - (time.perf_counter() - start)
            if remaining <= 0:
                status = "time_limit"
                break
            h.setOptionValue("time_limit", float(remaining))
        state["interrupt"] = False
        state["cuts"] = []
        h.run()
        ms = h.getModelStatus()
        name = str(ms).split(".")[-1]
        status = _STATUS.get(name, "error" if name in ("kSolveError", "kModelError", "kLoadError") else "limit")
        info = h.getInfo()
        nodes += int(info.mip_node_count) if cm.is_mip else 0
        has = info.primal_solution_status == 2  # kSolutionStatusFeasible
        x = np.asarray(h.getSolution().col_value) if has else None
        rbound = (sgn * info.mip_dual_bound) if cm.is_mip else (sgn * info.objective_function_value if has else None)
        if rbound is not None and math.isfinite(rbound):
            bound = rbound  # each round's master is a relaxation: its bound is valid overall
        if separator is None:
            if has:
                best_x, best_obj = x, sgn * info.objective_function_value
            break
        cuts = list(state["cuts"])
        if has:
            cuts += _separate(cm, separator, x, state["keys"])
        if has and not cuts:
            obj = sgn * info.objective_function_value
            if best_obj is None or sgn * obj < sgn * best_obj:
                best_x, best_obj = x, obj
        if status in ("infeasible", "unbounded", "error"):
            break
        if not cuts:  # the master's solution satisfies every cut: its status stands for the full model
            break
        if prog.stop:
            status = "interrupted"
            break
        _add_rows(h, cuts)
        n_cuts += len(cuts)
        # next start: the incumbent repaired to satisfy every cut (problem-specific), else let HiGHS search
        if repair is not None and x is not None:
            xr = repair(x)
            if xr is not None:
                robj = cm.objective_value(xr)
                if best_obj is None or sgn * robj < sgn * best_obj:
                    best_x, best_obj = xr, robj
                    prog.incumbent(robj, bound if bound is not None else math.nan, nodes)
                _set_start(h, xr)
        if status == "time_limit":
            break
    runtime = time.perf_counter() - start
    if best_obj is not None and bound is not None:
        # the master bound can never be better than a feasible point (numerical noise aside)
        bound = max(bound, best_obj) if sgn < 0 else min(bound, best_obj)
    gap = relative_gap(best_obj, bound)
    if status == "optimal" and best_obj is None:
        status = "no_solution"
    if status in ("time_limit", "limit") and best_obj is None:
        status = "no_solution"
    proven = status == "optimal"  # HiGHS proved it within mip_rel_gap / its absolute gap tolerance
    res = SolveResult(status=status, objective=best_obj, bound=bound, gap=gap, runtime=runtime,
                      node_count=nodes, proven_optimal=proven, solver="highs", has_solution=best_x is not None,
                      n_lazy_cuts=n_cuts, n_rounds=rounds, trace=prog.trace,
                      timings={"load": load_time, "solve": runtime})
    return res, best_x


def _separate(cm: CompiledModel, separator, x: np.ndarray, seen: set) -> list:
    value = lambda v: float(x[cm.col_of[id(v)]])
    out = []
    for expr in separator.separate(value):
        idx, coef, lo, hi = cm.compile_cut(expr)
        key = (tuple(idx.tolist()), tuple(np.round(coef, 12).tolist()), lo, hi)
        if key in seen:
            continue
        seen.add(key)
        out.append((idx, coef, lo, hi))
    return out


def _add_rows(h, cuts) -> None:
    lo = np.array([c[2] for c in cuts], dtype=np.float64)
    hi = np.array([c[3] for c in cuts], dtype=np.float64)
    starts = np.cumsum([0] + [len(c[0]) for c in cuts[:-1]]).astype(np.int32)
    idx = np.concatenate([c[0] for c in cuts]).astype(np.int32)
    val = np.concatenate([c[1] for c in cuts]).astype(np.float64)
    h.addRows(len(cuts), lo, hi, len(idx), starts, idx, val)
