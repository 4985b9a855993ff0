"""Greedy top-down trees (CART-like) for any supported objective.

The split criterion can differ from the objective (gini/entropy for classification like CART, or the
misclassification objective itself); the grown tree is then cost-complexity pruned with ``alpha`` under
the shared objective, so ``alpha`` means the same as in the local search and the MIO.

A cold kernel (not compiled in this installation yet; ``opttrees warmup`` compiles it at install) is compiled in
a worker thread (:func:`opttrees.jit.run_threads`), so the compile counts in the time limit and Ctrl-C is seen
within a poll: at the time limit or Ctrl-C the compile is left to finish in the background (cached for the next
run) and the fit returns the CART tree (classification) or the root leaf (regression), with a warning.
"""
from __future__ import annotations

import numpy as np

from ..data.prepared import PreparedData
from ..errors import InputError
from ..interrupt import Budget
from ..jit import ABANDONED, announce_compile, is_cold, run_threads, warn_still_compiling
from ..tree import Tree
from .kernels import grow, restarts, structs
from .core import KIND, check_alpha, check_depth, empty_heap, heap_to_tree, make_problem, standardized, to_user

#: split criteria that fit each loss (the regression losses split on the loss itself)
CRITERIA = {"misclassification": ("gini", "entropy", "misclassification"), "squared": ("squared",),
            "absolute": ("absolute",)}


def greedy_tree(data: PreparedData, max_depth: int, min_samples_leaf: int = 1, alpha: float = 0.0,
                criterion: str | None = None, loss: str | None = None, max_features: int | None = None,
                random_state=None, time_limit=None) -> Tree:
    """Grow top-down to ``max_depth`` choosing each split by ``criterion``, then prune with ``alpha``.

    criterion: "gini" (classification default), "entropy" or "misclassification" for classification; for
    regression the loss itself, "squared" or "absolute" (median leaves). ``max_features`` < p draws a random
    feature subset per split (random-forest style).

    time_limit: seconds, or an :class:`opttrees.interrupt.Budget` (a fit's clock, shared), read only while the
    kernel is still compiling (a warm greedy tree takes milliseconds): see the module docstring.
    """
    data, back = standardized(data)   # regression: searched on a standardised y, values mapped back
    return to_user(_greedy_tree(data, max_depth, min_samples_leaf, alpha, criterion, loss, max_features,
                                random_state, time_limit), back, loss)


def _greedy_tree(data: PreparedData, max_depth, min_samples_leaf, alpha, criterion, loss, max_features,
                 random_state, time_limit) -> Tree:
    from .pruning import prune_to_alpha

    D = check_depth(max_depth)
    alpha = check_alpha(alpha)
    budget = Budget(time_limit)
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
    seed = int(np.random.RandomState(random_state).randint(2**31 - 1)) if mtry < nok else None
    ntype, feat, thr, coef = empty_heap(D, prob.p)

    def run():   # numba's random generator is per thread: seeded in the thread that grows the tree
        if seed is not None:
            restarts.seed_numba(seed)
        grow.grow(structs.HeapTree(ntype, feat, thr, coef), structs.problem(prob), KIND[criterion], int(D),
                  int(min_samples_leaf), int(mtry), 1e-12 * prob.baseline, False)

    def compiling() -> bool:
        return is_cold(grow.grow) or (seed is not None and is_cold(restarts.seed_numba))

    if compiling():   # said at once; the compile runs in a worker thread, under the time limit and Ctrl-C
        announce_compile("greedy", grow.grow, "under a minute on 2 cores; counted in the time limit")
        if run_threads([run], 1, np.zeros(1, np.int64), budget, compiling) is ABANDONED:
            from .local_search import fallback_tree
            tree = fallback_tree(data, D, alpha, min_samples_leaf, prob.loss)
            kind = "the CART tree" if tree.task == "classification" and tree.n_nodes > 1 else "the root leaf"
            warn_still_compiling("greedy", f"{kind} instead of a greedy tree", stacklevel=4)
            return tree
    else:
        run()
    tree = heap_to_tree(prob, ntype, feat, thr, coef)
    if alpha > 0:
        tree = prune_to_alpha(tree, prob, alpha)
    return tree
