"""Checks and leaf payloads shared by the binary engine (:mod:`opttrees.dp.api`) and the continuous search
(:mod:`opttrees.dp.continuous`): one wording for every DP entry point's errors, one way to score its tree."""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..interrupt import Budget
from ..params import check_nonnegative
from ..tree import LEAF, Tree
from .tasks import ClassificationTask, EngineData

#: deepest tree the engines accept (heap arrays of 2^(d+1) - 1 nodes; deeper trees are out of reach anyway)
MAX_DEPTH = 12


def _check_int(name, v, lo, hi=None, none_ok=False):
    if v is None and none_ok:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo or (hi is not None and v > hi):
        rng = f">= {lo}" if hi is None else f"in {lo}..{hi}"
        raise InputError(f"{name} must be an integer {rng}; got {v!r}")
    return int(v)


def _check_alpha(alpha):
    return check_nonnegative("alpha", alpha)


def _fill_payload(tree: Tree, task, ed: EngineData, X) -> np.ndarray:
    leaf = tree.apply(X)
    value, label = task.leaf_payload(ed, leaf, tree.n_nodes)
    tree.value = np.atleast_2d(value)
    if label is not None:
        tree.label = np.asarray(label, np.int64)
    return leaf


def _raw_cost(tree: Tree, task, ed: EngineData, leaf, column_costs_fn) -> float:
    """The returned tree's own raw objective, recomputed by routing (leaf losses + feature costs + penalties)."""
    if ed.kind == 2:
        per = task.leaf_losses_of_tree(ed, leaf, tree.n_nodes)
        loss = float(per[tree.leaves].sum())
    else:
        counts = np.zeros((tree.n_nodes, ed.K))
        np.add.at(counts, (leaf, ed.y), ed.weights)
        per = task.leaf_losses(ed, counts)
        loss = float(per[tree.leaves].sum())
    return loss + (column_costs_fn(tree) if column_costs_fn is not None else 0.0)


def _common_checks(max_depth, max_num_nodes, min_samples_leaf, alpha, time_limit):
    D = _check_int("max_depth", max_depth, 0, MAX_DEPTH)
    nn = _check_int("max_num_nodes", max_num_nodes, 0, none_ok=True)
    ml = _check_int("min_samples_leaf", min_samples_leaf, 1)
    a = _check_alpha(alpha)
    if time_limit is not None and not isinstance(time_limit, Budget):   # a running Budget is shared as it is
        try:
            tl = float(time_limit)
        except (TypeError, ValueError):
            raise InputError(f"time_limit must be a number of seconds > 0 or None; got {time_limit!r}") from None
        if not tl > 0:
            raise InputError(f"time_limit must be > 0 seconds or None; got {time_limit!r}")
    return D, nn, ml, a


def _check_task(task):
    if task is None:
        return ClassificationTask()
    if not hasattr(task, "prepare") or not hasattr(task, "leaf_payload"):
        raise InputError(f"task must be a dynamic-programming task (ClassificationTask, CostSensitiveTask, "
                         f"RegressionTask, ...); got {type(task).__name__}")
    return task


def solved_problem(max_depth, max_num_nodes, min_samples_leaf, alpha, w, split_set: str) -> dict:
    """:attr:`SolveResult.problem`: what a DP search solved, read from the arguments it actually ran with."""
    return {"max_depth": int(max_depth), "max_num_nodes": None if max_num_nodes is None else int(max_num_nodes),
            "min_samples_leaf": int(min_samples_leaf), "alpha": float(alpha), "n_rows": int(len(w)),
            "weight_sum": float(np.sum(w)), "split_set": split_set}


def nested_to_tree(tree, n_features: int, tree_task: str, classes=None, feature_names=None) -> Tree:
    """A nested tree (None or (feature, threshold, left, right)) as a Tree with empty payloads."""
    nodes = _nodes_of(tree)
    m = len(nodes)
    fe = np.array([a[0] if a[0] >= 0 else LEAF for a in nodes], np.int64)
    th = np.array([a[1] for a in nodes])
    cl = np.array([a[2] for a in nodes], np.int64)
    cr = np.array([a[3] for a in nodes], np.int64)
    return Tree(cl, cr, fe, th, np.zeros((m, 1)), task=tree_task, classes=classes, feature_names=feature_names,
                n_features=n_features)


def _nodes_of(tree):
    """Heap-free flattening of a nested tree: lists (feature, threshold, left index, right index)."""
    nodes = []

    def add(t):
        k = len(nodes)
        nodes.append(None)
        if t is None:
            nodes[k] = (-1, 0.0, -1, -1)
        else:
            lk = add(t[2])
            rk = add(t[3])
            nodes[k] = (int(t[0]), float(t[1]), lk, rk)
        return k
    add(tree)
    return nodes
