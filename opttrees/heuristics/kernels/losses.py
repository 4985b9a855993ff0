"""Leaf losses from sufficient statistics: the loss kinds, the generic and the register-held forms, and
absolute loss's Fenwick trees.

Per-point sufficient statistics ``Z`` (n, S): one-hot weighted class indicators (S = K),
[w, w*y, w*y^2] with y centred (S = 3, squared loss) or [w, w*y, y] with y centred (S = 3, absolute loss).
Loss kinds are the named constants MISCLASSIFICATION, GINI, ENTROPY, SQUARED and ABSOLUTE below (numba
freezes module globals, so they cost nothing inside the kernels). :func:`leaf_loss` calls ``mis_loss`` and
``sq_loss`` (inlined) for their kinds, and ``sq_loss`` calls ``sq_loss3``; the register-held forms
``mis_loss2`` and ``gini_loss2`` do the same operations in the same order, so all are bit-identical to it.

Absolute loss is not a function of moments (the weighted median is an order statistic), so its incremental
scan keeps one Fenwick tree per leaf over the y-sorted points that can enter that leaf during the scan
(``fen_build``): a move is two O(log n) updates and a leaf loss one O(log n) descent to the median, so a
BESTPARALLELSPLIT stays O(n·p·log n) instead of re-sorting every leaf per candidate cut.
All losses here are raw (unnormalised); the caller passes ``pen = alpha * L̂`` so comparisons equal
comparisons of the normalised objective.
"""
from __future__ import annotations

import numpy as np
from numba import njit


MISCLASSIFICATION, GINI, ENTROPY, SQUARED, ABSOLUTE = 0, 1, 2, 3, 4  # loss kinds (ABSOLUTE: Fenwick-tree leaves)


@njit(cache=True, nogil=True, inline="always")
def leaf_total(stats, L):
    """Leaf L's total weight over its class statistics, summed in class order (every loss sums it so)."""
    tot = 0.0
    for k in range(stats.shape[1]):
        tot += stats[L, k]
    return tot


@njit(cache=True, nogil=True)
def leaf_loss(kind, stats, L, cnt):
    if kind == SQUARED:
        return sq_loss(stats, L, cnt)
    if kind == MISCLASSIFICATION:
        return mis_loss(stats, L, cnt)
    if cnt[L] == 0:
        return 0.0
    S = stats.shape[1]
    tot = leaf_total(stats, L)
    if tot <= 0.0:
        return 0.0
    if kind == GINI:
        sq = 0.0
        for k in range(S):
            sq += stats[L, k] * stats[L, k]
        v = tot - sq / tot
        return v if v > 0.0 else 0.0
    ent = 0.0
    for k in range(S):
        s = stats[L, k]
        if s > 0.0:
            ent -= s * np.log(s / tot)
    return ent


@njit(cache=True, nogil=True, inline="always")
def mis_loss(stats, L, cnt):
    """leaf_loss for kind 0 (misclassification), same operations in the same order (bit-identical)."""
    if cnt[L] == 0:
        return 0.0
    tot = leaf_total(stats, L)
    mx = 0.0
    S = stats.shape[1]
    for k in range(S):
        if stats[L, k] > mx:
            mx = stats[L, k]
    v = tot - mx
    return v if v > 0.0 else 0.0


@njit(cache=True, nogil=True)
def fen_empty():
    """Placeholder with the same types as fen_build's result, for the moment-based loss kinds."""
    ei = np.zeros(0, np.int64)
    ef = np.zeros(0)
    return (ei, ei, ei, ei, ef, ef, ef, ei)


@njit(cache=True, nogil=True)
def fen_build(I, nI, low_d, up_d, Z, leaves, nl, T):
    """Empty Fenwick trees over the y-sorted universes of ``leaves`` (each point of I is in two: low and up)."""
    n = Z.shape[0]
    seg = np.zeros(T, np.int64)
    sl = np.zeros(T, np.int64)
    posl = np.empty(n, np.int64)
    posu = np.empty(n, np.int64)
    uy = np.empty(2 * nI)
    yv = np.empty(nI)
    for r in range(nI):
        yv[r] = Z[I[r], 2]
    o = np.argsort(yv, kind="mergesort")
    for r in range(nI):
        i = I[r]
        sl[low_d[i]] += 1
        sl[up_d[i]] += 1
    s = np.int64(0)
    for a in range(nl):
        L = leaves[a]
        seg[L] = s
        s += sl[L]
        sl[L] = 0
    for r in range(nI):
        i = I[o[r]]
        L = low_d[i]
        k = seg[L] + sl[L]
        sl[L] += 1
        uy[k] = Z[i, 2]
        posl[i] = k
        L = up_d[i]
        k = seg[L] + sl[L]
        sl[L] += 1
        uy[k] = Z[i, 2]
        posu[i] = k
    top = np.zeros(T, np.int64)  # highest power of two <= segment length: the start of the median descent
    for a in range(nl):
        L = leaves[a]
        t = np.int64(1)
        while 2 * t <= sl[L]:
            t *= 2
        top[L] = t
    return (seg, sl, posl, posu, uy, np.zeros(2 * nI), np.zeros(2 * nI), top)


@njit(cache=True, nogil=True, inline="always")
def fen_add(F, L, k, dw):
    """Add weight dw of the point in slot k to leaf L's Fenwick tree."""
    seg, sl, posl, posu, uy, fw, fwy, top = F
    s = seg[L]
    ln = sl[L]
    j = k - s + 1
    dwy = dw * uy[k]
    while j <= ln:
        fw[s + j - 1] += dw
        fwy[s + j - 1] += dwy
        j += j & (-j)


@njit(cache=True, nogil=True)
def fen_clear(F, L):
    seg, sl, posl, posu, uy, fw, fwy, top = F
    for k in range(seg[L], seg[L] + sl[L]):
        fw[k] = 0.0
        fwy[k] = 0.0


@njit(cache=True, nogil=True, inline="always")
def fen_loss(F, stats, L, cnt):
    """Weighted absolute deviation of leaf L about its lower weighted median (stats[L] = [sum w, sum w*y])."""
    if cnt[L] == 0:
        return 0.0
    seg, sl, posl, posu, uy, fw, fwy, top = F
    s = seg[L]
    ln = sl[L]
    half = 0.5 * stats[L, 0]
    pos = np.int64(0)
    wlo = 0.0
    slo = 0.0
    step = top[L]
    while step > 0:
        nx = pos + step
        if nx <= ln and wlo + fw[s + nx - 1] < half:
            pos = nx
            wlo += fw[s + nx - 1]
            slo += fwy[s + nx - 1]
        step //= 2
    if pos >= ln:
        pos = ln - 1
    m = uy[s + pos]
    # points before the median slot have y <= m, after it y >= m; the median point itself costs 0
    v = (stats[L, 1] - 2.0 * slo) - m * (stats[L, 0] - 2.0 * wlo)
    return v if v > 0.0 else 0.0


@njit(cache=True, nogil=True)
def abs_leaf_losses(I, nI, dest, Z, leaves, nl, stats, out):
    """out[L] = absolute loss of every leaf for the placement dest (sort based, O(nI log nI)).

    Same median rule as :func:`opttrees.objectives.weighted_median`: the first y (ascending) at which the
    cumulative weight reaches half the leaf's weight.
    """
    T = out.shape[0]
    acc = np.zeros(T)
    med = np.zeros(T)
    done = np.zeros(T, np.bool_)
    for a in range(nl):
        out[leaves[a]] = 0.0
    yv = np.empty(nI)
    for r in range(nI):
        yv[r] = Z[I[r], 2]
    o = np.argsort(yv, kind="mergesort")
    for r in range(nI):
        i = I[o[r]]
        L = dest[i]
        if not done[L]:
            acc[L] += Z[i, 0]
            if acc[L] >= 0.5 * stats[L, 0]:
                med[L] = Z[i, 2]
                done[L] = True
    for r in range(nI):
        i = I[r]
        L = dest[i]
        out[L] += Z[i, 0] * abs(Z[i, 2] - med[L])


@njit(cache=True, nogil=True, inline="always")
def cur_loss(kind, stats, L, cnt, F):
    """Leaf loss during a scan: Fenwick query for absolute loss, sufficient statistics otherwise."""
    if kind == ABSOLUTE:
        return fen_loss(F, stats, L, cnt)
    return leaf_loss(kind, stats, L, cnt)


@njit(cache=True, nogil=True, inline="always")
def sq_loss(stats, L, cnt):
    """leaf_loss for kind 3 (squared), same operations in the same order (bit-identical)."""
    if cnt[L] == 0:
        return 0.0
    return sq_loss3(stats[L, 0], stats[L, 1], stats[L, 2])


@njit(cache=True, nogil=True, inline="always")
def mis_loss2(a, b):
    """mis_loss of a two-class leaf with class weights a, b: the same operations in the same order."""
    v = (0.0 + a + b) - max(max(0.0, a), b)
    return v if v > 0.0 else 0.0


@njit(cache=True, nogil=True, inline="always")
def gini_loss2(a, b):
    """leaf_loss(GINI) of a two-class leaf with class weights a, b: the same operations in the same order."""
    tot = 0.0 + a + b
    if tot <= 0.0:
        return 0.0
    v = tot - (0.0 + a * a + b * b) / tot
    return v if v > 0.0 else 0.0


@njit(cache=True, nogil=True, inline="always")
def sq_loss3(w, s1, s2):
    """sq_loss of a leaf with moments (w, s1, s2): the same operations in the same order."""
    if w <= 0.0:
        return 0.0
    v = s2 - s1 * s1 / w
    return v if v > 0.0 else 0.0


@njit(cache=True, nogil=True, inline="always")
def clear_leaves(leaves, nl, stats, cnt, S):
    """Zero the counts and the S statistics of ``leaves[:nl]``, before rows are placed in them."""
    for a in range(nl):
        L = leaves[a]
        cnt[L] = 0
        for k in range(S):
            stats[L, k] = 0.0


@njit(cache=True, nogil=True)
def place_loss(I, nI, dest, Z, kind, nmin, leaves, nl, stats, cnt):
    """Loss of routing every point of I to dest[i]; inf if a leaf in ``leaves`` is below nmin."""
    S = Z.shape[1]
    clear_leaves(leaves, nl, stats, cnt, S)
    for r in range(nI):
        i = I[r]
        d = dest[i]
        cnt[d] += 1
        for k in range(S):
            stats[d, k] += Z[i, k]
    for a in range(nl):
        if cnt[leaves[a]] < nmin:
            return np.inf
    total = 0.0
    if kind == ABSOLUTE:
        out = np.empty(stats.shape[0])
        abs_leaf_losses(I, nI, dest, Z, leaves, nl, stats, out)
        for a in range(nl):
            total += out[leaves[a]]
        return total
    for a in range(nl):
        total += leaf_loss(kind, stats, leaves[a], cnt)
    return total
