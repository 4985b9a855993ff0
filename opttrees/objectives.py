"""Leaf costs from sufficient statistics, shared by every method.

Greedy, local search, pruning, MIO extraction and evaluation all call this code, so ``alpha``,
``min_samples_leaf`` and the normalisation by the root-only baseline loss L̂ mean the same everywhere:

    objective(T) = (sum of leaf losses) / L̂  +  alpha * (number of splits)

Misclassification: a leaf's loss is its (weighted) count minus its largest class count.
"""
from __future__ import annotations

import numpy as np

from .data.prepared import is_constant_target


def class_counts(leaf: np.ndarray, y: np.ndarray, n_classes: int, n_nodes: int,
                 sample_weight: np.ndarray | None = None) -> np.ndarray:
    """(n_nodes, K) weighted class counts per node id in ``leaf``."""
    w = np.ones(len(y)) if sample_weight is None else sample_weight
    counts = np.zeros((n_nodes, n_classes))
    np.add.at(counts, (leaf, y), w)
    return counts


def misclassification_baseline(y: np.ndarray, n_classes: int, sample_weight: np.ndarray | None = None) -> float:
    """L̂ for classification: the errors of predicting the (weighted) majority class at the root.

    Falls back to 1.0 when the data has a single class, so the normalised objective stays defined.
    """
    w = np.ones(len(y)) if sample_weight is None else sample_weight
    counts = np.bincount(y, weights=w, minlength=n_classes)
    base = float(counts.sum() - counts.max())
    return base if base > 0 else 1.0


def majority_label(counts: np.ndarray) -> np.ndarray:
    """Deterministic argmax (lowest class index wins ties)."""
    return np.argmax(counts, axis=-1)


def misclassification_loss(counts: np.ndarray) -> np.ndarray:
    """Per-leaf loss N_t - max_k N_kt."""
    return counts.sum(axis=-1) - counts.max(axis=-1)


def classification_objective(tree, X, y, n_classes: int, alpha: float = 0.0, baseline: float | None = None,
                             sample_weight: np.ndarray | None = None, use_tree_labels: bool = True) -> float:
    """Normalised objective of ``tree`` on (X, y): routes the data and recomputes every leaf loss.

    With ``use_tree_labels`` the leaf's stored label is charged (what the tree predicts); otherwise the
    best label per leaf (what an optimiser would choose).
    """
    leaf = tree.apply(X)
    counts = class_counts(leaf, y, n_classes, tree.n_nodes, sample_weight)
    if use_tree_labels and tree.label is not None:
        loss = counts.sum(axis=1) - counts[np.arange(tree.n_nodes), tree.label]
    else:
        loss = misclassification_loss(counts)
    base = misclassification_baseline(y, n_classes, sample_weight) if baseline is None else baseline
    return float(loss[tree.leaves].sum() / base + alpha * tree.n_splits)


def leaf_sizes(tree, X) -> np.ndarray:
    """Number of rows of X in each leaf (indexed like tree.leaves)."""
    leaf = tree.apply(X)
    return np.bincount(leaf, minlength=tree.n_nodes)[tree.leaves]


# ---------------------------------------------------------------------------------------------------------
# Regression losses and a single entry point for every task.
#
# Sufficient statistics per leaf: (weight, weighted sum, weighted sum of squares) for squared loss; the
# sorted (y, w) pairs for absolute loss (the weighted median is not a function of moments).

LOSSES = ("misclassification", "squared", "absolute")


def _weights(n: int, sample_weight) -> np.ndarray:
    return np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)


def weighted_median(y: np.ndarray, w: np.ndarray | None = None) -> float:
    """Lower weighted median (deterministic; minimises the weighted absolute error)."""
    y = np.asarray(y, dtype=np.float64)
    if y.size == 0:
        return 0.0
    w = np.ones_like(y) if w is None else np.asarray(w, dtype=np.float64)
    o = np.argsort(y, kind="stable")
    cw = np.cumsum(w[o])
    k = int(np.searchsorted(cw, 0.5 * cw[-1], side="left"))
    return float(y[o[min(k, len(o) - 1)]])


def squared_baseline(y, sample_weight=None) -> float:
    """L̂ for squared loss: weighted SSE about the weighted mean, by two passes (no cancellation whatever y's
    offset); 1.0 if y is constant, i.e. its values are equal relative to their own scale
    (:func:`opttrees.data.prepared.is_constant_target`), not relative to 1: y ~ 1e-9 has a baseline ~ n * 1e-18."""
    y = np.asarray(y, dtype=np.float64)
    if is_constant_target(y):
        return 1.0
    w = _weights(len(y), sample_weight)
    mu = np.average(y, weights=w)
    base = float(np.sum(w * (y - mu) ** 2))
    return base if base > 0 and np.isfinite(base) else 1.0


def absolute_baseline(y, sample_weight=None) -> float:
    """L̂ for absolute loss: weighted SAE about the weighted median (1.0 if y is constant, as for squared loss)."""
    y = np.asarray(y, dtype=np.float64)
    if is_constant_target(y):
        return 1.0
    w = _weights(len(y), sample_weight)
    base = float(np.sum(w * np.abs(y - weighted_median(y, w))))
    return base if base > 0 and np.isfinite(base) else 1.0


def baseline(y, loss: str, n_classes: int | None = None, sample_weight=None) -> float:
    """Root-only baseline L̂ for any loss (never 0, so the normalised objective is always defined)."""
    if loss == "misclassification":
        y = np.asarray(y, dtype=np.int64)
        return misclassification_baseline(y, int(n_classes if n_classes else y.max() + 1), sample_weight)
    if loss == "squared":
        return squared_baseline(y, sample_weight)
    if loss == "absolute":
        return absolute_baseline(y, sample_weight)
    raise ValueError(f"unknown loss {loss!r}; expected one of {LOSSES}")


def regression_leaf_stats(leaf: np.ndarray, y: np.ndarray, n_nodes: int,
                          sample_weight=None) -> np.ndarray:
    """(n_nodes, 3) per-node [sum w, sum w*y, sum w*y^2]."""
    w = _weights(len(y), sample_weight)
    s = np.zeros((n_nodes, 3))
    np.add.at(s[:, 0], leaf, w)  # column views: the adds land in s
    np.add.at(s[:, 1], leaf, w * y)
    np.add.at(s[:, 2], leaf, w * y * y)
    return s


def squared_loss(stats: np.ndarray) -> np.ndarray:
    """Per-node SSE about the mean from [w, wy, wy^2] (clipped at 0 against cancellation).

    Sums of raw y cancel catastrophically (y = 1e6 + 0.01 x: every SSE comes out 0 or noise), so pass
    statistics of a centred (or standardised) y, as the heuristics' ``ProblemArrays.Z`` is; :func:`node_losses`
    computes SSEs by two passes instead."""
    w = stats[..., 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        sse = stats[..., 2] - np.where(w > 0, stats[..., 1] ** 2 / np.where(w > 0, w, 1.0), 0.0)
    return np.maximum(sse, 0.0)


def leaf_predictions(leaf: np.ndarray, y: np.ndarray, n_nodes: int, loss: str, sample_weight=None) -> np.ndarray:
    """Best constant per node: the weighted mean (squared) or weighted median (absolute); 0 when empty."""
    w = _weights(len(y), sample_weight)
    out = np.zeros(n_nodes)
    if loss == "squared":   # about the overall mean: the sums hold the spread, not the offset
        y = np.asarray(y, dtype=np.float64)
        c = float(np.average(y, weights=w)) if len(y) and w.sum() > 0 else 0.0
        s = regression_leaf_stats(leaf, y - c, n_nodes, w)
        nz = s[:, 0] > 0
        out[nz] = c + s[nz, 1] / s[nz, 0]
        return out
    for t in np.unique(leaf):
        m = leaf == t
        out[t] = weighted_median(y[m], w[m])
    return out


def node_losses(leaf: np.ndarray, y: np.ndarray, n_nodes: int, loss: str, n_classes: int | None = None,
                sample_weight=None, prediction: np.ndarray | None = None) -> np.ndarray:
    """Raw (unnormalised) loss per node id in ``leaf``.

    With ``prediction`` (per node: class index or constant) the given predictions are charged, as for a
    fitted tree evaluated on new data; otherwise each node's best prediction on this data is used.
    """
    w = _weights(len(y), sample_weight)
    if loss == "misclassification":
        if n_classes is None:
            raise ValueError("node_losses: the misclassification loss needs n_classes")
        counts = class_counts(leaf, np.asarray(y, dtype=np.int64), int(n_classes), n_nodes, w)
        if prediction is None:
            return misclassification_loss(counts)
        return counts.sum(axis=1) - counts[np.arange(n_nodes), np.asarray(prediction, dtype=np.int64)]
    y = np.asarray(y, dtype=np.float64)
    if prediction is None:   # two passes: each node's best constant, then the losses about it (no cancellation)
        prediction = leaf_predictions(leaf, y, n_nodes, loss, w)
    r = y - np.asarray(prediction, dtype=np.float64)[leaf]
    per = w * (r * r if loss == "squared" else np.abs(r))
    out = np.zeros(n_nodes)
    np.add.at(out, leaf, per)
    return out


def tree_complexity(tree) -> int:
    """Number of splits for parallel trees; number of (split, feature) uses for hyperplane trees."""
    c = 0
    for t in np.nonzero(tree.children_left != -1)[0]:
        if tree.feature[t] >= 0:
            c += 1
        else:
            c += int(np.count_nonzero(tree.coef[t]))
    return c


def tree_objective(tree, X, y, loss: str, alpha: float = 0.0, n_classes: int | None = None,
                   baseline_loss: float | None = None, sample_weight=None, refit_leaves: bool = True) -> float:
    """Normalised objective (sum of leaf losses)/L̂ + alpha * complexity of ``tree`` on (X, y).

    The one code path every method is judged by. ``refit_leaves`` charges each leaf its best prediction on
    (X, y) (what an optimiser would choose); otherwise the tree's stored predictions are charged.
    """
    leaf = tree.apply(X)
    pred = None
    if not refit_leaves:
        pred = tree.label if loss == "misclassification" else tree.value[:, 0]
    per = node_losses(leaf, y, tree.n_nodes, loss, n_classes, sample_weight, pred)
    base = baseline(y, loss, n_classes, sample_weight) if baseline_loss is None else baseline_loss
    return float(per[tree.leaves].sum() / base + alpha * tree_complexity(tree))


def min_leaf_ok(tree, X, min_samples_leaf: int) -> bool:
    """Every leaf holds at least ``min_samples_leaf`` rows of X (empty leaves violate it, as in the local search)."""
    return bool(leaf_sizes(tree, X).min(initial=np.iinfo(np.int64).max) >= min_samples_leaf)
