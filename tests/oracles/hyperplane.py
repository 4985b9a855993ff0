"""Hyperplane trees on two features: exhaustive enumeration of lines (the OCT-H and ORT-H MIO oracle).

**The exact claim the brute force checks.** On two features the MIO's optimum equals the minimum, over trees
of depth <= D, of (leaf costs / L̂ + alpha * coefficients), where each split is a partition (L, R) of its
node's training rows that some (a, b) with sum |a| <= 1 realises with margin mu on the min-max scaled
features: a.x + mu <= b on L and a.x >= b on R. Equivalently the partition's largest margin (a small LP) is
at least mu. A split costs 1 coefficient when one feature alone separates the sides by mu, else 2. The
candidate partitions are every line through two points with those two points put on either side (in general
position this yields every linearly separable partition). A partition whose largest margin is within 1e-4 of
mu would make the claim depend on solver tolerances, so the enumerator records the margins it checks and
:meth:`HyperplaneBruteForce.objective` asserts none is that close.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.optimize import linprog

from opttrees.tree import HYPERPLANE, LEAF, Tree


# --- moved here from tests/formulations/test_octh_mio.py ---
MU = 0.005


def line_partitions(P: np.ndarray) -> set[frozenset]:
    """Unordered partitions {side containing row 0} of the points P (m, 2) by a line, both sides non-empty."""
    m = len(P)
    out = set()
    for i in range(m):
        for j in range(i + 1, m):
            d = P[j] - P[i]
            side = (P - P[i]) @ np.array([-d[1], d[0]])
            on = np.abs(side) <= 1e-12 * (1 + np.abs(side).max())
            assert on.sum() == 2, "points not in general position"
            for li in (True, False):
                for lj in (True, False):
                    mask = side < 0
                    mask[i], mask[j] = li, lj
                    if 0 < mask.sum() < m:
                        first = mask if mask[0] else ~mask
                        out.add(frozenset(np.nonzero(first)[0].tolist()))
    return out


def widest_margin(Xs: np.ndarray, left: np.ndarray, right: np.ndarray) -> float:
    """max g s.t. a.x + g <= b on ``left``, a.x >= b on ``right``, sum |a| <= 1 (a = a+ - a-)."""
    p = Xs.shape[1]
    XL, XR = Xs[left], Xs[right]
    A = np.vstack([np.hstack([XL, -XL, -np.ones((len(left), 1)), np.ones((len(left), 1))]),
                   np.hstack([-XR, XR, np.ones((len(right), 1)), np.zeros((len(right), 1))]),
                   np.r_[np.ones(2 * p), 0.0, 0.0][None, :]])
    res = linprog(np.r_[np.zeros(2 * p + 1), -1.0], A_ub=A, b_ub=np.r_[np.zeros(len(left) + len(right)), 1.0],
                  bounds=[(0, None)] * (2 * p) + [(-1, 1), (-2, 2)], method="highs")
    assert res.status == 0
    return float(res.x[-1])


def one_feature(Xs: np.ndarray, left: np.ndarray, right: np.ndarray, mu: float) -> bool:
    """Some single feature separates the two sides by mu (in either orientation)."""
    L, R = Xs[left], Xs[right]
    return bool(np.any(L.max(0) + mu <= R.min(0)) or np.any(R.max(0) + mu <= L.min(0)))


class HyperplaneBruteForce:
    """Optimal objective over hyperplane trees with margin mu on 2 features (see the module docstring)."""

    def __init__(self, Xs, leaf_cost, depth: int, alpha_raw: float, mu: float = MU):
        self.Xs, self.leaf_cost, self.D, self.alpha_raw, self.mu = Xs, leaf_cost, depth, alpha_raw, mu
        self.margins: list[float] = []   # every margin checked (for the tolerance precondition)
        self.best = lru_cache(maxsize=None)(self._best)

    def _best(self, depth: int, rows: frozenset) -> float:
        idx = np.array(sorted(rows), dtype=np.int64)
        best = self.leaf_cost(idx)
        if depth == 0 or len(idx) < 2:
            return best
        options = []
        for side in line_partitions(self.Xs[idx]):
            mask = np.isin(np.arange(len(idx)), list(side))
            L, R = idx[mask], idx[~mask]
            lower = self.alpha_raw + self.best(depth - 1, frozenset(L.tolist())) + self.best(depth - 1,
                                                                                          frozenset(R.tolist()))
            options.append((lower, L, R))
        for lower, L, R in sorted(options, key=lambda o: o[0]):
            if lower >= best - 1e-12:
                break
            g = widest_margin(self.Xs, L, R)
            self.margins.append(g)
            if g >= self.mu:
                extra = 0.0 if one_feature(self.Xs, L, R, self.mu) else self.alpha_raw
                best = min(best, lower + extra)
        return best

    def objective(self, baseline: float) -> float:
        value = self.best(self.D, frozenset(range(len(self.Xs)))) / baseline
        assert not any(abs(g - self.mu) < 1e-4 for g in self.margins), "a margin is too close to mu for an exact test"
        return value


def misclassification_cost(y, K):
    def cost(rows):
        return float(len(rows) - np.bincount(y[rows], minlength=K).max()) if len(rows) else 0.0
    return cost


def hyperplane_tree(coef, threshold, data):
    """A depth-1 tree with split coef.x < threshold (original units), leaves refitted on ``data``."""
    from opttrees.heuristics.core import make_problem, refit_leaves
    t = Tree([1, LEAF, LEAF], [2, LEAF, LEAF], [HYPERPLANE, LEAF, LEAF], [threshold, 0.0, 0.0], np.zeros((3, 2)),
             coef=np.array([coef, np.zeros(2), np.zeros(2)], dtype=float), classes=[0, 1], n_features=2)
    return refit_leaves(t, make_problem(data))
