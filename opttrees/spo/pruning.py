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

from .. import pruning as weakest_link
from ..tree import Tree
from .objective import objective_value


def pruning_path(tree: Tree, node_loss=None, norm: float = 1.0):
    """Nested subtrees T_0 ⊃ T_1 ⊃ ... ⊃ root: list of (alpha_k, collapsed mask).

    alpha_k is the per-split cost at which T_k becomes optimal, in the units of ``node_loss / norm``: with the
    default ``norm=1`` the raw weighted loss; with ``norm = spot_norm(problem, C, w)`` and SPO node losses,
    the SPOT objective's normalised scale (the ``alpha`` of ``SPOTree`` and the MILP). Tied weakest links are
    collapsed together (:func:`opttrees.pruning.pruning_path`).
    """
    node_loss = tree.extras["train_loss"] if node_loss is None else node_loss
    path = weakest_link.pruning_path(tree, node_loss, norm=norm)
    return [(float(a), path.collapsed(k)) for k, a in enumerate(path.alphas)]


def collapse(tree: Tree, collapsed: np.ndarray) -> Tree:
    """A compact copy of the tree with the collapsed nodes turned into leaves (:meth:`Tree.prune`)."""
    return tree.prune(collapsed)


def node_loss_on(tree: Tree, problem, X, C, w, criterion: str = "spo") -> np.ndarray:
    """Weighted loss of every node *as if it were a leaf* on data (X, C, w), using its stored decision/mean."""
    Cm = problem.sign * problem.check_costs(C)
    rows, nodes = _path_pairs(tree, X)
    if criterion == "spo":
        _, z = problem._solve_min(Cm)
        contrib = w[rows] * (np.einsum("ij,ij->i", Cm[rows], tree.extras["decision"][nodes]) - z[rows])
    else:
        contrib = w[rows] * ((Cm[rows] - problem.sign * tree.value[nodes]) ** 2).sum(axis=1)
    out = np.zeros(tree.n_nodes)
    np.add.at(out, nodes, contrib)
    return out


def _path_pairs(tree: Tree, X):
    """(row, node) for every node on every row's path (:meth:`Tree.decision_path`), in row order."""
    D = tree.decision_path(X).tocoo()
    return D.row.astype(np.int64), D.col.astype(np.int64)


def prune_on_validation(tree: Tree, problem, X_val, C_val, w_val=None, criterion: str = "spo",
                        rel_tol: float = 1e-5) -> Tree:
    """Pick the subtree on the pruning path with the lowest validation loss; ties -> the largest alpha."""
    w_val = np.ones(len(X_val)) if w_val is None else np.asarray(w_val, float)
    val = node_loss_on(tree, problem, X_val, C_val, w_val, criterion)
    path = weakest_link.pruning_path(tree, tree.extras["train_loss"])
    errs = path.leaf_sums(val)
    best = errs.min()
    k = int(np.nonzero(errs <= best + abs(best) * rel_tol + 1e-12)[0].max())
    return path.subtree(k)


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
    Breiman subtree T(alpha), :func:`opttrees.pruning.optimal_subtree`); a node is collapsed when keeping its
    split does not lower the objective (ties, up to round-off, go to the smaller tree).
    """
    node_loss = tree.extras["train_spo"] if node_loss is None else node_loss
    return weakest_link.optimal_subtree(tree, node_loss, alpha, norm=norm)


def prune_zero_gain(tree: Tree) -> Tree:
    """Collapse every split that does not lower the training loss (alpha = 0 weakest-link pruning)."""
    loss = tree.extras["train_loss"]
    path = weakest_link.pruning_path(tree, loss)
    return path.subtree(path.index_at(0.0, atol=1e-9 * max(1.0, abs(float(loss[0])))))


def refit_nodes(tree: Tree, problem, X, C, w=None) -> Tree:
    """Recompute every node's payload from data: weighted mean cost, decision w*(mean), weight, losses.

    Used on MILP trees (the paper's SPO2CART step) so they can be pruned and predicted like greedy trees.
    A node that receives no training point inherits its parent's mean.
    """
    C = problem.check_costs(C)
    w = np.ones(len(C)) if w is None else np.asarray(w, float)
    Cm = problem.sign * C
    _, z = problem._solve_min(Cm)
    n_nodes = tree.n_nodes
    W = np.zeros(n_nodes)
    S = np.zeros((n_nodes, C.shape[1]))
    Z = np.zeros(n_nodes)
    rows, nodes = _path_pairs(tree, X)
    np.add.at(W, nodes, w[rows])
    np.add.at(S, nodes, w[rows, None] * Cm[rows])
    np.add.at(Z, nodes, w[rows] * z[rows])
    mean = np.zeros_like(S)
    parent = tree.parents()
    for t in tree.preorder():  # parents first
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
