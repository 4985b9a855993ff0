"""The subset DP of :mod:`opttrees.dp.recursion` in numba, for tasks whose leaf cost is a function of summed
per-row statistics that numba can evaluate: OPT prescriptive trees (constant counterfactuals) and policy trees.

Why a kernel of its own rather than :mod:`opttrees.dp.engine`: the engine's leaf costs are fixed kinds (class
counts, a cost matrix, squared error) and its caches carry node budgets and path costs. Here a leaf's cost is a
minimum over the *eligible* treatments (``n_treatment`` rows of the treatment in the leaf) of a per-treatment
statistic, plus a prediction error for OPT, which is neither. The search is exactly the Python recursion
(:class:`opttrees.dp.recursion.SubsetRecursion` with the task of :mod:`opttrees.prescriptive.dp`), so both give
the same optimum and, up to floating-point ties, the same tree::

    best(rows, d) = min( leaf(rows),  min_f  pen + best(rows with x_f = 0, d - 1) + best(rows with x_f = 1, d - 1) )

- depth 1: every column's two leaves from one pass over the rows (their statistics with x_f = 1, and the
  node's total minus them);
- depth 2: *pair statistics* (the summed statistics of the rows with x_i = 1 and x_j = 1 for every pair of
  columns that splits the node, the MurTree/STreeD depth-two idea) give every depth-two tree by arithmetic;
  when the pairs of a node would take more than ``pair_cap`` floats, its root splits are searched one at a time;
- deeper: the columns in the order of their depth-one cost (stable), a split abandoned as soon as ``pen`` plus
  its left child reaches the best so far (costs are >= 0), each child solved and cached by row set.

Leaf costs (as :func:`opttrees.prescriptive.objective.leaf_costs`, raw units): ``KIND_OPT`` statistics per
treatment t are [count, Σy, Σy²] at 3t..3t+2, cost ``a · min_t N·Σy_t / n_t + b · Σ_t SSE_t``; ``KIND_POLICY``
statistics are [Γ_0..Γ_{m-1}, count_0..count_{m-1}], cost ``a · min_t Γ_t``; the minimum runs over treatments
with ``n_treatment`` rows, and a leaf with fewer than ``min_samples_leaf`` rows or no eligible treatment costs
+inf. The caller makes every cost >= 0 (a constant shift), which is what the pruning needs.

Caching: a numba dict keyed by a 128-bit Zobrist hash of the row set (two sums of random 64-bit words) and the
depth; an entry is stored only when its subproblem was solved to the end, so a search stopped by ``stop[0]``
(set by :func:`opttrees.jit.run_threads` at the time limit or Ctrl-C) leaves only exact entries, and the next
depth of the iterative deepening reuses them. The recursion runs on an explicit stack (numba cannot load a
cached recursive function, see :mod:`opttrees.dp.engine`).

Conventions: a column sends a row left when x_f = 0 and right when x_f = 1; the returned heap has the children
of slot u at 2u+1 and 2u+2, -1 a leaf, -2 absent.
"""
from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.typed import Dict

from ..jit import guard_cache

KIND_OPT, KIND_POLICY = 0, 1
INF = np.inf
KEY = types.Tuple((types.uint64, types.uint64, types.int64))
VALUE = types.Tuple((types.float64, types.int64))

# task ``ip``: [kind, m, n_treatment, min_samples_leaf, pair_cap (floats of pair statistics, 0: never)]
I_KIND, I_M, I_NT, I_MINL, I_PAIRCAP = range(5)
# task ``fp``: [a, b, pen]
F_A, F_B, F_PEN = range(3)
# counters
N_SUBPROBLEMS, N_CACHE_HITS, N_D2_CALLS, N_D2_FALLBACKS = range(4)
N_COUNTERS = 4

ENTER, NEXT, RETURN = 0, 1, 2


@njit(cache=True)
def new_cache():
    return Dict.empty(KEY, VALUE)


@njit(cache=True, nogil=True)
def row_columns(X):
    """Each row's columns with x = 1, ascending, as (rowptr, columns) (CSR; int32 columns: half the memory)."""
    n, ncol = X.shape
    rowptr = np.zeros(n + 1, np.int64)
    for r in range(n):
        c = 0
        for f in range(ncol):
            if X[r, f] != 0:
                c += 1
        rowptr[r + 1] = rowptr[r] + c
    cols = np.empty(rowptr[n], np.int32)
    for r in range(n):
        k = rowptr[r]
        for f in range(ncol):
            if X[r, f] != 0:
                cols[k] = f
                k += 1
    return rowptr, cols


@njit(cache=True, nogil=True)
def constant_leaf(kind, v, m, nt, minl, a, b):
    """(raw cost, prescribed treatment) of a leaf with constant counterfactuals (OPT) or teacher scores (policy)
    from its summed statistics ``v``; (inf, -1) when infeasible. The one copy of ``leaf_costs``' formulas in
    compiled code (the prescriptive search's kernels call it too). Ties go to the lowest treatment index."""
    best = INF
    tb = -1
    if minl < 1:
        minl = 1
    N = 0.0
    if kind == KIND_OPT:
        if nt < 1:   # a prescribed treatment needs an observed mean (policy trees may prescribe unobserved ones)
            nt = 1
        for t in range(m):
            N += v[3 * t]
        if N + 0.5 < minl:
            return INF, -1
        sse = 0.0
        for t in range(m):
            c = v[3 * t]
            if c > 0.5:
                s1 = v[3 * t + 1]
                e = v[3 * t + 2] - s1 * s1 / c
                if e > 0.0:
                    sse += e
                if c + 0.5 >= nt:
                    pr = N * s1 / c
                    if pr < best:
                        best = pr
                        tb = t
        if tb < 0:
            return INF, -1
        return a * best + b * sse, tb
    for t in range(m):
        N += v[m + t]
    if N + 0.5 < minl:
        return INF, -1
    for t in range(m):
        if v[m + t] + 0.5 >= nt and v[t] < best:
            best = v[t]
            tb = t
    if tb < 0:
        return INF, -1
    return a * best, tb


@njit(cache=True, nogil=True)
def leaf_cost(v, ip, fp):
    """Raw cost of one leaf with summed statistics ``v``; +inf when infeasible (``leaf_costs``' formulas)."""
    return constant_leaf(ip[I_KIND], v, ip[I_M], ip[I_NT], ip[I_MINL], fp[F_A], fp[F_B])[0]


@njit(cache=True, nogil=True)
def _total(rows, nr, Z, zlo, zhi, out):
    for s in range(out.shape[0]):
        out[s] = 0.0
    for k in range(nr):
        r = rows[k]
        for s in range(zlo[r], zhi[r]):
            out[s] += Z[r, s]


@njit(cache=True, nogil=True)
def _column_sums(rows, nr, Z, zlo, zhi, rowptr, rowcols, R, nright):
    """R[f] = statistics of the rows with x_f = 1, nright[f] = their number (every column)."""
    R[:, :] = 0.0
    nright[:] = 0
    for k in range(nr):
        r = rows[k]
        lo = zlo[r]
        hi = zhi[r]
        for t in range(rowptr[r], rowptr[r + 1]):
            f = rowcols[t]
            nright[f] += 1
            for s in range(lo, hi):
                R[f, s] += Z[r, s]


@njit(cache=True, nogil=True)
def _depth_one(rows, nr, tot, data, task, ws):
    """(cost, column) of the best depth-one split of ``rows`` plus ``pen`` (inf, -1 when none is feasible)."""
    XT, rowptr, rowcols, Z, zlo, zhi, h1, h2 = data
    ip, fp = task
    R, nright, v = ws[1], ws[2], ws[3]
    _column_sums(rows, nr, Z, zlo, zhi, rowptr, rowcols, R, nright)
    best = INF
    bf = -1
    S = tot.shape[0]
    for f in range(R.shape[0]):
        if nright[f] == 0 or nright[f] == nr:
            continue
        for s in range(S):
            v[s] = tot[s] - R[f, s]
        c = leaf_cost(v, ip, fp) + leaf_cost(R[f], ip, fp) + fp[F_PEN]
        if c < best:
            best = c
            bf = f
    return best, bf


@njit(cache=True, nogil=True)
def _depth_two(rows, nr, tot, leaf, data, task, ws, stats, stop):
    """(cost, column, solved) of the best tree of depth <= 2 for ``rows`` from pair statistics; solved False when
    the pairs would exceed the cap (the caller then searches the root splits one at a time) or ``stop[0]`` was
    set (polled per row and per root column: a large node's pairs take seconds)."""
    XT, rowptr, rowcols, Z, zlo, zhi, h1, h2 = data
    ip, fp = task
    R, nright, v, v2, comp, act, P, rowact = ws[1], ws[2], ws[3], ws[4], ws[5], ws[6], ws[7], ws[8]
    pen = fp[F_PEN]
    S = tot.shape[0]
    ncol = R.shape[0]
    # the columns that split the node, numbered 0..na-1 in column order
    nright[:] = 0
    for k in range(nr):
        r = rows[k]
        for t in range(rowptr[r], rowptr[r + 1]):
            nright[rowcols[t]] += 1
    na = 0
    for f in range(ncol):
        if nright[f] > 0 and nright[f] < nr:
            comp[f] = na
            act[na] = f
            na += 1
        else:
            comp[f] = -1
    if na * na * S > ip[I_PAIRCAP]:
        stats[N_D2_FALLBACKS] += 1
        return leaf, -1, False
    stats[N_D2_CALLS] += 1
    if na == 0:
        return leaf, -1, True
    P[:na * na * S] = 0.0
    for k in range(nr):
        if stop[0] != 0:
            return INF, -1, False
        r = rows[k]
        q = 0
        for t in range(rowptr[r], rowptr[r + 1]):
            c = comp[rowcols[t]]
            if c >= 0:
                rowact[q] = c
                q += 1
        lo = zlo[r]
        hi = zhi[r]
        for u in range(q):
            base_i = rowact[u] * na
            for w in range(u, q):
                base = (base_i + rowact[w]) * S
                for s in range(lo, hi):
                    P[base + s] += Z[r, s]
    best = INF
    bi = -1
    for i in range(na):
        if stop[0] != 0:
            return INF, -1, False
        di = (i * na + i) * S
        # right child (x_i = 1): a leaf, or split on j
        bestR = leaf_cost(P[di:di + S], ip, fp)
        for s in range(S):
            v[s] = tot[s] - P[di + s]
        bestL = leaf_cost(v, ip, fp)
        for j in range(na):
            if j == i:
                continue
            ij = ((i * na + j) if i < j else (j * na + i)) * S
            dj = (j * na + j) * S
            # right child split on j: rows with x_i = 1 and x_j = 1, and x_i = 1 and x_j = 0
            for s in range(S):
                v2[s] = P[di + s] - P[ij + s]
            c = leaf_cost(P[ij:ij + S], ip, fp) + leaf_cost(v2, ip, fp) + pen
            if c < bestR:
                bestR = c
            # left child split on j: rows with x_i = 0 and x_j = 1 (A), and x_i = 0 and x_j = 0 (L - A)
            for s in range(S):
                a = P[dj + s] - P[ij + s]
                v[s] = a
                v2[s] = tot[s] - P[di + s] - a
            c = leaf_cost(v, ip, fp) + leaf_cost(v2, ip, fp) + pen
            if c < bestL:
                bestL = c
        c = bestL + bestR + pen
        if c < best:
            best = c
            bi = act[i]
    if best < leaf:
        return best, bi, True
    return leaf, -1, True


@njit(cache=True, nogil=True)
def search(rows0, n0, d0, data, task, ws, cache, stats, stop, out):
    """The best tree of depth <= ``d0`` for ``rows0[:n0]``: ``out`` = [cost, root column (-1 leaf), stopped].

    Every finished subproblem of depth >= 1 is cached (exact); a search cut short by ``stop[0]`` stores nothing
    it has not finished and reports ``out[2] = 1``."""
    XT, rowptr, rowcols, Z, zlo, zhi, h1, h2 = data
    ip, fp = task
    bufs, tot, order, c1 = ws[0], ws[9], ws[10], ws[11]
    R, nright, v = ws[1], ws[2], ws[3]
    pen = fp[F_PEN]
    S = Z.shape[1]
    L = d0 + 1
    Fside = np.zeros(L, np.int64)
    Fn = np.zeros(L, np.int64)
    Fd = np.zeros(L, np.int64)
    Fh1 = np.zeros(L, np.uint64)
    Fh2 = np.zeros(L, np.uint64)
    Fbest = np.zeros(L)
    Fbestf = np.zeros(L, np.int64)
    Fk = np.zeros(L, np.int64)
    Fna = np.zeros(L, np.int64)
    Ff = np.zeros(L, np.int64)
    FcL = np.zeros(L)
    Fleft = np.zeros(L, np.int64)          # 1 while the left child is being solved
    Frh1 = np.zeros(L, np.uint64)          # the right child's hashes, kept while the left one is solved
    Frh2 = np.zeros(L, np.uint64)
    a1 = np.uint64(0)
    a2 = np.uint64(0)
    for k in range(n0):
        bufs[0, 0, k] = rows0[k]
        a1 += h1[rows0[k]]
        a2 += h2[rows0[k]]
    Fn[0] = n0
    Fd[0] = d0
    Fh1[0] = a1
    Fh2[0] = a2
    lv = 0
    mode = ENTER
    ret = 0.0
    retf = np.int64(-1)
    out[2] = 0.0
    while True:
        if mode == ENTER:
            if stop[0] != 0:
                out[2] = 1.0
                return
            rows = bufs[lv, Fside[lv]]
            nr = Fn[lv]
            d = Fd[lv]
            key = (Fh1[lv], Fh2[lv], np.int64(d))
            if d >= 1 and nr >= 2 and key in cache:
                stats[N_CACHE_HITS] += 1
                e = cache[key]
                ret = e[0]
                retf = e[1]
                mode = RETURN
                continue
            stats[N_SUBPROBLEMS] += 1
            _total(rows, nr, Z, zlo, zhi, tot)
            leaf = leaf_cost(tot, ip, fp)
            ret = leaf
            retf = -1
            mode = RETURN
            if d < 1 or nr < 2:
                continue
            if d == 1:
                c, f = _depth_one(rows, nr, tot, data, task, ws)
                if c < leaf:
                    ret = c
                    retf = f
                cache[key] = (np.float64(ret), np.int64(retf))
                continue
            if d == 2:
                c, f, solved = _depth_two(rows, nr, tot, leaf, data, task, ws, stats, stop)
                if stop[0] != 0:
                    out[2] = 1.0
                    return
                if solved:
                    ret = c
                    retf = f
                    cache[key] = (np.float64(ret), np.int64(retf))
                    continue
            # the split columns in the order of their depth-one cost (stable)
            _column_sums(rows, nr, Z, zlo, zhi, rowptr, rowcols, R, nright)
            na = 0
            for f in range(R.shape[0]):
                if nright[f] == 0 or nright[f] == nr:
                    continue
                for s in range(S):
                    v[s] = tot[s] - R[f, s]
                c1[na] = leaf_cost(v, ip, fp) + leaf_cost(R[f], ip, fp)
                order[lv, na] = f
                na += 1
            perm = np.argsort(c1[:na], kind="mergesort")
            order[lv, :na] = order[lv, :na][perm]
            Fna[lv] = na
            Fk[lv] = 0
            Fbest[lv] = leaf
            Fbestf[lv] = -1
            mode = NEXT
            continue
        if mode == NEXT:
            pushed = False
            while Fk[lv] < Fna[lv]:
                if pen >= Fbest[lv]:
                    break
                f = order[lv, Fk[lv]]
                Fk[lv] += 1
                rows = bufs[lv, Fside[lv]]
                nr = Fn[lv]
                nl = 0
                nrt = 0
                l1 = np.uint64(0)
                l2 = np.uint64(0)
                xf = XT[f]
                for k in range(nr):
                    r = rows[k]
                    if xf[r] == 0:
                        bufs[lv + 1, 0, nl] = r
                        nl += 1
                        l1 += h1[r]
                        l2 += h2[r]
                    else:
                        bufs[lv + 1, 1, nrt] = r
                        nrt += 1
                Ff[lv] = f
                Frh1[lv] = Fh1[lv] - l1
                Frh2[lv] = Fh2[lv] - l2
                Fleft[lv] = 1
                Fside[lv + 1] = 0
                Fn[lv + 1] = nl
                Fd[lv + 1] = Fd[lv] - 1
                Fh1[lv + 1] = l1
                Fh2[lv + 1] = l2
                lv += 1
                mode = ENTER
                pushed = True
                break
            if not pushed:
                ret = Fbest[lv]
                retf = Fbestf[lv]
                cache[(Fh1[lv], Fh2[lv], np.int64(Fd[lv]))] = (np.float64(ret), np.int64(retf))
                mode = RETURN
            continue
        # RETURN: ``ret`` is the optimum of frame lv; hand it to its parent
        if lv == 0:
            out[0] = ret
            out[1] = retf
            return
        lv -= 1
        if Fleft[lv] == 1:
            c = pen + ret
            if c >= Fbest[lv]:
                mode = NEXT
                continue
            FcL[lv] = c
            Fleft[lv] = 0
            Fside[lv + 1] = 1
            Fn[lv + 1] = Fn[lv] - Fn[lv + 1]
            Fd[lv + 1] = Fd[lv] - 1
            Fh1[lv + 1] = Frh1[lv]
            Fh2[lv + 1] = Frh2[lv]
            lv += 1
            mode = ENTER
            continue
        c = FcL[lv] + ret
        if c < Fbest[lv]:
            Fbest[lv] = c
            Fbestf[lv] = Ff[lv]
        mode = NEXT


@njit(cache=True, nogil=True)
def build(d0, data, task, ws, cache, stats, heap):
    """Write the best tree of depth <= ``d0`` of all rows into ``heap`` (from the cache after a finished
    :func:`search` of that depth; depth-one children of depth-two trees are solved again). Returns its cost."""
    XT = data[0]
    n = XT.shape[1]
    T = heap.shape[0]
    node_rows = np.empty((T, n), np.int64)
    node_n = np.zeros(T, np.int64)
    node_d = np.zeros(T, np.int64)
    heap[:] = -2
    for k in range(n):
        node_rows[0, k] = k
    node_n[0] = n
    node_d[0] = d0
    heap[0] = -1
    out = np.zeros(3)
    no_stop = np.zeros(1, np.int64)
    cost = 0.0
    for u in range(T):
        if heap[u] == -2:
            continue
        search(node_rows[u], node_n[u], node_d[u], data, task, ws, cache, stats, no_stop, out)
        if u == 0:
            cost = out[0]
        f = np.int64(out[1])
        heap[u] = f
        if f < 0:
            continue
        a, b = 2 * u + 1, 2 * u + 2
        na = 0
        nb = 0
        for k in range(node_n[u]):
            r = node_rows[u, k]
            if XT[f, r] == 0:
                node_rows[a, na] = r
                na += 1
            else:
                node_rows[b, nb] = r
                nb += 1
        node_n[a] = na
        node_n[b] = nb
        node_d[a] = node_d[u] - 1
        node_d[b] = node_d[u] - 1
        heap[a] = -1
        heap[b] = -1
    return cost


def workspace(n: int, ncol: int, S: int, max_depth: int, row_ones: int, pair_cap: int):
    """The kernels' scratch arrays (one search at a time): row buffers per level, column sums, pair statistics."""
    L = max_depth + 1
    pairs = min(pair_cap, ncol * ncol * S)
    return (np.zeros((L + 1, 2, max(n, 1)), np.int64),     # 0 rows of each level (left, right)
            np.zeros((ncol, S)),                           # 1 column sums
            np.zeros(ncol, np.int64),                      # 2 rows with x_f = 1
            np.zeros(S), np.zeros(S),                      # 3, 4 statistics scratch
            np.zeros(ncol, np.int64),                      # 5 column -> its number among the splitting ones
            np.zeros(ncol, np.int64),                      # 6 ... and back
            np.zeros(max(pairs, 1)),                       # 7 pair statistics (upper triangle used)
            np.zeros(max(row_ones, 1), np.int64),          # 8 one row's splitting columns
            np.zeros(S),                                   # 9 a node's total
            np.zeros((L, max(ncol, 1)), np.int64),         # 10 split order per level
            np.zeros(max(ncol, 1)))                        # 11 depth-one costs (ordering)


guard_cache(__name__)   # a stale numba cache of this module never runs old code
