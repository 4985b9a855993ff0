"""Start repair: a start tree that violates a side constraint becomes its best feasible pruning (or no start),
so the MIO is never handed an infeasible start.
"""
from __future__ import annotations

import numpy as np

from ..tree import Tree
from .checks import all_satisfied


def _prunings(tree: Tree, limit: int = 4000) -> list[frozenset]:
    """Sets of branch nodes to turn into leaves: every pruning of ``tree`` (up to ``limit`` of them)."""
    def rec(t):
        if tree.is_leaf(t):
            return [frozenset()]
        out = [frozenset([t])]
        left, right = rec(int(tree.children_left[t])), rec(int(tree.children_right[t]))
        for a in left:
            for b in right:
                out.append(a | b)
                if len(out) > limit:
                    return out
        return out
    return rec(0)


def repair(tree: Tree | None, constraints, X, y, sample_weight, refit, score) -> tuple[Tree | None, str]:
    """A start tree that satisfies every constraint on the training data, or None, with a note.

    ``tree`` itself when it does; else the best-scoring pruning of it (leaves refit by ``refit``: majority
    class / median / mean) that does; else None. The single leaf is one of the prunings, so a constraint the
    single leaf satisfies (fairness gaps, feature budgets, monotonicity) always gives a start.
    """
    if tree is None:
        return None, "no start tree"
    if all_satisfied(constraints, tree, X, y, sample_weight):
        return tree, "the start satisfies the constraints"
    best, best_score = None, np.inf
    for cut in _prunings(tree):
        if not cut:
            continue
        cand = refit(tree.prune(sorted(cut)))
        if all_satisfied(constraints, cand, X, y, sample_weight):
            s = score(cand)
            if s < best_score:
                best, best_score = cand, s
    if best is None:
        return None, "no pruning of the start satisfies the constraints: the solver starts from nothing"
    return best, f"the start violated the constraints; pruned to a feasible tree with {best.n_splits} split(s)"
