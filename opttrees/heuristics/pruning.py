"""Cost-complexity pruning and the thesis's tuning procedures (Algorithms 2.4–2.7).

Pruning uses the same normalised objective as training: g(t) = (R(t) - R(T_t)) / (L̂ * complexity(T_t)),
so a critical value of alpha here is directly the ``alpha`` of the local search and the MIO. The weakest-link
algorithm itself is :mod:`opttrees.pruning`; this module supplies the per-node losses R(t) and the tuning.
Validation error is a rate: misclassification rate, or the mean squared / mean absolute error for regression.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import objectives as obj
from ..pruning import PruningPath, pruning_path, split_costs
from ..tree import Tree
from .core import ProblemArrays, refit_leaves


def node_membership(tree: Tree, X: np.ndarray) -> np.ndarray:
    """(n, n_nodes) bool: row i passes through node t (dense :meth:`Tree.decision_path`)."""
    return tree.decision_path(X).toarray().astype(bool)


def _train_node_losses(tree: Tree, prob: ProblemArrays):
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


def _val_node_losses(tree: Tree, prob: ProblemArrays, X_val, y_val, pred) -> tuple[np.ndarray, float]:
    """Validation loss of every node as a leaf (using its training prediction), and the validation size."""
    M = node_membership(tree, X_val).astype(np.float64)
    if prob.loss == "misclassification":
        classes = np.asarray(prob.data.class_labels())
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
    path: PruningPath | None = None  # the weakest-link path these were read from

    def tree_at(self, i: int, prob: ProblemArrays) -> Tree:
        return collapse(self.tree, [t for t in self.pruned[1:i + 1]], prob)


def prune_path(tree: Tree, prob: ProblemArrays, X_val=None, y_val=None) -> PrunePath:
    """Algorithm 2.4 PRUNE: repeatedly collapse the weakest link; record alpha_i and validation error v_i.

    One node per step (ties: the lowest node id), on the normalised objective loss / L̂ + alpha · complexity
    (:func:`opttrees.pruning.pruning_path` with ``ties="first"``).
    """
    R, pred = _train_node_losses(tree, prob)
    path = pruning_path(tree, R, norm=prob.baseline, split_cost=split_costs(tree), ties="first",
                        atol=1e-15, rtol=0.0)
    errs = None
    if X_val is not None:
        V, nv = _val_node_losses(tree, prob, X_val, y_val, pred)
        errs = path.leaf_sums(V) / nv
    pruned = [None] + [int(p[0]) for p in path.pruned[1:]]
    return PrunePath(path.alphas, errs, pruned, tree, path)


def collapse(tree: Tree, nodes, prob: ProblemArrays) -> Tree:
    """Tree with every node in ``nodes`` turned into a leaf (leaf payloads refitted on training data)."""
    return refit_leaves(tree.prune(nodes), prob)


def prune_to_alpha(tree: Tree, prob: ProblemArrays, alpha: float) -> Tree:
    """The pruned subtree optimal for ``alpha`` (ties go to pruning: a split must gain more than alpha)."""
    path = prune_path(tree, prob)
    assert path.path is not None  # prune_path always records it
    return path.tree_at(path.path.index_at(alpha), prob)


def _interval_mid(lo: float, hi: float) -> float:
    if np.isfinite(hi):
        return 0.5 * (lo + hi)
    # the root-only tree wins: any alpha above lo works; take a finite value safely inside
    return 2.0 * lo if lo > 0 else 1.0


def tune_cp(tree: Tree, prob: ProblemArrays, X_val, y_val) -> tuple[float, float]:
    """Algorithm 2.5 TUNECP: (alpha, validation error) at the midpoint of the best pruning interval."""
    path = prune_path(tree, prob, X_val, y_val)
    errors = path.errors
    assert errors is not None  # validation data given
    i = int(np.argmin(errors))
    hi = path.alphas[i + 1] if i + 1 < len(path.alphas) else np.inf
    return _interval_mid(path.alphas[i], hi), float(errors[i])


def batch_tune_cp(trees, prob: ProblemArrays, X_val, y_val) -> tuple[float, float]:
    """Algorithm 2.6 BATCHTUNECP on the given (already selected) trees: (alpha_best, v_best).

    f(alpha) = mean over trees of the validation error of each tree pruned at alpha; alpha_best is the
    midpoint of [min, max] of all minimisers (the unbounded last interval is capped, see _interval_mid).
    """
    paths = [prune_path(t, prob, X_val, y_val) for t in trees]
    bps = np.unique(np.concatenate([p.alphas for p in paths]))
    f = np.zeros(len(bps))
    for p in paths:
        idx = np.searchsorted(p.alphas, bps + 1e-15, side="right") - 1
        assert p.errors is not None  # validation data given
        f += p.errors[idx]
    f /= len(paths)
    vbest = float(f.min())
    arg = np.nonzero(f <= vbest + 1e-12)[0]
    lo = bps[arg[0]]
    last = arg[-1]
    hi = bps[last + 1] if last + 1 < len(bps) else np.inf
    return _interval_mid(lo, hi), vbest
