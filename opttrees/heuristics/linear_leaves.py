"""Lasso leaves and Dunn's local search for ORT-L (thesis ch. 5).

Why a module of its own: with linear leaves a leaf's loss is no longer a function of a few sufficient
statistics, so the constant-leaf kernels cannot score a split. Here every leaf is a weighted lasso solved by
coordinate descent (numba), warm-started from the coefficients the node last had (the thesis's GLMNET trick:
after a small change of the tree few cycles are needed).

Objective, with L̂ the root-only constant tree's squared loss (as for ORT) and features min-max scaled to
[0, 1] on the training data (**the penalty applies to the coefficients of the scaled features**, the scale
the MIO uses; the Tree stores them mapped back to original units)::

    (1/L̂) Σ_i w_i (y_i − β_0t − β_t·xs_i)²  +  λ Σ_t ||β_t||_1  +  α · splits

It separates by leaf; leaf t's problem times L̂ / (2 W_t) (W_t = Σ_{i in t} w_i, = |I_t| unweighted) is
glmnet's / scikit-learn's ``Lasso`` problem with ``alpha = λ_GLM = λ L̂ / (2 W_t)`` (thesis (5.13)).

The local search is Algorithm 2.1 with parallel splits (Algorithm 2.2: best split with the children
subtrees fixed, or promote either child; with ``split_type="hyperplane"`` also random hyperplanes),
accepting strict improvements only, from several starts: the
constant-leaf local-search tree (its lasso-leaf objective is therefore an upper bound on the result) and
random trees. Pragmatic choice: at a node with many distinct values a feature's thresholds are restricted to
``max_thresholds`` quantile positions among the feasible split positions (all positions when there are
fewer), so one node visit costs about p · max_thresholds · (leaves below) lasso fits.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from .. import objectives as obj
from ..data.prepared import PreparedData
from ..errors import InputError
from ..interrupt import STOP, Budget
from ..params import check_alpha, check_nonnegative
from ..tree import HYPERPLANE, LEAF, Tree
from .core import check_depth, standardized, to_user

#: coordinate descent stops when no coefficient moves by more than this (in units of y's spread)
CD_TOL = 1e-10
CD_MAX_ITER = 100_000
#: a move must improve the objective by more than this (relative) to be accepted
IMPROVE_TOL = 1e-9


# ---------------------------------------------------------------------------------------------- one leaf
@njit(cache=True, nogil=True)
def _lasso_cd(Xs, y, w, rows, lam, beta, tol, max_iter):
    """Weighted lasso on ``rows``: min (1/2W) Σ w (y − b0 − x·β)² + lam ||β||_1 (intercept unpenalised).

    ``beta`` is the warm start and is overwritten. Returns (intercept, weighted SSE, cycles).
    """
    n, p = rows.shape[0], Xs.shape[1]
    W = 0.0
    for k in range(n):
        W += w[rows[k]]
    if n == 0 or W <= 0.0:
        beta[:] = 0.0
        return 0.0, 0.0, 0
    xm = np.zeros(p)
    ym = 0.0
    for k in range(n):
        i = rows[k]
        ym += w[i] * y[i]
        for j in range(p):
            xm[j] += w[i] * Xs[i, j]
    ym /= W
    xm /= W
    Xc = np.empty((n, p))
    r = np.empty(n)
    ww = np.empty(n)
    a = np.zeros(p)
    ysd = 0.0
    for k in range(n):
        i = rows[k]
        ww[k] = w[i] / W
        r[k] = y[i] - ym
        ysd += ww[k] * r[k] * r[k]
        for j in range(p):
            Xc[k, j] = Xs[i, j] - xm[j]
            a[j] += ww[k] * Xc[k, j] * Xc[k, j]
    scale = math.sqrt(ysd) + 1e-300
    for j in range(p):
        if a[j] <= 1e-14:
            beta[j] = 0.0
        if beta[j] != 0.0:
            for k in range(n):
                r[k] -= Xc[k, j] * beta[j]
    it = 0
    while it < max_iter:
        it += 1
        delta = 0.0
        for j in range(p):
            if a[j] <= 1e-14:
                continue
            old = beta[j]
            rho = a[j] * old
            for k in range(n):
                rho += ww[k] * Xc[k, j] * r[k]
            if rho > lam:
                new = (rho - lam) / a[j]
            elif rho < -lam:
                new = (rho + lam) / a[j]
            else:
                new = 0.0
            if new != old:
                d = new - old
                for k in range(n):
                    r[k] -= Xc[k, j] * d
                beta[j] = new
                step = abs(d) * math.sqrt(a[j])
                if step > delta:
                    delta = step
        if delta <= tol * scale:
            break
    b0 = ym
    sse = 0.0
    for j in range(p):
        b0 -= xm[j] * beta[j]
    for k in range(n):
        sse += ww[k] * r[k] * r[k]
    return b0, sse * W, it


def glm_penalty(leaf_penalty: float, baseline: float, weight_sum: float) -> float:
    """λ_GLM = λ L̂ / (2 W_t): the tree penalty λ as glmnet's / scikit-learn's ``Lasso(alpha=...)`` (thesis (5.13))."""
    return float(leaf_penalty) * float(baseline) / (2.0 * float(weight_sum)) if weight_sum > 0 else 0.0


@dataclass
class LeafFit:
    """A leaf's lasso on scaled features: intercept, coefficients, weighted SSE and its objective share."""

    intercept: float
    coef: np.ndarray
    sse: float
    objective: float   # sse / L̂ + λ ||coef||_1


def fit_leaf(data: PreparedData, rows: np.ndarray, leaf_penalty: float, baseline: float,
             warm: np.ndarray | None = None) -> LeafFit:
    """The lasso of one leaf (``rows`` of ``data``) on the scaled features ``data.Xs``."""
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    beta = np.zeros(data.p) if warm is None else np.array(warm, dtype=np.float64)
    W = float(data.sample_weight[rows].sum())
    lam = glm_penalty(leaf_penalty, baseline, W)
    b0, sse, _ = _lasso_cd(data.Xs, np.asarray(data.y, dtype=np.float64), data.sample_weight, rows, lam, beta,
                           CD_TOL, CD_MAX_ITER)
    return LeafFit(float(b0), beta, float(sse), float(sse / baseline + leaf_penalty * np.abs(beta).sum()))


def to_original_units(data: PreparedData, intercept: float, coef_scaled: np.ndarray) -> np.ndarray:
    """``[intercept, coef]`` of the same affine function of the raw features (xs = (x − lo) / span)."""
    sc = data.scaling
    c = np.asarray(coef_scaled, dtype=np.float64) / sc.span
    return np.concatenate([[intercept - float(np.sum(c * sc.lo))], c])


def to_scaled_units(data: PreparedData, value: np.ndarray) -> tuple[float, np.ndarray]:
    """Inverse of :func:`to_original_units`: (intercept, coefficients) on the scaled features."""
    sc = data.scaling
    c = np.asarray(value[1:], dtype=np.float64)
    return float(value[0] + np.sum(c * sc.lo)), c * sc.span


def check_leaf_penalty(leaf_penalty, data: PreparedData | None = None, min_samples_leaf: int = 1) -> float:
    """λ >= 0; λ = 0 with leaves that may hold no more rows than features gets a warning naming the setting
    (the leaf regression is then not unique and interpolates its rows)."""
    lam = check_nonnegative("leaf_penalty", leaf_penalty)
    if data is not None and lam == 0 and min(data.n, min_samples_leaf) <= data.p:
        warnings.warn(f"leaf_model='linear' with leaf_penalty=0 and min_samples_leaf={min_samples_leaf}: a leaf "
                      f"may hold no more rows than the {data.p} features, where its least-squares fit is not "
                      f"unique and interpolates; set leaf_penalty > 0 or min_samples_leaf > {data.p}",
                      UserWarning, stacklevel=3)
    return lam


# ---------------------------------------------------------------------------------------------- whole trees
def linear_leaf_tree(tree: Tree, data: PreparedData, leaf_penalty: float) -> Tree:
    """``tree``'s structure with a lasso fitted at every node on the training rows reaching it (task
    ``"linear"``, original units): leaves predict with theirs, a branch keeps its own for :meth:`Tree.prune`.
    A node no training row reaches gets its parent's model."""
    lam = check_leaf_penalty(leaf_penalty)
    base = obj.baseline(data.y, "squared", None, data.sample_weight)
    at = tree.decision_path(data.X).tocsc()
    value = np.zeros((tree.n_nodes, data.p + 1))
    parent = tree.parents()
    for t in tree.preorder():
        rows = at.indices[at.indptr[t]:at.indptr[t + 1]]
        if len(rows) or parent[t] < 0:
            f = fit_leaf(data, rows, lam, base)
            value[t] = to_original_units(data, f.intercept, f.coef)
        else:
            value[t] = value[parent[t]]
    return Tree(tree.children_left, tree.children_right, tree.feature, tree.threshold, value, task="linear",
                coef=tree.coef, feature_names=list(data.feature_names), n_features=data.p)


def linear_tree_objective(tree: Tree, data: PreparedData, alpha: float = 0.0, leaf_penalty: float = 0.0,
                          loss: str = "squared", penalty: str = "l1", refit: bool = True,
                          coef_tol: float = 1e-9) -> float:
    """(Σ leaf losses) / L̂ + λ Σ_leaves ||β_t|| + α · complexity, β_t on the scaled features.

    ``refit``: each leaf's best lasso on its training rows (squared loss only; what the local search scores);
    otherwise the tree's own leaf models are charged, with ``loss`` "squared" or "absolute" and ``penalty``
    "l1" (Σ|β|) or "l0" (number of |β| > ``coef_tol``) — what the ORT-L MIO optimises. L̂ is the root-only
    constant tree's loss of the same kind, as in ORT.
    """
    if loss not in ("squared", "absolute"):
        raise InputError(f"loss must be 'squared' or 'absolute'; got {loss!r}")
    if penalty not in ("l1", "l0"):
        raise InputError(f"penalty must be 'l1' or 'l0'; got {penalty!r}")
    w = data.sample_weight
    base = obj.baseline(data.y, loss, None, w)
    if refit:
        if loss != "squared" or penalty != "l1":
            raise InputError("refit=True fits lasso leaves: squared loss and the l1 penalty only")
        tree = linear_leaf_tree(tree, data, leaf_penalty)
    if tree.task != "linear":
        raise InputError(f"linear_tree_objective needs a linear-leaf tree, not task {tree.task!r}")
    r = np.asarray(data.y, dtype=np.float64) - tree.predict(data.X)
    total = float(np.sum(w * (r * r if loss == "squared" else np.abs(r))))
    beta = tree.value[tree.leaves, 1:] * data.scaling.span
    pen = np.abs(beta).sum() if penalty == "l1" else float(np.count_nonzero(np.abs(beta) > coef_tol))
    return total / base + leaf_penalty * pen + alpha * obj.tree_complexity(tree)


# ---------------------------------------------------------------------------------------------- local search
@dataclass
class _Node:
    """A mutable node of the search tree: a parallel split (feature >= 0), a hyperplane (feature HYPERPLANE,
    ``coef`` in original units) or a leaf (``beta``: warm-start coefficients)."""

    feature: int = LEAF
    threshold: float = 0.0
    left: "_Node | None" = None
    right: "_Node | None" = None
    beta: np.ndarray = field(default_factory=lambda: np.zeros(0))
    coef: np.ndarray | None = None

    # typed views for a branch node, which always has both children (and a hyperplane its coef)
    @property
    def lo(self) -> _Node:
        assert self.left is not None, "a branch node has two children"
        return self.left

    @property
    def hi(self) -> _Node:
        assert self.right is not None, "a branch node has two children"
        return self.right

    @property
    def a(self) -> np.ndarray:
        assert self.coef is not None, "a hyperplane node has coefficients"
        return self.coef

    def go_left(self, X: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The Tree's routing rule (left iff a·x < b), computed as :meth:`Tree._walk` does."""
        if self.feature >= 0:
            return X[rows, self.feature] < self.threshold
        Xr = X[rows]
        return np.einsum("ij,ij->i", Xr, np.broadcast_to(self.a, Xr.shape)) < self.threshold

    def complexity(self) -> int:
        """Splits, or non-zero hyperplane coefficients (as :func:`opttrees.objectives.tree_complexity`)."""
        if self.feature == LEAF:
            return 0
        own = 1 if self.feature >= 0 else int(np.count_nonzero(self.a))
        return own + self.lo.complexity() + self.hi.complexity()

    def nodes(self) -> list[_Node]:
        out: list[_Node] = []
        stack = [self]
        while stack:
            u = stack.pop()
            out.append(u)
            if u.feature != LEAF:
                stack += [u.hi, u.lo]
        return out

    def depth(self) -> int:
        return 0 if self.feature == LEAF else 1 + max(self.lo.depth(), self.hi.depth())


class _Search:
    """One local search over ``data`` (Algorithms 2.1/2.2 with lasso leaves)."""

    def __init__(self, data: PreparedData, D: int, alpha: float, lam: float, nmin: int, max_thresholds: int, rng,
                 n_hyperplanes: int = 0):
        self.data, self.D, self.alpha, self.lam, self.nmin = data, D, alpha, lam, nmin
        self.max_thresholds, self.rng, self.n_hyperplanes = max_thresholds, rng, n_hyperplanes
        self.y = np.asarray(data.y, dtype=np.float64)
        self.base = obj.baseline(self.y, "squared", None, data.sample_weight)
        self.features = [int(j) for j in np.nonzero(data.splittable)[0]]
        self.cache: dict = {}
        self.fits = 0

    # --- losses
    def leaf_objective(self, node: _Node, rows: np.ndarray) -> float:
        if len(rows) < self.nmin:
            return math.inf
        key = rows.tobytes()
        hit = self.cache.get(key)
        if hit is not None:
            node.beta = hit[1].copy()
            return hit[0]
        d = self.data
        beta = node.beta if node.beta.shape == (d.p,) else np.zeros(d.p)
        lam = glm_penalty(self.lam, self.base, float(d.sample_weight[rows].sum()))
        _, sse, _ = _lasso_cd(d.Xs, self.y, d.sample_weight, rows, lam, beta, CD_TOL, CD_MAX_ITER)
        self.fits += 1
        node.beta = beta
        val = float(sse / self.base + self.lam * np.abs(beta).sum())
        if len(self.cache) > 200_000:
            self.cache.clear()
        self.cache[key] = (val, beta.copy())
        return val

    def loss(self, node: _Node, rows: np.ndarray) -> float:
        """Objective share of the subtree ``node`` on ``rows`` (inf when a leaf has fewer than N_min rows)."""
        if node.feature == LEAF:
            return self.leaf_objective(node, rows)
        go_left = node.go_left(self.data.X, rows)
        left = self.loss(node.lo, rows[go_left])
        if math.isinf(left):
            return math.inf
        own = 1 if node.feature >= 0 else int(np.count_nonzero(node.a))
        return left + self.loss(node.hi, rows[~go_left]) + self.alpha * own

    # --- moves
    def thresholds(self, rows: np.ndarray, j: int, values: np.ndarray | None = None) -> np.ndarray:
        """Midpoints between consecutive distinct values of feature j (or of ``values``, one per row) on
        ``rows``, keeping N_min rows on each side, thinned to ``max_thresholds`` quantile positions."""
        x = np.sort(self.data.X[rows, j] if values is None else values)
        pos = np.nonzero(x[1:] > x[:-1])[0]          # split between x[k] and x[k+1]
        pos = pos[(pos + 1 >= self.nmin) & (len(x) - pos - 1 >= self.nmin)]
        if len(pos) > self.max_thresholds:
            pos = pos[np.unique(np.round(np.linspace(0, len(pos) - 1, self.max_thresholds)).astype(np.int64))]
        return (x[pos] + x[pos + 1]) / 2

    def best_split(self, lower: _Node, upper: _Node, rows: np.ndarray, extra: float):
        best, arg = math.inf, None
        X = self.data.X
        for j in self.features:
            for b in self.thresholds(rows, j):
                go_left = X[rows, j] < b
                err = self.loss(lower, rows[go_left])
                if err >= best:
                    continue
                err += self.loss(upper, rows[~go_left]) + extra
                if err < best:
                    best, arg = err, (j, float(b), None)
        return best, arg

    def best_random_hyperplane(self, lower: _Node, upper: _Node, rows: np.ndarray, extra: float):
        """The best of ``n_hyperplanes`` random directions (2..p features, normal weights on the scaled
        features), each with every (thinned) threshold; children fixed. ``extra``: α · the children's
        complexity (the split's own α · non-zeros is added here)."""
        d = self.data
        best, arg = math.inf, None
        if len(self.features) < 2:
            return best, arg
        X = d.X
        for _ in range(self.n_hyperplanes):
            k = int(self.rng.integers(2, len(self.features) + 1))
            feats = self.rng.choice(self.features, size=k, replace=False)
            a = np.zeros(d.p)
            a[feats] = self.rng.normal(size=k) / d.scaling.span[feats]
            node = _Node(HYPERPLANE, 0.0, coef=a)
            Xr = X[rows]
            proj = np.einsum("ij,ij->i", Xr, np.broadcast_to(a, Xr.shape))
            cost = extra + self.alpha * k
            for b in self.thresholds(rows, 0, proj):
                node.threshold = float(b)
                go_left = node.go_left(X, rows)
                err = self.loss(lower, rows[go_left])
                if err + cost >= best:
                    continue
                err += self.loss(upper, rows[~go_left]) + cost
                if err < best:
                    best, arg = err, (HYPERPLANE, float(b), a)
        return best, arg

    def optimize_node(self, node: _Node, rows: np.ndarray, depth: int) -> bool:
        """Algorithm 2.2 at ``node`` (rows reaching it, its depth); True when the subtree changed."""
        current = self.loss(node, rows)
        best, move = current, None
        leaf = node.feature == LEAF
        lower = _Node(beta=node.beta.copy()) if leaf else node.lo
        upper = _Node(beta=node.beta.copy()) if leaf else node.hi
        if depth + max(lower.depth(), upper.depth()) < self.D:
            below = self.alpha * (lower.complexity() + upper.complexity())
            err, arg = self.best_split(lower, upper, rows, below + self.alpha)
            if arg is not None and err < best:
                best, move = err, ("split", arg)
            if self.n_hyperplanes:
                err, arg = self.best_random_hyperplane(lower, upper, rows, below)
                if arg is not None and err < best:
                    best, move = err, ("split", arg)
        if not leaf:
            for name, child in (("lower", lower), ("upper", upper)):
                err = self.loss(child, rows)
                if err < best:
                    best, move = err, (name, child)
        if move is None or not best < current - IMPROVE_TOL * max(1.0, abs(current)):
            return False
        if move[0] == "split":
            node.feature, node.threshold, node.coef = move[1]
            node.left, node.right = lower, upper
        else:
            child = move[1]
            node.feature, node.threshold, node.left, node.right = child.feature, child.threshold, child.left, child.right
            node.beta, node.coef = child.beta, child.coef
        return True

    def rows_at(self, root: _Node) -> dict:
        """id(node) -> (rows reaching it, its depth) for every node of the current tree."""
        out, stack = {}, [(root, np.arange(self.data.n), 0)]
        while stack:
            u, rows, dep = stack.pop()
            out[id(u)] = (rows, dep)
            if u.feature != LEAF:
                go_left = u.go_left(self.data.X, rows)
                stack += [(u.lo, rows[go_left], dep + 1), (u.hi, rows[~go_left], dep + 1)]
        return out

    def run(self, root: _Node, max_passes: int = 1000, budget=None) -> float:
        all_rows = np.arange(self.data.n)
        for _ in range(max_passes):
            prev = self.loss(root, all_rows)
            nodes = root.nodes()
            self.rng.shuffle(nodes)
            for u in nodes:
                where = self.rows_at(root)
                if id(u) not in where:      # removed by an earlier move of this pass
                    continue
                self.optimize_node(u, *where[id(u)])
                if _stopped(budget):
                    return self.loss(root, all_rows)
            cur = self.loss(root, all_rows)
            if not cur < prev - IMPROVE_TOL * max(1.0, abs(prev)):
                return cur
        return self.loss(root, all_rows)

    def random_tree(self, rows: np.ndarray, depth: int) -> _Node:
        """A random feasible start: a random feature and feasible threshold per node, each level with prob. 0.8."""
        node = _Node(beta=np.zeros(self.data.p))
        if depth >= self.D or len(rows) < 2 * self.nmin or (depth > 0 and self.rng.random() > 0.8):
            return node
        for j in self.rng.permutation(self.features):
            th = self.thresholds(rows, int(j))
            if len(th):
                b = float(th[self.rng.integers(len(th))])
                go_left = self.data.X[rows, j] < b
                node.feature, node.threshold = int(j), b
                node.left = self.random_tree(rows[go_left], depth + 1)
                node.right = self.random_tree(rows[~go_left], depth + 1)
                return node
        return node


def _stopped(budget) -> bool:
    """Ctrl-C (inside :func:`opttrees.interrupt.stop_on_sigint`) or the budget: keep the tree so far."""
    return STOP.is_set() or (budget is not None and budget.stop())


def _from_tree(tree: Tree, p: int, hyperplanes: bool) -> _Node:
    def rec(t):
        if tree.is_leaf(t):
            return _Node(beta=np.zeros(p))
        if tree.feature[t] < 0 and not hyperplanes:
            raise InputError("a start tree has hyperplane splits; use split_type='hyperplane'")
        coef = None if tree.feature[t] >= 0 else tree.split_coef(t)
        return _Node(int(tree.feature[t]), float(tree.threshold[t]), rec(tree.children_left[t]),
                     rec(tree.children_right[t]), coef=coef)
    return rec(0)


def _to_tree(root: _Node, data: PreparedData, leaf_penalty: float) -> Tree:
    cl: list[int] = []
    cr: list[int] = []
    fe: list[int] = []
    th: list[float] = []
    co: list[np.ndarray] = []

    def rec(u):
        k = len(cl)
        cl.append(LEAF), cr.append(LEAF), fe.append(LEAF), th.append(0.0), co.append(np.zeros(data.p))
        if u.feature != LEAF:
            fe[k], th[k] = u.feature, u.threshold
            if u.feature == HYPERPLANE:
                co[k] = u.coef
            left = rec(u.left)
            cl[k], cr[k] = left, rec(u.right)
        return k

    rec(root)
    hyper = HYPERPLANE in fe
    skeleton = Tree(np.array(cl), np.array(cr), np.array(fe), np.array(th), np.zeros((len(cl), 1)), task="regression",
                    n_features=data.p,
                    coef=np.array(co) if hyper else None)
    return linear_leaf_tree(skeleton, data, leaf_penalty)


@dataclass
class LinearSearchResult:
    """Best tree, its objective, and each start's objective before and after the search (start order)."""

    tree: Tree
    objective: float
    start_objectives: np.ndarray
    final_objectives: np.ndarray
    lasso_fits: int = 0


def linear_local_search(data: PreparedData, max_depth: int, alpha: float = 0.0, leaf_penalty: float = 0.01,
                        min_samples_leaf: int = 1, n_restarts: int = 10, random_state=None, starts=None,
                        max_thresholds: int = 32, constant_restarts: int | None = None, split_type: str = "parallel",
                        n_hyperplane_restarts: int = 5, time_limit=None, return_all: bool = False):
    """ORT-L by local search: the best lasso-leaf tree over several starts (a Tree, or a LinearSearchResult).

    Stops after the current node visit on Ctrl-C (:data:`opttrees.interrupt.STOP`) or at ``time_limit`` (seconds
    or a shared :class:`~opttrees.interrupt.Budget`), returning the best tree so far (every start tree is valid).

    Starts: ``starts`` (Trees with parallel splits) when given; otherwise the constant-leaf local search's tree
    (:func:`opttrees.heuristics.local_search`, ``constant_restarts`` restarts, default ``n_restarts``) and then
    random trees, ``n_restarts`` starts in all. ``split_type="hyperplane"`` (ORT-LH) also tries, at every
    node visit, ``n_hyperplane_restarts`` random hyperplanes with every (thinned) threshold; complexity then
    counts non-zero split coefficients. (Simpler than the thesis's Algorithm 3.1: no coordinate-wise
    refinement of the hyperplane.) Each start is improved only by strict improvements, so the
    result's objective is at most every start's objective with lasso leaves refitted
    (:func:`linear_tree_objective`).

    The search runs on a standardised y (:func:`~opttrees.heuristics.core.standardized`; ``leaf_penalty``, per
    unit of coefficient in y's units, scaled with it) and the leaves are mapped back to y's units.
    """
    if data.task != "regression":
        raise InputError("linear leaves need regression data (prepare(X, y, task='regression'))")
    data, back = standardized(data)
    if back is not None:
        leaf_penalty = check_leaf_penalty(leaf_penalty) * back.target.scale
    return to_user(_linear_local_search(data, max_depth, alpha, leaf_penalty, min_samples_leaf, n_restarts,
                                        random_state, starts, max_thresholds, constant_restarts, split_type,
                                        n_hyperplane_restarts, time_limit, return_all), back)


def _linear_local_search(data, max_depth, alpha, leaf_penalty, min_samples_leaf, n_restarts, random_state, starts,
                         max_thresholds, constant_restarts, split_type, n_hyperplane_restarts, time_limit,
                         return_all):
    D = check_depth(max_depth)
    alpha = check_alpha(alpha)
    lam = check_leaf_penalty(leaf_penalty, data, min_samples_leaf)
    budget = Budget(time_limit)
    if not isinstance(max_thresholds, (int, np.integer)) or max_thresholds < 1:
        raise InputError(f"max_thresholds must be an integer >= 1; got {max_thresholds!r}")
    if not isinstance(n_restarts, (int, np.integer)) or n_restarts < 1:
        raise InputError(f"n_restarts must be an integer >= 1; got {n_restarts!r}")
    if split_type not in ("parallel", "hyperplane"):
        raise InputError(f"split_type must be 'parallel' or 'hyperplane'; got {split_type!r}")
    hyper = split_type == "hyperplane"
    if not isinstance(n_hyperplane_restarts, (int, np.integer)) or n_hyperplane_restarts < 0:
        raise InputError(f"n_hyperplane_restarts must be an integer >= 0; got {n_hyperplane_restarts!r}")
    rng = np.random.default_rng(random_state if not isinstance(random_state, np.random.RandomState)
                                else random_state.randint(2**31 - 1))
    search = _Search(data, D, alpha, lam, int(min_samples_leaf), int(max_thresholds), rng,
                     int(n_hyperplane_restarts) if hyper else 0)
    all_rows = np.arange(data.n)
    if starts is None:
        from .local_search import local_search
        const = local_search(data, D, alpha, min_samples_leaf, n_restarts=constant_restarts or n_restarts,
                             random_state=int(rng.integers(2**31 - 1)), loss="squared")
        roots = [_from_tree(const, data.p, hyper)]
        roots += [search.random_tree(all_rows, 0) for _ in range(int(n_restarts) - 1)]
    else:
        roots = [_from_tree(t, data.p, hyper) for t in starts]
        for t in starts:
            if t.depth > D:
                raise InputError(f"a start tree has depth {t.depth} > max_depth={D}")
    before, after = [], []
    for root in roots:
        before.append(search.loss(root, all_rows))
        after.append(search.run(root, budget=budget) if math.isfinite(before[-1]) else math.inf)
        if _stopped(budget):
            break
    k = int(np.argmin(after))
    tree = _to_tree(roots[k], data, lam)
    objective = linear_tree_objective(tree, data, alpha, lam, refit=False)
    if not return_all:
        return tree
    return LinearSearchResult(tree, objective, np.array(before), np.array(after), search.fits)
