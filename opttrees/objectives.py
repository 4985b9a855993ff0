"""Leaf costs from sufficient statistics, shared by every method.

Greedy, local search, pruning, MIO extraction and evaluation all call this code, so ``alpha``,
``min_samples_leaf`` and the normalisation by the root-only baseline loss L̂ mean the same everywhere:

    objective(T) = (sum of leaf losses) / L̂  +  alpha * (number of splits)

Misclassification: a leaf's loss is its (weighted) count minus its largest class count.
"""
from __future__ import annotations

import numpy as np


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
