"""Sorted orders: presorting (ties in row order, dense group ranks), a node's rows in a feature's
presorted order (rank bitmaps, filters, small-node sorts), the packed row words of the integer scans, and
the local search's order cache of the nodes' feature orders.
"""
from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import overload

from .routing import node_depth
from .scans import unit_binary
from .movecache import row_hashes


@njit(cache=True, nogil=True)
def presort_ties(XT, orderT):
    """Put each run of equal values of an argsorted column (orderT[j] orders XT[j]) in row order, in place:
    an unstable argsort becomes the order by (value, row). Runs are short in most data; a long one (few
    distinct values) is sorted, not insertion-sorted."""
    p, n = XT.shape
    for j in range(p):
        o = orderT[j]
        a = 0
        while a < n:
            v = XT[j, o[a]]
            b = a + 1
            while b < n and XT[j, o[b]] == v:
                b += 1
            if b - a > 16:
                o[a:b] = np.sort(o[a:b])
            else:
                for q in range(a + 1, b):  # insertion sort: no allocation for the usual short runs
                    x = o[q]
                    k = q - 1
                    while k >= a and o[k] > x:
                        o[k + 1] = o[k]
                        k -= 1
                    o[k + 1] = x
            a = b


@njit(cache=True, nogil=True)
def presort_ranks(KT, orderT, grp, grpT):
    """Dense ranks of each column's key along its order: grpT[j, r] for the r-th row of orderT[j] and
    grp[i, j] for row i. Returns the columns where the key decreases along the order (not monotone in X:
    the caller re-sorts them by key and calls again)."""
    p, n = KT.shape
    bad = np.zeros(p, np.bool_)
    for j in range(p):
        r = np.int32(0)
        for q in range(n):
            i = orderT[j, q]
            if q > 0:
                d = KT[j, i] - KT[j, orderT[j, q - 1]]
                bad[j] |= d < 0
                r += np.int32(d != 0)
            grpT[j, q] = r
            grp[i, j] = r
    return bad


@njit(cache=True, nogil=True)
def ranks(orderT):
    """rankT[j, i]: position of row i in feature j's presorted order (the inverse permutation of orderT[j])."""
    p, n = orderT.shape
    rankT = np.empty((p, n), np.int64)
    for j in range(p):
        for r in range(n):
            rankT[j, orderT[j, r]] = r
    return rankT


@njit(cache=True, nogil=True, inline="always")
def mark_ranks(I, nI, rankT, j, mark):
    """Set bit rankT[j, i] of the bitmap ``mark`` for every row i of I[:nI]: the node's rows in feature j's
    presorted order are then its set bits, read word by word (:func:`node_order`, :func:`node_codes`)."""
    for r in range(nI):
        k = rankT[j, I[r]]
        mark[k >> 6] |= np.uint64(1) << np.uint64(k & 63)


LOW32 = (np.int64(1) << 32) - 1


TOP_BIT = np.uint64(1) << np.uint64(63)  # x | TOP_BIT: trailing_zeros is 63, not undefined, for x = 0


@njit(cache=True, nogil=True)
def node_order(I, nI, rankT, orderT, grpT, j, mark, movers, vals):
    """The rows I[:nI] in feature j's presorted order (exactly the filtered global order) with their group
    ranks in vals, via a bitmap of their ranks (``mark``: n/64 zero words, left zeroed); returns nI."""
    mark_ranks(I, nI, rankT, j, mark)
    m = np.int64(0)
    last = orderT.shape[1] - 1
    nb = 2 if nI < movers.shape[0] else 0  # see node_codes
    for w in range(mark.shape[0]):
        x = mark[w]
        mark[w] = np.uint64(0)
        base = np.int64(w) << 6
        for _ in range(nb):
            k = min(base + np.int64(trailing_zeros(x | TOP_BIT)), last)
            movers[m] = orderT[j, k]
            vals[m] = grpT[j, k]
            m += np.int64(x != 0)
            x &= x - np.uint64(1)
        while x != 0:
            k = base + np.int64(trailing_zeros(x))
            movers[m] = orderT[j, k]
            vals[m] = grpT[j, k]
            m += 1
            x &= x - np.uint64(1)
    return m


@njit(cache=True, nogil=True)
def og_words(orderT, grpT):
    """ogT[j, r] = orderT[j, r] | grpT[j, r] << 32: a row and its group rank in one load for the integer
    scans, whose scan words keep the rank in the same high half (:func:`unit_word`)."""
    p, n = orderT.shape
    ogT = np.empty((p, n), np.int64)
    for j in range(p):
        for r in range(n):
            ogT[j, r] = orderT[j, r] | (np.int64(grpT[j, r]) << 32)
    return ogT


@njit(cache=True, nogil=True)
def og_words32(orderT, grpT):
    """:func:`og_words` in 32 bits, row | group rank << 16, for n <= 2^16 rows (ranks are below n). Why: the
    order cache and the filters stream these words, and half the bytes keep more of them in the L2 cache
    (synthetic set, 10,000 rows, depth 6: 4 MB of cached orders per thread instead of 8)."""
    p, n = orderT.shape
    ogT = np.empty((p, n), np.uint32)
    for j in range(p):
        for r in range(n):
            ogT[j, r] = np.uint32(orderT[j, r] | (np.int64(grpT[j, r]) << 16))
    return ogT


OG32_ROWS = 1 << 16  # the most rows og_words32 can pack


def og_shift(a):
    """Where the group rank starts in the row words of array ``a`` (16 for :func:`og_words32`, 32 for
    :func:`og_words`): a compile-time constant in the kernels (see the overload below)."""
    return 16 if a.dtype.itemsize == 4 else 32


@overload(og_shift, inline="always")
def _og_shift(a):
    sh = 16 if a.dtype.bitwidth == 32 else 32
    return lambda a: sh


@njit(cache=True, nogil=True, inline="always")
def og_row(og, sh):
    """The row of a row word (:func:`og_words`, :func:`og_words32`; sh from :func:`og_shift`)."""
    return np.int64(og) & ((np.int64(1) << sh) - 1)


@njit(cache=True, nogil=True, inline="always")
def og_code(og, sh, pk):
    """A row word's scan word: the row's packed class and leaves (pk) with its group rank in the high half."""
    w = np.int64(og)
    return pk[w & ((np.int64(1) << sh) - 1)] | ((w >> sh) << 32)


@njit(cache=True, nogil=True)
def node_codes(I, nI, rankT, ogT, j, mark, pk, code, stage, keep):
    """:func:`node_order` for the integer scans: code[q] = pk[row] | group rank << 32 for the rows I[:nI]
    in feature j's presorted order (exactly the filtered global order); returns nI. With ``keep`` the row
    words (:func:`og_words` or :func:`og_words32`, as ogT holds) also go to stage[q] (for the order cache)."""
    mark_ranks(I, nI, rankT, j, mark)
    m = np.int64(0)
    last = ogT.shape[1] - 1
    sh = og_shift(ogT)
    # a node's bitmap is sparse (a few bits a word): a loop per word mispredicted its exit about once a
    # word, so each word's first two bits are taken without a branch (written at m, kept only if the bit
    # exists; m <= nI, so with nI below the buffers' size the slot is scratch), the rest in the loop
    nb = 2 if nI < min(code.shape[0], stage.shape[0] if keep else code.shape[0]) else 0
    for w in range(mark.shape[0]):
        x = mark[w]
        mark[w] = np.uint64(0)
        base = np.int64(w) << 6
        for _ in range(nb):
            og = ogT[j, min(base + np.int64(trailing_zeros(x | TOP_BIT)), last)]
            code[m] = og_code(og, sh, pk)
            if keep:
                stage[m] = og
            m += np.int64(x != 0)
            x &= x - np.uint64(1)
        while x != 0:
            og = ogT[j, base + np.int64(trailing_zeros(x))]
            code[m] = og_code(og, sh, pk)
            if keep:
                stage[m] = og
            m += 1
            x &= x - np.uint64(1)
    return m


@njit(cache=True, nogil=True)
def node_rows_at(I, nI, inI, orderT, rankT, j, q, mark, movers, vals, grpT, bitmap):
    """The node's rows at positions q and q + 1 of feature j's presorted order (the same order the scan
    saw: the rank bitmap or the filter)."""
    if bitmap:
        node_order(I, nI, rankT, orderT, grpT, j, mark, movers, vals)
        return movers[q], movers[q + 1]
    k = np.int64(-1)
    i0 = np.int64(-1)
    for r in range(orderT.shape[1]):
        i = orderT[j, r]
        if inI[i]:
            k += 1
            if k == q:
                i0 = i
            elif k == q + 1:
                return i0, i
    return i0, i0


@njit(cache=True, nogil=True, inline="always")
def order_mode(nI, n):
    """How :func:`feature_order` lists a node of nI rows out of n: (small, bitmap, bsmall).

    A bitmap of the node's ranks gives the filtered order at O(nI + n/64) instead of O(n) (about 5 ns a
    row against 1 ns a row filtered); small nodes sort their own rows, except (bsmall) in a feature whose
    n values are all distinct, where sorting and the bitmap give the same order and the bitmap is cheaper
    for nodes above about n/256 rows (3x on the 300-row nodes of a depth-6 start tree on 10,000 rows).
    """
    small = nI * (np.log2(nI + 1.0) + 2.0) * 3.0 < n
    return small, nI * 5 < n and not small, small and nI * 4 > (n >> 6)


@njit(cache=True, nogil=True, inline="always")
def feature_order(I, nI, inI, X, grp, orderT, grpT, rankT, j, mark, movers, vals, small, bitmap, bsmall):
    """The rows I[:nI] in movers and their group ranks in vals, in feature j's order (:func:`order_mode`);
    returns the count. Equal values keep the order each path always gave them."""
    n = X.shape[0]
    if bitmap or (bsmall and grpT[j, n - 1] == n - 1):  # dense ranks: n - 1 at the end iff all distinct
        return node_order(I, nI, rankT, orderT, grpT, j, mark, movers, vals)
    if small:
        for r in range(nI):
            vals[r] = X[I[r], j]
        o = np.argsort(vals[:nI])
        for r in range(nI):
            movers[r] = I[o[r]]
        for r in range(nI):
            vals[r] = grp[movers[r], j]
        return nI
    m = np.int64(0)
    for r in range(n):
        i = orderT[j, r]
        movers[m] = i
        vals[m] = grpT[j, r]
        m += np.int64(inI[i])
    return m


@njit(cache=True, nogil=True, inline="always")
def cache_entry(cok, ch1, ch2, csa, cnI, u, r1, r2, sa, nu):
    """Mark node u's order-cache entry valid: its rows' two hash sums, and its block (sa, nu rows) in seg
    and in its level of the cache (:func:`local_search_ranked`)."""
    cok[u] = True
    ch1[u] = r1
    ch2[u] = r2
    csa[u] = sa
    cnI[u] = nu


@njit(cache=True, nogil=True)
def cache_path(v, D, seg, skey, h1, h2, hall1, hall2, ogT, ordc, featok, cok, ch1, ch2, csa, cnI, mask, stage,
               stage2):
    """Make node v's cached feature orders valid (the order cache of :func:`local_search_ranked`): from its
    nearest ancestor with valid orders (or the root's presorted order), each node on the way down is split
    off its parent's orders together with its sibling, one pass over the parent's rows per feature. A
    node's rows are the block of seg between its leaf keys (skey); ``mask`` (all False, left so) marks them."""
    a = (v - 1) // 2
    while a > 0 and not cok[a]:
        a = (a - 1) // 2
    path = np.empty(D + 1, np.int64)
    npath = 0
    w = v
    while w != a:
        path[npath] = w
        npath += 1
        w = (w - 1) // 2
    p = ogT.shape[0]
    sh = og_shift(ogT)
    for e in range(npath - 1, -1, -1):
        w = path[e]
        par = (w - 1) // 2
        dw = node_depth(w)
        lo = (w + 1) << (D - dw)
        sa = np.searchsorted(skey, lo)
        nw = np.searchsorted(skey, lo + (np.int64(1) << (D - dw))) - sa
        r1 = np.uint64(0)
        r2 = np.uint64(0)
        for r in range(nw):
            i = seg[sa + r]
            mask[i] = True
            r1 += h1[i]
            r2 += h2[i]
        if par == 0:
            pn, psa, p1, p2 = ogT.shape[1], np.int64(0), hall1, hall2
        else:
            pn, psa, p1, p2 = cnI[par], csa[par], ch1[par], ch2[par]
        sib = w + 1 if w & 1 else w - 1
        ssa = sa + nw if w & 1 else sa - (pn - nw)
        lev = dw - 1
        for j in range(p):
            if not featok[j]:
                continue
            m = np.int64(0)
            k = np.int64(0)
            for r in range(pn):
                og = ogT[j, r] if par == 0 else ordc[lev - 1, j, psa + r]
                b = np.int64(mask[og_row(og, sh)])
                stage[m] = og
                stage2[k] = og
                m += b
                k += 1 - b
            for q in range(m):
                ordc[lev, j, sa + q] = stage[q]
            for q in range(k):
                ordc[lev, j, ssa + q] = stage2[q]
        for r in range(nw):
            mask[seg[sa + r]] = False
        cache_entry(cok, ch1, ch2, csa, cnI, w, r1, r2, sa, nw)
        cache_entry(cok, ch1, ch2, csa, cnI, sib, p1 - r1, p2 - r2, ssa, pn - nw)


# where best_parallel_unit takes each feature's order of the node's rows from
ORD_BITMAP, ORD_ALL, ORD_FILTER_ALL, ORD_OWN, ORD_FILTER = 0, 1, 2, 3, 4


@njit(cache=True, nogil=True, inline="always")
def filter_order(src, sn, inI, pk, code, movers, rest, split):
    """The rows of src[:sn] (row words, :func:`og_words` / :func:`og_words32`) that are in the node (inI), in src's order: their
    scan words in code and their row words in movers; with ``split`` the other rows' words go to rest, in
    order (a parent's order filtered to one child also gives the other child's). Branch-free: every row is
    written, and only the right count advances. Staged, not stored in place: a store in place would write
    one slot past the node's block. Returns the node's count."""
    m = np.int64(0)
    sh = og_shift(src)
    if split:
        k = np.int64(0)
        for r in range(sn):
            og = src[r]
            i = og_row(og, sh)
            code[m] = og_code(og, sh, pk)
            movers[m] = og
            rest[k] = og
            b = np.int64(inI[i])
            m += b
            k += 1 - b
    else:
        for r in range(sn):
            og = src[r]
            i = og_row(og, sh)
            code[m] = og_code(og, sh, pk)
            movers[m] = og
            m += np.int64(inI[i])
    return m


def search_arrays(X, orderT, grpT):
    """(rankT, ogT, XT, rh): the read-only arrays every restart uses (:func:`ranks`, the row words of
    :func:`og_words32` for up to 2^16 rows and of :func:`og_words` above, X transposed, :func:`row_hashes`),
    made once per call and shared by all threads. Large arrays made per restart or per chunk cost page faults:
    a fresh 3 MB per restart was up to 40% of a restart's time."""
    og = og_words32 if X.shape[0] <= OG32_ROWS else og_words
    return ranks(orderT), og(orderT, grpT), np.ascontiguousarray(X.T), row_hashes(X.shape[0])


@njit(cache=True, nogil=True)
def order_cache(Z, kind, hyper, D, p, ogT):
    """The order cache of :func:`local_search_ranked` (feature orders of the nodes at depths 1 .. D - 1, at
    most 128 MB, for integer visits with parallel splits; empty otherwise), made once per worker thread for
    all its restarts. Its pages are only touched as nodes are scanned."""
    n = Z.shape[0]
    segs = unit_binary(Z, kind) and not hyper
    levels = min(D - 1, (np.int64(1) << 27) // max(ogT.itemsize * p * n, 1)) if segs else 0
    return np.empty((max(levels, 1), p, n if levels > 0 else 0), ogT.dtype)
