"""Breiman cost-complexity (weakest-link) pruning for SPO/MSE trees: at a given alpha, or chosen on validation.

Works on any ``task="spo"`` Tree whose nodes carry ``extras["train_loss"]`` / ``extras["train_spo"]`` (greedy
trees, and MILP trees after :func:`refit_nodes`). The validation metric is the same loss as training (SPO
regret for SPOT, squared error for the CART baseline), and ties go to the *largest* alpha (smallest tree), as
in the paper's code.

Alpha scale: :func:`prune_alpha` and :func:`stored_objective` use the SPOT objective of
:mod:`opttrees.spo.objective` — training normalised SPO loss + alpha · splits, N = Σ ω |z*| — so the greedy
tree pruned at ``alpha`` minimises literally the function the SPOT MILP minimises (over the pruned subtrees
of the greedy tree). :func:`pruning_path` reports its breakpoints on that scale when given ``norm=N``.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..tree import LEAF, Tree
from .objective import objective_value


def _subtree_stats(tree: Tree, collapsed: np.ndarray, node_loss: np.ndarray):
    """(loss of the subtree rooted at t, number of its leaves) for every node under the current pruning."""
    n = tree.n_nodes
    R = np.zeros(n)
    L = np.zeros(n, dtype=np.int64)
    order = []
    stack = [0]
    while stack:
        t = stack.pop()
        order.append(t)
        if tree.children_left[t] != LEAF and not collapsed[t]:
            stack += [tree.children_left[t], tree.children_right[t]]
    for t in reversed(order):
        if tree.children_left[t] == LEAF or collapsed[t]:
            R[t], L[t] = node_loss[t], 1
        else:
            a, b = tree.children_left[t], tree.children_right[t]
            R[t], L[t] = R[a] + R[b], L[a] + L[b]
    return R, L, order


def pruning_path(tree: Tree, node_loss=None, norm: float = 1.0):
    """Nested subtrees T_0 ⊃ T_1 ⊃ ... ⊃ root: list of (alpha_k, collapsed mask).

    alpha_k is the per-split cost at which T_k becomes optimal, in the units of ``node_loss / norm``: with the
    default ``norm=1`` the raw weighted loss; with ``norm = spot_norm(problem, C, w)`` and SPO node losses,
    the SPOT objective's normalised scale (the ``alpha`` of ``SPOTree`` and the MILP).
    """
    node_loss = tree.extras["train_loss"] if node_loss is None else node_loss
    node_loss = np.asarray(node_loss, float) / float(norm)
    collapsed = np.zeros(tree.n_nodes, dtype=bool)
    path = [(0.0, collapsed.copy())]
    while True:
        R, L, order = _subtree_stats(tree, collapsed, node_loss)
        internal = [t for t in order if tree.children_left[t] != LEAF and not collapsed[t]]
        if not internal:
            break
        g = np.array([(node_loss[t] - R[t]) / (L[t] - 1) for t in internal])
        gmin = g.min()
        tol = 1e-12 * max(1.0, abs(gmin))
        for t, gt in zip(internal, g):
            if gt <= gmin + tol:
                collapsed[t] = True
        path.append((max(float(gmin), path[-1][0]), collapsed.copy()))
    return path


def collapse(tree: Tree, collapsed: np.ndarray) -> Tree:
    """A compact copy of the tree with the collapsed nodes turned into leaves."""
    keep, stack = [], [0]
    while stack:
        t = stack.pop()
        keep.append(t)
        if tree.children_left[t] != LEAF and not collapsed[t]:
            stack += [tree.children_right[t], tree.children_left[t]]
    new = {t: i for i, t in enumerate(keep)}
    cl = np.full(len(keep), LEAF)
    cr = np.full(len(keep), LEAF)
    feat = np.full(len(keep), LEAF)
    thr = np.zeros(len(keep))
    for t in keep:
        if tree.children_left[t] != LEAF and not collapsed[t]:
            cl[new[t]], cr[new[t]] = new[tree.children_left[t]], new[tree.children_right[t]]
            feat[new[t]], thr[new[t]] = tree.feature[t], tree.threshold[t]
    idx = np.array(keep)
    return Tree(cl, cr, feat, thr, tree.value[idx], task=tree.task, feature_names=tree.feature_names,
                n_features=tree.n_features, extras={k: v[idx] for k, v in tree.extras.items()})


def node_loss_on(tree: Tree, problem, X, C, w, criterion: str = "spo") -> np.ndarray:
    """Weighted loss of every node *as if it were a leaf* on data (X, C, w), using its stored decision/mean."""
    X = np.asarray(X, float)
    Cm = problem.sign * problem.check_costs(C)
    n_nodes = tree.n_nodes
    out = np.zeros(n_nodes)
    if criterion == "spo":
        _, z = problem._solve_min(Cm)
    node = np.zeros(X.shape[0], dtype=np.int64)
    active = np.ones(X.shape[0], dtype=bool)
    while active.any():
        nd = node[active]
        ia = np.nonzero(active)[0]
        if criterion == "spo":
            contrib = w[ia] * (np.einsum("ij,ij->i", Cm[ia], tree.extras["decision"][nd]) - z[ia])
        else:
            mean_m = problem.sign * tree.value[nd]
            contrib = w[ia] * ((Cm[ia] - mean_m) ** 2).sum(axis=1)
        np.add.at(out, nd, contrib)
        internal = tree.children_left[nd] != LEAF
        f = np.where(internal, tree.feature[nd], 0)
        go_left = X[ia, f] < tree.threshold[nd]
        nxt = np.where(go_left, tree.children_left[nd], tree.children_right[nd])
        node[ia[internal]] = nxt[internal]
        active[ia[~internal]] = False
    return out


def prune_on_validation(tree: Tree, problem, X_val, C_val, w_val=None, criterion: str = "spo",
                        rel_tol: float = 1e-5) -> Tree:
    """Pick the subtree on the pruning path with the lowest validation loss; ties -> the largest alpha."""
    w_val = np.ones(len(X_val)) if w_val is None else np.asarray(w_val, float)
    val = node_loss_on(tree, problem, X_val, C_val, w_val, criterion)
    path = pruning_path(tree)
    errs = np.array([_subtree_stats(tree, mask, val)[0][0] for _, mask in path])
    best = errs.min()
    k = int(np.nonzero(errs <= best + abs(best) * rel_tol + 1e-12)[0].max())
    return collapse(tree, path[k][1])


def stored_objective(tree: Tree, alpha: float, norm: float, node_loss=None) -> float:
    """The SPOT objective of ``tree`` from its stored per-node training regrets (no data needed).

    Σ over leaves of ``extras["train_spo"]`` (or ``node_loss``) / norm + alpha · splits — the value
    :func:`prune_alpha` minimises; equal to :func:`opttrees.spo.objective.spot_objective` on the training data.
    """
    node_loss = tree.extras["train_spo"] if node_loss is None else np.asarray(node_loss, float)
    return objective_value(float(np.sum(node_loss[tree.leaves])), tree.n_splits, norm, alpha)


def prune_alpha(tree: Tree, alpha: float, norm: float, node_loss=None) -> Tree:
    """The smallest pruned subtree minimising the SPOT objective (training normalised SPO loss + alpha·splits).

    ``norm`` = N = Σ ω |z*(c)| on the training data (:func:`opttrees.spo.objective.spot_norm`); node losses
    default to the stored training SPO regrets ``extras["train_spo"]``. Exact bottom-up dynamic program (the
    Breiman subtree T(alpha)); a node is collapsed when keeping its split does not lower the objective
    (ties, up to round-off, go to the smaller tree).
    """
    if not alpha >= 0:
        raise InputError(f"alpha must be >= 0; got {alpha!r}")
    node_loss = tree.extras["train_spo"] if node_loss is None else np.asarray(node_loss, float)
    loss = np.asarray(node_loss, float) / float(norm)
    tol = 1e-12 * max(1.0, abs(float(loss[0])))
    order, stack = [], [0]
    while stack:
        t = stack.pop()
        order.append(t)
        if tree.children_left[t] != LEAF:
            stack += [tree.children_left[t], tree.children_right[t]]
    best = np.zeros(tree.n_nodes)
    collapsed = np.zeros(tree.n_nodes, dtype=bool)
    for t in reversed(order):   # children before parents
        if tree.children_left[t] == LEAF:
            best[t] = loss[t]
            continue
        keep = best[tree.children_left[t]] + best[tree.children_right[t]] + alpha
        if loss[t] <= keep + tol:
            best[t], collapsed[t] = loss[t], True
        else:
            best[t] = keep
    return collapse(tree, collapsed)


def prune_zero_gain(tree: Tree) -> Tree:
    """Collapse every split that does not lower the training loss (alpha = 0 weakest-link pruning)."""
    path = pruning_path(tree)
    k = max(i for i, (a, _) in enumerate(path) if a <= 1e-9 * max(1.0, abs(tree.extras["train_loss"][0])))
    return collapse(tree, path[k][1])


def refit_nodes(tree: Tree, problem, X, C, w=None) -> Tree:
    """Recompute every node's payload from data: weighted mean cost, decision w*(mean), weight, losses.

    Used on MILP trees (the paper's SPO2CART step) so they can be pruned and predicted like greedy trees.
    A node that receives no training point inherits its parent's mean.
    """
    X = np.asarray(X, float)
    C = problem.check_costs(C)
    w = np.ones(len(C)) if w is None else np.asarray(w, float)
    Cm = problem.sign * C
    _, z = problem._solve_min(Cm)
    n_nodes = tree.n_nodes
    W = np.zeros(n_nodes)
    S = np.zeros((n_nodes, C.shape[1]))
    Q = np.zeros(n_nodes)
    Z = np.zeros(n_nodes)
    node = np.zeros(len(X), dtype=np.int64)
    active = np.ones(len(X), dtype=bool)
    while active.any():
        ia = np.nonzero(active)[0]
        nd = node[ia]
        np.add.at(W, nd, w[ia])
        np.add.at(S, nd, w[ia, None] * Cm[ia])
        np.add.at(Q, nd, w[ia] * (Cm[ia] ** 2).sum(1))
        np.add.at(Z, nd, w[ia] * z[ia])
        internal = tree.children_left[nd] != LEAF
        f = np.where(internal, tree.feature[nd], 0)
        go_left = X[ia, f] < tree.threshold[nd]
        node[ia[internal]] = np.where(go_left, tree.children_left[nd], tree.children_right[nd])[internal]
        active[ia[~internal]] = False
    mean = np.zeros_like(S)
    parent = np.full(n_nodes, -1)
    for t in range(n_nodes):
        if tree.children_left[t] != LEAF:
            parent[tree.children_left[t]] = parent[tree.children_right[t]] = t
    order, stack = [], [0]
    while stack:
        t = stack.pop()
        order.append(t)
        if tree.children_left[t] != LEAF:
            stack += [tree.children_left[t], tree.children_right[t]]
    for t in order:  # preorder: parents first
        if W[t] > 0:
            mean[t] = S[t] / W[t]
        else:
            mean[t] = mean[parent[t]] if parent[t] >= 0 else np.ones(C.shape[1])
    dec, _ = problem._solve_min(mean)
    spo = np.maximum(np.einsum("ij,ij->i", S, dec) - Z, 0.0)
    extras = dict(tree.extras)
    extras.update({"decision": dec, "weight": W, "train_loss": spo, "train_spo": spo})
    return Tree(tree.children_left, tree.children_right, tree.feature, tree.threshold, problem.sign * mean,
                task="spo", feature_names=tree.feature_names, n_features=tree.n_features, extras=extras)
