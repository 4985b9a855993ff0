"""HiGHS adapter: raw ``highspy.Highs`` loaded from compiled arrays with ``passModel``.

HiGHS 1.15 has no lazy constraints, so separation runs as solve -> separate -> add rows -> re-solve, each round
stopped at the first incumbent that violates a cut, all under one overall time limit. Pitfalls handled
(docs/design-notes.md §1): the interrupt callback always writes an explicit flag (stale-flag bug);
``threads`` is process-global, so the scheduler is reset when it changes.

Ctrl-C and the time limit: HiGHS asks its MIP interrupt callback only between LP solves and never during
presolve; a root LP of the OCT-H model on 1,500 rows runs 10 s without one call (its simplex interrupt callback
is not passed to the MIP's LP solves either), and its presolve checks its own time limit rarely. So every
``Highs.run`` runs on a worker thread (highspy releases the GIL) while the calling thread polls
:data:`~opttrees.interrupt.STOP` and the budget: after a Ctrl-C HiGHS gets :data:`STOP_GRACE` seconds to stop at
a poll of its own, past the budget :data:`LIMIT_GRACE` seconds; then the run is left behind (its callbacks only
say "interrupt" from then on) and the solve returns the best point the callbacks have seen, re-checked against
the model, with the last bound they reported. A run left behind is waited for before the next HiGHS run starts
(two runs never share HiGHS's scheduler) and at interpreter exit.
"""
from __future__ import annotations

import atexit
import functools
import importlib.metadata
import logging
import math
import threading
import time

import numpy as np

from ..errors import SolverError
from ..interrupt import LEFT_BEHIND, STOP, wait_left_behind
from .checks import compiled_violations, dedupe, model_feasible, violated_cuts
from .compile import CompiledModel
from .module_adapter import ModuleAdapter
from .options import Progress, SolveOptions
from .result import SolveResult, finish

log = logging.getLogger(__name__)

#: a cut-loop round is stopped after this many cut-violating solutions or this many seconds after the first
CUT_BATCH = 1
CUT_GRACE = 0.5
#: root cutting-plane rounds on the LP relaxation before the integer rounds; stop when the bound moved less than
#: a relative 1e-4 over the last LP_STALL rounds
LP_ROUNDS = 200
LP_STALL = 5

_threads_in_use: int | None = None

#: seconds between two looks at Ctrl-C and the budget while HiGHS runs on its worker thread; after a Ctrl-C,
#: seconds HiGHS gets to stop by itself (at its next interrupt poll, with its own final point and bound) before it
#: is left behind
POLL = 0.02
STOP_GRACE = 0.1
#: seconds HiGHS may run past the solve's budget before it is left behind like after a Ctrl-C (status time_limit).
#: Its presolve (probing) and the set-up before its root LP check the time limit rarely: on OCT depth 3 at 3,000
#: rows (0.59 M nonzeros) a 1 s limit ended after 2.3-6.4 s (benchmarks/README.md, "Stopping an MIO fit")
LIMIT_GRACE = 0.25
#: at interpreter exit, wait at most this long for runs left behind (interrupted, ending at their next poll)
EXIT_WAIT = 30.0

#: HiGHS runs left behind after a Ctrl-C, still ending on their worker threads (the registry lives in
#: :mod:`opttrees.interrupt` so that every HiGHS user, e.g. the SPO oracles below this layer, can wait for them)
_left_behind: list[threading.Thread] = LEFT_BEHIND
_wait_left_behind = wait_left_behind


atexit.register(_wait_left_behind, EXIT_WAIT)

#: HiGHS's MIP presolve neither polls the interrupt callback nor checks its time limit: on a FlowOCT model
#: with 5.1 M nonzeros it ran 21-24 s with 12 s left (time_limit 20 -> 32 s wall). Measured at about
#: 2 s per million nonzeros; presolve is switched off when the time left is below twice that.
PRESOLVE_SECONDS_PER_MNZ = 2.0


def presolve_fits(n_nonzeros: int, remaining: float | None) -> bool:
    """Whether HiGHS's (uninterruptible) presolve should run with ``remaining`` seconds left (None: no limit)."""
    if remaining is None or n_nonzeros < 1_000_000:
        return True
    return remaining >= 2 * PRESOLVE_SECONDS_PER_MNZ * n_nonzeros / 1e6


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
    _wait_left_behind()   # HiGHS's scheduler is process-global: never two runs at once, nor a reset under one
    global _threads_in_use
    if _threads_in_use is not None and _threads_in_use != opts.threads:
        hs.Highs.resetGlobalScheduler(True)
    _threads_in_use = opts.threads
    h = hs.Highs()
    h.setOptionValue("output_flag", opts.verbose >= 2)
    h.setOptionValue("threads", int(opts.threads))
    h.setOptionValue("random_seed", int(opts.seed))
    h.setOptionValue("mip_rel_gap", float(opts.mip_gap))
    if not presolve_fits(cm.n_nonzeros, opts.remaining()):
        log.info("HiGHS presolve off: %d nonzeros with %.1f s left (it cannot be interrupted)",
                 cm.n_nonzeros, opts.remaining())
        h.setOptionValue("presolve", "off")
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
    """Solve on HiGHS: one branch and bound, or the cut loop when the formulation has a separator."""
    if cm.quad:
        if cm.is_mip:
            raise SolverError("HiGHS cannot solve a quadratic objective with integer variables "
                              "(e.g. squared-loss regression trees); use solver='scip'")
        raise SolverError("quadratic objectives are routed to SCIP in opttrees; use solver='scip'")
    run = HighsRun(cm, opts) if separator is None else HighsCutLoop(cm, opts, separator, repair)
    return run.solve(x0)


class HighsAdapter(ModuleAdapter):
    """HiGHS as a :class:`~opttrees.solvers.adapter.SolverAdapter` (lazy cuts by a solve-separate-resolve loop)."""

    name = "highs"
    package = "highspy"
    module = __name__
    solve_function = "solve_highs"


class HighsRun:
    """One HiGHS branch and bound on the full model; the base of the cut loop.

    Keeps the best solution that satisfies the whole model (with a separator: every cut too) and settles the
    result from that point's own objective, never from a figure HiGHS reports about another point.
    """

    def __init__(self, cm: CompiledModel, opts: SolveOptions):
        t0 = time.perf_counter()
        self.cm, self.opts, self.sgn = cm, opts, cm.sense
        self.h = _build(cm, opts)
        self.load_time = time.perf_counter() - t0
        self.prog = Progress("highs", opts, cm.sense)  # runtime and trace times are measured from here
        self.best_x: np.ndarray | None = None
        self.best_obj: float | None = None
        self.bound: float | None = None
        self.nodes = 0
        self.rounds = 0
        self.n_cuts = 0
        self.stop_round = False      # set by the solution callback to end a round
        self.extra_timings: dict = {}
        self._ticked = 0.0
        self.left = False            # the run was left behind after a Ctrl-C or the budget (module docstring)
        # the incumbent (best_x, best_obj) changes on HiGHS's thread (callbacks) and is read on this one; a run left
        # behind may still be inside a callback when the solve settles its result, so both sides hold this lock
        # and, once settled, no offer is taken: the result's objective is always the returned point's own
        self.lock = threading.Lock()
        self.settled = False
        self.left_why = ""           # "interrupted" or "time_limit"
        self.seen_x: np.ndarray | None = None    # the last improving point HiGHS reported (checked if used)
        self.seen_bound: float | None = None     # the last dual bound HiGHS reported in a callback
        self.seen_nodes = 0
        self.subscribe(self.h.cbMipImprovingSolution, self._on_improving)
        self.subscribe(self.h.cbMipLogging, self._on_logging)
        self.subscribe(self.h.cbMipInterrupt, self._on_interrupt)

    def subscribe(self, event, fn) -> None:
        """``fn`` as a HiGHS callback that, once the run is left behind, only asks HiGHS to stop."""
        def guarded(e):
            if self.left:
                if hasattr(e, "interrupt"):
                    e.interrupt(True)
                return
            fn(e)
        event.subscribe(guarded)

    # ------------------------------------------------------------------ incumbents
    def better(self, obj: float) -> bool:
        return self.best_obj is None or self.sgn * obj < self.sgn * self.best_obj - 1e-9

    def offer(self, x: np.ndarray, obj: float, dual: float, nodes: int) -> None:
        """A solution of the full problem: keep it if it improves and report it as an incumbent (not after the
        solve settled its result: a callback of a run left behind that ends late changes nothing)."""
        with self.lock:
            if self.settled or not self.better(obj):
                return
            self.best_x, self.best_obj = np.array(x, dtype=np.float64), obj
            self.prog.incumbent(obj, dual, nodes)

    def settle(self) -> tuple[np.ndarray | None, float | None, list]:
        """The returned point, its own objective and the trace, taken together; later offers are refused."""
        with self.lock:
            self.settled = True
            x = None if self.best_x is None else self.best_x.copy()
            obj = None if x is None else self.cm.objective_value(x)
            return x, obj, list(self.prog.trace)

    def shown_primal(self, reported: float) -> float:
        return reported

    # ------------------------------------------------------------------ callbacks
    def _on_improving(self, e) -> None:   # without a separator the master is the full model: incumbents are real
        o = e.data_out
        self.seen_x = np.array(o.mip_solution, dtype=np.float64)   # a view into HiGHS memory: copy
        self._saw_bound(o)
        self.prog.incumbent(self.sgn * o.objective_function_value, self.sgn * o.mip_dual_bound,
                            int(o.mip_node_count))

    def _on_logging(self, e) -> None:
        o = e.data_out
        self._saw_bound(o)
        self.prog.tick(self.shown_primal(self.sgn * o.objective_function_value), self.sgn * o.mip_dual_bound,
                       int(o.mip_node_count))

    def _saw_bound(self, o) -> None:
        b = self.sgn * o.mip_dual_bound
        if math.isfinite(b) and abs(b) < 1e19:
            self.seen_bound = b
        self.seen_nodes = int(o.mip_node_count)

    def _on_interrupt(self, e) -> None:
        now = time.perf_counter()
        if now - self._ticked >= 0.25:   # HiGHS polls this often; its logging callback can be silent for long
            self._ticked = now
            self._on_logging(e)
        e.interrupt(bool(self.stop_round or self.prog.stop))  # always explicit (HiGHS stale-flag bug)

    # ------------------------------------------------------------------ the run
    def start_with(self, x0: np.ndarray) -> None:
        if not np.isnan(x0).any() and model_feasible(self.cm, x0):
            self.offer(x0, self.cm.objective_value(x0), math.nan, 0)  # kept if nothing better comes in time
        if not self.left:   # a run left behind still owns h
            _set_start(self.h, x0)

    def lp_phase(self) -> None:
        """Nothing to strengthen without a separator (see :meth:`HighsCutLoop.lp_phase`)."""

    def run_highs(self) -> bool:
        """``self.h.run()`` on a worker thread while this thread watches for Ctrl-C and the budget: True when HiGHS
        returned, False when it was left behind (see the module docstring; :attr:`left_why` says why); a second
        Ctrl-C leaves it and raises."""
        done, box = threading.Event(), {}

        def target():
            try:
                self.h.run()
            except BaseException as exc:   # handed to the calling thread below
                box["error"] = exc
            finally:
                done.set()

        t = threading.Thread(target=target, name="opttrees-highs", daemon=True)
        t.start()
        try:
            while not done.wait(POLL):
                if STOP.is_set() and not done.wait(STOP_GRACE):
                    self.leave(t, "interrupted")
                    return False
                left = self.opts.remaining()
                if left is not None and left < -LIMIT_GRACE:
                    self.leave(t, "time_limit")
                    return False
        except BaseException:   # KeyboardInterrupt: a second Ctrl-C
            if not done.is_set():
                self.leave(t, "interrupted")
            raise
        if "error" in box:
            raise box["error"]
        return True

    def leave(self, t: threading.Thread, why: str) -> None:
        """Leave the run behind: from now on its callbacks only interrupt it; keep the callbacks' last bound."""
        self.left, self.left_why = True, why
        _left_behind.append(t)
        if self.seen_bound is not None:
            self.bound = self.seen_bound
        if self.cm.is_mip:
            self.nodes += self.seen_nodes
        log.info("HiGHS did not stop within %.2f s of %s: returning its last reported point and bound while it "
                 "ends in the background", STOP_GRACE if why == "interrupted" else LIMIT_GRACE,
                 "Ctrl-C" if why == "interrupted" else "its time limit")

    def left_point(self) -> np.ndarray | None:
        """The last improving point HiGHS reported before the run was left behind, if it satisfies the model."""
        x = self.seen_x
        if x is None or len(x) != self.cm.n_cols or not model_feasible(self.cm, x):
            return None
        return x

    def run_round(self) -> tuple[str, np.ndarray | None, float | None, bool]:
        """One ``Highs.run``: (status, returned point, its own objective, HiGHS's figure agrees with it)."""
        self.rounds += 1
        remaining = self.opts.remaining()
        if remaining is not None:
            self.h.setOptionValue("time_limit", float(max(remaining, 0.01)))
        self.stop_round = False
        if not self.run_highs():
            x = self.left_point()
            return self.left_why, x, (self.cm.objective_value(x) if x is not None else None), False
        name = str(self.h.getModelStatus()).split(".")[-1]
        status = _STATUS.get(name, "error" if name in ("kSolveError", "kModelError", "kLoadError") else "limit")
        info = self.h.getInfo()
        self.nodes += int(info.mip_node_count) if self.cm.is_mip else 0
        has = info.primal_solution_status == 2  # kSolutionStatusFeasible
        x = np.asarray(self.h.getSolution().col_value) if has else None
        reported = self.sgn * info.objective_function_value
        rbound = (self.sgn * info.mip_dual_bound) if self.cm.is_mip else (reported if has else None)
        if rbound is not None and math.isfinite(rbound):
            self.bound = rbound  # each round's master is a relaxation: its bound is valid overall
        # the objective is always the returned point's own: HiGHS can report the optimum of a presolved
        # problem while getSolution() returns another point (e.g. the start)
        obj = self.cm.objective_value(x) if x is not None else None
        consistent = obj is not None and _consistent(obj, reported)
        if obj is not None and not consistent:
            log.warning("HiGHS round %d: reported objective %.9g but its solution scores %.9g; the round is "
                        "not a proof", self.rounds, reported, obj)
        return status, x, obj, consistent

    def loop(self) -> str:
        if self.left:   # the root cut rounds were left behind: h is not ours any more
            return self.left_why
        if self.prog.stop:
            return "interrupted"
        status, x, obj, consistent = self.run_round()
        with self.lock:
            if (x is not None and obj is not None and not self.settled
                    and (self.best_obj is None or self.sgn * obj <= self.sgn * self.best_obj + 1e-9)):
                self.best_x, self.best_obj = x, obj
        if x is not None and not consistent and status == "optimal":
            status = "limit"
        return status

    def solve(self, x0: np.ndarray | None) -> tuple[SolveResult, np.ndarray | None]:
        self.lp_phase()
        if x0 is not None:
            self.start_with(x0)
        status = self.loop()
        x, obj, trace = self.settle()   # one snapshot: a run left behind cannot slip another point in between
        self.prog.close()
        runtime = time.perf_counter() - self.prog.t0
        bound = self.bound
        if obj is not None and bound is not None:
            # a bound can never be better than a feasible point (numerical noise aside)
            bound = max(bound, obj) if self.sgn < 0 else min(bound, obj)
        res = finish("highs", version(), status, obj, bound, runtime, self.nodes, trace,
                     n_lazy_cuts=self.n_cuts, n_rounds=max(self.rounds, 1),
                     timings={"load": self.load_time, "solve": runtime, **self.extra_timings})
        return res, x


class HighsCutLoop(HighsRun):
    """Lazy constraints on HiGHS, which has none (1.16 names the callback but never calls it, see
    ``benchmarks/probe_highs_lazy.py``): solve the master, separate, add rows, re-solve from the best
    cut-feasible point, all under one deadline.

    A round ends at the first solution that violates a cut. Only separator-checked points become incumbents;
    a round is a proof only when the point HiGHS returns passes the separator and its own objective is the
    one HiGHS reports (else presolve answered for another point: the round is re-solved without presolve).
    """

    def __init__(self, cm: CompiledModel, opts: SolveOptions, separator, repair=None):
        super().__init__(cm, opts)
        self.separator, self.repair = separator, repair
        self.keys: set = set()
        self.pending: list = []
        self.n_violated = 0
        self.first_violation: float | None = None
        self.presolve_on = True
        self.lp_rounds = 0
        self.subscribe(self.h.cbMipSolution, self._on_solution)

    def shown_primal(self, reported: float) -> float:
        return self.best_obj if self.best_obj is not None else math.nan

    def _on_improving(self, e) -> None:   # master incumbents may violate cuts: only offer() reports
        self._saw_bound(e.data_out)       # the master's bound is valid for the full model

    def left_point(self) -> np.ndarray | None:
        return None   # the master's points may violate cuts: only separator-checked ones (offer()) count

    def _on_solution(self, e) -> None:   # separation at every integer-feasible solution HiGHS finds
        o = e.data_out
        x = np.array(o.mip_solution, dtype=np.float64)   # a view into HiGHS memory: copy
        violated = violated_cuts(self.cm, self.separator, x)
        if violated:
            self.pending.extend(dedupe(violated, self.keys))
            # batch: keep the round going for a few more cut-violating solutions (each brings new cuts);
            # stop it after CUT_BATCH of them or a short grace time
            now = time.perf_counter()
            if self.first_violation is None:
                self.first_violation = now
            self.n_violated += 1
            if self.n_violated >= CUT_BATCH or now - self.first_violation > CUT_GRACE:
                self.stop_round = True
        else:  # satisfies every cut: a real incumbent (the master bound stays valid)
            self.offer(x, self.cm.objective_value(x), self.sgn * o.mip_dual_bound, int(o.mip_node_count))

    def add_cuts(self, cuts: list) -> None:
        _add_rows(self.h, cuts)
        self.n_cuts += len(cuts)

    def start_with(self, x0: np.ndarray) -> None:
        if not np.isnan(x0).any() and model_feasible(self.cm, x0):
            # a complete start that satisfies the master: if it also satisfies every cut it is the first
            # incumbent of the loop (the master would otherwise forget it once it finds a cut-violating
            # improvement); its violated cuts, if any, are valid and go into the master right away
            violated = violated_cuts(self.cm, self.separator, x0)
            if violated:
                fresh = dedupe(violated, self.keys)
                if fresh and not self.left:
                    self.add_cuts(fresh)
            else:
                self.offer(x0, self.cm.objective_value(x0), math.nan, 0)
        if not self.left:   # a run left behind still owns h
            _set_start(self.h, x0)

    def lp_phase(self) -> None:
        """Root cutting planes: solve the master's LP relaxation, add the min-cuts its point violates, repeat.

        Each round is an LP (milliseconds) instead of a branch and bound, so the master reaches the integer
        rounds with most cuts it needs; its LP bound stays valid (every cut is valid for the full model). Runs
        only when the separator can separate fractional points; stops when no cut is violated, after
        LP_ROUNDS, or when the bound stalls.
        """
        sep, cm, h = self.separator, self.cm, self.h
        if not hasattr(sep, "separate_fractional") or not cm.is_mip:
            return
        hs = _highspy()
        idx = np.nonzero(cm.integer)[0].astype(np.int32)
        h.changeColsIntegrality(len(idx), idx, np.full(len(idx), int(hs.HighsVarType.kContinuous), dtype=np.uint8))
        history: list[float] = []
        t0 = time.perf_counter()
        try:
            for _ in range(LP_ROUNDS):
                remaining = self.opts.remaining()
                if self.prog.stop or (remaining is not None and remaining <= 0):
                    break
                if remaining is not None:
                    h.setOptionValue("time_limit", float(max(remaining, 0.01)))
                if not self.run_highs():
                    return
                self.lp_rounds += 1
                if str(h.getModelStatus()).split(".")[-1] != "kOptimal":
                    break
                x = np.asarray(h.getSolution().col_value)
                exprs = sep.separate_fractional(lambda v, x=x: float(x[cm.col_of[id(v)]]))
                cuts = dedupe(compiled_violations(cm, exprs, x), self.keys)
                lp_bound = self.sgn * h.getInfo().objective_function_value
                history.append(lp_bound)
                self.bound = lp_bound
                self.prog.tick(math.nan, lp_bound, 0)
                if not cuts:
                    break
                self.add_cuts(cuts)
                if len(history) > LP_STALL and abs(history[-1 - LP_STALL] - lp_bound) <= 1e-4 * max(1.0, abs(lp_bound)):
                    break
        finally:
            if not self.left:   # a run left behind still owns h
                h.changeColsIntegrality(len(idx), idx, np.full(len(idx), int(hs.HighsVarType.kInteger),
                                                                dtype=np.uint8))
                h.setOptionValue("time_limit", float("inf"))
            self.extra_timings.update(lp_rounds=self.lp_rounds, lp_time=time.perf_counter() - t0, lp_cuts=self.n_cuts)

    def loop(self) -> str:
        cm, sep = self.cm, self.separator
        while True:
            if self.left:   # a run (LP or integer round) was left behind: h is not ours any more
                return self.left_why
            if self.prog.stop:
                return "interrupted"
            remaining = self.opts.remaining()
            if remaining is not None and remaining <= 0 and self.rounds > 0:
                return "time_limit"
            self.pending, self.n_violated, self.first_violation = [], 0, None
            status, x, obj, consistent = self.run_round()
            cuts = list(self.pending)
            violated = violated_cuts(cm, sep, x) if x is not None else []
            if x is not None and obj is not None:
                cuts += dedupe(violated, self.keys)
                if not violated:
                    self.offer(x, obj, self.bound if self.bound is not None else math.nan, self.nodes)
            if self.left:
                return self.left_why
            if status in ("infeasible", "unbounded", "error"):
                return status
            if self.prog.stop:
                return "interrupted"
            if not cuts:
                if status == "optimal" and x is not None and not consistent:
                    # the master's optimum is not the point HiGHS returned: presolve reduced columns that no
                    # cut mentions yet (dual reductions valid only if no cut ever comes). Re-solve the same
                    # master without presolve to get its real optimum, which the separator then checks.
                    if self.presolve_on:
                        self.presolve_on = False
                        self.h.setOptionValue("presolve", "off")
                        if self.best_x is not None:
                            _set_start(self.h, self.best_x)
                        continue
                    return "limit"
                if violated and status == "optimal":
                    # violated cuts already in the master (numerical tolerance): no proof for the full model
                    return "limit"
                # else the master's solution satisfies every cut and reaches the master's bound: a proof
                return status
            self.add_cuts(cuts)
            # next start: the incumbent repaired to satisfy every cut (problem-specific), else the best so far
            xr = self.repair(x) if self.repair is not None and x is not None else None
            if xr is not None and model_feasible(cm, xr) and not violated_cuts(cm, sep, xr):
                self.offer(xr, cm.objective_value(xr), self.bound if self.bound is not None else math.nan,
                           self.nodes)
            nxt = self.best_x if self.best_x is not None else xr
            if nxt is not None:
                _set_start(self.h, nxt)
            if status == "time_limit":
                return status


def _add_rows(h, cuts) -> None:
    lo = np.array([c[2] for c in cuts], dtype=np.float64)
    hi = np.array([c[3] for c in cuts], dtype=np.float64)
    starts = np.cumsum([0] + [len(c[0]) for c in cuts[:-1]]).astype(np.int32)
    idx = np.concatenate([c[0] for c in cuts]).astype(np.int32)
    val = np.concatenate([c[1] for c in cuts]).astype(np.float64)
    h.addRows(len(cuts), lo, hi, len(idx), starts, idx, val)
