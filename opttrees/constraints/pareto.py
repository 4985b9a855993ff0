"""Partially ordered tasks: the dynamic program over Pareto fronts (the seed's §4 with a partial comparator).

Why: some objectives are not sums over leaves (F1 score) and some constraints hold on the whole tree only
(demographic parity). The seed shows both are separable once every subtree returns the *Pareto front* of
its value vectors (per-class errors; errors and two group rates): a front merges with its sibling's by
pairwise sums, and anything dominated, or already past a threshold constraint (components only grow, so the
constraint is anti-monotonic), is dropped. The best tree is picked from the root's front at the end.

Value vectors are minimised component-wise; leaf vectors are per-row contributions summed over the leaf
(plus a per-leaf constant, e.g. a leaf count). The recursion runs in Python over row subsets, on the driver
the scalar DPs share (:class:`opttrees.dp.recursion.SubsetSearch`: partition by split column under the leaf
minimum, cache by row set and depth, time limit and Ctrl-C, iterative deepening); stumps are
scored for every column at once with numpy, and dominance filtering and front merges are numba kernels
(:mod:`opttrees.constraints.pareto_kernels`).

**Pruning** (tasks whose objective is an additive cost, e.g. weighted errors plus ``alpha`` per leaf): the
optimum at depth d - 1 is a depth-d tree, so at depth d only vectors of cost <= that incumbent matter. Each
front is computed under a cost *budget* (a vector above it cannot be part of a better tree, since costs only
grow), the right sibling's budget is lowered by the left front's cheapest cost, and the root takes the
cheapest feasible pair directly instead of building its front. A front computed under a larger budget serves
any smaller one (the vectors within a budget are the same: a vector dominating another is no costlier).

Tasks:

- :class:`F1Task`: values (false positives, false negatives) of the positive class; picks max F1;
- :class:`DemographicParityTask`: values (errors, g_a, g_not_a) of the seed's eq. (11); feasible iff both
  rates are <= 1 + delta, i.e. |P(ŷ=1 | a) - P(ŷ=1 | not a)| <= delta; picks min errors.
"""
from __future__ import annotations

import time

import numpy as np

from ..data.prepared import LabelCodec, _as_1d, check_sample_weight
from ..dp.api import check_binary_matrix, heap_to_tree
from ..dp.common import _check_int
from ..dp.recursion import SubsetSearch
from ..errors import InputError
from ..interrupt import Budget
from ..solvers.result import Incumbent, finish
from .pareto_kernels import best_pair, merge_pairs, nondominated_grouped, nondominated_sorted, right_sums

PARETO_MAX_DEPTH = 4
#: slack on the component limits (value vectors are sums of floats)
FEASIBILITY_TOL = 1e-9
#: a node's merged vectors are filtered (dominance, limits, budget) whenever more than this many have gathered
RUNNING_REDUCE = 20000
#: pair checks per merge block (the stop is checked between blocks)
PAIR_BLOCK = 500_000
#: tied components are grouped after rounding to 1 / TIE_SCALE
TIE_SCALE = 1e9


def nondominated(V: np.ndarray, tol: float = 1e-12) -> np.ndarray:
    """Indices of the rows of V (minimised component-wise) that no other row dominates; duplicates kept once."""
    V = np.asarray(V, dtype=np.float64)
    if len(V) <= 1:
        return np.arange(len(V))
    order = np.lexsort(V.T[::-1])
    return order[nondominated_sorted(np.ascontiguousarray(V[order]), tol)]


class _ParetoTask:
    """A task's contract with the search: ``prepare`` sets ``contrib`` (K labels, n rows, q components) and
    ``classes``; ``score`` maps value vectors to the objective (inf if infeasible).

    Optional, for pruning: ``limits`` (q,) upper limits of anti-monotone components (inf: none);
    ``cost_weights`` (q,) non-negative weights such that ``score(V) = V @ cost_weights + cost_offset`` for
    every feasible V (None: the score is not an additive cost, no budget pruning); ``leaf_extra`` (q,) added
    once per leaf; ``tied``: components that come in pairs with a constant sum over one row subset (a group
    rate and its mirror), so two vectors of one subset can dominate each other only where those are equal:
    dominance is then checked within groups of equal tied values (fronts of thousands stay cheap)."""

    tree_task = "classification"
    contrib: np.ndarray
    classes: list
    code: np.ndarray
    limits: np.ndarray | None = None
    cost_weights: np.ndarray | None = None
    cost_offset: float = 0.0
    leaf_extra: np.ndarray | None = None
    tied: np.ndarray | None = None

    def prepare(self, y, n: int, w: np.ndarray) -> None:
        raise NotImplementedError

    def score(self, V: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def leaf_vectors(self, rows) -> np.ndarray:
        """(K, q): the value vector of a leaf holding ``rows`` for each label."""
        V = self.contrib[:, rows, :].sum(axis=1)
        return V if self.leaf_extra is None else V + self.leaf_extra

    def _binary_labels(self, y, n: int, positive, who: str, name: str = "positive"):
        """Two labels of y, the one counted as positive (default: the larger): sets ``classes`` and ``code``
        and returns (y as 1-D, the positive label's index)."""
        y = _as_1d(y, n)
        codec = LabelCodec.fit(y)
        if len(codec.classes) != 2:
            raise InputError(f"{who} needs two labels; y has {len(codec.classes)}")
        pos = codec.classes[-1] if positive is None else positive
        if pos not in list(codec.classes):
            raise InputError(f"{name}={pos!r} is not a label of y ({list(codec.classes)})")
        self.classes = list(codec.classes)
        self.code = codec.encode(y)
        return y, self.classes.index(pos)

    def upper_limits(self) -> np.ndarray:
        q = self.contrib.shape[2]
        return np.full(q, np.inf) if self.limits is None else np.asarray(self.limits, dtype=np.float64)

    def feasible(self, V: np.ndarray) -> np.ndarray:
        return np.all(V <= self.upper_limits() + FEASIBILITY_TOL, axis=1)


class F1Task(_ParetoTask):
    """Maximise the F1 score of ``positive`` (default: the larger label) over the (FP, FN) Pareto front."""

    def __init__(self, positive=None):
        self.positive = positive

    def prepare(self, y, n, w):
        y, self.pos_index = self._binary_labels(y, n, self.positive, "F1Task")
        ispos = (self.code == self.pos_index).astype(float)
        self.w = w
        self.P = float(w @ ispos)
        # label 0..1 in codec order; predicting the positive class costs FP on negatives, the other FN on positives
        c = np.zeros((2, n, 2))
        c[self.pos_index, :, 0] = w * (1 - ispos)
        c[1 - self.pos_index, :, 1] = w * ispos
        self.contrib = c

    def score(self, V: np.ndarray) -> np.ndarray:
        """F1 of each (FP, FN) row, as a cost to minimise (1 - F1)."""
        tp = self.P - V[:, 1]
        den = 2 * tp + V[:, 0] + V[:, 1]
        f1 = np.where(den > 0, 2 * tp / np.where(den > 0, den, 1), 0.0)
        return 1.0 - f1


class DemographicParityTask(_ParetoTask):
    """Minimise weighted errors subject to |P(ŷ=1 | group=1) - P(ŷ=1 | group=0)| <= delta (binary labels;
    ``favourable`` is the label counted as ŷ=1, default the larger one). ``group`` is a 0/1 array over rows."""

    def __init__(self, group, delta: float = 0.05, favourable=None):
        self.group = group
        self.delta = delta
        self.favourable = favourable

    def prepare(self, y, n, w):
        y, one = self._binary_labels(y, n, self.favourable, "DemographicParityTask", "favourable")
        code = self.code
        a = np.asarray(self.group)
        if a.shape != (n,) or not np.isin(a, (0, 1)).all():
            raise InputError(f"group must be a 0/1 array with one entry per row ({n})")
        if a.min() == a.max():
            raise InputError("group must contain both groups (0 and 1)")
        d = float(self.delta)
        if not 0 <= d <= 1:
            raise InputError(f"delta must be in [0, 1]; got {self.delta!r}")
        self.w = w
        Na, Nb = float(w[a == 1].sum()), float(w[a == 0].sum())
        c = np.zeros((2, n, 3))
        for k in range(2):
            c[k, :, 0] = w * (code != k)
        # eq. (11): g_a(D, 1) = |D_a|/N(a), g_a(D, 0) = |D_not a|/N(not a); g_not_a the other way round
        c[one, :, 1] = w * (a == 1) / Na
        c[1 - one, :, 1] = w * (a == 0) / Nb
        c[1 - one, :, 2] = w * (a == 1) / Na
        c[one, :, 2] = w * (a == 0) / Nb
        self.contrib = c
        self.limit = 1.0 + d
        self.limits = np.array([np.inf, self.limit, self.limit])
        self.cost_weights = np.array([1.0, 0.0, 0.0])
        self.tied = np.array([1, 2])          # g_a + g_not_a is the same for every labelling of a subset

    def score(self, V: np.ndarray) -> np.ndarray:
        return np.where(self.feasible(V), V[:, 0], np.inf)


class _Front:
    """A subtree's front: value vectors ``V`` sorted by ``cost``; per vector either a leaf (``feat`` -1, label
    ``a``) or a split on ``feat`` joining entry ``a`` of the left child's front and ``b`` of the right's
    (``kids[feat]``; None for stumps, whose ``a`` and ``b`` are the two leaves' labels). ``budget``: the cost
    bound it was computed under (it holds every nondominated feasible vector of cost <= budget)."""

    __slots__ = ("V", "cost", "feat", "a", "b", "kids", "budget")

    def __init__(self, V, cost, feat, a, b, kids, budget):
        self.V, self.cost, self.feat, self.a, self.b, self.kids, self.budget = V, cost, feat, a, b, kids, budget


class _Search(SubsetSearch):
    """The front recursion over row subsets of a binary matrix (0 goes left), on the shared driver
    (:class:`opttrees.dp.recursion.SubsetSearch`: partition, cache, stop, deepening); see the module docstring."""

    def __init__(self, Z: np.ndarray, task: _ParetoTask, min_leaf: int, budget: Budget):
        super().__init__(Z, min_leaf, budget)
        self.Z8 = np.ascontiguousarray(Z, dtype=np.uint8)
        self.task = task
        self.C = np.ascontiguousarray(task.contrib, dtype=np.float64)
        self.K, n, self.q = self.C.shape
        self.Crow = np.ascontiguousarray(self.C.transpose(1, 0, 2).reshape(n, self.K * self.q))   # (n, K q)
        self.extra = np.zeros(self.q) if task.leaf_extra is None else np.asarray(task.leaf_extra, np.float64)
        self.lim = task.upper_limits()
        self.additive = task.cost_weights is not None
        self.cw = np.asarray(task.cost_weights, np.float64) if self.additive else np.ones(self.q)
        self.ml = min_leaf
        self.counters["max_front"] = 0

    # ------------------------------------------------------------------------------------------ fronts
    def _finish(self, V, feat, a, b, kids, budget) -> _Front:
        """Keep the feasible vectors within the budget that nothing dominates, sorted by cost."""
        cost = V @ self.cw
        ok = np.all(V <= self.lim + FEASIBILITY_TOL, axis=1) & (cost <= budget + FEASIBILITY_TOL)
        V, cost, feat, a, b = V[ok], cost[ok], feat[ok], a[ok], b[ok]
        tied = self.task.tied
        if tied is not None and len(tied) and len(V) > 1:
            # group by the tied components (rounded: a near-tie split across groups only keeps an extra vector)
            # one int64 hash per vector (wrapping); a collision only merges two groups, which the kernel's
            # full-vector comparison handles, so equal tied values always share a group
            key = np.round(V[:, tied] * TIE_SCALE).astype(np.int64)
            mult = np.random.default_rng(len(tied)).integers(1, 2 ** 62, len(tied), dtype=np.int64) | 1
            h = (key * mult).sum(axis=1)
            order = np.lexsort((V.sum(axis=1), cost, h))
            hs = h[order]
            starts = np.concatenate([[0], np.flatnonzero(hs[1:] != hs[:-1]) + 1, [len(V)]])
            keep = order[nondominated_grouped(np.ascontiguousarray(V[order]), starts, 1e-12)]
            keep = keep[np.lexsort(np.vstack([V[keep].T[::-1], cost[keep][None]]))]
        else:
            order = np.lexsort(np.vstack([V.T[::-1], cost[None]]))      # by cost, then component-wise
            keep = order[nondominated_sorted(np.ascontiguousarray(V[order]), 1e-12)]
        self.counters["max_front"] = max(self.counters["max_front"], len(keep))
        return _Front(np.ascontiguousarray(V[keep]), cost[keep], feat[keep], a[keep], b[keep], kids, budget)

    def leaves(self, rows) -> np.ndarray:
        return self.C[:, rows, :].sum(axis=1) + self.extra

    def _leaf_parts(self, rows):
        if len(rows) < self.ml:
            return []
        lab = np.arange(self.K)
        return [(self.leaves(rows), np.full(self.K, -1), lab, np.zeros(self.K, np.int64))]

    def _stumps(self, rows, budget) -> _Front:
        """Every depth-one tree of ``rows`` at once: per column the two sides' sums by one product."""
        K, q = self.K, self.q
        R2, nr = right_sums(self.Z8, rows, self.Crow)        # (p, K q), (p,)
        R = R2.reshape(-1, K, q).transpose(1, 0, 2)          # (K, p, q): right sums per label and column
        L = self.Crow[rows].sum(axis=0).reshape(K, 1, q) - R
        lo = max(1, self.ml)
        fs = np.flatnonzero((nr >= lo) & (len(rows) - nr >= lo))
        parts = self._leaf_parts(rows)
        for kl in range(self.K):
            for kr in range(self.K):
                if kl == kr:          # same label both sides: the leaf's vector with one more leaf
                    continue
                V = L[kl, fs] + R[kr, fs] + 2 * self.extra
                parts.append((V, fs, np.full(len(fs), kl), np.full(len(fs), kr)))
        return self._assemble(parts, None, budget)

    def _assemble(self, parts, kids, budget) -> _Front:
        if not parts:
            z = np.zeros(0, np.int64)
            return _Front(np.zeros((0, self.q)), np.zeros(0), z, z, z, kids, budget)
        V = np.vstack([p[0] for p in parts])
        feat, a, b = (np.concatenate([p[i] for p in parts]).astype(np.int64) for i in (1, 2, 3))
        return self._finish(V, feat, a, b, kids, budget)

    def front(self, rows, d: int, budget: float) -> _Front:
        """The front of depth-<= d subtrees of ``rows`` within ``budget`` (memoised by subset and depth)."""
        hit = self.lookup(rows, d, usable=lambda F: F.budget >= budget)
        if hit is not None:
            return hit
        self.enter()
        if d == 0:
            F = self._assemble(self._leaf_parts(rows), None, budget)
        elif d == 1:
            F = self._stumps(rows, budget)
        else:
            parts = self._leaf_parts(rows)
            kids: dict = {}
            size, limit = sum(len(p[1]) for p in parts), RUNNING_REDUCE
            for f, FL, FR in self._children(rows, d, budget):
                for I, J in self._pairs(FL, FR, budget):
                    kids[f] = (FL, FR)
                    parts.append((FL.V[I] + FR.V[J], np.full(len(I), f), I, J))
                    size += len(I)
                    if size > limit:     # keep the node's running front small (and memory bounded)
                        self.check_stop()    # a large reduce takes up to a second: not past the time limit
                        G = self._assemble(parts, None, budget)
                        parts, size = [(G.V, G.feat, G.a, G.b)], len(G.feat)
                        limit = max(RUNNING_REDUCE, 2 * size)    # amortised: a large front is not re-sorted often
            F = self._assemble(parts, kids, budget)
        return self.store(rows, d, F)

    def _blocks(self, FL: _Front, FR: _Front, past):
        """Blocks ``slice(i0, i1)`` of FL's rows, about :data:`PAIR_BLOCK` pair checks each with all of FR, until
        ``past(cost)`` says the block's cheapest pair (FL's row i0 with FR's first: the fronts are sorted by
        cost) is beyond what is wanted, so no later block is wanted either; the stop checked between blocks."""
        step = max(1, PAIR_BLOCK // max(len(FR.cost), 1))
        for i0 in range(0, len(FL.cost), step):
            if past(FL.cost[i0] + FR.cost[0]):
                return
            if i0:
                self.check_stop()
            yield slice(i0, i0 + step)

    def _pairs(self, FL: _Front, FR: _Front, budget: float):
        """The pairs (I, J) of the two fronts within the limits and the budget, in blocks (:meth:`_blocks`)."""
        for b in self._blocks(FL, FR, lambda cost: cost > budget + FEASIBILITY_TOL):
            I, J = merge_pairs(FL.V[b], FL.cost[b], FR.V, FR.cost, budget, self.lim, FEASIBILITY_TOL)
            if len(I):
                yield I + b.start, J

    def _best_pair(self, FL: _Front, FR: _Front, budget: float) -> tuple[int, int]:
        """The best pair of the two fronts within the limits (and, for an additive cost, the budget); (-1, -1)
        when none. Additive: the cheapest, first found on ties; else the best score. In blocks
        (:meth:`_blocks`)."""
        bi, bj, bc = -1, -1, np.inf
        if not self.additive:
            for I, J in self._pairs(FL, FR, np.inf):
                sc = self.task.score(FL.V[I] + FR.V[J])
                k = int(np.argmin(sc))
                if sc[k] < bc:
                    bi, bj, bc = int(I[k]), int(J[k]), float(sc[k])
            return bi, bj

        def past(cost):     # over the budget, or no cheaper than the best so far (read at each block)
            return cost > min(budget, bc) + FEASIBILITY_TOL or cost >= bc

        for b in self._blocks(FL, FR, past):
            i, j, c = best_pair(FL.V[b], FL.cost[b], FR.V, FR.cost, min(budget, bc), self.lim, FEASIBILITY_TOL)
            if i >= 0 and c < bc:
                bi, bj, bc = i + b.start, j, c
        return bi, bj

    def _children(self, rows, d: int, budget: float):
        """(column, left front, right front) for every column that splits ``rows`` within the leaf minimum."""
        for f in range(self.right.shape[1]):
            self.check_stop()      # a merge of large fronts takes long: check between split columns
            parts = self.sides(rows, f)
            if parts is None:
                continue
            FL = self.front(parts[0], d - 1, budget)
            if not len(FL.cost):
                continue
            FR = self.front(parts[1], d - 1, budget - FL.cost[0])
            if len(FR.cost):
                yield f, FL, FR

    # -------------------------------------------------------------------------------------------- root
    def best(self, rows, d: int, incumbent: float, found):
        """The best tree of depth <= d with score below ``incumbent``: calls ``found(score, choice)`` for each
        improvement, where choice is ("leaf", label) or ("split", f, left front, i, right front, j)."""
        task = self.task
        if len(rows) >= self.ml:
            sc = task.score(self.leaves(rows))
            k = int(np.argmin(sc))
            if sc[k] < incumbent:
                incumbent = float(sc[k])
                found(incumbent, ("leaf", k))
        if d == 0:
            return
        budget = incumbent - task.cost_offset if self.additive else np.inf
        for f, FL, FR in self._children(rows, d, budget):
            i, j = self._best_pair(FL, FR, budget)
            if i < 0:
                continue
            s = float(task.score((FL.V[i] + FR.V[j])[None])[0])
            if s < incumbent:
                incumbent = s
                found(s, ("split", f, FL, int(i), FR, int(j)))
                if self.additive:
                    budget = incumbent - task.cost_offset


def _to_heap(choice, size: int):
    """Heap arrays (column per node, -1 leaf, -2 absent; label per leaf) of a root choice."""
    heap = np.full(size, -2, np.int64)
    labels = np.zeros(size, np.int64)

    def put(F, i, pos):
        f = int(F.feat[i])
        if f < 0:
            heap[pos], labels[pos] = -1, F.a[i]
            return
        heap[pos] = f
        if F.kids is None:        # a stump: both children are leaves
            heap[2 * pos + 1] = heap[2 * pos + 2] = -1
            labels[2 * pos + 1], labels[2 * pos + 2] = F.a[i], F.b[i]
            return
        FL, FR = F.kids[f]
        put(FL, int(F.a[i]), 2 * pos + 1)
        put(FR, int(F.b[i]), 2 * pos + 2)

    if choice[0] == "leaf":
        heap[0], labels[0] = -1, choice[1]
    else:
        _, f, FL, i, FR, j = choice
        heap[0] = f
        put(FL, i, 1)
        put(FR, j, 2)
    return heap, labels


def solve_dp_pareto(Xb, y, task, max_depth: int = 2, min_samples_leaf: int = 1, sample_weight=None,
                    time_limit: float | None = None, return_front: bool = True):
    """Best tree for a Pareto task on a binary matrix ``Xb`` (0 goes left): (Tree, SolveResult, root front).

    The result's objective is the task's score of the chosen tree (1 - F1, or the weighted errors); the
    front is the root's nondominated feasible value vectors (rows), so a user can pick another trade-off.
    With ``return_front=False`` the root's front is not built (None is returned for it) and, for tasks with an
    additive cost, fronts are pruned by the incumbent (see the module docstring): much faster at depth >= 2.
    A time limit or Ctrl-C returns the best tree found so far (status ``time_limit`` / ``interrupted``).
    """
    t0 = time.perf_counter()
    if not isinstance(task, _ParetoTask):
        raise InputError(f"task must be a Pareto task (F1Task, DemographicParityTask); got {type(task).__name__}")
    D = _check_int("max_depth", max_depth, 0, PARETO_MAX_DEPTH)
    ml = _check_int("min_samples_leaf", min_samples_leaf, 1)
    Z = check_binary_matrix(Xb, "Xb").astype(bool)
    n, p = Z.shape
    w = check_sample_weight(sample_weight, n)
    task.prepare(y, n, w)
    search = _Search(Z, task, ml, Budget(time_limit))
    rows0 = np.arange(n)
    state: dict = {"score": np.inf, "choice": None}

    def found(score, choice):
        state["score"], state["choice"] = score, choice

    root: list = []

    def root_front():
        F = search.front(rows0, D, np.inf)
        root.append(F)
        if len(F.cost):
            sc = task.score(F.V)
            k = int(np.argmin(sc))
            if np.isfinite(sc[k]):
                found(float(sc[k]), _entry_choice(F, k))

    if return_front:
        termination = search.stoppable(root_front)
    else:       # iterative deepening: each depth's optimum bounds the next
        _, termination = search.deepen_with(D, lambda d: search.best(rows0, d, state["score"], found))
    if state["choice"] is None:
        if termination != "optimal":
            raise InputError(f"the Pareto DP stopped ({termination}) before finding a feasible tree; "
                             "raise time_limit")
        raise InputError("no tree satisfies the task's constraints (infeasible); relax delta or min_samples_leaf")
    size = 2 ** (D + 1) - 1
    heap, labels = _to_heap(state["choice"], size)
    tree = heap_to_tree(heap, lambda c: (c, 0.5), p, "classification", task.classes)
    leaf = tree.apply(Z.astype(float))
    counts = np.zeros((tree.n_nodes, 2))
    np.add.at(counts, (leaf, task.code), w)
    tree.value = counts
    pre: list[int] = []          # heap_to_tree numbers nodes in preorder; map the heap labels across

    def walk(u):
        pre.append(u)
        if heap[u] >= 0:
            walk(2 * u + 1)
            walk(2 * u + 2)
    walk(0)
    tree.label = labels[np.asarray(pre)]
    objective = float(state["score"])
    runtime = time.perf_counter() - t0
    bound = objective if termination == "optimal" else None
    counters = search.counters
    result = finish("dp-pareto", "opttrees-dp", termination, objective, bound, runtime, counters["subproblems"],
                    [Incumbent(runtime, objective, objective if bound is not None else float("nan"), 0.0)],
                    timings={"total": runtime, **counters})
    return tree, result, (root[0].V if root else None)


def _entry_choice(F: _Front, k: int):
    """The root choice of entry k of a root front."""
    f = int(F.feat[k])
    if f < 0:
        return ("leaf", int(F.a[k]))
    if F.kids is None:       # a stump root: wrap the two leaves as one-entry leaf fronts
        z = np.zeros(1, np.int64)
        leafL = _Front(None, None, z - 1, z + int(F.a[k]), z, None, np.inf)
        leafR = _Front(None, None, z - 1, z + int(F.b[k]), z, None, np.inf)
        return ("split", f, leafL, 0, leafR, 0)
    FL, FR = F.kids[f]
    return ("split", f, FL, int(F.a[k]), FR, int(F.b[k]))
