"""Exhaustive search over parallel-split trees of depth <= 2 (test oracle for the MIO and heuristics).

Every split position between adjacent distinct values of every feature is tried at every node; the objective
is separable over subtrees, so the search enumerates each subtree's options independently.
"""
from __future__ import annotations

import numpy as np


def _candidates(X, idx):
    for j in range(X.shape[1]):
        vals = np.unique(X[idx, j])
        for a, b in zip(vals[:-1], vals[1:]):
            mid = (a + b) / 2
            yield j, mid if a < mid <= b else b   # neighbouring floats have no midpoint between them


def _leaf_cost(y, idx, K, w):
    if len(idx) == 0:
        return 0.0
    counts = np.bincount(y[idx], weights=w[idx], minlength=K)
    return counts.sum() - counts.max()


def best_subtree(X, y, idx, depth, K, alpha_scaled, nmin, w):
    """Minimum of (errors + alpha_scaled * splits) over subtrees of ``depth`` on rows ``idx``; inf if infeasible."""
    best = _leaf_cost(y, idx, K, w) if len(idx) >= nmin or len(idx) == 0 else np.inf
    if depth == 0:
        return best
    for j, thr in _candidates(X, idx):
        left = idx[X[idx, j] < thr]
        right = idx[X[idx, j] >= thr]
        cost = alpha_scaled
        cost += best_subtree(X, y, left, depth - 1, K, alpha_scaled, nmin, w)
        if cost >= best:
            continue
        cost += best_subtree(X, y, right, depth - 1, K, alpha_scaled, nmin, w)
        best = min(best, cost)
    return best


def brute_force_objective(X, y, depth, alpha=0.0, min_samples_leaf=1, sample_weight=None):
    """Optimal normalised objective errors/L̂ + alpha*splits over all trees of depth <= ``depth``."""
    y = np.asarray(y)
    K = int(y.max()) + 1
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    counts = np.bincount(y, weights=w, minlength=K)
    base = counts.sum() - counts.max()
    base = base if base > 0 else 1.0
    best = best_subtree(X, y, np.arange(len(y)), depth, K, alpha * base, min_samples_leaf, w)
    return best / base


KNAPSACK_WEIGHTS = np.array([3.0, 4.0, 5.0, 2.0])
KNAPSACK_CAPACITY = 8.0


def binary_knapsack_problem():
    """A user MILP decision region for SPO tests: max v·x over binary x with weights·x <= capacity."""
    import pyomo.environ as pyo
    from opttrees.oracles import PyomoDecisionProblem

    def build(b):
        b.x = pyo.Var(range(4), domain=pyo.Binary)
        b.cap = pyo.Constraint(expr=sum(KNAPSACK_WEIGHTS[j] * b.x[j] for j in range(4)) <= KNAPSACK_CAPACITY)
        return [b.x[j] for j in range(4)]
    return PyomoDecisionProblem(build, sense="max")


def brute_force_cost(X, y, depth, nodes=None, pen=0.0, minleaf=1, w=None, loss="mis", M=None):
    """Minimum raw cost (leaf losses + ``pen`` per split) over every tree of depth <= ``depth`` with at most
    ``nodes`` splits on every midpoint of raw ``X``; every leaf holds >= ``minleaf`` rows (weight-0 rows
    count as absent: drop them first). ``loss``: "mis" (weighted misclassification, y = class codes), "cost"
    (``M[true, predicted]``), "sq" (weighted squared error around the weighted mean)."""
    import functools

    X = np.asarray(X, float)
    y = np.asarray(y)
    n = len(y)
    w = np.ones(n) if w is None else np.asarray(w, float)
    K = (len(M) if loss == "cost" else int(y.max()) + 1) if loss != "sq" else 1

    def leaf(rows):
        if len(rows) < minleaf:
            return np.inf
        if loss == "sq":
            ww, yy = w[rows], y[rows].astype(float)
            mu = np.average(yy, weights=ww)
            return float(np.sum(ww * (yy - mu) ** 2))
        c = np.bincount(y[rows], weights=w[rows], minlength=K)
        return float((c @ M).min()) if loss == "cost" else float(c.sum() - c.max())

    @functools.lru_cache(maxsize=None)
    def best(rows, d, k):
        idx = np.array(rows, dtype=np.int64)
        v = leaf(idx)
        if d == 0 or k == 0:
            return v
        for j, thr in _candidates(X, idx):
            go = X[idx, j] >= thr
            left, right = idx[~go], idx[go]
            if len(left) < max(1, minleaf) or len(right) < max(1, minleaf):
                continue
            for kl in range(k):
                v = min(v, pen + best(tuple(left), d - 1, kl) + best(tuple(right), d - 1, k - 1 - kl))
        return v

    return best(tuple(range(n)), depth, (2 ** depth - 1) if nodes is None else nodes)
