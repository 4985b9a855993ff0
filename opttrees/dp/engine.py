"""The STreeD search in numba: depth- and node-limited optimal trees over a binary feature matrix.

Why numba: the search is a recursion over (data subset, depth, node budget) with caching and bounds; the
work per subproblem (splitting the rows, counting pairs of features) is loops over rows and features that
cannot be vectorised without materialising one array per candidate split.

Conventions (shared with :mod:`opttrees.dp.api`):

- binary column ``f`` sends a row **left when x_f = 0 and right when x_f = 1** (the paper's "satisfy -> right");
- ``d`` counts branching levels (depth 0 = one leaf); ``n`` is a limit on branching nodes; the subproblem
  ``T(D, d, n)`` is the best tree with depth <= d and at most n branching nodes (a leaf included);
- costs are raw (unnormalised): leaf losses, plus ``pen`` (= alpha * L̂) and the feature cost per split, so
  comparisons equal comparisons of the normalised objective;
- a split is only considered when both children hold at least ``max(1, min_samples_leaf)`` rows (a split
  with an empty side never beats the leaf, since every split costs >= 0).

Leaf costs work on summed per-row statistics ``Z`` (n, S): kind 0 misclassification (``Z`` one-hot weighted
class indicators), kind 1 a misclassification cost matrix ``M[true, predicted]`` (same ``Z``), kind 2 squared
error ([w, w*y, w*y^2]). A summed statistic is all a leaf needs, which is what makes the depth-two solver
possible: it counts the statistics of every pair of features once (frequency counts, updated incrementally
from the previous call's counts, as in MurTree) and evaluates every depth-two tree by arithmetic on them.

Search (the paper's Algorithm 1, totally ordered case): ``search`` returns the optimum of ``T(D, d, n)`` when
it is below ``ub`` and +inf otherwise; an optimum is cached as such, a failure caches ``ub`` as a lower
bound. Caches are numba dicts keyed by a 128-bit Zobrist hash of the row set (dataset caching) or of the set
of branching literals on the path (branch caching), plus (d, n). Reading each cache can be switched off;
one of them is always written so that the optimal tree can be rebuilt. Lower bounds come from the caches and
from the similarity bound (a recently solved subset D' bounds T(D) by T(D') minus the worst contribution of
the rows of D' missing from D). The recursion runs on an explicit stack because numba segfaults when it
loads a cached *recursive* function, and caching (``cache=True``) is what keeps the compile to one time.
"""
from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.typed import Dict

from ..heuristics.kernels.losses import sq_loss3

INF = np.inf

#: entry = (lower bound, optimal cost or inf, feature (-1 leaf), left node budget, left child split,
#:          right child split, kind: 0 bound only, 1 optimal (children in the cache), 2 optimal depth-two tree)
ENTRY = types.Tuple((types.float64, types.float64, types.int64, types.int64, types.int64, types.int64, types.int64))
KEY = types.Tuple((types.uint64, types.uint64, types.int64, types.int64))

# counters (the ``stats`` array)
N_SUBPROBLEMS, N_CACHE_HITS, N_D2_CALLS, N_BOUND_PRUNES, N_D2_INCREMENTAL, N_SIM_PRUNES = range(6)
N_COUNTERS = 8

# option flags (the ``opt`` int array)
O_USE_DATASET, O_USE_BRANCH, O_USE_D2, O_USE_UB, O_USE_LB, O_USE_SIM, O_MINLEAF, O_KIND, O_K, O_HAS_FCOST, \
    O_HAS_COUNT, O_ONEHOT, O_S = range(13)
N_OPTS = 16


@njit(cache=True)
def new_cache():
    return Dict.empty(KEY, ENTRY)


@njit(cache=True)
def cache_entries(dset, br):
    """Entries of both caches: ``len()`` of a typed Dict called from Python compiles numba's own helper in every
    process (it is never cached on disk), this kernel is."""
    return len(dset) + len(br)


@njit(cache=True, nogil=True)
def leaf_cost(v, kind, K, M):
    """Best constant leaf's raw loss for the summed statistics ``v``."""
    if kind == 0:
        tot = 0.0
        mx = 0.0
        for k in range(K):
            tot += v[k]
            if v[k] > mx:
                mx = v[k]
        r = tot - mx
        return r if r > 0.0 else 0.0
    if kind == 1:
        best = INF
        for kh in range(K):
            c = 0.0
            for k in range(K):
                c += v[k] * M[k, kh]
            if c < best:
                best = c
        return best
    return sq_loss3(v[0], v[1], v[2])


@njit(cache=True, nogil=True)
def _count(v, opt):
    """Number of rows behind the statistics ``v`` (the count column, or the weight when weights are 1)."""
    if opt[O_HAS_COUNT]:
        return v[opt[O_S]]
    return _weight(v, opt)


@njit(cache=True, nogil=True)
def _weight(v, opt):
    """Total sample weight behind ``v`` (what a feature cost is multiplied by)."""
    if opt[O_KIND] == 2:
        return v[0]
    t = 0.0
    for k in range(opt[O_K]):
        t += v[k]
    return t


@njit(cache=True, nogil=True)
def _feature_cost(f, extra, blk_cnt, grp_cnt, fcost, fdisc, fblock, fgroup):
    """m(F, f): free when a column of the same original feature was tested on the path (or is ``extra``),
    the group discount when a feature of its group was, the full cost otherwise."""
    b = fblock[f]
    if blk_cnt[b] > 0 or (extra >= 0 and fblock[extra] == b):
        return 0.0
    g = fgroup[f]
    if g >= 0 and (grp_cnt[g] > 0 or (extra >= 0 and fgroup[extra] == g)):
        return fdisc[f]
    return fcost[f]


@njit(cache=True, nogil=True)
def _norm(d, n):
    full = (1 << d) - 1
    if n > full:
        n = full
    if d > n:
        d = n
    return d, n


@njit(cache=True, nogil=True)
def _lookup(dset, br, kd, kb, opt):
    """(lower bound, optimal cost or inf, found optimal entry) from the caches that are switched on."""
    lb = 0.0
    if opt[O_USE_DATASET] and kd in dset:
        e = dset[kd]
        if e[6] > 0:
            return e[1], e[1], True
        if e[0] > lb:
            lb = e[0]
    if opt[O_USE_BRANCH] and kb in br:
        e = br[kb]
        if e[6] > 0:
            return e[1], e[1], True
        if e[0] > lb:
            lb = e[0]
    return lb, INF, False


# Cache keys and entries built with fixed element types (uint64 x2, int64 x2; float64 x2, int64 x5): a literal int
# in a tuple (or as an argument) is typed as that literal, and _store, _set_root and _feature_cost compiled once
# per literal combination (8, 3 and 2 signatures) before these helpers.
@njit(cache=True, nogil=True, inline="always")
def _key(h1, h2, d, n):
    return (h1, h2, np.int64(d), np.int64(n))


@njit(cache=True, nogil=True, inline="always")
def _entry(lb, ub, f, nl, left, right, kind):
    return (np.float64(lb), np.float64(ub), np.int64(f), np.int64(nl), np.int64(left), np.int64(right),
            np.int64(kind))


@njit(cache=True, nogil=True, inline="always")
def _no_extra():   # "no extra feature" (-1) for _feature_cost, as an int64 rather than a literal
    return np.int64(-1)


@njit(cache=True, nogil=True)
def _store(dset, br, kd, kb, e, opt):
    if opt[O_USE_DATASET]:
        if e[6] == 0 and kd in dset:
            old = dset[kd]
            if old[6] > 0 or old[0] >= e[0]:
                pass
            else:
                dset[kd] = e
        else:
            dset[kd] = e
    if opt[O_USE_BRANCH] or not opt[O_USE_DATASET]:
        if e[6] == 0 and kb in br:
            old = br[kb]
            if old[6] > 0 or old[0] >= e[0]:
                return
        br[kb] = e


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
            if _count(A, opt) >= minl and _count(B, opt) >= minl:
                cr = leaf_cost(A, kind, K, M) + leaf_cost(B, kind, K, M) + pen
                if has_fc:
                    cr += WR * _feature_cost(j, i, blk_cnt, grp_cnt, fcost, fdisc, fblock, fgroup)
                if cr < bR:
                    bR, jR = cr, j
            # left side (x_i = 0): A = not x_i & x_j, B = not x_i & not x_j
            for s in range(SA):
                A[s] = C[s, j, j] - C[s, a, b]
                B[s] = L[s] - A[s]
            if _count(A, opt) >= minl and _count(B, opt) >= minl:
                cl = leaf_cost(A, kind, K, M) + leaf_cost(B, kind, K, M) + pen
                if has_fc:
                    cl += WL * _feature_cost(j, i, blk_cnt, grp_cnt, fcost, fdisc, fblock, fgroup)
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


@njit(cache=True, nogil=True)
def _split(rows, nD, f, XT, outL, outR, rh1, rh2):
    """Rows with x_f = 0 to outL, x_f = 1 to outR; returns (nL, nR, hashes of L, hashes of R)."""
    nL = 0
    nR = 0
    l1 = np.uint64(0)
    l2 = np.uint64(0)
    r1 = np.uint64(0)
    r2 = np.uint64(0)
    for t in range(nD):
        r = rows[t]
        if XT[f, r]:
            outR[nR] = r
            nR += 1
            r1 += rh1[r]
            r2 += rh2[r]
        else:
            outL[nL] = r
            nL += 1
            l1 += rh1[r]
            l2 += rh2[r]
    return nL, nR, l1, l2, r1, r2


@njit(cache=True, nogil=True)
def _child_lb(hd1, hd2, hb1, hb2, d, n, nrows, dset, br, opt):
    d, n = _norm(d, n)
    if d == 0 or n == 0 or not opt[O_USE_LB] or nrows == 0:
        return 0.0
    lb, _, _ = _lookup(dset, br, (hd1, hd2, d, n), (hb1, hb2, d, n), opt)
    return lb


@njit(cache=True, nogil=True)
def _similarity_lb(rows, nD, d, n, ws):
    """The similarity bound: a dataset D' solved before at (d, n) with optimum (or lower bound) v gives
    T(D) >= v - sum of the worst contributions of the rows of D' missing from D (rows added to D' can only
    raise the cost). Only used for context-independent tasks without min_samples_leaf (see api)."""
    worst, srows, slen, sval, mark = ws[8], ws[9], ws[10], ws[11], ws[5]
    if n >= sval.shape[2]:
        return 0.0
    best = 0.0
    any_slot = False
    for sl in range(srows.shape[1]):
        v = sval[d, sl, n]
        if slen[d, sl] > 0 and v < INF and v > best:
            any_slot = True
    if not any_slot:
        return 0.0
    for t in range(nD):
        mark[rows[t]] = 1
    for sl in range(srows.shape[1]):
        v = sval[d, sl, n]
        if slen[d, sl] <= 0 or not v < INF or v <= best:
            continue
        removed = 0.0
        for t in range(slen[d, sl]):
            r = srows[d, sl, t]
            if mark[r] == 0:
                removed += worst[r]
                if v - removed <= best:
                    break
        if v - removed > best:
            best = v - removed
    for t in range(nD):
        mark[rows[t]] = 0
    return best


@njit(cache=True, nogil=True)
def _similarity_store(rows, nD, d, n, value, h1, h2, ws):
    """Remember that T(D, d, n) >= value (the optimum or a proven bound) for later similarity bounds."""
    srows, slen, sval, shash, snext = ws[9], ws[10], ws[11], ws[12], ws[13]
    if n >= sval.shape[2] or not value < INF:
        return
    ns = srows.shape[1]
    for sl in range(ns):
        if slen[d, sl] == nD and shash[d, sl, 0] == h1 and shash[d, sl, 1] == h2:
            if value > sval[d, sl, n] or not sval[d, sl, n] < INF:
                sval[d, sl, n] = value
            return
    sl = snext[d]
    snext[d] = (sl + 1) % ns
    for t in range(nD):
        srows[d, sl, t] = rows[t]
    slen[d, sl] = nD
    shash[d, sl, 0] = h1
    shash[d, sl, 1] = h2
    for b in range(sval.shape[2]):
        sval[d, sl, b] = INF
    sval[d, sl, n] = value


@njit(cache=True, nogil=True)
def _get_entry(dset, br, kd, kb, opt):
    if opt[O_USE_DATASET] and kd in dset:
        e = dset[kd]
        if e[6] > 0:
            return e
    if kb in br:
        e = br[kb]
        if e[6] > 0:
            return e
    return (0.0, INF, -1, 0, -1, -1, -1)


@njit(cache=True, nogil=True)
def _set_root(root, e):
    root[0] = e[1]
    root[1] = e[2]
    root[2] = e[3]
    root[4] = e[4]
    root[5] = e[5]
    root[6] = e[6]


@njit(cache=True, nogil=True)
def search(nD0, d0, n0, ub0, hb0, hd0, blk_cnt, grp_cnt, data, task, ws, hashes, opt, dset, br, stats, stop, root):
    """Optimum of T(D, d0, n0) for the rows ``ws[6][0, 0, :nD0]`` if it is < ub0, else +inf.

    The paper's recursion run with an explicit stack (numba cannot load a cached recursive function): frame
    ``lv`` solves rows ``ws[6][lv, side]``; its candidate splits go to ``ws[6][lv + 1]``. The best root
    decision is written to ``root`` = [cost, feature, left budget, features finished, left child split,
    right child split, entry kind]. A search cut short by ``stop[0]`` caches nothing it could not prove.
    """
    XT, rowptr, rowfeat, Z, lab = data
    kind, K, M, pen, fcost, fdisc, fblock, fgroup = task
    rh1, rh2, lh1, lh2 = hashes
    bufs = ws[6]
    L = bufs.shape[0]
    m = XT.shape[0]
    SA = ws[0].shape[1]
    minl = max(1, opt[O_MINLEAF])
    use_ub = opt[O_USE_UB] != 0
    has_fc = opt[O_HAS_FCOST] != 0
    # frame state
    Fside = np.zeros(L, np.int64)
    FnD = np.zeros(L, np.int64)
    Fd = np.zeros(L, np.int64)
    Fn = np.zeros(L, np.int64)
    Fub = np.zeros(L)
    Fh = np.zeros((L, 4), np.uint64)         # hb1, hb2, hd1, hd2
    Fc = np.zeros((L, 8), np.uint64)         # child hashes: left (branch 2, data 2), right (branch 2, data 2)
    Fleaf = np.zeros(L)
    Fbest = np.zeros(L)
    Fbestf = np.zeros(L, np.int64)
    Fbestnl = np.zeros(L, np.int64)
    Fcur = np.zeros(L)
    Ff = np.zeros(L, np.int64)
    FnL = np.zeros(L, np.int64)
    Flo = np.zeros(L, np.int64)
    Fhi = np.zeros(L, np.int64)
    Fnl = np.zeros(L, np.int64)
    Fnr = np.zeros(L, np.int64)
    Fg = np.zeros(L)
    FlbR = np.zeros(L)
    FcL = np.zeros(L)
    FWD = np.zeros(L)
    Fphase = np.zeros(L, np.int64)
    tot = np.empty(SA)
    lv = 0
    FnD[0] = nD0
    Fd[0] = d0
    Fn[0] = n0
    Fub[0] = ub0
    Fh[0, 0] = hb0[0]
    Fh[0, 1] = hb0[1]
    Fh[0, 2] = hd0[0]
    Fh[0, 3] = hd0[1]
    ENTER, NEXT, FINISH, RETURN = 0, 1, 2, 3
    mode = ENTER
    ret = INF
    stopped = False
    while True:
        if mode == ENTER:
            rows = bufs[lv, Fside[lv]]
            nD = FnD[lv]
            ub = Fub[lv]
            stats[N_SUBPROBLEMS] += 1
            _stats_of(rows, nD, Z, opt, tot)
            leafc = leaf_cost(tot, kind, K, M) if _count(tot, opt) >= opt[O_MINLEAF] else INF
            d, n = _norm(Fd[lv], Fn[lv])
            Fd[lv] = d
            Fn[lv] = n
            Fleaf[lv] = leafc
            if lv == 0:
                _set_root(root, _entry(leafc, leafc, -1, 0, -1, -1, 1))
                root[3] = 0.0
            if d == 0:
                if lv == 0:
                    root[3] = m
                ret = leafc if leafc < ub else INF
                mode = RETURN
                continue
            kd = (Fh[lv, 2], Fh[lv, 3], d, n)
            kb = (Fh[lv, 0], Fh[lv, 1], d, n)
            lb, cached, found = _lookup(dset, br, kd, kb, opt)
            if found:
                stats[N_CACHE_HITS] += 1
                if lv == 0:
                    _set_root(root, _get_entry(dset, br, kd, kb, opt))
                    root[3] = m
                ret = cached if cached < ub else INF
                mode = RETURN
                continue
            if not opt[O_USE_LB]:
                lb = 0.0
            if lb >= ub:
                stats[N_BOUND_PRUNES] += 1
                if lv == 0:
                    root[3] = m
                ret = INF
                mode = RETURN
                continue
            if opt[O_USE_SIM] and lv > 0:
                slb = _similarity_lb(rows, nD, d, n, ws)
                if slb >= ub:
                    stats[N_SIM_PRUNES] += 1
                    _store(dset, br, kd, kb, _entry(slb, INF, -1, 0, -1, -1, 0), opt)
                    ret = INF
                    mode = RETURN
                    continue
            if opt[O_USE_D2] and d <= 2:
                c = _depth_two(rows, nD, kd, kb, blk_cnt, grp_cnt, data, task, ws, opt, dset, br, stats, stop)
                if stop[0] != 0:
                    stopped = True
                    ret = INF
                    mode = RETURN
                    continue
                if opt[O_USE_SIM]:
                    for b in range(1, 4):
                        e = _get_entry(dset, br, (kd[0], kd[1], 1 if b == 1 else 2, b),
                                       (kb[0], kb[1], 1 if b == 1 else 2, b), opt)
                        _similarity_store(rows, nD, 1 if b == 1 else 2, b, e[1], kd[0], kd[1], ws)
                if lv == 0:
                    _set_root(root, _get_entry(dset, br, kd, kb, opt))
                    root[3] = m
                ret = c if c < ub else INF
                mode = RETURN
                continue
            Fbest[lv] = leafc if leafc < ub else INF
            Fbestf[lv] = -1
            Fbestnl[lv] = 0
            Fcur[lv] = min(ub, leafc) if use_ub else ub
            FWD[lv] = _weight(tot, opt) if has_fc else 0.0
            half = (1 << (d - 1)) - 1
            lo = n - 1 - half
            Flo[lv] = lo if lo > 0 else 0
            Fhi[lv] = n - 1 if n - 1 < half else half
            Ff[lv] = -1
            FnL[lv] = Fhi[lv] + 1            # forces the move to feature 0
            mode = NEXT
            continue
        if mode == NEXT:
            # the next (feature, left budget) whose bound does not prune it; its left child is pushed
            d = Fd[lv]
            n = Fn[lv]
            pushed = False
            while True:
                if stop[0] != 0:
                    stopped = True
                    break
                if FnL[lv] > Fhi[lv]:
                    f = Ff[lv] + 1
                    if lv == 0:
                        _set_root(root, _entry(Fbest[0], Fbest[0], Fbestf[0], Fbestnl[0], -1, -1, 1))
                        root[3] = f
                    if f >= m:
                        break
                    Ff[lv] = f
                    FnL[lv] = Flo[lv]
                    nl, nr, l1, l2, r1, r2 = _split(bufs[lv, Fside[lv]], FnD[lv], f, XT, bufs[lv + 1, 0],
                                                    bufs[lv + 1, 1], rh1, rh2)
                    if nl < minl or nr < minl:
                        FnL[lv] = Fhi[lv] + 1
                        continue
                    Fnl[lv] = nl
                    Fnr[lv] = nr
                    Fc[lv, 0] = Fh[lv, 0] + lh1[f, 0]
                    Fc[lv, 1] = Fh[lv, 1] + lh2[f, 0]
                    Fc[lv, 2] = l1
                    Fc[lv, 3] = l2
                    Fc[lv, 4] = Fh[lv, 0] + lh1[f, 1]
                    Fc[lv, 5] = Fh[lv, 1] + lh2[f, 1]
                    Fc[lv, 6] = r1
                    Fc[lv, 7] = r2
                    g = pen
                    if has_fc:
                        g += FWD[lv] * _feature_cost(f, _no_extra(), blk_cnt, grp_cnt, fcost, fdisc, fblock, fgroup)
                    Fg[lv] = g
                f = Ff[lv]
                nL = FnL[lv]
                FnL[lv] = nL + 1
                nRb = n - 1 - nL
                lbL = _child_lb(Fc[lv, 2], Fc[lv, 3], Fc[lv, 0], Fc[lv, 1], d - 1, nL, Fnl[lv], dset, br, opt)
                lbR = _child_lb(Fc[lv, 6], Fc[lv, 7], Fc[lv, 4], Fc[lv, 5], d - 1, nRb, Fnr[lv], dset, br, opt)
                if lbL + lbR + Fg[lv] >= Fcur[lv]:
                    stats[N_BOUND_PRUNES] += 1
                    continue
                if has_fc:
                    blk_cnt[fblock[f]] += 1
                    if fgroup[f] >= 0:
                        grp_cnt[fgroup[f]] += 1
                FlbR[lv] = lbR
                Fphase[lv] = 1
                c = lv + 1
                Fside[c] = 0
                FnD[c] = Fnl[lv]
                Fd[c] = d - 1
                Fn[c] = nL
                Fub[c] = Fcur[lv] - Fg[lv] - lbR if use_ub else INF
                Fh[c, 0] = Fc[lv, 0]
                Fh[c, 1] = Fc[lv, 1]
                Fh[c, 2] = Fc[lv, 2]
                Fh[c, 3] = Fc[lv, 3]
                pushed = True
                break
            if pushed:
                lv += 1
                mode = ENTER
            else:
                mode = FINISH
            continue
        if mode == FINISH:
            best = Fbest[lv]
            if stopped:
                if lv == 0:
                    root[0] = best
                    root[1] = Fbestf[0]
                    root[2] = Fbestnl[0]
                    root[6] = 1
                ret = best
                mode = RETURN
                continue
            d = Fd[lv]
            n = Fn[lv]
            kd = (Fh[lv, 2], Fh[lv, 3], d, n)
            kb = (Fh[lv, 0], Fh[lv, 1], d, n)
            if best < Fub[lv]:
                _store(dset, br, kd, kb, _entry(best, best, Fbestf[lv], Fbestnl[lv], -1, -1, 1), opt)
            else:
                _store(dset, br, kd, kb, _entry(Fub[lv], INF, -1, 0, -1, -1, 0), opt)
            if opt[O_USE_SIM] and lv > 0:
                _similarity_store(bufs[lv, Fside[lv]], FnD[lv], d, n, min(best, Fub[lv]), kd[0], kd[1], ws)
            if lv == 0:
                _set_root(root, _entry(best, best, Fbestf[0], Fbestnl[0], -1, -1, 1))
                root[3] = m
            ret = best
            mode = RETURN
            continue
        # RETURN: hand ``ret`` to the parent frame
        if lv == 0:
            return ret
        lv -= 1
        f = Ff[lv]
        if Fphase[lv] == 1 and ret < INF and stop[0] == 0:
            FcL[lv] = ret
            Fphase[lv] = 2
            c = lv + 1
            Fside[c] = 1
            FnD[c] = Fnr[lv]
            Fd[c] = Fd[lv] - 1
            Fn[c] = Fn[lv] - 1 - (FnL[lv] - 1)
            Fub[c] = Fcur[lv] - Fg[lv] - ret if use_ub else INF
            Fh[c, 0] = Fc[lv, 4]
            Fh[c, 1] = Fc[lv, 5]
            Fh[c, 2] = Fc[lv, 6]
            Fh[c, 3] = Fc[lv, 7]
            lv += 1
            mode = ENTER
            continue
        if has_fc:
            blk_cnt[fblock[f]] -= 1
            if fgroup[f] >= 0:
                grp_cnt[fgroup[f]] -= 1
        if stop[0] != 0:
            stopped = True
            mode = FINISH
            continue
        if Fphase[lv] == 2 and ret < INF:
            cst = FcL[lv] + ret + Fg[lv]
            if cst < Fbest[lv] and cst < Fcur[lv]:
                Fbest[lv] = cst
                Fbestf[lv] = f
                Fbestnl[lv] = FnL[lv] - 1
                if use_ub:
                    Fcur[lv] = cst
        Fphase[lv] = 0
        mode = NEXT


@njit(cache=True, nogil=True)
def root_lower_bound(nD, d, n, hb1, hb2, first, data, task, ws, hashes, opt, dset, br, incumbent):
    """A valid lower bound on T(D, d, n) after a search stopped at feature ``first``: features before it were
    finished (their best is >= the incumbent); for the rest, the cached bounds of their children."""
    XT, rowptr, rowfeat, Z, lab = data
    kind, K, M, pen, fcost, fdisc, fblock, fgroup = task
    rh1, rh2, lh1, lh2 = hashes
    bufs = ws[6]
    rows = bufs[0, 0]
    d, n = _norm(d, n)
    lbv = incumbent
    m = XT.shape[0]
    minl = max(1, opt[O_MINLEAF])
    half = (1 << (d - 1)) - 1
    lo = max(0, n - 1 - half)
    hi = min(n - 1, half)
    SA = ws[0].shape[1]
    tot = np.empty(SA)
    _stats_of(rows, nD, Z, opt, tot)
    WD = _weight(tot, opt)
    blk = np.zeros(fblock.max() + 1 if fblock.size else 1, np.int64)
    grp = np.zeros(max(fgroup.max() + 1, 1) if fgroup.size else 1, np.int64)
    for f in range(first, m):
        nl, nr, l1, l2, r1, r2 = _split(rows, nD, f, XT, bufs[1, 0], bufs[1, 1], rh1, rh2)
        if nl < minl or nr < minl:
            continue
        g = pen
        if opt[O_HAS_FCOST]:
            g += WD * _feature_cost(f, _no_extra(), blk, grp, fcost, fdisc, fblock, fgroup)
        o = opt.copy()
        o[O_USE_LB] = 1
        for nL in range(lo, hi + 1):
            cL = _child_lb(l1, l2, hb1 + lh1[f, 0], hb2 + lh2[f, 0], d - 1, nL, nl, dset, br, o)
            cR = _child_lb(r1, r2, hb1 + lh1[f, 1], hb2 + lh2[f, 1], d - 1, n - 1 - nL, nr, dset, br, o)
            if opt[O_USE_SIM]:
                dl, ql = _norm(d - 1, nL)
                dr, qr = _norm(d - 1, n - 1 - nL)
                if dl > 0 and ql > 0:
                    cL = max(cL, _similarity_lb(bufs[1, 0], nl, dl, ql, ws))
                if dr > 0 and qr > 0:
                    cR = max(cR, _similarity_lb(bufs[1, 1], nr, dr, qr, ws))
            c = cL + cR + g
            if c < lbv:
                lbv = c
    return lbv




@njit(cache=True, nogil=True)
def rebuild(nD, d, n, entry, hb0, data, ws, hashes, opt, dset, br, heap_feat):
    """Write the optimal tree of T(D, d, n) (``entry``: the root's decision) into ``heap_feat`` (heap order,
    -1 = leaf) by following the cache down; returns False when an entry is missing (a bug)."""
    XT = data[0]
    rh1, rh2, lh1, lh2 = hashes
    bufs = ws[6]
    L = bufs.shape[0]
    # stack of nodes to expand: heap position, level, side, rows, depth, budget, branch hash, entry
    top = 0
    cap = 2 * L + 4
    Spos = np.zeros(cap, np.int64)
    Slv = np.zeros(cap, np.int64)
    Sside = np.zeros(cap, np.int64)
    SnD = np.zeros(cap, np.int64)
    Sd = np.zeros(cap, np.int64)
    Sn = np.zeros(cap, np.int64)
    Sh = np.zeros((cap, 2), np.uint64)
    Se = np.zeros((cap, 4), np.int64)      # feature, left budget, left split, right split
    Sk = np.zeros(cap, np.int64)           # entry kind
    Spos[0] = 0
    SnD[0] = nD
    Sd[0] = d
    Sn[0] = n
    Sh[0, 0] = hb0[0]
    Sh[0, 1] = hb0[1]
    Se[0, 0] = entry[2]
    Se[0, 1] = entry[3]
    Se[0, 2] = entry[4]
    Se[0, 3] = entry[5]
    Sk[0] = entry[6]
    top = 1
    ok = True
    while top > 0:
        top -= 1
        pos, lv, side, cnt, dd, nn = Spos[top], Slv[top], Sside[top], SnD[top], Sd[top], Sn[top]
        f = Se[top, 0]
        heap_feat[pos] = f
        if f < 0:
            continue
        if Sk[top] == 2:
            heap_feat[2 * pos + 1] = Se[top, 2]
            heap_feat[2 * pos + 2] = Se[top, 3]
            for c in (2 * pos + 1, 2 * pos + 2):
                if heap_feat[c] >= 0:
                    heap_feat[2 * c + 1] = -1
                    heap_feat[2 * c + 2] = -1
            continue
        hb1, hb2, nL = Sh[top, 0], Sh[top, 1], Se[top, 1]
        nl, nr, l1, l2, r1, r2 = _split(bufs[lv, side], cnt, f, XT, bufs[lv + 1, 0], bufs[lv + 1, 1], rh1, rh2)
        for sd in (1, 0):            # right pushed first: the left subtree is expanded (and its rows used) first
            child = 2 * pos + 1 + sd
            budget = nL if sd == 0 else nn - 1 - nL
            dc, nc = _norm(dd - 1, budget)
            heap_feat[child] = -1
            if dc == 0 or nc == 0:
                continue
            if sd == 0:
                kd = (l1, l2, dc, nc)
                kb = (hb1 + lh1[f, 0], hb2 + lh2[f, 0], dc, nc)
                cc = nl
            else:
                kd = (r1, r2, dc, nc)
                kb = (hb1 + lh1[f, 1], hb2 + lh2[f, 1], dc, nc)
                cc = nr
            e = _get_entry(dset, br, kd, kb, opt)
            if e[6] < 0:
                ok = False
                continue
            Spos[top] = child
            Slv[top] = lv + 1
            Sside[top] = sd
            SnD[top] = cc
            Sd[top] = dc
            Sn[top] = nc
            Sh[top, 0] = kb[0]
            Sh[top, 1] = kb[1]
            Se[top, 0] = e[2]
            Se[top, 1] = e[3]
            Se[top, 2] = e[4]
            Se[top, 3] = e[5]
            Sk[top] = e[6]
            top += 1
    return ok


def _guard_cache() -> None:
    """The squared loss (``sq_loss3``) is compiled in from the heuristics' kernels: drop this module's cache when
    either file changed (see :func:`opttrees.jit.fresh_cache`)."""
    from ..jit import guard_cache

    guard_cache(__name__)   # the files: opttrees/kernel_modules.py


_guard_cache()
