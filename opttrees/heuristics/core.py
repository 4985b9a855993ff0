"""Shared set-up for the heuristics: kernel arrays from PreparedData, heap arrays <-> Tree, start trees.

Why a separate module: greedy, local search and tuning all need the same presorted features, per-point
sufficient statistics and the same conversion to ``opttrees.tree.Tree``, so a tree found here has the same
objective in :mod:`opttrees.objectives` and in the MIO.
"""
from __future__ import annotations

import copy
import dataclasses
from typing import NamedTuple
from dataclasses import dataclass

import numpy as np

from .. import objectives as obj
from ..data.prepared import PreparedData, ShapeOf, TargetScaling, split_between, standardize_target
from ..params import check_alpha  # noqa: F401 (re-exported)
from ..params import check_depth as _check_depth
from ..errors import InputError
from ..jit import ready
from ..tree import HYPERPLANE, LEAF, Tree, heap_topology
from .kernels import losses, orders

KIND = {"misclassification": losses.MISCLASSIFICATION, "gini": losses.GINI, "entropy": losses.ENTROPY, "squared": losses.SQUARED,
        "absolute": losses.ABSOLUTE}  # loss name -> the kernels' named loss kind
MAX_DEPTH = 12


def default_loss(data: PreparedData) -> str:
    return "misclassification" if data.task == "classification" else "squared"


def check_depth(max_depth) -> int:
    return _check_depth(max_depth, MAX_DEPTH, "the heuristics' heap arrays")


@dataclass
class ProblemArrays:
    """Kernel-ready arrays for one training set and one loss."""

    data: PreparedData
    loss: str
    X: np.ndarray
    Xs: np.ndarray
    grp: np.ndarray      # (n, p) int32 dense rank of the exact value: equal rank = same split position
    order: np.ndarray    # (n, p) presorted row indices per feature
    Z: np.ndarray        # (n, S) per-point sufficient statistics
    featok: np.ndarray   # splittable features
    kind: int
    baseline: float      # L̂ (raw units)
    y: np.ndarray
    orderT: np.ndarray | None = None  # (p, n) C-contiguous transpose of ``order`` (row scans in the kernels)
    grpT: np.ndarray | None = None    # (p, n) int32: grpT[j, r] = grp[order[r, j], j], ranks in presorted order

    n = ShapeOf("X", 0)
    p = ShapeOf("X", 1)


def _presort(X: np.ndarray, key: np.ndarray):
    """Each column's rows sorted by (key, X, row), each row's dense rank of key, and the ranks in sorted
    order: (orderT (p, n) int64, grp (n, p) int32, grpT (p, n) int32), for all columns at once.

    The key must be a non-decreasing function of X in every column (today X itself), so the order by
    (X, row) is the (key, X, row) order; that is checked, and a column where it fails falls back to its own
    lexsort. The order by (X, row) is numpy's vectorised (unstable) argsort with each run
    of equal values then put in row order (:func:`~opttrees.heuristics.kernels.orders.presort_ties`): a stable
    argsort cost 0.5 ms per call on breast cancer, a fifth of a two-thread search's serial time.
    """
    n, p = X.shape
    XT = np.ascontiguousarray(X.T)
    KT = np.ascontiguousarray(key.T)
    if not ready(orders.presort_ties, orders.presort_ranks):   # cold, or a compile holds numba's lock: plain numpy
        return _presort_numpy(XT, KT)
    orderT = np.argsort(XT, axis=1).astype(np.int64, copy=False)
    orders.presort_ties(XT, orderT)
    grp = np.empty((n, p), dtype=np.int32)
    grpT = np.empty((p, n), dtype=np.int32)
    bad = orders.presort_ranks(KT, orderT, grp, grpT)
    if bad.any():
        for j in np.flatnonzero(bad):
            orderT[j] = np.lexsort((XT[j], KT[j]))
        orders.presort_ranks(KT, orderT, grp, grpT)
    return orderT, grp, grpT


def _presort_numpy(XT: np.ndarray, KT: np.ndarray):
    """:func:`_presort` without numba (same arrays): used while its kernels are cold or another kernel is
    compiling, so preparing a fit never waits for a compile (a stable argsort is the (X, row) order)."""
    p, n = XT.shape
    orderT = np.argsort(XT, axis=1, kind="stable").astype(np.int64, copy=False)

    def ranks(orderT):
        d = np.diff(np.take_along_axis(KT, orderT, axis=1), axis=1)
        grpT = np.zeros((p, n), np.int32)
        np.cumsum(d != 0, axis=1, out=grpT[:, 1:])
        return grpT, (d < 0).any(axis=1)

    grpT, bad = ranks(orderT)
    if bad.any():
        for j in np.flatnonzero(bad):
            orderT[j] = np.lexsort((XT[j], KT[j]))
        grpT, _ = ranks(orderT)
    grp = np.empty((n, p), np.int32)
    grp[orderT, np.arange(p)[:, None]] = grpT
    return orderT, grp, grpT


def make_problem(data: PreparedData, loss: str | None = None) -> ProblemArrays:
    loss = loss or default_loss(data)
    if loss not in obj.LOSSES:
        raise InputError(f"unknown loss {loss!r}; expected one of {obj.LOSSES}")
    if data.task == "classification" and loss != "misclassification":
        raise InputError(f"loss {loss!r} needs regression data; classification uses 'misclassification'")
    if data.task == "regression" and loss == "misclassification":
        raise InputError("loss 'misclassification' needs classification data")
    if data.task not in ("classification", "regression"):
        raise InputError(f"the heuristics need a classification or regression task, not {data.task!r}")
    X = np.ascontiguousarray(data.X, dtype=np.float64)
    Xs = np.ascontiguousarray(data.Xs, dtype=np.float64)
    n, p = X.shape
    # ranks of the exact values: rounding (the scaled values to 9 decimals, as before) merged distinct values,
    # so no split could separate 500000 from 500000.0002 on a [0, 1e6] range
    orderT, grp, grpT = _presort(X, X)
    w = data.sample_weight
    if loss == "misclassification":
        y = np.asarray(data.y, dtype=np.int64)
        Z = np.zeros((n, data.n_classes))
        Z[np.arange(n), y] = w
    elif loss == "squared":
        y = np.asarray(data.y, dtype=np.float64)
        yc = y - np.average(y, weights=w)
        Z = np.column_stack([w, w * yc, w * yc * yc])
    else:  # absolute: totals plus y itself (the kernels keep y-sorted Fenwick trees per leaf)
        y = np.asarray(data.y, dtype=np.float64)
        yc = y - obj.weighted_median(y, w)
        Z = np.column_stack([w, w * yc, yc])
    base = obj.baseline(y, loss, data.n_classes or None, w)
    featok = np.asarray(data.splittable, dtype=np.bool_)
    return ProblemArrays(data, loss, X, Xs, grp, orderT.T, np.ascontiguousarray(Z), featok, KIND[loss], base, y, orderT,
                   grpT)


class Standardized(NamedTuple):
    """What :func:`to_user` needs to give trees searched on a standardised y back in y's units."""
    target: TargetScaling
    raw: PreparedData


def standardized(data: PreparedData) -> tuple[PreparedData, Standardized | None]:
    """Regression data on a standardised target (:func:`opttrees.data.prepared.standardize_target`) and what a caller
    needs to map the trees it returns back (:func:`to_user`); None when there is nothing to undo (classification,
    or data an estimator already standardised, whose trees it maps back itself).

    Why the public heuristics call it: the kernels' tolerances are relative to L-hat but their statistics
    and the prune's are sums, so y = 1e6 + small spread or y ~ 1e-9 are searched as y' of spread about 1."""
    if data.task != "regression" or data.target is not None:
        return data, None
    out = standardize_target(data)
    return out, (None if out.target is None or out.target.identity else Standardized(out.target, data))


def to_user(result, back: Standardized | None, loss: str | None = None):
    """A Tree, or a search result holding ``tree`` (and ``trees``), in y's units: constant leaves refitted on the
    caller's y (exact means / medians), linear leaves mapped."""
    if back is None or result is None:
        return result

    def one(tree):
        if tree.task == "regression":
            return refit_leaves(copy.copy(tree), LeafProblem(back.raw, back.raw.X, back.raw.y, loss or "squared"))
        return back.target.tree_to_user(tree)

    if isinstance(result, Tree):
        return one(result)
    changes = {"tree": one(result.tree)}
    if isinstance(getattr(result, "trees", None), list):
        changes["trees"] = [one(t) for t in result.trees]
    return dataclasses.replace(result, **changes)


def empty_heap(D: int, p: int):
    T = 2 ** (D + 1) - 1
    return (np.zeros(T, np.int8), np.zeros(T, np.int64), np.zeros(T), np.zeros((T, p)))


def _hyperplane_threshold(data, a_scaled: np.ndarray, b_scaled: float, a_orig: np.ndarray) -> float:
    """Threshold in original units that routes every training point as the scaled split ``a·xs < b`` did.

    The affine map back to original units can flip a point lying (numerically) on the hyperplane, so the
    threshold is placed midway between the training margins on either side instead of mapped directly.
    """
    left = data.Xs @ a_scaled < b_scaled
    proj = data.X @ a_orig
    mapped = b_scaled + float(np.sum(a_scaled * data.scaling.lo / data.scaling.span))
    if not left.any() or left.all():
        return mapped
    lo, hi = proj[left].max(), proj[~left].min()
    if lo < mapped <= hi or not lo < hi:  # already faithful, or no threshold can separate them
        return mapped
    return split_between(float(lo), float(hi))


@dataclass
class LeafProblem:
    """What :func:`heap_to_tree` and :func:`refit_leaves` read of a :class:`ProblemArrays`: enough to build a tree and fit
    its leaves without the kernels' presorted arrays (the numba-free fallback tree)."""

    data: PreparedData
    X: np.ndarray
    y: np.ndarray
    loss: str

    p = ShapeOf("X", 1)


def leaf_problem(data: PreparedData, loss: str | None = None) -> LeafProblem:
    """What :func:`refit_leaves` needs, without :func:`make_problem`'s presorting (a numba kernel: loading it costs
    about half a second in a process that has not run it yet)."""
    loss = loss or default_loss(data)
    dtype = np.int64 if loss == "misclassification" else np.float64
    return LeafProblem(data, np.asarray(data.X, dtype=np.float64), np.asarray(data.y, dtype=dtype), loss)


def heap_to_tree(prob: ProblemArrays | LeafProblem, ntype, feat, thr, coef) -> Tree:
    """Compact the heap arrays into a Tree (original units) with leaf payloads refitted on the training data."""
    data = prob.data
    ntype = np.asarray(ntype)
    hyper = bool((ntype == 3).any())
    cl, cr, slot = heap_topology(ntype >= 2)
    m = len(cl)
    fe, th, co = np.full(m, LEAF, np.int64), np.zeros(m), np.zeros((m, prob.p))
    for k in np.flatnonzero(cl != LEAF):
        u = slot[k]
        if ntype[u] == 2:
            fe[k], th[k] = int(feat[u]), float(thr[u])
        else:
            a = np.asarray(coef[u], dtype=np.float64)
            fe[k] = HYPERPLANE
            co[k] = a / data.scaling.span
            th[k] = _hyperplane_threshold(data, a, float(thr[u]), co[k])
    tree = Tree(cl, cr, fe, th, np.zeros((m, 1)), task="classification" if prob.loss == "misclassification" else "regression",
                coef=co if hyper else None, feature_names=list(data.feature_names), n_features=prob.p,
                classes=list(data.codec.classes) if data.codec is not None else None)
    return refit_leaves(tree, prob)


def refit_leaves(tree: Tree, prob: ProblemArrays | LeafProblem) -> Tree:
    """Set leaf payloads from the training data: class counts + majority label, or mean / median."""
    leaf = tree.apply(prob.X)
    w = prob.data.sample_weight
    if prob.loss == "misclassification":
        counts = obj.class_counts(leaf, prob.y, prob.data.n_classes, tree.n_nodes, w)
        tree.value = counts
        tree.label = obj.majority_label(counts)
        tree.task = "classification"
    else:
        tree.value = obj.leaf_predictions(leaf, prob.y, tree.n_nodes, prob.loss, w).reshape(-1, 1)
        tree.label = None
        tree.task = "regression"
    return tree


def tree_to_heap(tree: Tree, prob: ProblemArrays, D: int):
    """Embed a Tree (depth <= D) in heap arrays; hyperplanes are converted to scaled units."""
    if tree.depth > D:
        raise InputError(f"start tree has depth {tree.depth} > max_depth={D}")
    ntype, feat, thr, coef = empty_heap(D, prob.p)
    sc = prob.data.scaling

    def rec(k, u):
        if tree.children_left[k] == LEAF:
            ntype[u] = 1
            return
        if tree.feature[k] >= 0:
            ntype[u] = 2
            feat[u] = tree.feature[k]
            thr[u] = tree.threshold[k]
        else:
            a = tree.coef[k] * sc.span
            ntype[u] = 3
            feat[u] = -2
            coef[u] = a
            thr[u] = tree.threshold[k] - float(np.sum(tree.coef[k] * sc.lo))
        rec(tree.children_left[k], 2 * u + 1)
        rec(tree.children_right[k], 2 * u + 2)

    rec(0, 0)
    return ntype, feat, thr, coef


def objective(tree: Tree, prob: ProblemArrays, alpha: float) -> float:
    """The shared normalised objective of ``tree`` on the problem's training data."""
    return obj.tree_objective(tree, prob.X, prob.y, prob.loss, alpha, prob.data.n_classes or None,
                              prob.baseline, prob.data.sample_weight)
