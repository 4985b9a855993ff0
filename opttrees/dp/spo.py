"""Exact SPO trees over a binarisation: the dynamic program with a decision oracle in the leaves.

A leaf holding rows R decides w*(sum of w_i c_i over R) (= w* of their mean cost) and pays the regret
sum_i w_i (c_i . w* - z*(c_i)), in min-cost form (``sign * c``). That leaf cost is separable, so the tree
search is the same recursion as the numba engine; what differs is that a leaf's cost needs the oracle, which
numba cannot call. So the search runs in Python (:class:`opttrees.dp.recursion.SubsetRecursion`, cached by row
set) and leaves go to the DecisionProblem in batches. A leaf's cost depends only on two sums over its rows: the
weighted cost vectors and the weighted own optima.

Two engines; same optimum, and the same tree where there are no ties (tested against each other and against
brute force):

``"pairs"`` (the default) solves every depth-two subproblem at once, so the recursion only runs above depth
two. The columns that can split it leave at least ``min_samples_leaf`` rows on both sides; for every pair of
them, the sums over the rows with x_i = 1 and x_j = 1 give all four leaves of "split on i, then on j" by
inclusion and exclusion, and a leaf is wanted only when some split that uses it keeps ``min_samples_leaf`` rows
on both sides (the symmetric ones once). The pair sums come from *chains*: the threshold columns of one feature
are nested (x >= t2 implies x >= t1 for t2 > t1), so a row's level in a chain (how many of its columns are 1)
says which of them hold, and a 2-D histogram of the levels in two chains, summed from the top in both
directions, holds the pair sums of all their thresholds (O(rows + thresholds^2) per pair of features instead of
O(rows x thresholds^2) for the dense product ``X^T diag(v) X``, which is used when it is cheaper, e.g. for
columns that form no chains). Wanted leaves are looked up in a cache of leaf costs shared by all subproblems
(:class:`_LeafCache`), keyed exactly by the splits that define the leaf (a depth-three leaf is wanted by each of
the three depth-two subproblems that contain it); only the rest have their sums made and go to the oracle, in
one call per subproblem. BLAS is held to one thread meanwhile: the products are small, and OpenBLAS threads cost
more than they save on them (they made the reference engine 3-4x slower on a busy 2-core machine).

``"python"`` (``_engine="python"``, the reference) runs the recursion down to depth one: every subproblem sends
its candidate leaves (both sides of every binary column, and the node itself) through one oracle call.

Objective (the SPOT one, :mod:`opttrees.spo.objective`): total weighted regret / N + alpha * splits with
N = sum_i w_i |z*(c_i)|.
"""
from __future__ import annotations

import contextlib
import time

import numpy as np
from scipy.sparse import csc_matrix

from ..data.prepared import _as_2d_float, check_sample_weight
from ..data.binarizers import Binarizer
from ..errors import InputError
from ..interrupt import Budget
from ..oracles.base import DecisionProblem
from ..solvers.result import Incumbent, finish
from ..spo.objective import spot_norm
from .api import heap_to_tree
from .common import _check_alpha, _check_int
from .recursion import Node, Stopped, SubsetRecursion

#: the Python search is exponential in depth above the depth-two solver; deeper trees are out of reach
SPO_MAX_DEPTH = 4
#: bytes the pair sums of one depth-two subproblem may take (histograms, or columns x columns x statistics);
#: beyond it the subproblem is left to the recursion
MAX_PAIR_BYTES = 256 * 1024 ** 2
#: floats in one row block of the dense pair product (rows x columns x statistics): 64 MB
PAIR_BLOCK_FLOATS = 8 * 1024 ** 2
#: how the depth-two solver gets its pair sums: "auto" (the cheaper), "chains" or "dense" (tests force each)
PAIR_SUMS = "auto"
#: leaf costs the depth-two solver keeps across subproblems (about 100 bytes each); a full cache is emptied
LEAF_CACHE_SIZE = 2 ** 20


class SPOTask:
    """Marks a DecisionProblem for :func:`solve_dp_spo` (checks that it is one)."""

    tree_task = "spo"

    def __init__(self, problem):
        if not isinstance(problem, DecisionProblem):
            raise InputError(f"problem must be an opttrees.oracles.DecisionProblem; got {type(problem).__name__}")
        self.problem = problem


def _chains(Xb: np.ndarray, feature) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split the 0/1 columns into chains of nested 1-sets (one per feature, else single columns).

    Returns (level of every row in every chain (n, chains), the chain of every column, its rank in the chain):
    column c holds exactly the rows whose level in its chain is >= rank[c] (1 = the largest set). A feature
    whose columns are not nested on ``Xb`` (never for thresholds ``x >= t``) gives one chain per column."""
    m = Xb.shape[1]
    feature = np.arange(m) if feature is None or len(feature) != m else np.asarray(feature)
    chain = np.zeros(m, np.int64)
    rank = np.ones(m, np.int64)
    levels: list[np.ndarray] = []
    for f in np.unique(feature):
        cols = np.nonzero(feature == f)[0]
        cols = cols[np.argsort(-Xb[:, cols].sum(axis=0), kind="stable")]
        Xg = Xb[:, cols]
        groups = [cols] if bool(np.all(Xg[:, 1:] <= Xg[:, :-1])) else [cols[i:i + 1] for i in range(len(cols))]
        for g in groups:
            chain[g] = len(levels)
            rank[g] = np.arange(1, len(g) + 1)
            levels.append(Xb[:, g].sum(axis=1))
    L = np.stack(levels, axis=1).astype(np.int64) if levels else np.zeros((Xb.shape[0], 0), np.int64)
    return L, chain, rank


def _pair_sums_dense(XK: np.ndarray, V: np.ndarray, budget: Budget) -> np.ndarray:
    """P[i, j] = sum of V over the rows with x_i = 1 and x_j = 1: (k, k, statistics), in row blocks."""
    nr, k = XK.shape
    c = V.shape[1]
    P = np.zeros((k, k * c))
    step = max(1, PAIR_BLOCK_FLOATS // max(1, k * c))
    for a in range(0, nr, step):
        if budget.stop():
            raise Stopped
        Xa = XK[a:a + step]
        P += Xa.T @ (Xa[:, :, None] * V[a:a + step, None, :]).reshape(len(Xa), k * c)
    return P.reshape(k, k, c)


def _from_top(hist: np.ndarray, axes: int) -> np.ndarray:
    """Sums from the top along the ``axes`` level axes after the first of ``hist`` (blocks, Q, [Q,] statistics):
    entry a (, b) becomes the sum over levels >= a (, >= b)."""
    Q = hist.shape[1]
    if Q <= 32:                                # products with T[a, x] = 1 for x >= a: few numpy calls
        T = np.triu(np.ones((Q, Q)))
        out = np.matmul(T, hist.reshape(len(hist), Q, -1)).reshape(hist.shape)
        if axes == 2:
            out = np.matmul(T, out.reshape(-1, Q, hist.shape[-1])).reshape(hist.shape)
        return out
    out = hist[:, ::-1].cumsum(axis=1)[:, ::-1]  # cumulative sums: fewer operations, each slower
    return out[:, :, ::-1].cumsum(axis=2)[:, :, ::-1] if axes == 2 else out


class _ChainSums:
    """Sums of the statistics V over a subproblem's rows with x_i = 1, and with x_i = 1 and x_j = 1, from the
    chains (:func:`_chains`): ``levels`` (rows, chains), ``chain``/``rank`` of every column.

    Column i holds the rows whose level in its chain is >= its rank, so a histogram of the rows over their
    level in each chain, summed from the top, holds every column's sums; a histogram over (level in g, level
    in h) for every pair of chains g < h, summed from the top in both directions, holds the pair sums of all
    their columns (each histogram is one sparse product: O(rows + levels^2) per pair of features, against
    O(rows x columns^2) for the dense product). Two columns of one chain: the pair is the deeper column."""

    def __init__(self, levels: np.ndarray, V: np.ndarray, chain: np.ndarray, rank: np.ndarray, Q: int):
        nr, G = levels.shape
        c = V.shape[1]
        self.Q, self.chain, self.rank = Q, chain, rank                 # Q: more than every rank and level
        self.one, self.two = np.zeros((1, c)), np.zeros((1, c))
        if G:
            cell = np.arange(G)[None, :] * Q + levels                                    # (rows, chains)
            M = csc_matrix((np.ones(nr * G), cell.ravel(), np.arange(0, nr * G + 1, G)), shape=(G * Q, nr))
            self.one = _from_top(np.asarray(M @ V).reshape(G, Q, c), 1).reshape(G * Q, c)
        gi, hi = np.triu_indices(G, 1)
        npairs = len(gi)
        if npairs:
            cell = (np.arange(npairs)[None, :] * Q + levels[:, gi]) * Q + levels[:, hi]  # (rows, chain pairs)
            M = csc_matrix((np.ones(nr * npairs), cell.ravel(), np.arange(0, nr * npairs + 1, npairs)),
                           shape=(npairs * Q * Q, nr))                                    # cell x row: 1 if in
            self.two = _from_top(np.asarray(M @ V).reshape(npairs, Q, Q, c), 2).reshape(npairs * Q * Q, c)
        self.pid = np.zeros((G, G), np.int64)
        self.pid[gi, hi] = self.pid[hi, gi] = np.arange(npairs)

    def single(self, cols: np.ndarray) -> np.ndarray:
        """(columns, statistics): sums over the rows with x_i = 1."""
        return self.one[self.chain[cols] * self.Q + self.rank[cols]]

    def pairs(self, i: np.ndarray, j: np.ndarray, stat: int | None = None) -> np.ndarray:
        """Sums over the rows with x_i = 1 and x_j = 1 for the column pairs (i[t], j[t]) (any shape): every
        statistic, or ``stat`` only."""
        Q = self.Q
        ci, cj, ri, rj = self.chain[i], self.chain[j], self.rank[i], self.rank[j]
        same = ci == cj
        lo = ci < cj
        flat = np.where(same, 0, (self.pid[ci, cj] * Q + np.where(lo, ri, rj)) * Q + np.where(lo, rj, ri))
        one = self.one if stat is None else self.one[:, stat]
        out = np.take(self.two if stat is None else self.two[:, stat], flat, axis=0)
        if same.any():
            out[same] = one[(ci * Q + np.maximum(ri, rj))[same]]
        return out


class _LeafCache:
    """Floats by non-negative int64 key, at most ``size`` of them (a full cache is emptied): open addressing with
    linear probing in two numpy arrays that double as they fill, so that a batch of lookups or inserts is a few
    vectorised passes (a dict costs about 0.5 us per key from numpy, as much as a shortest-path oracle per row)."""

    def __init__(self, size: int):
        self.size = int(size)
        self._alloc(12)

    def _alloc(self, bits: int) -> None:
        self.bits = bits
        self.mask = (1 << bits) - 1
        self.keys = np.full(self.mask + 1, -1, np.int64)
        self.vals = np.zeros(self.mask + 1)
        self.n = 0

    def _home(self, keys: np.ndarray) -> np.ndarray:
        h = keys.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)          # Fibonacci hashing (wraps mod 2^64)
        return (h >> np.uint64(64 - self.bits)).astype(np.int64)

    def get(self, keys: np.ndarray) -> np.ndarray:
        """The value of every key, NaN where absent."""
        out = np.full(len(keys), np.nan)
        todo, pos = np.arange(len(keys)), self._home(keys)
        while len(todo):
            k = self.keys[pos]
            hit = k == keys[todo]
            out[todo[hit]] = self.vals[pos[hit]]
            on = ~hit & (k >= 0)                                            # occupied by another key: probe on
            todo, pos = todo[on], (pos[on] + 1) & self.mask
        return out

    def put(self, keys: np.ndarray, vals: np.ndarray) -> None:
        """Insert distinct keys that are absent (a batch larger than ``size`` is not kept)."""
        if len(keys) > self.size:
            return
        need = self.n + len(keys)
        if need > self.size:
            self._alloc(self.bits)
            need = len(keys)
        if 2 * need > self.mask + 1:                                        # keep the load factor at most 1/2
            held = self.keys >= 0
            old_k, old_v = self.keys[held], self.vals[held]
            self._alloc(max(self.bits + 1, int(np.ceil(np.log2(2 * need)))))
            self._insert(old_k, old_v)
        self._insert(keys, vals)

    def _insert(self, keys: np.ndarray, vals: np.ndarray) -> None:
        self.n += len(keys)
        todo, pos = np.arange(len(keys)), self._home(keys)
        while len(todo):
            free = np.nonzero(self.keys[pos] < 0)[0]
            self.keys[pos[free]] = keys[todo[free]]                         # one of the batch wins each slot
            won = free[self.keys[pos[free]] == keys[todo[free]]]
            self.vals[pos[won]] = vals[todo[won]]
            on = np.ones(len(todo), bool)
            on[won] = False
            todo, pos = todo[on], (pos[on] + 1) & self.mask


def solve_dp_spo(X, C, problem, max_depth: int = 2, alpha: float = 0.0, min_samples_leaf: int = 1,
                 sample_weight=None, binarization: str = "quantile", n_thresholds: int = 10,
                 time_limit: float | None = None, binarizer: Binarizer | None = None, *, _engine: str = "pairs"):
    """Optimal SPO tree (features X, true costs C) over a binarisation of X: (Tree with task "spo", SolveResult).

    ``_engine="python"`` runs the reference search (the recursion down to depth one, no depth-two solver)."""
    t0 = time.perf_counter()
    budget = Budget(time_limit)
    task = problem if isinstance(problem, SPOTask) else SPOTask(problem)
    prob = task.problem
    D = _check_int("max_depth", max_depth, 0, SPO_MAX_DEPTH)
    ml = _check_int("min_samples_leaf", min_samples_leaf, 1)
    a = _check_alpha(alpha)
    if _engine not in ("pairs", "python"):
        raise InputError(f"_engine must be 'pairs' or 'python'; got {_engine!r}")
    Xa, names = _as_2d_float(X, "X")
    C = prob.check_costs(C)
    n = Xa.shape[0]
    if C.shape[0] != n:
        raise InputError(f"X has {n} rows but C has {C.shape[0]}: lengths must match")
    w = check_sample_weight(sample_weight, n)
    if binarizer is None:
        if binarization not in ("quantile", "midpoints"):
            raise InputError(f"binarization must be 'quantile' or 'midpoints'; got {binarization!r}")
        binarizer = Binarizer(strategy=binarization, n_thresholds=n_thresholds).fit(Xa)
    Xb = binarizer.transform(Xa).astype(np.float64)
    Cm = prob.sign * C
    _, z = prob._solve_min(Cm)
    norm = spot_norm(prob, C, w, z=-z if prob.sign < 0 else z)
    spo = _SPOSearch(prob, Xb, Cm, w, z, a * norm, ml, budget, getattr(binarizer, "feature_", None), _engine)
    with _one_blas_thread() if _engine == "pairs" else contextlib.nullcontext():
        heap, incumbent_depth, termination = spo.search.deepen(D)
    spo.counters.update(spo.search.counters)
    spo.counters["incumbent_depth"] = incumbent_depth
    tree = heap_to_tree(heap, binarizer.decode, Xa.shape[1], "spo", None, list(names))
    return _spo_result(tree, prob, Xa, C, Cm, w, z, norm, a, termination, t0, spo.counters)


def _spo_result(tree, prob, Xa, C, Cm, w, z, norm, a, termination, t0: float, counters):
    """(the tree with its leaves' mean costs and decisions, its SolveResult on the normalised SPO objective)."""
    leafid = tree.apply(Xa)
    sums = np.zeros((tree.n_nodes, C.shape[1]))
    np.add.at(sums, leafid, w[:, None] * C)
    wsum = np.bincount(leafid, weights=w, minlength=tree.n_nodes)
    mean = sums / np.where(wsum > 0, wsum, 1.0)[:, None]
    dec, _ = prob.solve(mean)
    tree.value = mean
    tree.extras["decision"] = dec
    regret = np.einsum("ij,ij->i", Cm, dec[leafid]) - z
    objective = float(w @ regret) / norm + a * tree.n_splits
    bound = objective if termination == "optimal" else 0.0
    runtime = time.perf_counter() - t0
    result = finish("dp-spo", "opttrees-dp", termination, objective, bound, runtime, counters["subproblems"],
                    [Incumbent(runtime, objective, bound, 0.0 if termination == "optimal" else np.inf)],
                    timings={"total": runtime, **counters})
    return tree, result


class _SPOSearch:
    """One SPO DP: the leaf costs a subproblem needs (one oracle call each batch), the depth-two solver of the
    "pairs" engine (column pair sums, a cache of leaf costs across subproblems), and the subset recursion
    (:attr:`search`) that calls :meth:`node` on every subproblem."""

    def __init__(self, prob, Xb, Cm, w, z, pen: float, ml: int, budget: Budget, feature, engine: str):
        self.prob, self.Xb, self.pen, self.ml, self.budget, self.engine = prob, Xb, pen, ml, budget, engine
        n = Xb.shape[0]
        self.WC = w[:, None] * Cm
        self.wz = w * z
        self.ncost = self.WC.shape[1]
        self.counters = {"oracle_calls": 0, "oracle_rows": 0}
        self.m = m = Xb.shape[1]
        if engine == "pairs":
            self.counters.update(depth_two_calls=0, depth_two_dense=0, depth_two_left=0, leaf_cache_hits=0)
            self.V = np.column_stack([self.WC, self.wz, np.ones(n)])   # per row: weighted costs, own optimum, one
            self.levels, self.chain, self.rank = _chains(Xb, feature)
            G_all = self.levels.shape[1]
            self.Q_all = int(max(self.levels.max(initial=0), self.rank.max(initial=0))) + 1
            self.npairs = G_all * (G_all - 1) // 2
            # the chains' histograms when they cost less than the dense pair product (about ns, for all rows)
            chain_work = self.npairs * (3 * n + 10 * self.Q_all * self.Q_all)
            self.use_chains = PAIR_SUMS == "chains" or (PAIR_SUMS != "dense" and chain_work <= n * m ** 2 // 2)
        self.leaf_cache = _LeafCache(LEAF_CACHE_SIZE)
        self.base = 2 * m + 1                               # literal 2 * column + side, plus one; 0: none
        self.cacheable = self.base ** (SPO_MAX_DEPTH + 1) < 2 ** 63
        self.search = SubsetRecursion(Xb, self.node, pen, ml, budget)

    def regrets(self, batch, zsum):
        """Leaf costs of the summed cost vectors ``batch`` whose rows' own optima sum to ``zsum``: one oracle call."""
        W, _ = self.prob._solve_min(batch)
        self.counters["oracle_calls"] += 1
        self.counters["oracle_rows"] += len(batch)
        return np.maximum(np.einsum("ij,ij->i", batch, W) - zsum, 0.0)

    def leaf_costs(self, rows):
        """Regret of the node as a leaf and of both sides of every column as leaves (one oracle call)."""
        WC, wz = self.WC, self.wz
        Xr = self.Xb[rows]
        S = WC[rows].sum(axis=0)
        SR = Xr.T @ WC[rows]
        SL = S - SR
        zR = Xr.T @ wz[rows]
        zL = wz[rows].sum() - zR
        batch = np.vstack([S[None, :], SL, SR])
        W, _ = self.prob._solve_min(batch)
        self.counters["oracle_calls"] += 1
        self.counters["oracle_rows"] += len(batch)
        reg = np.einsum("ij,ij->i", batch, W)
        m = self.m
        nR = Xr.sum(axis=0)
        leaf = max(reg[0] - wz[rows].sum(), 0.0)
        return leaf, np.maximum(reg[1:m + 1] - zL, 0.0), np.maximum(reg[m + 1:] - zR, 0.0), nR

    def node(self, rows, d) -> Node:
        if self.engine == "pairs" and d == 2 and (out := self.depth_two(rows)) is not None:
            return Node(np.inf, solved=out)
        leaf, cl, cr, nR = self.leaf_costs(rows)
        one = cl + cr
        return Node(leaf if len(rows) >= self.ml else np.inf, order=np.argsort(one), n_right=nR, one=one)

    def leaf_keys(self, lits, path):
        """Exact keys of the leaves given by the splits that define them: ``path`` from the root, then ``lits``
        (their columns below the node, literals 2 * column + side, -1 none). Within a chain only the tightest
        split of each side is kept (the others hold on every row it keeps); the rest are sorted and packed into
        one integer. Leaves with equal keys have equal rows (not always the other way round)."""
        P = np.array([2 * f + s for f, s in path], np.int64)
        L = np.concatenate([np.broadcast_to(P, (len(lits), len(P))), lits], axis=1)
        on = L >= 0
        col, side = np.where(on, L >> 1, 0), L & 1
        ch, rk = self.chain[col], self.rank[col]
        for e in range(L.shape[1]):
            for f in range(e + 1, L.shape[1]):
                same = on[:, e] & on[:, f] & (ch[:, e] == ch[:, f]) & (side[:, e] == side[:, f])
                loose_e = same & np.where(side[:, e] == 1, rk[:, e] <= rk[:, f], rk[:, e] >= rk[:, f])
                on[:, e] &= ~loose_e                        # x >= deeper threshold implies the other; < likewise
                on[:, f] &= ~(same & ~loose_e)
        Lk = np.sort(np.where(on, L + 1, 0), axis=1)
        keys = np.zeros(len(L), np.int64)
        for e in range(Lk.shape[1]):
            keys = keys * self.base + Lk[:, e]
        return keys

    def depth_two(self, rows):
        """(cost, root column or -1) of the best tree of depth <= 2 on ``rows``; None when its pair sums would
        take more than MAX_PAIR_BYTES (the recursion then solves it).

        Only columns that leave ``ml`` rows on both sides can split here or below. A leaf is wanted only when
        some split that uses it keeps ``ml`` rows on both sides, the symmetric ones once; wanted leaves are
        first looked up in the cache of leaf costs across subproblems, and only the others' sums are made and
        sent to the oracle (one call)."""
        ml, nr = self.ml, len(rows)
        Vr = self.V[rows]
        tot = Vr.sum(axis=0)
        c = self.ncost + 2
        cs = None
        if self.use_chains and self.npairs * self.Q_all * self.Q_all * c * 8 <= MAX_PAIR_BYTES:
            cs = _ChainSums(self.levels[rows], Vr, self.chain, self.rank, self.Q_all)
            cnt = cs.single(np.arange(self.m))[:, -1]
        else:
            Xr = self.Xb[rows]
            cnt = Xr.sum(axis=0)
        K = np.nonzero((cnt >= ml) & (nr - cnt >= ml))[0]
        k = len(K)
        if k == 0:
            self.counters["depth_two_calls"] += 1
            leaf = float(self.regrets(tot[None, :self.ncost], tot[self.ncost:self.ncost + 1])[0]) if nr >= ml else np.inf
            return (leaf, -1)
        if cs is None and k * k * c * 8 > MAX_PAIR_BYTES:
            self.counters["depth_two_left"] += 1
            return None
        self.counters["depth_two_calls"] += 1
        if cs is not None:
            D1 = cs.single(K)                                             # x_i = 1
            N11 = cs.pairs(K[:, None], K[None, :], stat=-1)               # x_i = 1 and x_j = 1 (exact counts)
            pair_sums = lambda i, j: cs.pairs(K[i], K[j])                 # noqa: E731
        else:
            self.counters["depth_two_dense"] += 1
            XK = np.ascontiguousarray(Xr[:, K])
            D1 = XK.T @ Vr
            N11 = XK.T @ XK
            pair_sums = lambda i, j: _pair_sums_dense(XK, Vr, self.budget)[i, j]   # noqa: E731
        fR, fL, pairs, (kind, li, lj) = _wanted_leaves(nr, ml, D1[:, -1], N11)
        cost = self._wanted_costs(kind, li, lj, K, tot, D1, pair_sums, c)
        return self._best_depth_two(cost, nr, K, fR, fL, pairs)

    def _wanted_costs(self, kind, li, lj, K, tot, D1, pair_sums, c):
        """The cost of every wanted leaf (:func:`_wanted_leaves`): from the cache, else summed and sent to the
        oracle in one call (and cached)."""
        if self.cacheable:
            lits = np.where(kind[:, None] == 0, -1, 2 * K[np.stack([li, lj], axis=1)])
            lits[:, 0] += (kind == 2) | (kind == 3) | (kind == 4)
            lits[:, 1] = np.where(kind >= 3, lits[:, 1] + (kind == 3), -1)
            keys = self.leaf_keys(lits, self.search.path)
            cost = self.leaf_cache.get(keys)
            miss = np.isnan(cost)
            uk, first, inv = np.unique(keys[miss], return_index=True, return_inverse=True)
            todo = np.nonzero(miss)[0][first]
            self.counters["leaf_cache_hits"] += int(len(keys) - miss.sum())
        else:
            cost, todo = np.empty(len(kind)), np.arange(len(kind))
        if len(todo):
            kt, it, jt = kind[todo], li[todo], lj[todo]
            sums = np.empty((len(todo), c))
            sums[kt == 0] = tot
            sums[kt == 1] = tot - D1[it[kt == 1]]
            sums[kt == 2] = D1[it[kt == 2]]
            q = kt >= 3
            if q.any():
                P = pair_sums(it[q], jt[q])                               # x_i = 1 and x_j = 1
                kq, iq, jq = kt[q], it[q], jt[q]
                P[kq == 4] = D1[iq[kq == 4]] - P[kq == 4]
                t5 = kq == 5
                P[t5] = tot - D1[iq[t5]] - D1[jq[t5]] + P[t5]
                sums[q] = P
            if self.budget.stop():
                raise Stopped
            new = self.regrets(sums[:, :self.ncost], sums[:, self.ncost])
            if self.cacheable:
                cost[miss] = new[inv.ravel()]
                self.leaf_cache.put(uk, new)
            else:
                cost = new
        return cost

    def _best_depth_two(self, cost, nr: int, K, fR, fL, pairs):
        """(cost, root column or -1) of the best depth-two tree from the wanted leaves' costs."""
        (a11, b11), (a10, b10), (a00, b00) = pairs
        k, pen = len(K), self.pen
        leaf = float(cost[0]) if nr >= self.ml else np.inf
        cL, cR = cost[1:k + 1], cost[k + 1:2 * k + 1]
        o = 2 * k + 1
        C11 = np.full((k, k), np.inf)
        C11[a11, b11] = C11[b11, a11] = cost[o:o + len(a11)]
        o += len(a11)
        C10 = np.full((k, k), np.inf)
        C10[a10, b10] = cost[o:o + len(a10)]
        o += len(a10)
        C00 = np.full((k, k), np.inf)
        C00[a00, b00] = C00[b00, a00] = cost[o:]
        right = np.where(fR, C11 + C10, np.inf).min(axis=1) + pen        # right child of i split on its best j
        left = np.where(fL, C10.T + C00, np.inf).min(axis=1) + pen
        total = pen + np.minimum(cL, left) + np.minimum(cR, right)
        i = int(np.argmin(total))
        return (float(total[i]), int(K[i])) if total[i] < leaf else (leaf, -1)


def _wanted_leaves(nr: int, ml: int, c1, N11):
    """Which splits of depth two keep ``ml`` rows on both sides (``fR[i, j]``: the right child of column i can
    split on j; ``fL`` the left), the column pairs of the leaves they use, and every wanted leaf as (kind, i, j):
    kind 0 the node, 1 x_i = 0, 2 x_i = 1, 3 x_i = x_j = 1, 4 x_i = 1 and x_j = 0, 5 x_i = x_j = 0."""
    k = len(c1)
    N10 = c1[:, None] - N11                                           # x_i = 1, x_j = 0
    N00 = nr - c1[:, None] - c1[None, :] + N11
    fR = (N11 >= ml) & (N10 >= ml)                                    # the right child of i can split on j
    fL = (N10.T >= ml) & (N00 >= ml)                                  # the left child of i can split on j
    up = np.arange(k)[:, None] < np.arange(k)[None, :]
    a11, b11 = np.nonzero((fR | fR.T) & up)
    a10, b10 = np.nonzero(fR | fL.T)              # {x_i = 1, x_j = 0}: right of i on j, left of j on i
    a00, b00 = np.nonzero((fL | fL.T) & up)
    ar = np.arange(k)
    sizes = [1, k, k, len(a11), len(a10), len(a00)]
    kind = np.repeat(np.arange(6), sizes)
    li = np.concatenate([[0], ar, ar, a11, a10, a00])
    lj = np.concatenate([[0], ar, ar, b11, b10, b00])
    return fR, fL, ((a11, b11), (a10, b10), (a00, b00)), (kind, li, lj)


def _one_blas_thread():
    """BLAS held to one thread for the block (threadpoolctl comes with scikit-learn; without it, no change)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:                                                   # pragma: no cover
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")
