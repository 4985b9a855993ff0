"""A greedy start for the exact searches: scikit-learn's CART tree of the requested shape, scored and pruned in
the DP's own costs.

Why: an exact search stopped by a time limit, Ctrl-C or the memory cap returns its best tree so far, and before
this it could be worse than the greedy tree of the same depth (100,000 rows at depth 3: below CART's depth-two
accuracy). Starting the search from CART's tree makes that impossible, and a good first incumbent also closes
more threshold intervals. CART is grown on the rows of positive weight with the same depth, minimum leaf size
(rows) and node limit (``max_leaf_nodes``); its splits are converted exactly (scikit-learn routes
``float32(x) <= t`` left, opttrees ``x < t``: each threshold is put between the node's last row on the left and
first row on the right, so every training row keeps scikit-learn's side), then pruned bottom-up wherever a leaf
costs no more than its subtree under the DP's objective (leaf losses + ``pen`` per split).
"""
from __future__ import annotations

import warnings

import numpy as np

from ..data.prepared import cut_of_le
from .engine_base import leaf_cost
from .tasks import KIND_SQUARED, EngineData

#: a nested tree: None (a leaf) or (feature, threshold, left, right)
Nested = tuple | None


def cart_seed(X: np.ndarray, ed: EngineData, max_depth: int, max_num_nodes: int, min_samples_leaf: int,
              pen: float) -> tuple[Nested, float]:
    """(nested tree, raw cost) of CART's tree on ``X`` in the DP's costs; (None, inf) when no split fits."""
    n = X.shape[0]
    minl = max(int(min_samples_leaf), 1)
    if max_depth < 1 or max_num_nodes < 1 or n < 2 * minl:
        return None, np.inf
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    squared = ed.kind == KIND_SQUARED
    target = ed.extra["z"] if squared else ed.lab
    kw = {"max_depth": int(max_depth), "min_samples_leaf": minl, "random_state": 0,
          "max_leaf_nodes": int(max_num_nodes) + 1 if max_num_nodes < (1 << max_depth) - 1 else None}
    est = DecisionTreeRegressor(**kw) if squared else DecisionTreeClassifier(**kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, target, sample_weight=ed.weights)
    nested = _convert(est.tree_, X, 0, np.arange(n))
    return prune(nested, X, ed, np.arange(n), pen)


def _convert(sk, X, node: int, rows: np.ndarray) -> Nested:
    left, right = sk.children_left[node], sk.children_right[node]
    if left < 0:
        return None
    f = int(sk.feature[node])
    thr = cut_of_le(X[rows, f], sk.threshold[node], float32=True)
    if thr is None:                    # cannot happen on the training rows; keep the tree sound anyway
        return None
    go_left = X[rows, f] < thr
    return (f, thr, _convert(sk, X, left, rows[go_left]), _convert(sk, X, right, rows[~go_left]))


def prune(tree: Nested, X: np.ndarray, ed: EngineData, rows: np.ndarray, pen: float) -> tuple[Nested, float]:
    """The best pruning of ``tree`` on ``rows`` and its raw cost (a leaf where it costs no more than the subtree)."""
    as_leaf = float(leaf_cost(ed.Z[rows].sum(axis=0), ed.kind, ed.K, ed.M))
    if tree is None:
        return None, as_leaf
    f, thr, lt, rt = tree
    go_left = X[rows, f] < thr
    lt, cl = prune(lt, X, ed, rows[go_left], pen)
    rt, cr = prune(rt, X, ed, rows[~go_left], pen)
    split = pen + cl + cr
    return (None, as_leaf) if as_leaf <= split else ((f, thr, lt, rt), split)
