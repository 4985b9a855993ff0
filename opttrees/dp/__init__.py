"""Exact trees by dynamic programming (STreeD, van der Linden et al., NeurIPS 2023) over binarised features.

Public API::

    from opttrees.dp import solve_dp, ClassificationTask, CostSensitiveTask, RegressionTask
    tree, result = solve_dp(X, y, task=ClassificationTask(), max_depth=3)

See :mod:`opttrees.dp.api` for the options and :mod:`opttrees.dp.engine` for the search itself. The MIO bound
(:mod:`.bound`, which reads Pyomo models) loads on first use, so a DP fit does not import Pyomo.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names
from .api import MAX_DEPTH, check_binary_matrix, solve_dp, solve_dp_binary, solve_dp_columns
from .spo import SPOTask, solve_dp_spo
from .tasks import ClassificationTask, CostSensitiveTask, RegressionTask

__all__ = ["MAX_DEPTH", "check_binary_matrix", "solve_dp", "solve_dp_binary", "ClassificationTask",
           "CostSensitiveTask", "RegressionTask", "SPOTask", "solve_dp_spo", "solve_dp_columns", "dp_bound",
           "dp_for_formulation", "DPRun"]


__getattr__, __dir__ = lazy_names(__name__, {name: ".bound" for name in ("DPRun", "dp_bound", "dp_for_formulation")},
                                   globals(), __all__)


if TYPE_CHECKING:
    from .bound import DPRun, dp_bound, dp_for_formulation
