"""Solver layer: Pyomo model -> HiGHS or SCIP, with warm starts, limits, callbacks and lazy constraints.

It knows nothing about trees: it sees Pyomo models and formulation objects exposing ``model``,
``warm_start(tree)`` and optionally ``separator``. Back-ends are :class:`SolverAdapter` objects found by name
in a registry (:mod:`.adapter`); the point checks they share are in :mod:`.checks`.
"""
from .adapter import SolverAdapter, register_adapter
from .api import SOLVERS, available_solvers, check_solver, solve
from .compile import CompiledModel, compile_model
from .result import STATUSES, Incumbent, ObjectiveBound, SolveResult, relative_gap, settle_with_bound

__all__ = ["solve", "SolveResult", "Incumbent", "STATUSES", "SOLVERS", "available_solvers", "check_solver",
           "compile_model", "CompiledModel", "relative_gap", "ObjectiveBound", "settle_with_bound", "SolverAdapter",
           "register_adapter"]
