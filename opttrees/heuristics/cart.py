"""scikit-learn's CART converted exactly into an opttrees Tree, pruned with opttrees' objective.

sklearn sends ``float32(x) <= t`` left; opttrees sends ``x < b`` left. We recompute each threshold as the
midpoint between the training values on either side, so the converted tree routes every training point
exactly as sklearn did, and store class counts recomputed from the training data.
"""
from __future__ import annotations

import numpy as np
from sklearn.tree import DecisionTreeClassifier

from ..data import PreparedData, split_between
from ..objectives import class_counts, majority_label, misclassification_baseline
from ..pruning import optimal_subtree
from ..tree import LEAF, Tree


def tree_from_sklearn(est, data: PreparedData) -> Tree:
    """Convert a fitted sklearn DecisionTreeClassifier trained on ``data.X`` (encoded labels ``data.y``)."""
    sk = est.tree_
    X = data.X
    X32 = X.astype(np.float32)
    n_nodes = sk.node_count
    cl = np.where(sk.children_left >= 0, sk.children_left, LEAF)
    cr = np.where(sk.children_right >= 0, sk.children_right, LEAF)
    feat = np.where(cl >= 0, sk.feature, LEAF)
    thr = np.zeros(n_nodes)
    for t in np.nonzero(cl >= 0)[0]:
        j = sk.feature[t]
        left = X32[:, j] <= sk.threshold[t]
        lo = X[left, j].max() if left.any() else None
        hi = X[~left, j].min() if (~left).any() else None
        if lo is None:
            thr[t] = hi
        elif hi is None:
            thr[t] = np.nextafter(lo, np.inf)
        else:
            thr[t] = (lo + hi) / 2.0
            if not lo < thr[t] <= hi:
                thr[t] = hi
    tree = Tree(cl, cr, feat, thr, np.zeros((n_nodes, data.n_classes)), task="classification",
                label=np.zeros(n_nodes, dtype=np.int64), classes=list(data.class_labels()),
                feature_names=data.feature_names, n_features=data.p)
    return fill_class_payload(tree, data)


def fill_class_payload(tree: Tree, data: PreparedData) -> Tree:
    """Recompute class counts (subtree sums) and majority labels by routing the training data."""
    leaf = tree.apply(data.X)
    counts = class_counts(leaf, data.y, data.n_classes, tree.n_nodes, data.sample_weight)
    for t in tree.preorder()[::-1]:   # children before parents
        if not tree.is_leaf(t):
            counts[t] = counts[tree.children_left[t]] + counts[tree.children_right[t]]
    tree.value = counts
    tree.label = majority_label(counts)
    return tree


def prune_classification(tree: Tree, data: PreparedData, alpha: float) -> Tree:
    """Optimal pruning of ``tree`` for loss/L̂ + alpha*splits (keep a split only if it pays; ties prune).

    The node losses are the misclassifications of each node's stored class counts
    (:func:`opttrees.pruning.optimal_subtree`).
    """
    base = misclassification_baseline(data.y, data.n_classes, data.sample_weight)
    counts = tree.value
    return optimal_subtree(tree, counts.sum(axis=1) - counts.max(axis=1), alpha, norm=base, tol=1e-12)


def rank_indices(data: PreparedData) -> np.ndarray:
    """Each value's position among its feature's distinct values (float64 integers, exact in float32 below 2^24)."""
    _, _, values = data.ranks
    return np.column_stack([np.searchsorted(values[j], data.X[:, j]) for j in range(data.p)]).astype(np.float64)


def tree_from_ranks(est, data: PreparedData, R: np.ndarray) -> Tree:
    """Convert a sklearn tree fitted on the rank indices ``R`` (:func:`rank_indices`) into original units.

    As CART on the raw values would: the cut sits midway between the node's own neighbouring values either
    side of sklearn's rank threshold, then between the training values around that midpoint
    (:func:`opttrees.data.split_between`, exact for neighbouring floats), so ``x < t`` routes every training
    row as sklearn's ``rank <= t`` did."""
    _, _, values = data.ranks
    sk = est.tree_
    cl = np.where(sk.children_left >= 0, sk.children_left, LEAF)
    cr = np.where(sk.children_right >= 0, sk.children_right, LEAF)
    feat = np.where(cl >= 0, sk.feature, LEAF)
    thr = np.zeros(sk.node_count)
    path = est.decision_path(R).tocsc()
    for t in np.nonzero(cl >= 0)[0]:
        u = values[sk.feature[t]]
        r = R[path[:, t].indices, sk.feature[t]]
        lo, hi = r[r <= sk.threshold[t]].max(), r[r > sk.threshold[t]].min()
        mid = (u[int(lo)] + u[int(hi)]) / 2.0
        k = int(np.clip(np.searchsorted(u, mid, side="right"), 1, len(u) - 1))   # u[:k] go left
        thr[t] = split_between(float(u[k - 1]), float(u[k]))
    tree = Tree(cl, cr, feat, thr, np.zeros((sk.node_count, data.n_classes)), task="classification",
                label=np.zeros(sk.node_count, dtype=np.int64), classes=list(data.class_labels()),
                feature_names=data.feature_names, n_features=data.p)
    return fill_class_payload(tree, data)


def cart_classifier_tree(data: PreparedData, max_depth: int, min_samples_leaf: int = 1, alpha: float = 0.0,
                         random_state=None) -> Tree:
    """CART (gini) grown to ``max_depth`` with the same min leaf size, then pruned with opttrees' alpha.

    CART runs on each feature's rank indices: sklearn compares float32 values, which merges distinct values
    closer than float32 resolution (500000 and 500000.0002); ranks give the same splits on any data.
    """
    est = DecisionTreeClassifier(max_depth=max(max_depth, 1), min_samples_leaf=min_samples_leaf,
                                 random_state=random_state)
    if data.X.shape[0] < 2 ** 24:
        R = rank_indices(data)
        est.fit(R, data.y, sample_weight=data.sample_weight)
        tree = tree_from_ranks(est, data, R)
    else:
        est.fit(data.X, data.y, sample_weight=data.sample_weight)
        tree = tree_from_sklearn(est, data)
    if max_depth == 0:
        return tree.prune([0])
    return prune_classification(tree, data, alpha)
