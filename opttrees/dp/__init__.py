"""Exact trees by dynamic programming (STreeD, van der Linden et al., NeurIPS 2023) over binarised features.

Public API::

    from opttrees.dp import solve_dp, ClassificationTask, CostSensitiveTask, RegressionTask
    tree, result = solve_dp(X, y, task=ClassificationTask(), max_depth=3)

See :mod:`opttrees.dp.api` for the options and :mod:`opttrees.dp.engine` for the search itself.
"""
from .api import MAX_DEPTH, check_binary_matrix, solve_dp, solve_dp_binary, solve_dp_columns
from .bound import DPRun, dp_bound, dp_for_formulation
from .spo import SPOTask, solve_dp_spo
from .tasks import ClassificationTask, CostSensitiveTask, RegressionTask

__all__ = ["MAX_DEPTH", "check_binary_matrix", "solve_dp", "solve_dp_binary", "ClassificationTask",
           "CostSensitiveTask", "RegressionTask", "SPOTask", "solve_dp_spo", "solve_dp_columns", "dp_bound",
           "dp_for_formulation", "DPRun"]
