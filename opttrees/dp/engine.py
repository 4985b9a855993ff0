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

The depth-two solver is :mod:`opttrees.dp.depth_two`; the option slots, counters, cache entries and leaf costs
that every part reads are :mod:`opttrees.dp.engine_base`.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .depth_two import _depth_two, _stats_of
from .engine_base import (INF, N_BOUND_PRUNES, N_CACHE_HITS, N_SIM_PRUNES, N_SUBPROBLEMS, O_HAS_FCOST, O_MINLEAF,
                          O_USE_D2, O_USE_DATASET, O_USE_LB, O_USE_SIM, O_USE_UB, _count, _entry, _feature_cost,
                          _lookup, _no_extra, _norm, _store, _weight, leaf_cost)


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
    """The depth-two solver, the cache's helpers and leaf costs (and the squared loss under them) are compiled in
    from other files: drop this module's cache when any of them changed (see :func:`opttrees.jit.fresh_cache`)."""
    from ..jit import guard_cache

    guard_cache(__name__)   # the files: opttrees/kernel_modules.py


_guard_cache()
