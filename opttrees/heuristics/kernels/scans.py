"""Split scans: the move loop that moves one point at a time from its upper to its lower leaf and keeps
the best feasible cut (the thesis's incremental trick, O(K) per move).

One generic loop (:func:`scan_core`) and specialised ones with the statistics held in registers (two
classes, squared loss, absolute loss with its Fenwick trees), all bit-identical to the generic one; and the
integer scans for two classes with unit weights (:func:`scan_unit`, :func:`scan_unit_pair`), which keep a
leaf's count and class margin in one word, with the per-node counts they start from
(:func:`unit_node_counts`).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .losses import (
    ABSOLUTE, clear_leaves, cur_loss, fen_add, fen_build, fen_clear, fen_empty, fen_loss, GINI, gini_loss2, leaf_loss, mis_loss,
    mis_loss2, MISCLASSIFICATION, sq_loss, sq_loss3, SQUARED)


@njit(cache=True, nogil=True)
def row_scratch(n):
    """The per-row scratch of the split scans (:func:`scan` and its callers) for n rows: (inI, I, low_d, up_d,
    fixlow, movers, vals)."""
    return (np.zeros(n, np.bool_), np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64),
            np.zeros(n, np.bool_), np.empty(n, np.int64), np.empty(n))


@njit(cache=True, nogil=True)
def leaf_scratch(T, S):
    """The per-node statistics of a placement on a heap of size T (stats, cnt, lloss), and of the best one
    found (bstats, bcnt, blloss), zeroed."""
    return (np.zeros((T, S)), np.zeros(T, np.int64), np.zeros(T), np.zeros((T, S)), np.zeros(T, np.int64),
            np.zeros(T))


@njit(cache=True, nogil=True)
def place_init(I, nI, low_d, up_d, fixlow, Z, kind, leaves, nl, stats, cnt, F):
    """Zero the stats of ``leaves`` and put every point of I in its lower leaf if fixlow[i] else its upper leaf."""
    S = Z.shape[1]
    clear_leaves(leaves, nl, stats, cnt, S)
    if kind == ABSOLUTE:
        for a in range(nl):
            fen_clear(F, leaves[a])
    for r in range(nI):
        i = I[r]
        d = low_d[i] if fixlow[i] else up_d[i]
        cnt[d] += 1
        for k in range(S):
            stats[d, k] += Z[i, k]
        if kind == ABSOLUTE:
            fen_add(F, d, F[2][i] if fixlow[i] else F[3][i], Z[i, 0])


@njit(cache=True, nogil=True, inline="always")
def move_point(Z, stats, cnt, i, u, l, nmin):
    """Move point i from leaf u to leaf l in the counts and sufficient statistics (an emptied leaf is zeroed).
    Returns whether u and l were below nmin before (1 / 0, for :func:`scan_record`)."""
    bu = 1 if cnt[u] < nmin else 0
    bl = 1 if cnt[l] < nmin else 0
    S = Z.shape[1]
    cnt[u] -= 1
    cnt[l] += 1
    if cnt[u] == 0:
        for k in range(S):
            stats[u, k] = 0.0
    else:
        for k in range(S):
            stats[u, k] -= Z[i, k]
    for k in range(S):
        stats[l, k] += Z[i, k]
    return bu, bl


@njit(cache=True, nogil=True, inline="always")
def move_counts(cnt, u, l, nmin):
    """A mover's count bookkeeping in the register-held scans: it leaves leaf u for leaf l. Returns u's new
    count, and whether u and l were below nmin before (1 / 0, for :func:`scan_record`)."""
    cu = cnt[u]
    cl = cnt[l]
    bu = 1 if cu < nmin else 0
    bl = 1 if cl < nmin else 0
    cnt[u] = cu - 1
    cnt[l] = cl + 1
    return cu - 1, bu, bl


@njit(cache=True, nogil=True, inline="always")
def scan_start(total, deficient):
    """(best, bestq) before any point moves: the starting placement itself (q = -1) if it is feasible."""
    if deficient == 0:
        return total, np.int64(-1)
    return np.inf, np.int64(-2)


@njit(cache=True, nogil=True, inline="always")
def scan_record(q, m, vals, u, l, nu, nw, bu, bl, cnt, nmin, lloss, total, deficient, best, bestq):
    """After mover q went from leaf u to leaf l (new leaf losses nu, nw; bu / bl: u / l were below nmin
    before): update the cached losses, total and deficit, and keep the cut if it is the best feasible one.
    A cut exists only between distinct values (vals[q] < vals[q + 1]) or after the last mover."""
    lloss[u] = nu
    lloss[l] = nw
    total += nu + nw
    deficient += (1 if cnt[u] < nmin else 0) - bu + (1 if cnt[l] < nmin else 0) - bl
    if (q == m - 1 or vals[q + 1] > vals[q]) and deficient == 0 and total < best:
        best = total
        bestq = q
    return total, deficient, best, bestq


@njit(cache=True, nogil=True)
def scan_core(movers, m, vals, low_d, up_d, Z, kind, nmin, stats, cnt, lloss, total, deficient, F):
    """The move loop of :func:`scan`: stats / cnt / lloss (cached leaf losses) / total / deficient describe
    the starting placement. Same arithmetic as recomputing the four leaf losses per move (bit-identical).

    Absolute loss runs its own loop (:func:`scan_core_abs`; the bookkeeping is shared through the inlined
    :func:`scan_start` / :func:`scan_record`): keeping the Fenwick updates out of this one keeps the
    moment-based losses as fast as before (measured: 25-30% slower with them in one loop).
    """
    if kind == ABSOLUTE:
        return scan_core_abs(movers, m, vals, low_d, up_d, Z, nmin, stats, cnt, lloss, total, deficient, F)
    if (kind == MISCLASSIFICATION or kind == GINI) and Z.shape[1] == 2:
        return scan_core_binary(movers, m, vals, low_d, up_d, Z, kind, nmin, stats, cnt, lloss, total, deficient)
    if kind == SQUARED:
        return scan_core_squared(movers, m, vals, low_d, up_d, Z, nmin, stats, cnt, lloss, total, deficient)
    best, bestq = scan_start(total, deficient)
    for q in range(m):
        i = movers[q]
        u = up_d[i]
        l = low_d[i]
        total -= lloss[u] + lloss[l]
        bu, bl = move_point(Z, stats, cnt, i, u, l, nmin)
        if kind == MISCLASSIFICATION:
            nu = mis_loss(stats, u, cnt)
            nw = mis_loss(stats, l, cnt)
        elif kind == SQUARED:
            nu = sq_loss(stats, u, cnt)
            nw = sq_loss(stats, l, cnt)
        else:
            nu = leaf_loss(kind, stats, u, cnt)
            nw = leaf_loss(kind, stats, l, cnt)
        total, deficient, best, bestq = scan_record(q, m, vals, u, l, nu, nw, bu, bl, cnt, nmin, lloss, total,
                                                    deficient, best, bestq)
    return best, bestq


@njit(cache=True, nogil=True)
def scan_core_binary(movers, m, vals, low_d, up_d, Z, kind, nmin, stats, cnt, lloss, total, deficient):
    """:func:`scan_core` for two classes (misclassification, or gini for the start trees) with the two class
    weights held in registers: 3x faster per move than the generic loop over S (measured 14 vs 46 ns for
    misclassification), bit-identical results."""
    best, bestq = scan_start(total, deficient)
    for q in range(m):
        i = movers[q]
        u = up_d[i]
        l = low_d[i]
        z0 = Z[i, 0]
        z1 = Z[i, 1]
        cu, bu, bl = move_counts(cnt, u, l, nmin)
        total -= lloss[u] + lloss[l]
        if cu == 0:  # an emptied leaf is zeroed, as move_point does
            su0 = 0.0
            su1 = 0.0
            nu = 0.0
        else:
            su0 = stats[u, 0] - z0
            su1 = stats[u, 1] - z1
            nu = mis_loss2(su0, su1) if kind == MISCLASSIFICATION else gini_loss2(su0, su1)
        sl0 = stats[l, 0] + z0
        sl1 = stats[l, 1] + z1
        stats[u, 0] = su0
        stats[u, 1] = su1
        stats[l, 0] = sl0
        stats[l, 1] = sl1
        nw = mis_loss2(sl0, sl1) if kind == MISCLASSIFICATION else gini_loss2(sl0, sl1)
        total, deficient, best, bestq = scan_record(q, m, vals, u, l, nu, nw, bu, bl, cnt, nmin, lloss, total,
                                                    deficient, best, bestq)
    return best, bestq


LMASK = (1 << 15) - 1  # scan words (unit_word): bit 0 class, bits 1-15 / 16-30 leaves, bits 32-63 group rank


CMASK = (1 << 32) - 1  # a leaf's packed counts: count << 32 | class-1 count


@njit(cache=True, nogil=True, inline="always")
def unit_word(y, lo, up):
    """A row's packed class and leaves: class | lower leaf << 1 | upper leaf << 16, leaves as local indices
    0..nl-1 < 2^15 (:func:`unit_node_counts` fills pk[i] with it).

    Why: gathered in a feature's order with the group rank in the high half (``pk[i] | rank << 32``), one
    sequential word holds all an integer scan reads of a mover, instead of a row index, a rank and four
    scattered reads (class, two leaves); the scan then keeps each leaf's two counts in one word too.
    """
    return y | (lo << 1) | (up << 16)


@njit(cache=True, nogil=True, inline="always")
def unit_cut(q, cut, tot, feasible, best, bestq):
    """The integer scans' bookkeeping after mover q: keep the cut after it if it is one (``cut``: the next
    mover's group rank is larger, or q is last), feasible and the best so far (bestq -2: none feasible
    yet). Scalars only: an array passed in kept numba's reference counting inside the scan loops."""
    if cut and feasible and (tot < best or bestq == -2):
        return tot, q
    return best, bestq


@njit(cache=True, nogil=True, inline="always")
def unit_result(best, bestq):
    """(loss, q) as the float scans return them: inf when no cut was feasible."""
    if bestq == -2:
        return np.inf, bestq
    return float(best), bestq


MBIAS = np.int64(1) << 31  # a leaf's scan word: count << 32 | (class-1 count - class-0 count + MBIAS)


@njit(cache=True, nogil=True)
def scan_unit(code, m, nmin, cm, total, deficient, bound):
    """:func:`scan_core` for misclassification with two classes and unit weights, in integers.

    code[q]: mover q's scan word (:func:`unit_word`); cm[a]: local leaf a's count and class margin
    (c1 - c0) in one word (``MBIAS``). A leaf's loss is min(c0, c1), so a point of class y leaving a leaf
    lowers it by one exactly when its class was not the strict majority (s * margin <= 0 with s = +-1)
    and raises the leaf it enters by one exactly when its class is the strict minority there: the float
    scan's sums are exact integers, so this returns the same (loss, q) bit for bit, and the margin form
    needs a third fewer operations per mover than recomputing both minima. A cut after q exists only
    where the next mover's group rank is larger (or q is last).

    Only cuts with a loss below ``bound`` are wanted (the caller's best so far, or what a move must beat):
    movers only enter the lower leaves, whose losses never fall as rows enter, so once their sum reaches
    the bound no later cut can be below it and the scan stops. Every cut below the bound, and the first
    of the least, is still seen: the result is the same whenever its loss is below the bound.
    """
    tot = np.int64(total)
    best = tot
    bestq = np.int64(-1) if deficient == 0 else np.int64(-2)
    one = np.int64(1) << 32
    low = np.int64(0)  # the lower leaves' losses (all empty at the start)
    for q in range(m):
        c = code[q]
        sg = ((c & 1) << 1) - 1
        l = (c >> 1) & LMASK
        u = (c >> 16) & LMASK
        vu = cm[u]
        vl = cm[l]
        cm[u] = vu - one - sg
        cm[l] = vl + one + sg
        up = np.int64(((vl & CMASK) - MBIAS) * sg < 0)
        tot += up - np.int64(((vu & CMASK) - MBIAS) * sg <= 0)
        low += up
        deficient += np.int64((vu >> 32) == nmin) - np.int64((vl >> 32) + 1 == nmin)
        best, bestq = unit_cut(q, q == m - 1 or (code[q + 1] >> 32) > (c >> 32), tot, deficient == 0, best, bestq)
        if low >= bound:
            break
    return unit_result(best, bestq)


@njit(cache=True, nogil=True)
def scan_unit_pair(code, m, nmin, u0, u1, bound):
    """:func:`scan_unit` when every point moves between the same two leaves (the node's children are
    leaves), the lower one empty at the start and the upper one holding all m movers (u0 / u1 of each
    class). Each cut's loss follows from the count of class-1 movers so far, and its feasibility from q
    alone (the lower leaf holds q + 1 rows, the upper m - q - 1): a few registers, no table."""
    best = min(u0, u1)
    bestq = np.int64(-1) if nmin <= 0 and m >= nmin else np.int64(-2)
    qa = nmin - 1
    qb = m - 1 - nmin
    ones = np.int64(0)
    for q in range(m):
        c = code[q]
        ones += c & 1
        l0 = q + 1 - ones
        low = min(l0, ones)
        tot = low + min(u0 - l0, u1 - ones)
        best, bestq = unit_cut(q, q == m - 1 or (code[q + 1] >> 32) > (c >> 32), tot, qa <= q <= qb, best, bestq)
        if low >= bound:
            break
    return unit_result(best, bestq)


@njit(cache=True, nogil=True)
def unit_binary(Z, kind):
    """True when the scans may count in integers (:func:`scan_unit`): misclassification, two
    classes, every row one-hot with weight 1."""
    if kind != MISCLASSIFICATION or Z.shape[1] != 2:
        return False
    for i in range(Z.shape[0]):
        a = Z[i, 0]
        b = Z[i, 1]
        if not ((a == 1.0 and b == 0.0) or (a == 0.0 and b == 1.0)):
            return False
    return True


@njit(cache=True, nogil=True)
def scan_core_binary_pair(movers, m, vals, Z, kind, nmin, su0, su1, cu, lu, sl0, sl1, cl, ll, total, deficient):
    """:func:`scan_core_binary` when every point moves between the same two leaves (the node's children are
    leaves, as in every split of a start tree): both leaves' weights, counts and losses stay in registers
    (u: upper leaf, l: lower). The same operations in the same order, so the same (loss, q) bit for bit."""
    best, bestq = scan_start(total, deficient)
    for q in range(m):
        i = movers[q]
        z0 = Z[i, 0]
        z1 = Z[i, 1]
        bu = 1 if cu < nmin else 0
        bl = 1 if cl < nmin else 0
        cu -= 1
        cl += 1
        total -= lu + ll
        if cu == 0:
            su0 = 0.0
            su1 = 0.0
            nu = 0.0
        else:
            su0 = su0 - z0
            su1 = su1 - z1
            nu = mis_loss2(su0, su1) if kind == MISCLASSIFICATION else gini_loss2(su0, su1)
        sl0 = sl0 + z0
        sl1 = sl1 + z1
        nw = mis_loss2(sl0, sl1) if kind == MISCLASSIFICATION else gini_loss2(sl0, sl1)
        lu = nu
        ll = nw
        total += nu + nw
        deficient += (1 if cu < nmin else 0) - bu + (1 if cl < nmin else 0) - bl
        if (q == m - 1 or vals[q + 1] > vals[q]) and deficient == 0 and total < best:
            best = total
            bestq = q
    return best, bestq


@njit(cache=True, nogil=True)
def scan_core_squared(movers, m, vals, low_d, up_d, Z, nmin, stats, cnt, lloss, total, deficient):
    """:func:`scan_core` for squared loss with the three moments held in registers (bit-identical)."""
    best, bestq = scan_start(total, deficient)
    for q in range(m):
        i = movers[q]
        u = up_d[i]
        l = low_d[i]
        z0 = Z[i, 0]
        z1 = Z[i, 1]
        z2 = Z[i, 2]
        cu, bu, bl = move_counts(cnt, u, l, nmin)
        total -= lloss[u] + lloss[l]
        if cu == 0:
            su0 = 0.0
            su1 = 0.0
            su2 = 0.0
            nu = 0.0
        else:
            su0 = stats[u, 0] - z0
            su1 = stats[u, 1] - z1
            su2 = stats[u, 2] - z2
            nu = sq_loss3(su0, su1, su2)
        sl0 = stats[l, 0] + z0
        sl1 = stats[l, 1] + z1
        sl2 = stats[l, 2] + z2
        stats[u, 0] = su0
        stats[u, 1] = su1
        stats[u, 2] = su2
        stats[l, 0] = sl0
        stats[l, 1] = sl1
        stats[l, 2] = sl2
        nw = sq_loss3(sl0, sl1, sl2)
        total, deficient, best, bestq = scan_record(q, m, vals, u, l, nu, nw, bu, bl, cnt, nmin, lloss, total,
                                                    deficient, best, bestq)
    return best, bestq


@njit(cache=True, nogil=True)
def scan_core_abs(movers, m, vals, low_d, up_d, Z, nmin, stats, cnt, lloss, total, deficient, F):
    """:func:`scan_core` for absolute loss: each move also updates the two leaves' Fenwick trees."""
    best, bestq = scan_start(total, deficient)
    for q in range(m):
        i = movers[q]
        u = up_d[i]
        l = low_d[i]
        total -= lloss[u] + lloss[l]
        bu, bl = move_point(Z, stats, cnt, i, u, l, nmin)
        if cnt[u] == 0:
            fen_clear(F, u)
        else:
            fen_add(F, u, F[3][i], -Z[i, 0])
        fen_add(F, l, F[2][i], Z[i, 0])
        nu = fen_loss(F, stats, u, cnt)
        nw = fen_loss(F, stats, l, cnt)
        total, deficient, best, bestq = scan_record(q, m, vals, u, l, nu, nw, bu, bl, cnt, nmin, lloss, total,
                                                    deficient, best, bestq)
    return best, bestq


@njit(cache=True, nogil=True)
def cache_leaf_losses(kind, nmin, leaves, nl, stats, cnt, lloss, F):
    """Fill lloss[L] for every leaf of a placement; returns (total loss, number of leaves below nmin)."""
    total = 0.0
    deficient = np.int64(0)
    for a in range(nl):
        L = leaves[a]
        lloss[L] = cur_loss(kind, stats, L, cnt, F)
        total += lloss[L]
        if cnt[L] < nmin:
            deficient += 1
    return total, deficient


@njit(cache=True, nogil=True)
def scan(I, nI, movers, m, vals, low_d, up_d, fixlow, Z, kind, nmin, leaves, nl, stats, cnt, lloss):
    """Best cut when ``movers`` move one at a time (in order) from their upper to their lower leaf.

    Every point of I starts in its lower leaf if fixlow[i] else its upper leaf. Returns (loss, q): the cut
    after movers[0..q] (q = -1: none moved), valid only where vals[q] < vals[q+1]. q = -2: none feasible.
    ``lloss`` (size T) is scratch for the cached leaf losses.
    """
    F = fen_build(I, nI, low_d, up_d, Z, leaves, nl, stats.shape[0]) if kind == ABSOLUTE else fen_empty()
    place_init(I, nI, low_d, up_d, fixlow, Z, kind, leaves, nl, stats, cnt, F)
    total, deficient = cache_leaf_losses(kind, nmin, leaves, nl, stats, cnt, lloss, F)
    return scan_core(movers, m, vals, low_d, up_d, Z, kind, nmin, stats, cnt, lloss, total, deficient, F)


NO_BOUND = np.int64(1) << 62


@njit(cache=True, nogil=True)
def accept_bound(best, tol, extra, nmax):
    """The least integer loss k (0 .. nmax + 1) with k + extra < best - tol false: a split with the
    children fixed (loss k, costing k + extra) is accepted only below it. Found with the acceptance test
    itself, so rounding cannot make it disagree with the test."""
    k = min(max(np.floor(best - tol - extra), 0.0), float(nmax + 1))
    k = np.int64(k)
    while k > 0 and not (float(k - 1) + extra < best - tol):
        k -= 1
    while k <= nmax and float(k) + extra < best - tol:
        k += 1
    return k


@njit(cache=True, nogil=True)
def unit_node_counts(I, nI, Z, leafpos, low_d, up_d, leaves, nl, nlow, lidx, pk, upc, lowc, curc, nmin):
    """One pass over a node's rows for every integer quantity a visit needs (two classes, unit weights).

    Sets pk (:func:`unit_word`) and, per local leaf a of ``leaves`` (the lower child's nlow leaves first),
    the packed counts (count << 32 | class-1 count) with every row in its upper leaf (upc), in its lower
    leaf (lowc) and where it is now (curc). Returns (current loss, loss of promoting the lower child, of
    promoting the upper child, the start placement's loss, its number of leaves below nmin); a promotion
    with a leaf below nmin costs -1 (infeasible). Integer counts, so these equal the float sums exactly.
    """
    for a in range(nl):
        lidx[leaves[a]] = a
        upc[a] = 0
        lowc[a] = 0
        curc[a] = 0
    one = np.int64(1) << 32
    for r in range(nI):  # the words and the counts in one pass
        i = I[r]
        y = np.int64(Z[i, 1])
        ld = low_d[i]
        lo = lidx[ld]
        up = lidx[up_d[i]]
        pk[i] = unit_word(y, lo, up)
        w = one + y
        upc[up] += w
        lowc[lo] += w
        if leafpos[i] == ld:
            curc[lo] += w
        else:
            curc[up] += w
    return unit_node_losses(nl, nlow, upc, lowc, curc, nmin)


@njit(cache=True, nogil=True)
def unit_node_counts_blocks(I, nI, nk, Z, low_d, up_d, leaves, nl, nlow, lidx, pk, upc, lowc, curc, nmin):
    """:func:`unit_node_counts` when the rows come in leaf order (the leaf-ordered blocks of the local
    search): I[:nk] are in the lower child's subtree, I[nk:] in the upper's, each leaf's rows together.

    A row's own side is where it is now, so only the other side is counted row by row; its current leaf
    is counted per run of equal leaves (one store per leaf instead of three read-modify-writes per row on
    the same word, which chained every row on the one before).
    """
    for a in range(nl):
        lidx[leaves[a]] = a
        upc[a] = 0
        lowc[a] = 0
        curc[a] = 0
    one = np.int64(1) << 32
    prev = np.int64(-1)
    acc = np.int64(0)
    for r in range(nI):
        i = I[r]
        y = np.int64(Z[i, 1])
        lo = lidx[low_d[i]]
        up = lidx[up_d[i]]
        pk[i] = unit_word(y, lo, up)
        w = one + y
        if r < nk:
            upc[up] += w
            own = lo
        else:
            lowc[lo] += w
            own = up
        if own != prev:
            if prev >= 0:
                curc[prev] += acc
            prev = own
            acc = w
        else:
            acc += w
    if prev >= 0:
        curc[prev] += acc
    for a in range(nl):
        if a < nlow:
            lowc[a] += curc[a]
        else:
            upc[a] += curc[a]
    return unit_node_losses(nl, nlow, upc, lowc, curc, nmin)


@njit(cache=True, nogil=True)
def unit_node_losses(nl, nlow, upc, lowc, curc, nmin):
    """The five results of :func:`unit_node_counts` from the packed counts."""
    cur = np.int64(0)
    plow = np.int64(0)
    pup = np.int64(0)
    start = np.int64(0)
    bdef = np.int64(0)
    for a in range(nl):
        v = curc[a]
        cur += min((v >> 32) - (v & CMASK), v & CMASK)
        v = upc[a]
        k = v >> 32
        start += min(k - (v & CMASK), v & CMASK)
        bdef += np.int64(k < nmin)
        if a >= nlow and pup >= 0:
            pup = pup + min(k - (v & CMASK), v & CMASK) if k >= nmin else np.int64(-1)
        v = lowc[a]
        k = v >> 32
        if a < nlow and plow >= 0:
            plow = plow + min(k - (v & CMASK), v & CMASK) if k >= nmin else np.int64(-1)
    return cur, plow, pup, start, bdef
