"""Checks of a point against a compiled model, shared by every solver adapter (no solver imported here).

A warm start or an incumbent is a vector ``x`` over the columns of a :class:`~opttrees.solvers.compile.CompiledModel`;
these functions say whether it satisfies the model's bounds, rows and integrality, and which of a separator's
cuts it violates (compiled to ``(columns, coefficients, lower, upper)``, the form both HiGHS and SCIP take).
"""
from __future__ import annotations

import numpy as np

from .compile import CompiledModel


def model_feasible(cm: CompiledModel, x: np.ndarray, tol: float = 1e-6) -> bool:
    """x satisfies the compiled (master) model: bounds, rows and integrality."""
    if np.any(x < cm.col_lower - tol) or np.any(x > cm.col_upper + tol):
        return False
    if np.any(np.abs(x[cm.integer] - np.round(x[cm.integer])) > tol):
        return False
    act = cm.row_activity(x)
    return bool(np.all(act >= cm.row_lower - tol) and np.all(act <= cm.row_upper + tol))


def violated_cuts(cm: CompiledModel, separator, x: np.ndarray, tol: float = 1e-6) -> list:
    """The separator's cuts that x actually violates (compiled); empty means x satisfies every cut."""
    return compiled_violations(cm, separator.separate(lambda v: float(x[cm.col_of[id(v)]])), x, tol)


def compiled_violations(cm: CompiledModel, exprs, x: np.ndarray, tol: float = 1e-6) -> list:
    """The cut expressions that x violates, compiled to (columns, coefficients, lower, upper)."""
    out = []
    for expr in exprs:
        idx, coef, lo, hi = cm.compile_cut(expr)
        act = float(coef @ x[idx]) if len(idx) else 0.0
        if act < lo - tol or act > hi + tol:
            out.append((idx, coef, lo, hi))
    return out


def dedupe(cuts: list, seen: set) -> list:
    """Cuts not handed to the master before."""
    out = []
    for idx, coef, lo, hi in cuts:
        key = (tuple(idx.tolist()), tuple(np.round(coef, 12).tolist()), lo, hi)
        if key in seen:
            continue
        seen.add(key)
        out.append((idx, coef, lo, hi))
    return out
