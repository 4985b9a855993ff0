"""Solver layer: Pyomo model -> HiGHS or SCIP, with warm starts, limits, callbacks and lazy constraints.

It knows nothing about trees: it sees Pyomo models and formulation objects exposing ``model``,
``warm_start(tree)`` and optionally ``separator``. Back-ends are :class:`SolverAdapter` objects found by name
in a registry (:mod:`.adapter`); the point checks they share are in :mod:`.checks`.

The names load on first use (PEP 562): the dynamic programs import :mod:`.result` (statuses, gaps) without
loading Pyomo and the solver back-ends, about half a second of a first DP fit.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

#: public name -> the submodule that defines it
_LAZY = {
    **{name: ".adapter" for name in ("SolverAdapter", "register_adapter")},
    **{name: ".api" for name in ("SOLVERS", "available_solvers", "check_solver", "solve")},
    **{name: ".compile" for name in ("CompiledModel", "compile_model")},
    **{name: ".result" for name in ("STATUSES", "Incumbent", "ObjectiveBound", "SolveResult", "relative_gap",
                                    "settle_with_bound")},
}

__all__ = ["solve", "SolveResult", "Incumbent", "STATUSES", "SOLVERS", "available_solvers", "check_solver",
           "compile_model", "CompiledModel", "relative_gap", "ObjectiveBound", "settle_with_bound", "SolverAdapter",
           "register_adapter"]


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals(), __all__)


if TYPE_CHECKING:
    from .adapter import SolverAdapter, register_adapter
    from .api import SOLVERS, available_solvers, check_solver, solve
    from .compile import CompiledModel, compile_model
    from .result import STATUSES, Incumbent, ObjectiveBound, SolveResult, relative_gap, settle_with_bound
