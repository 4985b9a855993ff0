"""ORT-L: Bertsimas–Dunn optimal regression trees with linear leaves, thesis (5.1)–(5.6), with a valid big-M.

Why the bounds differ from the thesis: its M_f (from one feasible objective) ignores the normalisation by L̂
and, worse, (5.2) also evaluates a leaf's model at points of *other* leaves, where nothing bounds it, so it
can cut off optima (our observation: docs/design-notes.md §4). Here every coefficient is bounded, |β_jt| <= M_r and |β_0t| <= B_0,
the fitted value of row i is bounded by P_i = B_0 + M_r Σ_j xs_ij (what any leaf model can reach at x_i),
and M_i = 2 P_i is then valid in (5.2) for every feasible point.

Which M_r and B_0 cut off no optimum (z_F = ``upper_bound``, the objective of any feasible tree; 1.0 by
default, the root-only constant tree; R = the largest residual a row can have at an optimum, (L̂ z_F / w_min)
for absolute loss and its square root for squared loss):

- L1 with λ > 0: λ Σ_j |β_jt| <= z_F at an optimum, so M_r = z_F / λ, and the row ``coef_budget`` (Σ_j u_jt
  <= z_F / λ) is added, tightening P_i to B_0 + (z_F / λ) max_j xs_ij;
- B_0 = max|y| + (largest Σ_j |β_jt| allowed) + R: an optimal intercept keeps some row of its leaf within R;
- L0, or λ = 0: nothing bounds the coefficients (the thesis: "no explicit method"); ``coef_bound`` defaults to
  10 (max y − min y) per unit of scaled feature and the model is then exact over trees with |β_jt| <= M_r; a
  solution touching the bound gets a warning from :meth:`ORTLinear.extract`.

Coefficients live on the min-max scaled features (the scale of the penalty, as in
:mod:`opttrees.heuristics.linear_leaves`); the extracted Tree holds them in original units. An empty leaf's
coefficients are forced to 0 (β_jt tied to l_t), so the model's penalty is the tree's.
"""
from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pyomo.environ as pyo
from pyomo.common.gc_manager import PauseGC

from ..data.prepared import PreparedData
from ..errors import InputError
from ..heuristics.linear_leaves import (check_leaf_penalty, fit_leaf, linear_leaf_tree, linear_tree_objective,
                                        to_original_units, to_scaled_units)
from ..objectives import baseline
from ..params import check_alpha
from ..tree import Tree
from .base import Formulation
from .ort import SPLIT_TYPES, add_regression_loss, check_regression
from .structure import DEFAULT_MARGIN, BDStructure, HyperplaneStructure

PENALTIES = ("l1", "l0")


class ORTLinear(Formulation):
    r"""Optimal regression tree with linear leaves (ORT-L; ``split_type="hyperplane"``: ORT-LH).

    .. math::

        \min\; & \frac{1}{\hat L}\sum_i w_i L_i + \alpha C + \lambda \sum_{t}\sum_j u_{jt}
            \quad (\text{L0: } \lambda \textstyle\sum_{t,j} r_{jt}) && (5.3)\\
        \text{s.t.}\; & -M_i (1 - z_{it}) \le f_i - (\boldsymbol\beta_t^\mathsf T \mathbf{xs}_i + \beta_{0t})
            \le M_i (1 - z_{it}) && (5.2)\\
        & u_{jt} \ge \pm \beta_{jt},\ \ \textstyle\sum_j u_{jt} \le z_F/\lambda \quad\text{(L1)}\qquad
          -M_r r_{jt} \le \beta_{jt} \le M_r r_{jt},\ r_{jt} \le l_t \quad\text{(L0)} && (5.4)\\
        & -M_r l_t \le \beta_{jt} \le M_r l_t,\quad |\beta_{0t}| \le B_0,\quad |f_i| \le P_i,\quad M_i = 2P_i\\
        & L_i \ge \pm (f_i - y_i) \text{ (absolute)};\ \ \text{squared: } \textstyle\sum_i w_i (f_i - y_i)^2
            \text{ in the objective (SCIP only)}

    plus the tree rows of (2.24) (parallel) or (3.3) (hyperplane). L̂ is the root-only constant tree's loss
    (as in ORT), so ``alpha`` and ``leaf_penalty`` mean what they mean in the local search
    (:func:`opttrees.heuristics.linear_leaves.linear_local_search`), whose trees are feasible warm starts.

    Components: ``model.tree``, ``model.beta[j, t]`` (scaled units), ``model.beta0[t]``, ``model.f``,
    ``model.L`` (absolute loss), ``model.u`` (L1) or ``model.r`` (L0), ``model.objective_expr``.
    """

    def __init__(self, data: PreparedData, max_depth: int = 1, min_samples_leaf: int = 1, alpha: float = 0.0,
                 leaf_penalty: float = 0.01, penalty: str = "l1", loss: str = "absolute",
                 split_type: str = "parallel", upper_bound: float = 1.0, coef_bound: float | None = None,
                 margin: float = DEFAULT_MARGIN, routing: str = "aggregated", block=None):
        check_regression(data, "ORT-L", loss)
        if penalty not in PENALTIES:
            raise InputError(f"penalty must be one of {PENALTIES}; got {penalty!r}")
        if split_type not in SPLIT_TYPES:
            raise InputError(f"split_type must be one of {SPLIT_TYPES}; got {split_type!r}")
        self.data, self.loss, self.penalty, self.split_type = data, loss, penalty, split_type
        self.alpha = check_alpha(alpha)
        self.leaf_penalty = check_leaf_penalty(leaf_penalty, data, min_samples_leaf)
        if not (isinstance(upper_bound, (int, float)) and math.isfinite(upper_bound) and upper_bound > 0):
            raise InputError(f"upper_bound (the objective of a feasible tree) must be a number > 0; got {upper_bound!r}")
        self.structure = (HyperplaneStructure(data, max_depth, min_samples_leaf, routing, margin)
                          if split_type == "hyperplane" else BDStructure(data, max_depth, min_samples_leaf, routing))
        self.baseline = baseline(data.y, loss, sample_weight=data.sample_weight)
        self.features = [int(j) for j in np.nonzero(data.splittable)[0]]
        self._bounds(float(upper_bound), coef_bound)
        self.model = self._new_block(block, "ORT-LH" if split_type == "hyperplane" else "ORT-L")
        self._build()

    def _bounds(self, zF: float, coef_bound) -> None:
        d = self.data
        y = np.asarray(d.y, dtype=np.float64)
        w = d.sample_weight
        wmin = float(w[w > 0].min()) if np.any(w > 0) else 1.0
        raw = self.baseline * zF / wmin
        self.residual_bound = math.sqrt(raw) if self.loss == "squared" else raw
        self.budget = None
        if coef_bound is None:
            if self.penalty == "l1" and self.leaf_penalty > 0:
                self.budget = zF / self.leaf_penalty
                coef_bound = self.budget
            else:
                coef_bound = 10.0 * max(float(y.max() - y.min()), 1e-12)
            self.coef_bound_proven = self.budget is not None
        else:
            coef_bound = float(coef_bound)
            if not (math.isfinite(coef_bound) and coef_bound > 0):
                raise InputError(f"coef_bound must be a number > 0; got {coef_bound!r}")
            self.coef_bound_proven = False
            if self.penalty == "l1" and self.leaf_penalty > 0:
                self.budget = zF / self.leaf_penalty
                self.coef_bound_proven = coef_bound >= self.budget
        self.coef_bound = float(coef_bound)
        xs = d.Xs[:, self.features] if self.features else np.zeros((d.n, 1))
        l1_max = len(self.features) * self.coef_bound
        if self.budget is not None:
            l1_max = min(self.budget, l1_max)
        self.intercept_bound = float(np.abs(y).max() + l1_max + self.residual_bound)
        reach = self.coef_bound * xs.sum(axis=1)
        if self.budget is not None:
            reach = np.minimum(reach, self.budget * xs.max(axis=1))
        self.fit_bound = self.intercept_bound + reach        # P_i
        self.big_m = 2.0 * self.fit_bound                     # M_i

    def _build(self) -> None:
        d, S, m = self.data, self.structure, self.model
        n, TL, J = d.n, S.leaves, self.features
        y, w = d.y.tolist(), d.sample_weight.tolist()
        xs = d.Xs
        Mr, B0, P, M = self.coef_bound, self.intercept_bound, self.fit_bound, self.big_m
        with PauseGC():
            m.tree = pyo.Block()
            S.build(m.tree)
            z, used = m.tree.z, m.tree.l
            m.beta = pyo.Var(J, TL, bounds=(-Mr, Mr))
            m.beta0 = pyo.Var(TL, bounds=(-B0, B0))
            m.f = pyo.Var(range(n), bounds=lambda m, i: (-P[i], P[i]))

            def pred(m, i, t):
                return sum(float(xs[i, j]) * m.beta[j, t] for j in J if xs[i, j] != 0.0) + m.beta0[t]

            m.fit_upper = pyo.Constraint(range(n), TL, rule=lambda m, i, t: m.f[i] - pred(m, i, t) <= M[i] * (1 - z[i, t]))
            m.fit_lower = pyo.Constraint(range(n), TL, rule=lambda m, i, t: m.f[i] - pred(m, i, t) >= -M[i] * (1 - z[i, t]))
            m.coef_used_upper = pyo.Constraint(J, TL, rule=lambda m, j, t: m.beta[j, t] <= Mr * used[t])
            m.coef_used_lower = pyo.Constraint(J, TL, rule=lambda m, j, t: m.beta[j, t] >= -Mr * used[t])
            if self.penalty == "l1":
                m.u = pyo.Var(J, TL, bounds=(0, Mr))
                m.abs_upper = pyo.Constraint(J, TL, rule=lambda m, j, t: m.u[j, t] >= m.beta[j, t])
                m.abs_lower = pyo.Constraint(J, TL, rule=lambda m, j, t: m.u[j, t] >= -m.beta[j, t])
                if self.budget is not None and J:
                    m.coef_budget = pyo.Constraint(TL, rule=lambda m, t: sum(m.u[j, t] for j in J) <= self.budget)
                pen = sum(m.u[j, t] for j in J for t in TL) if J else 0.0
            else:
                m.r = pyo.Var(J, TL, domain=pyo.Binary)
                m.nonzero_upper = pyo.Constraint(J, TL, rule=lambda m, j, t: m.beta[j, t] <= Mr * m.r[j, t])
                m.nonzero_lower = pyo.Constraint(J, TL, rule=lambda m, j, t: m.beta[j, t] >= -Mr * m.r[j, t])
                pen = sum(m.r[j, t] for j in J for t in TL) if J else 0.0
            total = add_regression_loss(m, self.loss, y, w)
            self._set_objective((1.0 / self.baseline) * total + self.alpha * S.complexity(m.tree)
                                + self.leaf_penalty * pen, pyo.minimize)

    # ------------------------------------------------------------------ Tree <-> model
    def feasible_start(self, tree: Tree) -> Tree:
        if tree.task not in ("linear", "regression"):
            raise InputError(f"an ORT-L warm start needs a linear-leaf (or constant-leaf) regression tree, not "
                             f"task {tree.task!r}")
        if tree.task == "regression":   # constant leaves: intercept only
            value = np.zeros((tree.n_nodes, self.data.p + 1))
            value[:, 0] = tree.value[:, 0]
            tree = Tree(tree.children_left, tree.children_right, tree.feature, tree.threshold, value, task="linear",
                        coef=tree.coef, feature_names=tree.feature_names, n_features=tree.n_features)
        if isinstance(self.structure, HyperplaneStructure):
            d = self.data
            sq_base = baseline(d.y, "squared", sample_weight=d.sample_weight)

            def leaf_cost(rows):   # raw loss of a lasso leaf (exact for squared loss; a proxy for absolute)
                fit = fit_leaf(d, np.asarray(rows, dtype=np.int64), self.leaf_penalty, sq_base)
                if self.loss == "squared":
                    return fit.objective * sq_base
                r = d.y[rows] - fit.intercept - d.Xs[rows] @ fit.coef
                return float(np.sum(d.sample_weight[rows] * np.abs(r))
                             + self.baseline * self.leaf_penalty * np.abs(fit.coef).sum())

            fitted, notes = self.structure.fit_margin(tree, leaf_cost, self.alpha * self.baseline)
            if notes:   # the structure changed: refit lasso leaves on it
                before = self.tree_objective(tree)
                tree = linear_leaf_tree(fitted, d, self.leaf_penalty)
                warnings.warn(f"ORT-LH warm start: {'; '.join(notes)}; start objective {before:.6g} -> "
                              f"{self.tree_objective(tree):.6g}", stacklevel=3)
        return tree

    def _warm_start(self, tree: Tree) -> None:
        """Set every variable from a linear-leaf tree of depth <= D (its leaf models converted to scaled units;
        a model outside the bounds is clipped, with a warning, since that changes the objective)."""
        d, S, m = self.data, self.structure, self.model
        tree, heap_leaf, node_of_heap = S.set_from_tree(m.tree, self.feasible_start(tree))
        clipped = []
        models = {}
        for t in S.leaves:
            b0, beta = to_scaled_units(d, tree.value[node_of_heap[t]]) if t in node_of_heap else (0.0, np.zeros(d.p))
            if t in node_of_heap and not np.any(heap_leaf == t):
                beta = np.zeros(d.p)
            keep = np.zeros(d.p)
            keep[self.features] = beta[self.features]
            if np.any(np.abs(keep) > self.coef_bound) or abs(b0) > self.intercept_bound:
                clipped.append(t)
            keep = np.clip(keep, -self.coef_bound, self.coef_bound)
            if self.budget is not None and np.abs(keep).sum() > self.budget:
                clipped.append(t)
                keep *= self.budget / np.abs(keep).sum()
            models[t] = (float(np.clip(b0, -self.intercept_bound, self.intercept_bound)), keep)
            m.beta0[t].set_value(models[t][0])
            for j in self.features:
                m.beta[j, t].set_value(float(keep[j]))
                if self.penalty == "l1":
                    m.u[j, t].set_value(abs(float(keep[j])))
                else:
                    m.r[j, t].set_value(int(keep[j] != 0.0))
        for i in range(d.n):
            b0, beta = models[int(heap_leaf[i])]
            f = float(np.clip(b0 + d.Xs[i] @ beta, -self.fit_bound[i], self.fit_bound[i]))
            m.f[i].set_value(f)
            if self.loss == "absolute":
                m.L[i].set_value(abs(f - float(d.y[i])))
        if clipped:
            warnings.warn(f"ORT-L warm start: the leaf models at heap leaves {sorted(set(clipped))} exceed the "
                          f"coefficient bounds (coef_bound={self.coef_bound:.4g}, intercept bound "
                          f"{self.intercept_bound:.4g}) and were clipped; the start's objective changed", stacklevel=2)

    def _decode(self) -> Tree:
        d, S, m = self.data, self.structure, self.model
        tree, heap, _ = S.decoded_tree(m.tree, "linear", d.p + 1, keep_unused=self.alpha > 0)
        n_nodes = tree.n_nodes
        rows_at = tree.decision_path(d.X).toarray().astype(bool)
        parent = tree.parents()
        value = np.zeros((n_nodes, d.p + 1))
        for node in range(n_nodes):      # branches and empty leaves: a constant (no penalty), the rows' mean
            rows = rows_at[:, node] if rows_at[:, node].any() or parent[node] < 0 else rows_at[:, parent[node]]
            value[node, 0] = float(np.average(d.y[rows], weights=d.sample_weight[rows])) if rows.any() else 0.0
        for node, h in enumerate(heap):
            if h >= 0 and rows_at[:, node].any():
                beta = np.zeros(d.p)
                for j in self.features:
                    beta[j] = float(pyo.value(m.beta[j, h]))
                if self.penalty == "l0":   # the solver's r decides which coefficients are zero
                    for j in self.features:
                        if pyo.value(m.r[j, h]) < 0.5:
                            beta[j] = 0.0
                value[node] = to_original_units(d, float(pyo.value(m.beta0[h])), beta)
        tree.value = value
        return tree

    def _leaf_cost(self, rows: np.ndarray, b0: float, beta: np.ndarray) -> float:
        """Leaf ``rows``' share of the objective with the model (b0, beta) on the scaled features."""
        d = self.data
        r = d.y[rows] - b0 - d.Xs[rows] @ beta
        w = d.sample_weight[rows]
        loss = float(np.sum(w * (r * r if self.loss == "squared" else np.abs(r))))
        pen = np.abs(beta).sum() if self.penalty == "l1" else float(np.count_nonzero(np.abs(beta) > 1e-9))
        return loss / self.baseline + self.leaf_penalty * pen

    def _in_model(self, rows: np.ndarray, b0: float, beta: np.ndarray) -> bool:
        """(b0, beta) is a leaf model the MIO can hold: its coefficient, intercept, budget and fit bounds."""
        tol = 1e-9
        fit = b0 + self.data.Xs[rows] @ beta
        return bool(np.all(np.abs(beta) <= self.coef_bound * (1 + tol)) and abs(b0) <= self.intercept_bound
                    and (self.budget is None or np.abs(beta).sum() <= self.budget * (1 + tol))
                    and np.all(np.abs(fit) <= self.fit_bound[rows]))

    def _best_model(self, rows: np.ndarray, b0: float, beta: np.ndarray) -> tuple[float, np.ndarray] | None:
        """The leaf model the objective defines for ``rows`` (squared loss only): the lasso (L1, by coordinate
        descent from the solver's coefficients) or least squares on the solver's support (L0); None otherwise."""
        d = self.data
        if self.loss != "squared":
            return None   # absolute loss: a linear objective, solved to LP precision (no epigraph, no refit)
        keep = np.zeros(d.p, dtype=bool)
        keep[self.features] = True
        if self.penalty == "l1":
            fit = fit_leaf(d, rows, self.leaf_penalty, self.baseline, warm=beta)
            return fit.intercept, np.where(keep, fit.coef, 0.0)
        support = np.nonzero(keep & (np.abs(beta) > 1e-9))[0]
        sw = np.sqrt(d.sample_weight[rows])
        A = np.column_stack([np.ones(len(rows)), d.Xs[rows][:, support]]) * sw[:, None]
        sol = np.linalg.lstsq(A, d.y[rows] * sw, rcond=None)[0]
        new = np.zeros(d.p)
        new[support] = sol[1:]
        return float(sol[0]), new

    def _refit_leaves(self, tree: Tree) -> Tree | None:
        """Squared loss: each leaf's model replaced by the one the objective defines for its rows (lasso for L1,
        least squares on the solver's support for L0) when that scores better and lies within the model's
        bounds (so the refit tree is a point of the MIO and its bound stays valid). The solver's leaf models
        are only as exact as its gap and its epigraph row's feasibility tolerance."""
        if self.loss != "squared":
            return None
        d = self.data
        rows_at = tree.decision_path(d.X).toarray().astype(bool)
        value = tree.value.copy()
        changed = False
        for node in tree.leaves:
            rows = np.nonzero(rows_at[:, node])[0]
            if not len(rows):
                continue
            b0, beta = to_scaled_units(d, tree.value[node])
            best = self._best_model(rows, b0, beta)
            if best is None or not self._in_model(rows, *best):
                continue
            if self._leaf_cost(rows, *best) < self._leaf_cost(rows, b0, beta):
                value[node] = to_original_units(d, *best)
                changed = True
        return dataclasses.replace(tree, value=value) if changed else None

    def extract(self, verify: bool = True) -> Tree:
        tree = super().extract(verify)
        beta = tree.value[tree.leaves, 1:] * self.data.scaling.span
        if not self.coef_bound_proven and np.any(np.abs(beta) >= self.coef_bound * (1 - 1e-6)):
            warnings.warn(f"ORT-L: a leaf coefficient reached coef_bound={self.coef_bound:.4g}; the tree is optimal "
                          "only among trees with coefficients within that bound (raise coef_bound)", stacklevel=2)
        return tree

    def tree_objective(self, tree: Tree) -> float:
        """The tree's own leaf models' loss / L̂ + α C + λ Σ ||β_t|| (scaled units), as the MIO counts it."""
        return linear_tree_objective(tree, self.data, self.alpha, self.leaf_penalty, loss=self.loss,
                                     penalty=self.penalty, refit=False, coef_tol=1e-9)
