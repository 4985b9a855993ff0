"""Exact optimal trees on continuous features, with no binarisation: every distinct midpoint is a candidate.

Why a second search next to :mod:`opttrees.dp.engine`: the binary engine reaches continuous data only through
a 0/1 matrix with one column per threshold, and its depth-two solver counts every pair of columns, which is
quadratic in the thresholds (gigabytes on a few thousand continuous rows). This search works on the rows'
sorted orders (:mod:`opttrees.dp.continuous_kernels`, O(n p) memory) and skips runs of thresholds with
bounds, the ideas of Quant-BnB (Mazumder, Meng and Wang, 2022) and ConTree (Brita, van der Linden and
Demirovic, 2025), written here from their descriptions:

- depth <= 2: a numba routine evaluates a root threshold by one sweep per feature (the best split of each
  side), and a branch-and-bound over threshold intervals evaluates few of them;
- depth >= 3: a recursion over (row subset, depth, node budget) with a cache keyed by a hash of the subset;
  the root thresholds of each feature are searched with the same interval bounds, each evaluation solving
  the two sides at depth - 1 (with upper bounds from the incumbent), down to the depth-two routine.

The optimum is over the same split set as CART and the OCT MIO (all midpoints), so it equals the binary DP
over ``binarization="midpoints"`` and the MIO's optimum. Anytime: at the time limit, on Ctrl-C or at the
memory cap it returns the best tree found and a lower bound (the smallest bound of any threshold interval
not yet closed). ``n_jobs`` threads search the root's features; every feature's search sees the same
incumbent (the coarse grid's best) whatever the number of threads, so the result never depends on
``n_jobs`` (ties: lowest feature, then first threshold found).
"""
from __future__ import annotations

import copy
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..data.prepared import _as_2d_float, check_sample_weight
from ..errors import InputError, VerificationError
from ..interrupt import STOP, Budget, stop_on_sigint
from ..jit import ABANDONED, announce_compile, is_cold, run_threads, warn_still_compiling
from ..progress import ProgressLine
from ..solvers.result import Incumbent, finish, relative_gap
from . import continuous_kernels as kernels
from .common import _check_task, _common_checks, _fill_payload, _raw_cost, nested_to_tree, solved_problem
from .memory import check_limit, fmt_bytes, resident_bytes
from .seed import cart_seed
from .tasks import KIND_SQUARED

INF = np.inf
#: halvings of each feature's threshold range evaluated first at depth >= 3, one level at a time over every root
#: feature (2**levels - 1 evaluations per feature, each two depth-(d-1) searches): a lower bound after one
#: evaluation per feature, rising with each level, and an incumbent from every feature before any is refined
DEEP_LEVELS = 3
#: a root threshold's sides at depth >= 3 are searched below the incumbent plus this fraction of the weight between
#: the threshold and its farther evaluated neighbour (:meth:`_Searcher.evaluate`). Steady seconds at depth 3, no
#: slack -> 0.5 -> 1: breast cancer 11.3 -> 7.9 -> 8.6 (root evaluations 446 -> 233 -> 233), 2,000 x 19 with 7
#: classes 22.1 -> 4.6 -> 5.2 (846 -> 115 -> 115)
SLACK = 0.5


def _memory_estimate(n: int, p: int, depth: int, n_jobs: int) -> int:
    """Bytes the search needs beyond its caches: the data, one sorted order per feature, and per depth level
    and thread the two sides' orders."""
    base = n * p * (8 + 4) + n * 64
    per_level = 2 * n * p * 4 + n * 16
    return base + per_level * max(depth - 1, 1) * max(n_jobs, 1)


class _Problem:
    """The data every subproblem reads (one per call) and the search's shared state."""

    def __init__(self, X, ed, alpha, minl, stop):
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.n, self.p = self.X.shape
        self.Z = np.ascontiguousarray(ed.Z, dtype=np.float64)
        self.kind = int(ed.kind)
        self.lab = np.ascontiguousarray(ed.lab, dtype=np.int64)
        self.wt = np.ascontiguousarray(ed.weights, dtype=np.float64)
        self.K = int(ed.K)
        # misclassification is the cost matrix 1 - I (the kernels that need a matrix read it; the others ignore it)
        M = 1.0 - np.eye(self.K) if self.kind == 0 else ed.M
        self.M = np.ascontiguousarray(M, dtype=np.float64)
        self.pen = float(alpha * ed.baseline)
        self.minl = int(minl)
        # subset monotonicity (a side's optimum never falls when rows are added) holds only without a minimum leaf
        # size: with one, more rows can make a split feasible and the optimum fall (docs/dp.md, "Bounds")
        self.monotone = self.minl <= 1
        # moving rows (a side's optimum rises by at most the worst loss of the rows added) holds with a minimum
        # leaf size too (the subset's optimal tree stays feasible on the superset), for misclassification only
        self.moving = self.kind != KIND_SQUARED
        if self.kind == 1:
            self.worst = ed.weights * ed.M.max(axis=1)[ed.lab]
        else:
            self.worst = np.asarray(ed.weights, np.float64).copy()
        self.stop = stop
        rng = np.random.default_rng(0)
        self.h1 = rng.integers(0, 2 ** 63, self.n, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
        self.h2 = rng.integers(0, 2 ** 63, self.n, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
        self.evaluations = 0
        self._gathered = None

    def without_min_leaf(self) -> _Problem:
        """The same problem with ``min_samples_leaf=1``: its optimum is below this one's and never falls when rows
        are added, so it gives the interval bounds that a minimum leaf size makes unsound."""
        relaxed = copy.copy(self)
        relaxed.minl = 1
        relaxed.monotone = True
        return relaxed

    def gathered(self, so):
        """Labels and weights in each feature's order of the whole table (made once, read by every root thread)."""
        if self._gathered is None:
            self._gathered = kernels._gathered(so, so.shape[1], self.lab, self.wt, self.kind)
        return self._gathered

    def d2(self, so, xs, m, depth, B, ub, side, counters):
        tree = np.zeros(6)
        cost, lb = kernels.solve_d2(so, xs, m, self.Z, self.lab, self.wt, self.ties, self.worst, self.kind, self.K,
                              self.M, self.pen, self.minl, depth, B, ub, self.moving, self.stop, side, counters, tree)
        return cost, lb, _small_tree(tree)


def _small_tree(t):
    """The depth-two routine's array as a nested tree: None (leaf) or (feature, threshold, left, right)."""
    f = int(t[0])
    if f == -1:
        return None
    if f == -2:
        return (int(t[2]), float(t[3]), None, None)
    left = None if t[2] < 0 else (int(t[2]), float(t[3]), None, None)
    right = None if t[4] < 0 else (int(t[4]), float(t[5]), None, None)
    return (f, float(t[1]), left, right)


def _cap(d: int) -> int:
    return (1 << d) - 1


class _Searcher:
    """The recursion for depth >= 3 on one thread, with its own cache (so no result depends on timing)."""

    def __init__(self, prob: _Problem):
        self.prob = prob
        self.cache: dict = {}
        # side marks (squared error) or each row's rank in the root feature's order (classification)
        self.side = np.zeros(prob.n, np.int32)
        self.mark = np.zeros(prob.n, np.uint8)
        self.counters = np.zeros(4)
        # with a minimum leaf size the interval bounds come from the optimum without it (a relaxation, and
        # monotone in the rows): a second searcher of the relaxed problem computes those side values on demand
        self.relaxed = None if prob.monotone else _Searcher(prob.without_min_leaf())

    def solve(self, so, xs, m, d, B, ub):
        """(cost, lb, tree): a tree of cost < ub when one exists (cost = its cost), else cost = inf; lb is a
        valid lower bound on the optimum of (subset, depth <= d, <= B branching nodes)."""
        P = self.prob
        B = min(B, _cap(d))
        h = kernels.subset_hash(so, m, P.h1, P.h2)
        key = (int(h[0]), int(h[1]), d, B)
        hit = self.cache.get(key)
        if hit is not None:
            lb, cost, tree = hit
            if cost < INF:                       # solved to optimality
                return (cost, cost, tree) if cost < ub else (INF, cost, None)
            if lb >= ub:
                return INF, lb, None
        if d <= 2 or B <= 1:
            cost, lb, tree = P.d2(so, xs, m, min(d, 2), B, ub, self.side, self.counters)
        else:
            cost, lb, tree = self._search(so, xs, m, d, B, ub)
        if not P.stop[0]:
            if cost < ub:
                self.cache[key] = (cost, cost, tree)
            else:
                old = self.cache.get(key)
                self.cache[key] = (max(lb, old[0] if old else -INF), INF, None)
        return cost, lb, tree

    def _search(self, so, xs, m, d, B, ub):
        P = self.prob
        # the best tree of depth d - 1 (or a leaf) is the first incumbent
        cost, lb, tree = self.solve(so, xs, m, d - 1, B, ub)
        best, best_tree = (cost, tree) if cost < ub else (INF, None)
        inc = min(ub, best)
        if m < 2 * max(P.minl, 1):
            return (best, best, best_tree) if best < ub else (INF, lb, None)
        lbr = INF
        whole = cost if cost < INF else lb
        for f in range(P.p):
            r = self.search_feature(so, xs, m, d, B, f, inc, whole=whole)
            lbr = min(lbr, r[2])
            if r[0] < inc:
                inc = best = r[0]
                best_tree = r[1]
            if P.stop[0]:
                lbr = min(lbr, 0.0) if f < P.p - 1 else lbr
                break
        # the optimum is the best of the depth-(d-1) trees (bounded by lb) and the root-split trees (lbr)
        low = min(lb, lbr) if best == INF else min(best, lbr, lb)
        if best < ub:
            return best, min(low, best), best_tree
        return INF, low, None

    def evaluate(self, so, xs, m, d, B, f, i, inc, right_lb, slack=0.0):
        """One root threshold (f, i) at depth d: (cost, lb, tree, valsL, valsR) where vals* hold the sides'
        lower bounds per node budget (for the interval bounds). ``slack``: the sides are searched below the
        incumbent plus this much, so that a side that finds nothing there returns a bound high enough to close
        the neighbouring positions too (ConTree's widened upper bound)."""
        P = self.prob
        left, xl, right, xr = kernels.split_orders(so, xs, m, f, i, self.mark)
        ml, mr = i, m - i
        cb = _cap(d - 1)
        budgets = [(nl, B - 1 - nl) for nl in range(0, B) if nl <= cb and B - 1 - nl <= cb]
        valsL = np.zeros(cb + 1)
        valsR = np.zeros(cb + 1)
        for nr in range(cb + 1):
            valsR[nr] = right_lb.get(nr, 0.0)
        best, best_tree, low = INF, None, INF
        thr = kernels.between(xs[f, i - 1], xs[f, i])
        for nl, nr in budgets:
            ubl = inc - P.pen - valsR[nr] + slack
            cl, lbl, tl = self.solve(left, xl, ml, d - 1, nl, ubl) if ubl > 0 else (INF, 0.0, None)
            valsL[nl] = lbl if cl == INF else cl
            if cl == INF:
                low = min(low, P.pen + valsL[nl] + valsR[nr])
                continue
            ubr = inc - P.pen - cl + slack
            cr, lbr, tr = self.solve(right, xr, mr, d - 1, nr, ubr) if ubr > 0 else (INF, valsR[nr], None)
            valsR[nr] = max(valsR[nr], lbr) if cr == INF else cr
            low = min(low, P.pen + cl + valsR[nr])
            if cr < INF and P.pen + cl + cr < inc:
                inc = best = P.pen + cl + cr
                best_tree = (f, thr, tl, tr)
        return best, low, best_tree, valsL, valsR

    def search_feature(self, so, xs, m, d, B, f, ub, levels=DEEP_LEVELS, refine=True, state=None, whole=0.0):
        """Best root threshold of feature f with cost < ub: (cost, tree, lb, state); the interval search of
        :func:`opttrees.dp.continuous_kernels.search_feature`, with depth-(d-1) subproblems.

        Coarse to fine: ``levels`` halvings of the feature's boundary range first (2**levels - 1 evaluations,
        the midpoint first), then, with ``refine``, every interval whose bound is below the incumbent is split
        until none is. The ends of the range are virtual positions -1 and nb (an empty side costs 0), so a
        first bound exists after one evaluation; ``state`` carries the evaluations between calls (a search
        of the root that raises ``levels`` one at a time over every feature, then refines). ``whole``: a lower bound
        on the subset's optimum at depth d - 1, the side holding every row at a virtual end."""
        bp = kernels.boundaries(xs, m, f, self.prob.minl)
        if len(bp) == 0:
            return INF, None, INF, None
        fs = _FeatureSearch(self, so, xs, m, d, B, f, bp, ub, state, whole)
        if not fs.coarse(levels):
            return fs.result(0.0)
        done = sorted(fs.vals)
        stack = [(a, b) for a, b in zip(done, done[1:]) if b > a + 1]
        if not refine:
            for a, b in stack:
                fs.low = min(fs.low, fs.least(a, b))
            return fs.result(fs.low)
        fs.refine(stack)
        return fs.result(fs.low)


class _FeatureSearch:
    """One call of :meth:`_Searcher.search_feature`: the interval search of root feature ``f`` at depth ``d`` over
    its boundary positions ``bp``, with the incumbent (``best``, ``best_tree``) and the least bound of the intervals
    closed so far (``low``)."""

    def __init__(self, searcher: _Searcher, so, xs, m, d, B, f, bp, ub, state, whole=0.0):
        P = self.prob = searcher.prob
        self.searcher = searcher
        self.so, self.xs, self.m, self.d, self.B, self.f, self.bp, self.ub = so, xs, m, d, B, f, bp, ub
        nb = self.nb = len(bp)
        self.wp = np.concatenate([[0.0], np.cumsum(P.worst[so[f, :m]])])
        cb = self.cb = _cap(d - 1)
        self.budgets = [(nl, B - 1 - nl) for nl in range(0, B) if nl <= cb and B - 1 - nl <= cb]
        self.budget_arrays = (np.array([nl for nl, _ in self.budgets]), np.array([nr for _, nr in self.budgets]))
        # vals[j]: the sides' lower bounds per node budget at evaluated position j; rel[j]: the same without the
        # minimum leaf size (only with one; see relaxed_sides). The virtual ends: left side empty at -1, right
        # side empty at nb, the other side holding every row, bounded by ``whole`` (for any node budget: fewer
        # nodes never cost less) in vals and by 0 in rel.
        if state is None:
            zero, full = np.zeros(cb + 1), np.full(cb + 1, float(whole))
            self.vals = {-1: (zero, full), nb: (full, zero)}
            self.rel = {-1: (zero, zero), nb: (zero, zero)}
        else:
            self.vals, self.rel = state
        self.best, self.best_tree, self.low = ub, None, INF

    def result(self, low):
        """(cost, tree, lb, state) as :meth:`_Searcher.search_feature` returns them."""
        return (self.best if self.best < self.ub else INF), self.best_tree, low, (self.vals, self.rel)

    def rows_left(self, j):
        return 0 if j < 0 else self.m if j >= self.nb else int(self.bp[j])

    def relaxed_sides(self, j):
        """Lower bounds of the two sides at position j with no minimum leaf size, per node budget. Solved
        with the cut ``best - pen``: a side at or above it already closes every interval it bounds, and
        ``best`` only falls, so a value once computed stays good enough."""
        got = self.rel.get(j)
        if got is None:
            R = self.searcher.relaxed
            so, xs, m, d, cb = self.so, self.xs, self.m, self.d, self.cb
            left, xl, right, xr = kernels.split_orders(so, xs, m, self.f, int(self.bp[j]), R.mark)
            i = int(self.bp[j])
            cut = self.best - self.prob.pen
            uL, uR = np.zeros(cb + 1), np.zeros(cb + 1)
            for nl, nr in self.budgets:
                c, lb_, _ = R.solve(left, xl, i, d - 1, nl, cut)
                uL[nl] = c if c < INF else lb_
                c, lb_, _ = R.solve(right, xr, m - i, d - 1, nr, cut)
                uR[nr] = c if c < INF else lb_
            got = self.rel[j] = (uL, uR)
        return got

    def bound(self, a, b):
        """Lower bound on every root threshold strictly between evaluated positions a < b (docs/dp.md)."""
        P = self.prob
        va, vb = self.vals[a], self.vals[b]
        w = self.wp[self.rows_left(b)] - self.wp[self.rows_left(a)]
        per = {}
        for nl, nr in self.budgets:
            v = va[0][nl] + vb[1][nr] if P.monotone else 0.0     # the left side grows, the right side shrinks
            if P.moving:                                          # rows of weight w move between the sides
                v = max(v, vb[0][nl] + va[1][nr] - w)
            per[nl, nr] = v
        if not P.monotone and P.pen + min(per.values()) < self.best and not P.stop[0]:
            ua, ub_ = self.relaxed_sides(a), self.relaxed_sides(b)
            for nl, nr in self.budgets:
                per[nl, nr] = max(per[nl, nr], ua[0][nl] + ub_[1][nr])
        return P.pen + min(per.values())

    def _point_args(self, a, b, relaxed=False):
        """:func:`continuous_kernels.point_bound`'s side bounds per node budget between evaluated a < b (monotone
        terms: the sides' values, or with a minimum leaf size the relaxed ones when ``relaxed``, else 0)."""
        P, va, vb = self.prob, self.vals[a], self.vals[b]
        nls, nrs = self.budget_arrays
        if P.monotone:
            monoL, monoR = va[0][nls], vb[1][nrs]
        elif relaxed:
            monoL, monoR = self.relaxed_sides(a)[0][nls], self.relaxed_sides(b)[1][nrs]
        else:
            monoL, monoR = np.zeros(len(nls)), np.zeros(len(nrs))
        return monoL, monoR, vb[0][nls], va[1][nrs], P.moving, self.wp, self.bp, a, b, self.m

    def open_range(self, a, b):
        """(lo, hi, low): the positions strictly between evaluated a < b that per-position bounds
        (:func:`continuous_kernels.shrink`) leave open against the incumbent, lo..hi (lo > hi: none), and the least
        bound of those closed from the ends. With a minimum leaf size the relaxed sides join the bounds when the
        others leave something open."""
        P = self.prob
        lo, hi, low = kernels.shrink(*self._point_args(a, b), self.best, P.pen)
        if lo <= hi and not P.monotone and not P.stop[0]:
            lo, hi, low = kernels.shrink(*self._point_args(a, b, relaxed=True), self.best, P.pen)
        return lo, hi, low

    def least(self, a, b):
        """A lower bound on every position strictly between evaluated a < b: the interval bound or the least
        per-position bound, whichever is higher."""
        return max(self.bound(a, b), kernels.shrink(*self._point_args(a, b), -INF, self.prob.pen)[2])

    def closed(self, j) -> bool:
        """Whether position j's per-position bound between its evaluated neighbours reaches the incumbent."""
        a = max(k for k in self.vals if k < j)
        b = min(k for k in self.vals if k > j)
        monoL, monoR, movL, movR, moving, wp, bp, a, b, m = self._point_args(a, b)
        return kernels.point_bound(monoL, monoR, movL, movR, moving, wp, bp, a, b, m, j, self.prob.pen) >= self.best

    def right_lb_of(self, b):
        """Lower bounds of the right side at j < b from the right side at b, which holds a subset of its rows:
        monotonicity, so the relaxed values when there is a minimum leaf size (and only those already made)."""
        if b is None or b >= self.nb or b not in self.vals:
            return {}
        if self.prob.monotone:
            return {nr: self.vals[b][1][nr] for _, nr in self.budgets}
        return {nr: self.rel[b][1][nr] for _, nr in self.budgets} if b in self.rel else {}

    def run(self, j, b_right):
        a = max(k for k in self.vals if k < j)
        b = min(k for k in self.vals if k > j)
        w = self.wp[self.rows_left(j)]
        slack = SLACK * max(w - self.wp[self.rows_left(a)], self.wp[self.rows_left(b)] - w) if self.prob.moving else 0.0
        c, lo, t, vl, vr = self.searcher.evaluate(self.so, self.xs, self.m, self.d, self.B, self.f, int(self.bp[j]),
                                                  self.best, self.right_lb_of(b_right), slack)
        self.vals[j] = (vl, vr)
        self.prob.evaluations += 1
        self.low = min(self.low, lo if c == INF else c)
        if c < self.best:
            self.best, self.best_tree = c, t

    def coarse(self, levels) -> bool:
        """The coarse levels: position (q (nb + 1)) / 2**levels - 1 for q = 1 .. 2**levels - 1, right to left (each
        evaluation passes its right side's bound to the next one on its left). False when stopped."""
        nb, vals = self.nb, self.vals
        parts = 1 << levels
        coarse = sorted({(q * (nb + 1)) // parts - 1 for q in range(1, parts)} - {-1, nb})
        for j in reversed(coarse):
            if self.prob.stop[0]:      # checked before each evaluation: a stopped search starts none (at 100,000
                return False           # rows each costs 20-40 ms even when its subproblems stop at once)
            if j not in vals and not self.closed(j):
                right = [k for k in vals if j < k < nb]
                self.run(j, min(right) if right else None)
        return not self.prob.stop[0]

    def refine(self, stack):
        """Split every interval of ``stack`` whose bound is below the incumbent until none is (of two halves, the
        one of the smaller bound first)."""
        while stack:
            a, b = stack.pop()
            if self.prob.stop[0]:
                self.low = min(self.low, self.bound(a, b))
                continue
            lo, hi, low = self.open_range(a, b)
            if lo > hi:            # closed whole (a part closed from its ends is bounded again by the halves)
                self.low = min(self.low, low)
                continue
            mid = (lo + hi) // 2
            self.run(mid, b)
            parts_ab = [(a, mid), (mid, b)]
            parts_ab = [(x, y) for x, y in parts_ab if y > x + 1]
            parts_ab.sort(key=lambda ab: -self.bound(*ab))
            stack.extend(parts_ab)


def _d2_root(prob, so, xs, n, t, B):
    """A root found by the depth-two routine, (f, i), as a nested tree (other trees pass through)."""
    if not (isinstance(t, tuple) and len(t) == 2):
        return t
    arr = np.zeros(6)
    kernels.root_tree(so, xs, n, t[0], t[1], prob.Z, *prob.gathered(so), prob.ties, prob.kind, prob.K, prob.M, prob.pen,
                prob.minl, B, np.zeros(n, np.int32), arr)
    return _small_tree(arr)


def _root_orders(X):
    return np.ascontiguousarray(np.argsort(X, axis=0, kind="stable").T.astype(np.int32))


class _RootSearch:
    """One search of the root, the body of :func:`search`'s worker thread: one method per phase (the first
    incumbent; depth-two roots by intervals; the coarse levels at depth >= 3; the refinement).
    ``state`` is what the progress line and :func:`search` read (the answer so far, its bound and the phase)."""

    def __init__(self, prob: _Problem, so, xs, D, B, best, best_tree, n_jobs, root_features):
        self.prob, self.so, self.xs = prob, so, xs
        self.D, self.B, self.Bd = D, B, min(B, 3)
        self.best, self.best_tree = best, best_tree
        self.n_jobs = n_jobs
        self.root_features = root_features
        self.state = {"best": best, "tree": best_tree, "bound": 0.0, "phase": "start"}
        self.lock = threading.Lock()
        self.searchers: list = []
        self.states: list = [None] * prob.p      # each root feature's evaluations (depth >= 3)
        self.lows: dict = {}                      # each root feature's bound (a finished refinement replaces it)
        self.ends = None                          # the whole table's leaf and depth-one costs (depth two by intervals)
        self.whole = 0.0                          # a bound on the whole table's optimum at depth D - 1

    def run(self):
        P, D, state, stop = self.prob, self.D, self.state, self.prob.stop
        if D == 0 or self.B == 0 or P.n < 2 * max(P.minl, 1):
            state.update(bound=self.best, phase="done")
            return
        if not self.first_incumbent():
            return
        state["phase"] = "grid"
        feats = list(range(P.p)) if self.root_features is None else list(self.root_features)
        if D <= 2:
            inc, inc_tree, outs = self.depth_two_grid(feats)
        else:
            got = self.coarse_levels(feats)
            if got is None:
                return
            inc, inc_tree, outs = got
            state["phase"] = "refine"
        if stop[0]:
            return
        self.lows = {f: o[2] for f, o in zip(feats, outs)}
        self.refine(feats, inc, inc_tree)

    def first_incumbent(self) -> bool:
        """The best tree of depth one (depth <= 2) or of depth D - 1 as the incumbent: whether the search goes on."""
        P, D, B, state, stop = self.prob, self.D, self.B, self.state, self.prob.stop
        self.searchers = [_Searcher(P) for _ in range(P.p)]
        c, lb, t = self.searchers[0].solve(self.so, self.xs, P.n, 1 if D <= 2 else D - 1, B, self.best)
        self.whole = c if c < INF else lb
        if c < self.best:
            self.best, self.best_tree = c, t
            state.update(best=self.best, tree=t)
        if (D <= 2 and B <= 1) or stop[0]:
            state.update(bound=min(lb, self.best), phase="done" if not stop[0] else "grid")
            return False
        return True

    def offer(self, r):
        """A feature's result, its tree kept at once as the answer so far (a stop between features keeps it)."""
        c, t = r[0], r[1]
        if self.D > 2 and t is not None:
            with self.lock:
                if c < self.state["best"]:
                    self.state.update(best=c, tree=t)
        return r

    def by_intervals(self, f, ub, grid_only):
        """The depth-two interval search of root feature f (squared error or a minimum leaf size)."""
        P, so = self.prob, self.so
        o = np.zeros(4)
        kernels.root_feature(so, self.xs, P.n, f, P.Z, *P.gathered(so), P.ties, P.worst, P.kind, P.K, P.M, P.pen, P.minl,
                             self.Bd, ub, P.moving, grid_only, self.ends, P.stop, self.searchers[f].side, o)
        P.evaluations += int(o[3])
        return o[0], (f, int(o[1])) if o[1] >= 0 else None, o[2], None

    def depth_two_grid(self, feats):
        """Depth two by intervals, the grid of every feature: (incumbent, its tree, the features' results)."""
        P = self.prob
        self.ends = kernels.subset_ends(self.so, self.xs, P.n, P.Z, P.kind, P.K, P.M, P.pen, P.minl)
        outs = _map(lambda f: self.by_intervals(f, self.best, True), feats, self.n_jobs)
        inc, inc_tree = self.best, self.best_tree
        for c, t, _, _ in outs:
            if c < inc:
                inc, inc_tree = c, t
        self.state.update(best=inc, tree=_d2_root(self.prob, self.so, self.xs, self.prob.n, inc_tree, self.Bd),
                          bound=min([inc] + [o[2] for o in outs]), phase="refine")
        return inc, inc_tree, outs

    def coarse_levels(self, feats):
        """Depth >= 3, coarse to fine over every root feature: one level (a halving of each feature's thresholds)
        at a time, so the lower bound (the smallest interval bound of any feature) rises from the first level.
        (incumbent, its tree, the last level's results), None when stopped."""
        P, D, B, so, xs, states = self.prob, self.D, self.B, self.so, self.xs, self.states
        inc, inc_tree = self.best, self.best_tree
        for level in range(1, DEEP_LEVELS + 1):
            ub_level = inc

            def coarse(f, level=level, ub_level=ub_level):
                return self.offer(self.searchers[f].search_feature(so, xs, P.n, D, B, f, ub_level, levels=level,
                                                                   refine=False, state=states[f], whole=self.whole))
            outs = _map(coarse, feats, self.n_jobs)
            if P.stop[0]:
                return None
            for f, (c, t, _, st) in zip(feats, outs):
                states[f] = st
                if c < inc:
                    inc, inc_tree = c, t
            self.state.update(best=inc, tree=inc_tree, bound=min([inc] + [o[2] for o in outs]),
                              phase=f"level {level}/{DEEP_LEVELS}")
        return inc, inc_tree, outs

    def refine(self, feats, inc, inc_tree):
        """Every feature's search to its end; the answer and its bound to ``state``.

        At depth two the most promising feature (the least bound) is searched first, alone, and its answer is the
        incumbent of the others, which then search in parallel: one feature usually holds the optimum, and the
        others close faster against it (20,000 x 10 with 8 classes: 211 -> 120 root evaluations). Ties go to the
        incumbent (as the grid's incumbent always has), then to the lowest feature; every feature sees the same
        incumbent whatever ``n_jobs``. Deeper, the coarse levels have already found a good incumbent (breast cancer
        at depth 3: 233 -> 272 root evaluations with the lead feature first), so every feature searches at once."""
        lows = self.lows
        if self.D > 2:
            outs = dict(zip(feats, _map(lambda f: self.refine_one(f, inc), feats, self.n_jobs)))
            return self.finish(feats, inc, inc_tree, outs)
        first = min(feats, key=lambda f: (lows.get(f, INF), f))
        r0 = self.refine_one(first, inc)
        lead = min(inc, r0[0])
        rest = [f for f in feats if f != first]
        outs = dict(zip(rest, _map(lambda f: self.refine_one(f, lead), rest, self.n_jobs)))
        outs[first] = r0
        return self.finish(feats, inc, inc_tree, outs)

    def finish(self, feats, inc, inc_tree, outs):
        """The answer (the least cost below ``inc``, ties to the lowest feature) and its bound to ``state``."""
        P, lows = self.prob, self.lows
        fin, fin_tree = inc, inc_tree
        best = min([inc] + [o[0] for o in outs.values()])
        if best < inc:
            fin = best
            fin_tree = next(outs[f][1] for f in sorted(outs) if outs[f][0] <= best)
        # a feature stopped mid-refinement keeps the bound of its last finished level (the search it left returns 0)
        low = min([inc] + list(lows.values()))
        if self.D <= 2:
            fin_tree = _d2_root(P, self.so, self.xs, P.n, fin_tree, self.Bd)
        self.state.update(best=fin, tree=fin_tree, bound=min(low, fin), phase="done")

    def refine_one(self, f, inc):
        """Feature f's search to its end below ``inc``: (cost, tree, lb, state); its bound replaces its coarse one."""
        P, D, lows, state = self.prob, self.D, self.lows, self.state
        if D <= 2:
            r = self.by_intervals(f, inc, False)
            lows[f] = r[2]       # the kernel's bound holds when it was stopped too
            return r
        r = self.offer(self.searchers[f].search_feature(self.so, self.xs, P.n, D, self.B, f, inc, levels=DEEP_LEVELS,
                                                        state=self.states[f], whole=self.whole))
        if not P.stop[0]:      # a finished feature's bound replaces its coarse one: the bound rises
            with self.lock:
                lows[f] = r[2]
                state["bound"] = min([inc] + list(lows.values()))
        return r


def _root_problem(X, ed, D, min_samples_leaf, alpha, n_jobs, memory_limit):
    """(the search's problem, its features' sorted orders and sorted values, the memory cap); an InputError when
    the search's memory estimate is over the cap."""
    n, p = X.shape
    cap = check_limit(memory_limit)
    need = _memory_estimate(n, p, D, n_jobs)
    if need > cap:
        raise InputError(f"the continuous dynamic program needs about {fmt_bytes(need)} for {n} rows x {p} features "
                         f"at depth {D}, over memory_limit={fmt_bytes(cap)}: lower n_jobs or max_depth, raise "
                         "memory_limit, or use binarization='quantile' with fewer thresholds")
    stop = np.zeros(1, np.int64)
    prob = _Problem(X, ed, alpha, min_samples_leaf, stop)
    so = _root_orders(prob.X)
    xs = np.ascontiguousarray(np.take_along_axis(prob.X, so.T.astype(np.int64), axis=0).T)
    prob.ties = (np.diff(xs, axis=1) == 0).any(axis=1) if n > 1 else np.zeros(p, bool)
    prob.gathered(so)
    return prob, so, xs, cap


def _run_root(root: _RootSearch, budget, cap, line, baseline):
    """``root.run`` in a worker thread while this one polls the time limit, Ctrl-C and the memory cap and refreshes
    ``line``: (run_threads' answer, whether Ctrl-C stopped it, whether the memory cap did)."""
    prob, state = root.prob, root.state
    cold = is_cold(kernels.solve_d2)
    if cold:
        announce_compile("continuous dynamic program", kernels.solve_d2, "about a minute on 2 cores; counted in the time "
                         "limit")
    over = [False]

    def grown() -> bool:
        over[0] = resident_bytes() > cap
        return over[0]

    def tick():
        line.update(phase=state["phase"], subproblems=prob.evaluations, best=state["best"] / baseline,
                    bound=state["bound"] / baseline)

    with stop_on_sigint():
        try:
            ran = run_threads([root.run], 1, prob.stop, budget,
                              compiling=(lambda: is_cold(kernels.solve_d2)) if cold else None, on_poll=tick,
                              over_memory=grown)
        except BaseException:
            line.close()
            raise
        ctrl_c = STOP.is_set()      # read inside the block: leaving the outermost one clears the flag
    return ran, ctrl_c, over[0]


def search(X, ed, max_depth, max_num_nodes, min_samples_leaf, alpha, budget, n_jobs=1, memory_limit=None,
           verbose=False, root_features=None):
    """Run the continuous search on checked data: (nested tree, cost, bound, termination, counters, trace).

    ``root_features`` (checked feature indices, default all): only root splits on these features are searched;
    the first incumbents (CART's tree, the best tree of depth D - 1) stay, so the answer is the best of those
    and the trees rooted on these features, and the bound bounds exactly that set (every tree has a root, so
    the best over a partition of the features, and the least of its bounds, are the whole search's)."""
    t0 = time.perf_counter()
    D = int(max_depth)
    B = _cap(D) if max_num_nodes is None else min(int(max_num_nodes), _cap(D))
    prob, so, xs, cap = _root_problem(X, ed, D, min_samples_leaf, alpha, n_jobs, memory_limit)
    stop = prob.stop
    leaf_tot = prob.Z.sum(axis=0)
    from .engine_base import leaf_cost
    leaf = float(leaf_cost(leaf_tot, prob.kind, prob.K, prob.M))
    # the first incumbent: CART's tree of this shape when it beats the single leaf, so that no anytime answer is
    # worse than the greedy tree (opttrees.dp.seed)
    seed, seed_cost = cart_seed(prob.X, ed, D, B, min_samples_leaf, prob.pen)
    start, start_tree = (seed_cost, seed) if seed_cost < leaf else (leaf, None)
    trace = [Incumbent(time.perf_counter() - t0, start / ed.baseline, 0.0, relative_gap(start, 0.0), 0)]
    termination = "optimal"
    # the same label as the binary engine's line (one "dynamic program" whatever the search); engine=continuous
    line = ProgressLine("dynamic program", enabled=bool(verbose), time_limit=budget.remaining())
    line.update(engine="continuous", depth=f"{D}/{D}")
    root = _RootSearch(prob, so, xs, D, B, start, start_tree, n_jobs, root_features)
    ran, ctrl_c, over_memory = _run_root(root, budget, cap, line, ed.baseline)
    state = root.state
    if ran is ABANDONED:
        warn_still_compiling("continuous dynamic program", "the CART start (or the root leaf) with lower bound 0",
                             stacklevel=4)
        best, best_tree, bnd = start, start_tree, 0.0
    else:
        best, best_tree = state["best"], state["tree"]
        bnd = state["bound"] if stop[0] else best
        if state["phase"] != "done" and not stop[0]:
            bnd = 0.0
    if stop[0]:
        termination = "interrupted" if ctrl_c else "limit" if over_memory else "time_limit"
    bound = min(bnd, best)
    line.update(subproblems=prob.evaluations, best=best / ed.baseline, bound=bound / ed.baseline, status=termination)
    line.close()
    trace.append(Incumbent(time.perf_counter() - t0, best / ed.baseline, bound / ed.baseline,
                           relative_gap(best, bound), prob.evaluations))
    counters = {"root_evaluations": int(prob.evaluations),
                "memory_limit": bool(over_memory), "subproblems": int(prob.evaluations)}
    return best_tree, float(best), float(bound), termination, counters, trace, time.perf_counter() - t0


def _map(fn, items, n_jobs):
    if n_jobs <= 1 or len(items) <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=n_jobs) as ex:
        return list(ex.map(fn, items))


def solve_dp_continuous(X, y, task=None, max_depth: int = 3, max_num_nodes: int | None = None,
                        min_samples_leaf: int = 1, alpha: float = 0.0, sample_weight=None,
                        time_limit: float | None = None, n_jobs: int = 1, memory_limit=None, verbose=False,
                        root_features=None):
    """Optimal tree over every midpoint of raw ``X``, found on sorted orders: (Tree in original units, SolveResult).

    Same objective, tasks and settings as :func:`opttrees.dp.solve_dp` (misclassification with weights or a
    cost matrix, squared error, ``alpha``, ``max_num_nodes``, ``min_samples_leaf``); feature costs need the
    binarised search. ``n_jobs`` threads share the root's features (the result does not depend on it).
    ``memory_limit`` (bytes or "4GB"; default half the physical memory): refused up front when the estimate
    is over it, stopped like a time limit when the process grows past it. ``root_features`` (feature indices,
    default all): search only root splits on these features, besides the CART and depth-(D-1) starts (see
    :func:`search`; :func:`opttrees.dp.cluster.solve_dp_continuous_cluster` runs such parts on a Dask cluster).
    """
    t0 = time.perf_counter()
    budget = Budget(time_limit)
    D, nn, ml, a = _common_checks(max_depth, max_num_nodes, min_samples_leaf, alpha, time_limit)
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1:
        raise InputError(f"n_jobs must be an integer >= 1; got {n_jobs!r}")
    Xa, names, y, w, task, ed = _checked_data(X, y, task, sample_weight, ml)
    roots = check_root_features(root_features, Xa.shape[1])
    nested, cost, bnd, termination, counters, trace, runtime = search(
        Xa, ed, D, nn, ml, a, budget, n_jobs=int(n_jobs), memory_limit=memory_limit, verbose=verbose,
        root_features=roots)
    tree, objective = verified_tree(nested, cost, Xa, names, task, ed, a)
    bound = min(bnd / ed.baseline, objective)
    timings = {"search": runtime, "total": time.perf_counter() - t0, **counters}
    result = finish("dp", "opttrees-dp-continuous", termination, objective, bound, time.perf_counter() - t0,
                    counters["subproblems"], trace, timings=timings)
    result.dp_baseline = ed.baseline * ed.extra.get("loss_scale", 1.0)   # L-hat in y's units
    result.problem = solved_problem(D, nn, ml, a, w, "every midpoint")
    if counters.get("memory_limit"):
        result.message = (f"stopped at memory_limit={fmt_bytes(check_limit(memory_limit))}; the best tree so far "
                          "and a valid lower bound are returned")
        warnings.warn(f"continuous dynamic program: {result.message}; raise memory_limit or lower max_depth",
                      stacklevel=2)
    return tree, result


def check_root_features(root_features, p: int) -> list[int] | None:
    """``root_features`` checked against ``p`` features: None (all), else distinct indices in increasing order."""
    if root_features is None:
        return None
    if isinstance(root_features, (str, bytes)) or not hasattr(root_features, "__iter__"):
        raise InputError(f"root_features must be a list of feature indices; got {root_features!r}")
    feats = list(root_features)
    if not feats:
        raise InputError("root_features is empty: give at least one feature index (or None for every feature)")
    bad = [f for f in feats if isinstance(f, bool) or not isinstance(f, (int, np.integer)) or not 0 <= f < p]
    if bad:
        raise InputError(f"root_features: {bad[0]!r} is not a feature index of X, which has {p} features "
                         f"(0 .. {p - 1})")
    return sorted({int(f) for f in feats})


def _checked_data(X, y, task, sample_weight, ml):
    """X, y and the weights checked (rows of weight 0 dropped) and the task prepared: (Xa, names, y, w, task, ed)."""
    task = _check_task(task)
    if getattr(task, "feature_costs", None) is not None:
        raise InputError("feature costs depend on the path, which the continuous search does not track: use "
                         "binarization='quantile' or 'midpoints' with a CostSensitiveTask that has feature_costs")
    Xa, names = _as_2d_float(X, "X")
    n = Xa.shape[0]
    w = check_sample_weight(sample_weight, n)
    y = np.asarray(y)
    if y.shape[:1] != (n,):
        raise InputError(f"y must have one entry per row of X ({n}); got shape {y.shape}")
    if (w == 0).any():   # one rule for every method (opttrees.data.prepare): a row of weight 0 is absent
        keep = w > 0
        Xa, y, w = Xa[keep], y[keep], w[keep]
        n = Xa.shape[0]
    if n < ml:
        raise InputError(f"X has {n} rows of positive weight, fewer than min_samples_leaf={ml}: no tree is feasible")
    ed = task.prepare(y, n, w)
    return Xa, names, y, w, task, ed


def verified_tree(nested, cost, Xa, names, task, ed, alpha):
    """The search's nested tree as a Tree with its leaves filled, re-scored on the data: (Tree, objective / L-hat);
    a VerificationError when its score is not the search's ``cost`` (None: no figure to check)."""
    tree = nested_to_tree(nested, Xa.shape[1], task.tree_task, ed.classes,
                          list(names) if names is not None else None)
    leaf = _fill_payload(tree, task, ed, Xa)
    raw = _raw_cost(tree, task, ed, leaf, None) + alpha * ed.baseline * tree.n_splits
    if cost is not None and abs(raw - cost) > 1e-7 * max(1.0, abs(raw)):
        raise VerificationError(f"continuous dynamic program: the returned tree scores {raw:.12g} but the search "
                                f"reported {cost:.12g}")
    return tree, raw / ed.baseline
