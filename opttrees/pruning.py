"""Weakest-link (cost-complexity) pruning of a :class:`~opttrees.tree.Tree` from a per-node loss.

The one pruner of opttrees: the heuristics (OCT/ORT objective), SPO trees and the CART conversion all call it
with their own per-node loss and normaliser. It knows nothing about data or objectives, only:

- ``node_loss[t]``: the loss, in raw units, the subtree rooted at ``t`` would have if ``t`` were a leaf;
- ``norm``: the normaliser of the objective (L̂ for OCT/ORT, N = Σ ω |z*| for SPOT, 1 for raw loss);
- ``split_cost[t]``: the complexity a split charges (default 1 per split; :func:`split_costs` gives the
  thesis's count for hyperplane trees, the number of nonzero coefficients).

A pruning of the tree collapses some branch nodes into leaves; its objective at complexity cost ``alpha`` is

    F_alpha(T') = Σ_{leaves t of T'} node_loss[t] / norm  +  alpha · Σ_{splits t of T'} split_cost[t],

the function the MIO formulations minimise. :func:`optimal_pruning` finds the smallest pruning minimising
it (Breiman's T(alpha), a bottom-up dynamic program); :func:`pruning_path` gives the whole nested sequence
T_0 ⊃ T_1 ⊃ … ⊃ root with the critical alphas (Breiman's weakest-link algorithm, the thesis's PRUNE).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import InputError
from .tree import LEAF, Tree


def split_costs(tree: Tree) -> np.ndarray:
    """Complexity of every node's split: 0 at leaves, 1 for a parallel split, nnz(coef) for a hyperplane.

    Parameters
    ----------
    tree : Tree

    Returns
    -------
    numpy.ndarray of shape (n_nodes,)
        Summed over the branch nodes, the complexity that ``alpha`` multiplies in the OCT/ORT objective.
    """
    c = np.zeros(tree.n_nodes)
    internal = tree.children_left != LEAF
    c[internal & (tree.feature >= 0)] = 1.0
    hyp = np.nonzero(internal & (tree.feature < 0))[0]
    if hyp.size:
        c[hyp] = np.count_nonzero(tree._coefs()[hyp], axis=1)
    return c


def _check(tree: Tree, node_loss, norm, split_cost):
    loss = np.asarray(node_loss, dtype=np.float64)
    if loss.shape != (tree.n_nodes,):
        raise InputError(f"node_loss must have one entry per node ({tree.n_nodes}); got shape {loss.shape}")
    if not (np.isfinite(norm) and norm > 0):
        raise InputError(f"norm must be a positive number; got {norm!r}")
    if split_cost is None:
        cost = (tree.children_left != LEAF).astype(np.float64)
    else:
        cost = np.asarray(split_cost, dtype=np.float64)
        if cost.shape != (tree.n_nodes,):
            raise InputError(f"split_cost must have one entry per node ({tree.n_nodes}); got shape {cost.shape}")
        bad = (tree.children_left != LEAF) & ~(cost > 0)
        if bad.any():
            raise InputError(f"split_cost must be positive at every split; node {int(np.nonzero(bad)[0][0])} "
                             f"has {cost[bad][0]!r}")
    return loss, float(norm), cost


def _check_alpha(alpha) -> float:
    try:
        a = float(alpha)
    except (TypeError, ValueError):
        a = np.nan
    if not a >= 0 or isinstance(alpha, str):
        raise InputError(f"alpha must be >= 0; got {alpha!r}")
    return a


def pruning_objective(tree: Tree, node_loss, alpha: float, norm: float = 1.0, split_cost=None) -> float:
    """F_alpha of ``tree`` itself: Σ over its leaves of node_loss / norm + alpha · Σ over its splits of split_cost.

    The parameters are those of :func:`optimal_pruning`; returns a float. Minimised over the prunings of a
    tree by :func:`optimal_pruning` (useful to check a pruning against brute force).
    """
    loss, norm, cost = _check(tree, node_loss, norm, split_cost)
    return float(loss[tree.leaves].sum() / norm + _check_alpha(alpha) * cost[tree.children_left != LEAF].sum())


def optimal_pruning(tree: Tree, node_loss, alpha: float, norm: float = 1.0, split_cost=None,
                    tol: float | None = None) -> np.ndarray:
    """The nodes to collapse for the smallest pruning minimising F_alpha (Breiman's T(alpha)).

    Exact bottom-up dynamic program: a node is collapsed when keeping its split does not lower the objective
    by more than ``tol`` (ties go to the smaller tree).

    Parameters
    ----------
    tree : Tree
    node_loss : array-like of shape (n_nodes,)
        Loss of every node as a leaf (raw units).
    alpha : float
        Cost per unit of split complexity (>= 0), on the normalised scale.
    norm : float, default 1.0
        Positive normaliser: the objective charges ``node_loss / norm``.
    split_cost : array-like of shape (n_nodes,), optional
        Complexity of every split; default 1 per split.
    tol : float, optional
        Absolute tolerance on the normalised objective; default ``1e-12 * max(1, |node_loss[0] / norm|)``.

    Returns
    -------
    numpy.ndarray of bool, shape (n_nodes,)
        ``True`` at every branch node made a leaf (some may lie below another collapsed node); pass it to
        :meth:`Tree.prune`.
    """
    loss, norm, cost = _check(tree, node_loss, norm, split_cost)
    alpha = _check_alpha(alpha)
    loss = loss / norm
    if tol is None:
        tol = 1e-12 * max(1.0, abs(float(loss[0])))
    cl, cr = tree.children_left, tree.children_right
    best = np.zeros(tree.n_nodes)
    collapsed = np.zeros(tree.n_nodes, dtype=bool)
    for t in tree.preorder()[::-1]:   # children before parents
        if cl[t] == LEAF:
            best[t] = loss[t]
            continue
        keep = best[cl[t]] + best[cr[t]] + (alpha if split_cost is None else alpha * cost[t])
        if loss[t] <= keep + tol:
            best[t], collapsed[t] = loss[t], True
        else:
            best[t] = keep
    return collapsed


def optimal_subtree(tree: Tree, node_loss, alpha: float, norm: float = 1.0, split_cost=None,
                    tol: float | None = None) -> Tree:
    """``tree.prune(optimal_pruning(...))``: the smallest pruned subtree minimising F_alpha (payloads kept)."""
    return tree.prune(optimal_pruning(tree, node_loss, alpha, norm, split_cost, tol))


@dataclass(frozen=True, eq=False)
class PruningPath:
    """The nested subtrees T_0 ⊃ T_1 ⊃ … ⊃ root of weakest-link pruning and their critical alphas.

    Attributes
    ----------
    tree : Tree
        The unpruned tree T_0 (node ids below refer to it).
    alphas : numpy.ndarray of shape (n_steps,)
        Non-decreasing; ``alphas[0] == 0``. T_k minimises F_alpha for alpha in [alphas[k], alphas[k + 1]).
    pruned : tuple of numpy.ndarray
        ``pruned[k]``: the branch nodes made leaves to go from T_{k-1} to T_k (``pruned[0]`` is empty).
    """

    tree: Tree
    alphas: np.ndarray
    pruned: tuple
    # derived in __post_init__: the step at which each node is made a leaf, and the first step at which a strict
    # ancestor is (-1: not in the tree)
    _step: np.ndarray = field(init=False, repr=False)
    _below: np.ndarray = field(init=False, repr=False)

    def __len__(self) -> int:
        return len(self.alphas)

    def __post_init__(self):
        tree = self.tree
        step = np.full(tree.n_nodes, np.iinfo(np.int64).max)   # step at which a node is made a leaf
        for k, nodes in enumerate(self.pruned):
            step[nodes] = np.minimum(step[nodes], k)
        below = np.full(tree.n_nodes, -1)   # first step at which a strict ancestor is (-1: not in the tree)
        below[0] = np.iinfo(np.int64).max
        cl, cr = tree.children_left, tree.children_right
        for t in tree.preorder():   # parents first
            if cl[t] != LEAF:
                below[cl[t]] = below[cr[t]] = min(below[t], step[t])
        object.__setattr__(self, "_step", step)
        object.__setattr__(self, "_below", below)

    def collapsed(self, k: int) -> np.ndarray:
        """Bool mask of the nodes collapsed in steps 1..k (pass to :meth:`Tree.prune` to get T_k)."""
        return self._step <= k

    def leaf_mask(self, k: int) -> np.ndarray:
        """Bool mask, over the nodes of :attr:`tree`, of the leaves of T_k."""
        return (self._below > k) & ((self.tree.children_left == LEAF) | (self._step <= k))

    def leaf_sums(self, values) -> np.ndarray:
        """Σ of ``values`` (one per node) over the leaves of every T_k: e.g. validation loss along the path."""
        values = np.asarray(values, dtype=np.float64)
        return np.array([values[self.leaf_mask(k)].sum() for k in range(len(self))])

    def index_at(self, alpha: float, atol: float = 1e-12) -> int:
        """The step k whose subtree is optimal at ``alpha``: the last k with ``alphas[k] <= alpha + atol``."""
        return int(np.nonzero(self.alphas <= alpha + atol)[0].max())

    def subtree(self, k: int) -> Tree:
        """T_k as a compact Tree (``tree.prune``: payloads kept, not refitted)."""
        return self.tree.prune(self.collapsed(k))


def pruning_path(tree: Tree, node_loss, norm: float = 1.0, split_cost=None, ties: str = "all",
                 atol: float = 0.0, rtol: float = 1e-12) -> PruningPath:
    """Weakest-link pruning: repeatedly collapse the branch node whose split buys the least loss per complexity.

    At each step every live branch node t has g(t) = (node_loss[t] − R(T_t)) / (norm · C(T_t)), with R(T_t)
    the summed loss of the leaves below t and C(T_t) the summed split cost of the splits below it; the nodes
    with g within ``atol + rtol · max(1, |g_min|)`` of the minimum are the weakest links. The step's alpha is
    max(g_min, previous alpha) (so never below 0).

    Parameters
    ----------
    tree : Tree
    node_loss : array-like of shape (n_nodes,)
        Loss of every node as a leaf (raw units).
    norm : float, default 1.0
        Positive normaliser; the alphas are on the scale of ``node_loss / norm``.
    split_cost : array-like of shape (n_nodes,), optional
        Complexity of every split (see :func:`split_costs`); default 1 per split.
    ties : {"all", "first"}, default "all"
        ``"all"`` collapses every weakest link in one step (Breiman's sequence, one subtree per distinct
        alpha); ``"first"`` collapses only the one with the lowest node id, so tied links give several steps
        with the same alpha (the thesis's PRUNE, one node per step).
    atol, rtol : float
        Tie tolerance, absolute and relative to ``max(1, |g_min|)``.

    Returns
    -------
    PruningPath
    """
    if ties not in ("all", "first"):
        raise InputError(f"ties must be 'all' or 'first'; got {ties!r}")
    loss, norm, cost = _check(tree, node_loss, norm, split_cost)
    cl, cr = tree.children_left, tree.children_right
    m = tree.n_nodes
    pre = tree.preorder()
    pos = np.empty(m, dtype=np.int64)
    pos[pre] = np.arange(len(pre))
    parent = tree.parents()
    R = loss.copy()                                  # loss of the live leaves below t
    C = np.zeros(m)                                  # split cost of the live splits below t
    branch = np.zeros(m, dtype=bool)                 # live branch nodes
    branch[pre] = cl[pre] != LEAF
    for t in pre[::-1]:
        if branch[t]:
            R[t] = R[cl[t]] + R[cr[t]]
            C[t] = C[cl[t]] + C[cr[t]] + cost[t]
    alphas, pruned = [0.0], [np.zeros(0, dtype=np.int64)]
    while branch.any():
        nodes = np.nonzero(branch)[0]
        g = (loss[nodes] - R[nodes]) / (norm * C[nodes])
        gmin = float(g.min())
        tied = nodes[g <= gmin + atol + rtol * max(1.0, abs(gmin))]
        cut = tied if ties == "all" else tied[:1]
        for t in cut:   # t and everything below it leave the set of live branch nodes
            branch[pre[pos[t]:pos[t] + _size(t, cl, cr, pos)]] = False
        for t in cut:
            R[t], C[t] = loss[t], 0.0
        # recompute the ancestors bottom-up (children before parents: decreasing preorder position)
        anc = set()
        for t in cut:
            a = parent[t]
            while a >= 0 and a not in anc:
                anc.add(int(a))
                a = parent[a]
        for a in sorted(anc, key=lambda u: -pos[u]):
            if branch[a]:
                R[a] = R[cl[a]] + R[cr[a]]
                C[a] = C[cl[a]] + C[cr[a]] + cost[a]
        alphas.append(max(gmin, alphas[-1]))
        pruned.append(np.sort(cut).astype(np.int64))
    return PruningPath(tree, np.array(alphas), tuple(pruned))


def _size(t, cl, cr, pos) -> int:
    """Number of nodes in the subtree of t (contiguous from pos[t] in preorder)."""
    last = t
    while cl[last] != LEAF:
        last = cr[last]
    return int(pos[last] - pos[t] + 1)
