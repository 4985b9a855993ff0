"""SCIP adapter: a raw ``pyscipopt.Model`` built from the compiled arrays.

SCIP is the route for real lazy constraints (a ``Conshdlr`` that separates integer incumbents) and for
quadratic objectives with integers (squared-loss regression), which HiGHS cannot solve.
Pitfalls handled (docs/design-notes.md §2): ``getPrimalbound()`` lags inside BESTSOLFOUND, so the
new solution's value is read directly; exceptions inside plugins are caught and re-raised after the solve;
the handler always owns a constraint so variable locks keep presolve from dual reductions the cuts forbid.
"""
from __future__ import annotations

import functools
import math
import time
import traceback

import numpy as np

from ..errors import SolverError
from ..interrupt import STOP
from .compile import CompiledModel
from .module_adapter import ModuleAdapter
from .options import Progress, SolveOptions
from .result import SolveResult, finish


#: fractional separation (LP points) by the lazy-constraint handler, unless the separator sets ``sepa_freq``:
#: 0 = root node only, k = every k-th depth, -1 = never; only for separators with ``separate_fractional``
SEPA_FREQ = 1

#: the epigraph row ``quad(x) <= t`` of a quadratic objective is multiplied by up to this. SCIP checks a nonlinear
#: row to its absolute feasibility tolerance (1e-6), so unscaled, t -- SCIP's objective -- may sit up to 1e-6
#: below the point's true objective: SCIP then "proves" an incumbent up to 1e-6 worse than the optimum (or than
#: the warm start it was given). Scaled by 1e3 that slack is 1e-9, far below the proof tolerance.
EPIGRAPH_SCALE = 1e3


def _epigraph_scale(cm: CompiledModel) -> float:
    """:data:`EPIGRAPH_SCALE`, less when the quadratic part can be so large (|y| far from 0) that the scaled row's
    round-off (scale * |quad| * 2.2e-16) would come near SCIP's feasibility tolerance."""
    big = [max(abs(cm.col_lower[j]), abs(cm.col_upper[j])) for j in range(cm.n_cols)]
    q = sum(abs(c) * big[i] * big[j] for i, j, c in cm.quad)
    if not math.isfinite(q) or q <= 0:
        return 1.0
    return float(min(EPIGRAPH_SCALE, max(1.0, 1e-8 / (q * 2.2e-16))))


def _pyscipopt():
    try:
        import pyscipopt
    except ImportError:
        raise SolverError("solver 'scip' needs the pyscipopt package: pip install pyscipopt") from None
    return pyscipopt


@functools.lru_cache(maxsize=1)
def version() -> str:
    ps = _pyscipopt()
    try:
        return f"SCIP {ps.Model().version()} (PySCIPOpt {getattr(ps, '__version__', '?')})"
    except Exception:   # pragma: no cover
        return getattr(ps, "__version__", "")


def _build(cm: CompiledModel, opts: SolveOptions):
    ps = _pyscipopt()
    from pyscipopt.scip import Expr, ExprCons, Term

    m = ps.Model()
    if opts.verbose < 2:
        m.hideOutput()
    m.setParam("randomization/randomseedshift", int(opts.seed))
    m.setParam("limits/gap", float(opts.mip_gap))
    xs = []
    for j in range(cm.n_cols):
        lo, hi = cm.col_lower[j], cm.col_upper[j]
        vt = "C"
        if cm.integer[j]:
            vt = "B" if lo >= 0 and hi <= 1 else "I"
        xs.append(m.addVar(name=f"x{j}", vtype=vt, lb=None if lo == -math.inf else lo,
                           ub=None if hi == math.inf else hi, obj=float(cm.cost[j])))
    st, ix, vl = cm.row_start, cm.row_index.tolist(), cm.row_value.tolist()
    for r in range(cm.n_rows):
        a, b = int(st[r]), int(st[r + 1])
        e = Expr({Term(xs[ix[k]]): vl[k] for k in range(a, b)})
        lo, hi = cm.row_lower[r], cm.row_upper[r]
        m.addCons(ExprCons(e, lhs=None if lo == -math.inf else float(lo), rhs=None if hi == math.inf else float(hi)),
                  name=f"r{r}")
    t = None
    if cm.quad:
        # SCIP wants a linear objective: minimise an epigraph variable above the quadratic part
        t = m.addVar(name="quad_obj", lb=None, ub=None, obj=1.0)
        k = _epigraph_scale(cm)
        qe = Expr({Term(xs[i], xs[j]): k * c for i, j, c in cm.quad})
        if cm.sense > 0:
            m.addCons(ExprCons(qe - k * t, lhs=None, rhs=0.0), name="quad_epigraph")
        else:
            m.addCons(ExprCons(qe - k * t, lhs=0.0, rhs=None), name="quad_epigraph")
    if cm.offset:
        m.addObjoffset(cm.offset)
    m.setObjective(m.getObjective(), sense="minimize" if cm.sense > 0 else "maximize", clear=False)
    return m, xs, t


def _quad_value(cm: CompiledModel, x0: np.ndarray) -> float:
    """The quadratic part of the objective at ``x0``: the value the epigraph variable takes at the start.

    Exactly the left side of the ``quad_epigraph`` row (``sum c * x_i * x_j``); linear costs and the offset
    stay on the columns and ``addObjoffset``, so they are not part of it.
    """
    if not cm.quad:
        return 0.0
    i, j, c = (np.asarray(a) for a in zip(*cm.quad))
    return float(np.sum(c * x0[i] * x0[j]))


def _set_start(m, xs, x0: np.ndarray, quad_obj=None, quad_value: float = 0.0) -> bool:
    """Hand a start to SCIP so that it shows up as an incumbent event.

    A complete start is tried after presolve (``createOrigSol`` + ``trySol``): the event handler is active by
    then, so the start is the first entry of the trace (unless SCIP's trivial heuristic, which runs before
    presolve, found a point). A partial start goes to the completesol heuristic.
    ``quad_obj`` is the epigraph variable of a quadratic objective (not one of the compiled columns): a
    complete start must set it too, to ``quad_value``, or SCIP rejects the solution as incomplete/infeasible.
    """
    known = ~np.isnan(x0)
    if not known.any():
        return False
    if known.all():
        m.presolve()
        if m.getStage() >= 9:  # presolve already solved the problem (SCIP_STAGE_SOLVED)
            return True
        sol = m.createOrigSol()
        for j in range(len(xs)):
            m.setSolVal(sol, xs[j], float(x0[j]))
        if quad_obj is not None:
            m.setSolVal(sol, quad_obj, float(quad_value))
        ok = m.trySol(sol, printreason=False, completely=True, checkbounds=True, checkintegrality=True,
                      checklprows=True, free=True)
        return bool(ok)
    sol = m.createPartialSol()
    for j in np.nonzero(known)[0].tolist():
        m.setSolVal(sol, xs[j], float(x0[j]))
    return bool(m.addSol(sol, free=True))


_STATUS = {"optimal": "optimal", "gaplimit": "gap_limit", "timelimit": "time_limit", "userinterrupt": "interrupted",
           "infeasible": "infeasible", "unbounded": "unbounded", "inforunbd": "infeasible", "nodelimit": "limit",
           "totalnodelimit": "limit", "stallnodelimit": "limit", "sollimit": "limit", "bestsollimit": "limit",
           "memlimit": "limit", "restartlimit": "limit", "unknown": "error"}


def solve_scip(cm: CompiledModel, opts: SolveOptions, x0: np.ndarray | None = None,
               separator=None) -> tuple[SolveResult, np.ndarray | None]:
    ps = _pyscipopt()
    t0 = time.perf_counter()
    m, xs, quad_obj = _build(cm, opts)
    load_time = time.perf_counter() - t0
    prog = Progress("scip", opts, cm.sense)  # runtime and trace times are measured from here
    errors: list[str] = []
    over = [False]   # stopped by us because the budget was spent (SCIP checks its own limit too rarely)

    def spent() -> bool:
        """The solve's budget is spent: SCIP's own time limit is checked between root separation rounds, whose
        Python callbacks (lazy cuts, this handler) can run it seconds past it on a loaded machine."""
        left = opts.remaining()
        if left is not None and left < 0:
            over[0] = True
        return over[0]

    class Events(ps.Eventhdlr):  # type: ignore[name-defined]
        def eventinit(self):
            self.model.catchEvent(ps.SCIP_EVENTTYPE.BESTSOLFOUND, self)
            self.model.catchEvent(ps.SCIP_EVENTTYPE.NODESOLVED, self)
            # every LP solve (root separation rounds included): SCIP holds the GIL in a long root, so these
            # callbacks are what keeps progress lines and Ctrl-C responsive there
            self.model.catchEvent(ps.SCIP_EVENTTYPE.LPSOLVED, self)

        def eventexit(self):
            self.model.dropEvent(ps.SCIP_EVENTTYPE.BESTSOLFOUND, self)
            self.model.dropEvent(ps.SCIP_EVENTTYPE.NODESOLVED, self)
            self.model.dropEvent(ps.SCIP_EVENTTYPE.LPSOLVED, self)

        def eventexec(self, event):
            try:
                mm = self.model
                if event.getType() == ps.SCIP_EVENTTYPE.BESTSOLFOUND:
                    prog.incumbent(mm.getSolObjVal(mm.getBestSol()), mm.getDualbound(), mm.getNNodes(),
                                   t=time.perf_counter() - prog.t0)
                else:
                    prog.tick(mm.getPrimalbound(), mm.getDualbound(), mm.getNNodes())
                if prog.stop or spent():
                    mm.interruptSolve()
            except Exception:
                errors.append(traceback.format_exc())
                self.model.interruptSolve()

    m.includeEventhdlr(Events(), "opttrees_progress", "incumbent trace and progress")
    counter = {"cuts": 0}
    if separator is not None:
        _attach_lazy(ps, m, xs, cm, separator, counter, errors, spent)
    remaining = opts.remaining()
    if remaining is not None:   # the deadline covers compile and load: SCIP gets what is left
        m.setParam("limits/time", float(max(remaining, 0.01)))
    try:
        started = False
        if x0 is not None:   # may presolve: part of the runtime
            qv = _quad_value(cm, x0) if quad_obj is not None and not np.isnan(x0).any() else 0.0
            started = _set_start(m, xs, x0, quad_obj, qv)
        if not prog.stop:
            # without the GIL, so the progress ticker (and Ctrl-C handling) run while SCIP works in C
            (m.optimizeNogil if hasattr(m, "optimizeNogil") else m.optimize)()
    except Exception as exc:
        prog.close()
        if errors:
            raise SolverError("SCIP callback failed:\n" + errors[0]) from None
        raise SolverError(f"SCIP failed: {exc}") from None
    prog.close()
    if errors:
        raise SolverError("SCIP callback failed:\n" + errors[0])
    runtime = time.perf_counter() - prog.t0
    status = _STATUS.get(m.getStatus(), "error")
    if over[0] and not prog.stop and m.getStatus() == "userinterrupt":
        status = "time_limit"   # interrupted by us at the budget (spent())
    elif prog.stop or m.getStatus() == "userinterrupt":
        # SCIP catches Ctrl-C itself during optimize: pass it on so the rest of the fit stops too
        status = "interrupted"
        if m.getStatus() == "userinterrupt" and not prog._stop:
            STOP.set()
    has = m.getNSols() > 0
    best_x = None
    obj = bound = None
    if has:
        sol = m.getBestSol()
        best_x = np.array([m.getSolVal(sol, v) for v in xs])
        obj = cm.objective_value(best_x)   # the returned point's own objective, never a figure about another
        if abs(obj - m.getSolObjVal(sol)) > 1e-6 * max(1.0, abs(obj)) and status == "optimal":
            status = "limit"
    if status not in ("infeasible", "unbounded", "error"):
        bound = m.getDualbound()
        if not math.isfinite(bound) or abs(bound) >= m.infinity():
            bound = None
    if status == "optimal" and bound is None and obj is not None:
        bound = obj
    res = finish("scip", version(), status, obj, bound, runtime, int(m.getNTotalNodes()), prog.trace,
                 n_lazy_cuts=counter["cuts"], timings={"load": load_time, "solve": runtime},
                 message="" if started or x0 is None else "warm start was rejected by SCIP")
    return res, best_x


class ScipAdapter(ModuleAdapter):
    """SCIP as a :class:`~opttrees.solvers.adapter.SolverAdapter` (lazy cuts by a constraint handler)."""

    name = "scip"
    package = "pyscipopt"
    module = __name__
    solve_function = "solve_scip"
    takes_repair = False


def _attach_lazy(ps, m, xs, cm: CompiledModel, separator, counter: dict, errors: list, spent=lambda: False) -> None:
    from pyscipopt.scip import Expr, ExprCons, Term

    SCIP_RESULT = ps.SCIP_RESULT
    col_of = cm.col_of

    def cuts_at(solution):
        vals = {}

        def value(v):
            j = col_of[id(v)]
            if j not in vals:
                # solution None: SCIP's current solution, the LP solution in ENFOLP and the pseudo solution
                # in ENFOPS (SCIPgetSolVal(scip, NULL, var) picks the right one; getLPSol would not)
                vals[j] = m.getSolVal(solution, xs[j])
            return vals[j]

        return separator.separate(value)

    def fractional_cuts_at():
        return separator.separate_fractional(lambda v: m.getSolVal(None, xs[col_of[id(v)]]))

    freq = int(getattr(separator, "sepa_freq", SEPA_FREQ)) if hasattr(separator, "separate_fractional") else -1
    fractional = freq >= 0

    class Lazy(ps.Conshdlr):
        def conscheck(self, constraints, solution, checkintegrality, checklprows, printreason, completely, **kw):
            try:
                return {"result": SCIP_RESULT.INFEASIBLE if cuts_at(solution) else SCIP_RESULT.FEASIBLE}
            except Exception:
                errors.append(traceback.format_exc())
                return {"result": SCIP_RESULT.INFEASIBLE}

        def add_cuts(self, exprs, prefix: str, removable: bool, only_violated: bool) -> int:
            """Add the compiled cuts as SCIP rows; with ``only_violated``, skip those the LP point satisfies."""
            added = 0
            for expr in exprs:
                idx, coef, lo, hi = cm.compile_cut(expr)
                if only_violated:
                    x = np.array([m.getSolVal(None, xs[j]) for j in idx.tolist()])
                    act = float(coef @ x) if len(idx) else 0.0
                    if lo - 1e-6 <= act <= hi + 1e-6:
                        continue
                e = Expr({Term(xs[j]): c for j, c in zip(idx.tolist(), coef.tolist())})
                self.model.addCons(ExprCons(e, lhs=None if lo == -math.inf else float(lo),
                                            rhs=None if hi == math.inf else float(hi)),
                                   name=f"{prefix}{counter['cuts']}", removable=removable)
                counter["cuts"] += 1
                added += 1
            return added

        def run(self, produce, found, nothing, **kw):
            """One callback: the separator's cuts added, or its exception recorded and the solve stopped."""
            try:
                return {"result": found if self.add_cuts(produce(), **kw) else nothing}
            except Exception:
                errors.append(traceback.format_exc())
                self.model.interruptSolve()
                return {"result": nothing}

        def consenfolp(self, constraints, nusefulconss, solinfeasible):
            return self.run(lambda: cuts_at(None), SCIP_RESULT.CONSADDED, SCIP_RESULT.FEASIBLE,
                            prefix="lazy", removable=False, only_violated=False)

        def conssepalp(self, constraints, nusefulconss):
            # fractional LP points (only when the separator can: see formulations/mincut.py); optional cuts, so
            # none once the budget is spent (the solve is being stopped)
            if spent():
                self.model.interruptSolve()
                return {"result": SCIP_RESULT.DIDNOTFIND}
            return self.run(fractional_cuts_at, SCIP_RESULT.CONSADDED, SCIP_RESULT.DIDNOTFIND,
                            prefix="sepa", removable=True, only_violated=True)

        def consenfops(self, constraints, nusefulconss, solinfeasible, objinfeasible):
            return self.consenfolp(constraints, nusefulconss, solinfeasible)

        def conslock(self, constraint, locktype, nlockspos, nlocksneg):
            # cuts may restrict any variable in either direction: lock everything both ways
            for v in xs:
                self.model.addVarLocks(v, nlockspos + nlocksneg, nlockspos + nlocksneg)

    h = Lazy()
    m.includeConshdlr(h, "opttrees_lazy", "lazy cuts from an opttrees separator", sepapriority=0,
                      enfopriority=-1, chckpriority=-1, sepafreq=freq, propfreq=-1, eagerfreq=-1,
                      needscons=True)
    cons = m.createCons(h, "opttrees_lazy", initial=False, separate=fractional, enforce=True, check=True,
                        propagate=False, local=False, modifiable=False, dynamic=False, removable=False,
                        stickingatnode=False)
    m.addPyCons(cons)
