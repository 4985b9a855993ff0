"""Best splits of a node: BESTPARALLELSPLIT over the features (generic, a start tree's two-class form,
and the integer form with the order cache), and the hyperplane descent (Algorithm 3.1).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .losses import ABSOLUTE, fen_build, fen_empty, GINI, MISCLASSIFICATION, place_loss
from .scans import (
    cache_leaf_losses, CMASK, MBIAS, place_init, scan, scan_core, scan_core_binary_pair, scan_unit, scan_unit_pair)
from .movecache import slot_get, slot_put, start_key
from .orders import (
    feature_order, filter_order, LOW32, node_codes, node_rows_at, og_code, og_row, og_shift, ORD_ALL, ORD_BITMAP,
    ORD_FILTER_ALL, ORD_OWN, order_mode)


@njit(cache=True, nogil=True)
def safe_mid(a, b):
    """Midpoint m with a < m <= b (a < b), so 'x < m' separates a from b exactly."""
    m = 0.5 * (a + b)
    if not (m > a) or m > b:
        m = b
    return m


@njit(cache=True, nogil=True, inline="always")
def cut_thresholds(X, Xs, i0, i1, j):
    """The split between rows i0 and i1 (adjacent in feature j's order): (threshold in original units,
    strictly between their values; threshold in scaled units)."""
    return safe_mid(X[i0, j], X[i1, j]), 0.5 * (Xs[i0, j] + Xs[i1, j])


@njit(cache=True, nogil=True, inline="always")
def scan_cut(q, m, movers):
    """A scan's cut after mover q as the rows on either side (movers[q] << 32 | movers[q + 1]), or -1 when it
    is not a cut (q outside 0 .. m - 2)."""
    if q >= 0 and q < m - 1:
        return (movers[q] << 32) | movers[q + 1]
    return np.int64(-1)


@njit(cache=True, nogil=True, inline="always")
def keep_better(loss, cut, j, X, Xs, best, bj, bt, bts):
    """A feature's scan result (loss, cut from :func:`scan_cut`) kept if it is a cut better than the best so
    far: the new (best, feature, thresholds), else the old ones."""
    if cut >= 0 and loss < best:
        bt, bts = cut_thresholds(X, Xs, cut >> 32, cut & LOW32, j)
        return loss, j, bt, bts
    return best, bj, bt, bts


@njit(cache=True, nogil=True)
def best_parallel_start(I, nI, inI, X, Xs, grp, orderT, grpT, rankT, featok, fsub, nf, Z, kind, nmin, movers, vals,
                        s0, s1, x, memo, r1, r2, lossf):
    """:func:`best_parallel` for a start tree's split of a leaf into two new leaves with two classes
    (misclassification or gini): every row starts in the upper leaf, whose class weights are (s0, s1)
    (summed in row order, as place_init sums them) and loss x. The same orders and scans, so the same
    (loss, j, thresholds) bit for bit, without the generic per-node set-up (a second pass over the rows,
    Fenwick and scratch arrays): a third of a depth-6 start tree's time on 10,000 rows.

    memo (empty: none): each feature's result, (loss, the rows on either side of its cut), is looked up
    under (the rows' hash sums r1, r2, feature) before scanning and stored after (:func:`grow_ranked`); the
    features are still compared in fsub's order with the same test, so the split is the same. lossf: a
    one-element float scratch (its bits go in the memo)."""
    lossb = lossf.view(np.int64)
    n = X.shape[0]
    best = np.inf
    bj = np.int64(-1)
    bt = 0.0
    bts = 0.0
    small, bitmap, bsmall = order_mode(nI, n)
    mark = np.zeros((n + 63) // 64 if bitmap or bsmall else 0, np.uint64)
    deficient = np.int64(0 < nmin) + np.int64(nI < nmin)  # the empty lower leaf, and the upper one
    for f in range(nf):
        j = fsub[f]
        if not featok[j]:
            continue
        k1, k2 = start_key(r1, r2, j, kind, nmin)
        hit, lb, cut = slot_get(memo, k1, k2)
        if hit:  # cut: the rows on either side of the feature's cut (i0 << 32 | i1), or -1: no cut
            lossb[0] = lb
            loss = lossf[0]
        else:
            cut = np.int64(-1)
            loss = np.inf
            m = feature_order(I, nI, inI, X, grp, orderT, grpT, rankT, j, mark, movers, vals, small, bitmap, bsmall)
            if m >= 2 and vals[0] != vals[m - 1]:
                loss, q = scan_core_binary_pair(movers, m, vals, Z, kind, nmin, s0, s1, nI, x, 0.0, 0.0, np.int64(0),
                                                0.0, x, deficient)
                cut = scan_cut(q, m, movers)
            if memo.shape[0] > 0:
                lossf[0] = loss
                slot_put(memo, k1, k2, lossb[0], cut)
        best, bj, bt, bts = keep_better(loss, cut, j, X, Xs, best, bj, bt, bts)
    return best, bj, bt, bts


@njit(cache=True, nogil=True)
def best_parallel(I, nI, inI, X, Xs, grp, orderT, grpT, rankT, featok, fsub, nf, low_d, up_d, fixlow, Z, kind,
                  nmin, leaves, nl, stats, cnt, movers, vals, lloss, bstats, bcnt, blloss):
    """BESTPARALLELSPLIT over features fsub[:nf]: returns (loss, j, threshold original, threshold scaled).

    orderT / grpT: (p, n) presorted row indices per feature and the group ranks gathered in that order;
    rankT (p, n): rankT[j, i] = position of row i in orderT[j] (:func:`ranks`).
    The start placement (everyone in the upper subtree) is built once and copied per feature (bstats,
    bcnt, blloss: size-T scratch like stats / cnt / lloss). Two classes with unit weights scan in integers
    instead (:func:`best_parallel_unit`).
    """
    n = X.shape[0]
    S = Z.shape[1]
    best = np.inf
    bj = np.int64(-1)
    bt = 0.0
    bts = 0.0
    for r in range(nI):
        fixlow[I[r]] = False
    F = fen_build(I, nI, low_d, up_d, Z, leaves, nl, stats.shape[0]) if kind == ABSOLUTE else fen_empty()
    place_init(I, nI, low_d, up_d, fixlow, Z, kind, leaves, nl, bstats, bcnt, F)
    btotal, bdef = cache_leaf_losses(kind, nmin, leaves, nl, bstats, bcnt, blloss, F)
    if nl == 2 and S == 2 and (kind == MISCLASSIFICATION or kind == GINI):
        # two leaves (lower = leaves[0], upper = leaves[1] for every point) and two classes: every point starts
        # in the upper leaf (so btotal is its loss), as in a start tree's split
        L1 = leaves[1]
        return best_parallel_start(I, nI, inI, X, Xs, grp, orderT, grpT, rankT, featok, fsub, nf, Z, kind, nmin, movers,
                                   vals, bstats[L1, 0], bstats[L1, 1], blloss[L1], np.zeros((0, 5), np.int64),
                                   np.uint64(0), np.uint64(0), np.zeros(1))
    bfw = F[5].copy()
    bfwy = F[6].copy()
    small, bitmap, bsmall = order_mode(nI, n)
    mark = np.zeros((n + 63) // 64 if bitmap or bsmall else 0, np.uint64)
    for f in range(nf):
        j = fsub[f]
        if not featok[j]:
            continue
        m = feature_order(I, nI, inI, X, grp, orderT, grpT, rankT, j, mark, movers, vals, small, bitmap, bsmall)
        if m < 2 or vals[0] == vals[m - 1]:
            continue
        for a in range(nl):
            L = leaves[a]
            cnt[L] = bcnt[L]
            lloss[L] = blloss[L]
            for k in range(S):
                stats[L, k] = bstats[L, k]
        if kind == ABSOLUTE:
            F[5][:] = bfw
            F[6][:] = bfwy
        loss, q = scan_core(movers, m, vals, low_d, up_d, Z, kind, nmin, stats, cnt, lloss, btotal, bdef, F)
        best, bj, bt, bts = keep_better(loss, scan_cut(q, m, movers), j, X, Xs, best, bj, bt, bts)
    return best, bj, bt, bts


@njit(cache=True, nogil=True)
def best_parallel_unit(I, nI, inI, X, Xs, orderT, grpT, rankT, ogT, featok, fsub, nf, nmin, nl, pk, code, cc, cc0,
                       btotal, bdef, movers, vals, ordc, src, slev, ssa, sn, olev, osa, sib_sa, ogs, stage2, bound,
                       first):
    """:func:`best_parallel` for two classes with unit weights (:func:`unit_binary`), in integers.

    pk: the node's rows' packed class and leaves (:func:`unit_word`); cc0[a]: local leaf a's counts in
    the start placement (everyone in the upper subtree; :func:`unit_node_counts`), btotal / bdef its
    loss and number of leaves below nmin. Each feature's scan words are gathered in its presorted order
    and scanned by :func:`scan_unit`; the rows on either side of the best cut are looked up once at the end.

    Each feature's order of the node's rows (``src``), always exactly the filtered global order:
    ORD_BITMAP, a bitmap of their ranks (O(nI + n/64), about 5 ns a row); ORD_ALL, the root's: ogT itself;
    ORD_FILTER_ALL, a filter of all n rows of ogT (about 1 ns a row); ORD_OWN, the node's own order cached
    at an earlier visit with the same rows, ordc[slev, j, ssa:ssa + nI]; ORD_FILTER, a filter of an
    ancestor's cached order ordc[slev, j, ssa:ssa + sn] (an ancestor's rows are a superset). With olev >= 0
    the order is also stored at ordc[olev, j, osa:osa + nI] for later visits of the node and its descendants
    (see the order-cache note in :func:`local_search_ranked`). With sib_sa >= 0 a filter of the parent's
    order also stores the sibling's (the rows it drops) at ordc[olev, j, sib_sa:...], staged in stage2 (the
    node's own in ogs; both of ogT's word type).

    Only cuts with a loss below ``bound`` are wanted (what a move must beat): each scan stops once none
    can be (:func:`scan_unit`), and later features get the best cut so far as their bound. The feature at
    position ``first`` of fsub (-1: none) is scanned first, as the likeliest best; the result is the same
    as scanning in fsub's order: a feature before the best so far also wins with an equal loss.
    """
    n = X.shape[0]
    best = np.inf
    ibest = np.int64(bound)  # only cuts below it are wanted: the best so far, or what a move must beat
    bj = np.int64(-1)  # typed: a literal -1 met first by type inference compiled node_rows_at for it too
    bpos = np.int64(-1)  # the best feature's position in fsub
    bq = np.int64(-2)
    mark = np.zeros((n + 63) // 64 if src == ORD_BITMAP else 0, np.uint64)
    store = olev >= 0 and src != ORD_OWN
    sh = og_shift(ogT)
    cm0 = np.empty(nl, np.int64)  # the start counts as scan words: count << 32 | margin + MBIAS
    for a in range(nl):
        k = cc0[a] >> 32
        cm0[a] = (k << 32) | (2 * (cc0[a] & CMASK) - k + MBIAS)
    for f in range(nf):
        # fsub[pos] == first is scanned first (its cut tends to be the best, so the others stop sooner);
        # the others follow in their order, and ties still go to the feature that comes first in fsub
        pos = f
        if first >= 0:
            pos = first if f == 0 else (f - 1 if f <= first else f)
        j = fsub[pos]
        if not featok[j]:
            continue
        m = np.int64(0)
        if src == ORD_OWN:
            for q in range(nI):
                code[q] = og_code(ordc[slev, j, ssa + q], sh, pk)
            m = nI
        elif src == ORD_ALL:
            for q in range(n):
                code[q] = og_code(ogT[j, q], sh, pk)
            m = n
        elif src == ORD_BITMAP:
            m = node_codes(I, nI, rankT, ogT, j, mark, pk, code, ogs, store)
        elif src == ORD_FILTER_ALL:
            m = filter_order(ogT[j], n, inI, pk, code, ogs, stage2, sib_sa >= 0)
        else:
            m = filter_order(ordc[slev, j, ssa:ssa + sn], sn, inI, pk, code, ogs, stage2, sib_sa >= 0)
        if store:  # (never for the root, ORD_ALL)
            ordc[olev, j, osa:osa + m] = ogs[:m]
            if sib_sa >= 0:
                ordc[olev, j, sib_sa:sib_sa + sn - m] = stage2[:sn - m]
        if m < 2 or (code[0] >> 32) == (code[m - 1] >> 32):
            continue
        bnd = ibest + np.int64(pos < bpos)  # a feature before the best one also wins with an equal loss
        if nl == 2:  # two leaves: local 0 / 1 are the lower / upper child of every point
            v = cc0[1]  # the upper leaf's counts (the lower one is empty)
            loss, q = scan_unit_pair(code, m, nmin, (v >> 32) - (v & CMASK), v & CMASK, bnd)
        else:
            cc[:nl] = cm0[:nl]
            loss, q = scan_unit(code, m, nmin, cc, btotal, bdef, bnd)
        if q >= 0 and q < m - 1 and (loss < ibest or (loss == ibest and pos < bpos)):
            best = loss
            ibest = np.int64(loss)
            bj = j
            bq = q
            bpos = pos
    if bj < 0:
        return best, bj, 0.0, 0.0
    if src == ORD_OWN:
        i0 = og_row(ordc[slev, bj, ssa + bq], sh)
        i1 = og_row(ordc[slev, bj, ssa + bq + 1], sh)
    elif store:
        i0 = og_row(ordc[olev, bj, osa + bq], sh)
        i1 = og_row(ordc[olev, bj, osa + bq + 1], sh)
    elif src == ORD_ALL:
        i0 = og_row(ogT[bj, bq], sh)
        i1 = og_row(ogT[bj, bq + 1], sh)
    else:
        i0, i1 = node_rows_at(I, nI, inI, orderT, rankT, bj, bq, mark, movers, vals, grpT, src == ORD_BITMAP)
    bt, bts = cut_thresholds(X, Xs, i0, i1, bj)
    return best, bj, bt, bts


@njit(cache=True, nogil=True)
def sort_movers(keys, movers, vals, m):
    """Put movers[:m] in ascending (stable) order of keys[:m], with vals[:m] their keys, near-equal values
    merged so that the cuts between them keep a usable margin (the hyperplane descent's moves)."""
    o = np.argsort(keys[:m], kind="mergesort")
    mv = movers[:m].copy()
    kv = keys[:m].copy()
    for r in range(m):
        movers[r] = mv[o[r]]
        vals[r] = kv[o[r]]
    for r in range(1, m):
        if vals[r] - vals[r - 1] <= 1e-9 * (1.0 + abs(vals[r])):
            vals[r] = vals[r - 1]


@njit(cache=True, nogil=True)
def hyper_descent(a, b, I, nI, Xs, featok, low_d, up_d, fixlow, Z, kind, nmin, leaves, nl, stats, cnt,
                  movers, vals, V, pen, cxc, tol, dest, lloss, stop):
    """Algorithm 3.1: coordinate-wise perturbation and deletion of hyperplane coefficients (scaled units).

    Modifies (a, b) in place; returns the subtree loss (leaf losses + pen * complexity). Stops after the
    current sweep when ``stop[0]`` is set (every accepted change keeps (a, b) and the loss consistent).
    """
    p = Xs.shape[1]
    # current loss
    nnz = 0
    for j in range(p):
        if a[j] != 0.0:
            nnz += 1
    for r in range(nI):
        i = I[r]
        v = -b
        for j in range(p):
            v += a[j] * Xs[i, j]
        dest[i] = low_d[i] if v < 0.0 else up_d[i]
    cur = place_loss(I, nI, dest, Z, kind, nmin, leaves, nl, stats, cnt) + pen * (nnz + cxc)
    U = np.empty(nI)
    keys = np.empty(nI)
    vok = False
    for _sweep in range(100):
        if stop[0] != 0:
            break
        improved = False
        perm = np.random.permutation(p)
        for kk in range(p):
            k = perm[kk]
            if not featok[k]:
                continue
            if not vok:
                # V = a·x - b from scratch once; afterwards it is updated incrementally per accepted change
                for r in range(nI):
                    i = I[r]
                    v = -b
                    for j in range(p):
                        v += a[j] * Xs[i, j]
                    V[i] = v
                vok = True
            # ---- perturb a_k: point goes lower iff new a_k < U_ik
            m = np.int64(0)
            for r in range(nI):
                i = I[r]
                x = Xs[i, k]
                if x > 0.0:
                    fixlow[i] = False
                    U[m] = (a[k] * x - V[i]) / x
                    keys[m] = -U[m]
                    movers[m] = i
                    m += 1
                else:
                    fixlow[i] = V[i] < 0.0
            if m > 0:
                sort_movers(keys, movers, vals, m)
                loss, q = scan(I, nI, movers, m, vals, low_d, up_d, fixlow, Z, kind, nmin, leaves, nl, stats, cnt, lloss)
                if q >= -1:
                    if q == -1:
                        c = -vals[0] + 1.0
                    elif q == m - 1:
                        c = -vals[m - 1] - 1.0
                    else:
                        c = 0.5 * (-vals[q] - vals[q + 1])
                    new_nnz = nnz + (1 if (a[k] == 0.0 and c != 0.0) else 0) - (1 if (a[k] != 0.0 and c == 0.0) else 0)
                    cand = loss + pen * (new_nnz + cxc)
                    if cand < cur - tol:
                        for r in range(nI):
                            i = I[r]
                            V[i] += (c - a[k]) * Xs[i, k]
                        a[k] = c
                        nnz = new_nnz
                        cur = cand
                        improved = True
            # ---- delete a_k: point goes lower iff W_ik < new b
            if a[k] != 0.0 and nnz > 1:
                for r in range(nI):
                    i = I[r]
                    fixlow[i] = False
                    U[r] = V[i] + b - a[k] * Xs[i, k]
                    movers[r] = i
                sort_movers(U, movers, vals, nI)
                loss, q = scan(I, nI, movers, nI, vals, low_d, up_d, fixlow, Z, kind, nmin, leaves, nl, stats, cnt, lloss)
                if q >= -1:
                    cand = loss + pen * (nnz - 1 + cxc)
                    if cand < cur - tol:
                        if q == -1:
                            nb = vals[0] - 1.0
                        elif q == nI - 1:
                            nb = vals[nI - 1] + 1.0
                        else:
                            nb = 0.5 * (vals[q] + vals[q + 1])
                        for r in range(nI):
                            i = I[r]
                            V[i] = V[i] + b - a[k] * Xs[i, k] - nb
                        a[k] = 0.0
                        b = nb
                        nnz -= 1
                        cur = cand
                        improved = True
        if not improved:
            break
    return cur, b
