"""What side constraints (:mod:`opttrees.constraints`) read of a formulation: its constraint view.

A formulation that takes side constraints returns a view from :meth:`Formulation.constraint_view`
(:mod:`opttrees.formulations.base`); the constraints write their rows through the view only, never through the
formulation's class or attributes, so a subclass of a formulation keeps them. Two views exist:

- :class:`BDConstraintView`: the Bertsimas–Dunn block with parallel splits (OCT, ORT and their subclasses):
  ``a[j,t]``, ``d[t]``, ``z[i,t]``, ``l[t]``, labels ``c[k,t]`` / leaf values ``beta[t]``;
- :class:`FlowConstraintView`: the flow block ``b[n,c]``, ``p[n]``, ``w[n,k]`` (FlowOCT, BendersOCT), plus on
  demand an exact routing block of the distinct binary rows.

A view also sets, at every warm start of its formulation (:meth:`Formulation.warm_start`), the variables the
constraints added (per-row predictions, the routing block, and whatever a constraint registers with
:meth:`ConstraintView.add_start`), so a start sets every variable of the model.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from ..errors import InputError


def _val(v) -> float:
    x = pyo.value(v, exception=False)
    return 0.0 if x is None else float(x)


class ConstraintView:
    """What every view holds: the formulation, its Pyomo model and its data, and the start hooks.

    The interface the constraints use: ``nodes`` (branch nodes), ``depth_of(node)``, ``split_terms(j)``
    ([(node, expression: the node splits on feature j)]), ``prediction_nodes()``, ``used(node)``,
    ``score(node, positive class)``, ``score_range()``, ``separated_pairs()``, ``label(node, k)``,
    ``count_expr(node, row weights)``, ``nonempty(node)``, ``split_sides(node)``, ``yhat(positive class)`` and
    ``labels_mark_nonempty`` (a label variable is 1 only at a non-empty leaf).
    """

    #: True when ``label(t, k)`` can be 1 only at a leaf that holds rows
    labels_mark_nonempty = False

    def __init__(self, form):
        self.form = form
        self.m = form.model
        self.data = form.data
        self._start_hooks: list[Callable[[], None]] = []

    def add_start(self, hook: Callable[[], None]) -> None:
        """Run ``hook()`` at every warm start, after the formulation's own variables and the view's are set."""
        self._start_hooks.append(hook)

    def set_start(self) -> None:
        """Set every variable the constraints added from the formulation's own (already set) tree variables."""
        self._set_view_start()
        for hook in self._start_hooks:
            hook()

    def _set_view_start(self) -> None:
        """Set the variables of the view's own blocks (per-row predictions, routing)."""


class BDConstraintView(ConstraintView):
    """OCT / ORT (parallel splits): what constraints read from the Bertsimas–Dunn block."""

    labels_mark_nonempty = True

    def __init__(self, form):
        super().__init__(form)
        self.S = form.structure
        self.task = form.data.task
        self.nodes = list(self.S.branch)

    def depth_of(self, t: int) -> int:
        return int(t).bit_length() - 1

    def split_terms(self, j: int) -> list[tuple[int, object]]:
        """[(branch node, binary var: node splits on feature j)]"""
        if j not in self.S.J:
            return []
        return [(t, self.m.tree.a[j, t]) for t in self.S.branch]

    def prediction_nodes(self):
        return list(self.S.leaves)

    def used(self, t):
        return self.m.tree.l[t]

    def score(self, t, pos: int | None):
        return self.m.c[pos, t] if self.task == "classification" else self.m.beta[t]

    def score_range(self) -> float:
        if self.task == "classification":
            return 1.0
        lo, hi = self.form.y_range
        return max(hi - lo, 1.0)

    def separated_pairs(self):
        """[(m, left-side prediction node, right-side prediction node)] for every branch node m."""
        S = self.S
        return [(m, s, t) for m in S.branch for s in S.leaves_below(2 * m) for t in S.leaves_below(2 * m + 1)]

    def label(self, t, k):
        return self.m.c[k, t]

    def count_expr(self, t, rows_weights: np.ndarray):
        """sum_i rows_weights[i] * [row i in leaf t]"""
        z = self.m.tree.z
        nz = np.nonzero(rows_weights)[0]
        return LinearExpression(constant=0.0, linear_coefs=[float(rows_weights[i]) for i in nz],
                                linear_vars=[z[int(i), t] for i in nz])

    def nonempty(self, t):
        return self.m.tree.l[t]

    def split_sides(self, t: int):
        """(node t splits, rows reach its left child, rows reach its right child) as expressions: the number of
        non-empty leaves below each side (``l`` marks exactly the non-empty leaves when a leaf must hold >= 1
        row; else the rows themselves are counted)."""
        S, tree = self.S, self.m.tree
        if S.min_samples_leaf >= 1:
            side = lambda c: LinearExpression([tree.l[s] for s in S.leaves_below(c)])
        else:   # pragma: no cover - the min-leaf rule asks for >= 1
            side = lambda c: LinearExpression([tree.z[i, s] for s in S.leaves_below(c) for i in range(self.data.n)])
        return tree.d[t], side(2 * t), side(2 * t + 1)

    def yhat(self, pos: int):
        """(list of per-row prediction vars, row -> index into it)"""
        m = self.m
        blk = m.component("constraint_predictions")
        if blk is None:
            z, TL, n = m.tree.z, self.S.leaves, self.data.n
            blk = pyo.Block()
            m.add_component("constraint_predictions", blk)
            blk._pos = pos
            # q[i,t] = z[i,t] * c[+,t] (row i in leaf t, which predicts +); yhat_i = sum_t q[i,t]
            blk.q = pyo.Var(range(n), TL, bounds=(0.0, 1.0))
            blk.q_leaf = pyo.Constraint(range(n), TL, rule=lambda b, i, t: b.q[i, t] <= z[i, t])
            blk.q_label = pyo.Constraint(range(n), TL, rule=lambda b, i, t: b.q[i, t] <= m.c[pos, t])
            blk.q_both = pyo.Constraint(range(n), TL, rule=lambda b, i, t: b.q[i, t] >= z[i, t] + m.c[pos, t] - 1)
            blk.yhat = pyo.Var(range(n), bounds=(0.0, 1.0))
            blk.yhat_def = pyo.Constraint(range(n), rule=lambda b, i: b.yhat[i] == sum(b.q[i, t] for t in TL))
        if blk._pos != pos:
            raise InputError("constraints on one model must share the positive class")
        return [blk.yhat[i] for i in range(self.data.n)], np.arange(self.data.n)

    def _set_view_start(self) -> None:
        m = self.m
        pred = m.component("constraint_predictions")
        if pred is not None:   # yhat_i = c[+, t(i)]
            z, TL = m.tree.z, self.S.leaves
            pos = pred._pos
            for i in range(self.data.n):
                tot = 0.0
                for t in TL:
                    q = float(_val(z[i, t]) > 0.5 and _val(m.c[pos, t]) > 0.5)
                    pred.q[i, t].set_value(q)
                    tot += q
                pred.yhat[i].set_value(tot)


class FlowConstraintView(ConstraintView):
    """FlowOCT / BendersOCT: the flow block b, p, w plus (on demand) an exact routing of the distinct rows."""

    labels_mark_nonempty = False
    task = "classification"

    def __init__(self, form):
        super().__init__(form)
        self.st = form.struct
        self.nodes = list(self.st.internal)
        self.col_feature = np.array([form.split_of_col(c)[0] for c in range(form.Z.shape[1])], dtype=np.int64)

    def depth_of(self, n: int) -> int:
        return int(n).bit_length() - 1

    def split_terms(self, j: int):
        cols = np.nonzero(self.col_feature == j)[0].tolist()
        if not cols:
            return []
        return [(n, LinearExpression([self.m.b[n, int(c)] for c in cols])) for n in self.st.internal]

    def prediction_nodes(self):
        return list(self.st.nodes)

    def used(self, n):
        return self.m.p[n]

    def score(self, n, pos):
        return self.m.w[n, pos]

    def score_range(self) -> float:
        return 1.0

    def subtree(self, n: int) -> list[int]:
        out, stack = [], [n]
        while stack:
            u = stack.pop()
            out.append(u)
            if u in self.st.internal:
                stack += [2 * u, 2 * u + 1]
        return out

    def separated_pairs(self):
        return [(m, s, t) for m in self.st.internal for s in self.subtree(2 * m) for t in self.subtree(2 * m + 1)]

    def label(self, n, k):
        return self.m.w[n, k]

    def routing(self):
        """The routing block (built once): distinct binary rows, each row's index into them."""
        m, st = self.m, self.st
        blk = m.component("constraint_routing")
        if blk is not None:
            return blk
        Zu, inv = np.unique(np.asarray(self.form.Z, dtype=np.int8), axis=0, return_inverse=True)
        inv = np.asarray(inv).ravel()
        U = list(range(Zu.shape[0]))
        left = [np.nonzero(Zu[u] == 0)[0].tolist() for u in U]
        right = [np.nonzero(Zu[u] == 1)[0].tolist() for u in U]
        blk = pyo.Block()
        m.add_component("constraint_routing", blk)
        blk.r = pyo.Var(U, st.nodes, bounds=(0.0, 1.0))
        blk.s = pyo.Var(U, st.nodes, bounds=(0.0, 1.0))
        blk.nonempty = pyo.Var(st.nodes, bounds=(0.0, 1.0))
        blk.source = pyo.Constraint(U, rule=lambda b, u: b.r[u, 1] == 1)
        idx = [(u, n) for u in U for n in st.internal]
        blk.cap_left = pyo.Constraint(idx, rule=lambda b, u, n: b.r[u, 2 * n] <= LinearExpression(
            [m.b[n, c] for c in left[u]]) if left[u] else b.r[u, 2 * n] == 0)
        blk.cap_right = pyo.Constraint(idx, rule=lambda b, u, n: b.r[u, 2 * n + 1] <= LinearExpression(
            [m.b[n, c] for c in right[u]]) if right[u] else b.r[u, 2 * n + 1] == 0)
        blk.conserve = pyo.Constraint(idx, rule=lambda b, u, n: b.r[u, n] == b.r[u, 2 * n] + b.r[u, 2 * n + 1] + b.s[u, n])
        blk.predict_here = pyo.Constraint(idx, rule=lambda b, u, n: b.s[u, n] <= m.p[n])
        blk.at_leaf = pyo.Constraint([(u, n) for u in U for n in st.leaves], rule=lambda b, u, n: b.s[u, n] == b.r[u, n])
        blk.mark_nonempty = pyo.Constraint([(u, n) for u in U for n in st.nodes],
                                           rule=lambda b, u, n: b.nonempty[n] >= b.s[u, n])
        blk._inv = inv
        blk._Zu = Zu
        blk._n_rows = len(U)
        return blk

    def count_expr(self, n, rows_weights: np.ndarray):
        blk = self.routing()
        per_u = np.bincount(blk._inv, weights=rows_weights, minlength=blk._n_rows)
        nz = np.nonzero(per_u)[0]
        return LinearExpression(constant=0.0, linear_coefs=[float(per_u[u]) for u in nz],
                                linear_vars=[blk.s[int(u), n] for u in nz])

    def nonempty(self, n):
        return self.routing().nonempty[n]

    def split_sides(self, n: int):
        """(node n branches, distinct rows reaching its left child, ... its right child): the routing block's
        ``r`` is exact for an integral tree (one path per row from the source)."""
        blk = self.routing()
        U = range(blk._n_rows)
        return (LinearExpression([self.m.b[n, c] for c in self.st.cols]),
                LinearExpression([blk.r[u, 2 * n] for u in U]), LinearExpression([blk.r[u, 2 * n + 1] for u in U]))

    def yhat(self, pos: int):
        blk = self.routing()
        m, st = self.m, self.st
        if blk.component("yhat") is None:
            U = list(range(blk._n_rows))
            blk._pos = pos
            blk.q = pyo.Var(U, st.nodes, bounds=(0.0, 1.0))
            blk.yhat = pyo.Var(U, bounds=(0.0, 1.0))
            idx = [(u, n) for u in U for n in st.nodes]
            blk.q_flow = pyo.Constraint(idx, rule=lambda b, u, n: b.q[u, n] <= b.s[u, n])
            blk.q_label = pyo.Constraint(idx, rule=lambda b, u, n: b.q[u, n] <= m.w[n, pos])
            blk.q_both = pyo.Constraint(idx, rule=lambda b, u, n: b.q[u, n] >= b.s[u, n] + m.w[n, pos] - 1)
            blk.yhat_def = pyo.Constraint(U, rule=lambda b, u: b.yhat[u] == sum(b.q[u, n] for n in st.nodes))
        if blk._pos != pos:
            raise InputError("constraints on one model must share the positive class")
        return [blk.yhat[u] for u in range(blk._n_rows)], blk._inv

    def _set_view_start(self) -> None:
        m = self.m
        route = m.component("constraint_routing")
        if route is None:
            return
        # route each distinct row through b, p
        st, Zu = self.st, route._Zu
        for key in list(route.r.keys()):
            route.r[key].set_value(0.0)
            route.s[key].set_value(0.0)
        reached = {n: 0.0 for n in st.nodes}
        for u in range(Zu.shape[0]):
            n = 1
            while True:
                route.r[u, n].set_value(1.0)
                if n in st.leaves or _val(m.p[n]) > 0.5:
                    route.s[u, n].set_value(1.0)
                    reached[n] = 1.0
                    break
                cols = [c for c in st.cols if _val(m.b[n, c]) > 0.5]
                if not cols:
                    break
                n = 2 * n + int(Zu[u, cols[0]])
        for n in st.nodes:
            route.nonempty[n].set_value(reached[n])
        if route.component("q") is not None:
            pos = route._pos
            for u in range(Zu.shape[0]):
                tot = 0.0
                for n in st.nodes:
                    q = _val(route.s[u, n]) * float(_val(m.w[n, pos]) > 0.5)
                    route.q[u, n].set_value(q)
                    tot += q
                route.yhat[u].set_value(tot)
