"""RobustOCT (Justin, Aghaei, Gómez, Vayanos): classification trees robust to integer feature shifts.

Integer features, integer thresholds: node n branches on (f, theta) with theta in [min_f, max_f) and sends
x right iff x_f >= theta + 1. That is FlowOCT's ``b[n, c]`` on the "thermometer" columns
``c = (f, theta)``, ``Z[i, c] = 1[x_if >= theta + 1]``, so the tree block is shared with FlowOCT.

Main problem (15): ``max sum_i t_i`` (optionally ``(1 - lam) sum t - lam * splits``, the paper's nominal
baseline regulariser), t_i in [0, 1], tree structure (2). Cuts, separated at integer incumbents:

- (16) ``t_i <= mincut(i, nominal path)`` for each nominally misclassified i with t_i > 0;
- (14) ``sum_i t_i <= sum_i mincut(i, path of x_i + xi_i, columns of x_i + xi_i)`` with xi the worst-case
  shift from Algorithm 1 (:mod:`opttrees.robust.adversary`), when sum t exceeds the worst-case count.

Uncertainty sets: (3) two-sided, (27) one-sided via ``ShiftSet.direction``, (28) one-hot categoricals via
``ShiftSet.groups``, plus domain bounds. The optimum is the best worst-case number of correct samples.
"""
from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.common.gc_manager import PauseGC
from pyomo.core.expr.numeric_expr import LinearExpression

from ..data.binarized import ThermometerData, thermometer
from ..errors import InputError, VerificationError
from ..robust.adversary import Path, ShiftSet, attack
from ..tree import Tree
from .base import Formulation, IncumbentSeparator
from .benders import CUT_TOL, fractional_cuts, path_cut_terms
from .flow import FlowStructure, Incumbent, check_depth, check_regularization, verify_at_most_as_good
from .mincut import max_flows, min_cut_coefficients, tree_values


#: worst-case cuts (14) added per fractional separation, most violated first
POOL_CUTS = 5


class RobustSeparator(IncumbentSeparator):
    """Cuts (16) and (14) at an integer incumbent, from the exact adversary."""

    def __init__(self, formulation: "RobustOCT"):
        # SCIP: no fractional separation in branch and bound (measured 1.9 s -> 5.7 s on 30 MONK's-1 rows); the
        # HiGHS cut loop still uses it in its LP rounds (2x fewer rounds' time there)
        super().__init__(formulation, sepa_freq=-1)
        self.n_aggregate = 0
        self.shifts: list[np.ndarray] = []
        self._shift_keys: set = set()

    def separate(self, value) -> list:
        f, m, inc = self._incumbent(value)
        node, path = f.struct.route(inc, f.Z)
        pred = inc.predict[node]
        tbar = np.array([value(m.t[i]) for i in range(f.n)])
        cuts = []
        for i in np.nonzero((pred != f.y) & (tbar > CUT_TOL))[0].tolist():
            cuts.append(m.t[i] <= LinearExpression(path_cut_terms(m, f.struct, f.Z[i], int(f.y[i]), path[i])))
        res = attack(f.X, f.y, f.S, f.paths(inc), pred)
        if tbar.sum() > res.worst_case_correct + 1e-6 * max(1, f.n):
            self._remember(res.X_shifted)
            Zs = thermometer(res.X_shifted, f.cols)
            _, spath = f.struct.route(inc, Zs)
            cb, cw = f.struct.cut_coefficients(inc, Zs, f.y, spath)
            cuts.append(LinearExpression([m.t[i] for i in range(f.n)]) <= f.struct.expression(m, cb, cw))
            self.n_aggregate += 1
        self.n_cuts += len(cuts)
        return cuts

    def separate_fractional(self, value) -> list:
        """Cuts at any point, integer or not: the nominal min-cuts (16), and worst-case cuts (14) from a pool of
        shifts — the adversary's answer to the rounded tree plus every shift found so far. A cut (14) is valid
        for any shift in the uncertainty set (no tree beats its flow bound on shifted data), so shifts found
        for one tree cut off LP points of others; the most violated few are added."""
        f, m = self.f, self.f.model
        t = np.array([value(m.t[i]) for i in range(f.n)])
        cuts = fractional_cuts(f.struct, m, value, f.Z, f.y, m.t, t)
        inc = f.struct.incumbent(m, value)
        self._remember(attack(f.X, f.y, f.S, f.paths(inc), inc.predict[f.struct.route(inc, f.Z)[0]]).X_shifted)
        B, W = tree_values(f.struct, m, value)
        found = []
        for Zs in self.shifts:
            F, capL, capR = max_flows(f.struct, B, W, Zs, f.y)
            excess = t.sum() - F[:, 1].sum()
            if excess > 1e-6 * max(1, f.n):
                found.append((excess, Zs, F, capL, capR))
        found.sort(key=lambda r: -r[0])
        t_sum = LinearExpression([m.t[i] for i in range(f.n)])
        for _, Zs, F, capL, capR in found[:POOL_CUTS]:
            cb, cw = min_cut_coefficients(f.struct, F, capL, capR, Zs, f.y)
            cuts.append(t_sum <= f.struct.expression(m, cb.sum(axis=0), cw.sum(axis=0)))
            self.n_aggregate += 1
        return cuts

    def _remember(self, X_shifted: np.ndarray) -> None:
        """Keep a worst-case shift (as its thermometer matrix) for later fractional rounds."""
        Zs = thermometer(X_shifted, self.f.cols)
        key = Zs.tobytes()
        if key not in self._shift_keys:
            self._shift_keys.add(key)
            self.shifts.append(Zs)

    def repair(self, value) -> list:
        """The incumbent's tree with t_i = 1 exactly where it survives the worst case: satisfies every cut."""
        f, m = self.f, self.f.model
        res = f.worst_case(f.struct.incumbent(m, value))
        keep = res.correct_nominal & ~res.attacked
        return [(m.t[i], float(keep[i])) for i in range(f.n)]


class RobustOCT(Formulation):
    r"""RobustOCT on :class:`~opttrees.data.binarized.ThermometerData` (integer features) with the uncertainty set ``shift``.

    Build with ``RobustOCT(ThermometerData.from_prepared(data, encoder), max_depth, shift)`` (or
    ``ThermometerData.from_integer(X_int, y)``). Numbers are the robust-trees paper's (Justin et al.;
    docs/design-notes.md §4): the extended main problem (15) with cuts (16) and (14) separated at integer
    incumbents by :attr:`separator`, over the uncertainty set (3) (or (27), (28) via ``ShiftSet.direction`` /
    ``ShiftSet.groups``). Column :math:`(f, \theta)` sends x right iff :math:`x_f \ge \theta + 1`, so the tree
    block :math:`b_{nf\theta}, p_n, w_{nk}` is FlowOCT's on the thermometer columns (the paper calls :math:`p_n`
    :math:`v_n`). :math:`\lambda` is ``regularization`` (0 in the paper's robust model; its nominal baseline uses
    :math:`R = 1 - \lambda`).

    .. math::

        \max\; & (1 - \lambda) \sum_i t_i - \lambda \sum_{n, f, \theta} b_{nf\theta} && (15a)\\
        \text{s.t.}\; & (b, p, w) \text{ a tree: (2a)–(2f)},\quad 0 \le t_i \le 1 && (15c), (15d)\\
        & t_i \le \sum_{n \in \mathcal N \cup \mathcal L} \tilde q^i_{n,t} w_{n,y^i} + \tilde q^i_{s,1}
            + \sum_{n, f, \theta} \big(\mathbb I[x^i_f \le \theta]\, \tilde q^i_{n,l(n)}
            + \mathbb I[x^i_f \ge \theta + 1]\, \tilde q^i_{n,r(n)}\big) b_{nf\theta}
            && \text{(16) for nominally misclassified } i\\
        & \sum_i t_i \le \sum_i \Big[\sum_n \tilde q^i_{n,t} w_{n,y^i} + \tilde q^i_{s,1}
            + \sum_{n, f, \theta} \big(\mathbb I[x^i_f + \tilde\xi^i_f \le \theta]\, \tilde q^i_{n,l(n)}
            + \mathbb I[x^i_f + \tilde\xi^i_f \ge \theta + 1]\, \tilde q^i_{n,r(n)}\big) b_{nf\theta}\Big]
            && (14)\\
        & \Xi = \Big\{\xi \in \mathbb Z^{|\mathcal I| \times |\mathcal F|}:
            \sum_i \sum_f \gamma^i_f |\xi^i_f| \le \epsilon\Big\} && (3)

    with :math:`\tilde\xi` the worst-case shift from Algorithm 1 (:mod:`opttrees.robust.adversary`) and
    :math:`\tilde q` the min-cut of each sample's (shifted) decision path. The optimum is the best worst-case
    number of correct samples. Model components: the tree block (``b``, ``p``, ``w``), ``t[i]``, ``cuts``,
    ``objective_expr``.
    """

    def __init__(self, data: ThermometerData, max_depth: int, shift: ShiftSet, regularization: float = 0.0,
                 block=None):
        if not isinstance(data, ThermometerData):
            raise InputError("RobustOCT needs a ThermometerData (ThermometerData.from_prepared(data, encoder) or "
                             f"ThermometerData.from_integer(X_int, y)); got {type(data).__name__}")
        if not np.allclose(data.sample_weight, data.sample_weight[0]):
            raise InputError("RobustOCT counts samples: sample weights are not supported")
        self.data = data
        self.depth = check_depth(max_depth)
        self.lam = check_regularization(regularization)
        self.S = shift
        if shift.gamma.shape != data.X_int.shape:
            raise InputError(f"costs have shape {shift.gamma.shape} but X has shape {data.X_int.shape}")
        if not self.cols and self.depth > 0:
            self.depth = 0   # every feature constant: only a root prediction is possible
        self.struct = FlowStructure(self.depth, len(self.cols), self.n_classes)
        self.model = self._new_block(block, "RobustOCT")
        with PauseGC():
            self._build()
        self.separator = RobustSeparator(self)

    # the data, under the names the separator and research code use
    X = property(lambda self: self.data.X_int, doc="integer features (the units the shift set lives in)")
    X_original = property(lambda self: self.data.X, doc="original-units features (trees are returned in them)")
    Z = property(lambda self: self.data.Z, doc="thermometer columns (n, C); 1 = right")
    y = property(lambda self: self.data.y)
    n = property(lambda self: self.data.n)
    n_classes = property(lambda self: self.data.n_classes)
    cols = property(lambda self: self.data.cols, doc="(feature, theta) of every column")

    @property
    def max_depth(self) -> int:
        return self.depth

    def _build(self) -> None:
        st, m, lam = self.struct, self.model, self.lam
        st.build(m)
        m.I = pyo.Set(initialize=list(range(self.n)), ordered=True)
        m.t = pyo.Var(m.I, bounds=(0.0, 1.0))
        self._set_objective(LinearExpression(
            constant=0.0, linear_coefs=[1 - lam] * self.n + [-lam] * (len(st.internal) * len(st.cols)),
            linear_vars=[m.t[i] for i in range(self.n)] + [m.b[n, c] for n in st.internal for c in st.cols]),
            pyo.maximize)
        m.cuts = pyo.ConstraintList()

    # ------------------------------------------------------------------------------------ pieces
    def paths(self, inc: Incumbent) -> list[Path]:
        """Decision paths of an incumbent as integer boxes lo <= x~ <= hi."""
        F = self.X.shape[1]
        out = []

        def rec(n, lo, hi):
            if inc.branch[n] < 0:
                out.append(Path(lo.copy(), hi.copy(), int(inc.predict[n]), n))
                return
            f, th = self.cols[inc.branch[n]]
            l_hi = hi.copy(); l_hi[f] = min(hi[f], th)
            rec(2 * n, lo, l_hi)
            r_lo = lo.copy(); r_lo[f] = max(lo[f], th + 1)
            rec(2 * n + 1, r_lo, hi)

        rec(1, np.full(F, -np.inf), np.full(F, np.inf))
        return out

    def incumbent(self, value=pyo.value) -> Incumbent:
        return self.struct.incumbent(self.model, value)

    def worst_case(self, inc: Incumbent):
        node, _ = self.struct.route(inc, self.Z)
        return attack(self.X, self.y, self.S, self.paths(inc), inc.predict[node])

    def incumbent_objective(self, inc: Incumbent) -> float:
        return float((1 - self.lam) * self.worst_case(inc).worst_case_correct - self.lam * inc.n_splits)

    def tree_objective(self, tree: Tree) -> float:
        """(1 - lam) * exact worst-case correct count - lam * splits for a Tree in original units."""
        inc = self.struct.from_tree(tree, self.col_of_split)
        return self.incumbent_objective(inc)

    def split_of_col(self, c: int) -> tuple[int, float]:
        return self.data.split_of_col(c)

    def col_of_split(self, j: int, t: float) -> int:
        return self.data.col_of_split(j, t)

    # ------------------------------------------------------------------------------------ API
    def _warm_start(self, tree: Tree) -> None:
        inc = self.struct.from_tree(tree, self.col_of_split)
        self.struct.set_values(self.model, inc)
        res = self.worst_case(inc)
        keep = res.correct_nominal & ~res.attacked
        for i in range(self.n):
            self.model.t[i].set_value(1.0 if keep[i] else 0.0)

    def _decode(self) -> Tree:
        inc = self.incumbent()
        d = self.data
        tree = self.struct.to_tree(inc, self.split_of_col, d.X, d.y, d.n_classes, None, d.classes, d.feature_names)
        node, _ = self.struct.route(inc, self.Z)
        if not np.array_equal(tree._labels()[tree.apply(self.X_original)], inc.predict[node]):
            raise VerificationError("decoded robust tree routes the training data differently")
        res = self.worst_case(inc)
        self.worst_case_correct = res.worst_case_correct
        return tree

    def verify(self, tree: Tree) -> None:
        """The tree's exact worst case (Algorithm 1) must match the solver's objective (see FlowOCT.verify)."""
        verify_at_most_as_good(self, tree, "the tree's exact worst case scores")
