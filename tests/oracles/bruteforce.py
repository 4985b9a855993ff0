"""Exhaustive search over parallel-split trees of depth <= 2 (test oracle for the MIO and heuristics).

Every split position between adjacent distinct values of every feature is tried at every node; the objective
is separable over subtrees, so the search enumerates each subtree's options independently.
"""
from __future__ import annotations

import numpy as np


def _candidates(X, idx):
    for j in range(X.shape[1]):
        vals = np.unique(X[idx, j])
        for a, b in zip(vals[:-1], vals[1:]):
            mid = (a + b) / 2
            yield j, mid if a < mid <= b else b   # neighbouring floats have no midpoint between them


def _leaf_cost(y, idx, K, w):
    if len(idx) == 0:
        return 0.0
    counts = np.bincount(y[idx], weights=w[idx], minlength=K)
    return counts.sum() - counts.max()


def best_subtree(X, y, idx, depth, K, alpha_scaled, nmin, w):
    """Minimum of (errors + alpha_scaled * splits) over subtrees of ``depth`` on rows ``idx``; inf if infeasible."""
    best = _leaf_cost(y, idx, K, w) if len(idx) >= nmin or len(idx) == 0 else np.inf
    if depth == 0:
        return best
    for j, thr in _candidates(X, idx):
        left = idx[X[idx, j] < thr]
        right = idx[X[idx, j] >= thr]
        cost = alpha_scaled
        cost += best_subtree(X, y, left, depth - 1, K, alpha_scaled, nmin, w)
        if cost >= best:
            continue
        cost += best_subtree(X, y, right, depth - 1, K, alpha_scaled, nmin, w)
        best = min(best, cost)
    return best


def brute_force_objective(X, y, depth, alpha=0.0, min_samples_leaf=1, sample_weight=None):
    """Optimal normalised objective errors/L̂ + alpha*splits over all trees of depth <= ``depth``."""
    y = np.asarray(y)
    K = int(y.max()) + 1
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    counts = np.bincount(y, weights=w, minlength=K)
    base = counts.sum() - counts.max()
    base = base if base > 0 else 1.0
    best = best_subtree(X, y, np.arange(len(y)), depth, K, alpha * base, min_samples_leaf, w)
    return best / base


KNAPSACK_WEIGHTS = np.array([3.0, 4.0, 5.0, 2.0])
KNAPSACK_CAPACITY = 8.0


def binary_knapsack_problem():
    """A user MILP decision region for SPO tests: max v·x over binary x with weights·x <= capacity."""
    import pyomo.environ as pyo
    from opttrees.oracles import PyomoDecisionProblem

    def build(b):
        b.x = pyo.Var(range(4), domain=pyo.Binary)
        b.cap = pyo.Constraint(expr=sum(KNAPSACK_WEIGHTS[j] * b.x[j] for j in range(4)) <= KNAPSACK_CAPACITY)
        return [b.x[j] for j in range(4)]
    return PyomoDecisionProblem(build, sense="max")


def brute_force_cost(X, y, depth, nodes=None, pen=0.0, minleaf=1, w=None, loss="mis", M=None):
    """Minimum raw cost (leaf losses + ``pen`` per split) over every tree of depth <= ``depth`` with at most
    ``nodes`` splits on every midpoint of raw ``X``; every leaf holds >= ``minleaf`` rows (weight-0 rows
    count as absent: drop them first). ``loss``: "mis" (weighted misclassification, y = class codes), "cost"
    (``M[true, predicted]``), "sq" (weighted squared error around the weighted mean)."""
    import functools

    X = np.asarray(X, float)
    y = np.asarray(y)
    n = len(y)
    w = np.ones(n) if w is None else np.asarray(w, float)
    K = (len(M) if loss == "cost" else int(y.max()) + 1) if loss != "sq" else 1

    def leaf(rows):
        if len(rows) < minleaf:
            return np.inf
        if loss == "sq":
            ww, yy = w[rows], y[rows].astype(float)
            mu = np.average(yy, weights=ww)
            return float(np.sum(ww * (yy - mu) ** 2))
        c = np.bincount(y[rows], weights=w[rows], minlength=K)
        return float((c @ M).min()) if loss == "cost" else float(c.sum() - c.max())

    @functools.lru_cache(maxsize=None)
    def best(rows, d, k):
        idx = np.array(rows, dtype=np.int64)
        v = leaf(idx)
        if d == 0 or k == 0:
            return v
        for j, thr in _candidates(X, idx):
            go = X[idx, j] >= thr
            left, right = idx[~go], idx[go]
            if len(left) < max(1, minleaf) or len(right) < max(1, minleaf):
                continue
            for kl in range(k):
                v = min(v, pen + best(tuple(left), d - 1, kl) + best(tuple(right), d - 1, k - 1 - kl))
        return v

    return best(tuple(range(n)), depth, (2 ** depth - 1) if nodes is None else nodes)


# ------------------------------------------------------------------------------------- constrained trees
def enumerate_structures(X, depth, features=None, idx=None):
    """Every parallel-split tree of depth <= ``depth`` on the rows ``idx`` whose splits leave both sides non-empty,
    as nested tuples ("leaf",) / ("split", j, threshold, left, right); thresholds at midpoints, as the MIO's."""
    idx = np.arange(X.shape[0]) if idx is None else idx
    out = [("leaf",)]
    if depth == 0:
        return out
    feats = range(X.shape[1]) if features is None else features
    for j, thr in _candidates(X[:, list(feats)], idx):
        j = list(feats)[j]
        left, right = idx[X[idx, j] < thr], idx[X[idx, j] >= thr]
        for a in enumerate_structures(X, depth - 1, feats, left):
            for b in enumerate_structures(X, depth - 1, feats, right):
                out.append(("split", j, thr, a, b))
    return out


def structure_tree(spec, n_classes=None, labels=None, values=None, classes=None, names=None, p=None):
    """A Tree of a nested structure; leaves in preorder get ``labels`` (classification) or ``values``."""
    from opttrees.tree import Tree

    cl, cr, feat, thr = [], [], [], []

    def rec(s):
        k = len(cl)
        cl.append(-1); cr.append(-1); feat.append(-1); thr.append(0.0)
        if s[0] == "split":
            feat[k], thr[k] = s[1], s[2]
            cl[k] = rec(s[3])
            cr[k] = rec(s[4])
        return k

    rec(spec)
    m = len(cl)
    leaves = [k for k in range(m) if cl[k] == -1]
    if labels is not None:
        lab = np.zeros(m, dtype=np.int64)
        lab[leaves] = labels
        return Tree(cl, cr, feat, thr, np.zeros((m, n_classes)), task="classification", label=lab, classes=classes,
                    feature_names=names, n_features=p)
    val = np.zeros((m, 1))
    val[leaves, 0] = values
    return Tree(cl, cr, feat, thr, val, task="regression", feature_names=names, n_features=p)


def n_leaves(spec) -> int:
    return 1 if spec[0] == "leaf" else n_leaves(spec[3]) + n_leaves(spec[4])


def best_constrained_classifier(X, y, depth, constraints, features=None, names=None, sample_weight=None,
                                split_cost=0.0):
    """Fewest weighted errors (plus ``split_cost`` per split) over every tree of depth <= ``depth`` whose splits
    leave both sides non-empty (all leaf labellings of a binary problem) that satisfies every constraint;
    (errors + split_cost * splits, tree) or (inf, None)."""
    import itertools

    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    best, best_tree = np.inf, None
    for spec in enumerate_structures(X, depth, features):
        L = n_leaves(spec)
        for labels in itertools.product((0, 1), repeat=L):
            tree = structure_tree(spec, 2, np.array(labels), classes=[0, 1], names=names, p=X.shape[1])
            errors = float(w[tree.predict(X) != y].sum()) + split_cost * (L - 1)
            if errors >= best:
                continue
            if all(c.satisfied(tree, X, y, sample_weight) for c in constraints):
                best, best_tree = errors, tree
    return best, best_tree


def _monotone_values(X, y, tree, constraint, w):
    """Least absolute loss leaf values of ``tree`` subject to the monotone constraint (an LP)."""
    from scipy.optimize import linprog

    from opttrees.constraints.declarations import _leaves_under, _split_features

    leaves = [int(t) for t in tree.leaves]
    pos = {t: k for k, t in enumerate(leaves)}
    leaf = tree.apply(X)
    n, L = len(y), len(leaves)
    # variables: beta (L), e (n) with e_i >= |y_i - beta_leaf(i)|
    c = np.r_[np.zeros(L), w]
    A, b = [], []
    for i in range(n):
        row = np.zeros(L + n); row[pos[int(leaf[i])]] = 1; row[L + i] = -1; A.append(row); b.append(y[i])
        row = np.zeros(L + n); row[pos[int(leaf[i])]] = -1; row[L + i] = -1; A.append(row); b.append(-y[i])
    j = constraint._j
    for m in range(tree.n_nodes):
        if tree.is_leaf(m) or j not in _split_features(tree, m):
            continue
        for s in _leaves_under(tree, int(tree.children_left[m])):
            for t in _leaves_under(tree, int(tree.children_right[m])):
                row = np.zeros(L + n)
                row[pos[s]] += constraint.direction
                row[pos[t]] -= constraint.direction
                A.append(row); b.append(0.0)
    res = linprog(c, A_ub=np.array(A), b_ub=np.array(b), bounds=[(None, None)] * (L + n), method="highs")
    return res.fun, res.x[:L]


def best_constrained_regressor(X, y, depth, constraints, names=None):
    """Least absolute loss over every tree of depth <= ``depth`` satisfying every constraint: leaf medians, or
    the LP's leaf values under a Monotone constraint; (loss, tree) or (inf, None)."""
    from opttrees.constraints.declarations import Monotone

    w = np.ones(len(y))
    mono = [c for c in constraints if isinstance(c, Monotone)]
    best, best_tree = np.inf, None
    for spec in enumerate_structures(X, depth):
        tree = structure_tree(spec, values=np.zeros(n_leaves(spec)), names=names, p=X.shape[1])
        leaf = tree.apply(X)
        if mono:
            loss, vals = _monotone_values(X, y, tree, mono[0], w)
        else:
            vals = np.array([np.median(y[leaf == t]) for t in tree.leaves])
            loss = None
        tree = structure_tree(spec, values=vals, names=names, p=X.shape[1])
        if loss is None:
            loss = float(np.abs(y - tree.predict(X)).sum())
        if loss < best - 1e-9 and all(c.satisfied(tree, X, y) for c in constraints):
            best, best_tree = loss, tree
    return best, best_tree
