"""Partially ordered tasks: the dynamic program over Pareto fronts (the seed's §4 with a partial comparator).

Why: some objectives are not sums over leaves (F1 score) and some constraints hold on the whole tree only
(demographic parity). The seed shows both are separable once every subtree returns the *Pareto front* of
its value vectors (per-class errors; errors and two group rates): a front merges with its sibling's by
pairwise sums, and anything dominated, or already past a threshold constraint (components only grow, so the
constraint is anti-monotonic), is dropped. The best tree is picked from the root's front at the end.

This search runs in Python with numpy (fronts are small arrays); it is exact but meant for depths <= 3.
Value vectors are minimised component-wise; leaf vectors are per-row contributions summed over the leaf.

Tasks:

- :class:`F1Task`: values (false positives, false negatives) of the positive class; picks max F1;
- :class:`DemographicParityTask`: values (errors, g_a, g_not_a) of the seed's eq. (11); feasible iff both
  rates are <= 1 + delta, i.e. |P(ŷ=1 | a) - P(ŷ=1 | not a)| <= delta; picks min errors.
"""
from __future__ import annotations

import time

import numpy as np

from ..data import LabelCodec, _as_1d, check_sample_weight
from ..errors import InputError
from ..interrupt import STOP, Deadline
from ..solvers.result import Incumbent, finish
from .api import check_binary_matrix, heap_to_tree
from .common import _check_int

PARETO_MAX_DEPTH = 4


def nondominated(V: np.ndarray, tol: float = 1e-12) -> np.ndarray:
    """Indices of the rows of V (minimised component-wise) that no other row dominates; duplicates kept once."""
    if len(V) <= 1:
        return np.arange(len(V))
    order = np.lexsort(V.T[::-1])
    V = V[order]
    keep = []
    for i in range(len(V)):
        if keep:
            K = V[keep]
            if np.any(np.all(K <= V[i] + tol, axis=1)):
                continue
        keep.append(i)
    return order[np.asarray(keep, dtype=np.int64)]


class _ParetoTask:
    tree_task = "classification"

    def leaf_vectors(self, rows) -> np.ndarray:
        """(K, q): the value vector of a leaf holding ``rows`` for each label."""
        return self.contrib[:, rows, :].sum(axis=1)

    def feasible(self, V: np.ndarray) -> np.ndarray:
        return np.ones(len(V), dtype=bool)


class F1Task(_ParetoTask):
    """Maximise the F1 score of ``positive`` (default: the larger label) over the (FP, FN) Pareto front."""

    def __init__(self, positive=None):
        self.positive = positive

    def prepare(self, y, n, w):
        y = _as_1d(y, n)
        codec = LabelCodec.fit(y)
        if len(codec.classes) != 2:
            raise InputError(f"F1Task needs two labels; y has {len(codec.classes)}")
        pos = codec.classes[-1] if self.positive is None else self.positive
        if pos not in list(codec.classes):
            raise InputError(f"positive={pos!r} is not a label of y ({list(codec.classes)})")
        self.classes = list(codec.classes)
        ispos = (y == pos).astype(float)
        self.pos_index = list(codec.classes).index(pos)
        self.code = codec.encode(y)
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
        y = _as_1d(y, n)
        codec = LabelCodec.fit(y)
        if len(codec.classes) != 2:
            raise InputError(f"DemographicParityTask needs two labels; y has {len(codec.classes)}")
        a = np.asarray(self.group)
        if a.shape != (n,) or not np.isin(a, (0, 1)).all():
            raise InputError(f"group must be a 0/1 array with one entry per row ({n})")
        if a.min() == a.max():
            raise InputError("group must contain both groups (0 and 1)")
        d = float(self.delta)
        if not 0 <= d <= 1:
            raise InputError(f"delta must be in [0, 1]; got {self.delta!r}")
        fav = codec.classes[-1] if self.favourable is None else self.favourable
        if fav not in list(codec.classes):
            raise InputError(f"favourable={fav!r} is not a label of y ({list(codec.classes)})")
        self.classes = list(codec.classes)
        code = codec.encode(y)
        self.code = code
        self.w = w
        one = list(codec.classes).index(fav)
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

    def feasible(self, V: np.ndarray) -> np.ndarray:
        return (V[:, 1] <= self.limit + 1e-12) & (V[:, 2] <= self.limit + 1e-12)

    def score(self, V: np.ndarray) -> np.ndarray:
        return np.where(self.feasible(V), V[:, 0], np.inf)


def solve_dp_pareto(Xb, y, task, max_depth: int = 2, min_samples_leaf: int = 1, sample_weight=None,
                    time_limit: float | None = None):
    """Best tree for a Pareto task on a binary matrix ``Xb`` (0 goes left): (Tree, SolveResult, root front).

    The result's objective is the task's score of the chosen tree (1 - F1, or the weighted errors); the
    front is the root's nondominated value vectors (rows), so a user can pick another trade-off.
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
    deadline = Deadline(time_limit)
    memo: dict = {}
    counters = {"subproblems": 0, "cache_hits": 0, "max_front": 0}

    def front(rows, d):
        """(values (k, q), provenance list): ('leaf', label) or ('split', f, i_left, i_right)."""
        key = (rows.tobytes(), d)
        if key in memo:
            counters["cache_hits"] += 1
            return memo[key]
        counters["subproblems"] += 1
        if deadline.stop():
            raise TimeoutError
        leaves = task.leaf_vectors(rows)
        vals = [leaves] if len(rows) >= ml else []
        prov = [("leaf", k) for k in range(len(leaves))] if len(rows) >= ml else []
        if d > 0:
            for f in range(p):
                if deadline.stop():   # a merge of large fronts takes long: check between split columns too
                    raise TimeoutError
                go = Z[rows, f]
                nr = int(go.sum())
                if nr < max(1, ml) or len(rows) - nr < max(1, ml):
                    continue
                VL, _ = front(rows[~go], d - 1)
                VR, _ = front(rows[go], d - 1)
                if not len(VL) or not len(VR):
                    continue
                S = (VL[:, None, :] + VR[None, :, :]).reshape(-1, VL.shape[1])
                ok = task.feasible(S)
                idx = np.nonzero(ok)[0]
                if not len(idx):
                    continue
                keep = idx[nondominated(S[idx])]
                vals.append(S[keep])
                prov.extend(("split", f, int(k // len(VR)), int(k % len(VR))) for k in keep)
        if vals:
            V = np.vstack(vals)
            ok = np.nonzero(task.feasible(V))[0]
            keep = ok[nondominated(V[ok])]
            res = (V[keep], [prov[k] for k in keep])
        else:
            res = (np.zeros((0, task.contrib.shape[2])), [])
        counters["max_front"] = max(counters["max_front"], len(res[0]))
        memo[key] = res
        return res

    def build(rows, d, i, heap, labels, pos):
        _, prov = front(rows, d)
        pr = prov[i]
        if pr[0] == "leaf":
            heap[pos] = -1
            labels[pos] = pr[1]
            return
        f = pr[1]
        heap[pos] = f
        go = Z[rows, f]
        build(rows[~go], d - 1, pr[2], heap, labels, 2 * pos + 1)
        build(rows[go], d - 1, pr[3], heap, labels, 2 * pos + 2)

    termination = "optimal"
    rows0 = np.arange(n)
    best_d = 0
    for d in range(D + 1):       # iterative deepening: a time limit keeps the deepest finished depth's tree
        try:
            front(rows0, d)
            best_d = d
        except TimeoutError:
            termination = "interrupted" if STOP.is_set() else "time_limit"
            break
    V, _ = front(rows0, best_d)
    if not len(V):
        raise InputError("no tree satisfies the task's constraints (infeasible); relax delta or min_samples_leaf")
    sc = task.score(V)
    i = int(np.argmin(sc))
    if not np.isfinite(sc[i]):
        raise InputError("no tree satisfies the task's constraints (infeasible); relax delta")
    size = 2 ** (best_d + 1) - 1
    heap = np.full(size, -2, np.int64)
    labels = np.zeros(size, np.int64)
    build(rows0, best_d, i, heap, labels, 0)
    tree = heap_to_tree(heap, lambda c: (c, 0.5), p, "classification", task.classes)
    leaf = tree.apply(Z.astype(float))
    counts = np.zeros((tree.n_nodes, 2))
    np.add.at(counts, (leaf, task.code), w)
    tree.value = counts
    lab = np.zeros(tree.n_nodes, np.int64)
    # heap_to_tree numbers nodes in preorder; map the heap labels across
    pre = []

    def walk(u):
        pre.append(u)
        if heap[u] >= 0:
            walk(2 * u + 1)
            walk(2 * u + 2)
    walk(0)
    lab[:] = labels[np.asarray(pre)]
    tree.label = lab
    objective = float(sc[i])
    runtime = time.perf_counter() - t0
    bound = objective if termination == "optimal" else None
    result = finish("dp-pareto", "opttrees-dp", termination, objective, bound, runtime, counters["subproblems"],
                    [Incumbent(runtime, objective, objective if bound is not None else float("nan"), 0.0)],
                    timings={"total": runtime, **counters})
    return tree, result, V
