"""Decision problems (optimisation oracles) for SPO trees: min/max c·w over a feasible region S."""
from .base import DecisionProblem
from .grid import GridShortestPath, grid_lp_problem
from .polytope import NewsRecommendation, PolytopeDecisionProblem, enumerate_vertices
from .pyomo_problem import PyomoDecisionProblem
from .registry import PROBLEMS, make_decision_problem

__all__ = ["DecisionProblem", "GridShortestPath", "grid_lp_problem", "NewsRecommendation",
           "PolytopeDecisionProblem", "PyomoDecisionProblem", "enumerate_vertices", "PROBLEMS",
           "make_decision_problem"]
