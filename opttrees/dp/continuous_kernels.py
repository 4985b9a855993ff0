"""Numba kernels of the continuous-feature DP: depth <= 2 trees found from sorted feature orders.

Why no binary matrix: with every midpoint as a candidate, a binarisation has one column per distinct value and
the binary depth-two solver counts every pair of columns (quadratic memory). Here a row subset is its rows
listed in sorted order once per feature (``so``, shape (p, m)); a depth-one tree of any subset is one sweep of
those orders with prefix statistics, O(m p) time and no extra memory.

A depth-two tree is a root split (feature f, after the i-th row of f's order) and the best depth-one trees of
the two sides. Evaluating one root threshold costs one sweep (:func:`eval_root`), so the search skips runs
of thresholds with bounds rather than evaluating them all. For root thresholds between two evaluated
positions a < b (``L``, ``R``: the best cost of the left / right side; ``W``: weight of the rows moved):

- subset monotonicity: a side's optimum *without a minimum leaf size* never falls when rows are added, so
  ``Lu(t) >= Lu(a)`` and ``Ru(t) >= Ru(b)`` (with one it can fall: more rows can make a split feasible);
- moving rows (misclassification, with or without a cost matrix): adding rows of total worst-case loss
  ``W`` raises a side's optimum by at most ``W``, so ``L(t) + R(t) >= L(b) + R(a) - W(a, b]``.

An interval whose bound reaches the incumbent is skipped whole; otherwise it is halved (its midpoint
evaluated). A coarse grid of positions per feature is evaluated first for a good incumbent (finer at the root).

Costs are raw (unnormalised), as in :mod:`opttrees.dp.engine`: leaf losses plus ``pen`` per split.
``min_samples_leaf`` (``minl``) counts rows; bounds then use the optimum without the minimum-leaf rule
(``*u`` values), which is still monotone and below the constrained one.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..heuristics.kernels.losses import sq_loss3
from .engine_base import leaf_cost

INF = np.inf
#: positions per feature evaluated before the interval search (spread evenly; the range's ends are virtual,
#: :func:`search_feature`, so the middle alone bounds both halves). A finer first grid costs more than it prunes
#: (root evaluations at depth 2, 1 -> 3 positions: 2,000 x 19 with 7 classes 83 -> 145, 10,000 x 10 with 4 classes
#: 123 -> 145, 20,000 x 10 with 3 classes 222 -> 247; 17 positions cost 2-4x more than 3)
GRID = 1
#: long row loops read the stop flag every POLL_MASK + 1 rows
POLL_MASK = 4095

# slots of the per-evaluation result vector ``res``
L0, L1, L1U, R0, R1, R1U = range(6)


@njit(cache=True, nogil=True)
def between(lo, hi):
    """:func:`opttrees.data.split_between` in numba: lo < t <= hi."""
    t = (lo + hi) / 2.0
    if lo < t and t <= hi:
        return t
    return hi


@njit(cache=True, nogil=True, inline="always")
def _cost_matrix_leaves(a, t, K, M):
    """Leaf costs under the misclassification cost matrix ``M[true, predicted]`` of the part with class weights
    ``a`` and of the rest of ``t`` (t - a): the best prediction of each."""
    ba = INF
    bb = INF
    for kh in range(K):
        ca = 0.0
        cb = 0.0
        for k in range(K):
            ca += a[k] * M[k, kh]
            cb += (t[k] - a[k]) * M[k, kh]
        if ca < ba:
            ba = ca
        if cb < bb:
            bb = cb
    return ba, bb


@njit(cache=True, nogil=True, inline="always")
def split_cost(cum, tot, s, kind, K, M):
    """leaf_cost(cum[s]) + leaf_cost(tot[s] - cum[s]) without slicing or allocating (the sweeps' inner step)."""
    if kind == 0 and K == 2:
        a0 = cum[s, 0]
        a1 = cum[s, 1]
        b0 = tot[s, 0] - a0
        b1 = tot[s, 1] - a1
        return (a0 if a0 < a1 else a1) + (b0 if b0 < b1 else b1)
    if kind == 0:
        sa = 0.0
        ma = 0.0
        sb = 0.0
        mb = 0.0
        for k in range(K):
            a = cum[s, k]
            b = tot[s, k] - a
            sa += a
            sb += b
            if a > ma:
                ma = a
            if b > mb:
                mb = b
        ra = sa - ma
        rb = sb - mb
        return (ra if ra > 0.0 else 0.0) + (rb if rb > 0.0 else 0.0)
    if kind == 1:
        ba, bb = _cost_matrix_leaves(cum[s], tot[s], K, M)
        return ba + bb
    return sq_loss3(cum[s, 0], cum[s, 1], cum[s, 2]) + sq_loss3(tot[s, 0] - cum[s, 0], tot[s, 1] - cum[s, 1],
                                                         tot[s, 2] - cum[s, 2])


@njit(cache=True, nogil=True)
def boundaries(xs, m, f, minl):
    """Positions i (1..m-1) of f's order where a split ``x_f < t`` sends the first i rows left."""
    out = np.empty(max(m - 1, 0), np.int64)
    k = 0
    for i in range(max(minl, 1), m - max(minl, 1) + 1):
        if xs[f, i - 1] < xs[f, i]:
            out[k] = i
            k += 1
    return out[:k]


@njit(cache=True, nogil=True)
def sweep_one(so, xs, m, Z, kind, K, M, pen, minl, tot, cum, best):
    """Best depth-one tree of the whole subset: best = [cost, cost without minl, g, lo, hi]; ``tot[0]`` holds
    the subset's statistics."""
    p = so.shape[0]
    S = Z.shape[1]
    leaf = leaf_cost(tot[0], kind, K, M)
    best[0] = leaf
    best[1] = leaf
    best[2] = -1.0
    for g in range(p):
        if not xs[g, 0] < xs[g, m - 1]:
            continue
        for k in range(S):
            cum[0, k] = 0.0
        last = xs[g, 0]
        for pos in range(m):
            r = so[g, pos]
            x = xs[g, pos]
            if x > last:
                v = split_cost(cum, tot, 0, kind, K, M) + pen
                if v < best[1]:
                    best[1] = v
                if pos >= minl and m - pos >= minl and v < best[0]:
                    best[0] = v
                    best[2] = g
                    best[3] = last
                    best[4] = x
            for k in range(S):
                cum[0, k] += Z[r, k]
            last = x


@njit(cache=True, nogil=True)
def gather_rows(so, m, lab, wt, labg, wtg):
    """Each feature's labels and weights in its own sorted order, so a sweep reads three contiguous arrays rather
    than looking every row up by its id (2.5x fewer nanoseconds per row at 10,000-100,000 rows)."""
    for g in range(so.shape[0]):
        for pos in range(m):
            r = so[g, pos]
            labg[g, pos] = lab[r]
            wtg[g, pos] = wt[r]


@njit(cache=True, nogil=True)
def rank_rows(so, m, f, rank, rkg):
    """rkg[g, pos]: the position in f's order of the row at position pos of g's order; for root threshold i of f a
    row is on the left iff its rank is below i (``rank`` is a row-indexed work array)."""
    for pos in range(m):
        rank[so[f, pos]] = pos
    for g in range(so.shape[0]):
        for pos in range(m):
            rkg[g, pos] = rank[so[g, pos]]


@njit(cache=True, nogil=True)
def _gathered(so, m, lab, wt, kind):
    """:func:`gather_rows` into new arrays (empty ones for squared error, which reads ``Z``)."""
    if kind == 2:
        return np.empty((0, 0), np.int64), np.empty((0, 0))
    p = so.shape[0]
    labg = np.empty((p, m), np.int64)
    wtg = np.empty((p, m))
    gather_rows(so, m, lab, wt, labg, wtg)
    return labg, wtg


@njit(cache=True, nogil=True)
def _ranks_for(so, m, f, kind, rank):
    """:func:`rank_rows` of f into a new array (an empty one for squared error)."""
    if kind == 2:
        return np.empty((0, 0), np.int32)
    rkg = np.empty((so.shape[0], m), np.int32)
    rank_rows(so, m, f, rank, rkg)
    return rkg


@njit(cache=True, nogil=True, inline="always")
def _offer(v, cnt, minl, ns, lo, hi, bu, bb, blo, bhi):
    """A side's boundary of cost v after ``cnt`` of its ``ns`` rows, between values lo and hi: the best costs with
    and without the minimum leaf size (bu, bb) and the best one's values (blo, bhi), updated."""
    if v < bu:
        bu = v
    if v < bb and cnt >= minl and ns - cnt >= minl:
        bb = v
        blo = lo
        bhi = hi
    return bu, bb, blo, bhi


@njit(cache=True, nogil=True, inline="always")
def _multi_step(x, c, w, K, tot, cum, s, st, sa, ma, mb, ab, cnt, last, prev, skip, pen, minl, ns, bu, bb, blo, bhi):
    """One row of a side's sweep under misclassification: score the boundary before it in O(1) from the part's
    total and largest class weight (which only grow) and the rest's largest class weight (recomputed only when a
    row of that class moves), keep it if best, then move the row into the part."""
    if cnt > 0 and x > last and (c != prev or not skip):
        ra = sa - ma
        rb = st - sa - mb
        bu, bb, blo, bhi = _offer((ra if ra > 0.0 else 0.0) + (rb if rb > 0.0 else 0.0) + pen, cnt, minl, ns, last, x,
                                  bu, bb, blo, bhi)
    cum[s, c] += w
    sa += w
    if cum[s, c] > ma:
        ma = cum[s, c]
    if c == ab:
        mb = -1.0
        for k in range(K):
            rest = tot[s, k] - cum[s, k]
            if rest > mb:
                mb = rest
                ab = k
    return sa, ma, mb, ab, cnt + 1, x, c, bu, bb, blo, bhi


@njit(cache=True, nogil=True, inline="always")
def _matrix_step(x, c, w, K, M, tot, cum, s, cnt, last, prev, skip, pen, minl, ns, bu, bb, blo, bhi):
    """:func:`_multi_step` under a misclassification cost matrix (scoring is O(K^2), done at class changes)."""
    if cnt > 0 and x > last and (c != prev or not skip):
        bu, bb, blo, bhi = _offer(split_cost(cum, tot, s, 1, K, M) + pen, cnt, minl, ns, last, x, bu, bb, blo, bhi)
    cum[s, c] += w
    return cnt + 1, x, c, bu, bb, blo, bhi


@njit(cache=True, nogil=True, inline="always")
def _rest_max(tot, s, K):
    """The largest class weight of side s and its class (the rest of an empty part)."""
    mb = -1.0
    ab = 0
    for k in range(K):
        if tot[s, k] > mb:
            mb = tot[s, k]
            ab = k
    return mb, ab


@njit(cache=True, nogil=True, inline="always")
def _two_class_cost(a0, a1, t0, t1):
    """Misclassified weight of a part holding class weights (a0, a1) and the rest of a side of (t0, t1)."""
    r0 = t0 - a0
    r1 = t1 - a1
    e = (a0 if a0 < a1 else a1) + (r0 if r0 < r1 else r1)
    return e if e > 0.0 else 0.0


@njit(cache=True, nogil=True, inline="always")
def _two_class_step(x, c, w, a0, a1, t0, t1, cnt, last, prev, skip, pen, minl, ns, bu, bb, blo, bhi):
    """:func:`_multi_step` for two classes: the part's class weights (a0, a1) in scalars, no class loop."""
    if cnt > 0 and x > last and (c != prev or not skip):
        bu, bb, blo, bhi = _offer(_two_class_cost(a0, a1, t0, t1) + pen, cnt, minl, ns, last, x, bu, bb, blo, bhi)
    if c == 0:
        a0 += w
    else:
        a1 += w
    return a0, a1, cnt + 1, x, c, bu, bb, blo, bhi


@njit(cache=True, nogil=True)
def _sweep_sides_cls(xg, lg, wg, rg, i, m, g, kind, K, M, pen, minl, tot, cum, nl, nr, res, split, skip):
    """One feature's sweep of both sides of root threshold i (rows with rank < i on the left), classification.

    ``skip`` (feature g has no tied values, and ``minl`` <= 1): a boundary between two rows of the same class is
    not scored. Along a run of same-class rows the cost is a sum of two concave functions of the weight moved
    (each leaf's loss is a minimum of linear functions), so its minimum over the run is at the run's ends, which
    are scored (or are the whole-side leaf, which is the starting value). Each side's state is kept in scalars
    (arrays of two would be reloaded after every store to ``cum``)."""
    for k in range(K):
        cum[0, k] = 0.0
        cum[1, k] = 0.0
    bu0, bb0, bu1, bb1 = res[L1U], res[L1], res[R1U], res[R1]
    lo0, hi0, lo1, hi1 = 0.0, 0.0, 0.0, 0.0
    c0, c1 = 0, 0
    last0, last1 = -INF, -INF
    p0, p1 = -1, -1
    if kind == 0 and K == 2:
        # two classes: each side's state is its part's weight per class, in scalars (no class loop, no arrays)
        t00, t01, t10, t11 = tot[0, 0], tot[0, 1], tot[1, 0], tot[1, 1]
        a00, a01, a10, a11 = 0.0, 0.0, 0.0, 0.0
        for pos in range(m):
            x = xg[pos]
            c = lg[pos]
            w = wg[pos]
            if rg[pos] < i:
                a00, a01, c0, last0, p0, bu0, bb0, lo0, hi0 = _two_class_step(
                    x, c, w, a00, a01, t00, t01, c0, last0, p0, skip, pen, minl, nl, bu0, bb0, lo0, hi0)
            else:
                a10, a11, c1, last1, p1, bu1, bb1, lo1, hi1 = _two_class_step(
                    x, c, w, a10, a11, t10, t11, c1, last1, p1, skip, pen, minl, nr, bu1, bb1, lo1, hi1)
    elif kind == 0:
        st0, st1 = 0.0, 0.0
        for k in range(K):
            st0 += tot[0, k]
            st1 += tot[1, k]
        mb0, ab0 = _rest_max(tot, 0, K)
        mb1, ab1 = _rest_max(tot, 1, K)
        sa0, ma0, sa1, ma1 = 0.0, 0.0, 0.0, 0.0
        for pos in range(m):
            if rg[pos] < i:
                sa0, ma0, mb0, ab0, c0, last0, p0, bu0, bb0, lo0, hi0 = _multi_step(
                    xg[pos], lg[pos], wg[pos], K, tot, cum, 0, st0, sa0, ma0, mb0, ab0, c0, last0, p0, skip, pen,
                    minl, nl, bu0, bb0, lo0, hi0)
            else:
                sa1, ma1, mb1, ab1, c1, last1, p1, bu1, bb1, lo1, hi1 = _multi_step(
                    xg[pos], lg[pos], wg[pos], K, tot, cum, 1, st1, sa1, ma1, mb1, ab1, c1, last1, p1, skip, pen,
                    minl, nr, bu1, bb1, lo1, hi1)
    else:
        for pos in range(m):
            if rg[pos] < i:
                c0, last0, p0, bu0, bb0, lo0, hi0 = _matrix_step(xg[pos], lg[pos], wg[pos], K, M, tot, cum, 0, c0,
                                                                 last0, p0, skip, pen, minl, nl, bu0, bb0, lo0, hi0)
            else:
                c1, last1, p1, bu1, bb1, lo1, hi1 = _matrix_step(xg[pos], lg[pos], wg[pos], K, M, tot, cum, 1, c1,
                                                                 last1, p1, skip, pen, minl, nr, bu1, bb1, lo1, hi1)
    res[L1U] = bu0
    res[R1U] = bu1
    if bb0 < res[L1]:
        res[L1] = bb0
        split[0, 0] = g
        split[0, 1] = lo0
        split[0, 2] = hi0
    if bb1 < res[R1]:
        res[R1] = bb1
        split[1, 0] = g
        split[1, 1] = lo1
        split[1, 2] = hi1


@njit(cache=True, nogil=True, inline="always")
def _keep(v, s, minl, c, ns, res, split, g, lo, hi):
    """Keep the cost ``v`` of a boundary of side s when it is the best so far (with and without min leaf)."""
    u = L1U if s == 0 else R1U
    b = L1 if s == 0 else R1
    if v < res[u]:
        res[u] = v
    if v < res[b] and c >= minl and ns - c >= minl:
        res[b] = v
        split[s, 0] = g
        split[s, 1] = lo
        split[s, 2] = hi


@njit(cache=True, nogil=True, inline="always")
def _settle(pend, s, tot, kind, K, M, pen, minl, c, ns, res, split, g, lo, hi):
    """Score the boundary whose left-part statistics are ``pend[s, :K]`` for side s; keep it if best."""
    _keep(split_cost(pend, tot, s, kind, K, M) + pen, s, minl, c, ns, res, split, g, lo, hi)


@njit(cache=True, nogil=True)
def eval_root(so, xs, m, f, i, Z, labg, wtg, rkg, ties, kind, K, M, pen, minl, side, tot, cum, res, split):
    """Best depth-one trees of both sides of the root split (f, i) in one sweep per feature.

    ``res`` gets (L0, L1, L1u, R0, R1, R1u): leaf cost, best depth-<=1 cost, and the same without the
    minimum-leaf rule, of the left (first i rows of f's order) and right sides. ``split[s]`` = (g, lo, hi)
    of side s's best split (g = -1: a leaf). Classification reads ``labg``/``wtg`` (:func:`gather_rows`) and
    ``rkg`` (:func:`rank_rows` of f); squared error reads ``Z`` and marks sides in ``side``."""
    p = so.shape[0]
    S = Z.shape[1]
    for s in range(2):
        for k in range(S):
            tot[s, k] = 0.0
    if kind != 2:
        for pos in range(m):
            tot[0 if pos < i else 1, labg[f, pos]] += wtg[f, pos]
    else:
        for pos in range(m):
            r = so[f, pos]
            s = 0 if pos < i else 1
            side[r] = s
            for k in range(S):
                tot[s, k] += Z[r, k]
    nside = np.empty(2, np.int64)
    nside[0] = i
    nside[1] = m - i
    res[L0] = leaf_cost(tot[0], kind, K, M)
    res[R0] = leaf_cost(tot[1], kind, K, M)
    res[L1] = res[L0]
    res[L1U] = res[L0]
    res[R1] = res[R0]
    res[R1U] = res[R0]
    split[0, 0] = -1.0
    split[1, 0] = -1.0
    if kind != 2:
        for g in range(p):
            if xs[g, 0] < xs[g, m - 1]:
                _sweep_sides_cls(xs[g], labg[g], wtg[g], rkg[g], i, m, g, kind, K, M, pen, minl, tot, cum, i, m - i,
                                 res, split, minl <= 1 and not ties[g])
        return
    for g in range(p):
        if not xs[g, 0] < xs[g, m - 1]:
            continue
        for k in range(S):
            cum[0, k] = 0.0
            cum[1, k] = 0.0
        c0 = 0
        c1 = 0
        last0 = -INF
        last1 = -INF
        for pos in range(m):
            r = so[g, pos]
            x = xs[g, pos]
            if side[r] == 0:
                if c0 > 0 and x > last0:
                    _settle(cum, 0, tot, kind, K, M, pen, minl, c0, nside[0], res, split, g, last0, x)
                for k in range(S):
                    cum[0, k] += Z[r, k]
                c0 += 1
                last0 = x
            else:
                if c1 > 0 and x > last1:
                    _settle(cum, 1, tot, kind, K, M, pen, minl, c1, nside[1], res, split, g, last1, x)
                for k in range(S):
                    cum[1, k] += Z[r, k]
                c1 += 1
                last1 = x


@njit(cache=True, nogil=True)
def combine(res, B, pen):
    """Cost of the best depth-two tree with root split and <= B branching nodes, from ``res``."""
    if B >= 3:
        return pen + res[L1] + res[R1]
    a = res[L1] + res[R0]
    b = res[L0] + res[R1]
    return pen + (a if a <= b else b)


@njit(cache=True, nogil=True)
def interval_bound(ra, rb, wab, B, pen, moving):
    """Lower bound on the cost of every root threshold strictly between evaluated positions a < b."""
    if B >= 3:
        lb = ra[L1U] + rb[R1U]
        if moving:
            alt = rb[L1U] + ra[R1U] - wab
            if alt > lb:
                lb = alt
        return pen + lb
    a = ra[L1U] + rb[R0]
    b = ra[L0] + rb[R1U]
    return pen + (a if a <= b else b)


@njit(cache=True, nogil=True, inline="always")
def _rows_at(bp, j, m):
    """Rows left of position j of ``bp``, with the virtual ends -1 (none) and len(bp) (all m)."""
    if j < 0:
        return 0
    if j >= bp.shape[0]:
        return m
    return bp[j]


@njit(cache=True, nogil=True)
def point_bound(monoL, monoR, movL, movR, moving, wp, bp, a, b, m, j, pen):
    """Lower bound on the cost of root position j strictly between evaluated positions a < b, per node budget k
    (``monoL[k]``: a bound on the left side's optimum at a, ``movL[k]`` at b; ``monoR[k]`` on the right side at b,
    ``movR[k]`` at a). The left side at j holds a's left rows and fewer than b's, so it is at least ``monoL`` (the
    subset's optimum, ``mono*`` values valid for it) and at least ``movL`` less the worst loss of the rows between
    j and b (moving rows); the right side likewise. Tighter than :func:`interval_bound`, which takes the worst j
    for each term separately; its minimum over j is the interval's bound."""
    wj = wp[_rows_at(bp, j, m)]
    wa = wp[_rows_at(bp, a, m)]
    wb = wp[_rows_at(bp, b, m)]
    best = INF
    for k in range(monoL.shape[0]):
        left = monoL[k]
        right = monoR[k]
        if moving:
            alt = movL[k] - (wb - wj)
            if alt > left:
                left = alt
            alt = movR[k] - (wj - wa)
            if alt > right:
                right = alt
        if left + right < best:
            best = left + right
    return pen + best


@njit(cache=True, nogil=True, inline="always")
def _side_bounds(ra, rb, B, monoL, monoR, movL, movR):
    """The depth-two search's :func:`point_bound` inputs from the results ``ra``, ``rb`` at positions a < b: one
    budget (both sides split) when B >= 3, else two (one side a leaf). Returns their number. The ``*U`` values
    (no minimum leaf size) are monotone in the rows and bound the constrained ones; leaf costs are monotone too."""
    if B >= 3:
        monoL[0] = ra[L1U]
        movL[0] = rb[L1U]
        monoR[0] = rb[R1U]
        movR[0] = ra[R1U]
        return 1
    monoL[0] = ra[L1U]
    movL[0] = rb[L1U]
    monoR[0] = rb[R0]
    movR[0] = ra[R0]
    monoL[1] = ra[L0]
    movL[1] = rb[L0]
    monoR[1] = rb[R1U]
    movR[1] = ra[R1U]
    return 2


@njit(cache=True, nogil=True)
def shrink(monoL, monoR, movL, movR, moving, wp, bp, a, b, m, cut, pen):
    """The positions strictly between evaluated a < b that :func:`point_bound` cannot close against ``cut``:
    (lo, hi, low) with lo..hi the first and last open positions (lo > hi: none), and ``low`` the least bound of
    the positions closed from either end. ConTree's interval shrinking and neighbourhood pruning in one rule."""
    low = INF
    lo = a + 1
    while lo < b:
        v = point_bound(monoL, monoR, movL, movR, moving, wp, bp, a, b, m, lo, pen)
        if v < cut:
            break
        if v < low:
            low = v
        lo += 1
    hi = b - 1
    while hi > lo:
        v = point_bound(monoL, monoR, movL, movR, moving, wp, bp, a, b, m, hi, pen)
        if v < cut:
            break
        if v < low:
            low = v
        hi -= 1
    return lo, hi, low


@njit(cache=True, nogil=True)
def _eval_boundary(j, bp, so, xs, m, f, Z, labg, wtg, rkg, ties, kind, K, M, pen, minl, side, tot, cum, res, split, B,
                   row, out, best):
    """Evaluate the root split at boundary j of f (:func:`eval_root`) for :func:`search_feature`: keep its six
    results in ``row``, count it, lower ``out[2]`` (the least cost seen) and, when it beats ``best``, make
    it ``out[0:2]`` (cost, position). Returns the new best."""
    eval_root(so, xs, m, f, bp[j], Z, labg, wtg, rkg, ties, kind, K, M, pen, minl, side, tot, cum, res, split)
    out[3] += 1
    for k in range(6):
        row[k] = res[k]
    v = combine(res, B, pen)
    if v < out[2]:
        out[2] = v
    if v < best:
        best = v
        out[0] = v
        out[1] = bp[j]
    return best


@njit(cache=True, nogil=True)
def search_feature(so, xs, m, f, Z, labg, wtg, ties, worst, kind, K, M, pen, minl, B, ub, moving, grid_only, grid,
                   ends, stop, side, tot, cum, res, split, out):
    """Best root threshold of feature f with cost < ub (ties: first found); out = [cost, i, lb, evals].

    ``grid`` positions spread over f's boundaries are evaluated first; ``grid_only`` stops there (the first pass
    at the root). The ends of the range are virtual positions -1 and nb, where one side is empty and the other is
    the whole subset, whose leaf and depth-one costs are ``ends`` = (leaf, depth one, depth one without the minimum
    leaf size): exact values, so one evaluation in the middle already bounds both halves. ``lb`` is a lower bound
    on every threshold of f (the best cost found and the bounds of intervals skipped or left open at a stop)."""
    out[0] = INF
    out[1] = -1.0
    out[2] = INF
    out[3] = 0.0
    bp = boundaries(xs, m, f, minl)
    nb = len(bp)
    if nb == 0:
        return
    # prefix of worst-case losses along f's order (for the moving-rows bound)
    wp = np.zeros(m + 1)
    for pos in range(m):
        wp[pos + 1] = wp[pos] + worst[so[f, pos]]
    # position j's results are row j + 1 (row 0: the virtual position -1, row nb + 1: nb)
    vals = np.zeros((nb + 2, 6))
    done = np.zeros(nb + 2, np.uint8)
    vals[0, R0] = ends[0]
    vals[0, R1] = ends[1]
    vals[0, R1U] = ends[2]
    vals[nb + 1, L0] = ends[0]
    vals[nb + 1, L1] = ends[1]
    vals[nb + 1, L1U] = ends[2]
    done[0] = 1
    done[nb + 1] = 1
    rkg = _ranks_for(so, m, f, kind, side)
    best = ub
    for q in range(1, grid + 1):
        if stop[0]:                 # the grid is not finished: its gaps bound nothing
            out[2] = 0.0
            return
        j = (q * (nb + 1)) // (grid + 1) - 1
        if j < 0 or done[j + 1]:
            continue
        best = _eval_boundary(j, bp, so, xs, m, f, Z, labg, wtg, rkg, ties, kind, K, M, pen, minl, side, tot, cum,
                              res, split, B, vals[j + 1], out, best)
        done[j + 1] = 1
    stack = np.empty((2 * nb + 4, 2), np.int64)
    top = 0
    prev = -1
    for j in range(nb + 1):
        if done[j + 1]:
            if j > prev + 1:
                stack[top, 0] = prev
                stack[top, 1] = j
                top += 1
            prev = j
    monoL = np.empty(2)
    monoR = np.empty(2)
    movL = np.empty(2)
    movR = np.empty(2)
    while top > 0:
        top -= 1
        a = stack[top, 0]
        b = stack[top, 1]
        if stop[0] or grid_only:    # the interval's bound, for every position in it
            lb = interval_bound(vals[a + 1], vals[b + 1], wp[_rows_at(bp, b, m)] - wp[_rows_at(bp, a, m)], B, pen,
                                moving)
            if lb < out[2]:
                out[2] = lb
            continue
        nk = _side_bounds(vals[a + 1], vals[b + 1], B, monoL, monoR, movL, movR)
        lo, hi, low = shrink(monoL[:nk], monoR[:nk], movL[:nk], movR[:nk], moving, wp, bp, a, b, m, best, pen)
        if lo > hi:             # closed whole; a part closed from its ends is bounded again by the halves below
            if low < out[2]:
                out[2] = low
            continue
        mid = (lo + hi) // 2
        best = _eval_boundary(mid, bp, so, xs, m, f, Z, labg, wtg, rkg, ties, kind, K, M, pen, minl, side, tot,
                              cum, res, split, B, vals[mid + 1], out, best)
        # the half with the lower bound is searched first (pushed last)
        if mid > a + 1 and b > mid + 1:
            la = interval_bound(vals[a + 1], vals[mid + 1], wp[bp[mid]] - wp[_rows_at(bp, a, m)], B, pen, moving)
            lb2 = interval_bound(vals[mid + 1], vals[b + 1], wp[_rows_at(bp, b, m)] - wp[bp[mid]], B, pen, moving)
            if la <= lb2:
                stack[top, 0] = mid
                stack[top, 1] = b
                stack[top + 1, 0] = a
                stack[top + 1, 1] = mid
            else:
                stack[top, 0] = a
                stack[top, 1] = mid
                stack[top + 1, 0] = mid
                stack[top + 1, 1] = b
            top += 2
        elif mid > a + 1:
            stack[top, 0] = a
            stack[top, 1] = mid
            top += 1
        elif b > mid + 1:
            stack[top, 0] = mid
            stack[top, 1] = b
            top += 1


@njit(cache=True, nogil=True)
def _subset_totals(so, m, Z):
    """The subset's statistics summed, shape (1, S) (what :func:`sweep_one` reads as ``tot``)."""
    S = Z.shape[1]
    tot = np.zeros((1, S))
    for pos in range(m):
        r = so[0, pos]
        for k in range(S):
            tot[0, k] += Z[r, k]
    return tot


@njit(cache=True, nogil=True)
def solve_d2(so, xs, m, Z, lab, wt, ties, worst, kind, K, M, pen, minl, depth, B, ub, moving, stop, side, counters, tree):
    """Best tree of depth <= ``depth`` (1 or 2) and <= B branching nodes on subset ``so``, if below ``ub``.

    Returns (cost, lb). When a tree below ``ub`` exists, cost is its cost and ``tree`` = [f, t, gL, tL, gR, tR]
    (-1: a leaf; f = -1: the whole tree is a leaf; f = -2: a depth-one tree on gL/tL); otherwise cost = inf.
    lb is a valid lower bound on the optimum (>= ub when the search finished without a tree below ub; still
    valid when ``stop`` cut the search short). Features are searched in order and share the incumbent, so the
    same subset and ub always give the same tree."""
    S = Z.shape[1]
    tot1 = _subset_totals(so, m, Z)
    cum1 = np.zeros((1, S))
    one = np.zeros(5)
    leaf = leaf_cost(tot1[0], kind, K, M)
    tree[0] = -1.0
    best = INF
    lb = INF
    if leaf < ub:
        best = leaf
    if leaf < lb:
        lb = leaf
    if B == 0 or m < 2 * max(minl, 1):
        if best < ub:
            return best, best
        return INF, lb
    sweep_one(so, xs, m, Z, kind, K, M, pen, minl, tot1, cum1, one)
    counters[0] += 1
    if one[0] < best and one[0] < ub:
        best = one[0]
        tree[0] = -2.0
        tree[2] = one[2]
        tree[3] = between(one[3], one[4])
    if one[0] < lb:
        lb = one[0]
    if depth >= 2 and B >= 2:
        p = so.shape[0]
        tot = np.zeros((2, S))
        cum = np.zeros((2, S))
        res = np.zeros(6)
        split = np.zeros((2, 3))
        out = np.zeros(4)
        inc = best if best < ub else ub
        lbr = INF
        ends = np.array([leaf, one[0], one[1]])
        labg, wtg = _gathered(so, m, lab, wt, kind)
        if one[2] >= 0:
            # the first incumbent of the interval search: the best depth-two tree whose root is the best depth-one
            # split (a 50,000-row subproblem below a depth-3 root: 2,638 evaluations in 26 s from the depth-one
            # incumbent alone; the whole table's depth-two search, started from the CART tree, needed 162)
            g = int(one[2])
            seed = np.zeros(6)
            _fill_root(so, xs, m, g, _position(xs, m, g, one[4]), Z, labg, wtg, ties, kind, K, M, pen, minl, B, side,
                       tot, cum, res, split, seed)
            v = combine(res, B, pen)
            counters[1] += 1
            if v < inc:
                inc = v
                best = v
                for k in range(6):
                    tree[k] = seed[k]
        for f in range(p):
            if stop[0]:             # the features not searched bound nothing
                lbr = 0.0
                break
            search_feature(so, xs, m, f, Z, labg, wtg, ties, worst, kind, K, M, pen, minl, B, inc, moving, False,
                           np.int64(GRID), ends, stop, side, tot, cum, res, split, out)
            counters[1] += out[3]
            if out[2] < lbr:
                lbr = out[2]
            if out[1] >= 0 and out[0] < inc:
                inc = out[0]
                best = out[0]
                _fill_root(so, xs, m, f, int(out[1]), Z, labg, wtg, ties, kind, K, M, pen, minl, B, side, tot, cum,
                           res, split, tree)
        # the root-split trees are bounded by lbr; leaf and depth-one trees by lb so far
        if lbr < lb:
            lb = lbr
    if best < ub:
        return best, min(lb, best)
    return INF, lb


@njit(cache=True, nogil=True)
def _position(xs, m, g, hi):
    """The boundary of g's order before the first value >= hi (the rows left of a split between lo and hi)."""
    a = 0
    b = m
    while a < b:
        mid = (a + b) // 2
        if xs[g, mid] < hi:
            a = mid + 1
        else:
            b = mid
    return a


@njit(cache=True, nogil=True)
def _fill_root(so, xs, m, f, i, Z, labg, wtg, ties, kind, K, M, pen, minl, B, side, tot, cum, res, split, tree):
    """Write the depth-two tree with root (f, i) into ``tree`` (re-evaluating it for its children)."""
    eval_root(so, xs, m, f, i, Z, labg, wtg, _ranks_for(so, m, f, kind, side), ties, kind, K, M, pen, minl, side, tot,
              cum, res, split)
    tree[0] = f
    tree[1] = between(xs[f, i - 1], xs[f, i])
    useL = True
    useR = True
    if B < 3:
        if res[L1] + res[R0] <= res[L0] + res[R1]:
            useR = False
        else:
            useL = False
    tree[2] = split[0, 0] if useL else -1.0
    tree[3] = between(split[0, 1], split[0, 2]) if useL and split[0, 0] >= 0 else 0.0
    tree[4] = split[1, 0] if useR else -1.0
    tree[5] = between(split[1, 1], split[1, 2]) if useR and split[1, 0] >= 0 else 0.0


@njit(cache=True, nogil=True)
def root_feature(so, xs, m, f, Z, labg, wtg, ties, worst, kind, K, M, pen, minl, B, ub, moving, grid_only, ends, stop,
                 side, out):
    """:func:`search_feature` with its own work arrays (one call per thread at the root)."""
    S = Z.shape[1]
    tot = np.zeros((2, S))
    cum = np.zeros((2, S))
    res = np.zeros(6)
    split = np.zeros((2, 3))
    search_feature(so, xs, m, f, Z, labg, wtg, ties, worst, kind, K, M, pen, minl, B, ub, moving, grid_only,
                   np.int64(GRID), ends, stop, side, tot, cum, res, split, out)


@njit(cache=True, nogil=True)
def subset_ends(so, xs, m, Z, kind, K, M, pen, minl):
    """(leaf, depth one, depth one without the minimum leaf size) of the subset: :func:`search_feature`'s ``ends``."""
    tot = _subset_totals(so, m, Z)
    one = np.zeros(5)
    sweep_one(so, xs, m, Z, kind, K, M, pen, minl, tot, np.zeros((1, Z.shape[1])), one)
    return np.array([leaf_cost(tot[0], kind, K, M), one[0], one[1]])


@njit(cache=True, nogil=True)
def root_tree(so, xs, m, f, i, Z, labg, wtg, ties, kind, K, M, pen, minl, B, side, tree):
    S = Z.shape[1]
    tot = np.zeros((2, S))
    cum = np.zeros((2, S))
    res = np.zeros(6)
    split = np.zeros((2, 3))
    _fill_root(so, xs, m, f, i, Z, labg, wtg, ties, kind, K, M, pen, minl, B, side, tot, cum, res, split, tree)


@njit(cache=True, nogil=True)
def split_orders(so, xs, m, f, i, mark):
    """The two sides' sorted orders and values after the root split (f, i): (p, i) and (p, m - i) arrays."""
    p = so.shape[0]
    for pos in range(m):
        mark[so[f, pos]] = 1 if pos < i else 0
    left = np.empty((p, i), so.dtype)
    right = np.empty((p, m - i), so.dtype)
    xl = np.empty((p, i))
    xr = np.empty((p, m - i))
    for g in range(p):
        a = 0
        b = 0
        for pos in range(m):
            r = so[g, pos]
            if mark[r]:
                left[g, a] = r
                xl[g, a] = xs[g, pos]
                a += 1
            else:
                right[g, b] = r
                xr[g, b] = xs[g, pos]
                b += 1
    return left, xl, right, xr


@njit(cache=True, nogil=True)
def subset_hash(so, m, h1, h2):
    a = np.uint64(0)
    b = np.uint64(0)
    for pos in range(m):
        r = so[0, pos]
        a += h1[r]
        b += h2[r]
    return a, b



def _guard_cache() -> None:
    """Kernels here compile in functions of other modules: drop their cache when any of the files changed."""
    from ..jit import guard_cache

    guard_cache(__name__)   # the files: opttrees/kernel_modules.py


_guard_cache()
