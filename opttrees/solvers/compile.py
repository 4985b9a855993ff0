"""Compile a Pyomo model once into sparse arrays that both solver adapters load directly.

Why: Pyomo's own HiGHS/SCIP interfaces cost 3-5x more than walking each constraint with Pyomo's
``LinearRepnVisitor`` into CSR arrays (measured: docs/design-notes.md §3). The same artifact
feeds warm starts (``start_vector``), lazy cuts (``compile_cut``) and solution load-back (``load_solution``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from time import perf_counter as _clock
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.common.gc_manager import PauseGC
from pyomo.core.expr.relational_expr import EqualityExpression, InequalityExpression, RangedExpression
from pyomo.repn.linear import LinearRepnVisitor
from pyomo.repn.quadratic import QuadraticRepnVisitor
from pyomo.repn.util import FileDeterminism, FileDeterminism_to_SortComponents, OrderedVarRecorder

from ..errors import SolverError


@dataclass
class CompiledModel:
    cols: list                       # Pyomo VarData per column
    col_lower: np.ndarray
    col_upper: np.ndarray
    integer: np.ndarray              # bool per column
    cost: np.ndarray
    offset: float
    sense: int                       # +1 minimise, -1 maximise
    row_start: np.ndarray            # CSR over rows
    row_index: np.ndarray
    row_value: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray
    quad: list = field(default_factory=list)   # objective terms (col_i, col_j, coef)
    col_of: dict = field(default_factory=dict)  # id(VarData) -> column
    row_names: list = field(default_factory=list)
    fixed: np.ndarray | None = None  # bool per column: a Pyomo Var fixed by the user (bounds lo = hi = its value)
    _visitor: Any = None             # Pyomo's LinearRepnVisitor, kept for compiling cuts

    @property
    def n_cols(self) -> int:
        return len(self.cols)

    @property
    def n_rows(self) -> int:
        return len(self.row_lower)

    @property
    def n_nonzeros(self) -> int:
        return len(self.row_index)

    @property
    def is_mip(self) -> bool:
        return bool(self.integer.any())

    def start_vector(self) -> np.ndarray:
        """Current Pyomo values per column; NaN where a variable has no value."""
        return np.array([np.nan if v.value is None else float(v.value) for v in self.cols])

    def load_solution(self, x: np.ndarray) -> None:
        """Write solver values back into the Pyomo variables (integers rounded); fixed variables keep theirs."""
        xs = np.where(self.integer, np.round(x), x)
        fixed = self.fixed if self.fixed is not None else np.zeros(len(self.cols), dtype=bool)
        for v, val, fx in zip(self.cols, xs.tolist(), fixed.tolist()):
            if not fx:
                v.set_value(val, skip_validation=True)

    def objective_value(self, x: np.ndarray) -> float:
        val = float(self.cost @ x) + self.offset
        for i, j, c in self.quad:
            val += c * x[i] * x[j]
        return val

    def row_activity(self, x: np.ndarray) -> np.ndarray:
        act = np.zeros(self.n_rows)
        np.add.at(act, np.repeat(np.arange(self.n_rows), np.diff(self.row_start)), self.row_value * x[self.row_index])
        return act

    def compile_cut(self, expr) -> tuple[np.ndarray, np.ndarray, float, float]:
        """A Pyomo relational expression over existing columns -> (cols, coefs, lower, upper)."""
        if isinstance(expr, RangedExpression):
            lo_e, body, hi_e = expr.args
            lo, hi = pyo.value(lo_e), pyo.value(hi_e)
        elif isinstance(expr, InequalityExpression):
            body = expr.args[0] - expr.args[1]
            lo, hi = None, 0.0
        elif isinstance(expr, EqualityExpression):
            body = expr.args[0] - expr.args[1]
            lo, hi = 0.0, 0.0
        else:
            raise SolverError(f"a lazy cut must be a Pyomo relational expression, got {type(expr).__name__}")
        repn = self._visitor.walk_expression(body)
        if repn.nonlinear is not None:
            raise SolverError("lazy cuts must be linear")
        idx, val = [], []
        for vid, coef in repn.linear.items():
            if vid not in self.col_of:
                raise SolverError("a lazy cut uses a variable that is not part of the compiled model")
            idx.append(self.col_of[vid])
            val.append(coef)
        const = pyo.value(repn.constant)
        lo = -math.inf if lo is None else lo - const
        hi = math.inf if hi is None else hi - const
        return np.asarray(idx, dtype=np.int32), np.asarray(val, dtype=np.float64), lo, hi


def _bound(b, default):
    return default if b is None else float(b)


class CompileStopped(Exception):
    """The hand-off was stopped (Ctrl-C or the time limit) before the model reached the solver."""


#: seconds between two calls of ``should_stop`` while rows are compiled (a poll by time: a row of a FlowOCT or
#: OCT-H model can hold thousands of nonzeros, so a count of rows says little about the time between polls)
POLL_SECONDS = 0.05


def fixed_vars(model: pyo.Block) -> list:
    """``(VarData, value)`` of every fixed variable of ``model`` (e.g. the user's ``d[1].fix(1)``)."""
    out = []
    for comp in model.component_objects(pyo.Var, descend_into=True):
        for v in comp.values():
            if v.fixed:
                if v.value is None:
                    raise SolverError(f"variable {v.name} is fixed but has no value; fix it to a number "
                                      "(v.fix(value))")
                out.append((v, v.value))
    return out


def compile_model(model: pyo.ConcreteModel, should_stop=None, fixed: list | None = None) -> CompiledModel:
    """Walk every active constraint and the single active objective of ``model``.

    ``should_stop()`` is asked before the first row and then every :data:`POLL_SECONDS` of compiling (Ctrl-C,
    deadline): a hand-off of a model with millions of nonzeros takes tens of seconds, which a time limit must
    count and a Ctrl-C must cut short.

    Fixed variables (``fixed``: the list :func:`fixed_vars` returns, computed here when None) stay columns
    with bounds lo = hi = their value, so that separators, repairs and lazy cuts can name them like any other
    variable; :meth:`CompiledModel.load_solution` leaves their values alone. They are unfixed only while the
    rows are walked (Pyomo's visitors would fold them into constants) and fixed again afterwards.
    """
    if fixed is None:
        fixed = fixed_vars(model)
    for v, _ in fixed:
        v.unfix()
    try:
        cm = _compile(model, should_stop)
    finally:
        for v, val in fixed:
            v.fix(val)
    is_fixed = np.zeros(cm.n_cols, dtype=bool)
    for v, val in fixed:
        k = cm.col_of.get(id(v))
        if k is not None:
            cm.col_lower[k] = cm.col_upper[k] = float(val)
            is_fixed[k] = True
    cm.fixed = is_fixed
    return cm


def _compile(model: pyo.ConcreteModel, should_stop=None) -> CompiledModel:
    objs = list(model.component_data_objects(pyo.Objective, active=True, descend_into=True))
    if len(objs) != 1:
        raise SolverError(f"the model must have exactly one active objective; it has {len(objs)}")
    var_map: dict = {}
    var_order: dict = {}   # the quadratic visitor orders the two variables of a product by it
    sorter = FileDeterminism_to_SortComponents(FileDeterminism.ORDERED)
    visitor = LinearRepnVisitor({}, var_recorder=OrderedVarRecorder(var_map, var_order, sorter))
    starts, idx, val, lo, hi, names = [0], [], [], [], [], []
    next_poll = -math.inf   # the first row polls: a hand-off started after Ctrl-C compiles nothing
    with PauseGC():
        for k, con in enumerate(model.component_data_objects(pyo.Constraint, active=True, descend_into=True)):
            if should_stop is not None and _clock() >= next_poll:
                if should_stop():
                    raise CompileStopped(f"stopped after {k} rows")
                next_poll = _clock() + POLL_SECONDS
            lb, body, ub = con.to_bounded_expression(True)
            repn = visitor.walk_expression(body)
            if repn.nonlinear is not None:
                raise SolverError(f"constraint {con.name} is nonlinear; opttrees solvers accept linear rows "
                                  "(and a quadratic objective on SCIP)")
            idx.extend(repn.linear.keys())
            val.extend(repn.linear.values())
            starts.append(len(idx))
            c = repn.constant
            lo.append(-math.inf if lb is None else lb - c)
            hi.append(math.inf if ub is None else ub - c)
            names.append(con.name)
        obj = objs[0]
        qvisitor = QuadraticRepnVisitor({}, var_recorder=OrderedVarRecorder(var_map, var_order, sorter))
        orepn = qvisitor.walk_expression(obj.expr)
        if orepn.nonlinear is not None:
            raise SolverError("the objective is nonlinear beyond quadratic; not supported")
    cols = list(var_map.values())
    col_of = {id(v): k for k, v in enumerate(cols)}
    cost = np.zeros(len(cols))
    for vid, c in orepn.linear.items():
        cost[col_of[vid]] += c
    quad = []
    if orepn.quadratic:
        for (a, b), c in orepn.quadratic.items():
            quad.append((col_of[a], col_of[b], float(c)))
    col_idx = np.fromiter((col_of[v] for v in idx), dtype=np.int32, count=len(idx))
    lower = np.array([_bound(v.lb, -math.inf) for v in cols])
    upper = np.array([_bound(v.ub, math.inf) for v in cols])
    integer = np.array([v.is_integer() or v.is_binary() for v in cols], dtype=bool)
    visitor.var_map = var_map
    cm = CompiledModel(cols=cols, col_lower=lower, col_upper=upper, integer=integer, cost=cost,
                       offset=float(pyo.value(orepn.constant)), sense=1 if obj.sense == pyo.minimize else -1,
                       row_start=np.asarray(starts, dtype=np.int32), row_index=col_idx,
                       row_value=np.asarray(val, dtype=np.float64), row_lower=np.asarray(lo, dtype=np.float64),
                       row_upper=np.asarray(hi, dtype=np.float64), quad=quad, col_of=col_of, row_names=names)
    cm._visitor = visitor
    return cm
