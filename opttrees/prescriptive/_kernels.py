"""Numba kernels of the prescriptive local search and greedy trees (thesis §6, Algorithms 2.1-2.3 with (6.5)/(6.9)).

Why numba: Dunn's split scan moves one row at a time from the upper to the lower subtree and updates the
two leaves it touches; that loop is sequential. Why separate from :mod:`opttrees.heuristics.kernels`: the
leaf cost here is a function of *per-(leaf, treatment)* statistics (a minimum over eligible treatments plus
a prediction error), which the classification/regression kernels do not have.

Every row carries a statistics vector ``Z[i]`` (summed over a leaf) whose non-zero entries lie in
``Z[i, zlo[i]:zhi[i]]`` (its treatment's block), so a move costs O(block):

- ``KIND_OPT`` (constant counterfactuals, (6.4)-(6.5)): block t = [1, y, y²] (S = 3m). With the leaf's count,
  sum and sum of squares per treatment, the prescription total of treatment s is N·ȳ_s and the prediction
  term the within-(leaf, treatment) SSE: O(m) per leaf;
- ``KIND_POLICY`` (teacher scores): [Γ_0..Γ_{m-1}, one-hot of the observed treatment] (S = 2m); the leaf
  prescribes the eligible treatment with the least summed score;
- ``KIND_LINEAR`` (OPT-L, (6.6)-(6.9)): block t = the Gram statistics of [1, x, y] (count, Σx, Σy, Σxxᵀ upper
  triangle, Σxy, Σy²); a leaf solves one lasso per treatment by covariance coordinate descent, warm-started
  from the last solution kept for that leaf slot (``beta``).

Costs are raw: ``a`` times the prescription total plus ``b`` times the prediction term (plus, for OPT-L, the
lasso penalty ``lam`` times ‖β‖₁ inside it); the caller passes ``pen = alpha * L̂`` per split, so comparisons
equal comparisons of the normalised objective (:mod:`opttrees.prescriptive.objective`). A leaf with fewer
than ``min_samples_leaf`` rows, or in which no treatment has ``n_treatment`` rows, costs +inf (infeasible).

Heap layout as the other heuristics: capacity T = 2^(D+1) - 1, children of t are 2t+1 / 2t+2,
``ntype`` 0 absent / 1 leaf / 2 parallel split ``X[:, feat] < thr`` (original units, midpoints).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..heuristics.kernels.routing import node_depth, push_children, route_parallel, subtree_stack
from ..heuristics.kernels.splits import safe_mid
from ..dp.stats_kernels import constant_leaf
from ..jit import guard_cache

KIND_OPT, KIND_POLICY, KIND_LINEAR = 0, 1, 2
ABSENT, LEAF, SPLIT = 0, 1, 2
INF = np.inf
# ip (int parameters): [m, n_treatment, min_samples_leaf, p (OPT-L features), max lasso cycles]
# fp (float parameters): [a, b, lam (raw lasso weight), lasso tolerance]


@njit(cache=True, nogil=True)
def linear_block_size(p):
    return 2 * p + 3 + p * (p + 1) // 2


@njit(cache=True, nogil=True)
def lasso_group(v, off, p, lam, beta, tol, max_iter, C):
    """Lasso with intercept on one (leaf, treatment) group from its Gram statistics ``v[off:]``.

    Minimises Σ(y - β0 - βᵀx)² + lam‖β‖₁ (β0 free): covariance coordinate descent on the centred Gram,
    warm-started from ``beta`` (updated in place; ``beta[p]`` is the intercept). Returns the minimum.
    """
    n = v[off]
    inv = 1.0 / n
    sy = v[off + p + 1]
    my = sy * inv
    k = off + p + 2
    for j in range(p):
        mj = v[off + 1 + j] * inv
        for q in range(j, p):
            c = v[k] * inv - mj * v[off + 1 + q] * inv
            C[j, q] = c
            C[q, j] = c
            k += 1
    cxy = np.empty(p)
    for j in range(p):
        cxy[j] = v[k + j] * inv - v[off + 1 + j] * inv * my
    vy = v[k + p] * inv - my * my
    lg = lam * 0.5 * inv          # glmnet scale: (1/2n) Σ r² + lg ‖β‖₁
    for _ in range(max_iter):
        maxd = 0.0
        for j in range(p):
            cjj = C[j, j]
            if cjj <= 1e-12:
                beta[j] = 0.0
                continue
            r = cxy[j]
            for q in range(p):
                r -= C[j, q] * beta[q]
            r += cjj * beta[j]
            if r > lg:
                new = (r - lg) / cjj
            elif r < -lg:
                new = (r + lg) / cjj
            else:
                new = 0.0
            d = new - beta[j]
            if d != 0.0:
                beta[j] = new
                ad = abs(d) * np.sqrt(cjj)
                if ad > maxd:
                    maxd = ad
        if maxd < tol:
            break
    quad = 0.0
    lin = 0.0
    l1 = 0.0
    for j in range(p):
        bj = beta[j]
        if bj == 0.0:
            continue
        lin += cxy[j] * bj
        l1 += abs(bj)
        for q in range(p):
            quad += C[j, q] * bj * beta[q]
    sse = n * (vy - 2.0 * lin + quad)
    if sse < 0.0:
        sse = 0.0
    b0 = my
    for j in range(p):
        b0 -= v[off + 1 + j] * inv * beta[j]
    beta[p] = b0
    return sse + lam * l1


@njit(cache=True, nogil=True)
def leaf_eval(kind, v, ip, fp, beta, C):
    """(raw cost, prescribed treatment) of a leaf with summed statistics ``v``; (inf, -1) when infeasible.

    Ties between treatments go to the lowest index (as ``numpy.argmin`` in the vectorised costs).
    """
    m = ip[0]
    nt = ip[1]
    minl = ip[2] if ip[2] > 1 else 1
    a = fp[0]
    b = fp[1]
    if kind == KIND_OPT or kind == KIND_POLICY:
        return constant_leaf(kind, v, m, nt, minl, a, b)
    # KIND_LINEAR
    best = INF
    tb = -1
    if nt < 1:
        nt = 1
    p = ip[3]
    q = linear_block_size(p)
    N = 0.0
    for t in range(m):
        N += v[q * t]
    if N + 0.5 < minl:
        return INF, -1
    groups = 0.0
    for t in range(m):
        c = v[q * t]
        if c < 0.5:
            continue
        groups += lasso_group(v, q * t, p, fp[2], beta[t], fp[3], ip[4], C)
        if c + 0.5 >= nt:
            f = beta[t, p]
            for j in range(p):
                sx = 0.0
                for s in range(m):
                    sx += v[q * s + 1 + j]
                f += beta[t, j] * sx / N
            pr = N * f
            if pr < best:
                best = pr
                tb = t
    if tb < 0:
        return INF, -1
    return a * best + b * groups, tb


@njit(cache=True, nogil=True)
def leaf_cost(kind, v, ip, fp, beta, C):
    return leaf_eval(kind, v, ip, fp, beta, C)[0]


# ------------------------------------------------------------------------------------------ tree helpers
# node_depth, route_parallel (a row's leaf under parallel splits) and the subtree walk's stack (subtree_stack,
# push_children) are the heuristics' (same heap layout):
# :mod:`opttrees.heuristics.kernels.routing`
@njit(cache=True, nogil=True)
def subtree_leaves(ntype, root, out):
    """Leaves of the subtree at ``root`` into ``out``; returns (number of leaves, number of splits)."""
    stack, top = subtree_stack(root)
    nl = 0
    ns = 0
    T = ntype.shape[0]
    while top > 0:
        top -= 1
        u = stack[top]
        if u >= T or ntype[u] == ABSENT:
            continue
        if ntype[u] == LEAF:
            out[nl] = u
            nl += 1
        else:
            ns += 1
            top = push_children(stack, top, u)
    return nl, ns


@njit(cache=True, nogil=True)
def clear_subtree(ntype, root):
    """Mark every heap position of the subtree at ``root`` absent: one contiguous range per level (a superset of
    the nodes a walk from ``root`` reaches; the positions below a leaf are absent already)."""
    T = ntype.shape[0]
    lo = root
    width = 1
    while lo < T:
        ntype[lo:min(lo + width, T)] = ABSENT
        lo = 2 * lo + 1
        width *= 2


@njit(cache=True, nogil=True)
def lift_subtree(ntype, feat, thr, src, dst):
    """Move the subtree at ``src`` (a descendant of ``dst``) up to ``dst``, replacing what was there."""
    T = ntype.shape[0]
    k = 0
    srcs = np.empty(T, np.int64)
    dsts = np.empty(T, np.int64)
    stack_s = np.empty(64, np.int64)
    stack_d = np.empty(64, np.int64)
    stack_s[0] = src
    stack_d[0] = dst
    top = 1
    while top > 0:
        top -= 1
        s = stack_s[top]
        d = stack_d[top]
        srcs[k] = s
        dsts[k] = d
        k += 1
        if ntype[s] == SPLIT:
            stack_s[top] = 2 * s + 1
            stack_d[top] = 2 * d + 1
            stack_s[top + 1] = 2 * s + 2
            stack_d[top + 1] = 2 * d + 2
            top += 2
    nt = np.empty(k, np.int8)
    ft = np.empty(k, np.int64)
    th = np.empty(k)
    for r in range(k):
        nt[r] = ntype[srcs[r]]
        ft[r] = feat[srcs[r]]
        th[r] = thr[srcs[r]]
    clear_subtree(ntype, dst)
    for r in range(k):
        ntype[dsts[r]] = nt[r]
        feat[dsts[r]] = ft[r]
        thr[dsts[r]] = th[r]


@njit(cache=True, nogil=True)
def tree_cost(ntype, feat, thr, X, Z, kind, ip, fp, pen, beta, C, ST):
    """Raw objective of the heap tree: leaf costs from scratch plus pen per split (inf when infeasible)."""
    T = ntype.shape[0]
    S = Z.shape[1]
    ST[:T, :S] = 0.0
    for i in range(X.shape[0]):
        L = route_parallel(X, ntype, feat, thr, np.int64(0), i)
        for s in range(S):
            ST[L, s] += Z[i, s]
    tot = 0.0
    for u in range(T):
        if ntype[u] == SPLIT:
            tot += pen
        elif ntype[u] == LEAF:
            tot += leaf_cost(kind, ST[u], ip, fp, beta[u], C)
    return tot


# ------------------------------------------------------------------------------------------ the split scan
@njit(cache=True, nogil=True)
def _move(i, Z, zlo, zhi, ST, frm, to):
    for s in range(zlo[i], zhi[i]):
        z = Z[i, s]
        ST[frm, s] -= z
        ST[to, s] += z


@njit(cache=True, nogil=True)
def scan_splits(I, nI, low_d, up_d, lows, nlow, ups, nup, X, orderT, Z, zlo, zhi, allowed, kind, ip, fp,
                beta, C, inI, srt, ST, UP, LC, dirty, max_thr, random_pick):
    """Best (or, with ``random_pick``, a uniformly random feasible) split of rows I with lower/upper subtrees
    fixed (destinations ``low_d``/``up_d``). Returns (feature, threshold, summed leaf cost), (-1, 0, inf) if none.

    ``UP[L]`` must hold the statistics of all rows of I in upper leaf L. ``max_thr`` > 0 evaluates at most
    about that many cut positions per feature (at rank quantiles); 0 evaluates every distinct cut.
    """
    n = X.shape[0]
    p = X.shape[1]
    S = Z.shape[1]
    best = INF
    bj = -1
    bt = 0.0
    n_feasible = 0
    for j in range(p):
        if not allowed[j]:
            continue
        # sorted rows of I for feature j
        k = 0
        for r in range(n):
            i = orderT[j, r]
            if inI[i]:
                srt[k] = i
                k += 1
        if X[srt[0], j] >= X[srt[nI - 1], j]:
            continue
        fsum = 0.0
        ninf = 0
        for a in range(nup):
            L = ups[a]
            for s in range(S):
                ST[L, s] = UP[L, s]
            c = leaf_cost(kind, ST[L], ip, fp, beta[L], C)
            LC[L] = c
            dirty[L] = 0
            if c == INF:
                ninf += 1
            else:
                fsum += c
        for a in range(nlow):
            L = lows[a]
            for s in range(S):
                ST[L, s] = 0.0
            LC[L] = INF
            dirty[L] = 0
            ninf += 1
        step = nI // max_thr if max_thr > 0 else 0
        mark = step
        for r in range(nI - 1):
            i = srt[r]
            _move(i, Z, zlo, zhi, ST, up_d[i], low_d[i])
            dirty[up_d[i]] = 1
            dirty[low_d[i]] = 1
            x0 = X[i, j]
            x1 = X[srt[r + 1], j]
            if not x0 < x1:
                continue
            if r + 1 < mark:
                continue
            mark = r + 1 + step
            for a in range(nup + nlow):
                L = ups[a] if a < nup else lows[a - nup]
                if dirty[L]:
                    dirty[L] = 0
                    old = LC[L]
                    c = leaf_cost(kind, ST[L], ip, fp, beta[L], C)
                    LC[L] = c
                    if old == INF:
                        ninf -= 1
                    else:
                        fsum -= old
                    if c == INF:
                        ninf += 1
                    else:
                        fsum += c
            if ninf > 0:
                continue
            if random_pick:
                n_feasible += 1
                if np.random.randint(0, n_feasible) == 0:
                    best = fsum
                    bj = j
                    bt = safe_mid(x0, x1)
            elif fsum < best:
                best = fsum
                bj = j
                bt = safe_mid(x0, x1)
    return bj, bt, best


@njit(cache=True, nogil=True)
def _zero(ST, leaves, nl):
    for a in range(nl):
        ST[leaves[a], :] = 0.0


@njit(cache=True, nogil=True)
def _stats_into(I, nI, dest, Z, zlo, zhi, ST, leaves, nl):
    """Statistics of rows I by destination leaf; zeroes ``leaves`` first (every destination must be among them)."""
    _zero(ST, leaves, nl)
    for r in range(nI):
        i = I[r]
        L = dest[i]
        for s in range(zlo[i], zhi[i]):
            ST[L, s] += Z[i, s]


@njit(cache=True, nogil=True)
def _sum_costs(kind, ST, leaves, nl, ip, fp, beta, C):
    tot = 0.0
    for a in range(nl):
        L = leaves[a]
        tot += leaf_cost(kind, ST[L], ip, fp, beta[L], C)
    return tot


@njit(cache=True, nogil=True)
def new_workspace(n, p, S, T, p_lin):
    """Scratch arrays of one thread: (inI, I, srt, low_d, up_d, lows, ups, ST, UP, LC, dirty, C)."""
    return (np.zeros(n, np.bool_), np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64),
            np.empty(n, np.int64), np.empty(T, np.int64), np.empty(T, np.int64), np.zeros((T, S)),
            np.zeros((T, S)), np.zeros(T), np.zeros(T, np.int8), np.zeros((max(p_lin, 1), max(p_lin, 1))))


@njit(cache=True, nogil=True)
def rows_at(u, X, ntype, feat, thr, inI, I):
    """Rows whose path passes node u (mask ``inI`` and list ``I``); returns their number."""
    n = X.shape[0]
    du = node_depth(u)
    nI = 0
    for i in range(n):
        v = 0
        d = 0
        while d < du and ntype[v] == SPLIT:
            v = 2 * v + 1 if X[i, feat[v]] < thr[v] else 2 * v + 2
            d += 1
        if v == u:
            inI[i] = True
            I[nI] = i
            nI += 1
        else:
            inI[i] = False
    return nI


@njit(cache=True, nogil=True)
def optimize_node(u, D, X, orderT, Z, zlo, zhi, featok, kind, ip, fp, pen, tol, ntype, feat, thr, beta, ws,
                  max_thr):
    """OPTIMIZENODEPARALLEL at node u: best of keeping it, a new split with the children fixed (a leaf gets two
    new leaves), or replacing it by its lower or upper child. Applies the move; True when it improved."""
    inI, I, srt, low_d, up_d, lows, ups, ST, UP, LC, dirty, C = ws
    T = ntype.shape[0]
    is_leaf = ntype[u] == LEAF
    if is_leaf and node_depth(u) >= D:
        return False
    if 2 * u + 2 >= T:
        return False
    nI = rows_at(u, X, ntype, feat, thr, inI, I)
    if nI == 0:
        return False
    lo_root = 2 * u + 1
    up_root = 2 * u + 2
    if is_leaf:
        lows[0] = lo_root
        ups[0] = up_root
        nlow, sl = 1, 0
        nup, su = 1, 0
        for r in range(nI):
            low_d[I[r]] = lo_root
            up_d[I[r]] = up_root
    else:
        nlow, sl = subtree_leaves(ntype, lo_root, lows)
        nup, su = subtree_leaves(ntype, up_root, ups)
        for r in range(nI):
            i = I[r]
            low_d[i] = route_parallel(X, ntype, feat, thr, lo_root, i)
            up_d[i] = route_parallel(X, ntype, feat, thr, up_root, i)
    # the current cost of the subtree at u
    if is_leaf:
        for s in range(Z.shape[1]):
            ST[u, s] = 0.0
        for r in range(nI):
            i = I[r]
            for s in range(zlo[i], zhi[i]):
                ST[u, s] += Z[i, s]
        current = leaf_cost(kind, ST[u], ip, fp, beta[u], C)
    else:
        f0 = feat[u]
        t0 = thr[u]
        for r in range(nI):
            i = I[r]
            srt[i] = low_d[i] if X[i, f0] < t0 else up_d[i]
        _zero(ST, ups, nup)
        _stats_into(I, nI, srt, Z, zlo, zhi, ST, lows, nlow)
        current = _sum_costs(kind, ST, lows, nlow, ip, fp, beta, C) + _sum_costs(kind, ST, ups, nup, ip, fp, beta, C)
        current += pen * (1 + sl + su)
    # all rows into the lower / upper subtree
    best = current
    move = 0
    if not is_leaf:
        _stats_into(I, nI, low_d, Z, zlo, zhi, ST, lows, nlow)
        c_low = _sum_costs(kind, ST, lows, nlow, ip, fp, beta, C) + pen * sl
        if c_low < best - tol:
            best, move = c_low, 1
    _stats_into(I, nI, up_d, Z, zlo, zhi, UP, ups, nup)
    if not is_leaf:
        c_up = _sum_costs(kind, UP, ups, nup, ip, fp, beta, C) + pen * su
        if c_up < best - tol:
            best, move = c_up, 2
    bj, bt, bc = scan_splits(I, nI, low_d, up_d, lows, nlow, ups, nup, X, orderT, Z, zlo, zhi, featok, kind, ip,
                             fp, beta, C, inI, srt, ST, UP, LC, dirty, max_thr, np.bool_(False))
    if bj >= 0:
        c_split = bc + pen * (1 + sl + su)
        if c_split < best - tol:
            # confirm from scratch (the scan's running sum can drift by rounding)
            for r in range(nI):
                i = I[r]
                srt[i] = low_d[i] if X[i, bj] < bt else up_d[i]
            _zero(ST, ups, nup)
            _stats_into(I, nI, srt, Z, zlo, zhi, ST, lows, nlow)
            exact = (_sum_costs(kind, ST, lows, nlow, ip, fp, beta, C) + _sum_costs(kind, ST, ups, nup, ip, fp, beta, C)
                     + pen * (1 + sl + su))
            if exact < best - tol:
                best, move = exact, 3
    if move == 0:
        return False
    if move == 1:
        lift_subtree(ntype, feat, thr, lo_root, u)
    elif move == 2:
        lift_subtree(ntype, feat, thr, up_root, u)
    else:
        ntype[u] = SPLIT
        feat[u] = bj
        thr[u] = bt
        if is_leaf:
            ntype[lo_root] = LEAF
            ntype[up_root] = LEAF
    return True


@njit(cache=True, nogil=True)
def local_search(ntype, feat, thr, X, orderT, Z, zlo, zhi, featok, kind, ip, fp, pen, tol, D, beta, ws, max_thr,
                 max_moves, stop):
    """Algorithm 2.1: visit the nodes in random order, re-optimise each, until a pass changes nothing."""
    T = ntype.shape[0]
    moves = 0
    nodes = np.empty(T, np.int64)
    improved = True
    while improved and moves < max_moves:
        improved = False
        k = 0
        for u in range(T):
            if ntype[u] != ABSENT:
                nodes[k] = u
                k += 1
        order = np.random.permutation(k)
        for r in range(k):
            if stop[0]:
                return moves
            u = nodes[order[r]]
            if ntype[u] == ABSENT:
                continue
            if optimize_node(u, D, X, orderT, Z, zlo, zhi, featok, kind, ip, fp, pen, tol, ntype, feat, thr, beta, ws,
                             max_thr):
                improved = True
                moves += 1
                if moves >= max_moves:
                    break
    return moves


@njit(cache=True, nogil=True)
def grow(ntype, feat, thr, X, orderT, Z, zlo, zhi, featok, kind, ip, fp, D, beta, ws, max_thr, mtry, random_cut):
    """Top-down tree to depth D: at each node the best split over ``mtry`` random features (all when mtry >= p:
    the greedy tree), or a uniformly random feasible cut (``random_cut``); a node without a feasible split
    stays a leaf."""
    inI, I, srt, low_d, up_d, lows, ups, ST, UP, LC, dirty, C = ws
    T = ntype.shape[0]
    p = X.shape[1]
    for u in range(T):
        ntype[u] = ABSENT
    ntype[0] = LEAF
    allowed = np.zeros(p, np.bool_)
    ok = np.nonzero(featok)[0]
    one = np.int64(1)   # typed counts: a literal 1 would compile _stats_into and scan_splits again
    for u in range(T):
        if ntype[u] != LEAF or node_depth(u) >= D or 2 * u + 2 >= T:
            continue
        nI = rows_at(u, X, ntype, feat, thr, inI, I)
        if nI < 2:
            continue
        for j in range(p):
            allowed[j] = False
        if mtry >= len(ok):
            for j in ok:
                allowed[j] = True
        else:
            pick = np.random.permutation(len(ok))[:mtry]
            for j in pick:
                allowed[ok[j]] = True
        lows[0] = 2 * u + 1
        ups[0] = 2 * u + 2
        for r in range(nI):
            low_d[I[r]] = 2 * u + 1
            up_d[I[r]] = 2 * u + 2
        _stats_into(I, nI, up_d, Z, zlo, zhi, UP, ups, one)
        bj, bt, bc = scan_splits(I, nI, low_d, up_d, lows, one, ups, one, X, orderT, Z, zlo, zhi, allowed, kind, ip,
                                 fp, beta, C, inI, srt, ST, UP, LC, dirty, max_thr, random_cut)
        if bj < 0 and mtry < len(ok):   # none of the sampled features can split: try them all
            for j in ok:
                allowed[j] = True
            bj, bt, bc = scan_splits(I, nI, low_d, up_d, lows, one, ups, one, X, orderT, Z, zlo, zhi, allowed, kind,
                                     ip, fp, beta, C, inI, srt, ST, UP, LC, dirty, max_thr, random_cut)
        if bj >= 0:
            ntype[u] = SPLIT
            feat[u] = bj
            thr[u] = bt
            ntype[2 * u + 1] = LEAF
            ntype[2 * u + 2] = LEAF


@njit(cache=True, nogil=True)
def prune_bottom_up(ntype, feat, thr, X, Z, kind, ip, fp, pen, beta, C, ST):
    """Cost-complexity pruning: collapse every branch whose subtree does not beat the leaf by more than its
    splits' penalty (children before parents, so the result is the best pruning of the tree)."""
    T = ntype.shape[0]
    S = Z.shape[1]
    ST[:T, :S] = 0.0
    for i in range(X.shape[0]):
        u = 0
        while True:
            for s in range(S):
                ST[u, s] += Z[i, s]
            if ntype[u] != SPLIT:
                break
            u = 2 * u + 1 if X[i, feat[u]] < thr[u] else 2 * u + 2
    best = np.full(T, INF)
    for u in range(T - 1, -1, -1):
        if ntype[u] == ABSENT:
            continue
        leafc = leaf_cost(kind, ST[u], ip, fp, beta[u], C)
        if ntype[u] == LEAF:
            best[u] = leafc
            continue
        sub = best[2 * u + 1] + best[2 * u + 2] + pen
        if leafc <= sub:
            clear_subtree(ntype, 2 * u + 1)
            clear_subtree(ntype, 2 * u + 2)
            ntype[u] = LEAF
            best[u] = leafc
        else:
            best[u] = sub


@njit(cache=True, nogil=True)
def run_restarts(seeds, T, X, orderT, Z, zlo, zhi, featok, kind, ip, fp, pen, tol, D, mtry, max_thr,
                 random_starts, max_moves, p_lin, stop, counters):
    """Restarts (each seeded by its own seed, so results do not depend on threads): an RF-style start tree (or a
    random one, with probability ``random_starts``), then the local search. Returns the heap trees, their raw
    objectives and how many restarts ran (at least one, even when stopped)."""
    R = len(seeds)
    n, p = X.shape
    S = Z.shape[1]
    m = ip[0]
    NT = np.zeros((R, T), np.int8)
    FE = np.zeros((R, T), np.int64)
    TH = np.zeros((R, T))
    OB = np.full(R, INF)
    ws = new_workspace(n, p, S, T, p_lin)
    beta = np.zeros((T, m, p_lin + 1))
    done = 0
    for r in range(R):
        if stop[0] and r > 0:
            break
        np.random.seed(seeds[r])
        ntype = NT[r]
        feat = FE[r]
        thr = TH[r]
        rnd = np.random.random() < random_starts
        grow(ntype, feat, thr, X, orderT, Z, zlo, zhi, featok, kind, ip, fp, D, beta, ws, max_thr, mtry, rnd)
        counters[0] += local_search(ntype, feat, thr, X, orderT, Z, zlo, zhi, featok, kind, ip, fp, pen, tol, D, beta,
                                    ws, max_thr, max_moves, stop)
        OB[r] = tree_cost(ntype, feat, thr, X, Z, kind, ip, fp, pen, beta, ws[11], ws[7])
        done += 1
    return NT, FE, TH, OB, done


@njit(cache=True, nogil=True)
def greedy(T, X, orderT, Z, zlo, zhi, featok, kind, ip, fp, pen, D, max_thr, p_lin):
    """The deterministic greedy tree (every feature at every node), pruned with ``pen``."""
    n, p = X.shape
    S = Z.shape[1]
    m = ip[0]
    ntype = np.zeros(T, np.int8)
    feat = np.zeros(T, np.int64)
    thr = np.zeros(T)
    ws = new_workspace(n, p, S, T, p_lin)
    beta = np.zeros((T, m, p_lin + 1))
    # random_cut as a plain bool (a literal False would compile grow and scan_splits a second time)
    grow(ntype, feat, thr, X, orderT, Z, zlo, zhi, featok, kind, ip, fp, D, beta, ws, max_thr, p + 1, np.bool_(False))
    prune_bottom_up(ntype, feat, thr, X, Z, kind, ip, fp, pen, beta, ws[11], ws[7])
    return ntype, feat, thr


@njit(cache=True, nogil=True)
def improve(ntype, feat, thr, seed, X, orderT, Z, zlo, zhi, featok, kind, ip, fp, pen, tol, D, max_thr, max_moves,
            p_lin, stop):
    """The local search from a given heap tree (modified in place); returns the number of accepted moves."""
    n, p = X.shape
    S = Z.shape[1]
    T = ntype.shape[0]
    np.random.seed(seed)
    ws = new_workspace(n, p, S, T, p_lin)
    beta = np.zeros((T, ip[0], p_lin + 1))
    return local_search(ntype, feat, thr, X, orderT, Z, zlo, zhi, featok, kind, ip, fp, pen, tol, D, beta, ws,
                        max_thr, max_moves, stop)


# kernels here compile in functions of the heuristics kernel group (routing) and of stats_kernels: drop their cache
# when any of those files changed (the group drops its own cache on any edit of its files, and a kernel of it that
# only this module calls would otherwise never be compiled again); the files are listed in opttrees/kernel_modules.py
guard_cache(__name__)
