"""BendersOCT (Aghaei, Gómez, Vayanos 2021): FlowOCT with the flows projected out.

The master keeps only the tree (b, p, w) and one variable ``g_i in [0, 1]`` per sample ("i counts as
correct"). For a fixed tree the max-flow of sample i equals its min-cut, so every cut

    g_i <= sum_{path nodes n} w[n, y_i] + sum_{non-final path nodes} (off-path child capacity) + (all b at a final internal node)

is valid. At an integer incumbent a misclassified sample's own decision path gives a cut of value 0, so the
separator is combinatorial (route the rows, no LP): it returns ``g_i <= cut`` for every misclassified row
with ``g_i > 0``. The solver layer runs them as lazy constraints (SCIP Conshdlr) or by the HiGHS
solve–separate–resolve loop. Same optimum as FlowOCT.
"""
from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from ..tree import Tree
from .base import IncumbentSeparator
from .flow import FlowOCT, FlowStructure, Incumbent
from .mincut import tree_values, violated_min_cuts

CUT_TOL = 1e-6


def path_cut_terms(m, struct: FlowStructure, z_row: np.ndarray, label: int, path_row: np.ndarray):
    """Variables of the min-cut of one row's decision path (each with coefficient 1)."""
    nodes = path_row[path_row > 0].tolist()
    terms = [m.w[n, label] for n in nodes]
    for j, n in enumerate(nodes):
        if n >= 2 ** struct.depth:  # a leaf: no child arcs
            continue
        if j == len(nodes) - 1:     # final internal node: both child arcs are cut
            terms += [m.b[n, c] for c in struct.cols]
        else:
            went_right = nodes[j + 1] % 2
            terms += [m.b[n, c] for c in np.nonzero(z_row != went_right)[0].tolist()]
    return terms


def fractional_cuts(struct: FlowStructure, m, value, Z: np.ndarray, y: np.ndarray, g_var, g: np.ndarray) -> list:
    """``g_var[i] <= min-cut_i`` for every sample whose ``g`` exceeds its max-flow at the point ``value``."""
    B, W = tree_values(struct, m, value)
    rows, cb, cw = violated_min_cuts(struct, B, W, Z, y, g, CUT_TOL)
    return [g_var[int(i)] <= struct.expression(m, cb[j], cw[j]) for j, i in enumerate(rows.tolist())]


class BendersSeparator(IncumbentSeparator):
    """Per-sample min-cut cuts at integer incumbents (combinatorial: route, compare labels)."""

    def __init__(self, formulation: "BendersOCT"):
        # SCIP separates LP points at every depth (balance-scale depth 2: time limit 120 s with bound 479.6 ->
        # proven in 110 s, 2426 -> 297 nodes)
        super().__init__(formulation, sepa_freq=1)

    def separate(self, value) -> list:
        f, m, inc = self._incumbent(value)
        node, path = f.struct.route(inc, f.Zu)
        wrong = np.nonzero(inc.predict[node] != f.yu)[0]
        cuts = []
        for i in wrong.tolist():
            if value(m.g[i]) > CUT_TOL:
                terms = path_cut_terms(m, f.struct, f.Zu[i], int(f.yu[i]), path[i])
                cuts.append(m.g[i] <= LinearExpression(terms))
        self.n_cuts += len(cuts)
        return cuts

    def separate_fractional(self, value) -> list:
        """Min-cut cuts at any point, integer or not (see :mod:`.mincut`): the LP-relaxation rounds of a cut loop."""
        f, m = self.f, self.f.model
        g = np.array([value(m.g[i]) for i in range(f.Zu.shape[0])])
        return fractional_cuts(f.struct, m, value, f.Zu, f.yu, m.g, g)

    def repair(self, value) -> list:
        """The incumbent's tree with g_i = 1 exactly where it is correct: satisfies every possible cut."""
        f, m = self.f, self.f.model
        inc = f.struct.incumbent(m, value)
        node, _ = f.struct.route(inc, f.Zu)
        correct = inc.predict[node] == f.yu
        return [(m.g[i], float(correct[i])) for i in range(len(correct))]


class BendersOCT(FlowOCT):
    r"""BendersOCT: FlowOCT's master problem on :class:`~opttrees.data.binarized.BinarizedData`; cuts from :attr:`separator`.

    Same arguments as :class:`~opttrees.formulations.flow.FlowOCT`. Numbers refer to the robust-trees paper
    (docs/design-notes.md §4): the master is (15) at zero shift, with per-sample min-cut cuts (16)
    separated at integer incumbents (for binary columns these are exactly the BendersOCT cuts of Aghaei et al.).

    .. math::

        \max\; & (1 - \lambda) \sum_i s_i\, g_i - \lambda \sum_{n \in \mathcal N} \sum_c b_{nc}
            && (15a)\\
        \text{s.t.}\; & (b, p, w) \text{ a tree: (2a)–(2f) as in FlowOCT},\quad 0 \le g_i \le 1
            && (15c), (15d)\\
        & g_i \le \sum_{n \in P_i} w_{n,y_i} + \sum_{n \in P_i \setminus \{n_i\}} \sum_{c:\, Z_{ic} \ne
            \mathrm{dir}_i(n)} b_{nc} + \mathbb 1[n_i \in \mathcal N] \sum_c b_{n_i c}
            && \text{(16), lazily, } \forall i

    where :math:`P_i` is sample i's decision path at the incumbent, :math:`n_i` its last node and
    :math:`\mathrm{dir}_i(n)` the side it takes at n. Model components: the FlowOCT tree block, ``g[i]``,
    ``cuts`` (a ConstraintList for cuts added by hand; lazy ones go through the solver layer),
    ``objective_expr``.
    """

    dp_exact = True    # the same trees as FlowOCT (dp_relaxation: FlowOCT's)

    def __init__(self, data, max_depth: int = 2, regularization: float = 0.0, objective: str = "accuracy",
                 aggregate: bool = True, block=None):
        super().__init__(data, max_depth, regularization=regularization, objective=objective,
                         aggregate=aggregate, block=block)
        self.separator = BendersSeparator(self)

    def _build(self) -> None:
        st, m = self.struct, self.model
        st.build(m)
        rows = list(range(self.Zu.shape[0]))
        m.I = pyo.Set(initialize=rows, ordered=True)
        m.g = pyo.Var(m.I, bounds=(0.0, 1.0))
        self._set_objective(self._accuracy_objective([m.g[i] for i in rows], self.su.tolist()), pyo.maximize)
        m.cuts = pyo.ConstraintList()   # a home for cuts added by hand (research use); lazy ones go via the solver

    def _set_flows(self, inc: Incumbent) -> None:
        node, _ = self.struct.route(inc, self.Zu)
        correct = inc.predict[node] == self.yu
        for i in range(self.Zu.shape[0]):
            self.model.g[i].set_value(1.0 if correct[i] else 0.0)

    def _warm_start(self, tree: Tree) -> None:
        inc = self.struct.from_tree(tree, self.col_of_split)
        self.struct.set_values(self.model, inc)
        self._set_flows(inc)
