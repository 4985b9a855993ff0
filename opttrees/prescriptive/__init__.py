"""Prescriptive trees: Optimal Prescriptive Trees (Dunn's thesis ch. 6) and policy trees from teacher scores.

Layers inside this package (imports point down): :mod:`.data` (validation of X, treatment, outcome),
:mod:`.objective` (the one objective, its scaling, leaf payloads), :mod:`._kernels` and :mod:`.search` (local
search and greedy trees), :mod:`.teacher` (DM / IPW / DR scores with cross-fitted models), :mod:`.mio` (the OPT
MIO on SCIP; imported on use, it needs Pyomo), :mod:`.synthetic` (the thesis's experiments 1-3). The exact
dynamic program is :mod:`opttrees.prescriptive.dp`; the estimators are in
:mod:`opttrees.estimators.prescriptive`.
"""
from ..data.prescriptive import PrescriptiveData, prepare_prescriptive
from .objective import (KIND_LINEAR, KIND_OPT, KIND_POLICY, PrescriptiveProblem, fill_payload, leaf_costs,
                        make_problem, outcomes, tree_objective)
from .search import SearchResult, greedy_prescriptive, improve_tree, local_search_prescriptive
from .teacher import TEACHERS, teacher_scores

__all__ = ["PrescriptiveData", "prepare_prescriptive", "PrescriptiveProblem", "make_problem", "leaf_costs",
           "tree_objective", "fill_payload", "outcomes", "KIND_OPT", "KIND_POLICY", "KIND_LINEAR", "SearchResult",
           "greedy_prescriptive", "local_search_prescriptive", "improve_tree", "TEACHERS", "teacher_scores"]
