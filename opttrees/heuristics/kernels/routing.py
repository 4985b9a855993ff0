"""The heap tree: node types, routing rows to leaves, subtree walks, promotions, and the whole tree's
objective recomputed from scratch.

Heap order, capacity T = 2^(D+1) - 1, children of t are 2t+1 / 2t+2; ``ntype[t]``: 0 absent, LEAF, PAR
(parallel split ``X[:, feat] < thr``, original units) or HYP (hyperplane ``coef · Xs < thr``, scaled units).
:func:`node_depth` and :func:`route_parallel` are shared with the prescriptive kernels
(:mod:`opttrees.prescriptive._kernels`), whose trees use the same layout with parallel splits only.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .losses import ABSOLUTE, abs_leaf_losses, leaf_loss

LEAF, PAR, HYP = 1, 2, 3


@njit(cache=True, nogil=True)
def node_depth(t):
    d = 0
    u = t
    while u > 0:
        u = (u - 1) // 2
        d += 1
    return d


@njit(cache=True, nogil=True)
def is_desc(u, t):
    while u > t:
        u = (u - 1) // 2
    return u == t


@njit(cache=True, nogil=True)
def route_point(i, start, ntype, feat, thr, coef, X, Xs):
    t = start
    while ntype[t] >= 2:
        if ntype[t] == 2:
            left = X[i, feat[t]] < thr[t]
        else:
            v = 0.0
            for j in range(Xs.shape[1]):
                v += coef[t, j] * Xs[i, j]
            left = v < thr[t]
        t = 2 * t + 1 if left else 2 * t + 2
    return t


@njit(cache=True, nogil=True)
def route_parallel(X, ntype, feat, thr, start, i):
    """:func:`route_point` for trees of parallel splits only (the prescriptive kernels' trees): row i's leaf
    in the subtree at ``start``."""
    u = start
    while ntype[u] == PAR:
        u = 2 * u + 1 if X[i, feat[u]] < thr[u] else 2 * u + 2
    return u


@njit(cache=True, nogil=True, inline="always")
def partition_rows(buf, lo, hi, col, th, tmp):
    """Stable partition of the rows buf[lo:hi] by col[i] < th, that part first; returns where the rest
    starts. Branch-free (every row is written to both sides, the side's index advances): a cut through
    random data mispredicted half its rows. ``tmp``: scratch for the rest, copied back after."""
    k = lo
    kr = np.int64(0)
    for r in range(lo, hi):
        i = buf[r]
        go = np.int64(col[i] < th)
        buf[k] = i
        tmp[kr] = i
        k += go
        kr += 1 - go
    for r in range(kr):
        buf[k + r] = tmp[r]
    return k


@njit(cache=True, nogil=True)
def route_block(buf, a, b, start, ntype, feat, thr, coef, X, XT, Xs, dest, tmp):
    """dest[i] = the leaf of the subtree at ``start`` that row i reaches, for the rows buf[a:b] (reordered).

    Node by node instead of row by row: at a parallel split the rows are partitioned by one comparison
    with the feature and threshold held in registers (branch-free, the right part through ``tmp``), so
    there is no chain of dependent loads per row and level; about 4x faster than :func:`route_point` per
    row on a depth-6 tree. XT: X transposed (p, n), so one split reads one contiguous column. Hyperplane
    splits route their rows one at a time.
    """
    sn = np.empty(128, np.int64)
    sa = np.empty(128, np.int64)
    sb = np.empty(128, np.int64)
    sn[0] = start
    sa[0] = a
    sb[0] = b
    sp = 1
    while sp > 0:
        sp -= 1
        s = sn[sp]
        lo = sa[sp]
        hi = sb[sp]
        if lo >= hi:
            continue
        if ntype[s] == PAR:
            kl = partition_rows(buf, lo, hi, XT[feat[s]], thr[s], tmp)
            sn[sp] = 2 * s + 2
            sa[sp] = kl
            sb[sp] = hi
            sn[sp + 1] = 2 * s + 1
            sa[sp + 1] = lo
            sb[sp + 1] = kl
            sp += 2
        elif ntype[s] == HYP:
            for r in range(lo, hi):
                i = buf[r]
                dest[i] = route_point(i, s, ntype, feat, thr, coef, X, Xs)
        else:
            for r in range(lo, hi):
                dest[buf[r]] = s


@njit(cache=True, nogil=True, inline="always")
def subtree_stack(root):
    """(stack, 1): a depth-first stack over the heap subtree at ``root``, holding ``root``. How every walk of a
    subtree starts, here and in the move cache's and the prescriptive kernels'; 64 entries, since a walk that
    pushes both children of a split holds at most one entry per level and one more (depth <= 62)."""
    stack = np.empty(64, np.int64)
    stack[0] = root
    return stack, 1


@njit(cache=True, nogil=True, inline="always")
def push_children(stack, sp, u):
    """Push split u's heap children on a :func:`subtree_stack`, the left one on top (popped first: preorder,
    left to right); returns the stack's new size."""
    stack[sp] = 2 * u + 2
    stack[sp + 1] = 2 * u + 1
    return sp + 2


@njit(cache=True, nogil=True)
def subtree_leaves(ntype, t, out, start):
    """Append the leaf positions of the subtree at t to out[start:]; return the new end (right to left)."""
    stack, sp = subtree_stack(t)
    k = start
    while sp > 0:
        sp -= 1
        u = stack[sp]
        if ntype[u] >= 2:
            stack[sp] = 2 * u + 1
            stack[sp + 1] = 2 * u + 2
            sp += 2
        elif ntype[u] == 1 or u == t:
            out[k] = u
            k += 1
    return k


@njit(cache=True, nogil=True)
def subtree_complexity(ntype, coef, t):
    c = 0
    stack, sp = subtree_stack(t)
    while sp > 0:
        sp -= 1
        u = stack[sp]
        if ntype[u] >= 2:
            if ntype[u] == 2:
                c += 1
            else:
                for j in range(coef.shape[1]):
                    if coef[u, j] != 0.0:
                        c += 1
            sp = push_children(stack, sp, u)
    return c


@njit(cache=True, nogil=True)
def promote(ntype, feat, thr, coef, t, c):
    """Replace the subtree at t by the subtree at its child c (heap positions move up one level)."""
    T = ntype.shape[0]
    src = np.empty(T, np.int64)
    dst = np.empty(T, np.int64)
    src[0] = c
    dst[0] = t
    head = 0
    tail = 1
    while head < tail:
        s = src[head]
        d = dst[head]
        head += 1
        ntype[d] = ntype[s]
        feat[d] = feat[s]
        thr[d] = thr[s]
        for j in range(coef.shape[1]):
            coef[d, j] = coef[s, j]
        if ntype[s] >= 2:
            src[tail] = 2 * s + 1
            dst[tail] = 2 * d + 1
            src[tail + 1] = 2 * s + 2
            dst[tail + 1] = 2 * d + 2
            tail += 2
    # clear stale positions below the new subtree (heap order visits parents first)
    for u in range(t + 1, T):
        if is_desc(u, t) and ntype[(u - 1) // 2] < 2:
            ntype[u] = 0


@njit(cache=True, nogil=True)
def tree_objective_raw(tree, prob, kind, nmin, pen, XT, leafpos, stats, cnt, leaves, rows, tmp):
    """(raw objective, feasible) of the whole tree (a :class:`.structs.HeapTree`; prob: a
    :class:`.structs.Problem`), every row routed from scratch into ``leafpos``. XT: X transposed
    (:func:`.orders.search_arrays`); rows, tmp: n-int64 scratch (a fresh transpose and two arrays per call were
    two thirds of its time, which was 1.5% of a depth-6 search on 10,000 rows)."""
    ntype, feat, thr, coef = tree
    X, Xs, Z = prob.X, prob.Xs, prob.Z
    n = X.shape[0]
    S = Z.shape[1]
    T = ntype.shape[0]
    root = np.int64(0)
    for u in range(T):
        cnt[u] = 0
        for k in range(S):
            stats[u, k] = 0.0
    for i in range(n):
        rows[i] = i
    route_block(rows, root, n, root, ntype, feat, thr, coef, X, XT, Xs, leafpos, tmp)
    for i in range(n):
        t = leafpos[i]
        cnt[t] += 1
        for k in range(S):
            stats[t, k] += Z[i, k]
    nl = subtree_leaves(ntype, root, leaves, root)
    total = 0.0
    feas = True
    out = np.empty(T if kind == ABSOLUTE else 0)
    if kind == ABSOLUTE:
        abs_leaf_losses(np.arange(n), n, leafpos, Z, leaves, nl, stats, out)
    for a in range(nl):
        L = leaves[a]
        total += out[L] if kind == ABSOLUTE else leaf_loss(kind, stats, L, cnt)
        if cnt[L] < nmin:
            feas = False
    total += pen * subtree_complexity(ntype, coef, root)
    return total, feas


@njit(cache=True, nogil=True)
def split_block(rows, bs, be, t, X, j, th, tmp):
    """Stable partition of node t's block of rows into its children's blocks (X[:, j] < th first)."""
    a = bs[t]
    b = be[t]
    k = partition_rows(rows, a, b, X[:, j], th, tmp)
    bs[2 * t + 1] = a
    be[2 * t + 1] = k
    bs[2 * t + 2] = k
    be[2 * t + 2] = b
