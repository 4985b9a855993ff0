"""The binary engine's depth-two solver: optimal trees of depth <= 2 from pair frequency counts (MurTree's idea).

It counts the summed statistics of every pair of binary columns once (:func:`_frequency_counts`, updated
incrementally from the previous call's counts in a slot of the workspace) and evaluates every depth-two tree by
arithmetic on them (:func:`_depth_two`, with hot loops for plain misclassification and squared error). Called by
the search in :mod:`opttrees.dp.engine`; conventions there.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..heuristics.kernels.losses import sq_loss3
from .engine_base import (INF, N_D2_CALLS, N_D2_INCREMENTAL, O_HAS_COUNT, O_HAS_FCOST, O_MINLEAF, O_ONEHOT, O_S,
                          _count, _entry, _feature_cost, _key, _no_extra, _store, _weight, leaf_cost)


@njit(cache=True, nogil=True)
def _stats_of(rows, nD, Z, opt, out):
    SA = out.shape[0]
    for s in range(SA):
        out[s] = 0.0
    S = opt[O_S]
    for t in range(nD):
        r = rows[t]
        for s in range(S):
            out[s] += Z[r, s]
        if opt[O_HAS_COUNT]:
            out[S] += 1.0


@njit(cache=True, nogil=True)
def _pair_update(r, sign, C, rowptr, rowfeat, Z, lab, opt):
    """Add (sign=+1) or remove (-1) row r's statistics to every pair a <= b of its present features (upper
    triangle of ``C[s]``; :func:`_depth_two` mirrors it before its scan)."""
    a0 = rowptr[r]
    a1 = rowptr[r + 1]
    S = opt[O_S]
    cnt = opt[O_HAS_COUNT]
    if opt[O_ONEHOT] and not cnt:
        k = lab[r]
        w = sign * Z[r, k]
        Ck = C[k]
        for x in range(a0, a1):
            Cka = Ck[rowfeat[x]]
            for y in range(x, a1):
                Cka[rowfeat[y]] += w
        return
    for s in range(S + cnt):
        v = sign * Z[r, s] if s < S else sign
        if v == 0.0:
            continue
        Cs = C[s]
        for x in range(a0, a1):
            Csa = Cs[rowfeat[x]]
            for y in range(x, a1):
                Csa[rowfeat[y]] += v


@njit(cache=True, nogil=True)
def _drop_slot(sl, rows, nD, ws):
    """Forget a slot whose counts a stop left half-updated (it is recounted from zero when next used)."""
    slot_rows, slot_len, slot_mark, mark = ws[1], ws[2], ws[3], ws[5]
    for t in range(slot_len[sl]):
        slot_mark[sl, slot_rows[sl, t]] = 0
    for t in range(nD):
        mark[rows[t]] = 0
    slot_len[sl] = -1
    return -1


@njit(cache=True, nogil=True)
def _frequency_counts(rows, nD, data, ws, opt, stats, stop):
    """Pair statistics of the rows in a slot; reuse the slot whose previous rows differ least (MurTree's
    incremental update), recount from zero when the difference is as large as the subset itself.

    Polls ``stop`` once per row (a row costs (features present)^2 updates, millions on wide tables): a stopped
    count drops the half-updated slot and returns -1."""
    XT, rowptr, rowfeat, Z, lab = data
    cnt, slot_rows, slot_len, slot_mark, slot_age, mark = ws[0], ws[1], ws[2], ws[3], ws[4], ws[5]
    n_slots = cnt.shape[0]
    for t in range(nD):
        mark[rows[t]] = 1
    best_slot = -1
    best_diff = nD
    for sl in range(n_slots):
        if slot_len[sl] < 0:
            continue
        removed = 0
        for t in range(slot_len[sl]):
            if mark[slot_rows[sl, t]] == 0:
                removed += 1
        kept = slot_len[sl] - removed
        diff = removed + (nD - kept)
        if diff < best_diff:
            best_diff = diff
            best_slot = sl
    slot_age[n_slots] += 1
    if best_slot >= 0:
        sl = best_slot
        C = cnt[sl]
        stats[N_D2_INCREMENTAL] += 1
        for t in range(slot_len[sl]):
            r = slot_rows[sl, t]
            if mark[r] == 0:
                if stop[0] != 0:
                    return _drop_slot(np.int64(sl), rows, nD, ws)
                _pair_update(r, -1.0, C, rowptr, rowfeat, Z, lab, opt)
        for t in range(nD):
            r = rows[t]
            if slot_mark[sl, r] == 0:
                if stop[0] != 0:
                    return _drop_slot(np.int64(sl), rows, nD, ws)
                _pair_update(r, 1.0, C, rowptr, rowfeat, Z, lab, opt)
        for t in range(slot_len[sl]):
            slot_mark[sl, slot_rows[sl, t]] = 0
    else:
        sl = 0
        for s2 in range(1, n_slots):
            if slot_age[s2] < slot_age[sl]:
                sl = s2
        C = cnt[sl]
        for t in range(slot_len[sl]):
            slot_mark[sl, slot_rows[sl, t]] = 0
        slot_len[sl] = 0
        C[:] = 0.0
        for t in range(nD):
            if stop[0] != 0:
                return _drop_slot(np.int64(sl), rows, nD, ws)
            _pair_update(rows[t], 1.0, C, rowptr, rowfeat, Z, lab, opt)
    for t in range(nD):
        r = rows[t]
        slot_rows[sl, t] = r
        slot_mark[sl, r] = 1
        mark[r] = 0
    slot_len[sl] = nD
    slot_age[sl] = slot_age[n_slots]
    return sl


@njit(cache=True, nogil=True)
def has_fc_flag(opt):
    return opt[O_HAS_FCOST] != 0


@njit(cache=True, nogil=True, fastmath=True)
def _scan_misclassification(C, i, L, R, K, minl, pen, scratch):
    """Best single split of each child of root split i for plain misclassification (the hot loop, written
    class by class over contiguous rows so that it vectorises)."""
    m = C.shape[1]
    tA, mA, tB, mB, tC, mC, tD, mD = (scratch[0], scratch[1], scratch[2], scratch[3], scratch[4], scratch[5],
                                      scratch[6], scratch[7])
    for j in range(m):
        tA[j] = 0.0
        mA[j] = 0.0
        tB[j] = 0.0
        mB[j] = 0.0
        tC[j] = 0.0
        mC[j] = 0.0
        tD[j] = 0.0
        mD[j] = 0.0
    for k in range(K):
        row = C[k, i]
        Ck = C[k]
        Rk = R[k]
        Lk = L[k]
        for j in range(m):
            a = row[j]
            b = Rk - a
            c = Ck[j, j] - a
            e = Lk - c
            tA[j] += a
            tB[j] += b
            tC[j] += c
            tD[j] += e
            mA[j] = a if a > mA[j] else mA[j]
            mB[j] = b if b > mB[j] else mB[j]
            mC[j] = c if c > mC[j] else mC[j]
            mD[j] = e if e > mD[j] else mD[j]
    bL, jL, bR, jR = INF, -1, INF, -1
    for j in range(m):
        if j == i:
            continue
        if tA[j] >= minl and tB[j] >= minl:
            cr = tA[j] - mA[j] + tB[j] - mB[j]
            if cr < bR:
                bR, jR = cr, j
        if tC[j] >= minl and tD[j] >= minl:
            cl = tC[j] - mC[j] + tD[j] - mD[j]
            if cl < bL:
                bL, jL = cl, j
    return bL + pen, jL, bR + pen, jR


@njit(cache=True, nogil=True, fastmath=True)
def _scan_squared(C, i, L, R, minl, pen, scratch, cidx):
    """Best single split of each child of root split i for squared error (statistics [w, wy, wy^2], rows
    counted by the weight, or by column ``cidx`` when weights are not all 1)."""
    m = C.shape[1]
    cr = scratch[0]
    cl = scratch[1]
    C0, C1, C2, Cn = C[0], C[1], C[2], C[cidx]
    for j in range(m):
        a0 = C0[i, j]
        a1 = C1[i, j]
        a2 = C2[i, j]
        b0 = R[0] - a0
        b1 = R[1] - a1
        b2 = R[2] - a2
        c0 = C0[j, j] - a0
        c1 = C1[j, j] - a1
        c2 = C2[j, j] - a2
        e0 = L[0] - c0
        e1 = L[1] - c1
        e2 = L[2] - c2
        na = Cn[i, j]
        nb = R[cidx] - na
        nc = Cn[j, j] - na
        ne = L[cidx] - nc
        cr[j] = sq_loss3(a0, a1, a2) + sq_loss3(b0, b1, b2) if (na >= minl and nb >= minl) else INF
        cl[j] = sq_loss3(c0, c1, c2) + sq_loss3(e0, e1, e2) if (nc >= minl and ne >= minl) else INF
    bL, jL, bR, jR = INF, -1, INF, -1
    for j in range(m):
        if j == i:
            continue
        if cr[j] < bR:
            bR, jR = cr[j], j
        if cl[j] < bL:
            bL, jL = cl[j], j
    return bL + pen, jL, bR + pen, jR


@njit(cache=True, nogil=True, inline="always")
def _child_cost(A, B, kind, K, M, pen, minl, opt, has_fc, W, j, i, blk_cnt, grp_cnt, fcost, fdisc, fblock, fgroup):
    """Cost of a child split on feature j into statistics A and B (inf when a leaf is under the minimum size), with
    j's feature cost below root feature i weighted by W."""
    if _count(A, opt) < minl or _count(B, opt) < minl:
        return INF
    c = leaf_cost(A, kind, K, M) + leaf_cost(B, kind, K, M) + pen
    if has_fc:
        c += W * _feature_cost(j, i, blk_cnt, grp_cnt, fcost, fdisc, fblock, fgroup)
    return c


@njit(cache=True, nogil=True)
def _depth_two(rows, nD, kd, kb, blk_cnt, grp_cnt, data, task, ws, opt, dset, br, stats, stop):
    """Optimal trees of depth <= 2 with 1, 2 and 3 branching nodes from pair frequency counts; caches the
    entries (D, 1, 1), (D, 2, 2), (D, 2, 3) as kind-2 entries (each holds its whole tree). A ``stop`` seen
    during the counts or the scan returns +inf and caches nothing."""
    kind, K, M, pen, fcost, fdisc, fblock, fgroup = task
    stats[N_D2_CALLS] += 1
    sl = _frequency_counts(rows, nD, data, ws, opt, stats, stop)
    if sl < 0:
        return INF
    C = ws[0][sl]
    SA = C.shape[0]
    m = C.shape[1]
    scratch = ws[7]
    for s in range(SA):          # mirror the counted upper triangle: the scan then reads contiguous rows
        Cs = C[s]
        for a in range(m):
            for b in range(a + 1, m):
                Cs[b, a] = Cs[a, b]
    fast = kind == 0 and not opt[O_HAS_COUNT] and not has_fc_flag(opt)
    fastsq = kind == 2 and not has_fc_flag(opt)
    cidx = opt[O_S] if opt[O_HAS_COUNT] else 0
    tot = np.empty(SA)
    _stats_of(rows, nD, data[3], opt, tot)
    L = np.empty(SA)
    R = np.empty(SA)
    A = np.empty(SA)
    B = np.empty(SA)
    minl = max(1, opt[O_MINLEAF])
    has_fc = opt[O_HAS_FCOST]
    leafD = leaf_cost(tot, kind, K, M) if _count(tot, opt) >= opt[O_MINLEAF] else INF
    # best per budget: cost, root, left child split, right child split
    b1, r1 = leafD, -1
    b2, r2, l2, q2 = leafD, -1, -1, -1
    b3, r3, l3, q3 = leafD, -1, -1, -1
    WD = _weight(tot, opt)
    for i in range(m):
        if stop[0] != 0:
            return INF
        for s in range(SA):
            R[s] = C[s, i, i]
            L[s] = tot[s] - R[s]
        nR = _count(R, opt)
        nL = _count(L, opt)
        if nR < minl or nL < minl:
            continue
        g = pen
        if has_fc:
            g += WD * _feature_cost(i, _no_extra(), blk_cnt, grp_cnt, fcost, fdisc, fblock, fgroup)
        leafL = leaf_cost(L, kind, K, M)
        leafR = leaf_cost(R, kind, K, M)
        c1 = leafL + leafR + g
        if c1 < b1:
            b1, r1 = c1, i
        if b3 <= g and b2 <= g:
            continue
        bL, jL, bR, jR = INF, -1, INF, -1
        WL = _weight(L, opt)
        WR = _weight(R, opt)
        if fast:
            bL, jL, bR, jR = _scan_misclassification(C, i, L, R, K, minl, pen, scratch)
        elif fastsq:
            bL, jL, bR, jR = _scan_squared(C, i, L, R, minl, pen, scratch, cidx)
        for j in range(m):
            if fast or fastsq:
                break
            if j == i:
                continue
            a = i
            b = j
            # right side (x_i = 1): A = x_i & x_j, B = x_i & not x_j
            for s in range(SA):
                A[s] = C[s, a, b]
                B[s] = R[s] - A[s]
            cr = _child_cost(A, B, kind, K, M, pen, minl, opt, has_fc, WR, j, i, blk_cnt, grp_cnt, fcost, fdisc, fblock,
                             fgroup)
            if cr < bR:
                bR, jR = cr, j
            # left side (x_i = 0): A = not x_i & x_j, B = not x_i & not x_j
            for s in range(SA):
                A[s] = C[s, j, j] - C[s, a, b]
                B[s] = L[s] - A[s]
            cl = _child_cost(A, B, kind, K, M, pen, minl, opt, has_fc, WL, j, i, blk_cnt, grp_cnt, fcost, fdisc, fblock,
                             fgroup)
            if cl < bL:
                bL, jL = cl, j
        # at most two branching nodes: the root and one child
        if bL + leafR + g < b2:
            b2, r2, l2, q2 = bL + leafR + g, i, jL, -1
        if leafL + bR + g < b2:
            b2, r2, l2, q2 = leafL + bR + g, i, -1, jR
        if c1 < b2:
            b2, r2, l2, q2 = c1, i, -1, -1
        # three: each child splits or not
        uL, kL = (bL, jL) if bL < leafL else (leafL, -1)
        uR, kR = (bR, jR) if bR < leafR else (leafR, -1)
        if uL + uR + g < b3:
            b3, r3, l3, q3 = uL + uR + g, i, kL, kR
    if b2 > b1:
        b2, r2, l2, q2 = b1, r1, -1, -1
    if b3 > b2:
        b3, r3, l3, q3 = b2, r2, l2, q2
    hd1, hd2 = kd[0], kd[1]
    hb1, hb2 = kb[0], kb[1]
    _store(dset, br, _key(hd1, hd2, 1, 1), _key(hb1, hb2, 1, 1), _entry(b1, b1, r1, 0, -1, -1, 2), opt)
    _store(dset, br, _key(hd1, hd2, 2, 2), _key(hb1, hb2, 2, 2), _entry(b2, b2, r2, 0, l2, q2, 2), opt)
    _store(dset, br, _key(hd1, hd2, 2, 3), _key(hb1, hb2, 2, 3), _entry(b3, b3, r3, 0, l3, q3, 2), opt)
    d, n = kd[2], kd[3]
    if d == 1:
        return b1
    if n == 2:
        return b2
    return b3


def _guard_cache() -> None:
    """The squared loss and the engine's cache and leaf costs are compiled in from other files: drop this module's
    cache when any of them changed (see :func:`opttrees.jit.fresh_cache`)."""
    from ..jit import guard_cache

    guard_cache(__name__)   # the files: opttrees/kernel_modules.py


_guard_cache()
