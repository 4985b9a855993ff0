"""Cost-complexity pruning and the thesis's tuning procedures (Algorithms 2.4–2.7).

Pruning uses the same normalised objective as training: g(t) = (R(t) - R(T_t)) / (L̂ * complexity(T_t)),
so a critical value of alpha here is directly the ``alpha`` of the local search and the MIO.
Validation error is a rate: misclassification rate, or the mean squared / mean absolute error for regression.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import objectives as obj
from ..tree import LEAF, Tree
from .core import Problem, refit_leaves


def node_membership(tree: Tree, X: np.ndarray) -> np.ndarray:
    """(n, n_nodes) bool: row i passes through node t (left iff a·x < b)."""
    X = np.asarray(X, dtype=np.float64)
    M = np.zeros((X.shape[0], tree.n_nodes), dtype=bool)
    M[:, 0] = True
    for t in range(tree.n_nodes):  # children have larger ids than parents in every Tree we build
        if tree.children_left[t] == LEAF:
            continue
        a = tree.split_coef(t)
        left = (X @ a if tree.feature[t] < 0 else X[:, tree.feature[t]]) < tree.threshold[t]
        M[:, tree.children_left[t]] = M[:, t] & left
        M[:, tree.children_right[t]] = M[:, t] & ~left
    return M


def _node_complexity(tree: Tree) -> np.ndarray:
    c = np.zeros(tree.n_nodes)
    for t in range(tree.n_nodes):
        if tree.children_left[t] != LEAF:
            c[t] = 1 if tree.feature[t] >= 0 else np.count_nonzero(tree.coef[t])
    return c


def _descendants(tree: Tree) -> list[np.ndarray]:
    out = []
    for t in range(tree.n_nodes):
        stack, ds = [t], []
        while stack:
            u = stack.pop()
            ds.append(u)
            if tree.children_left[u] != LEAF:
                stack += [tree.children_left[u], tree.children_right[u]]
        out.append(np.array(ds))
    return out


def _train_node_losses(tree: Tree, prob: Problem):
    """Raw training loss R(t) of every node as a leaf, and its prediction (label or constant)."""
    M = node_membership(tree, prob.X)
    if prob.loss == "absolute":  # medians are order statistics: one weighted median per node
        w = prob.data.sample_weight
        pred = np.array([obj.weighted_median(prob.y[M[:, t]], w[M[:, t]]) for t in range(tree.n_nodes)])
        return (M * (w[:, None] * np.abs(prob.y[:, None] - pred[None, :]))).sum(axis=0), pred
    S = M.T.astype(np.float64) @ prob.Z
    if prob.loss == "misclassification":
        return obj.misclassification_loss(S), obj.majority_label(S)
    w = np.maximum(S[:, 0], 1e-300)
    ybar = np.average(prob.y, weights=prob.data.sample_weight)
    return obj.squared_loss(S), S[:, 1] / w + ybar


def _val_node_losses(tree: Tree, prob: Problem, X_val, y_val, pred) -> tuple[np.ndarray, float]:
    """Validation loss of every node as a leaf (using its training prediction), and the validation size."""
    M = node_membership(tree, X_val).astype(np.float64)
    if prob.loss == "misclassification":
        classes = np.asarray(prob.data.codec.classes)
        lab = classes[pred]  # (n_nodes,)
        wrong = (np.asarray(y_val)[:, None] != lab[None, :]).astype(np.float64)
        return (M * wrong).sum(axis=0), float(len(y_val))
    y = np.asarray(y_val, dtype=np.float64)
    r = y[:, None] - pred[None, :]
    r = np.abs(r) if prob.loss == "absolute" else r * r
    return (M * r).sum(axis=0), float(len(y))


@dataclass
class PrunePath:
    """Critical alphas (non-decreasing, alphas[0] = 0), validation errors and the pruned node per step."""

    alphas: np.ndarray
    errors: np.ndarray | None
    pruned: list  # pruned[i] = node made a leaf to get tree i (None for i = 0)
    tree: Tree

    def tree_at(self, i: int, prob: Problem) -> Tree:
        return collapse(self.tree, [t for t in self.pruned[1:i + 1]], prob)


def prune_path(tree: Tree, prob: Problem, X_val=None, y_val=None) -> PrunePath:
    """Algorithm 2.4 PRUNE: repeatedly collapse the weakest link; record alpha_i and validation error v_i."""
    R, pred = _train_node_losses(tree, prob)
    cplx = _node_complexity(tree)
    desc = _descendants(tree)
    V = None
    if X_val is not None:
        V, nv = _val_node_losses(tree, prob, X_val, y_val, pred)
    active_leaf = tree.children_left == LEAF
    removed = np.zeros(tree.n_nodes, bool)  # nodes strictly below a collapsed node

    def cur_val():
        leaves = active_leaf & ~removed
        return float(V[leaves].sum() / nv)

    alphas, errs, pruned = [0.0], [cur_val() if V is not None else np.nan], [None]
    while True:
        branches = np.nonzero(~active_leaf & ~removed)[0]
        if not len(branches):
            break
        best_g, best_t = np.inf, -1
        for t in branches:
            ds = desc[t]
            live = ds[~removed[ds]]
            leaves = live[active_leaf[live]]
            c = cplx[live[~active_leaf[live]]].sum()
            g = (R[t] - R[leaves].sum()) / (prob.baseline * c)
            if g < best_g - 1e-15:
                best_g, best_t = g, t
        active_leaf[best_t] = True
        removed[desc[best_t][1:]] = True
        alphas.append(max(best_g, alphas[-1], 0.0))
        errs.append(cur_val() if V is not None else np.nan)
        pruned.append(int(best_t))
    return PrunePath(np.array(alphas), np.array(errs) if V is not None else None, pruned, tree)


def collapse(tree: Tree, nodes, prob: Problem) -> Tree:
    """Tree with every node in ``nodes`` turned into a leaf (leaf payloads refitted on training data)."""
    cut = set(int(t) for t in nodes)
    cl, cr, fe, th, co = [], [], [], [], []

    def rec(t):
        k = len(cl)
        cl.append(LEAF), cr.append(LEAF), fe.append(LEAF), th.append(0.0)
        co.append(tree.coef[t] if tree.coef is not None else None)
        if tree.children_left[t] != LEAF and t not in cut:
            fe[k], th[k] = int(tree.feature[t]), float(tree.threshold[t])
            left = rec(tree.children_left[t])
            right = rec(tree.children_right[t])
            cl[k], cr[k] = left, right
        return k

    rec(0)
    m = len(cl)
    out = Tree(cl, cr, fe, th, np.zeros((m, 1)), task=tree.task,
               coef=np.array(co) if tree.coef is not None else None, classes=tree.classes,
               feature_names=tree.feature_names, n_features=tree.n_features)
    return refit_leaves(out, prob)


def prune_to_alpha(tree: Tree, prob: Problem, alpha: float) -> Tree:
    """The pruned subtree optimal for ``alpha`` (ties go to pruning: a split must gain more than alpha)."""
    path = prune_path(tree, prob)
    i = int(np.nonzero(path.alphas <= alpha + 1e-12)[0].max())
    return path.tree_at(i, prob)


def _interval_mid(lo: float, hi: float) -> float:
    if np.isfinite(hi):
        return 0.5 * (lo + hi)
    # the root-only tree wins: any alpha above lo works; take a finite value safely inside
    return 2.0 * lo if lo > 0 else 1.0


def tune_cp(tree: Tree, prob: Problem, X_val, y_val) -> tuple[float, float]:
    """Algorithm 2.5 TUNECP: (alpha, validation error) at the midpoint of the best pruning interval."""
    path = prune_path(tree, prob, X_val, y_val)
    i = int(np.argmin(path.errors))
    hi = path.alphas[i + 1] if i + 1 < len(path.alphas) else np.inf
    return _interval_mid(path.alphas[i], hi), float(path.errors[i])


def batch_tune_cp(trees, prob: Problem, X_val, y_val) -> tuple[float, float]:
    """Algorithm 2.6 BATCHTUNECP on the given (already selected) trees: (alpha_best, v_best).

    f(alpha) = mean over trees of the validation error of each tree pruned at alpha; alpha_best is the
    midpoint of [min, max] of all minimisers (the unbounded last interval is capped, see _interval_mid).
    """
    paths = [prune_path(t, prob, X_val, y_val) for t in trees]
    bps = np.unique(np.concatenate([p.alphas for p in paths]))
    f = np.zeros(len(bps))
    for p in paths:
        idx = np.searchsorted(p.alphas, bps + 1e-15, side="right") - 1
        f += p.errors[idx]
    f /= len(paths)
    vbest = float(f.min())
    arg = np.nonzero(f <= vbest + 1e-12)[0]
    lo = bps[arg[0]]
    last = arg[-1]
    hi = bps[last + 1] if last + 1 < len(bps) else np.inf
    return _interval_mid(lo, hi), vbest
