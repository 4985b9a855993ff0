"""An SPO fit's cost data: the training features, cost vectors and weights, checked against the decision problem,
the validation rows (given, or split off), and the costs scaled by one exact factor, with what is computed from
them once (each row's optimal decision, the SPOT objective's norm).

Why scaled: one positive factor (a power of two: exact) brings the largest cost magnitude to about 1. Decisions
are invariant to it and regret scales with it, so every method (greedy, DP, MILP) sees the same problem and the
MILP meets no 1e9 coefficients; :meth:`CostData.to_user` maps a fitted tree's cost vectors and regrets back.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..data.costs import check_costs_fit
from .greedy import grow_spo_tree
from .objective import spot_norm, spot_objective
from .pruning import prune_alpha, prune_on_validation, prune_zero_gain, refit_nodes


def split_validation(X, C, w, frac: float, random_state):
    """((X, C, w) training, (X, C, w) validation): ``floor(frac * n)`` random rows held out."""
    n = X.shape[0]
    n_val = int(np.floor(frac * n))
    if n_val < 1 or n - n_val < 1:
        raise InputError(f"validation_fraction={frac} leaves no validation or no training rows (n={n})")
    perm = np.random.default_rng(random_state).permutation(n)
    va, tr = perm[:n_val], perm[n_val:]
    return (X[tr], C[tr], w[tr]), (X[va], C[va], w[va])


def cost_factor(C: np.ndarray) -> float:
    """The power of two that brings the largest cost magnitude to about 1 (1.0 for all-zero or tiny ranges)."""
    big = float(np.abs(C).max()) if C.size else 0.0
    if not (np.isfinite(big) and big > 0):
        return 1.0
    return float(2.0 ** -round(math.log2(big)))


def costs_to_user(tree, g: float):
    """An SPO tree fitted on costs C * f with its cost vectors and regrets in C's units (g = 1 / f); its
    decisions and weights are unchanged."""
    if g == 1.0 or tree is None:
        return tree
    out = copy.copy(tree)
    out.value = np.asarray(tree.value, dtype=np.float64) * g
    out.extras = {k: (np.asarray(v, dtype=np.float64) * g if k in ("train_loss", "train_spo") else v)
                  for k, v in tree.extras.items()}
    return out


@dataclass
class CostData:
    """An SPO fit's prepared data (:meth:`prepare`): the training features, costs (scaled by ``factor``) and
    weights, the feature names, the validation rows (or None), each training row's optimal decision ``z`` and the
    SPOT objective's norm (N = Σ ω |z*|)."""

    problem: object
    X: np.ndarray
    C: np.ndarray
    w: np.ndarray
    feature_names: list | None
    val: tuple | None
    factor: float
    z: np.ndarray
    norm: float

    @property
    def p(self) -> int:
        return self.X.shape[1]

    @classmethod
    def prepare(cls, problem, X, C, sample_weight=None, X_val=None, C_val=None, sample_weight_val=None,
                validation_fraction: float = 0.0, random_state=None) -> CostData:
        """Check (X, C) and the validation rows (both of X_val and C_val, or neither; else, with
        ``validation_fraction`` > 0, that share of the rows held out), and scale the costs."""
        names = list(map(str, X.columns)) if hasattr(X, "columns") else None
        X, C, w = check_costs_fit(problem, X, C, sample_weight)
        if (X_val is None) != (C_val is None):
            raise InputError("give both X_val and C_val, or neither")
        val = None
        if X_val is not None:
            Xv, Cv, wv = check_costs_fit(problem, X_val, C_val, sample_weight_val)
            if Xv.shape[1] != X.shape[1]:
                raise InputError(f"X_val has {Xv.shape[1]} features but X has {X.shape[1]}")
            val = (Xv, Cv, wv)
        elif validation_fraction:
            (X, C, w), val = split_validation(X, C, w, validation_fraction, random_state)
        f = cost_factor(C)
        C = C * f
        val = None if val is None else (val[0], val[1] * f, val[2])
        _, z = problem._solve_min(problem.sign * C)
        return cls(problem, X, C, w, names, val, f, z, spot_norm(problem, C, w, z=z))

    def objective(self, alpha: float):
        """The SPOT objective of a tree on the training rows (:func:`~opttrees.spo.spot_objective`)."""
        return lambda tree: spot_objective(self.problem, tree, self.X, self.C, self.w, alpha=alpha, norm=self.norm,
                                           z=self.z)

    def refit(self, tree):
        """The tree's nodes refitted on the training rows (mean costs, decisions, per-node regrets), its features
        named as the training data's columns (when they have names)."""
        out = refit_nodes(tree, self.problem, self.X, self.C, self.w)
        if self.feature_names is not None:
            out.feature_names = self.feature_names
        return out

    def to_user(self, tree):
        """The tree's cost vectors and regrets in the caller's cost units."""
        return costs_to_user(tree, 1.0 / self.factor)

    def node_loss(self, tree) -> np.ndarray:
        """Each node's training SPO regret as a leaf (its decision w*(mean cost)), in the caller's units: what the
        feature importances decrease."""
        return self.refit(tree).extras["train_spo"] / self.factor

    def grow(self, max_depth, min_samples_leaf, criterion: str = "spo", quantile_step=0.01):
        """Greedy SPOT (or CART on the costs, ``criterion="mse"``) on the training rows, unpruned
        (:func:`~opttrees.spo.grow_spo_tree`)."""
        return grow_spo_tree(self.problem, self.X, self.C, self.w, max_depth=max_depth,
                             min_samples_leaf=min_samples_leaf, criterion=criterion, quantile_step=quantile_step,
                             feature_names=self.feature_names)

    def prune(self, criterion: str, alpha: float, on_validation: bool, tree):
        """Every method's tree pruned: on the validation rows (if any and ``on_validation``: ``prune=True``), at
        ``alpha`` (SPO loss), or where no split gains."""
        if on_validation and self.val is not None:
            X_val, C_val, w_val = self.val
            return prune_on_validation(tree, self.problem, X_val, C_val, w_val, criterion=criterion)
        if criterion == "spo":
            return prune_alpha(tree, alpha, spot_norm(self.problem, self.C, self.w))
        return prune_zero_gain(tree)
