"""ORT and ORT-H: Bertsimas–Dunn optimal regression trees with constant leaves, thesis model (4.8)."""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pyomo.environ as pyo
from pyomo.common.gc_manager import PauseGC

from ..data.prepared import PreparedData
from ..errors import InputError
from ..objectives import baseline, leaf_predictions, node_losses, tree_objective
from ..params import check_alpha
from ..tree import Tree
from .base import Formulation
from .constraint_view import BDConstraintView
from .structure import DEFAULT_MARGIN, BDStructure, HyperplaneStructure

LOSSES = ("absolute", "squared")
SPLIT_TYPES = ("parallel", "hyperplane")


def check_regression(data: PreparedData, name: str, loss: str) -> None:
    """Regression data and a known loss: what the ORT models (:class:`ORT`, ``ORTLinear``) take."""
    if data.task != "regression":
        raise InputError(f"{name} needs regression data (prepare(X, y, task='regression'))")
    if loss not in LOSSES:
        raise InputError(f"loss must be one of {LOSSES}; got {loss!r}")


def add_regression_loss(m: pyo.Block, loss: str, y: list, w: list):
    """The weighted loss of the fitted values ``m.f`` on ``y`` (ORT and ORT-L alike); absolute loss adds its
    residuals ``m.L`` with the two rows that bound them, squared loss is the quadratic objective term itself."""
    n = len(y)
    if loss == "absolute":
        m.L = pyo.Var(range(n), domain=pyo.NonNegativeReals)
        m.residual_above = pyo.Constraint(range(n), rule=lambda m, i: m.L[i] >= m.f[i] - y[i])
        m.residual_below = pyo.Constraint(range(n), rule=lambda m, i: m.L[i] >= y[i] - m.f[i])
        return sum(w[i] * m.L[i] for i in range(n))
    return sum(w[i] * (m.f[i] - y[i]) ** 2 for i in range(n))


class ORT(Formulation):
    r"""Optimal regression tree with constant leaves (Dunn thesis ch. 4, model (4.8)) on regression
    :class:`~opttrees.data.PreparedData`; ``split_type="hyperplane"`` gives ORT-H (the same loss block on the
    OCT-H tree block, :class:`~opttrees.formulations.structure.HyperplaneStructure`).

    .. math::

        \min\; & \frac{1}{\hat L} \sum_i w_i L_i + \alpha C && (4.7)\\
        \text{s.t.}\; & L_i \ge f_i - y_i,\quad L_i \ge y_i - f_i \quad\text{(absolute)}
            \qquad L_i = (f_i - y_i)^2 \quad\text{(squared)} && (4.3)\text{–}(4.6)\\
        & -M_f (1 - z_{it}) \le f_i - \beta_{0t} \le M_f (1 - z_{it}) && \forall i, t \in \mathcal T_L \quad (4.2)\\
        & f_i,\ \beta_{0t} \in [\min_i y_i, \max_i y_i],\quad M_f = \max_i y_i - \min_i y_i\\
        & \text{the tree rows of (2.24) (parallel; } C = \textstyle\sum_t d_t)
            \text{ or of (3.3) (hyperplane; } C = \sum_{j,t} s_{jt})

    :math:`\hat L` is the loss of the best constant (SAE about the weighted median, SSE about the weighted
    mean), so ``alpha`` means what it means in every other method. The explicit bounds on :math:`f_i` and
    :math:`\beta_{0t}` make :math:`M_f` valid for every feasible point, the free :math:`\beta_{0t}` of an
    empty leaf included (the thesis argues validity only at an optimum); they cut off no optimum, since the
    best constant of any set of targets lies in their range. Squared loss is put in the objective
    (:math:`\sum_i w_i (f_i - y_i)^2`, the value (4.6)'s epigraph rows take at an optimum): the solver layer
    takes linear rows and a quadratic objective, which SCIP solves and HiGHS refuses (integers plus a
    quadratic objective).

    Components users can extend: ``model.tree`` (the structure block), ``model.beta`` (leaf constants),
    ``model.f`` (fitted values), ``model.L`` (absolute residuals, absolute loss only), ``model.objective_expr``.
    """

    def __init__(self, data: PreparedData, max_depth: int = 2, min_samples_leaf: int = 1, alpha: float = 0.0,
                 loss: str = "absolute", split_type: str = "parallel", margin: float = DEFAULT_MARGIN,
                 routing: str = "aggregated", block=None):
        check_regression(data, "ORT", loss)
        if split_type not in SPLIT_TYPES:
            raise InputError(f"split_type must be one of {SPLIT_TYPES}; got {split_type!r}")
        self.data = data
        self.loss = loss
        self.split_type = split_type
        self.alpha = check_alpha(alpha)
        self.structure = (HyperplaneStructure(data, max_depth, min_samples_leaf, routing, margin)
                          if split_type == "hyperplane" else BDStructure(data, max_depth, min_samples_leaf, routing))
        self.baseline = baseline(data.y, loss, sample_weight=data.sample_weight)
        self.y_range = (float(data.y.min()), float(data.y.max()))
        self.start_notes: list[str] = []
        self.model = self._new_block(block, "ORT-H" if split_type == "hyperplane" else "ORT")
        self._build()

    def _build(self) -> None:
        d, S, m = self.data, self.structure, self.model
        n, TL = d.n, S.leaves
        lo, hi = self.y_range
        M = hi - lo
        y, w = d.y.tolist(), d.sample_weight.tolist()
        with PauseGC():
            m.tree = pyo.Block()
            S.build(m.tree)
            z = m.tree.z
            m.beta = pyo.Var(TL, bounds=(lo, hi))
            m.f = pyo.Var(range(n), bounds=(lo, hi))
            m.fit_upper = pyo.Constraint(range(n), TL, rule=lambda m, i, t: m.f[i] - m.beta[t] <= M * (1 - z[i, t]))
            m.fit_lower = pyo.Constraint(range(n), TL, rule=lambda m, i, t: m.f[i] - m.beta[t] >= -M * (1 - z[i, t]))
            total = add_regression_loss(m, self.loss, y, w)
            self._set_objective((1.0 / self.baseline) * total + self.alpha * S.complexity(m.tree), pyo.minimize)

    # ------------------------------------------------------------------ Tree <-> model
    def _leaf_cost(self, rows: np.ndarray) -> float:
        d = self.data
        if not len(rows):
            return 0.0
        return float(node_losses(np.zeros(len(rows), dtype=np.int64), d.y[rows], 1, self.loss,
                                 sample_weight=d.sample_weight[rows])[0])

    def feasible_start(self, tree: Tree) -> Tree:
        """``tree`` in a form the MIO accepts: ORT-H splits pass :meth:`HyperplaneStructure.fit_margin` (with a
        warning when that changes the tree); ORT trees collapse splits that send no training point one way."""
        if tree.task != "regression":
            raise InputError("ORT warm start needs a regression tree (constant leaves)")
        if not isinstance(self.structure, HyperplaneStructure):
            return tree
        fitted, notes = self.structure.fit_margin(tree, self._leaf_cost, self.alpha * self.baseline)
        self.start_notes = notes
        if notes:
            fitted.value = leaf_predictions(fitted.apply(self.data.X), self.data.y, fitted.n_nodes, self.loss,
                                            self.data.sample_weight).reshape(-1, 1)
            warnings.warn(f"ORT-H warm start: {'; '.join(notes)}; start objective {self.tree_objective(tree):.6g} "
                          f"-> {self.tree_objective(fitted):.6g}", stacklevel=3)
        return fitted

    def _warm_start(self, tree: Tree) -> None:
        """Set every variable from a regression tree of depth <= D (leaf constants clipped to the range of y,
        which never raises a point's loss)."""
        d, S, m = self.data, self.structure, self.model
        tree, heap_leaf, node_of_heap = S.set_from_tree(m.tree, self.feasible_start(tree))
        lo, hi = self.y_range
        beta = {t: float(np.clip(tree.value[node_of_heap[t], 0], lo, hi)) if t in node_of_heap else lo
                for t in S.leaves}
        for t in S.leaves:
            m.beta[t].set_value(beta[t])
        for i in range(d.n):
            f = beta[int(heap_leaf[i])]
            m.f[i].set_value(f)
            if self.loss == "absolute":
                m.L[i].set_value(abs(f - float(d.y[i])))

    def _decode(self) -> Tree:
        d, S, m = self.data, self.structure, self.model
        tree, heap, _ = S.decoded_tree(m.tree, "regression", 1, keep_unused=self.alpha > 0)
        n_nodes = tree.n_nodes
        # every node's best constant on its training rows: what an empty leaf predicts is its parent's
        rows_at = tree.decision_path(d.X).toarray().astype(bool)
        best = np.array([self._best_constant(rows_at[:, k]) for k in range(n_nodes)])
        parent = tree.parents()
        value = best.copy()
        for node, h in enumerate(heap):
            if h < 0:
                continue
            if rows_at[:, node].any():
                value[node] = float(pyo.value(m.beta[h]))
            elif parent[node] >= 0:
                value[node] = best[parent[node]]
        tree.value = value.reshape(-1, 1)
        return tree

    def _refit_leaves(self, tree: Tree) -> Tree:
        """Every leaf holding training rows predicts their best constant (weighted mean for squared loss,
        weighted median for absolute loss): what the objective defines for the solver's partition. A solver
        stops within its tolerances (SCIP's gap, feasibility of the epigraph row), not at these values; the
        refit tree is a feasible point of the model (the constants lie in [min y, max y]) and scores no worse."""
        rows_at = tree.decision_path(self.data.X).toarray().astype(bool)
        value = tree.value.copy()
        for node in tree.leaves:
            if rows_at[:, node].any():
                value[node, 0] = self._best_constant(rows_at[:, node])
        return dataclasses.replace(tree, value=value)

    def _best_constant(self, mask: np.ndarray) -> float:
        d = self.data
        if not mask.any():
            return float(np.median(d.y))
        return float(leaf_predictions(np.zeros(int(mask.sum()), dtype=np.int64), d.y[mask], 1, self.loss,
                                      d.sample_weight[mask])[0])

    def tree_objective(self, tree: Tree) -> float:
        """Loss of the tree's own leaf constants / L̂ + alpha * complexity (splits, or non-zero coefficients)."""
        d = self.data
        return tree_objective(tree, d.X, d.y, self.loss, self.alpha, None, self.baseline, d.sample_weight,
                              refit_leaves=False)

    def constraint_view(self):
        """Side constraints read the Bertsimas–Dunn block (parallel splits)."""
        return self._view_of(BDConstraintView)
