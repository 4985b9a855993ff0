"""Heuristics: greedy top-down trees, Dunn's local search, pruning and tuning (thesis ch. 2–4).

Pure functions on :class:`opttrees.data.PreparedData` returning :class:`opttrees.tree.Tree` objects whose
objective (``opttrees.objectives.tree_objective``) is the same one the MIO optimises.
"""
from .greedy import greedy_tree
from .linear_leaves import LinearSearchResult, linear_leaf_tree, linear_local_search, linear_tree_objective
from .local_search import LocalSearchResult, improve_tree, local_search
from .pruning import batch_tune_cp, collapse, prune_path, prune_to_alpha, tune_cp
from .tuning import TuneResult, tune

__all__ = ["greedy_tree", "local_search", "improve_tree", "LocalSearchResult", "prune_path", "prune_to_alpha",
           "tune_cp", "batch_tune_cp", "collapse", "tune", "TuneResult", "linear_local_search", "linear_leaf_tree",
           "linear_tree_objective", "LinearSearchResult"]
