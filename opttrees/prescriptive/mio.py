r"""MIO for OPT with constant counterfactuals (thesis (6.5)). **Not in the thesis**: our own design
(docs/design-notes.md §4), with its quadratic rows moved into the objective so that the model is a
convex MIQP that :func:`opttrees.solvers.solve` hands to SCIP (HiGHS cannot take a quadratic objective with
integers).

On the Bertsimas–Dunn tree block (:class:`opttrees.formulations.structure.BDStructure`: a, b, d, z, l), with the
centred internal outcome y (see :mod:`opttrees.prescriptive.objective`), observed treatment w_i, Δ = max y - min y:

.. math::

    \min\; & \tfrac{1}{\hat L}\Big(a \sum_i r_i + b \sum_i e_i^2\Big)
        + \alpha \sum_{t \in \mathcal T_B} d_t \\
    \text{s.t.}\; & y_{\min} z_{it} \le u_{it} \le y_{\max} z_{it},\;\;
        \beta_{t w_i} - y_{\max}(1 - z_{it}) \le u_{it} \le \beta_{t w_i} - y_{\min}(1 - z_{it})
        && u_{it} = \beta_{t w_i} z_{it}\\
    & \textstyle\sum_{i: w_i = s} (u_{it} - y_i z_{it}) = 0 && \beta_{ts} = \text{mean of } s \text{ in } t\ (6.4)\\
    & \textstyle\sum_s \pi_{ts} = l_t,\;\; \sum_{i: w_i = s} z_{it} \ge n_{\text{treatment}}\, \pi_{ts}
        && \text{one eligible prescription per used leaf}\\
    & r_i \ge \beta_{ts} - \Delta (2 - z_{it} - \pi_{ts}),\;\; r_i \ge y_{\min}
        && r_i = \beta_{\ell(i), \tau(\ell(i))}\\
    & e_i = y_i - \textstyle\sum_t u_{it} && \text{the observed arm's residual}\\
    & \beta_{ts} \in [y_{\min}, y_{\max}],\; \pi \in \{0, 1\}

With a = mu·s and b = 1 - mu, :math:`\sum_i r_i` is the prescription total (Σ over leaves of N·ȳ_τ)
and the squared sum the within-(leaf, treatment) SSE, so the objective is exactly
:func:`~opttrees.prescriptive.objective.tree_objective`. The MIO may leave a leaf empty (l_t = 0, the tree block's
semantics) where the local search and DP would not split: the decoder collapses such splits, and the check
``extract()`` makes allows for the alpha they cost in the model. Size: O(n 2^D m) rows; tiny data only.
"""
from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.common.gc_manager import PauseGC

from ..errors import InputError
from ..formulations.base import VERIFY_ATOL, VERIFY_RTOL, Formulation, mismatch, reconcile
from ..formulations.structure import BDStructure
from ..params import check_alpha
from ..tree import Tree
from .objective import KIND_OPT, PrescriptiveProblem, fill_payload, tree_objective


class OPTFormulation(Formulation):
    """The OPT MIO above on a :class:`PrescriptiveProblem` of kind OPT; ``model.tree`` is the structure block,
    ``model.beta``, ``model.pi``, ``model.u``, ``model.r`` the prescription variables, ``model.res`` the residuals."""

    def __init__(self, prob: PrescriptiveProblem, max_depth: int = 2, alpha: float = 0.0, block=None):
        if prob.kind != KIND_OPT:
            raise InputError("the OPT MIO models constant counterfactuals (kind OPT) only")
        self.prob = prob
        self.alpha = check_alpha(alpha)
        self.structure = BDStructure(prob.data, max_depth, prob.min_samples_leaf, "aggregated")
        self.model = self._new_block(block, "OPT")
        self._build()

    def _build(self) -> None:
        P, S, m = self.prob, self.structure, self.model
        d = P.data
        n, K, TL = d.n, P.m, S.leaves
        y = (d.y - d.ybar).tolist()
        lo, hi = min(y), max(y)
        delta = hi - lo
        w = d.treatment.tolist()
        rows_of = [[i for i in range(n) if w[i] == s] for s in range(K)]
        nt = max(1, P.n_treatment)
        with PauseGC():
            m.tree = pyo.Block()
            S.build(m.tree)
            z = m.tree.z
            m.beta = pyo.Var(TL, range(K), bounds=(lo, hi))
            m.pi = pyo.Var(TL, range(K), domain=pyo.Binary)
            m.u = pyo.Var(range(n), TL, bounds=(min(lo, 0.0), max(hi, 0.0)))
            m.r = pyo.Var(range(n), bounds=(lo, hi))
            m.u_lo = pyo.Constraint(range(n), TL, rule=lambda m, i, t: m.u[i, t] >= lo * z[i, t])
            m.u_hi = pyo.Constraint(range(n), TL, rule=lambda m, i, t: m.u[i, t] <= hi * z[i, t])
            m.u_beta_lo = pyo.Constraint(range(n), TL, rule=lambda m, i, t:
                                         m.u[i, t] >= m.beta[t, w[i]] - hi * (1 - z[i, t]))
            m.u_beta_hi = pyo.Constraint(range(n), TL, rule=lambda m, i, t:
                                         m.u[i, t] <= m.beta[t, w[i]] - lo * (1 - z[i, t]))
            m.mean_pin = pyo.Constraint(TL, range(K), rule=lambda m, t, s:
                                        sum(m.u[i, t] - y[i] * z[i, t] for i in rows_of[s]) == 0)
            m.one_prescription = pyo.Constraint(TL, rule=lambda m, t: sum(m.pi[t, s] for s in range(K)) == m.tree.l[t])
            m.eligible = pyo.Constraint(TL, range(K), rule=lambda m, t, s:
                                        sum(z[i, t] for i in rows_of[s]) >= nt * m.pi[t, s])
            m.prescribed = pyo.Constraint(range(n), TL, range(K), rule=lambda m, i, t, s:
                                          m.r[i] >= m.beta[t, s] - delta * (2 - z[i, t] - m.pi[t, s]))
            m.res = pyo.Var(range(n), bounds=(-delta, delta))
            m.residual = pyo.Constraint(range(n), rule=lambda m, i: m.res[i] == y[i] - sum(m.u[i, t] for t in TL))
            presc = sum(m.r[i] for i in range(n))
            pred = sum(m.res[i] ** 2 for i in range(n))   # one variable squared: see the report on compile.py
            self._set_objective((P.a * presc + P.b * pred) / P.baseline
                                + self.alpha * sum(m.tree.d[t] for t in S.branch), pyo.minimize)

    # ------------------------------------------------------------------ Tree <-> model
    def _warm_start(self, tree: Tree) -> None:
        """Set every variable from a prescription tree of depth <= D whose leaves are all feasible."""
        P, S, m = self.prob, self.structure, self.model
        d = P.data
        tree, heap_leaf, node_of_heap = S.set_from_tree(m.tree, tree)
        tree = fill_payload(tree, P)
        yc = d.y - d.ybar
        K = P.m
        beta = np.zeros((len(S.leaves), K))
        for k_t, t in enumerate(S.leaves):
            rows = heap_leaf == t
            lab = int(tree._labels()[node_of_heap[t]]) if rows.any() else -1
            for s in range(K):
                sel = rows & (d.treatment == s)
                beta[k_t, s] = yc[sel].mean() if sel.any() else 0.0
                m.beta[t, s].set_value(float(beta[k_t, s]))
                m.pi[t, s].set_value(int(s == lab))
        k_of = heap_leaf - 2 ** S.D
        for i in range(d.n):
            for t in S.leaves:
                m.u[i, t].set_value(float(beta[t - 2 ** S.D, d.treatment[i]]) if t == heap_leaf[i] else 0.0)
            lab = int(tree._labels()[node_of_heap[heap_leaf[i]]])
            m.r[i].set_value(float(beta[k_of[i], lab]))
            m.res[i].set_value(float(yc[i] - beta[k_of[i], d.treatment[i]]))

    def _decode(self) -> Tree:
        P, S, m = self.prob, self.structure, self.model
        splits, _ = S.decode(m.tree)
        cl, cr, feat, thr, _ = S.skeleton(splits)
        n_nodes = len(cl)
        tree = Tree(np.asarray(cl), np.asarray(cr), np.asarray(feat), np.asarray(thr), np.zeros((n_nodes, P.m)),
                    task="prescription",
                    label=np.zeros(n_nodes, np.int64), classes=list(P.data.classes),
                    feature_names=list(P.data.feature_names), n_features=P.data.p)
        self._model_splits = tree.n_splits
        return fill_payload(S.normalise(tree), P)   # splits with an empty side collapse (the MIO's empty leaves)

    def tree_objective(self, tree: Tree) -> float:
        return tree_objective(tree, self.prob, self.alpha)

    def extract(self, verify: bool = True) -> Tree:
        tree = self._decode()
        if verify:
            solver_obj = self.model_objective()
            # a collapsed split still costs alpha in the model's objective
            routed = self.tree_objective(tree) + self.alpha * (self._model_splits - tree.n_splits)
            if abs(solver_obj - routed) > VERIFY_ATOL + VERIFY_RTOL * abs(solver_obj):
                mismatch(self, f"the decoded tree's objective {routed:.9g} (training data re-routed) differs from "
                               f"the solver's {solver_obj:.9g}")
            reconcile(self, self.tree_objective(tree))
        return tree
