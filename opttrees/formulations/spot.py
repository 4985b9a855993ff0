"""The SPOT MILP (Elmachtoub, Liang, McNellis 2020, Theorem 2) on the Bertsimas–Dunn tree shared with OCT.

The model is written out in :class:`SPOTFormulation`'s docstring. At any integer point its objective is the
SPOT objective of :mod:`opttrees.spo.objective` — training **normalised** SPO loss + alpha · splits — the
function greedy pruning (:func:`opttrees.spo.prune_alpha`) minimises too; ``alpha`` is thus on the normalised
scale: a split must lower the training regret by ``alpha · N``. The reference code's pooling parameter α_p
(``Σy − Σz* + α_p·n·Σd``, mean-regret units, 1e-4 for shortest path) is ``alpha · N / Σω``; see
:func:`opttrees.spo.alpha_from_paper`.

Costs are in min-cost form (sign·c, so maximisation problems work unchanged). Per-row big-Ms come from the
oracle: M1_i = max(0, max_S c_i·w), M2_i = max(0, −min_S c_i·w). w is continuous when S has an integral LP
description (shortest path); otherwise S's own integer variables carry over.

The greedy tree is a complete warm start: a, b, d, z, l from the structure, w_t = the greedy leaf decision,
y from the first row. The estimator layer (:func:`opttrees.estimators.spot_mio.fit_spot_mio`) runs the MILP
as a time-limited improver of the greedy tree.
"""
from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from ..data.prepared import PreparedData
from ..errors import InputError
from ..spo.objective import spot_norm, spot_objective
from ..spo.pruning import refit_nodes
from ..tree import Tree
from .base import VERIFY_ATOL, VERIFY_RTOL, Formulation, leaf_size_shortfall, mismatch
from .structure import BDStructure


class SPOTFormulation(Formulation):
    r"""The SPOT MILP (SPOT paper Theorem 2, model (6)) on :class:`~opttrees.data.PreparedData` with costs.

    Build with ``SPOTFormulation(prepare_costs(problem, X, C, w), problem, max_depth, min_samples_leaf, alpha)``;
    ``problem`` is the :class:`~opttrees.oracles.DecisionProblem` whose feasible region S is copied into
    every leaf. The tree encoding is the paper's Appendix C (its equations (7b)–(7l), recovered from the
    authors' code: docs/design-notes.md §4) with Bertsimas–Dunn's non-splitting convention and the
    corrected left row of :class:`~opttrees.formulations.structure.BDStructure`:

    .. math::

        \min\; & \frac{1}{N} \Big(\sum_i \omega_i \sum_{t \in \mathcal T_L} y_{it} - \sum_i \omega_i z^*(c_i)\Big)
            + \alpha \sum_{m \in \mathcal T_B} d_m,\qquad N = \sum_i \omega_i |z^*(c_i)| && (6)\\
        \text{s.t.}\; & y_{it} \ge c_i^\top w_t - M_{1,i} (1 - z_{it}) && \forall i, t \quad (7b)\\
        & y_{it} \ge -M_{2,i}\, z_{it} && \forall i, t \quad (6)\\
        & w_t \in S && \forall t \in \mathcal T_L \quad (7c)\\
        & \textstyle\sum_t z_{it} = 1,\quad z_{it} \le l_t,\quad \sum_i \omega_i z_{it} \ge N_{\min} l_t
            && (7d), (7e), (7f)\\
        & \mathbf a_m^\top \mathbf x_i \ge b_m - (1 - z_{it}) && \forall i, t, m \in A_R(t) \quad (7g)\\
        & \mathbf a_m^\top(\mathbf x_i + \boldsymbol\epsilon - \epsilon_{\min}) + \epsilon_{\min}
            \le b_m + (1 + \epsilon_{\max})(1 - z_{it}) && \forall i, t, m \in A_L(t) \quad (7h)^*\\
        & \textstyle\sum_p a_{pm} = d_m,\quad 0 \le b_m \le d_m,\quad d_m \le d_{p(m)}
            && (7i), (7j)^*, (7k)\\
        & \textstyle\sum_t y_{it} \ge z^*(c_i) && \forall i \quad (7l), \text{ optional}\\
        & a, d, z, l \in \{0, 1\}

    :math:`M_{1,i} = \max(0, \max_{w \in S} c_i^\top w)`, :math:`M_{2,i} = \max(0, -\min_{w \in S} c_i^\top w)`
    (per row, tighter than the paper's global ones). (7j)* is Bertsimas–Dunn's :math:`b_m \le d_m` (a
    non-splitting node sends every point right) instead of the code's :math:`b_m \ge 1 - d_m`; (7h)* is the
    corrected left row. Components: ``model.tree`` (a, b, d, z, l), ``model.leaf[t]`` (the copies of S),
    ``model.y``, ``model.cost_link``, ``model.cost_floor``, ``model.regret_nonneg``, ``model.objective_expr``.
    """

    integer_components = ('tree.a', 'tree.d', 'tree.z', 'tree.l')
    inactive_by_design = ('tree.min_leaf',)
    dp_exact = True

    def __init__(self, data: PreparedData, problem, max_depth: int = 2, min_samples_leaf: float = 1,
                 alpha: float = 1e-4, valid_inequality: bool = True, routing: str = "thesis", block=None):
        if not isinstance(data, PreparedData) or "costs" not in data.extra:
            raise InputError("SPOTFormulation needs SPO data with costs: prepare_costs(problem, X, C, sample_weight)")
        if not alpha >= 0:
            raise InputError(f"alpha must be >= 0; got {alpha!r}")
        C = data.extra["costs"]
        if C.ndim != 2 or C.shape != (data.n, problem.n_decisions):
            raise InputError(f"costs must have shape (n, {problem.n_decisions}) = ({data.n}, {problem.n_decisions});"
                             f" got {C.shape} (build the data with prepare_costs for this problem)")
        self.problem = problem
        self.data = data
        self.C = C
        self.Cm = problem.sign * C
        self.w = data.sample_weight
        self.alpha = float(alpha)
        self.min_samples_leaf = float(min_samples_leaf)
        self.feature_names = data.feature_names
        self.structure = BDStructure(data, max_depth, min_samples_leaf=1, routing=routing)
        lo, hi = problem.cost_bounds(C)          # min / max of sign*c_i·w over S
        self.zstar = lo
        self.M1 = np.maximum(hi, 0.0)
        self.M2 = np.maximum(-lo, 0.0)
        self.norm = spot_norm(problem, C, self.w, z=lo)   # N of the SPOT objective
        self.model = self._new_block(block, "SPOT")
        self._build(valid_inequality)

    # ------------------------------------------------------------------ model
    def _build(self, valid_inequality):
        st, n, d, m = self.structure, self.data.n, self.problem.n_decisions, self.model
        TL = st.leaves
        m.tree = pyo.Block()
        st.build(m.tree)
        # weighted minimum leaf size replaces the structure's unit-count row
        m.tree.min_leaf.deactivate()
        wl = self.w.tolist()
        m.min_leaf_weight = pyo.Constraint(TL, rule=lambda mm, t: LinearExpression(
            constant=0.0, linear_coefs=wl + [-self.min_samples_leaf],
            linear_vars=[mm.tree.z[i, t] for i in range(n)] + [mm.tree.l[t]]) >= 0)
        m.leaf = pyo.Block(TL)
        self.dec = {}
        for t in TL:
            vars_ = list(self.problem.add_to_block(m.leaf[t]))
            if len(vars_) != d:
                raise InputError(f"decision problem add_to_block returned {len(vars_)} variables, expected {d}")
            self.dec[t] = vars_
        m.y = pyo.Var(range(n), TL)
        for i in range(n):
            for t in TL:
                m.y[i, t].setlb(-float(self.M2[i]))
        Cl = self.Cm.tolist()
        M1 = self.M1.tolist()
        M2 = self.M2.tolist()
        m.cost_link = pyo.Constraint(range(n), TL, rule=lambda mm, i, t: LinearExpression(
            constant=0.0, linear_coefs=Cl[i] + [-1.0, M1[i]],
            linear_vars=self.dec[t] + [mm.y[i, t], mm.tree.z[i, t]]) <= M1[i])
        m.cost_floor = pyo.Constraint(range(n), TL, rule=lambda mm, i, t: LinearExpression(
            constant=0.0, linear_coefs=[1.0, M2[i]], linear_vars=[mm.y[i, t], mm.tree.z[i, t]]) >= 0.0)
        if valid_inequality:
            zs = self.zstar.tolist()
            m.regret_nonneg = pyo.Constraint(range(n), rule=lambda mm, i: sum(mm.y[i, t] for t in TL) >= zs[i])
        wn = (self.w / self.norm).tolist()
        const = -float(self.w @ self.zstar) / self.norm
        self._set_objective(LinearExpression(
            constant=const, linear_coefs=[wn[i] for i in range(n) for t in TL] + [self.alpha] * len(st.branch),
            linear_vars=[m.y[i, t] for i in range(n) for t in TL] + [m.tree.d[t] for t in st.branch]),
            pyo.minimize)

    # ------------------------------------------------------------------ objective helpers
    def tree_objective(self, tree: Tree, decisions=None) -> float:
        """SPOT objective of ``tree`` on this model's training data: normalised SPO loss + alpha·splits.

        Uses the tree's leaf decisions, or ``decisions[node]``; the same function as
        :func:`opttrees.spo.spot_objective` (it *is* that function, with this model's N and z*).
        """
        return spot_objective(self.problem, tree, self.data.X, self.C, self.w, alpha=self.alpha,
                              decisions=decisions, norm=self.norm, z=self.zstar)

    # ------------------------------------------------------------------ warm start
    def _warm_start(self, tree: Tree) -> None:
        """Set every variable from a greedy (or any) SPO tree of depth <= max_depth."""
        m, st = self.model, self.structure
        tree = refit_nodes(tree, self.problem, self.data.X, self.C, self.w)
        ntree, heap_leaf, tree_leaf_of_heap = st.set_from_tree(m.tree, tree)
        fallback = ntree.extras["decision"][0]
        Wt = {}
        for t in st.leaves:
            node = tree_leaf_of_heap.get(t)
            Wt[t] = ntree.extras["decision"][node] if node is not None else fallback
            for v, val in zip(self.dec[t], Wt[t]):
                v.set_value(_clip_to_bounds(v, float(val)))
        for i in range(self.data.n):
            for t in st.leaves:
                y = m.y[i, t]
                y.set_value(_clip_to_bounds(y, float(self.Cm[i] @ Wt[t]) if heap_leaf[i] == t else 0.0))
        # a problem block may carry auxiliary variables we cannot infer; the solver completes the start
        self.start_objective = self.tree_objective(ntree)

    # ------------------------------------------------------------------ decoding
    def _decode_raw(self):
        st = self.structure
        splits, heap_leaf = st.decode(self.model.tree)
        cl, cr, feat, thr, heap = st.skeleton(splits)
        nn = len(cl)
        Wsol = np.zeros((nn, self.problem.n_decisions))
        for k in range(nn):
            if heap[k] >= 0:
                Wsol[k] = [pyo.value(v) for v in self.dec[heap[k]]]
        skel = Tree(cl, cr, feat, thr, np.zeros((nn, self.problem.n_decisions)), task="spo",
                    feature_names=self.feature_names, n_features=self.data.p,
                    extras={"decision": Wsol, "heap_leaf": np.array(heap)})
        return skel, heap_leaf, Wsol

    # ------------------------------------------------------------------ what the model says of itself
    def dp_relaxation(self):
        """The normalised SPO loss over every midpoint of the features the MILP sees (its ``data.X``), with the
        same ``alpha``, normalisation and row weights; the leaf weight at least ``min_samples_leaf``."""
        common = self._relaxation_common(SPOTFormulation)
        if common is None:
            return None
        from ..dp.relaxation import SPOTRelaxation

        return SPOTRelaxation(**common, X=self.data.X, costs=self.C, problem=self.problem, weights=self.w,
                              min_leaf_weight=float(self.min_samples_leaf), alpha=float(self.alpha),
                              feature_names=self.data.feature_names)

    def _solution_objective(self) -> tuple[float | None, str]:
        """The loaded solution's tree with the MILP's own leaf decisions, routed as the model assigned it."""
        skel, heap_leaf, Wsol = self._decode_raw()
        node = skel.apply(self.data.X)
        if not np.array_equal(skel.extras["heap_leaf"][node], heap_leaf):
            return None, "the tree routes the training data differently from the model's leaf assignment"
        reason = leaf_size_shortfall(skel, node, np.asarray(self.w, float), self.min_samples_leaf, "weight")
        return (None, reason) if reason else (self.tree_objective(skel, decisions=Wsol), "")

    def _decode(self) -> Tree:
        skel, _, _ = self._decode_raw()
        return refit_nodes(skel, self.problem, self.data.X, self.C, self.w)

    def verify(self, tree: Tree | None = None) -> None:
        """Routing the training data reproduces the MILP's leaf assignment and objective (with its own w)."""
        skel, heap_leaf, Wsol = self._decode_raw()
        routed = skel.extras["heap_leaf"][skel.apply(self.data.X)]
        bad = np.nonzero(routed != heap_leaf)[0]
        if len(bad):
            mismatch(self, f"{len(bad)} training points are routed to a different leaf than the solver assigned "
                           f"(first: row {bad[0]})")
            return
        solver_obj = self.model_objective()
        recomputed = self.tree_objective(skel, decisions=Wsol)
        if abs(solver_obj - recomputed) > VERIFY_ATOL + VERIFY_RTOL * abs(solver_obj):
            mismatch(self, f"re-routed objective {recomputed:.9g} differs from the solver's {solver_obj:.9g}")
        elif tree is not None and self.tree_objective(tree) > solver_obj + VERIFY_ATOL + VERIFY_RTOL * abs(solver_obj):
            mismatch(self, "refitted leaf decisions are worse than the solver's")

    def extract(self, verify: bool = True) -> Tree:
        tree = self._decode()
        if verify:
            self.verify(tree)
        return tree


def _clip_to_bounds(var, value: float) -> float:
    """Round-off can put a start value a hair outside its big-M bound; Pyomo would warn and solvers reject it."""
    if var.lb is not None and value < var.lb:
        return float(var.lb)
    if var.ub is not None and value > var.ub:
        return float(var.ub)
    return value
