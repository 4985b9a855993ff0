"""What each node of a tree says about the data, shared by the matplotlib picture and the HTML viewer.

Why one module: both pictures must show the same counts, summaries and prediction texts. Counts come from the
tree itself when it carries them (a classification tree's leaf class counts, summed upwards so every branch
node has its own), otherwise from rows ``X`` (and targets ``y``) routed through the tree; with neither, a node
shows its prediction only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data.prepared import check_X
from ..errors import InputError
from ..tree import LEAF, Tree

#: classes listed one per line in a picture before the rest are summarised as "+k more"
MAX_LISTED_CLASSES = 8


@dataclass
class NodeStats:
    """Per-node figures, every array indexed by node id (None when unknown)."""

    n: np.ndarray | None                 # rows (or summed weights) reaching each node
    counts: np.ndarray | None            # (n_nodes, n_classes) class counts, classification only
    mean: np.ndarray | None              # regression target summaries, from y
    std: np.ndarray | None
    median: np.ndarray | None
    predicted: list[str]                 # each node's prediction as text (branch nodes: majority / mean)
    predicted_class: np.ndarray | None   # class index per node (-1 unknown), for colours
    class_names: list[str] | None
    source: str                          # "tree", "data" or "none": where n and counts came from


def class_display_names(tree: Tree, class_names=None) -> list[str] | None:
    """Names to show for the tree's classes: ``class_names`` (one per class) or the labels as text."""
    n_classes = len(tree.classes) if tree.classes is not None else (tree.value.shape[1]
                                                                     if tree.task == "classification" else 0)
    if class_names is not None:
        names = [str(c) for c in class_names]
        if len(names) != n_classes:
            raise InputError(f"class_names has {len(names)} names but the tree has {n_classes} classes"
                             + (f" ({list(tree.classes)})" if tree.classes is not None else ""))
        return names
    if tree.classes is not None:
        return [str(c.item() if isinstance(c, np.generic) else c) for c in tree.classes]
    return [str(k) for k in range(n_classes)] if n_classes else None


def align_X(tree: Tree, X, name: str = "X") -> np.ndarray:
    """``X`` as the tree's feature matrix: a raw table of a tree with an encoding (category columns) is encoded as
    ``predict`` encodes it; else a DataFrame holding every feature name is matched by name."""
    if tree.encoding is not None and isinstance(X, pd.DataFrame):
        return tree.feature_matrix(X)
    names = tree.feature_names
    if isinstance(X, pd.DataFrame) and names is not None and all(f in X.columns for f in names):
        X = X[list(names)]
    return check_X(X, tree.n_features, name)


def subtree_sums(tree: Tree, leaf_values: np.ndarray) -> np.ndarray:
    """Each node's sum of ``leaf_values`` over the leaves below it (branch rows of the input are ignored)."""
    out = np.where((tree.children_left == LEAF)[:, None], leaf_values, 0.0)
    for t in tree.preorder()[::-1]:
        if tree.children_left[t] != LEAF:
            out[t] = out[tree.children_left[t]] + out[tree.children_right[t]]
    return out


def _class_codes(tree: Tree, y, n_classes: int) -> np.ndarray:
    y = np.asarray(y).ravel()
    if tree.classes is None:
        if not np.issubdtype(y.dtype, np.integer) or (y.size and (y.min() < 0 or y.max() >= n_classes)):
            raise InputError(f"y must hold class indices 0..{n_classes - 1} (the tree has no class labels)")
        return y.astype(np.int64)
    lookup = {(c.item() if isinstance(c, np.generic) else c): k for k, c in enumerate(tree.classes)}
    codes = np.array([lookup.get(v.item() if isinstance(v, np.generic) else v, -1) for v in y], dtype=np.int64)
    if (codes < 0).any():
        raise InputError(f"y has labels the tree does not know: {sorted({str(v) for v in y[codes < 0]})[:5]}; "
                         f"its classes are {list(tree.classes)}")
    return codes


class _Routed:
    """Rows of X grouped by node without a rows x nodes matrix: O(n) memory for any data size.

    Rows are sorted by the preorder rank of their leaf; a subtree's leaves are consecutive in preorder, so
    each node's rows are one slice ``order[start[t]:stop[t]]``.
    """

    def __init__(self, tree: Tree, X):
        Xa = align_X(tree, X)
        self.n_rows = Xa.shape[0]
        self.leaf = tree.apply(Xa)
        m = tree.n_nodes
        pre = tree.preorder()
        rank = np.full(m, -1, dtype=np.int64)
        leaves = pre[tree.children_left[pre] == LEAF]
        rank[leaves] = np.arange(len(leaves))
        self.order = np.argsort(rank[self.leaf], kind="stable")
        per_leaf = np.bincount(self.leaf, minlength=m).astype(float)
        self.n = subtree_sums(tree, per_leaf[:, None])[:, 0]
        first = np.full(m, np.iinfo(np.int64).max, dtype=np.int64)
        first[leaves] = np.concatenate([[0], np.cumsum(per_leaf[leaves])[:-1]]).astype(np.int64)
        for t in pre[::-1]:
            if tree.children_left[t] != LEAF:
                first[t] = min(first[tree.children_left[t]], first[tree.children_right[t]])
        self.start, self.stop = first, first + self.n.astype(np.int64)

    def rows(self, t: int) -> np.ndarray:
        return self.order[self.start[t]:self.stop[t]]


def node_stats(tree: Tree, X=None, y=None, class_names=None, precision: int = 4) -> NodeStats:
    """Counts, summaries and prediction text of every node (see the module docstring for the sources)."""
    m = tree.n_nodes
    names = class_display_names(tree, class_names) if tree.task in ("classification", "prescription") else None
    routed = None
    if X is not None:
        routed = _Routed(tree, X)
        n_y = None if y is None else np.shape(y)[0] if np.ndim(y) else 0
        if y is not None and n_y != routed.n_rows:
            raise InputError(f"X has {routed.n_rows} rows but y has {n_y}: lengths must match")
    elif y is not None:
        raise InputError("y was given without X: pass the rows X too, so they can be routed through the tree")
    n = counts = mean = std = median = None
    source = "none"
    is_leaf = tree.children_left == LEAF
    if tree.task == "classification" and tree.value[is_leaf].sum() > 0:
        counts, source = subtree_sums(tree, tree.value), "tree"
    elif tree.task == "classification" and routed is not None and y is not None:
        K = len(names or [])
        codes = _class_codes(tree, y, K)
        per_leaf = np.bincount(routed.leaf * K + codes, minlength=m * K).reshape(m, K).astype(float)
        counts, source = subtree_sums(tree, per_leaf), "data"
    if counts is not None:
        n = counts.sum(axis=1)
    elif routed is not None:
        n, source = routed.n, "data"
    yv = None
    if y is not None and tree.task in ("regression", "linear"):
        try:
            yv = np.asarray(y, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"y must be numeric for a {tree.task} tree") from None
    if yv is not None and yv.ndim == 2 and yv.shape[1] == 1:
        yv = yv[:, 0]
    if routed is not None and yv is not None and yv.ndim == 1:   # one target: several have no single summary
        mean, std, median = np.full(m, np.nan), np.full(m, np.nan), np.full(m, np.nan)
        for t in range(m):
            rows = yv[routed.rows(t)]
            if rows.size:
                mean[t], std[t], median[t] = rows.mean(), rows.std(), np.median(rows)
    predicted_class = None
    if tree.task in ("classification", "prescription"):
        predicted_class = np.full(m, -1, dtype=np.int64)
        if tree.label is not None:
            predicted_class[:] = tree.label
        if counts is not None and tree.task == "classification":
            branch = ~is_leaf & (counts.sum(axis=1) > 0)
            top = counts.max(axis=1, keepdims=True)
            tie = (counts == top).sum(axis=1) > 1
            predicted_class[branch] = np.where(tie[branch], -1, counts[branch].argmax(axis=1))  # no majority in a tie
    predicted = [_prediction_text(tree, t, names, predicted_class, mean, precision) for t in range(m)]
    return NodeStats(n, counts, mean, std, median, predicted, predicted_class, names, source)


def _prediction_text(tree: Tree, t: int, names, predicted_class, mean, precision: int) -> str:
    leaf = tree.children_left[t] == LEAF
    if tree.task in ("classification", "prescription"):
        k = int(predicted_class[t]) if predicted_class is not None else -1
        return names[k] if names is not None and 0 <= k < len(names) else ""
    if tree.task == "regression":
        if leaf:
            return ", ".join(f"{v:.{precision}g}" for v in tree.value[t])
        return f"{mean[t]:.{precision}g}" if mean is not None and np.isfinite(mean[t]) else ""
    return tree.leaf_text(t, precision, sep="\n") if leaf else ""


def count_lines(counts_row: np.ndarray, names: list[str], limit: int = MAX_LISTED_CLASSES) -> list[str]:
    """``name: count`` lines; past ``limit`` classes only the largest nonzero ones, then ``+k more``."""
    order = np.arange(len(names))
    if len(names) > limit:
        nonzero = np.nonzero(counts_row)[0]
        order = nonzero[np.argsort(-counts_row[nonzero], kind="stable")]
    lines = [f"{names[k]}: {counts_row[k]:g}" for k in order[:limit]]
    if len(order) > limit:
        lines.append(f"+{len(order) - limit} more")
    return lines
