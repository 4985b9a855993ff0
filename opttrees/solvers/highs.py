"""HiGHS adapter: raw ``highspy.Highs`` loaded from compiled arrays with ``passModel``.

HiGHS 1.15 has no lazy constraints, so separation runs as solve -> separate -> add rows -> re-solve, each round
stopped at the first incumbent that violates a cut, all under one overall time limit. Pitfalls handled
(shared/notes/solver-probe.md): the interrupt callback always writes an explicit flag (stale-flag bug);
``threads`` is process-global, so the scheduler is reset when it changes.
"""
from __future__ import annotations

import functools
import importlib.metadata
import logging
import math
import time

import numpy as np

from ..errors import SolverError
from .compile import CompiledModel
from .options import Progress, SolveOptions
from .result import SolveResult, finish

log = logging.getLogger(__name__)

#: a cut-loop round is stopped after this many cut-violating solutions or this many seconds after the first
CUT_BATCH = 1
CUT_GRACE = 0.5

_threads_in_use: int | None = None


def _consistent(own: float, reported: float) -> bool:
    """The solver's figure for a round agrees with the objective of the point it returned."""
    return abs(own - reported) <= 1e-6 * max(1.0, abs(reported))


def _highspy():
    try:
        import highspy
    except ImportError:  # pragma: no cover - highspy is a hard dependency
        raise SolverError("solver 'highs' needs the highspy package: pip install highspy") from None
    return highspy


@functools.lru_cache(maxsize=1)
def version() -> str:
    """highspy's version (creating a Highs object to ask would print HiGHS's banner)."""
    try:
        return f"HiGHS {importlib.metadata.version('highspy')}"
    except importlib.metadata.PackageNotFoundError:   # pragma: no cover
        return "HiGHS"


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
    prog = Progress("highs", opts, cm.sense)  # runtime and trace times are measured from here
    state = {"interrupt": False, "cuts": [], "keys": set(), "ticked": 0.0, "n_violated": 0,
             "first_violation": None}
    sgn = cm.sense
    # best solution that satisfies the model AND every cut (with a separator: verified by it)
    best = {"x": None, "obj": None}

    def better(obj: float) -> bool:
        return best["obj"] is None or sgn * obj < sgn * best["obj"] - 1e-9

    def offer(x: np.ndarray, obj: float, dual: float, nodes: int) -> None:
        """A cut-feasible solution: keep it if it improves and report it as an incumbent."""
        if better(obj):
            best["x"], best["obj"] = np.array(x, dtype=np.float64), obj
            prog.incumbent(obj, dual, nodes)

    def on_improving(e):  # without a separator the master is the full model: its incumbents are real
        o = e.data_out
        if separator is None:
            prog.incumbent(sgn * o.objective_function_value, sgn * o.mip_dual_bound, int(o.mip_node_count))

    def on_logging(e):
        o = e.data_out
        primal = sgn * o.objective_function_value if separator is None else \
            (best["obj"] if best["obj"] is not None else math.nan)
        prog.tick(primal, sgn * o.mip_dual_bound, int(o.mip_node_count))

    def on_solution(e):  # lazy separation at every integer-feasible solution HiGHS finds
        if separator is None:
            return
        o = e.data_out
        x = np.asarray(o.mip_solution)
        violated = _violated(cm, separator, x)
        if violated:
            state["cuts"].extend(_dedupe(violated, state["keys"]))
            # batch: keep the round going for a few more cut-violating solutions (each brings new cuts), so
            # fewer restarts are needed; stop it after CUT_BATCH of them or a short grace time
            now = time.perf_counter()
            if state["first_violation"] is None:
                state["first_violation"] = now
            state["n_violated"] += 1
            if state["n_violated"] >= CUT_BATCH or now - state["first_violation"] > CUT_GRACE:
                state["interrupt"] = True
        else:  # the master's solution satisfies every cut: a real incumbent (the master bound stays valid)
            offer(x, cm.objective_value(x), sgn * o.mip_dual_bound, int(o.mip_node_count))

    def on_interrupt(e):
        now = time.perf_counter()
        if now - state["ticked"] >= 0.25:   # HiGHS polls this often; its logging callback can be silent for long
            state["ticked"] = now
            o = e.data_out
            primal = sgn * o.objective_function_value if separator is None else \
                (best["obj"] if best["obj"] is not None else math.nan)
            prog.tick(primal, sgn * o.mip_dual_bound, int(o.mip_node_count))
        e.interrupt(bool(state["interrupt"] or prog.stop))  # always explicit (HiGHS stale-flag bug)

    h.cbMipImprovingSolution.subscribe(on_improving)
    h.cbMipLogging.subscribe(on_logging)
    h.cbMipInterrupt.subscribe(on_interrupt)
    if separator is not None:
        h.cbMipSolution.subscribe(on_solution)

    start = prog.t0
    presolve_on = True
    bound = None
    n_cuts, rounds, nodes = 0, 0, 0
    status = "error"
    if x0 is not None:
        if separator is not None and not np.isnan(x0).any() and _model_feasible(cm, x0):
            # a complete start that satisfies the master: if it also satisfies every cut it is the first
            # incumbent of the loop (the master would otherwise forget it once it finds a cut-violating
            # improvement); its violated cuts, if any, are valid and go into the master right away
            violated = _violated(cm, separator, x0)
            if violated:
                fresh = _dedupe(violated, state["keys"])
                if fresh:
                    _add_rows(h, fresh)
                    n_cuts += len(fresh)
            else:
                offer(x0, cm.objective_value(x0), math.nan, 0)
        elif separator is None and not np.isnan(x0).any() and _model_feasible(cm, x0):
            offer(x0, cm.objective_value(x0), math.nan, 0)   # kept if the solver returns nothing better in time
        _set_start(h, x0)
    while True:
        rounds += 1
        if prog.stop:
            status = "interrupted"
            break
        remaining = opts.remaining()
        if remaining is not None:
            if remaining <= 0 and rounds > 1:
                status = "time_limit"
                break
            h.setOptionValue("time_limit", float(max(remaining, 0.01)))
        state["interrupt"] = False
        state["n_violated"], state["first_violation"] = 0, None
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
        # the objective is always the returned point's own: HiGHS can report the optimum of a presolved
        # problem while getSolution() returns another point (e.g. the start), see _consistent
        obj = cm.objective_value(x) if has else None
        consistent = has and _consistent(obj, sgn * info.objective_function_value)
        if has and not consistent:
            log.warning("HiGHS round %d: reported objective %.9g but its solution scores %.9g; the round is "
                        "not a proof", rounds, sgn * info.objective_function_value, obj)
        if separator is None:
            if has and (best["obj"] is None or sgn * obj <= sgn * best["obj"] + 1e-9):
                best["x"], best["obj"] = x, obj
            if has and not consistent and status == "optimal":
                status = "limit"
            break
        cuts = list(state["cuts"])
        violated = _violated(cm, separator, x) if has else []
        if has:
            cuts += _dedupe(violated, state["keys"])
            if not violated:
                offer(x, obj, bound if bound is not None else math.nan, nodes)
        if status in ("infeasible", "unbounded", "error"):
            break
        if prog.stop:
            status = "interrupted"
            break
        if not cuts:
            if status == "optimal" and has and not consistent:
                # the master's optimum is not the point HiGHS returned: presolve reduced columns that no cut
                # mentions yet (dual reductions valid only if no cut ever comes). Re-solve the same master
                # without presolve to get its real optimum, which the separator then checks.
                if presolve_on:
                    presolve_on = False
                    h.setOptionValue("presolve", "off")
                    if best["x"] is not None:
                        _set_start(h, best["x"])
                    continue
                status = "limit"
            elif violated and status == "optimal":
                # violated cuts that are already in the master (numerical tolerance): no proof for the full model
                status = "limit"
            # else the master's solution satisfies every cut and reaches the master's bound: a proof
            break
        _add_rows(h, cuts)
        n_cuts += len(cuts)
        # next start: the incumbent repaired to satisfy every cut (problem-specific), else the best so far
        xr = repair(x) if repair is not None and x is not None else None
        if xr is not None and _model_feasible(cm, xr) and not _violated(cm, separator, xr):
            offer(xr, cm.objective_value(xr), bound if bound is not None else math.nan, nodes)
        nxt = best["x"] if best["x"] is not None else xr
        if nxt is not None:
            _set_start(h, nxt)
        if status == "time_limit":
            break
    prog.close()
    runtime = time.perf_counter() - start
    best_x, best_obj = best["x"], best["obj"]
    if best_obj is not None and bound is not None:
        # the master bound can never be better than a feasible point (numerical noise aside)
        bound = max(bound, best_obj) if sgn < 0 else min(bound, best_obj)
    res = finish("highs", version(), status, best_obj, bound, runtime, nodes, prog.trace,
                 n_lazy_cuts=n_cuts, n_rounds=rounds,
                      timings={"load": load_time, "solve": runtime})
    return res, best_x


def _model_feasible(cm: CompiledModel, x: np.ndarray, tol: float = 1e-6) -> bool:
    """x satisfies the compiled (master) model: bounds, rows and integrality."""
    if np.any(x < cm.col_lower - tol) or np.any(x > cm.col_upper + tol):
        return False
    if np.any(np.abs(x[cm.integer] - np.round(x[cm.integer])) > tol):
        return False
    act = cm.row_activity(x)
    return bool(np.all(act >= cm.row_lower - tol) and np.all(act <= cm.row_upper + tol))


def _violated(cm: CompiledModel, separator, x: np.ndarray, tol: float = 1e-6) -> list:
    """The separator's cuts that x actually violates (compiled); empty means x satisfies every cut."""
    value = lambda v: float(x[cm.col_of[id(v)]])
    out = []
    for expr in separator.separate(value):
        idx, coef, lo, hi = cm.compile_cut(expr)
        act = float(coef @ x[idx]) if len(idx) else 0.0
        if act < lo - tol or act > hi + tol:
            out.append((idx, coef, lo, hi))
    return out


def _dedupe(cuts: list, seen: set) -> list:
    """Cuts not handed to the master before."""
    out = []
    for idx, coef, lo, hi in cuts:
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
