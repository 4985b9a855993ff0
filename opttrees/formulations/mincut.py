"""Per-sample min-cuts of the flow network at a *fractional* tree: Benders cuts for LP relaxations.

For a fixed tree (b, w) sample i's flow network is itself a tree: the source feeds the root, node n sends flow
to its left child over ``cap_L = sum_{c: z_ic = 0} b[n, c]``, to its right child over ``cap_R = sum_{c: z_ic = 1}
b[n, c]`` and to the sink over ``w[n, y_i]``. On a tree the max-flow is a bottom-up recursion,

    F(leaf) = w[leaf, y_i],    F(n) = w[n, y_i] + min(cap_L, F(2n)) + min(cap_R, F(2n+1)),

and the min-cut follows it top-down: keep ``w[n, y_i]``, and on each side either cut the arc (its b terms) when
its capacity is the smaller, or descend. ``g_i <= cut`` is valid for every point of the model (a cut's capacity
bounds every flow), equals F(1) at the given point, and at an integer tree it is the decision-path cut the
integer separators use. Separating LP points lets the HiGHS cut loop strengthen its master at the root, where
each round is an LP solve instead of a branch and bound.
"""
from __future__ import annotations

import numpy as np


def tree_values(struct, m, value) -> tuple[np.ndarray, np.ndarray]:
    """(B, W): ``b`` as (2^(d+1), C) and ``w`` as (2^(d+1), K) arrays indexed by node id (zeros elsewhere)."""
    size = 2 ** (struct.depth + 1)
    B = np.zeros((size, struct.n_cols))
    W = np.zeros((size, struct.n_classes))
    for n in struct.internal:
        B[n] = [value(m.b[n, c]) for c in struct.cols]
    for n in struct.nodes:
        W[n] = [value(m.w[n, k]) for k in struct.classes]
    return B, W


def max_flows(struct, B: np.ndarray, W: np.ndarray, Z: np.ndarray, y: np.ndarray):
    """F (n, size): every sample's max-flow from each node to the sink; cap_L, cap_R (n, size) arc capacities."""
    n, size = Z.shape[0], B.shape[0]
    first_leaf = 2 ** struct.depth
    capR = np.zeros((n, size))
    capR[:, 1:first_leaf] = Z.astype(np.float64) @ B[1:first_leaf].T
    capL = B.sum(axis=1)[None, :] - capR
    F = W[:, y].T.copy()    # (n, size): w[node, y_i]
    for node in range(first_leaf - 1, 0, -1):     # children before parents
        F[:, node] += np.minimum(capL[:, node], F[:, 2 * node]) + np.minimum(capR[:, node], F[:, 2 * node + 1])
    return F, capL, capR


def min_cut_coefficients(struct, F: np.ndarray, capL: np.ndarray, capR: np.ndarray, Z: np.ndarray,
                         y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The min-cut of each given sample as 0/1 coefficients: cb (n, size, C) on b, cw (n, size, K) on w."""
    n, size = F.shape
    first_leaf = 2 ** struct.depth
    reach = np.zeros((n, size), dtype=bool)
    reach[:, 1] = True
    cutL = np.zeros((n, size), dtype=bool)
    cutR = np.zeros((n, size), dtype=bool)
    for node in range(1, first_leaf):              # parents before children
        on = reach[:, node]
        cutL[:, node] = on & (capL[:, node] <= F[:, 2 * node])
        cutR[:, node] = on & (capR[:, node] <= F[:, 2 * node + 1])
        reach[:, 2 * node] = on & ~cutL[:, node]
        reach[:, 2 * node + 1] = on & ~cutR[:, node]
    Zf = Z.astype(np.float64)[:, None, :]
    cb = cutL[:, :, None] * (1.0 - Zf) + cutR[:, :, None] * Zf
    cb[:, first_leaf:, :] = 0.0
    cw = np.zeros((n, size, struct.n_classes))
    rows, nodes = np.nonzero(reach)
    cw[rows, nodes, y[rows]] = 1.0
    return cb, cw


def violated_min_cuts(struct, B: np.ndarray, W: np.ndarray, Z: np.ndarray, y: np.ndarray, g: np.ndarray,
                      tol: float = 1e-6):
    """Samples whose ``g_i`` exceeds their max-flow, with their min-cut coefficients (rows, cb, cw)."""
    F, capL, capR = max_flows(struct, B, W, Z, y)
    rows = np.nonzero(g > F[:, 1] + tol)[0]
    if not len(rows):
        return rows, None, None
    cb, cw = min_cut_coefficients(struct, F[rows], capL[rows], capR[rows], Z[rows], y[rows])
    return rows, cb, cw
