"""opttrees: optimal decision trees as MIO models (Pyomo + HiGHS/SCIP), with fast heuristics."""
from .data import prepare
from .errors import InputError, OptTreesError, SolverError, SpecError, VerificationError
from .estimators import (BendersOCTClassifier, FlowOCTClassifier, OptimalTreeClassifier, OptimalTreeCV,
                         OptimalTreeRegressor, RobustTreeClassifier, SPOForest, SPOTree)
from .solvers import SolveResult, solve
from .tree import Tree

__version__ = "0.1.0"

__all__ = ["OptimalTreeClassifier", "OptimalTreeRegressor", "OptimalTreeCV", "FlowOCTClassifier",
           "BendersOCTClassifier", "RobustTreeClassifier", "SPOTree", "SPOForest", "Tree", "prepare", "solve",
           "SolveResult", "OptTreesError", "InputError",
           "SolverError", "SpecError", "VerificationError", "__version__"]
