"""opttrees: optimal decision trees as MIO models (Pyomo + HiGHS/SCIP), with fast heuristics."""
from .data import prepare
from .errors import InputError, OptTreesError, SolverError, SpecError, VerificationError
from .estimators import OptimalTreeClassifier
from .solvers import SolveResult, solve
from .tree import Tree

__version__ = "0.1.0"

__all__ = ["OptimalTreeClassifier", "Tree", "prepare", "solve", "SolveResult", "OptTreesError", "InputError",
           "SolverError", "SpecError", "VerificationError", "__version__"]
