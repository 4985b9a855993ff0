"""Numba kernels for greedy growth and Dunn's local search (Algorithms 2.1–2.3, 3.1–3.2).

Why numba: the split scan moves one point at a time between two leaves and updates their sufficient
statistics (the thesis's incremental trick, O(K) per move); that loop is sequential and cannot be
vectorised without materialising (n, p, K) prefix arrays for every node visit.

Internal tree layout (heap order, capacity T = 2^(D+1) - 1, children of t are 2t+1 / 2t+2):

- ``ntype[t]``: 0 absent, 1 leaf, 2 parallel split, 3 hyperplane split;
- ``feat[t]``, ``thr[t]``: parallel split ``X[:, feat] < thr`` in ORIGINAL units (thr is a midpoint);
- ``coef[t]``, ``thr[t]``: hyperplane split ``coef · Xs < thr`` in SCALED [0, 1] units (converted on export).

Per-point sufficient statistics ``Z`` (n, S): one-hot weighted class indicators (S = K),
[w, w*y, w*y^2] with y centred (S = 3, squared loss) or [w, w*y, y] with y centred (S = 3, absolute loss).
Loss kinds are the named constants MISCLASSIFICATION, GINI, ENTROPY, SQUARED and ABSOLUTE below (numba
freezes module globals, so they cost nothing inside the kernels).

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
from numba.core import cgutils
from numba.core import types as nbtypes
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic, overload

LEAF, PAR, HYP = 1, 2, 3


@intrinsic
def fetch_add(typingctx, arr, idx):
    """Atomically add 1 to arr[idx] (an int64 array) and return the old value (LLVM's sequentially
    consistent atomicrmw, so every store before it is visible to a thread that sees the new value).
    numba has no atomics; the worker threads of :func:`run_restarts` take restarts from a shared counter
    with it, and mark restarts done."""
    if not (isinstance(arr, nbtypes.Array) and arr.dtype == nbtypes.int64 and isinstance(idx, nbtypes.Integer)):
        return None

    def codegen(context, builder, signature, args):
        aryty, idxty = signature.args
        ary = context.make_array(aryty)(context, builder, args[0])
        i = context.cast(builder, args[1], idxty, nbtypes.intp)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [i])
        return builder.atomic_rmw("add", ptr, context.get_constant(nbtypes.int64, 1), "seq_cst")

    return nbtypes.int64(arr, idx), codegen
MISCLASSIFICATION, GINI, ENTROPY, SQUARED, ABSOLUTE = 0, 1, 2, 3, 4  # loss kinds (ABSOLUTE: Fenwick-tree leaves)


@njit(cache=True, nogil=True)
def leaf_loss(kind, stats, L, cnt):
    if cnt[L] == 0:
        return 0.0
    S = stats.shape[1]
    if kind == SQUARED:
        w = stats[L, 0]
        if w <= 0.0:
            return 0.0
        v = stats[L, 2] - stats[L, 1] * stats[L, 1] / w
        return v if v > 0.0 else 0.0
    tot = 0.0
    for k in range(S):
        tot += stats[L, k]
    if kind == MISCLASSIFICATION:
        mx = 0.0
        for k in range(S):
            if stats[L, k] > mx:
                mx = stats[L, k]
        v = tot - mx
        return v if v > 0.0 else 0.0
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
    S = stats.shape[1]
    tot = 0.0
    for k in range(S):
        tot += stats[L, k]
    mx = 0.0
    for k in range(S):
        if stats[L, k] > mx:
            mx = stats[L, k]
    v = tot - mx
    return v if v > 0.0 else 0.0

# ---------------------------------------------------------------------------------------------------------
# Absolute loss. F = (seg, sl, posl, posu, uy, fw, fwy, top): leaf L owns slots seg[L] .. seg[L] + sl[L] - 1
# of uy / fw / fwy, holding the y-sorted points of the scan that can be in L; posl[i] / posu[i] is point i's
# slot in its lower / upper leaf. fw / fwy are per-leaf Fenwick trees of the present points' w and w*y;
# top[L] is the largest power of two <= sl[L].

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
    w = stats[L, 0]
    if w <= 0.0:
        return 0.0
    v = stats[L, 2] - stats[L, 1] * stats[L, 1] / w
    return v if v > 0.0 else 0.0


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


@njit(cache=True, nogil=True)
def subtree_leaves(ntype, t, out, start):
    """Append the leaf positions of the subtree at t to out[start:]; return the new end."""
    stack = np.empty(64, np.int64)
    stack[0] = t
    sp = 1
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
    stack = np.empty(64, np.int64)
    stack[0] = t
    sp = 1
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
            stack[sp] = 2 * u + 1
            stack[sp + 1] = 2 * u + 2
            sp += 2
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
def place_init(I, nI, low_d, up_d, fixlow, Z, kind, leaves, nl, stats, cnt, F):
    """Zero the stats of ``leaves`` and put every point of I in its lower leaf if fixlow[i] else its upper leaf."""
    S = Z.shape[1]
    for a in range(nl):
        L = leaves[a]
        cnt[L] = 0
        for k in range(S):
            stats[L, k] = 0.0
        if kind == ABSOLUTE:
            fen_clear(F, L)
    for r in range(nI):
        i = I[r]
        d = low_d[i] if fixlow[i] else up_d[i]
        cnt[d] += 1
        for k in range(S):
            stats[d, k] += Z[i, k]
        if kind == ABSOLUTE:
            fen_add(F, d, F[2][i] if fixlow[i] else F[3][i], Z[i, 0])


@njit(cache=True, nogil=True, inline="always")
def move_point(Z, stats, cnt, i, u, l):
    """Move point i from leaf u to leaf l in the counts and sufficient statistics (an emptied leaf is zeroed)."""
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
        bu = 1 if cnt[u] < nmin else 0
        bl = 1 if cnt[l] < nmin else 0
        move_point(Z, stats, cnt, i, u, l)
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
        cu = cnt[u]
        cl = cnt[l]
        bu = 1 if cu < nmin else 0
        bl = 1 if cl < nmin else 0
        cu -= 1
        cl += 1
        cnt[u] = cu
        cnt[l] = cl
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
        cu = cnt[u]
        cl = cnt[l]
        bu = 1 if cu < nmin else 0
        bl = 1 if cl < nmin else 0
        cu -= 1
        cl += 1
        cnt[u] = cu
        cnt[l] = cl
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
        bu = 1 if cnt[u] < nmin else 0
        bl = 1 if cnt[l] < nmin else 0
        move_point(Z, stats, cnt, i, u, l)
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


@njit(cache=True, nogil=True)
def place_loss(I, nI, dest, Z, kind, nmin, leaves, nl, stats, cnt):
    """Loss of routing every point of I to dest[i]; inf if a leaf in ``leaves`` is below nmin."""
    S = Z.shape[1]
    for a in range(nl):
        L = leaves[a]
        cnt[L] = 0
        for k in range(S):
            stats[L, k] = 0.0
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


@njit(cache=True, nogil=True)
def safe_mid(a, b):
    """Midpoint m with a < m <= b (a < b), so 'x < m' separates a from b exactly."""
    m = 0.5 * (a + b)
    if not (m > a) or m > b:
        m = b
    return m


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
                o = np.argsort(keys[:m], kind="mergesort")
                mv = movers[:m].copy()
                kv = keys[:m].copy()
                for r in range(m):
                    movers[r] = mv[o[r]]
                    vals[r] = kv[o[r]]
                # merge near-equal critical values so cuts keep a usable margin
                for r in range(1, m):
                    if vals[r] - vals[r - 1] <= 1e-9 * (1.0 + abs(vals[r])):
                        vals[r] = vals[r - 1]
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
                o = np.argsort(U[:nI], kind="mergesort")
                mv = movers[:nI].copy()
                kv = U[:nI].copy()
                for r in range(nI):
                    movers[r] = mv[o[r]]
                    vals[r] = kv[o[r]]
                for r in range(1, nI):
                    if vals[r] - vals[r - 1] <= 1e-9 * (1.0 + abs(vals[r])):
                        vals[r] = vals[r - 1]
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


@njit(cache=True, nogil=True)
def tree_objective_raw(ntype, feat, thr, coef, X, Xs, Z, kind, nmin, pen, leafpos, stats, cnt, leaves, XT, rows, tmp):
    """(raw objective, feasible) of the whole tree, every row routed from scratch into ``leafpos``. XT: X
    transposed (:func:`search_arrays`); rows, tmp: n-int64 scratch (a fresh transpose and two arrays per
    call were two thirds of its time, which was 1.5% of a depth-6 search on 10,000 rows)."""
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
def grow(ntype, feat, thr, coef, X, Xs, grp, orderT, grpT, Z, featok, kind, D, nmin, mtry, tol, randsplit):
    """Greedy top-down growth (CART-like) to depth D; mtry < #features draws a random subset per split.

    randsplit: instead of the best split, a uniformly random feasible cut on a random feature (a fully
    random start tree, used for part of the restarts to diversify starts when p is tiny).
    """
    grow_ranked(ntype, feat, thr, coef, X, Xs, grp, orderT, grpT, ranks(orderT), Z, featok, kind, D, nmin, mtry, tol,
                randsplit, np.zeros((0, 5), np.int64), np.zeros((2, 0), np.uint64))


@njit(cache=True, nogil=True)
def grow_ranked(ntype, feat, thr, coef, X, Xs, grp, orderT, grpT, rankT, Z, featok, kind, D, nmin, mtry, tol,
                randsplit, memo, rh):
    """:func:`grow` with the rank table (:func:`ranks`) computed once by the caller.

    memo: a move-cache table (or an empty one) that keeps each two-class split scan's result under (the
    node's rows, the feature), with rh the rows' hash words (:func:`row_hashes`). Why: every start tree of
    a call splits the same root, and the top splits repeat across restarts (the best split of the same
    rows on the same feature, whichever random subset holds it), so most top-level scans are found there.
    """
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
    inI = np.zeros(n, np.bool_)
    I = np.empty(n, np.int64)
    low_d = np.empty(n, np.int64)
    up_d = np.empty(n, np.int64)
    fixlow = np.zeros(n, np.bool_)
    movers = np.empty(n, np.int64)
    vals = np.empty(n)
    stats = np.zeros((T, S))
    cnt = np.zeros(T, np.int64)
    leaves = np.empty(2, np.int64)
    leaf1 = np.empty(1, np.int64)
    lloss = np.zeros(T)
    bstats = np.zeros((T, S))
    bcnt = np.zeros(T, np.int64)
    blloss = np.zeros(T)
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
                th = safe_mid(v, v2)
                ntype[t] = PAR
                feat[t] = j
                thr[t] = th
                ntype[2 * t + 1] = LEAF
                ntype[2 * t + 2] = LEAF
                split_block(rows, bs, be, t, X, j, th, rtmp)
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
            ntype[t] = PAR
            feat[t] = j
            thr[t] = th
            ntype[2 * t + 1] = LEAF
            ntype[2 * t + 2] = LEAF
            split_block(rows, bs, be, t, X, j, th, rtmp)


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


# ---------------------------------------------------------------------------------------------------------
# Move cache. With parallel splits the outcome of a node visit (which of the thesis's moves, if any, wins)
# is a function of the node's row set and of the subtree below it only: the split scan, the promotions
# and the acceptance test read nothing else (no random numbers). Restarts keep re-visiting the same
# (row set, subtree) pairs, so all the worker threads of one call share a table from a 128-bit key of that
# pair to the decision. A hit applies the same move the full visit would have chosen, so every restart's
# trajectory and result are unchanged (keys are two independent 64-bit hashes), whichever thread filled the
# entry and whether or not an entry was lost. Hyperplane visits draw random hyperplanes, so they are never
# cached.
#
# The table (:func:`move_cache`) is lock-free: numba has no locks, and a lock per visit would cost more
# than it saves. Each slot holds five words (key 1, key 2, move and feature, threshold bits, check), the
# check a hash of the other four. A reader loads the words once and accepts them only if the check and the
# key match, so a slot half-written by another thread reads as a miss (64-bit stores are atomic on every
# platform numba targets; a torn slot passes the check with probability 2^-64). A full table overwrites:
# a lost entry is only a miss. One table for all threads restores the hits two per-thread dictionaries
# missed (breast cancer, depth 2, two threads: 140 of 185 hits, 13% more points scanned).
#
# The start trees keep their two-class split scans in the same table (:func:`grow_ranked`, keys from
# :func:`start_key`; a slot then holds the loss's bits and the rows on either side of the cut instead of a
# move). Within one call (one data set, one loss kind and minimum leaf size, in the key) a feature's best cut
# over a node's rows depends only on that row set: a start tree lists each node's rows in row order, so the
# orders and the float sums come out the same every time. Every start tree of a call splits the same root,
# so the top levels' scans repeat across restarts (synthetic set, depth 2: 0.201 -> 0.174 s for 100
# restarts; depth 6: within noise, its start trees are mostly deeper levels). A table serves one call.

H_SEED1 = np.uint64(0x9E3779B97F4A7C15)
H_SEED2 = np.uint64(0xD1B54A32D192ED03)
H_MUL1 = np.uint64(0xBF58476D1CE4E5B9)
H_MUL2 = np.uint64(0x94D049BB133111EB)
H_S30, H_S27, H_S31 = np.uint64(30), np.uint64(27), np.uint64(31)

# counters (int64 array) filled by local_search: what the search spends its time on
C_PASSES, C_VISITS, C_HITS, C_SCANNED, C_MOVES, C_ROWS = 0, 1, 2, 3, 4, 5
N_COUNTERS = 6


@njit(cache=True, nogil=True, inline="always")
def mix64(x):
    """splitmix64's finaliser: a bijection of uint64 whose output bits all depend on every input bit."""
    x = (x ^ (x >> H_S30)) * H_MUL1
    x = (x ^ (x >> H_S27)) * H_MUL2
    return x ^ (x >> H_S31)


@njit(cache=True, nogil=True)
def subtree_key(ntype, feat, thrb, t, h1, h2):
    """Fold the shape, features and thresholds (bits) of the subtree at t, in preorder, into (h1, h2)."""
    stack = np.empty(64, np.int64)
    stack[0] = t
    sp = 1
    while sp > 0:
        sp -= 1
        u = stack[sp]
        code = np.uint64(ntype[u])
        if ntype[u] >= 2:  # a leaf's feat / thr entries are stale: leave them out
            code += np.uint64(8) * np.uint64(feat[u] + 2)
        h1 = mix64(h1 ^ code) + H_SEED1
        h2 = mix64(h2 + code * H_SEED2) ^ H_MUL1
        if ntype[u] >= 2:
            h1 = mix64(h1 ^ thrb[u]) + H_SEED1
            h2 = mix64(h2 + thrb[u] * H_SEED2) ^ H_MUL1
            stack[sp] = 2 * u + 2
            stack[sp + 1] = 2 * u + 1
            sp += 2
    return np.int64(mix64(h1)), np.int64(mix64(h2 + H_SEED1))


MC_WAYS = 2  # slots probed per key (adjacent, so one or two cache lines)


def move_cache(n_restarts, T):
    """An empty move-cache table for a call of ``n_restarts`` restarts on heap size T: about four slots per
    possible node visit of the first pass plus the start trees' split scans (:func:`grow_ranked`), a power
    of two between 2^12 and 2^18 slots (40 bytes each)."""
    want = max(4096, 6 * int(n_restarts) * int(T))
    return np.zeros((1 << min(18, max(12, (want - 1).bit_length())), 5), np.int64)


@njit(cache=True, nogil=True, inline="always")
def mc_check(k1, k2, a, b):
    """A slot's check word: every bit depends on all four words; never 0 (0 marks an empty slot)."""
    return np.int64(mix64(mix64(mix64(mix64(np.uint64(k1) ^ H_SEED2) ^ np.uint64(k2)) + np.uint64(a)) ^ np.uint64(b))) | 1


@njit(cache=True, nogil=True)
def slot_get(mc, k1, k2):
    """Look (k1, k2) up in a move-cache table: (hit, a, b), the two words stored with it (see the
    move-cache note). An empty table (no rows) always misses."""
    mask = mc.shape[0] - 1
    if mask < 1:  # no table (or one slot: the two probed slots would not exist)
        return False, np.int64(0), np.int64(0)
    h = k1 & mask
    for w in range(MC_WAYS):
        s = h ^ w
        s1 = mc[s, 0]
        s2 = mc[s, 1]
        a = mc[s, 2]
        b = mc[s, 3]
        c = mc[s, 4]
        if s1 == k1 and s2 == k2 and c == mc_check(s1, s2, a, b):
            return True, a, b
    return False, np.int64(0), np.int64(0)


@njit(cache=True, nogil=True)
def slot_put(mc, k1, k2, a, b):
    """Store two words under (k1, k2): the key's first empty slot, else its first (a lost entry is only a
    later miss). An empty table stores nothing."""
    mask = mc.shape[0] - 1
    if mask < 1:
        return
    h = k1 & mask
    s = h
    for w in range(MC_WAYS):
        if mc[h ^ w, 4] == 0:
            s = h ^ w
            break
    mc[s, 0] = k1
    mc[s, 1] = k2
    mc[s, 2] = a
    mc[s, 3] = b
    mc[s, 4] = mc_check(k1, k2, a, b)


@njit(cache=True, nogil=True)
def mc_get(mc, k1, k2):
    """Look a node visit up: (hit, move, feature, threshold's bits) (see the move-cache note)."""
    hit, a, b = slot_get(mc, k1, k2)
    if hit:
        return True, a & 7, (a >> 3) - 1, b
    return False, np.int64(0), np.int64(-1), np.int64(0)


@njit(cache=True, nogil=True)
def mc_put(mc, k1, k2, move, pj, ptbits):
    """Store a visit's decision (ptbits: the threshold's bits)."""
    slot_put(mc, k1, k2, np.int64(move) | ((np.int64(pj) + 1) << 3), ptbits)


@njit(cache=True, nogil=True, inline="always")
def start_key(r1, r2, j, kind, nmin):
    """The move-cache key of a start tree's split scan of feature j over a node's rows (hash sums r1, r2), with
    its loss kind and minimum leaf size: mixed differently from :func:`subtree_key`, so the two kinds of entries
    share one table. (A table serves one call: the data and its presorted orders are not in the key.)"""
    code = np.uint64(j + 1) | (np.uint64(nmin) << np.uint64(24)) | (np.uint64(kind) << np.uint64(56))
    return np.int64(mix64((r1 ^ H_MUL1) + code * H_SEED2)), np.int64(mix64((r2 + H_SEED1) ^ (code * H_MUL2)))


@njit(cache=True, nogil=True)
def row_hashes(n):
    """Each row's two 64-bit hash words (rh[0, i], rh[1, i]): a row set's key is their two sums."""
    rh = np.empty((2, n), np.uint64)
    for i in range(n):
        rh[0, i] = mix64(np.uint64(i) + H_SEED1)
        rh[1, i] = mix64(np.uint64(i) * H_MUL2 + H_SEED2)
    return rh


@njit(cache=True, nogil=True)
def seg_sort(seg, skey, a, b, leafpos, depth, D, lo, width, count, tmp):
    """Counting-sort the rows seg[a:b] by their leaf's in-order key, (u + 1) << (D - depth(u)) for leaf u.

    A node t's leaves are exactly the keys in [(t + 1) << (D - depth(t)), (t + 2) << (D - depth(t))), so with
    all rows kept in key order a node's rows are one contiguous block, found by binary search in ``skey``.
    A move at t changes only the leaves of t's rows, all keys within t's range: re-sorting t's block (keys
    lo .. lo + width - 1) keeps the whole array in order. Stable, O(b - a + width).
    """
    for k in range(width + 1):
        count[k] = 0
    for r in range(a, b):
        u = leafpos[seg[r]]
        count[((u + 1) << (D - depth[u])) - lo + 1] += 1
    for k in range(width):
        count[k + 1] += count[k]
    for r in range(a, b):
        i = seg[r]
        u = leafpos[i]
        k = ((u + 1) << (D - depth[u])) - lo
        tmp[count[k]] = i
        count[k] += 1
    for r in range(b - a):
        i = tmp[r]
        u = leafpos[i]
        seg[a + r] = i
        skey[a + r] = (u + 1) << (D - depth[u])


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


@njit(cache=True, nogil=True)
def local_search_ranked(ntype, feat, thr, coef, X, Xs, grp, orderT, grpT, rankT, ogT, XT, rh, ordc, Z, featok, kind, D,
                        nmin, pen,
                        hyper, H, tol, max_moves, trace, stop, cache, counters):
    """Algorithm 2.1 with first-improvement (trick 4) from the start tree in (ntype, feat, thr, coef): returns
    the number of accepted moves. rankT, ogT, XT, rh: :func:`search_arrays`; ordc: :func:`order_cache`.

    ``cache`` (a :func:`move_cache` table, one per call, shared by its threads) remembers node-visit
    outcomes across restarts (parallel splits only, see above); ``counters``
    (N_COUNTERS int64) accumulates passes, node visits, cache hits, points scanned by split scans
    (rows x features), accepted moves and rows examined.

    trace[k] receives the whole-tree raw objective recomputed from scratch before move k (and after the
    last), so callers can check that every accepted move strictly decreases it.

    ``stop`` is a shared one-element array another thread sets (Ctrl-C, time limit): it is read before
    every node visit and hyperplane start, so the search ends within one node visit and leaves the tree
    valid (only whole moves are ever applied).
    """
    n, p = X.shape
    T = ntype.shape[0]
    S = Z.shape[1]
    leafpos = np.empty(n, np.int64)
    inI = np.zeros(n, np.bool_)
    I = np.empty(n, np.int64)
    low_d = np.empty(n, np.int64)
    up_d = np.empty(n, np.int64)
    dest = np.empty(n, np.int64)
    fixlow = np.zeros(n, np.bool_)
    movers = np.empty(n, np.int64)
    vals = np.empty(n)
    V = np.empty(n)
    rbuf = np.empty(n, np.int64)
    rtmp = np.empty(n, np.int64)
    stats = np.zeros((T, S))
    cnt = np.zeros(T, np.int64)
    lloss = np.zeros(T)
    bstats = np.zeros((T, S))
    bcnt = np.zeros(T, np.int64)
    blloss = np.zeros(T)
    zero = np.int64(0)  # not a literal argument (see grow)
    leaves = np.empty(T + 2, np.int64)
    cleaves = np.empty(T + 2, np.int64)
    allf = np.arange(p)
    nodes = np.empty(T, np.int64)
    a = np.empty(p)
    besta = np.empty(p)
    moves = np.int64(0)  # typed: a literal 0 compiled after_move a second time
    clean = np.zeros(T, np.bool_)
    use_cache = not hyper
    below = np.zeros(T, np.bool_)
    thrb = thr.view(np.uint64)
    ptf = np.zeros(1)  # a threshold and its bits (the move cache stores bits)
    ptb = ptf.view(np.int64)
    # two classes with unit weights: every visit counts in integers (best_parallel_unit, unit_node_counts);
    # with parallel splits a node's rows also come from the rows kept in leaf order (seg_sort)
    unit = unit_binary(Z, kind)
    segs = unit and not hyper
    nu = n if unit else 0
    pk = np.empty(nu, np.int64)
    code = np.empty(nu, np.int64)
    lidx = np.empty(T, np.int64)
    cc = np.empty(T, np.int64)
    upc = np.empty(T, np.int64)
    lowc = np.empty(T, np.int64)
    curc = np.empty(T, np.int64)
    ns = n if segs else 0
    seg = np.arange(ns)
    skey = np.empty(ns, np.int64)
    kcount = np.zeros((1 << D) + 1 if segs else 0, np.int64)
    # Order cache (integer visits with parallel splits). A node's rows change only when one of its
    # ancestors moves, so a scan at depth 1 .. DC stores each feature's order of its rows (the filtered
    # global order) in ordc[depth - 1, j, sa:sa + nI], where sa .. sa + nI is its block of seg; an accepted
    # move at u invalidates the entries of u's descendants (after_move). A later visit with the same rows
    # reads its own entry; otherwise, when it is cheaper than a rank bitmap or a filter of all n rows, it
    # filters the nearest ancestor's entry (an ancestor's rows are a superset, already in feature order).
    # Nodes of one depth have disjoint blocks, and valid entries are their current blocks, so a store never
    # overwrites another valid entry. A node whose parent's entry is not valid first makes it valid
    # (cache_path: each node from the nearest valid ancestor down is split off its parent's orders with
    # its sibling), so scans filter their parent's order, and the sibling's comes in the same pass: on the
    # synthetic set at depth 6 the rank bitmaps (9-12 ns a row) all but vanish.
    DC = ordc.shape[0] if segs and ordc.shape[2] == n else 0  # depths 1 .. DC (order_cache)
    nc = (2 << DC) - 1
    cok = np.zeros(nc, np.bool_)
    ch1 = np.zeros(nc, np.uint64)
    ch2 = np.zeros(nc, np.uint64)
    csa = np.zeros(nc, np.int64)
    cnI = np.zeros(nc, np.int64)
    stage2 = np.empty(n if DC > 0 else 0, ogT.dtype)  # a sibling's order, staged (best_parallel_unit)
    ogs = np.empty(n if unit else 0, ogT.dtype)  # a node's order as row words, staged
    cmask = np.zeros(n if DC > 0 else 0, np.bool_)  # cache_path's row marks
    h1 = rh[0]  # each row's two hash words for the move cache's row-set key (row_hashes)
    h2 = rh[1]
    hall1 = np.uint64(0)  # the root's row-set hash: all rows
    hall2 = np.uint64(0)
    for i in range(n):
        hall1 += h1[i]
        hall2 += h2[i]
    nI = np.int64(0)
    lo = np.int64(0)  # a visited node's block of rows in seg (segs): keys from lo, rows from sa
    sa = np.int64(0)
    nlow = np.int64(0)
    nk = np.int64(0)
    depth = np.empty(T, np.int64)
    for u in range(T):
        depth[u] = node_depth(u)
    tot, feas = tree_objective_raw(ntype, feat, thr, coef, X, Xs, Z, kind, nmin, pen, leafpos, stats, cnt, leaves, XT,
                                   rbuf, rtmp)
    trace[0] = tot
    if segs:
        seg_sort(seg, skey, zero, n, leafpos, depth, D, np.int64(1) << D, np.int64(1) << D, kcount, rtmp)
    while moves < max_moves:
        # one pass of Algorithm 2.1 over the nodes in random order; nodes whose point set and subtrees are
        # unchanged since they last failed to improve ("clean") are skipped
        nn = np.int64(0)
        for u in range(T):
            if ntype[u] > 0:
                nodes[nn] = u
                nn += 1
        perm = np.random.permutation(nn)
        improved = False
        counters[C_PASSES] += 1
        for pi in range(nn):
            if moves >= max_moves or stop[0] != 0:
                break
            t = nodes[perm[pi]]
            if ntype[t] == 0 or clean[t]:
                continue
            dt = node_depth(t)
            is_leaf = ntype[t] == LEAF
            if is_leaf and dt >= D:
                clean[t] = True
                continue
            r1 = np.uint64(0)
            r2 = np.uint64(0)
            if segs:
                # t's rows are one block of the rows kept in leaf order: O(rows of t), not O(n)
                for r in range(nI):
                    inI[I[r]] = False
                lo = (t + 1) << (D - dt)
                sa = np.searchsorted(skey, lo)
                nI = np.searchsorted(skey, lo + (np.int64(1) << (D - dt))) - sa
                for r in range(nI):
                    i = seg[sa + r]
                    I[r] = i
                    inI[i] = True
                    r1 += h1[i]
                    r2 += h2[i]
                counters[C_ROWS] += nI
            else:
                nI = 0
                for u in range(T):  # one descendant test per heap position instead of one per row
                    below[u] = is_desc(u, t)
                for i in range(n):
                    if below[leafpos[i]]:
                        I[nI] = i
                        inI[i] = True
                        nI += 1
                        if use_cache:
                            r1 += h1[i]
                            r2 += h2[i]
                    else:
                        inI[i] = False
                counters[C_ROWS] += n
            if nI == 0:
                continue
            counters[C_VISITS] += 1
            cl = 2 * t + 1
            cu = 2 * t + 2
            key = (np.int64(0), np.int64(0))
            if use_cache:
                key = subtree_key(ntype, feat, thrb, t, r1, r2)
                hit, move, pj, ptb[0] = mc_get(cache, key[0], key[1])
                if hit:
                    counters[C_HITS] += 1
                    if move == 0:
                        clean[t] = True
                        continue
                    pt = ptf[0]
                    apply_move(ntype, feat, thr, coef, t, move, pj, pt, besta, 0.0, is_leaf)
                    moves = after_move(ntype, feat, thr, coef, X, Xs, Z, kind, nmin, pen, t, I, nI, leafpos, clean,
                                       moves, trace, stats, cnt, leaves, zero, low_d, up_d, depth, rbuf, rtmp, XT,
                                       cok)
                    clean[t] = move == 1  # see below
                    if segs:
                        seg_sort(seg, skey, sa, sa + nI, leafpos, depth, D, lo, np.int64(1) << (D - dt), kcount, rtmp)
                    improved = True
                    continue
            # current subtree loss
            if not unit:
                nl = subtree_leaves(ntype, t, leaves, zero)
                for r in range(nI):
                    dest[I[r]] = leafpos[I[r]]
                cur = place_loss(I, nI, dest, Z, kind, zero, leaves, nl, stats, cnt)
                cur += pen * subtree_complexity(ntype, coef, t)
            if is_leaf:
                for r in range(nI):
                    low_d[I[r]] = cl
                    up_d[I[r]] = cu
                cleaves[0] = cl
                cleaves[1] = cu
                ncl = np.int64(2)
                cxc = np.int64(0)
            else:
                # a point's current leaf is its leaf in one child subtree: route it only through the other
                if segs:
                    # the block lists cl's rows first (smaller leaf keys): I[:nk] are in cl's subtree
                    nk = np.searchsorted(skey[sa:sa + nI], lo + (np.int64(1) << (D - dt - 1)))
                    na = nI - nk
                    for r in range(nk):
                        i = I[r]
                        low_d[i] = leafpos[i]
                        rbuf[na + r] = i
                    for r in range(nk, nI):
                        i = I[r]
                        up_d[i] = leafpos[i]
                        rbuf[r - nk] = i
                else:
                    dcl = depth[cl]
                    na = np.int64(0)  # rbuf[:na]: rows in cu's subtree, to route through cl; rbuf[nb:]: the others
                    nb = nI
                    for r in range(nI):
                        i = I[r]
                        lp = leafpos[i]
                        if ((lp + 1) >> (depth[lp] - dcl)) == cl + 1:
                            low_d[i] = lp
                            nb -= 1
                            rbuf[nb] = i
                        else:
                            up_d[i] = lp
                            rbuf[na] = i
                            na += 1
                route_block(rbuf, zero, na, cl, ntype, feat, thr, coef, X, XT, Xs, low_d, rtmp)
                route_block(rbuf, na, nI, cu, ntype, feat, thr, coef, X, XT, Xs, up_d, rtmp)
                ncl = subtree_leaves(ntype, cl, cleaves, zero)
                nlow = ncl
                ncl = subtree_leaves(ntype, cu, cleaves, ncl)
                cxc = subtree_complexity(ntype, coef, cl) + subtree_complexity(ntype, coef, cu)
            if unit and segs and not is_leaf:
                icur, plow, pup, btotal, bdef = unit_node_counts_blocks(I, nI, nk, Z, low_d, up_d, cleaves, ncl, nlow,
                                                                        lidx, pk, upc, lowc, curc, nmin)
            elif unit:
                icur, plow, pup, btotal, bdef = unit_node_counts(I, nI, Z, leafpos, low_d, up_d, cleaves, ncl,
                                                                 np.int64(1) if is_leaf else nlow, lidx, pk, upc,
                                                                 lowc, curc, nmin)
                if is_leaf:  # the rows are all in t, not in its would-be children
                    v = upc[0] + upc[1]
                    icur = min((v >> 32) - (v & CMASK), v & CMASK)
            if unit:
                cur = float(icur) + pen * subtree_complexity(ntype, coef, t)
            best = cur
            move = 0
            # (1) best parallel split with the children fixed. Leaf losses are >= 0, so it costs at least
            # pen * (1 + cxc) and cannot be accepted when cur is within tol of that (e.g. a pure subtree):
            # the scan is skipped, the decision is the same. Hyperplane starts need the split, so they scan.
            ploss = np.inf
            pj = np.int64(-1)
            pt = 0.0
            pts = 0.0
            if unit and (hyper or cur - tol > pen * (1 + cxc)):
                # each feature's order of t's rows (see the order-cache note above)
                src = ORD_BITMAP if nI * 5 < n else ORD_FILTER_ALL
                slev = np.int64(0)
                ssa = np.int64(0)
                sn = n
                olev = np.int64(-1)
                if dt == 0:
                    src = ORD_ALL
                elif segs and dt <= DC:
                    olev = dt - 1
                    if cok[t] and ch1[t] == r1 and ch2[t] == r2 and csa[t] == sa and cnI[t] == nI:
                        src = ORD_OWN
                        slev = dt - 1
                        ssa = sa
                    else:
                        cache_entry(cok, ch1, ch2, csa, cnI, t, r1, r2, sa, nI)
                if segs and 2 <= dt <= DC and src != ORD_OWN and not cok[(t - 1) // 2]:
                    cache_path((t - 1) // 2, D, seg, skey, h1, h2, hall1, hall2, ogT, ordc, featok, cok, ch1, ch2,
                               csa, cnI, cmask, ogs, stage2)
                if segs and dt > 0 and src != ORD_OWN:
                    u = (t - 1) // 2  # the nearest ancestor with a cached order, if filtering it is cheaper
                    while u > 0:
                        if u < nc and cok[u]:
                            if cnI[u] < min(5 * nI + (n >> 6), n):
                                src = ORD_FILTER
                                slev = depth[u] - 1
                                ssa = csa[u]
                                sn = cnI[u]
                            break
                        u = (u - 1) // 2
                # filtering the parent's order (or, at depth 1, the root's: all rows) also gives the sibling's:
                # the rows the filter drops. Its entry is stored in the same pass unless it is valid already
                sib = t + 1 if t & 1 else t - 1
                sib_sa = np.int64(-1)
                if segs and olev >= 0 and src != ORD_OWN and not cok[sib]:
                    P = (t - 1) // 2
                    if P == 0 and (src == ORD_FILTER_ALL or src == ORD_BITMAP):
                        src = ORD_FILTER_ALL
                        pn, p1, p2 = n, hall1, hall2
                    elif P > 0 and src == ORD_FILTER and u == P:
                        pn, p1, p2 = cnI[P], ch1[P], ch2[P]
                    else:
                        pn = np.int64(-1)
                    if pn >= 0:
                        sib_sa = sa + nI if t & 1 else sa - (pn - nI)
                        cache_entry(cok, ch1, ch2, csa, cnI, sib, p1 - r1, p2 - r2, sib_sa, pn - nI)
                # only splits that would be accepted matter (hyperplane starts need the best one, so no bound)
                bound = NO_BOUND if hyper else accept_bound(best, tol, pen * (1 + cxc), nI)
                first = np.int64(-1)  # t's current feature first (allf: a feature's position is its index)
                if ntype[t] == PAR:
                    first = feat[t]
                ploss, pj, pt, pts = best_parallel_unit(I, nI, inI, X, Xs, orderT, grpT, rankT, ogT, featok, allf, p,
                                                        nmin, ncl, pk, code, cc, upc, btotal, bdef, movers, vals,
                                                        ordc, src, slev, ssa, sn, olev, sa, sib_sa, ogs, stage2, bound,
                                                        first)
                counters[C_SCANNED] += nI * p
            elif hyper or cur - tol > pen * (1 + cxc):
                ploss, pj, pt, pts = best_parallel(I, nI, inI, X, Xs, grp, orderT, grpT, rankT, featok, allf, p, low_d,
                                                   up_d, fixlow, Z, kind, nmin, cleaves, ncl, stats, cnt, movers,
                                                   vals, lloss, bstats, bcnt, blloss)
                counters[C_SCANNED] += nI * p
            if pj >= 0 and ploss + pen * (1 + cxc) < best - tol:
                best = ploss + pen * (1 + cxc)
                move = 1
            # (2), (3) replace the node by its lower / upper child subtree
            if not is_leaf:
                for side in range(2):
                    c = cl if side == 0 else cu
                    if unit:
                        ip = plow if side == 0 else pup
                        loss = np.inf if ip < 0 else float(ip)
                    else:
                        nlc = subtree_leaves(ntype, c, leaves, zero)
                        loss = place_loss(I, nI, low_d if side == 0 else up_d, Z, kind, nmin, leaves, nlc, stats, cnt)
                    loss += pen * subtree_complexity(ntype, coef, c)
                    if loss < best - tol:
                        best = loss
                        move = 2 + side
            # (4) hyperplane search (Algorithm 3.2): starts = best parallel, current hyperplane, H random
            bb = 0.0
            if hyper:
                for h in range(H + 2):
                    if stop[0] != 0:
                        break
                    if h == 0:
                        if pj < 0:
                            continue
                        a[:] = 0.0
                        a[pj] = 1.0
                        b0 = pts
                    elif h == 1:
                        if ntype[t] != HYP:
                            continue
                        a[:] = coef[t]
                        b0 = thr[t]
                    else:
                        for j in range(p):
                            a[j] = np.random.uniform(-1.0, 1.0) if featok[j] else 0.0
                        r0 = I[np.random.randint(nI)]
                        b0 = 0.0
                        for j in range(p):
                            b0 += a[j] * Xs[r0, j]
                    hl, hb = hyper_descent(a, b0, I, nI, Xs, featok, low_d, up_d, fixlow, Z, kind, nmin, cleaves,
                                           ncl, stats, cnt, movers, vals, V, pen, cxc, tol, dest, lloss, stop)
                    if hl < best - tol:
                        best = hl
                        move = 4
                        besta[:] = a
                        bb = hb
            if use_cache:
                ptf[0] = pt
                mc_put(cache, key[0], key[1], move, pj, ptb[0])
            if move == 0:
                clean[t] = True
                continue
            if move == 4:
                # a hyperplane's descent value is an incremental estimate: points on the plane (a.x == b) can
                # route differently once applied, so a move counts only if the re-routed tree is strictly
                # better; otherwise it is undone and t is marked clean (without this, squared-loss hyperplane
                # searches could cycle forever between two trees)
                before, _ = tree_objective_raw(ntype, feat, thr, coef, X, Xs, Z, kind, nmin, pen, leafpos, stats,
                                               cnt, leaves, XT, rbuf, rtmp)
                old_type = ntype[t]
                old_feat = feat[t]
                old_thr = thr[t]
                a[:] = coef[t]
                old_cl = ntype[cl] if cl < T else 0
                old_cu = ntype[cu] if cu < T else 0
                apply_move(ntype, feat, thr, coef, t, move, pj, pt, besta, bb, is_leaf)
                after, feas = tree_objective_raw(ntype, feat, thr, coef, X, Xs, Z, kind, nmin, pen, leafpos, stats,
                                                 cnt, leaves, XT, rbuf, rtmp)
                if not (feas and after < before - tol):
                    ntype[t] = old_type
                    feat[t] = old_feat
                    thr[t] = old_thr
                    coef[t] = a
                    if cl < T:
                        ntype[cl] = old_cl
                        ntype[cu] = old_cu
                    tree_objective_raw(ntype, feat, thr, coef, X, Xs, Z, kind, nmin, pen, leafpos, stats, cnt, leaves, XT,
                                       rbuf, rtmp)
                    clean[t] = True
                    continue
            else:
                apply_move(ntype, feat, thr, coef, t, move, pj, pt, besta, bb, is_leaf)
            moves = after_move(ntype, feat, thr, coef, X, Xs, Z, kind, nmin, pen, t, I, nI, leafpos, clean, moves,
                               trace, stats, cnt, leaves, move, low_d, up_d, depth, rbuf, rtmp, XT, cok)
            # after a new split with the children fixed, visiting t again before anything else changes in its
            # subtree or rows finds the same best split (same rows, same children), promotions no better than
            # before, so no move: it is left clean, and any later change below or above it dirties it again
            # (about a third of all visits were these). Hyperplane visits draw random numbers: not skipped
            clean[t] = move == 1 and not hyper
            if segs:
                seg_sort(seg, skey, sa, sa + nI, leafpos, depth, D, lo, np.int64(1) << (D - dt), kcount, rtmp)
            improved = True
        if not improved or stop[0] != 0:
            break
    counters[C_MOVES] += moves
    return moves


@njit(cache=True, nogil=True)
def apply_move(ntype, feat, thr, coef, t, move, pj, pt, besta, bb, is_leaf):
    """Apply move 1 (parallel split pj < pt), 2 / 3 (promote the lower / upper child) or 4 (hyperplane)."""
    cl = 2 * t + 1
    cu = 2 * t + 2
    if move == 1:
        ntype[t] = PAR
        feat[t] = pj
        thr[t] = pt
        coef[t, :] = 0.0
    elif move == 4:
        ntype[t] = HYP
        feat[t] = -2
        coef[t, :] = besta
        thr[t] = bb
    else:
        promote(ntype, feat, thr, coef, t, cl if move == 2 else cu)
    if is_leaf and (move == 1 or move == 4):
        ntype[cl] = LEAF
        ntype[cu] = LEAF


@njit(cache=True, nogil=True)
def after_move(ntype, feat, thr, coef, X, Xs, Z, kind, nmin, pen, t, I, nI, leafpos, clean, moves, trace, stats,
               cnt, leaves, move, low_d, up_d, depth, rbuf, rtmp, XT, cok):
    """Bookkeeping after an accepted move at t: mark t, its ancestors and everything below it dirty,
    invalidate the cached orders of t's descendants (``cok``; their rows change, t's do not), re-route t's
    points and record the objective in ``trace``; returns the new move count.

    move 1 (a parallel split with the children fixed) and 2 / 3 (promotions) reuse the visit's low_d /
    up_d (each point's leaf in either child subtree) instead of walking the tree again; move 0 (a cache
    hit, where they were not computed) and 4 (hyperplane) route from t. ``depth``: node depths by position."""
    T = ntype.shape[0]
    moves += 1
    u = t
    while u > 0:
        u = (u - 1) // 2
        clean[u] = False
    for u in range(t, T):
        if is_desc(u, t):
            clean[u] = False
            if u > t and u < cok.shape[0]:
                cok[u] = False
    if move == 1:
        j = feat[t]
        th = thr[t]
        for r in range(nI):
            i = I[r]
            leafpos[i] = low_d[i] if X[i, j] < th else up_d[i]
    elif move == 2 or move == 3:
        # the kept child c's subtree moved up one level: position u (relative depth k below c) maps to
        # u - (c - t) * 2^k; points routed to the other child now follow c's subtree (their low_d / up_d)
        c = 2 * t + 1 if move == 2 else 2 * t + 2
        dest = low_d if move == 2 else up_d
        dc = depth[c]
        for r in range(nI):
            i = I[r]
            u = dest[i]
            leafpos[i] = u - (c - t) * (np.int64(1) << (depth[u] - dc))
    else:
        rbuf[:nI] = I[:nI]
        route_block(rbuf, np.int64(0), nI, t, ntype, feat, thr, coef, X, XT, Xs, leafpos, rtmp)
    if trace.shape[0] > 1:
        tot, feas = tree_objective_raw(ntype, feat, thr, coef, X, Xs, Z, kind, nmin, pen, leafpos, stats, cnt, leaves,
                                       XT, rbuf, rtmp)
        if moves < trace.shape[0]:
            trace[moves] = tot
    return moves


@njit(cache=True, nogil=True)
def run_restarts(seeds, T, X, Xs, grp, orderT, grpT, Z, featok, kind, start_kind, D, nmin, pen, hyper, H, tol,
                 mtry, max_moves, random_frac, stop, nxt, cache, counters, rankT, ogT, XT, rh, NT, FE, TH, CO, OB, done):
    """Independent restarts: RF-style start tree (random mtry features per split), then local search.

    Every worker thread of a call runs this once: it takes the next restart r from the shared counter
    ``nxt[0]`` (:func:`fetch_add`) until all are taken, so work is shared one restart at a time without a
    Python call per chunk. Restart r seeds its own generator with seeds[r], so its tree does not depend on
    the thread. It writes its tree to NT[r], FE[r], TH[r] (and CO[r] when CO has p columns, i.e. for
    hyperplane splits), its raw objective (leaf losses + pen * complexity, recomputed from scratch) to
    OB[r], so the caller can rank restarts without building trees, then sets done[r] to 1.

    ``stop[0]`` set by another thread ends the run early: restarts r >= 1 are not started once it is set
    (restart 0 always runs, so the caller gets at least one tree), and a running one ends within one node
    visit with its tree so far (still valid: local search only applies whole improving moves). ``cache``
    (shared) and ``counters`` (this thread's): see :func:`local_search_ranked`; the start trees keep their split
    scans in ``cache`` too (:func:`grow_ranked`). rankT, ogT, XT, rh: :func:`search_arrays`, read only and
    shared by every thread.
    """
    R = seeds.shape[0]
    p = X.shape[1]
    n = X.shape[0]
    ordc = order_cache(Z, kind, hyper, D, p, ogT)  # this thread's, for all its restarts
    leafpos = np.empty(n, np.int64)
    ostats = np.zeros((T, Z.shape[1]))
    ocnt = np.zeros(T, np.int64)
    oleaves = np.empty(T + 2, np.int64)
    orows = np.empty(n, np.int64)
    otmp = np.empty(n, np.int64)
    trace = np.zeros(1)
    keep_coef = CO.shape[2] == p
    while True:
        r = fetch_add(nxt, 0)
        if r >= R or (r >= 1 and stop[0] != 0):
            break
        np.random.seed(seeds[r])
        ntype = np.zeros(T, np.int8)
        feat = np.zeros(T, np.int64)
        thr = np.zeros(T)
        coef = np.zeros((T, p))
        rs = np.random.random() < random_frac
        grow_ranked(ntype, feat, thr, coef, X, Xs, grp, orderT, grpT, rankT, Z, featok, start_kind, D, nmin, mtry, tol,
                    rs, cache, rh)
        local_search_ranked(ntype, feat, thr, coef, X, Xs, grp, orderT, grpT, rankT, ogT, XT, rh, ordc, Z, featok, kind, D,
                            nmin, pen, hyper, H, tol, max_moves, trace, stop, cache, counters)
        NT[r] = ntype
        FE[r] = feat
        TH[r] = thr
        if keep_coef:
            CO[r] = coef
        OB[r] = tree_objective_raw(ntype, feat, thr, coef, X, Xs, Z, kind, nmin, pen, leafpos, ostats, ocnt, oleaves,
                                   XT, orows, otmp)[0]
        fetch_add(done, r)  # after the stores above, for a thread polling done


@njit(cache=True)
def seed_numba(seed):
    np.random.seed(seed)
