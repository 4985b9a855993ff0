"""Greedy top-down growth (CART-like): the start trees of the local search, optionally with random
feature subsets (random-forest style) or fully random cuts, their two-class scans kept in the move cache.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .losses import GINI, MISCLASSIFICATION, gini_loss2, mis_loss2, place_loss
from .orders import ranks
from .routing import LEAF, PAR, node_depth, split_block
from .scans import leaf_scratch, row_scratch
from .splits import best_parallel, best_parallel_start, safe_mid


@njit(cache=True, nogil=True, inline="always")
def set_split(ntype, feat, thr, t, j, th, rows, bs, be, X, rtmp):
    """Make node t of a start tree the parallel split ``X[:, j] < th`` with two leaves, and split its block of
    rows between them."""
    ntype[t] = PAR
    feat[t] = j
    thr[t] = th
    ntype[2 * t + 1] = LEAF
    ntype[2 * t + 2] = LEAF
    split_block(rows, bs, be, t, X, j, th, rtmp)


@njit(cache=True, nogil=True)
def grow(tree, prob, kind, D, nmin, mtry, tol, randsplit):
    """Greedy top-down growth (CART-like) of ``tree`` (a :class:`.structs.HeapTree`, overwritten) to depth D on
    ``prob`` (a :class:`.structs.Problem`); mtry < #features draws a random subset per split.

    randsplit: instead of the best split, a uniformly random feasible cut on a random feature (a fully
    random start tree, used for part of the restarts to diversify starts when p is tiny).
    """
    grow_ranked(tree, prob, ranks(prob.orderT), kind, D, nmin, mtry, tol, randsplit, np.zeros((0, 5), np.int64),
                np.zeros((2, 0), np.uint64))


@njit(cache=True, nogil=True)
def grow_ranked(tree, prob, rankT, kind, D, nmin, mtry, tol, randsplit, memo, rh):
    """:func:`grow` with the rank table (:func:`ranks`) computed once by the caller.

    memo: a move-cache table (or an empty one) that keeps each two-class split scan's result under (the
    node's rows, the feature), with rh the rows' hash words (:func:`row_hashes`). Why: every start tree of
    a call splits the same root, and the top splits repeat across restarts (the best split of the same
    rows on the same feature, whichever random subset holds it), so most top-level scans are found there.
    """
    ntype, feat, thr, coef = tree
    X, Xs, grp, orderT, grpT, Z, featok = prob
    n, p = X.shape
    T = ntype.shape[0]
    S = Z.shape[1]
    ntype[:] = 0
    ntype[0] = LEAF
    coef[:, :] = 0.0
    # rows grouped by node, each block in row order (a stable partition per split): a node's rows cost
    # O(its rows) instead of a pass over all n, in the same order the filter gave
    rows = np.arange(n)
    bs = np.zeros(T, np.int64)
    be = np.zeros(T, np.int64)
    be[0] = n
    rtmp = np.empty(n, np.int64)
    inI, I, low_d, up_d, fixlow, movers, vals = row_scratch(n)
    stats, cnt, lloss, bstats, bcnt, blloss = leaf_scratch(T, S)
    leaves = np.empty(2, np.int64)
    leaf1 = np.empty(1, np.int64)
    one = np.int64(1)  # typed variables, not literals: a literal argument compiles its own specialisation
    two = np.int64(2)
    okf = np.empty(p, np.int64)
    nok = np.int64(0)
    for j in range(p):
        if featok[j]:
            okf[nok] = j
            nok += 1
    pair2 = S == 2 and (kind == GINI or kind == MISCLASSIFICATION)
    s0 = 0.0
    s1 = 0.0
    nI = np.int64(0)
    use_memo = pair2 and not randsplit and memo.shape[0] > 0
    nomemo = np.zeros((0, 5), np.int64)
    lossf = np.zeros(1)  # a scan's loss and its bits (the memo stores bits)
    for t in range(T):
        if ntype[t] != LEAF or node_depth(t) >= D:
            continue
        for r in range(nI):  # the previous node's rows
            inI[I[r]] = False
        nI = be[t] - bs[t]
        r1 = np.uint64(0)
        r2 = np.uint64(0)
        for r in range(nI):
            i = rows[bs[t] + r]
            I[r] = i
            inI[i] = True
            if use_memo:
                r1 += rh[0, i]
                r2 += rh[1, i]
        if nI < 2 * nmin:
            continue
        leaves[0] = 2 * t + 1
        leaves[1] = 2 * t + 2
        leaf1[0] = 2 * t + 2
        # parent loss: everything in one leaf
        if pair2:  # its class weights summed as place_loss sums them (best_parallel_start)
            s0 = 0.0
            s1 = 0.0
            for r in range(nI):
                i = I[r]
                s0 += Z[i, 0]
                s1 += Z[i, 1]
            parent = gini_loss2(s0, s1) if kind == GINI else mis_loss2(s0, s1)
        else:
            for r in range(nI):
                low_d[I[r]] = 2 * t + 1
                up_d[I[r]] = 2 * t + 2
            parent = place_loss(I, nI, up_d, Z, kind, one, leaf1, one, stats, cnt)
        if parent <= tol:
            continue
        if randsplit:
            for _attempt in range(8):
                j = okf[np.random.randint(nok)]
                q = nmin - 1 + np.random.randint(nI - 2 * nmin + 1)
                # the cut after the q-th smallest value, moved past its ties: found by selection in O(nI)
                # (the same cut a full sort gives: value v, the next larger value v2, their ranks)
                for r in range(nI):
                    vals[r] = X[I[r], j]
                v = np.partition(vals[:nI], q)[q]
                nle = np.int64(0)
                v2 = np.inf
                iv = np.int64(-1)
                iv2 = np.int64(-1)
                for r in range(nI):
                    x = vals[r]
                    if x <= v:
                        nle += 1
                        if x == v:
                            iv = I[r]
                    elif x < v2:
                        v2 = x
                        iv2 = I[r]
                if nle - 1 >= nI - nmin or grp[iv, j] == grp[iv2, j]:
                    continue
                set_split(ntype, feat, thr, t, j, safe_mid(v, v2), rows, bs, be, X, rtmp)
                break
            continue
        if mtry < nok:
            fs = okf[:nok][np.random.permutation(nok)[:mtry]].copy()
            nf = mtry
        else:
            fs = okf[:nok].copy()
            nf = nok
        if pair2:
            loss, j, th, ths = best_parallel_start(I, nI, inI, X, Xs, grp, orderT, grpT, rankT, featok, fs, nf, Z, kind,
                                                   nmin, movers, vals, s0, s1, parent, memo if use_memo else nomemo,
                                                   r1, r2, lossf)
        else:
            loss, j, th, ths = best_parallel(I, nI, inI, X, Xs, grp, orderT, grpT, rankT, featok, fs, nf, low_d, up_d,
                                             fixlow, Z, kind, nmin, leaves, two, stats, cnt, movers, vals, lloss,
                                             bstats, bcnt, blloss)
        if j >= 0 and loss < parent - tol:
            set_split(ntype, feat, thr, t, j, th, rows, bs, be, X, rtmp)
