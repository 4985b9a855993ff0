"""Greedy top-down trees (CART-like) for any supported objective.

The split criterion can differ from the objective (gini/entropy for classification like CART, or the
misclassification objective itself); the grown tree is then cost-complexity pruned with ``alpha`` under
the shared objective, so ``alpha`` means the same as in the local search and the MIO.
"""
from __future__ import annotations

import numpy as np

from ..data import PreparedData
from ..errors import InputError
from ..tree import Tree
from . import _kernels as K
from .core import KIND, check_alpha, check_depth, empty_heap, heap_to_tree, make_problem

#: split criteria that fit each loss (the regression losses split on the loss itself)
CRITERIA = {"misclassification": ("gini", "entropy", "misclassification"), "squared": ("squared",),
            "absolute": ("absolute",)}


def greedy_tree(data: PreparedData, max_depth: int, min_samples_leaf: int = 1, alpha: float = 0.0,
                criterion: str | None = None, loss: str | None = None, max_features: int | None = None,
                random_state=None) -> Tree:
    """Grow top-down to ``max_depth`` choosing each split by ``criterion``, then prune with ``alpha``.

    criterion: "gini" (classification default), "entropy" or "misclassification" for classification; for
    regression the loss itself, "squared" or "absolute" (median leaves). ``max_features`` < p draws a random
    feature subset per split (random-forest style).
    """
    from .pruning import prune_to_alpha

    D = check_depth(max_depth)
    alpha = check_alpha(alpha)
    prob = make_problem(data, loss)
    if criterion is None:
        criterion = "gini" if prob.loss == "misclassification" else prob.loss
    if criterion not in KIND:
        raise InputError(f"unknown criterion {criterion!r}; expected one of {sorted(KIND)}")
    fits = CRITERIA[prob.loss]
    if criterion not in fits:
        raise InputError(f"criterion {criterion!r} does not fit loss {prob.loss!r}; use one of {fits}")
    nok = int(prob.featok.sum())
    mtry = nok if max_features is None else int(max_features)
    if mtry < nok:
        K.seed_numba(int(np.random.RandomState(random_state).randint(2**31 - 1)))
    ntype, feat, thr, coef = empty_heap(D, prob.p)
    K.grow(ntype, feat, thr, coef, prob.X, prob.Xs, prob.grp, prob.orderT, prob.grpT, prob.Z, prob.featok,
           KIND[criterion], int(D), int(min_samples_leaf), int(mtry), 1e-12 * prob.baseline, False)
    tree = heap_to_tree(prob, ntype, feat, thr, coef)
    if alpha > 0:
        tree = prune_to_alpha(tree, prob, alpha)
    return tree
