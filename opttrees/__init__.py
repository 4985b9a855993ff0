"""opttrees: optimal decision trees as MIO models (Pyomo + HiGHS/SCIP), with fast heuristics.

The public names load on first use (PEP 562): ``import opttrees`` and the ``opttrees`` command stay fast,
and scikit-learn, Pyomo and the solvers are imported only when an estimator, ``solve`` or ``prepare`` is used.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import estimators as _estimators   # the package's list of estimators only: no estimator is imported
from .errors import InputError, OptTreesError, SolverError, SpecError, VerificationError
from .lazy import lazy_names

__version__ = "0.1.0"

#: public name -> the module that defines it (every estimator of ``opttrees.estimators.__all__``)
_LAZY = {"prepare": ".data.prepared", "Tree": ".tree", "solve": ".solvers", "SolveResult": ".solvers",
         **{name: ".estimators" for name in _estimators.__all__}}

__all__ = [*_estimators.__all__, "Tree", "prepare", "solve", "SolveResult", "OptTreesError", "InputError",
           "SolverError", "SpecError", "VerificationError", "__version__"]


# a subpackage used as an attribute (opttrees.solvers.solve) after a bare ``import opttrees`` loads too
__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals(), __all__, subpackages=True)


if TYPE_CHECKING:   # static analysers and IDEs see the real names
    from .data.prepared import prepare
    from .estimators import *  # noqa: F403 (the estimators' classes, as opttrees.estimators declares them)
    from .solvers import SolveResult, solve
    from .tree import Tree
