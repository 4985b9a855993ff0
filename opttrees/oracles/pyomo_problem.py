"""A DecisionProblem wrapping any user Pyomo LP/MILP, solved by one persistent HiGHS instance.

Why compile to arrays once: between oracle calls only the objective changes, so the model is turned into
a HiGHS LP a single time and each call just swaps the cost vector (``changeColsCost``) and re-runs, reusing
the previous basis. Pyomo's per-solve hand-off would cost far more than the LP solve itself.

The user gives ``build(block)``: it adds variables and constraints to a Pyomo block and returns the d
decision variables in cost order. The same function builds one copy of S per leaf in the SPOT MILP.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError, SolverError
from ..interrupt import wait_left_behind
from .base import DecisionProblem


def _compile(block, dec_vars):
    """Linear Pyomo block -> (col bounds, integrality, CSR-ish rows, decision column indices)."""
    import pyomo.environ as pyo
    from pyomo.repn.standard_repn import generate_standard_repn

    cols = {}
    lb, ub, integ = [], [], []
    for v in block.component_data_objects(pyo.Var, descend_into=True):
        if v.fixed:
            continue
        cols[id(v)] = len(lb)
        lb.append(-np.inf if v.lb is None else float(v.lb))
        ub.append(np.inf if v.ub is None else float(v.ub))
        integ.append(bool(v.is_integer() or v.is_binary()))
    rows_lo, rows_hi, starts, idx, val = [], [], [0], [], []
    for con in block.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        repn = generate_standard_repn(con.body, compute_values=True)
        if not repn.is_linear():
            raise InputError(f"decision problem constraint {con.name} is not linear; only LP/MILP regions are supported")
        const = float(repn.constant or 0.0)
        lo = -np.inf if con.lower is None else float(pyo.value(con.lower)) - const
        hi = np.inf if con.upper is None else float(pyo.value(con.upper)) - const
        for v, a in zip(repn.linear_vars, repn.linear_coefs):
            if id(v) not in cols:
                raise InputError(f"constraint {con.name} uses variable {v.name} that is not in the decision block")
            idx.append(cols[id(v)])
            val.append(float(a))
        rows_lo.append(lo)
        rows_hi.append(hi)
        starts.append(len(idx))
    try:
        dec_idx = [cols[id(v)] for v in dec_vars]
    except KeyError:
        raise InputError("build(block) must return the decision variables it created on the block") from None
    return (np.array(lb), np.array(ub), np.array(integ), np.array(rows_lo), np.array(rows_hi),
            np.array(starts), np.array(idx, dtype=np.int32), np.array(val), np.array(dec_idx, dtype=np.int32))


def _build_decisions(build, block) -> list:
    """Run the user's ``build(block)`` and check what it returns and adds (clear errors, no Objective)."""
    import pyomo.environ as pyo
    out = build(block)
    if out is None:
        raise InputError("build(block) returned None; it must return the list of decision variables (in cost "
                         "order) it created on the block, e.g. `return [block.w[j] for j in range(d)]`")
    if isinstance(out, pyo.Var) and out.is_indexed():
        out = list(out.values())
    try:
        dec = list(out)
    except TypeError:
        raise InputError(f"build(block) must return a list of decision variables; got {type(out).__name__}") from None
    if not dec:
        raise InputError("build(block) returned no decision variables")
    for v in dec:
        if not (hasattr(v, "is_variable_type") and v.is_variable_type()) or getattr(v, "is_indexed", lambda: False)():
            raise InputError(f"build(block) must return scalar Pyomo variables (VarData); got {v!r}")
    objs = [o.name for o in block.component_objects(pyo.Objective, descend_into=True)]
    if objs:
        raise InputError(f"build(block) added Objective component(s) {objs}; the decision problem must describe only "
                         "the feasible region S (variables and constraints) — the costs come from the data, and the "
                         "SPOT MILP copies the block into every leaf. Remove the Objective.")
    return dec


class PyomoDecisionProblem(DecisionProblem):
    """Oracle for ``min/max c·w s.t. w in S`` where S is any linear Pyomo model built by ``build(block)``.

    ``build(block)`` adds variables and linear constraints to the block (no Objective: rejected) and returns
    the decision variables in cost order. ``tol`` (> 0) is the relative optimality tolerance of the SPO
    tie rule in :meth:`worst_case_decisions` (default for its ``tol``) and the rounding tolerance applied to
    the integer decisions of a MILP region.
    """

    def __init__(self, build, n_decisions: int | None = None, sense: str = "min", tol: float = 1e-9):
        import pyomo.environ as pyo
        if sense not in ("min", "max"):
            raise InputError(f"sense must be 'min' or 'max'; got {sense!r}")
        if not callable(build):
            raise InputError(f"build must be a function build(block) -> decision variables; got {type(build).__name__}")
        try:
            tol = float(tol)
        except (TypeError, ValueError):
            raise InputError(f"tol must be a small positive number; got {tol!r}") from None
        if not (0.0 < tol < 1e-2):
            raise InputError(f"tol must be in (0, 0.01); got {tol!r}")
        self.build = build
        self.sense = sense
        self.tol = tol
        m = pyo.ConcreteModel()
        dec = _build_decisions(build, m)
        if n_decisions is not None and len(dec) != n_decisions:
            raise InputError(f"build(block) returned {len(dec)} decision variables, expected {n_decisions}")
        self.n_decisions = len(dec)
        self._arrays = _compile(m, dec)
        self._h = None

    def __getstate__(self):  # the HiGHS handle is not picklable (joblib workers rebuild it)
        st = self.__dict__.copy()
        st["_h"] = None
        return st

    def _highs(self):
        if self._h is not None:
            return self._h
        import highspy
        lb, ub, integ, rlo, rhi, starts, idx, val, dec = self._arrays
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        ncol = len(lb)
        inf = highspy.kHighsInf
        h.addVars(ncol, np.where(np.isinf(lb), -inf, lb), np.where(np.isinf(ub), inf, ub))
        if len(rlo):
            h.addRows(len(rlo), np.where(np.isinf(rlo), -inf, rlo), np.where(np.isinf(rhi), inf, rhi),
                      len(idx), starts[:-1].astype(np.int32), idx, val)
        if integ.any():
            cols = np.nonzero(integ)[0].astype(np.int32)
            h.changeColsIntegrality(len(cols), cols, np.array([highspy.HighsVarType.kInteger] * len(cols)))
        h.setOptionValue("mip_rel_gap", 1e-9)
        self._h = h
        self._ncol = ncol
        return h

    def _run(self, h, cost_full):
        import highspy
        h.changeColsCost(self._ncol, np.arange(self._ncol, dtype=np.int32), cost_full)
        wait_left_behind()       # a HiGHS run left behind by a stop holds the process-global scheduler
        h.run()
        st = h.getModelStatus()
        if st == highspy.HighsModelStatus.kNotset:
            # the scheduler was started by another run with another thread count: HiGHS refuses to run
            # (threads is process-global); reset it, as the MIO adapter does, and run again
            highspy.Highs.resetGlobalScheduler(True)
            h.run()
            st = h.getModelStatus()
        if st != highspy.HighsModelStatus.kOptimal:
            raise SolverError(f"decision problem solve failed with HiGHS status {h.modelStatusToString(st)} "
                              "(is S non-empty and bounded?)")
        return np.asarray(h.getSolution().col_value)

    def _solve_min(self, C):
        h = self._highs()
        dec = self._arrays[-1]
        W = np.empty((C.shape[0], self.n_decisions))
        cost = np.zeros(self._ncol)
        for i in range(C.shape[0]):
            cost[:] = 0.0
            cost[dec] = C[i]
            x = self._run(h, cost)
            W[i] = x[dec]
        integ = self._arrays[2][self._arrays[-1]]
        if integ.any():   # snap integer decisions within tol of an integer (solver round-off)
            Wi = W[:, integ]
            r = np.round(Wi)
            W[:, integ] = np.where(np.abs(Wi - r) <= max(self.tol, 1e-9) * 10, r, Wi)
        return W, np.einsum("ij,ij->i", C, W)

    def worst_case_decisions(self, Chat, C, tol: float | None = None) -> np.ndarray:
        """Exact SPO tie rule: min ĉ·w, then max c·w subject to ĉ·w <= z*(ĉ) + tol (default ``self.tol``)."""
        tol = self.tol if tol is None else tol
        Chat = self.check_costs(Chat, "Chat")
        C = self.check_costs(C)
        s = self.sign
        W0, z0 = self._solve_min(s * Chat)
        h = self._highs()
        dec = self._arrays[-1]
        out = W0.copy()
        cost = np.zeros(self._ncol)
        for i in range(C.shape[0]):
            nr = h.getNumRow()
            h.addRow(-np.inf, z0[i] + tol * max(1.0, abs(z0[i])), len(dec), dec, s * Chat[i])
            cost[:] = 0.0
            cost[dec] = -s * C[i]
            try:
                out[i] = self._run(h, cost)[dec]
            finally:
                h.deleteRows(1, np.array([nr], dtype=np.int32))
        return out

    def add_to_block(self, block):
        return _build_decisions(self.build, block)
