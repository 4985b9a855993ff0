"""Dunn's local search (Algorithm 2.1 with first improvement): node visits in random order, each trying
a new parallel split with the children fixed, the promotion of either child, and hyperplane splits
(Algorithm 3.2); the rows kept in leaf order, the move cache and the order cache make visits cheap.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .losses import place_loss
from .routing import (
    HYP, is_desc, LEAF, node_depth, PAR, promote, route_block, subtree_complexity, subtree_leaves,
    tree_objective_raw)
from .scans import (
    accept_bound, CMASK, leaf_scratch, NO_BOUND, row_scratch, unit_binary, unit_node_counts, unit_node_counts_blocks)
from .movecache import mc_get, mc_put, subtree_key
from .orders import cache_entry, cache_path, ORD_ALL, ORD_BITMAP, ORD_FILTER, ORD_FILTER_ALL, ORD_OWN
from .splits import best_parallel, best_parallel_unit, hyper_descent


# counters (int64 array) filled by local_search: what the search spends its time on
C_PASSES, C_VISITS, C_HITS, C_SCANNED, C_MOVES, C_ROWS = 0, 1, 2, 3, 4, 5


N_COUNTERS = 6


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


@njit(cache=True, nogil=True)
def local_search_ranked(tree, prob, cfg, ogT, arrays, ordc, trace, stop, cache, counters):
    """Algorithm 2.1 with first-improvement (trick 4) from the start tree ``tree`` (a :class:`.structs.HeapTree`,
    changed in place): returns the number of accepted moves. prob: a :class:`.structs.Problem`; cfg: a
    :class:`.structs.Settings` (kind, D, nmin, pen, hyper, H, tol and max_moves are read); ogT and arrays
    (a :class:`.structs.SearchArrays`): :func:`.orders.search_arrays`; ordc: :func:`.orders.order_cache`.

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
    ntype, feat, thr, coef = tree
    X, Xs, grp, orderT, grpT, Z, featok = prob
    kind, D, nmin, pen, hyper, H, tol, max_moves = cfg.kind, cfg.D, cfg.nmin, cfg.pen, cfg.hyper, cfg.H, cfg.tol, \
        cfg.max_moves
    rankT, XT, rh = arrays
    n, p = X.shape
    T = ntype.shape[0]
    S = Z.shape[1]
    leafpos = np.empty(n, np.int64)
    inI, I, low_d, up_d, fixlow, movers, vals = row_scratch(n)
    dest = np.empty(n, np.int64)
    V = np.empty(n)
    rbuf = np.empty(n, np.int64)
    rtmp = np.empty(n, np.int64)
    stats, cnt, lloss, bstats, bcnt, blloss = leaf_scratch(T, S)
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
    tot, feas = tree_objective_raw(tree, prob, kind, nmin, pen, XT, leafpos, stats, cnt, leaves, rbuf, rtmp)
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
                    moves = after_move(tree, prob, kind, nmin, pen, t, I, nI, leafpos, clean,
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
                before, _ = tree_objective_raw(tree, prob, kind, nmin, pen, XT, leafpos, stats, cnt, leaves, rbuf, rtmp)
                old_type = ntype[t]
                old_feat = feat[t]
                old_thr = thr[t]
                a[:] = coef[t]
                old_cl = ntype[cl] if cl < T else 0
                old_cu = ntype[cu] if cu < T else 0
                apply_move(ntype, feat, thr, coef, t, move, pj, pt, besta, bb, is_leaf)
                after, feas = tree_objective_raw(tree, prob, kind, nmin, pen, XT, leafpos, stats, cnt, leaves, rbuf, rtmp)
                if not (feas and after < before - tol):
                    ntype[t] = old_type
                    feat[t] = old_feat
                    thr[t] = old_thr
                    coef[t] = a
                    if cl < T:
                        ntype[cl] = old_cl
                        ntype[cu] = old_cu
                    tree_objective_raw(tree, prob, kind, nmin, pen, XT, leafpos, stats, cnt, leaves, rbuf, rtmp)
                    clean[t] = True
                    continue
            else:
                apply_move(ntype, feat, thr, coef, t, move, pj, pt, besta, bb, is_leaf)
            moves = after_move(tree, prob, kind, nmin, pen, t, I, nI, leafpos, clean, moves,
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
def after_move(tree, prob, kind, nmin, pen, t, I, nI, leafpos, clean, moves, trace, stats, cnt, leaves, move, low_d,
               up_d, depth, rbuf, rtmp, XT, cok):
    """Bookkeeping after an accepted move at t: mark t, its ancestors and everything below it dirty,
    invalidate the cached orders of t's descendants (``cok``; their rows change, t's do not), re-route t's
    points and record the objective in ``trace``; returns the new move count.

    move 1 (a parallel split with the children fixed) and 2 / 3 (promotions) reuse the visit's low_d /
    up_d (each point's leaf in either child subtree) instead of walking the tree again; move 0 (a cache
    hit, where they were not computed) and 4 (hyperplane) route from t. ``depth``: node depths by position."""
    ntype, feat, thr, coef = tree
    X, Xs = prob.X, prob.Xs
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
        tot, feas = tree_objective_raw(tree, prob, kind, nmin, pen, XT, leafpos, stats, cnt, leaves, rbuf, rtmp)
        if moves < trace.shape[0]:
            trace[moves] = tot
    return moves
