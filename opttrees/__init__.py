"""opttrees: optimal decision trees as MIO models (Pyomo + HiGHS/SCIP), with fast heuristics.

The public names load on first use (PEP 562): ``import opttrees`` and the ``opttrees`` command stay fast,
and scikit-learn, Pyomo and the solvers are imported only when an estimator, ``solve`` or ``prepare`` is used.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from . import estimators as _estimators   # the package's list of estimators only: no estimator is imported
from .errors import InputError, OptTreesError, SolverError, SpecError, VerificationError

__version__ = "0.1.0"

#: public name -> the module that defines it (every estimator of ``opttrees.estimators.__all__``)
_LAZY = {"prepare": ".data", "Tree": ".tree", "solve": ".solvers", "SolveResult": ".solvers",
         **{name: ".estimators" for name in _estimators.__all__}}

__all__ = [*_estimators.__all__, "Tree", "prepare", "solve", "SolveResult", "OptTreesError", "InputError",
           "SolverError", "SpecError", "VerificationError", "__version__"]


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value   # later look-ups skip this function
        return value
    try:   # a subpackage used as an attribute (opttrees.solvers.solve) after a bare ``import opttrees``
        return importlib.import_module(f".{name}", __name__)
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
    raise AttributeError(f"module 'opttrees' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:   # static analysers and IDEs see the real names
    from .data import prepare
    from .estimators import *  # noqa: F403 (the estimators' classes, as opttrees.estimators declares them)
    from .solvers import SolveResult, solve
    from .tree import Tree
