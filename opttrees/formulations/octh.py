"""OCT-H: the Bertsimas–Dunn optimal classification tree with hyperplane splits, thesis model (3.3)."""
from __future__ import annotations

import warnings

import numpy as np

from ..data.prepared import PreparedData
from ..errors import InputError
from ..params import check_alpha
from ..objectives import class_counts, majority_label, misclassification_baseline, node_losses, tree_objective
from ..tree import Tree
from .oct import OCT
from .structure import DEFAULT_MARGIN, HyperplaneStructure


class OCTH(OCT):
    r"""Optimal classification tree with hyperplane splits (Dunn thesis ch. 3, model (3.3)).

    Build with ``OCTH(prepare(X, y), max_depth, min_samples_leaf, alpha, margin)``, solve with
    :func:`opttrees.solvers.solve`, read the tree with :meth:`extract` (splits in the user's original units).
    The loss block is OCT's (:class:`~opttrees.formulations.oct.OCT`, same ``loss`` and ``routing`` options);
    the tree block is :class:`~opttrees.formulations.structure.HyperplaneStructure` on the min-max scaled
    features.

    .. math::

        \min\; & \frac{1}{\hat L} \sum_{t \in \mathcal T_L} L_t
            + \alpha \sum_{t \in \mathcal T_B} \sum_j s_{jt} && (3.3)\\
        \text{s.t.}\; & \text{the loss rows of (2.24)} && (2.15)\text{–}(2.22)\\
        & \mathbf a_m^\top \mathbf x_i + \mu \le b_m + (2 + \mu)(1 - z_{it})
            && \forall i, t, m \in A_L(t)\\
        & \mathbf a_m^\top \mathbf x_i \ge b_m - 2(1 - z_{it}) && \forall i, t, m \in A_R(t)\\
        & \textstyle\sum_t z_{it} = 1,\quad z_{it} \le l_t,\quad \sum_i z_{it} \ge N_{\min} l_t
            && (2.8), (2.6), (2.7)\\
        & \textstyle\sum_j \hat a_{jt} \le d_t,\quad \hat a_{jt} \ge a_{jt},\quad \hat a_{jt} \ge -a_{jt}
            && \forall t \in \mathcal T_B\\
        & -s_{jt} \le a_{jt} \le s_{jt},\quad s_{jt} \le d_t,\quad \textstyle\sum_j s_{jt} \ge d_t
            && \forall j, t \in \mathcal T_B\\
        & -d_t \le b_t \le d_t,\quad d_t \le d_{p(t)} && \forall t \in \mathcal T_B\\
        & a_{jt} \in [-1, 1],\; s, d, z, l, c \in \{0, 1\}

    The complexity is the number of non-zero coefficients (sparse hyperplanes are rewarded; a parallel split
    costs 1, as in OCT). ``margin`` is the thesis's fixed :math:`\mu` = 0.005 in scaled units: the MIO only
    sees splits that keep every training point at least mu on the left of the hyperplane (with
    :math:`\sum_j |a_j| \le 1`), so it can miss a near-degenerate split the local search finds.

    **Warm starts** (:meth:`warm_start`) go through :meth:`feasible_start`: every split keeps its partition
    of the training rows, re-centred in the band the margin allows, or rotated (same features, same signs)
    by a small linear program to widen it; a split that cannot be widened to mu is replaced by the cheapest
    of a leaf, its left or right subtree, or the same hyperplane moved to the nearest gap of at least mu,
    with a warning giving the old and new objective (:meth:`HyperplaneStructure.fit_margin`). Then the start
    has exactly the local search's objective when no split changed, and the adjusted tree's otherwise.

    Components users can extend: ``model.tree`` (a, a_abs, s, b, d, z, l), ``model.N``, ``model.Nk``,
    ``model.c``, ``model.L``, ``model.objective_expr`` (and ``model.objective`` on an owned model).
    """

    structure: HyperplaneStructure

    def __init__(self, data: PreparedData, max_depth: int = 2, min_samples_leaf: int = 1, alpha: float = 0.0,
                 margin: float = DEFAULT_MARGIN, routing: str = "aggregated", loss: str = "tight", block=None):
        if loss not in ("thesis", "tight"):
            raise InputError(f"loss must be 'thesis' or 'tight'; got {loss!r}")
        if data.task != "classification":
            raise InputError("OCTH needs classification data (prepare(X, y, task='classification'))")
        self.loss = loss
        self.data = data
        self.alpha = check_alpha(alpha)
        self.structure = HyperplaneStructure(data, max_depth, min_samples_leaf, routing, margin)
        self.baseline = misclassification_baseline(data.y, data.n_classes, data.sample_weight)
        self.start_notes: list[str] = []
        self.model = self._new_block(block, "OCTH")
        self._build()

    @property
    def margin(self) -> float:
        return self.structure.margin

    def _set_objective(self, expr, sense: int) -> None:
        # OCT's _build passes loss / L̂ + alpha * (number of splits); OCT-H charges alpha per coefficient
        m = self.model
        super()._set_objective((self.weight_scale / self.baseline) * sum(m.L[t] for t in self.structure.leaves)
                               + self.alpha * self.structure.complexity(m.tree), sense)

    # ------------------------------------------------------------------ Tree <-> model
    def feasible_start(self, tree: Tree) -> Tree:
        """``tree`` with every split in a form the MIO accepts (see the class docstring); warns on changes."""
        if tree.task != "classification":
            raise InputError("OCTH warm start needs a classification tree")
        d = self.data

        def leaf_cost(rows):
            return float(node_losses(np.zeros(len(rows), dtype=np.int64), d.y[rows], 1, "misclassification",
                                     d.n_classes, d.sample_weight[rows])[0]) if len(rows) else 0.0

        fitted, notes = self.structure.fit_margin(tree, leaf_cost, self.alpha * self.baseline)
        self.start_notes = notes
        if notes:
            counts = class_counts(fitted.apply(d.X), d.y, d.n_classes, fitted.n_nodes, d.sample_weight)
            fitted.value, fitted.label = counts, majority_label(counts)
            warnings.warn(f"OCTH warm start: {'; '.join(notes)}; start objective {self.tree_objective(tree):.6g} -> "
                          f"{self.tree_objective(fitted):.6g}", stacklevel=3)
        return fitted

    def _warm_start(self, tree: Tree) -> None:
        """Set every variable from ``tree`` (parallel or hyperplane classification tree of depth <= D), after
        :meth:`feasible_start`."""
        super()._warm_start(self.feasible_start(tree))

    def constraint_view(self):
        """None: the side constraints' rows are written for parallel splits (OCT's block), not hyperplanes."""
        return None

    def dp_relaxation(self):
        """None: the DP searches parallel splits, a subset of OCT-H's hyperplanes (its optimum bounds nothing)."""
        return None

    def _decode(self) -> Tree:
        d, S, m = self.data, self.structure, self.model
        splits, heap_leaf = S.decode(m.tree, keep_unused=self.alpha > 0)
        cl, cr, feat, thr, coef, heap = S.layout(splits)
        sub, label = self._leaf_labels(cl, cr, heap, heap_leaf)
        hyper = any(f < 0 and cl[k] >= 0 for k, f in enumerate(feat))
        return Tree(np.asarray(cl), np.asarray(cr), np.asarray(feat), np.asarray(thr), sub, task="classification",
                    label=label, coef=np.array(coef) if hyper else None, classes=list(d.class_labels()),
                    feature_names=d.feature_names, n_features=d.p)

    def tree_objective(self, tree: Tree) -> float:
        """Misclassification of the tree's own labels / L̂ + alpha * (number of non-zero coefficients)."""
        d = self.data
        return tree_objective(tree, d.X, d.y, "misclassification", self.alpha, d.n_classes, self.baseline,
                              d.sample_weight, refit_leaves=False)
