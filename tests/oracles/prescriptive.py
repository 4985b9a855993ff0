"""Prescriptive trees: the optimal normalised objective over every parallel-split tree (all midpoints)."""
import numpy as np

from opttrees.prescriptive.objective import leaf_costs


# --- moved here from tests/prescriptive/test_prescriptive.py ---
def brute_force(prob, depth, alpha):
    """Optimal normalised objective over every parallel-split tree of depth <= ``depth`` (all midpoints)."""
    X, Z, pen = prob.data.X, prob.Z, alpha * prob.baseline

    def rec(idx, d):
        best = leaf_costs(prob, Z[idx].sum(axis=0)[None])[0][0] if len(idx) else np.inf
        if d == 0:
            return best
        for j in range(X.shape[1]):
            vals = np.unique(X[idx, j])
            for a, b in zip(vals[:-1], vals[1:]):
                go = X[idx, j] < (a + b) / 2
                best = min(best, pen + rec(idx[go], d - 1) + rec(idx[~go], d - 1))
        return best

    return rec(np.arange(len(X)), depth) / prob.baseline
