"""Parallel-split trees, every midpoint at every node: the optimum for regression losses (the ORT oracle) and for
the local search's losses (misclassification, absolute, squared; with a minimum leaf size)."""
from functools import lru_cache

import numpy as np

from opttrees import objectives as obj
from opttrees.heuristics.core import make_problem
from opttrees.objectives import baseline, node_losses


# --- moved here from tests/formulations/test_ort_mio.py ---
def leaf_cost_fn(y, w, loss):
    def cost(rows):
        if not len(rows):
            return 0.0
        return float(node_losses(np.zeros(len(rows), dtype=np.int64), y[rows], 1, loss, sample_weight=w[rows])[0])
    return cost


def parallel_brute_force(X, y, depth, alpha, loss, w=None):
    """Optimal loss / L̂ + alpha * splits over parallel-split trees of depth <= ``depth``."""
    w = np.ones(len(y)) if w is None else w
    cost = leaf_cost_fn(y, w, loss)
    base = baseline(y, loss, sample_weight=w)

    @lru_cache(maxsize=None)
    def best(d, rows):
        idx = np.array(sorted(rows), dtype=np.int64)
        out = cost(idx)
        if d == 0:
            return out
        for j in range(X.shape[1]):
            vals = np.unique(X[idx, j])
            for t in (vals[:-1] + vals[1:]) / 2:
                left = X[idx, j] < t
                out = min(out, alpha * base + best(d - 1, frozenset(idx[left].tolist()))
                          + best(d - 1, frozenset(idx[~left].tolist())))
        return out

    return best(depth, frozenset(range(len(y)))) / base


# --- moved here from tests/heuristics/test_heuristics_local_search.py ---
def leaf_loss(y, w, loss, K):
    if len(y) == 0:
        return 0.0
    if loss == "misclassification":
        c = np.bincount(y, weights=w, minlength=K)
        return c.sum() - c.max()
    if loss == "absolute":
        return float(np.sum(w * np.abs(y - obj.weighted_median(y, w))))
    mu = np.average(y, weights=w)
    return float(np.sum(w * (y - mu) ** 2))


def midpoint_splits(X, idx):
    for j in range(X.shape[1]):
        u = np.unique(X[idx, j])
        for a, b in zip(u[:-1], u[1:]):
            yield j, 0.5 * (a + b)


def best_subtree(X, y, w, idx, depth, loss, K, pen, nmin):
    """Exact optimum of a subtree of depth <= depth on rows idx (the objective is separable)."""
    if len(idx) < nmin:
        return np.inf
    best = leaf_loss(y[idx], w[idx], loss, K)
    if depth == 0:
        return best
    for j, t in midpoint_splits(X, idx):
        left, right = idx[X[idx, j] < t], idx[X[idx, j] >= t]
        if len(left) < nmin or len(right) < nmin:
            continue
        v = (pen + best_subtree(X, y, w, left, depth - 1, loss, K, pen, nmin)
             + best_subtree(X, y, w, right, depth - 1, loss, K, pen, nmin))
        best = min(best, v)
    return best


def brute_force(data, depth, alpha, nmin, loss):
    prob = make_problem(data, loss)
    K = data.n_classes
    return best_subtree(data.X, prob.y, data.sample_weight, np.arange(data.n), depth, loss, K,
                        alpha * prob.baseline, nmin) / prob.baseline
