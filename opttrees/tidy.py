"""Tidy a fitted tree: splits that do nothing on the training rows are removed.

Why a module of its own, next to the Tree: the estimators' post-fit step (``estimators.common.finish_fit``)
and every formulation's ``extract()`` remove the same splits — a split that sends no training row one way
(an MIO may leave a leaf empty: ``x0 < min(x0)``) and a split into two leaves predicting the same — and
neither layer may import the other.
"""
from __future__ import annotations

import numpy as np

from .tree import Tree


def _same_prediction(tree: Tree, a: int, b: int) -> bool:
    """Whether leaves ``a`` and ``b`` predict the same: class / treatment, decision (SPO), or exactly equal values."""
    if tree.task in ("classification", "prescription"):
        return tree.label is not None and tree.label[a] == tree.label[b]
    if tree.task == "spo":
        dec = tree.extras.get("decision")
        return dec is not None and np.array_equal(dec[a], dec[b])
    return np.array_equal(tree.value[a], tree.value[b])


def _new_id(tree: Tree, t: int) -> int:
    stop = np.zeros(tree.n_nodes, dtype=bool)
    stop[t] = True
    return int(np.flatnonzero(tree.preorder(stop=stop) == t)[0])


def _merge_leaves(tree: Tree, t: int) -> Tree:
    """``tree`` with branch ``t`` (two leaves predicting the same) made one leaf predicting it: class counts
    summed, the children's class / treatment / decision / value kept."""
    left, right = int(tree.children_left[t]), int(tree.children_right[t])
    out = tree.prune([t])
    k = _new_id(tree, t)
    if tree.task == "classification":
        out.value[k] = tree.value[left] + tree.value[right]
        out._labels()[k] = tree._labels()[left]
    elif tree.task == "prescription":
        out._labels()[k] = tree._labels()[left]
    elif tree.task == "spo":
        out.extras["decision"][k] = tree.extras["decision"][left]
    else:
        out.value[k] = tree.value[left]
    return out


def _skip_split(tree: Tree, t: int, keep: int) -> Tree:
    """``tree`` with branch ``t`` replaced by its child subtree ``keep`` (the side every training row takes)."""
    m = tree.n_nodes
    parent = tree.parents()
    cl, cr = tree.children_left.copy(), tree.children_right.copy()
    root = keep
    if t != 0:
        root, p = 0, parent[t]
        if cl[p] == t:
            cl[p] = keep
        else:
            cr[p] = keep
    order, stack = [], [root]
    while stack:    # preorder from the new root
        u = stack.pop()
        order.append(u)
        if cl[u] != -1:
            stack += [int(cr[u]), int(cl[u])]
    old = np.asarray(order, dtype=np.int64)
    new = np.full(m, -1, dtype=np.int64)
    new[old] = np.arange(len(old))
    branch = cl[old] != -1
    extras = {k: (v[old] if v.ndim and v.shape[0] == m else v.copy()) for k, v in tree.extras.items()}
    return Tree(np.where(branch, new[cl[old]], -1), np.where(branch, new[cr[old]], -1), tree.feature[old],
                tree.threshold[old], tree.value[old], task=tree.task,
                label=None if tree.label is None else tree.label[old],
                coef=None if tree.coef is None else tree.coef[old],
                classes=None if tree.classes is None else list(tree.classes),
                feature_names=None if tree.feature_names is None else list(tree.feature_names),
                n_features=tree.n_features, extras=extras, encoding=tree.encoding)


def _candidates(tree: Tree, X: np.ndarray):
    """Trees one tidying step away: a split that sends no training row one way replaced by the other side's
    subtree, then a split into two leaves that predict the same made one leaf."""
    path = tree.decision_path(X)
    reach = np.asarray(path.sum(axis=0)).ravel()
    for t in tree.preorder():
        if tree.is_leaf(t):
            continue
        left, right = int(tree.children_left[t]), int(tree.children_right[t])
        if reach[left] == 0 or reach[right] == 0:
            yield _skip_split(tree, t, right if reach[left] == 0 else left)
    for t in tree.preorder():
        if tree.is_leaf(t):
            continue
        left, right = int(tree.children_left[t]), int(tree.children_right[t])
        if tree.is_leaf(left) and tree.is_leaf(right) and _same_prediction(tree, left, right):
            yield _merge_leaves(tree, t)


def _worse(a: float, b: float, sense: int) -> float:
    """How much objective ``a`` is worse than ``b`` (positive: worse), for minimised (1) or maximised (-1) ones."""
    return sense * (a - b)


def _tol(v: float) -> float:
    return 1e-9 * max(1.0, abs(v)) if np.isfinite(v) else 0.0


def tidy_tree(tree: Tree, X: np.ndarray, score=None, sense: int = 1, refit=None, keep=None) -> Tree:
    """``tree`` without splits that do nothing on its training rows ``X``: a split with an empty side (replaced by
    the occupied side's subtree) and a split into two leaves predicting the same (class, treatment, SPO decision,
    or exactly equal values; one leaf, class counts summed). Each step is kept only when ``score`` (the
    estimator's objective, minimised for ``sense=1``, maximised for -1) does not get worse, so the objective can
    only fall (by alpha per split removed); ``refit(tree)`` recomputes payloads that depend on the rows (e.g.
    prescriptions). Without a ``score`` only steps that keep every training prediction are taken (classification
    and regression trees). ``keep(tree)``, when given, must hold for every step taken (e.g. side constraints that
    name depths, which removing a split with an empty side changes below it)."""
    if tree is None or tree.n_splits == 0:
        return tree
    if score is None and tree.task not in ("classification", "regression", "linear"):
        return tree
    best = score(tree) if score is not None else 0.0
    changed = True
    while changed and tree.n_splits:
        changed = False
        for cand in _candidates(tree, X):
            if refit is not None:
                cand = refit(cand)
            if keep is not None and not keep(cand):
                continue
            s = score(cand) if score is not None else 0.0
            if score is None or _worse(s, best, sense) <= _tol(best):
                tree, best, changed = cand, s, True
                break
    return tree
