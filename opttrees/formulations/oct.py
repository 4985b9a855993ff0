"""OCT: the Bertsimas–Dunn optimal classification tree with parallel splits, thesis model (2.24)."""
from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.common.gc_manager import PauseGC

from ..data.prepared import PreparedData
from ..errors import InputError
from ..objectives import class_counts, classification_objective, majority_label, misclassification_baseline
from ..params import check_alpha  # noqa: F401 (re-exported)
from ..tree import Tree
from .base import Formulation, leaf_size_shortfall
from .constraint_view import BDConstraintView
from .structure import BDStructure


class OCT(Formulation):
    r"""Optimal classification tree (Dunn thesis ch. 2, model (2.24)) on :class:`~opttrees.data.PreparedData`.

    Build with ``OCT(prepare(X, y), max_depth, min_samples_leaf, alpha)``, solve with
    :func:`opttrees.solvers.solve`, read the tree with :meth:`extract`. ``block=`` builds onto a block of a
    bigger model (see :mod:`opttrees.formulations.base`).

    .. math::

        \min\; & \frac{1}{\hat L} \sum_{t \in \mathcal T_L} L_t + \alpha \sum_{t \in \mathcal T_B} d_t
            && (2.23)\\
        \text{s.t.}\; & L_t \ge N_t - N_{kt} - n(1 - c_{kt}),\quad
            L_t \le N_t - N_{kt} + n\,c_{kt},\quad L_t \ge 0
            && \forall k, t \in \mathcal T_L \quad (2.20)\text{–}(2.22)\\
        & N_{kt} = \textstyle\sum_{i: y_i = k} w_i z_{it},\quad N_t = \sum_i w_i z_{it},\quad
            \sum_k c_{kt} = l_t && \forall t \in \mathcal T_L \quad (2.15), (2.16), (2.18)\\
        & \mathbf a_m^\top(\mathbf x_i + \boldsymbol\epsilon - \epsilon_{\min}) + \epsilon_{\min}
            \le b_m + (1 + \epsilon_{\max})(1 - z_{it}) && \forall i, t, m \in A_L(t) \quad (2.13)^*\\
        & \mathbf a_m^\top \mathbf x_i \ge b_m - (1 - z_{it}) && \forall i, t, m \in A_R(t) \quad (2.14)\\
        & \textstyle\sum_t z_{it} = 1,\quad z_{it} \le l_t,\quad \sum_i z_{it} \ge N_{\min} l_t
            && (2.8), (2.6), (2.7)\\
        & \textstyle\sum_j a_{jt} = d_t,\quad 0 \le b_t \le d_t,\quad d_t \le d_{p(t)}
            && \forall t \in \mathcal T_B \quad (2.2), (2.3), (2.5)\\
        & a, d, z, l, c \in \{0, 1\}

    :math:`\hat L` is the root-only (majority-class) loss, so ``alpha`` means the same as in every heuristic;
    class counts use the sample weights :math:`w_i`, the minimum leaf size counts points. (2.13)* is the
    corrected left-branch row (the thesis's is wrong at a node that does not split; see
    :mod:`opttrees.formulations.structure`).

    ``routing="thesis"`` and ``loss="thesis"`` give (2.24) literally (plus the corrected row). The defaults
    replace those rows by equivalent tighter ones with the same integer solutions: one routing row per
    (point, ancestor, side) with :math:`z` summed over the leaves on that side, and the loss as
    :math:`L_t = N_t - \sum_i w_i u_{it}` with :math:`u_{it} \le z_{it}`, :math:`u_{it} \le c_{y_i t}`. On
    iris depth 2 this took HiGHS from no bound after 400 s to a proof in 159 s (benchmarks/README.md).

    Components users can extend: ``model.tree`` (structure block: a, b, d, z, l), ``model.N``, ``model.Nk``,
    ``model.c``, ``model.L``, ``model.objective_expr`` (and ``model.objective`` on an owned model).
    """

    integer_components = ('tree.a', 'tree.d', 'tree.z', 'tree.l', 'c')
    dp_exact = True

    def __init__(self, data: PreparedData, max_depth: int = 2, min_samples_leaf: int = 1, alpha: float = 0.0,
                 routing: str = "aggregated", loss: str = "tight", block=None):
        if loss not in ("thesis", "tight"):
            raise InputError(f"loss must be 'thesis' or 'tight'; got {loss!r}")
        self.loss = loss
        if data.task != "classification":
            raise InputError("OCT needs classification data (prepare(X, y, task='classification'))")
        self.data = data
        self.alpha = check_alpha(alpha)
        self.structure = BDStructure(data, max_depth, min_samples_leaf, routing)
        self.baseline = misclassification_baseline(data.y, data.n_classes, data.sample_weight)
        self.model = self._new_block(block, "OCT")
        self._build()

    @property
    def weight_scale(self) -> float:
        """The power of two the model divides the sample weights by (their mean, rounded to a power of two): the
        model's counts stay near the row counts whatever the weights' units, so the solver's absolute tolerances
        mean the same for weights times 1e-9 or 1e9 (which gave false proofs). Exact in floating point, so the
        normalised objective is unchanged."""
        mean = float(np.mean(self.data.sample_weight)) if self.data.n else 1.0
        return float(2.0 ** round(np.log2(mean))) if mean > 0 else 1.0

    def _build(self) -> None:
        d, S, m = self.data, self.structure, self.model
        n, K, TL = d.n, d.n_classes, S.leaves
        ws = self.weight_scale
        w = (d.sample_weight / ws).tolist()
        y = d.y.tolist()
        big = float(d.sample_weight.sum() / ws)
        by_class = [[i for i in range(n) if y[i] == k] for k in range(K)]
        with PauseGC():
            m.tree = pyo.Block()
            S.build(m.tree)
            z = m.tree.z
            m.Nk = pyo.Var(range(K), TL, domain=pyo.NonNegativeReals)
            m.N = pyo.Var(TL, domain=pyo.NonNegativeReals)
            m.c = pyo.Var(range(K), TL, domain=pyo.Binary)
            m.L = pyo.Var(TL, domain=pyo.NonNegativeReals)
            m.class_count = pyo.Constraint(range(K), TL, rule=lambda m, k, t:
                                           m.Nk[k, t] == sum(w[i] * z[i, t] for i in by_class[k]))
            m.leaf_count = pyo.Constraint(TL, rule=lambda m, t: m.N[t] == sum(w[i] * z[i, t] for i in range(n)))
            m.one_label = pyo.Constraint(TL, rule=lambda m, t: sum(m.c[k, t] for k in range(K)) == m.tree.l[t])
            if self.loss == "thesis":  # (2.20)-(2.21)
                m.loss_lower = pyo.Constraint(range(K), TL, rule=lambda m, k, t:
                                              m.L[t] >= m.N[t] - m.Nk[k, t] - big * (1 - m.c[k, t]))
                m.loss_upper = pyo.Constraint(range(K), TL, rule=lambda m, k, t:
                                              m.L[t] <= m.N[t] - m.Nk[k, t] + big * m.c[k, t])
            else:
                # u[i,t] = 1 iff point i is in leaf t and t predicts y_i; L_t = N_t - sum_i w_i u_it.
                # Same integer solutions, far tighter LP than the big-M rows.
                m.u = pyo.Var(range(n), TL, domain=pyo.NonNegativeReals, bounds=(0, 1))
                m.u_in_leaf = pyo.Constraint(range(n), TL, rule=lambda m, i, t: m.u[i, t] <= z[i, t])
                m.u_label = pyo.Constraint(range(n), TL, rule=lambda m, i, t: m.u[i, t] <= m.c[y[i], t])
                m.loss_def = pyo.Constraint(TL, rule=lambda m, t:
                                            m.L[t] == m.N[t] - sum(w[i] * m.u[i, t] for i in range(n)))
            self._set_objective((ws / self.baseline) * sum(m.L[t] for t in TL)
                                + self.alpha * sum(m.tree.d[t] for t in S.branch), pyo.minimize)

    # ------------------------------------------------------------------ Tree <-> model
    def _warm_start(self, tree: Tree) -> None:
        """Set every variable from ``tree`` (any parallel-split classification tree of depth <= D)."""
        if tree.task != "classification":
            raise InputError("OCT warm start needs a classification tree")
        d, S, m = self.data, self.structure, self.model
        tree, heap_leaf, node_of_heap = S.set_from_tree(m.tree, tree)
        K = d.n_classes
        counts = class_counts(heap_leaf - 2 ** S.D, d.y, K, len(S.leaves), d.sample_weight) / self.weight_scale
        for k_t, t in enumerate(S.leaves):
            used = (heap_leaf == t).any()
            lab = int(tree._labels()[node_of_heap[t]]) if used else -1
            for k in range(K):
                m.Nk[k, t].set_value(float(counts[k_t, k]))
                m.c[k, t].set_value(int(k == lab))
            m.N[t].set_value(float(counts[k_t].sum()))
            m.L[t].set_value(float(counts[k_t].sum() - counts[k_t, lab]) if used else 0.0)
        if self.loss == "tight":
            for i in range(d.n):
                h = heap_leaf[i]
                lab = int(tree._labels()[node_of_heap[h]])
                for t in S.leaves:
                    m.u[i, t].set_value(float(t == h and d.y[i] == lab))

    def _decode(self) -> Tree:
        d, S, m = self.data, self.structure, self.model
        splits, heap_leaf = S.decode(m.tree)
        cl, cr, feat, thr, heap = S.skeleton(splits)
        sub, label = self._leaf_labels(cl, cr, heap, heap_leaf)
        return Tree(np.asarray(cl), np.asarray(cr), np.asarray(feat), np.asarray(thr), sub, task="classification",
                    label=label, classes=list(d.class_labels()), feature_names=d.feature_names, n_features=d.p)

    def _leaf_labels(self, cl, cr, heap, heap_leaf) -> tuple[np.ndarray, np.ndarray]:
        """Per-node class counts (a branch: its subtree's) and labels of a decoded layout (OCT and OCT-H share it).

        A leaf takes the model's class where the model marks it used, else its majority; an empty leaf its
        parent's majority class. ``heap[node]`` is the node's heap leaf (-1 for a branch).
        """
        d, m = self.data, self.model
        n_nodes, K = len(cl), d.n_classes
        node_of_point = np.zeros(d.n, dtype=np.int64)
        for node, h in enumerate(heap):
            if h >= 0:
                node_of_point[heap_leaf == h] = node
        counts = class_counts(node_of_point, d.y, K, n_nodes, d.sample_weight)
        label = majority_label(counts)
        for node, h in enumerate(heap):
            if h >= 0 and pyo.value(m.tree.l[h]) > 0.5:
                label[node] = int(np.argmax([pyo.value(m.c[k, h]) for k in range(K)]))
        sub = counts.copy()
        for node in range(n_nodes - 1, -1, -1):
            if cl[node] >= 0:
                sub[node] = sub[cl[node]] + sub[cr[node]]
        parent = {c: p for p in range(n_nodes) for c in (cl[p], cr[p]) if c >= 0}
        for node in range(n_nodes):
            if heap[node] >= 0 and counts[node].sum() == 0 and node in parent:
                label[node] = int(majority_label(sub[parent[node]]))
        return sub, label

    def tree_objective(self, tree: Tree) -> float:
        d = self.data
        return classification_objective(tree, d.X, d.y, d.n_classes, self.alpha, self.baseline, d.sample_weight)

    # ------------------------------------------------------------------ what the model says of itself
    def constraint_view(self):
        """Side constraints read the Bertsimas–Dunn block (parallel splits)."""
        return self._view_of(BDConstraintView)

    def dp_relaxation(self):
        """Misclassification over every midpoint of the training features, with OCT's depth, ``alpha``, minimum
        leaf size and sample weights: the MIO splits at any threshold of the scaled features, which realises
        exactly the partitions of those midpoints (scaling is monotone)."""
        common = self._relaxation_common(OCT)
        if common is None:
            return None
        from ..dp.relaxation import OCTRelaxation

        d = self.data
        return OCTRelaxation(**common, X=d.X, y=d.y, sample_weight=d.sample_weight, classes=list(d.codec.classes),
                             min_samples_leaf=int(self.structure.min_samples_leaf), alpha=float(self.alpha),
                             baseline=float(self.baseline), feature_names=list(d.feature_names))

    def _solution_objective(self) -> tuple[float | None, str]:
        """The loaded solution's tree: routed as the model assigned it, leaves at least min_samples_leaf."""
        S = self.structure
        splits, heap_leaf = S.decode(self.model.tree)
        heap = np.asarray(S.skeleton(splits)[4])
        tree = self._decode()
        node = tree.apply(self.data.X)
        if not np.array_equal(heap[node], heap_leaf):
            return None, "the tree routes the training data differently from the model's leaf assignment"
        reason = leaf_size_shortfall(tree, node, np.ones(len(node)), S.min_samples_leaf, "rows")
        return (None, reason) if reason else (self.tree_objective(tree), "")
