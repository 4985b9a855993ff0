"""Numba kernels of the Pareto-front DP (:mod:`opttrees.constraints.pareto`): dominance filtering and front merging.

Why compiled: a front of a depth-two subtree holds hundreds to thousands of value vectors, and a merge of two
fronts scores every pair. In Python with numpy the dominance filter was a loop over candidates and the root
merge built every pair's vector; depth three did not finish in minutes. Here:

- a front is kept sorted by ``cost`` (the task's additive, monotone cost; a sort key when the task has none);
- :func:`nondominated_sorted` keeps the rows of a cost-sorted block that no earlier kept row dominates (a row
  that dominates another has no larger cost, so it comes first);
- :func:`merge_pairs` lists the pairs (i, j) of two cost-sorted fronts whose sum stays within the component
  limits and the cost budget, stopping each scan at the budget;
- :func:`best_pair` is the root's merge: the cheapest pair within the limits and budget, no list built.
"""
from __future__ import annotations

import numpy as np
from numba import njit


def nondominated_sorted(V, tol):
    """Indices of the rows of ``V`` (already sorted so that a dominating row comes first) not dominated by an
    earlier kept row (component-wise <=, within ``tol``); duplicates keep their first copy."""
    return nondominated_grouped(V, np.array([0, V.shape[0]], np.int64), tol)


@njit(cache=True, nogil=True)
def _within(VL, i, VR, j, lim, tol):
    for c in range(VL.shape[1]):
        if VL[i, c] + VR[j, c] > lim[c] + tol:
            return False
    return True


@njit(cache=True, nogil=True)
def merge_pairs(VL, cL, VR, cR, budget, lim, tol):
    """Pairs (I, J) of rows of the cost-sorted fronts ``VL`` and ``VR`` whose sum is within ``lim`` in every
    component and whose cost ``cL[i] + cR[j]`` is at most ``budget`` (+ tol)."""
    a, b = VL.shape[0], VR.shape[0]
    cap = 1024
    I = np.empty(cap, np.int64)
    J = np.empty(cap, np.int64)
    k = 0
    for i in range(a):
        if cL[i] + cR[0] > budget + tol:
            break
        for j in range(b):
            if cL[i] + cR[j] > budget + tol:
                break
            if _within(VL, i, VR, j, lim, tol):
                if k == cap:
                    cap *= 2
                    I2 = np.empty(cap, np.int64)
                    J2 = np.empty(cap, np.int64)
                    I2[:k] = I[:k]
                    J2[:k] = J[:k]
                    I, J = I2, J2
                I[k] = i
                J[k] = j
                k += 1
    return I[:k], J[:k]


@njit(cache=True, nogil=True)
def best_pair(VL, cL, VR, cR, budget, lim, tol):
    """The pair (i, j) of the cost-sorted fronts with the smallest cost ``cL[i] + cR[j]`` <= ``budget`` whose sum
    is within ``lim``; (-1, -1, inf) when none. Ties keep the first pair found (smallest i)."""
    best, bi, bj = np.inf, -1, -1
    for i in range(VL.shape[0]):
        if cL[i] + cR[0] > budget + tol or cL[i] + cR[0] >= best:
            break
        for j in range(VR.shape[0]):
            c = cL[i] + cR[j]
            if c > budget + tol or c >= best:
                break
            if _within(VL, i, VR, j, lim, tol):
                best, bi, bj = c, i, j
                break          # cR ascending: the first pair within the limits is this row's cheapest
    return bi, bj, best


@njit(cache=True, nogil=True)
def right_sums(Z, rows, Crow):
    """(p, w): per column f, the sum of ``Crow[i]`` over the rows i of ``rows`` with ``Z[i, f]`` set (the right
    side of a split on f); and (p,) the count of those rows."""
    p, w = Z.shape[1], Crow.shape[1]
    R = np.zeros((p, w))
    cnt = np.zeros(p, np.int64)
    for i in rows:
        for f in range(p):
            if Z[i, f]:
                cnt[f] += 1
                for c in range(w):
                    R[f, c] += Crow[i, c]
    return R, cnt


@njit(cache=True, nogil=True)
def nondominated_grouped(V, starts, tol):
    """:func:`nondominated_sorted` within each group ``V[starts[g]:starts[g + 1]]`` (rows sorted by group, then
    so that a dominating row comes first): for tasks where only rows of one group can dominate each other."""
    n, q = V.shape
    keep = np.empty(n, np.int64)
    k = 0
    for g in range(len(starts) - 1):
        k0 = k
        for i in range(starts[g], starts[g + 1]):
            dominated = False
            for jj in range(k0, k):
                j = keep[jj]
                ok = True
                for c in range(q):
                    if V[j, c] > V[i, c] + tol:
                        ok = False
                        break
                if ok:
                    dominated = True
                    break
            if not dominated:
                keep[k] = i
                k += 1
    return keep[:k]
