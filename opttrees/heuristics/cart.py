"""scikit-learn's CART converted exactly into an opttrees Tree, pruned with opttrees' objective.

sklearn sends ``float32(x) <= t`` left; opttrees sends ``x < b`` left. We recompute each threshold as the
guarded midpoint between the training values on either side (:func:`opttrees.data.prepared.cut_of_le`, exact for
neighbouring floats), so the converted tree routes every training point exactly as sklearn did, and store class
counts recomputed from the training data. :func:`cart_classifier_tree` then checks the minimum leaf size on the
training rows: a tree that broke it is never returned silently.
"""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.tree import DecisionTreeClassifier

from ..data.prepared import PreparedData, cut_of_le, split_between
from ..objectives import class_counts, leaf_sizes, majority_label, misclassification_baseline
from ..pruning import optimal_subtree
from ..tree import LEAF, Tree


def tree_from_sklearn(est, data: PreparedData) -> Tree:
    """Convert a fitted sklearn DecisionTreeClassifier trained on ``data.X`` (encoded labels ``data.y``)."""
    sk = est.tree_
    X = data.X
    X32 = X.astype(np.float32)    # sklearn's copy of the features (compared in float64 with its float64 t)
    n_nodes = sk.node_count
    cl = np.where(sk.children_left >= 0, sk.children_left, LEAF)
    cr = np.where(sk.children_right >= 0, sk.children_right, LEAF)
    feat = np.where(cl >= 0, sk.feature, LEAF)
    thr = np.zeros(n_nodes)
    for t in np.nonzero(cl >= 0)[0]:
        j = sk.feature[t]
        b = cut_of_le(X[:, j], float(sk.threshold[t]), float32=True)
        if b is None:    # every training value on one side: keep them there
            sent_left = float(X32[0, j]) <= float(sk.threshold[t])
            b = float(np.nextafter(X[:, j].max(), np.inf)) if sent_left else float(X[:, j].min())
        thr[t] = b
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
    (:func:`opttrees.data.prepared.split_between`, exact for neighbouring floats), so ``x < t`` routes every training
    row as sklearn's ``rank <= t`` did: the cut lies in (the node's largest left value, its smallest right
    value] (a midpoint of neighbouring floats rounds onto the upper one, which must still go right)."""
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
        # u[:k] go left: those <= mid, as CART on the raw values sends them, but always u[lo] left and u[hi]
        # right (lo < k <= hi), also when the midpoint of neighbouring floats rounds onto u[hi]
        k = int(np.clip(np.searchsorted(u, mid, side="right"), int(lo) + 1, int(hi)))
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
    tree = enforce_min_leaf(tree, data, min_samples_leaf)
    return prune_classification(tree, data, alpha)


def enforce_min_leaf(tree: Tree, data: PreparedData, min_samples_leaf: int) -> Tree:
    """``tree`` when every leaf holds at least ``min_samples_leaf`` training rows (as a converted CART tree
    does); else, with a warning (a conversion bug, to report), the tree with the parent of each too-small leaf
    made a leaf until none is left. Merging only grows leaves and the root holds every row, so this ends
    with a feasible tree, and no greedy tree or CART start breaks the minimum leaf size silently."""
    if min_samples_leaf <= 1:
        return tree
    small = tree.leaves[leaf_sizes(tree, data.X) < min_samples_leaf]
    if not small.size:
        return tree
    warnings.warn(f"CART tree: {small.size} leaves hold fewer than min_samples_leaf={min_samples_leaf} training "
                  "rows after conversion (an opttrees bug, please report it); their parents' splits are removed",
                  RuntimeWarning, stacklevel=3)
    while small.size:
        parents = tree.parents()[small]
        if not (parents >= 0).any():   # the root itself (prepare() keeps at least min_samples_leaf rows)
            break
        tree = fill_class_payload(tree.prune(np.unique(parents[parents >= 0])), data)
        small = tree.leaves[leaf_sizes(tree, data.X) < min_samples_leaf]
    return tree
