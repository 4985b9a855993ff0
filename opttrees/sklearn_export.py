"""Trees as scikit-learn sees them: per-node training statistics, feature importances, and the conversion of a
parallel-split :class:`~opttrees.tree.Tree` into a fitted ``sklearn.tree.DecisionTreeClassifier`` /
``DecisionTreeRegressor`` (so ``sklearn.tree.export_text``, ``plot_tree``, ``export_graphviz``, skl2onnx and
SHAP's ``TreeExplainer`` work on opttrees' trees).

**Node statistics** (:func:`set_node_statistics`, recorded by every estimator at the end of ``fit``) are three
per-node arrays in the tree's ``extras``, with scikit-learn's names and meanings, so they move with their nodes
under :meth:`Tree.prune` and travel in the JSON:

- ``n_node_samples``: the training rows (of positive weight) that reach the node;
- ``weighted_n_node_samples``: their total sample weight;
- ``impurity``: the node's training loss per unit of weight if it were a leaf, for the tree's criterion:
  ``"gini"`` (1 - sum of squared class shares, scikit-learn's default: the classifiers' criterion for importances),
  ``"squared_error"`` (weighted variance of y), ``"absolute_error"`` (weighted mean absolute deviation from the
  lower weighted median, the leaf value of ``loss="absolute"``), or any per-node loss the estimator gives
  (``node_loss``: the SPO regret of the node's decision, the prescriptive objective's leaf cost).

**Feature importances** (:func:`feature_importances`) are scikit-learn's definition, computed in the same order:
each branch node ``t`` with children ``l``, ``r`` adds ``W_t i_t - W_l i_l - W_r i_r`` (weights ``W``, impurities
``i``) to its feature, the sums are divided by the root's weight and normalised to sum 1 (all zero when no split
lowers the loss). A hyperplane split ``a.x < b`` shares its decrease among its features in proportion to
``|a_j| * sd_j``, where ``sd_j`` is the weighted standard deviation of feature ``j`` over the node's training rows
(how much the feature moves ``a.x`` there; in proportion to ``|a_j|`` when the node has fewer than two rows).
A split that raises the loss (possible for a prescriptive objective) adds a negative amount, as it would in
scikit-learn.

**The conversion** (:func:`to_sklearn`). opttrees routes left iff ``x < b`` in float64; a scikit-learn tree
routes left iff ``float32(x) <= t`` (its ``predict`` casts X to float32 and compares with a float64 ``t``). The
threshold ``t`` is the largest float32 below ``b`` (:func:`sklearn_threshold`), so **every float32 value** routes
in both trees alike, and the tree's :attr:`~opttrees.tree.Tree.display_bounds` (the training values nearest each
split) are checked: every training row routes alike too, or the conversion fails naming the node and the two
training values that float32 cannot tell apart (fit on ``X.astype(np.float32)`` to avoid that). A float64 value
within half a float32 step of a threshold (``b`` itself, when ``b`` is not a float32) may route differently,
because scikit-learn rounds it to float32 first. Leaf payloads: a classifier's ``value`` holds each node's class
shares (scikit-learn's convention since 1.4), so ``predict_proba`` is the same; where a leaf's label is one of
several tied classes, its share is raised by one unit in the last place so that scikit-learn's argmax picks the
same label. Refused with an :class:`~opttrees.errors.InputError`: hyperplane splits (OCT-H), linear leaves
(ORT-L), SPO and prescriptive trees, and a classification leaf whose label is not a majority class of its
training rows (a constrained tree's leaf: scikit-learn predicts the majority). A tree fitted on category columns
converts over its one-hot features: give the scikit-learn tree ``tree.encoding.transform(X)``.
"""
from __future__ import annotations

import numpy as np

from .data.prepared import check_sample_weight
from .errors import InputError
from .objectives import weighted_median
from .tree import HYPERPLANE, LEAF, Tree

#: the per-node statistics in ``Tree.extras``, named as scikit-learn's ``tree_`` attributes
STATS = ("n_node_samples", "weighted_n_node_samples", "impurity")
#: the criteria :func:`set_node_statistics` computes from ``y``
CRITERIA = ("gini", "squared_error", "absolute_error")


def _node_rows(tree: Tree, X: np.ndarray):
    """(csc indicator, rows of node t): the training rows through every node."""
    path = tree.decision_path(X).tocsc()
    return path, lambda t: path.indices[path.indptr[t]:path.indptr[t + 1]]


def set_node_statistics(tree: Tree, X, y=None, sample_weight=None, criterion: str | None = None,
                        n_classes: int | None = None, node_loss=None) -> Tree:
    """Record ``n_node_samples``, ``weighted_n_node_samples`` and ``impurity`` of every node in ``tree.extras``
    from the training rows ``X`` (the features the tree splits on), and return ``tree``.

    Parameters
    ----------
    X : array-like of shape (n, p)
        The training features (original units). Rows of weight 0 count in neither total.
    y : array-like of shape (n,) or (n, k), optional
        The target: class codes ``0 .. n_classes - 1`` for ``"gini"``, numbers for the regression criteria
        (several columns: their impurities averaged, as scikit-learn does).
    sample_weight : array-like of shape (n,), optional
        Row weights (None: 1 each).
    criterion : {"gini", "squared_error", "absolute_error"}, optional
        The impurity to compute from ``y``; give either it or ``node_loss``.
    n_classes : int, optional
        Number of classes for ``"gini"`` (default: the columns of ``tree.value``).
    node_loss : array-like of shape (n_nodes,), optional
        Each node's total training loss if it were a leaf, computed by the caller; the impurity is that loss per
        unit of weight.
    """
    if (criterion is None) == (node_loss is None):
        raise InputError("set_node_statistics needs exactly one of criterion= and node_loss=")
    if criterion is not None and criterion not in CRITERIA:
        raise InputError(f"unknown criterion {criterion!r}; expected one of {CRITERIA}")
    X = tree.feature_matrix(X)
    n, m = X.shape[0], tree.n_nodes
    if criterion is not None and (y is None or len(y) != n):
        raise InputError(f"criterion={criterion!r} needs y with one value per row of X ({n}); got "
                         f"{'none' if y is None else len(y)}")
    w = check_sample_weight(sample_weight, n)
    path, rows_at = _node_rows(tree, X)
    counted = (w > 0).astype(np.float64)
    n_rows = np.rint(path.T @ counted).astype(np.int64)
    W = np.asarray(path.T @ w, dtype=np.float64)
    impurity = np.zeros(m)
    if node_loss is not None:
        loss = np.asarray(node_loss, dtype=np.float64)
        if loss.shape != (m,):
            raise InputError(f"node_loss must hold one total loss per node ({m}); got shape {loss.shape}")
        np.divide(loss, W, out=impurity, where=W > 0)
    elif criterion == "gini":
        codes = np.asarray(y, dtype=np.int64)
        k = int(n_classes if n_classes is not None else tree.value.shape[1])
        if codes.shape != (n,) or (codes.size and (codes.min() < 0 or codes.max() >= k)):
            raise InputError(f"the gini statistics need y as {n} class codes in 0..{k - 1}")
        onehot = np.zeros((n, k))
        onehot[np.arange(n), codes] = w
        counts = np.asarray(path.T @ onehot)
        sq = (counts * counts).sum(axis=1)
        impurity = np.where(W > 0, 1.0 - sq / np.where(W > 0, W * W, 1.0), 0.0)
    else:
        Y = np.asarray(y, dtype=np.float64).reshape(n, -1)
        # one entry per (row, node on its path): O(n * depth), vectorised over the nodes
        rows, cols = path.indices, np.repeat(np.arange(m), np.diff(path.indptr))
        wr = w[rows]
        live = W > 0
        for yk in Y.T:
            if criterion == "squared_error":    # two passes: the mean, then the squares about it (no cancellation)
                centre = np.zeros(m)
                np.divide(np.bincount(cols, wr * yk[rows], minlength=m), W, out=centre, where=live)
            else:
                centre = np.array([weighted_median(yk[rows_at(t)], w[rows_at(t)]) for t in range(m)])
            dev = yk[rows] - centre[cols]
            total = np.bincount(cols, wr * (dev * dev if criterion == "squared_error" else np.abs(dev)), minlength=m)
            impurity += np.where(live, total / np.where(live, W, 1.0), 0.0) / Y.shape[1]
    tree.extras.update({"n_node_samples": n_rows, "weighted_n_node_samples": W, "impurity": impurity})
    return tree


def has_node_statistics(tree: Tree) -> bool:
    """Whether ``tree.extras`` holds the three node statistics, one value per node."""
    return all(k in tree.extras and tree.extras[k].shape == (tree.n_nodes,) for k in STATS)


def _statistics(tree: Tree) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not has_node_statistics(tree):
        raise InputError("the tree carries no node statistics (n_node_samples, weighted_n_node_samples, impurity): "
                         "fit it with an opttrees estimator, or call opttrees.sklearn_export.set_node_statistics("
                         "tree, X, y, criterion=...) with its training data")
    e = tree.extras
    return (np.asarray(e["n_node_samples"], dtype=np.int64), np.asarray(e["weighted_n_node_samples"], np.float64),
            np.asarray(e["impurity"], dtype=np.float64))


def feature_importances(tree: Tree, X=None, sample_weight=None, *, node_weight=None, node_loss=None) -> np.ndarray:
    """(p,) normalised total decrease of the training impurity at each feature's splits (scikit-learn's
    ``feature_importances_``; see the module docstring). ``X`` (and ``sample_weight``): the training rows, needed
    only to share a hyperplane split's decrease among its features. ``node_weight`` and ``node_loss`` (per node:
    total weight and total loss) replace the tree's recorded statistics (a forest's trees carry their own,
    on their bootstrap weights)."""
    if node_weight is not None and node_loss is not None:
        W = np.asarray(node_weight, dtype=np.float64)
        imp = np.zeros(tree.n_nodes)
        np.divide(np.asarray(node_loss, dtype=np.float64), W, out=imp, where=W > 0)
    else:
        _, W, imp = _statistics(tree)
    out = np.zeros(tree.p)
    hyper = None
    for t in range(tree.n_nodes):
        if tree.children_left[t] == LEAF:
            continue
        le, ri = int(tree.children_left[t]), int(tree.children_right[t])
        dec = W[t] * imp[t] - W[le] * imp[le] - W[ri] * imp[ri]
        if not np.isfinite(dec):
            continue
        j = int(tree.feature[t])
        if j >= 0:
            out[j] += dec
            continue
        if hyper is None:
            if X is None:
                raise InputError("feature importances of a tree with hyperplane splits need its training rows X")
            Xc = tree.feature_matrix(X)
            w = check_sample_weight(sample_weight, Xc.shape[0])
            hyper = (Xc, w, _node_rows(tree, Xc)[1])
        Xc, w, rows_at = hyper
        share = np.abs(tree.coef[t]) if tree.coef is not None else np.zeros(tree.p)
        r = rows_at(t)
        if r.size >= 2 and w[r].sum() > 0:
            mean = np.average(Xc[r], axis=0, weights=w[r])
            sd = np.sqrt(np.average((Xc[r] - mean) ** 2, axis=0, weights=w[r]))
            if (share * sd).sum() > 0:
                share = share * sd
        if share.sum() > 0:
            out += dec * share / share.sum()
    if W[0] > 0:
        out /= W[0]
    total = out.sum()
    if total > 0:
        out /= total
    return out


# ------------------------------------------------------------------------------------------ the conversion
def _f32(v: float) -> float:
    """``v`` rounded to the nearest float32 (inf beyond its range), as a Python float."""
    with np.errstate(over="ignore"):
        return float(np.float32(v))


def sklearn_threshold(b: float, left_max: float = -np.inf, right_min: float = np.inf) -> float:
    """The threshold ``t`` of scikit-learn's ``float32(x) <= t`` for opttrees' ``x < b``.

    ``t`` is the largest float32 below ``b``: every float32 value routes as ``x < b`` does. ``left_max`` /
    ``right_min``, the training values nearest ``b`` either side (:attr:`Tree.display_bounds`), must stay on their
    sides after rounding to float32; when the largest float32 below ``b`` would move one of them, ``t`` is moved
    to the nearest float32 that keeps both (then only float32 values between ``b`` and ``t``, where no training
    value lies, route differently). Raises ValueError when float32 rounds the two training values together.

    >>> sklearn_threshold(2.5)                 # 2.5 is a float32: t is the float32 just below it
    2.4999998
    >>> float(np.float32(2.4999998)) <= sklearn_threshold(2.5) < 2.5
    True
    """
    b = float(b)
    t32 = np.float32(_f32(b))
    if not np.isfinite(t32):
        raise ValueError(f"the threshold {b!r} is beyond float32's range, where scikit-learn's trees compare")
    if float(t32) >= b:
        t32 = np.nextafter(t32, np.float32(-np.inf))
    t = float(t32)
    lo, hi = _f32(left_max), _f32(right_min)
    if lo <= t < hi:
        return t
    if not lo < hi:
        raise ValueError(f"the training values {float(left_max)!r} (sent left) and {float(right_min)!r} (sent right) "
                         "are the same float32")
    return min(max(t, lo), float(np.nextafter(np.float32(hi), np.float32(-np.inf))))


def _class_values(tree: Tree, counts: np.ndarray) -> np.ndarray:
    """Per node class shares whose argmax is each leaf's label (see the module docstring)."""
    tot = counts.sum(axis=1, keepdims=True)
    k = counts.shape[1]
    shares = np.where(tot > 0, counts / np.where(tot > 0, tot, 1.0), 1.0 / k)
    labels = tree._labels()
    for t in tree.leaves:
        lab = int(labels[t])
        top = shares[t].max()
        if shares[t, lab] < top:
            name = tree.classes[lab] if tree.classes is not None else lab
            raise InputError(f"leaf {t} predicts class {name!r} but its training rows' majority is another class "
                             f"(shares {np.round(shares[t], 4).tolist()}), e.g. a leaf a constraint relabelled: a "
                             "scikit-learn tree predicts each leaf's majority class, so it cannot predict as this tree")
        if int(np.argmax(shares[t])) != lab:    # tied with an earlier class: break the tie towards the label
            shares[t, lab] = np.nextafter(top, np.inf)
    return shares


def _subtree_sums(tree: Tree, leaf_values: np.ndarray) -> np.ndarray:
    """Leaf rows of ``leaf_values`` kept, each branch node the sum of its children (bottom-up)."""
    out = np.array(leaf_values, dtype=np.float64, copy=True)
    for t in tree.preorder()[::-1]:
        if tree.children_left[t] != LEAF:
            out[t] = out[tree.children_left[t]] + out[tree.children_right[t]]
    return out


def to_sklearn(tree: Tree, *, criterion: str | None = None, classes=None, feature_names_in=None):
    """A fitted ``DecisionTreeClassifier`` (classification trees) or ``DecisionTreeRegressor`` (regression trees)
    with ``tree``'s splits, leaf values and node statistics (see the module docstring for the routing guarantee
    and what is refused).

    Parameters
    ----------
    tree : Tree
        A parallel-split classification or regression tree with node statistics (every estimator records them;
        else :func:`set_node_statistics`; a classification tree without them gets its leaves' class counts).
    criterion : str, optional
        The scikit-learn ``criterion`` shown by ``export_text``/``plot_tree`` (default: "gini", or
        "squared_error" for regression); it should name the impurity the statistics hold.
    classes : array-like, optional
        The classifier's ``classes_`` (default: ``tree.classes``, else 0 .. k-1).
    feature_names_in : array-like of str, optional
        The ``feature_names_in_`` to set (default: the one-hot feature names of a tree fitted on category
        columns; none otherwise).
    """
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
    from sklearn.tree._tree import Tree as SkTree

    if tree.task not in ("classification", "regression"):
        what = {"linear": "linear leaves (ORT-L, leaf_model='linear')", "spo": "SPO leaves (cost vectors and decisions)",
                "prescription": "prescriptive leaves (treatments)"}[tree.task]
        raise InputError(f"to_sklearn converts classification and regression trees with constant leaves; this tree has "
                         f"{what}, which scikit-learn's trees cannot hold")
    internal = tree.children_left != LEAF
    if np.any(tree.feature[internal] == HYPERPLANE):
        h = int(np.nonzero(internal & (tree.feature == HYPERPLANE))[0][0])
        raise InputError(f"to_sklearn needs axis-parallel splits; node {h} splits on a hyperplane "
                         f"({tree.split_text(h)}; OCT-H, split_type='hyperplane'), and a scikit-learn tree tests one "
                         "feature per node")
    m = tree.n_nodes
    bounds = tree.display_bounds if tree.display_bounds is not None else np.tile([-np.inf, np.inf], (m, 1))
    thr = np.full(m, -2.0)          # scikit-learn's TREE_UNDEFINED at leaves
    for t in np.nonzero(internal)[0]:
        try:
            thr[t] = sklearn_threshold(tree.threshold[t], *bounds[t])
        except ValueError as exc:
            raise InputError(f"to_sklearn: node {t} ({tree.split_text(int(t))}): {exc}; scikit-learn's trees compare "
                             "float32 copies of the features, so no scikit-learn threshold routes the training rows "
                             "as this tree does (fit on X.astype(np.float32) to keep such values apart)") from None
    classification = tree.task == "classification"
    if classification:
        counts = _subtree_sums(tree, np.where(internal[:, None], 0.0, tree.value))
        values = _class_values(tree, counts)[:, None, :]
        k = counts.shape[1]
    else:
        k = 1
    if has_node_statistics(tree) or not classification:   # a regression tree needs them (its branch values)
        n_rows, W, imp = _statistics(tree)
    else:
        W = counts.sum(axis=1)
        n_rows = np.rint(W).astype(np.int64)
        with np.errstate(invalid="ignore", divide="ignore"):
            imp = np.where(W > 0, 1.0 - (counts * counts).sum(axis=1) / (W * W), 0.0)
    if not classification:
        leaf_vals = np.where(internal[:, None], 0.0, tree.value)
        weighted = _subtree_sums(tree, leaf_vals * W[:, None])
        wsum = _subtree_sums(tree, np.where(internal, 0.0, W)[:, None])
        means = np.where(wsum > 0, weighted / np.where(wsum > 0, wsum, 1.0), tree.value)
        values = np.where(internal[:, None], means, tree.value)[:, :, None]
    nodes = np.zeros(m, dtype=SkTree(1, np.array([1], dtype=np.intp), 1).__getstate__()["nodes"].dtype)
    nodes["left_child"] = np.where(internal, tree.children_left, -1)
    nodes["right_child"] = np.where(internal, tree.children_right, -1)
    nodes["feature"] = np.where(internal, tree.feature, -2)
    nodes["threshold"] = thr
    nodes["impurity"] = imp
    nodes["n_node_samples"] = n_rows
    nodes["weighted_n_node_samples"] = W
    n_outputs = values.shape[1]
    sk = SkTree(tree.p, np.full(n_outputs, k, dtype=np.intp), n_outputs)
    sk.__setstate__({"max_depth": tree.depth, "node_count": m, "nodes": nodes,
                     "values": np.ascontiguousarray(values, dtype=np.float64)})
    if classification:
        est = DecisionTreeClassifier(criterion=criterion or "gini", max_depth=tree.depth)
        labels = classes if classes is not None else (tree.classes if tree.classes is not None else np.arange(k))
        est.classes_ = np.asarray(labels)
        est.n_classes_ = k
    else:
        est = DecisionTreeRegressor(criterion=criterion or "squared_error", max_depth=tree.depth)
    est.n_features_in_ = tree.p
    est.n_outputs_ = n_outputs
    est.max_features_ = tree.p
    est.tree_ = sk
    if feature_names_in is None and tree.encoding is not None and not tree.encoding.is_trivial:
        feature_names_in = tree.encoding.feature_names
    if feature_names_in is not None:
        est.feature_names_in_ = np.asarray([str(f) for f in feature_names_in], dtype=object)
    return est
